"""dualad's annotations are part of its API (PEP 561): ``py.typed`` is shipped, every
public function is annotated, and a user's script checked with ``mypy --strict`` against
them passes, while the misuses it marks are caught (see ``tests/typing/public_api.py``)."""

from __future__ import annotations

import importlib.resources
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import dualad
import dualad_gpu

HERE = Path(__file__).parent


@pytest.mark.parametrize("package", ["dualad", "dualad_gpu"])
def test_py_typed_is_shipped(package):
    assert importlib.resources.files(package).joinpath("py.typed").is_file()
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert f'{package} = ["py.typed"]' in pyproject  # (in the wheel as package data)


@pytest.mark.parametrize("module", [dualad, dualad_gpu], ids=lambda m: m.__name__)
def test_every_public_function_is_annotated(module):
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or not callable(obj):
            continue
        signature = inspect.signature(obj)
        bare = [p.name for p in signature.parameters.values()
                if p.annotation is inspect.Parameter.empty]
        if bare or signature.return_annotation is inspect.Signature.empty:
            missing.append((name, bare))
    assert not missing


def test_a_strictly_typed_script_checks_against_the_public_api(tmp_path):
    pytest.importorskip("mypy")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
         str(HERE / "typing" / "public_api.py")],
        capture_output=True, text=True, cwd=HERE.parent, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
