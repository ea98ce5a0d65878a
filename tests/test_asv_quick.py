"""asv's smoke run (``asv run --quick``) leaves out the sweeps' largest sizes and the
parallel benchmarks' process pools and Dask clusters: the benchmark
modules read it from ``DUALAD_ASV_QUICK`` or from the command line of the asv process
that started them, when asv discovers the benchmarks and when it runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("scipy")

ASV = Path(__file__).resolve().parent.parent / "asv_benches"

PARAMS = """
import json
import benchmarks.common as common, benchmarks.helmholtz as h, benchmarks.jacfwd as j
import benchmarks.sparse as s, benchmarks.parallel as p
print(json.dumps({"quick": common.QUICK, "helmholtz": h.HelmholtzRatio.params[0],
                  "parallel": [p.ParallelJacfwdPeers.params, p.ParallelJacfwdRatio.params],
                  "tanh": j.JacfwdTanh.params[0], "chunk": j.JacfwdTanhChunkSize.params[0],
                  "bratu": s.SparseBratu.params[0], "largest": s._LARGEST}))
"""


def params(flag: str | None, tmp_path: Path | None = None, *asv_args: str) -> dict:
    """What the benchmark modules make of a run: with ``DUALAD_ASV_QUICK=flag``, or (with
    ``asv_args``) in a process started by one whose command line is ``asv ASV_ARGS``."""
    env = {k: v for k, v in os.environ.items() if k != "DUALAD_ASV_QUICK"}
    if flag is not None:
        env["DUALAD_ASV_QUICK"] = flag
    command = [sys.executable, "-c", PARAMS]
    if asv_args:
        asv = tmp_path / "asv"
        asv.write_text("import subprocess, sys\n"
                       f"sys.exit(subprocess.run({command!r}).returncode)\n")
        command = [sys.executable, str(asv), *asv_args]
    out = subprocess.run(command, cwd=ASV, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_quick_run_keeps_the_two_smallest_sizes_of_each_sweep():
    quick = params("1")
    assert quick["quick"] is True
    assert quick["helmholtz"] == [1, 8] and quick["tanh"] == [10, 100]
    assert quick["bratu"] == [1000, 10000] and quick["largest"] == 10000
    assert quick["chunk"] == [10, 100, 1000]
    # (process pools and Dask clusters take seconds to start in each benchmark's process)
    assert quick["parallel"] == [["none (quick run)"], ["threads"]]


def test_a_full_run_keeps_every_size():
    full = params("0")
    assert full["quick"] is False
    assert full["helmholtz"] == [1, 8, 15, 22, 29, 36, 43, 50]
    assert full["chunk"] == [1, 10, 100, 1000] and full["largest"] == 10**6
    assert full["parallel"] == [["processes", "dask"], ["threads", "processes", "dask"]]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
def test_quick_is_read_from_the_asv_command_line(tmp_path):
    assert params(None, tmp_path, "run", "--python=same", "--quick")["quick"] is True
    assert params(None, tmp_path, "run", "-q", "--bench", "jvp")["quick"] is True
    assert params(None, tmp_path, "run", "--bench", "jvp")["quick"] is False
    assert params(None)["quick"] is False


FORKED = """
import importlib, json, pathlib, sys, threading
for path in sorted(pathlib.Path("benchmarks").glob("*.py")):
    importlib.import_module("benchmarks." + path.stem)
print(json.dumps({"threads": threading.active_count(),
                  "imported": [m for m in ("jax", "torch", "dask", "distributed", "autograd")
                               if m in sys.modules]}))
"""


def test_the_benchmark_modules_can_be_forked():
    """asv.conf.json's ``launch_method`` is "forkserver": one process imports the benchmark
    modules and forks one per benchmark, which is safe only while that import starts no
    thread (JAX's, a Dask cluster's); the peers are imported after the fork."""
    config = (ASV / "asv.conf.json").read_text()
    assert '"launch_method": "forkserver"' in config
    out = subprocess.run([sys.executable, "-c", FORKED], cwd=ASV, capture_output=True,
                         text=True, check=True)
    found = json.loads(out.stdout)
    assert found == {"threads": 1, "imported": []}
