"""The machinery every benchmark problem uses: :class:`Problem`, checked thunks, timing.

A :class:`Problem` names its implementations and builds each with a *factory*
(see :mod:`dualad.bench`); :func:`checked` is how a factory checks its thunk
once before it is timed, and :func:`measure` times thunks round-robin.
"""

from __future__ import annotations

import importlib
import math
import time
import timeit
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Thunk = Callable[[], Any]
Factory = Callable[[], Thunk]


class PeerUnavailable(NotImplementedError):
    """A peer library is not installed, or lacks the transform (asv: skipped)."""


@dataclass(frozen=True)
class Problem:
    """One benchmark: a primal, dualad's transform(s) of it, and peers doing the same.

    Attributes
    ----------
    name:
        Identifier used by ``--only`` and by the asv benchmark names.
    title:
        One line for the table.
    target:
        The largest acceptable ratio of dualad's time to the primal's, or
        ``None``: no fixed target. With several dualad implementations
        (:attr:`own`), a mapping from each to its target (absent: none).
    factories:
        ``"primal"``, dualad's implementations (:attr:`own`) and one entry per
        peer, each a factory returning a checked thunk (see :mod:`dualad.bench`).
    reference:
        The peers' ratios to the primal measured on another machine when the
        targets were set (the table's ``reference`` rows): context, not a test.
    beat:
        Peers dualad must be faster than, in this run: the best ratio measured
        among them becomes the target (tightening ``target`` if both are given).
        A problem with neither ``target`` nor ``beat`` is only reported.
    own:
        The factories that are dualad's: ``("dualad",)``, or e.g. the forward
        and reverse gradients ``("dualad-fwd", "dualad-rev")``. The rest are peers.
    published:
        Further reference ratios, by source (a paper's figures), shown like
        ``reference``.
    group, size:
        Problems of one ``group`` are printed as their own table by :func:`main`
        and selected together by ``--only GROUP``. A size sweep's problems differ
        in ``size`` (a table with one row per size, :func:`format_group_table`);
        a group without sizes (the compiled problems) is a table of
        problems like the first (:func:`format_table`).
    versus, versus_target:
        A peer dualad is compared with directly, and the largest acceptable
        ratio of dualad's time to that peer's (``dualad_gpu`` ≤ 1.2×
        ``jax.jit``), or ``None``: no such target. The table prints
        time(dualad) / time(``versus``) beside the ratio to the primal.
    memory:
        Also measure the peak memory of one call of the primal and of dualad's
        implementations (:func:`peak_memory`; the ``jacfwd`` chunk-size sweep),
        printed beside their times.
    """

    name: str
    title: str
    target: float | Mapping[str, float] | None
    factories: dict[str, Factory]
    reference: dict[str, float] = field(default_factory=dict)
    beat: tuple[str, ...] = ()
    own: tuple[str, ...] = ("dualad",)
    published: dict[str, dict[str, float]] = field(default_factory=dict)
    group: str | None = None
    size: int | None = None
    versus: str | None = None
    versus_target: float | None = None
    memory: bool = False

    @property
    def peers(self) -> list[str]:
        """The peer implementations, in table order."""
        return [k for k in self.factories if k != "primal" and k not in self.own]

    def target_of(self, impl: str = "dualad") -> float | None:
        """The fixed target ratio of one of dualad's implementations, if any."""
        if isinstance(self.target, Mapping):
            return self.target.get(impl)
        return self.target if impl in self.own else None

    def make(self, impl: str) -> Thunk:
        """A checked, warmed-up thunk doing one call of ``impl``."""
        try:
            factory = self.factories[impl]
        except KeyError:
            raise PeerUnavailable(f"{self.name} has no implementation {impl!r}") from None
        return factory()


# -- timing --------------------------------------------------------------------


def measure(thunks: dict[str, Thunk], *, repeat: int = 5,
            min_time: float = 0.02, slow: float = 1.0) -> dict[str, float]:
    """Best seconds per call of each thunk, timed round-robin in this process.

    Each thunk is looped ``number`` times, ``number`` chosen so that one loop
    takes at least ``min_time`` seconds; the loops of all thunks alternate
    ``repeat`` times and the minimum per call is kept. Alternating makes the
    ratios robust to the machine speeding up or slowing down during the run.
    The order reverses every other round, so that no thunk always runs right
    after the same one: after a multithreaded BLAS call (a NumPy primal),
    OpenBLAS's threads keep spinning for a while and slow down whatever comes
    next (``jax.jit``'s thread pool: 1.6x on a 2-core machine).

    A thunk whose first timed call takes ``slow`` seconds or more is timed by
    that one call (its factory has already warmed it up), and not looped: a
    single timing of a call that long is as good as a minimum of several, and
    it keeps the run short.
    """
    timers = {}
    best = dict.fromkeys(thunks, math.inf)
    for name, thunk in thunks.items():
        timer = timeit.Timer(thunk)
        number = 1
        while True:
            elapsed = timer.timeit(number)
            if elapsed >= min_time:
                break
            number = max(number * 2, int(number * 1.2 * min_time / max(elapsed, 1e-9)))
        if number == 1 and elapsed >= slow:
            best[name] = elapsed
        else:
            timers[name] = (timer, number)
    order = list(timers.items())
    for i in range(repeat):
        for name, (timer, number) in order if i % 2 == 0 else reversed(order):
            best[name] = min(best[name], timer.timeit(number) / number)
    return best


def peak_memory(thunk: Thunk) -> int:
    """The peak of the memory allocated during one call of ``thunk``, in bytes.

    Measured with :mod:`tracemalloc`, which also sees NumPy's array buffers; the
    memory held before the call (the inputs) is not counted, the result is. Not
    run in the timing loops (tracing slows every allocation down).
    """
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        thunk()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if not tracing:
            tracemalloc.stop()


def ratio(problem: Problem, impl: str = "dualad", *, repeat: int = 7,
          min_time: float = 0.05) -> float:
    """Time of ``impl`` over time of the primal, both measured now, alternately."""
    times = measure({"primal": problem.make("primal"), impl: problem.make(impl)},
                    repeat=repeat, min_time=min_time)
    return times[impl] / times["primal"]


# -- factories' helpers ------------------------------------------------------------

#: Relative tolerance of the exact methods' results (the test suite checks them to
#: 1e-14; a benchmark only guards against timing a wrong answer), and of
#: numdifftools' finite differences with Richardson extrapolation.
EXACT_RTOL, APPROX_RTOL = 1e-12, 1e-6


def checked(thunk: Thunk, expected: Any, read: Callable[[Any], Any] = lambda r: r,
             what: str = "result", rtol: float = 1e-9, scaled: bool = False) -> Thunk:
    """Warm ``thunk`` up (:func:`warm_up`), then call it and check ``read(result)``
    against ``expected``: the call checked is one of those timed.

    Elementwise relative error ≤ ``rtol``; or, with ``scaled``, the largest
    error relative to the largest ``|expected|`` (for matrices with zeros,
    which an approximate method does not reproduce exactly, and for gradients
    with entries near zero).
    """
    warm_up(thunk)
    result = read(thunk())
    try:  # arrays of any library, and tuples of scalars
        got = np.asarray(result, dtype=float).ravel()
    except Exception:  # ragged tuples, tensors that require grad: one scalar at a time
        got = np.asarray([float(v) for v in np.ravel(np.asarray(result, dtype=object))])
    want = np.ravel(np.asarray(expected, dtype=float))
    atol = rtol * float(np.max(np.abs(want), initial=0.0)) if scaled else 0.0
    if got.shape != want.shape or not np.allclose(got, want, rtol=0.0 if scaled else rtol,
                                                  atol=atol):
        err = np.max(np.abs(got - want), initial=0.0) if got.shape == want.shape else "-"
        raise AssertionError(f"{what}: got {got}, expected {want} (max error {err})")
    return thunk


#: The most seconds :func:`warm_up` spends on one thunk.
WARM_UP_SECONDS = 2.0


def warm_up(thunk: Thunk) -> None:
    """Call ``thunk`` until it runs as it will from then on: dualad's transforms
    interpret :data:`dualad.replay.RECORD_AFTER` calls of a signature, record it,
    replay it :data:`dualad.replay.COMPILE_AFTER` times by running its calls
    directly, then compile it; peers fill their caches (``jax.jit`` compiles at the
    first call). At most :data:`WARM_UP_SECONDS`, after the first call."""
    from ..replay import cache

    thunk()
    deadline = time.perf_counter() + WARM_UP_SECONDS
    for _ in range(cache.RECORD_AFTER + cache.COMPILE_AFTER + 1):
        if time.perf_counter() > deadline:
            break
        thunk()


def warmed_up(thunk: Thunk) -> Thunk:
    """Call ``thunk`` once and return it: the torch peers' first call, before the
    one :func:`checked` checks.

    torch 2.13 (CPU, MKL, two threads) computes ``sin`` and ``cos`` of a large
    tensor wrong by up to 7e-9 relative in the first such call of a process,
    about one process in four, and never in a later call; checking that call
    failed the 10⁶-element JVP (4.6e-9 relative) and the batched JVP at random.
    """
    thunk()
    return thunk


def require(module: str):
    """Import a peer library, or raise :class:`PeerUnavailable`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerUnavailable(f"{module} is not installed") from exc


def import_jax():
    """``jax``, with float64 enabled (the peers compare float64 results)."""
    jax = require("jax")
    jax.config.update("jax_enable_x64", True)
    return jax
