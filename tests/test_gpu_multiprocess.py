"""dualad_gpu across processes: two local JAX processes on the CPU backend.

Each process calls ``jax.distributed.initialize`` (process 0 hosts the
coordinator on a free local port), sees four devices (two of its own, two of
the other's) and differentiates the same functions with the seed axis on
``dualad_gpu.sharding.global_mesh()``. The CPU devices of the two processes
exchange data through JAX's Gloo collectives. Each process gathers the global
results and saves them; they must equal one process's ``dualad_gpu`` and
``dualad``'s NumPy transforms.

Where this jaxlib has no multi-process CPU collectives, the workers report
the error JAX raises and the test is skipped with it, word for word.
"""

import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose

jax = pytest.importorskip("jax")

import dualad  # noqa: E402
import dualad_gpu  # noqa: E402

TIMEOUT = 120  # seconds for both processes together; they take ~5 s
NO_COLLECTIVES = 77  # a worker's exit status where this jaxlib has no CPU collectives

# Run as ``python -c`` with PROCESS_ID, PORT and OUT defined before it.
WORKER = r"""
import os
import sys
import traceback

NO_CPU_COLLECTIVES = "Multiprocess computations aren't implemented on the CPU backend"


def exit_now(kind, value, tb):  # not through JAX's shutdown barrier, which waits for the peer
    traceback.print_exception(kind, value, tb)
    sys.stderr.flush()
    os._exit(1)


def no_collectives(why):
    print(f"NO-CPU-COLLECTIVES: {why}", file=sys.stderr, flush=True)
    os._exit(77)


sys.excepthook = exit_now

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 2)  # two devices per process, four in all
try:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
except (AttributeError, ValueError) as error:  # a jax without CPU collectives to ask for
    no_collectives(f"{type(error).__name__}: {error}")
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{PORT}", num_processes=2,
                           process_id=PROCESS_ID, initialization_timeout=60,
                           heartbeat_timeout_seconds=30, shutdown_timeout_seconds=30)

import numpy as np
from jax.experimental.multihost_utils import process_allgather

import dualad_gpu

assert jax.process_count() == 2 and jax.process_index() == PROCESS_ID
assert len(jax.devices()) == 4 and len(jax.local_devices()) == 2

W = np.arange(64.0).reshape(8, 8) / 100
f = lambda x: np.tanh(W @ x) + x ** 3
g = lambda x: np.sin(x) * np.sum(x ** 2)
r = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
x = np.linspace(-1, 1, 8)
x6 = np.linspace(-1, 1, 6)  # six seeds on four devices: an uneven split
mesh = dualad_gpu.sharding.global_mesh()
transforms = {
    "jacfwd": (dualad_gpu.jacfwd(f, mesh=mesh), x),
    "jacrev": (dualad_gpu.jacrev(f, mesh=mesh), x),
    "jacfwd-uneven": (dualad_gpu.jacfwd(g, mesh=mesh), x6),
    "jacrev-uneven": (dualad_gpu.jacrev(g, mesh=mesh), x6),
    "hessian-hyperdual": (dualad_gpu.hessian(r, mode="hyperdual", mesh=mesh), x6),
    "hessian-fwd-rev": (dualad_gpu.hessian(r, mode="fwd-rev", mesh=mesh), x6),
}
try:
    results = {name: transform(arg) for name, (transform, arg) in transforms.items()}
except jax.errors.JaxRuntimeError as error:
    if NO_CPU_COLLECTIVES in str(error):
        no_collectives(str(error).splitlines()[0])
    raise
for name, value in results.items():  # computed on both processes' devices
    assert len(value.sharding.device_set) == 4, (name, value.sharding)
    assert not value.is_fully_addressable, (name, value.sharding)
    program = transforms[name][0].lower(transforms[name][1]).as_text()
    assert '"seeds"' in program or "devices=[4" in program, name  # the seeds split

# The default mesh stays local: each process's own devices, the whole result at hand.
local = dualad_gpu.jacfwd(f)(x)
assert local.is_fully_addressable and local.sharding.device_set == set(jax.local_devices())

gathered = process_allgather(results, tiled=True)
np.savez(f"{OUT}.{PROCESS_ID}.npz", local=np.asarray(local), **gathered)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_two_processes(tmp_path) -> list[int]:
    """Both workers to their end (or killed at the deadline): their exit statuses."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    procs, logs = [], []
    try:
        for i in range(2):
            log = open(tmp_path / f"worker{i}.log", "wb")
            logs.append(log)
            source = f"PROCESS_ID = {i}\nPORT = {port}\nOUT = {str(tmp_path / 'out')!r}\n"
            procs.append(subprocess.Popen([sys.executable, "-c", source + WORKER], env=env,
                                          stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            codes = [p.poll() for p in procs]
            if all(c is not None for c in codes):
                return codes
            if any(c not in (None, 0) for c in codes):
                break  # one failed: its peer would wait for it until a timeout
            time.sleep(0.1)
        return [p.poll() for p in procs]  # None: killed below, still running
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for log in logs:
            log.close()


def test_seed_axis_on_a_global_mesh_of_two_processes_equals_one_process(tmp_path):
    codes = _run_two_processes(tmp_path)
    logs = [(tmp_path / f"worker{i}.log").read_text(errors="replace") for i in range(2)]
    if NO_COLLECTIVES in codes:
        why = next(line for log in logs for line in log.splitlines()
                   if line.startswith("NO-CPU-COLLECTIVES: "))
        pytest.skip(f"jax {jax.__version__} has no multi-process CPU collectives: "
                    f"{why.split(': ', 1)[1]}")
    assert codes == [0, 0], "\n\n".join(
        f"worker {i} ({'killed, still running' if c is None else f'exit status {c}'}):\n"
        f"{log[-4000:]}" for i, (c, log) in
        enumerate(zip(codes, logs)))

    W = np.arange(64.0).reshape(8, 8) / 100

    def f(x):
        return np.tanh(W @ x) + x ** 3

    def g(x):
        return np.sin(x) * np.sum(x ** 2)

    def r(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x = np.linspace(-1, 1, 8)
    x6 = np.linspace(-1, 1, 6)
    one_process = {
        "jacfwd": dualad_gpu.jacfwd(f, mesh=None)(x),
        "jacrev": dualad_gpu.jacrev(f, mesh=None)(x),
        "jacfwd-uneven": dualad_gpu.jacfwd(g, mesh=None)(x6),
        "jacrev-uneven": dualad_gpu.jacrev(g, mesh=None)(x6),
        "hessian-hyperdual": dualad_gpu.hessian(r, mode="hyperdual", mesh=None)(x6),
        "hessian-fwd-rev": dualad_gpu.hessian(r, mode="fwd-rev", mesh=None)(x6),
    }
    numpy = {"jacfwd": dualad.jacfwd(f)(x), "jacrev": dualad.jacrev(f)(x),
             "jacfwd-uneven": dualad.jacfwd(g)(x6), "jacrev-uneven": dualad.jacrev(g)(x6),
             "hessian-hyperdual": dualad.hessian(r)(x6), "hessian-fwd-rev": dualad.hessian(r)(x6)}
    for i in range(2):
        saved = np.load(tmp_path / f"out.{i}.npz")
        assert_allclose(saved["local"], np.asarray(one_process["jacfwd"]), rtol=1e-12, atol=1e-12)
        for name, value in one_process.items():
            assert_allclose(saved[name], np.asarray(value), rtol=1e-12, atol=1e-12,
                            err_msg=f"process {i}: {name}")
            assert_allclose(saved[name], numpy[name], rtol=1e-12, atol=1e-12,
                            err_msg=f"process {i}: {name} against dualad")
