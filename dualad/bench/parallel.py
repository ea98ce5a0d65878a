"""Parallel derivatives (``executor=``, :mod:`dualad.parallel`): the same transform
serially and on two workers of a ``ThreadPoolExecutor``, a ``ProcessPoolExecutor``
(spawned) and a Dask ``LocalCluster`` (two worker processes of one thread each).

The rows (group ``parallel``, on request):

* ``parallel_jacfwd``: ``jacfwd`` of an explicit simulation, ``u ← u + h·tanh(W u)``
  for :data:`STEPS` steps at n = 400 (the primal about 20 ms), in 8 passes of 50 seeds;
* ``parallel_sparse``: ``sparse_jacobian`` of a banded residual whose columns take
  16 colours, 2 colours per pass (8 passes);
* ``parallel_ensemble``: :func:`dualad.ensemble` of ``jacfwd`` of a smaller
  simulation at 64 points;
* ``parallel_overhead``: ``jacfwd`` of a cheap function (one pass) with ``executor=``
  given: it runs serially, and must cost no more than the serial transform + 5 %.

In each row the column ``primal`` is the *serial* transform (no executor), so that
every ratio is a time over the serial time: 0.5 is twice as fast.
"""

from __future__ import annotations

import atexit
import functools
import logging
import multiprocessing
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import numpy as np

import dualad

from .core import EXACT_RTOL, PeerUnavailable, Problem, checked

#: Simulation steps (the primal about 20 ms at n = 400), inputs, seeds per pass.
STEPS, SIZE, CHUNK = 800, 400, 50
#: The sparse row: unknowns, colours (the band's width), colours per pass.
BAND_SIZE, BAND_COLOURS, BAND_PER_PASS = 100_000, 16, 2
#: The ensemble row: points, and the size and steps of its simulation.
POINTS, POINT_SIZE, POINT_STEPS = 64, 50, 100

#: The largest ratio to the serial time of two workers (1.7x faster) and of the
#: cheap function's serial fallback (+5 %).
SPEEDUP_TARGET, OVERHEAD_TARGET = 1 / 1.7, 1.05

WORKERS = 2


@functools.lru_cache(maxsize=None)
def _matrix(n: int) -> np.ndarray:
    """The simulation's coupling matrix, the same in every process."""
    return np.random.default_rng(28).normal(size=(n, n)) / np.sqrt(n)


def simulation(x: np.ndarray, steps: int) -> np.ndarray:
    """``steps`` explicit steps of ``u' = tanh(W u)`` from ``u = x``."""
    W = _matrix(x.size)
    u = x
    for _ in range(steps):
        u = u + 0.05 * np.tanh(W @ u)
    return u


def banded(u: np.ndarray, width: int) -> np.ndarray:
    """``u² + Σ_j c_j tanh(u_{i+j})`` over a band of ``width`` neighbours: a Jacobian
    whose columns take ``width`` colours."""
    before = width // 2 - 1
    padded = np.concatenate([np.zeros(before), u, np.zeros(width - 1 - before)])
    total = u ** 2
    for j in range(width):
        total = total + (0.5 + 0.1 * j) * np.tanh(padded[j:j + u.size])
    return total


def cheap(x: np.ndarray) -> np.ndarray:
    return np.sin(x) * x[0]


# -- the executors: made once per process, shut down at its exit -----------------------


@functools.lru_cache(maxsize=None)
def executor(kind: str) -> Any:
    """The executor of ``kind`` (``threads``, ``processes``, ``dask``) with
    :data:`WORKERS` workers, made at first use and shut down at exit."""
    if kind == "threads":
        pool: Any = ThreadPoolExecutor(WORKERS)
        atexit.register(pool.shutdown)
        return pool
    if kind == "processes":
        pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))
        atexit.register(pool.shutdown)
        return pool
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise PeerUnavailable("dask.distributed is not installed") from error
    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers: glibc then returns
    # freed memory at once, and NumPy's temporaries of a few hundred kB are mapped
    # anew each time (a pass of parallel_jacfwd 1.5x slower). Unset, as for the others.
    with warnings.catch_warnings(), dask.config.set(
            {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)

    def close() -> None:
        client.close()
        cluster.close()

    atexit.register(close)
    return client


KINDS = ("threads", "processes", "dask")


def _problem(name: str, title: str, serial: Any, spread: Any, expected: Any,
             target: float, read: Any = lambda r: r) -> Problem:
    """A row: ``serial()`` as the column ``primal``, ``spread(executor)`` on each kind."""

    def factory(kind: str):
        # (scaled: a Dask worker's BLAS, one thread, may sum in another order)
        return lambda: checked(functools.partial(spread, executor(kind)), expected(),
                               read, what=f"{name} on {kind}", rtol=EXACT_RTOL, scaled=True)

    factories = {"primal": lambda: checked(serial, expected(), read, what=f"{name} serial",
                                           rtol=EXACT_RTOL, scaled=True),
                 **{kind: factory(kind) for kind in KINDS}}
    return Problem(name=name, title=title, target=target, factories=factories,
                   own=("threads",), group="parallel")


def jacfwd_problem(size: int = SIZE, steps: int = STEPS, chunk: int = CHUNK,
                   min_seconds: float | None = None) -> Problem:
    """``jacfwd`` of :func:`simulation` in ``size / chunk`` passes (``min_seconds`` as
    for :func:`dualad.jacfwd`: 0 sends out even a small problem, for the tests)."""
    x = np.random.default_rng(1).normal(size=size)
    f = functools.partial(simulation, steps=steps)
    serial = dualad.jacfwd(f, chunk_size=chunk)
    spread = {}

    def run(pool):
        if id(pool) not in spread:
            spread[id(pool)] = dualad.jacfwd(f, chunk_size=chunk, executor=pool,
                                             min_seconds=min_seconds)
        return spread[id(pool)](x)

    return _problem("parallel_jacfwd", f"jacfwd, n={size}, {-(-size // chunk)} passes",
                    functools.partial(serial, x), run, lambda: serial(x), SPEEDUP_TARGET)


def sparse_problem(size: int = BAND_SIZE, colours: int = BAND_COLOURS,
                   per_pass: int = BAND_PER_PASS, min_seconds: float | None = None
                   ) -> Problem:
    """``sparse_jacobian`` of :func:`banded`, ``per_pass`` colours per pass."""
    u = np.random.default_rng(2).normal(size=size)
    f = functools.partial(banded, width=colours)
    serial = dualad.sparse_jacobian(f, chunk_size=per_pass)
    spread = {}

    def run(pool):
        if id(pool) not in spread:
            spread[id(pool)] = dualad.sparse_jacobian(f, chunk_size=per_pass, executor=pool,
                                                      min_seconds=min_seconds)
        return spread[id(pool)](u)

    return _problem("parallel_sparse", f"sparse_jacobian, n={size}, {colours} colours, "
                    f"{-(-colours // per_pass)} passes", functools.partial(serial, u), run,
                    lambda: serial(u).toarray() if size <= 1000 else serial(u).data,
                    SPEEDUP_TARGET,
                    read=lambda r: r.toarray() if size <= 1000 else r.data)


def ensemble_problem(points: int = POINTS, size: int = POINT_SIZE,
                     steps: int = POINT_STEPS, min_seconds: float | None = None) -> Problem:
    """:func:`dualad.ensemble` of ``jacfwd(simulation)`` at ``points`` points."""
    xs = np.random.default_rng(3).normal(size=(points, size))
    jac = dualad.jacfwd(functools.partial(simulation, steps=steps))

    def serial():
        return dualad.ensemble(jac, xs)

    return _problem("parallel_ensemble", f"ensemble of {points} jacfwd, n={size}", serial,
                    lambda pool: dualad.ensemble(jac, xs, executor=pool,
                                                 min_seconds=min_seconds), serial,
                    SPEEDUP_TARGET)


def overhead_problem() -> Problem:
    """``jacfwd`` of :func:`cheap` (one pass): with an executor, the serial path."""
    x = np.linspace(0.1, 1.0, 10)
    serial = dualad.jacfwd(cheap)
    spread = {}

    def run(pool):
        if id(pool) not in spread:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (its one warning: one pass, serial)
                spread[id(pool)] = dualad.jacfwd(cheap, executor=pool)
                spread[id(pool)](x)
        return spread[id(pool)](x)

    return _problem("parallel_overhead", "jacfwd of a cheap function (n=10, one pass)",
                    functools.partial(serial, x), run, lambda: serial(x), OVERHEAD_TARGET)


PARALLEL_PROBLEMS = (jacfwd_problem(), sparse_problem(), ensemble_problem(),
                     overhead_problem())
