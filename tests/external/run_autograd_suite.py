"""Run HIPS/autograd's test suite on plain NumPy through dualad and count.

Usage::

    python tests/external/run_autograd_suite.py PATH/TO/autograd/tests [pytest args]

The test modules that exercise NumPy and SciPy (listed in ``APPLICABLE``) are
copied to a temporary folder beside a ``conftest.py`` that installs
:mod:`autograd_shim`, run with pytest, and counted per module. The other modules
test autograd's internals (boxes, vspaces, ``primitive``, containers) and are not
run. Not part of dualad's test suite: autograd's tests are not vendored here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

APPLICABLE = ["test_numpy.py", "test_linalg.py", "test_scipy.py", "test_systematic.py",
              "test_binary_ops.py", "test_scalar_ops.py", "test_truediv.py", "test_logic.py",
              "test_jacobian.py", "test_fft.py", "test_complex.py"]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import autograd_shim
autograd_shim.install()
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def random_seed():
    np.random.seed(42)
"""


def main(source: Path, extra: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in [*APPLICABLE, "numpy_utils.py"]:
            shutil.copy(source / name, work / name)
        (work / "conftest.py").write_text(CONFTEST)
        report = work / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-o", "addopts=", f"--junitxml={report}", "--rootdir", str(work), "--continue-on-collection-errors",
                        *extra, str(work)], cwd=work, check=False)
        counts: dict[str, Counter] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            module = case.get("classname", "").split(".")[0]
            if not module:  # a module that does not import (autograd internals)
                continue
            outcome = ("failed" if case.find("failure") is not None or
                       case.find("error") is not None else
                       "skipped" if case.find("skipped") is not None else "passed")
            counts.setdefault(module, Counter())[outcome] += 1
    total = Counter()
    for module in sorted(counts):
        c = counts[module]
        total += c
        print(f"{module:22s} {c['passed']:4d} / {sum(c.values()):4d} passed")
    print(f"{'total':22s} {total['passed']:4d} / {sum(total.values()):4d} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
