"""Benchmarks of dualad against its primal and its peers, in one process.

This module is the one place where the benchmark problems are defined. Two
front ends use it:

- ``python -m dualad bench`` (:func:`main`) times everything in one process,
  in about a minute, and prints a table of ratios to the primal, then one table
  per size sweep (the Helmholtz free energy of issue 4: a row per n);
- the asv suite under ``asv_benches/`` imports the same :class:`Problem` objects
  for its ``time_`` and ``track_`` benchmarks (the performance dashboard).

A :class:`Problem` is a primal function, the dualad transform(s) of it, and the
same transform done by peer libraries. Each is built by a *factory*: a function
that prepares inputs, compiles or warms up, checks the result once against the
known derivative, and returns a zero-argument *thunk* that does one measured
call. Peers are imported lazily, inside their factories; a factory whose
library is missing raises :class:`PeerUnavailable`, a ``NotImplementedError``,
which asv reports as a skipped benchmark. Every ratio divides by the *NumPy*
primal: "how much slower than the NumPy code I already have".

Only dualad's public API (``dualad.jvp``, ``dualad.jacfwd``, ``dualad.grad``,
``dualad.hessian``, ``dualad.hvp``) is used here.

A problem's target is a fixed ratio (issues 2 and 4), the best ratio measured
for a set of peers dualad must beat (issue 3: "faster than every NumPy-level
peer"), both (the tighter wins), or nothing: a problem that is only reported.
Most problems have one dualad implementation, ``"dualad"``; the Helmholtz
problems have two, ``"dualad-fwd"`` (``jacfwd``, all seeds in one pass) and
``"dualad-rev"`` (``grad``), each with its own target (:attr:`Problem.own`).
Thunks that take a second or more per call are timed once (see
:func:`measure`), so that slow ones (numdifftools' Hessian at n = 100, about
2 s a call) keep the whole run short.

Examples
--------
>>> from dualad import bench
>>> problem = bench.PROBLEMS["jacfwd_textbook"]
>>> run = problem.make("dualad")         # checked once against the known gradient
>>> [float(g) for g in run()]
[5.5, 1.7163378145367738]
>>> times = bench.measure({"primal": problem.make("primal"), "dualad": run},
...                       repeat=2, min_time=0.001)
>>> sorted(times)
['dualad', 'primal']

The Hessian problems check dualad against ``scipy.optimize.rosen_hess``:

>>> bench.PROBLEMS["hessian_rosenbrock_10"].make("dualad")().shape
(10, 10)

The Helmholtz problems check every implementation against the hand-written
gradient :func:`helmholtz_grad` (itself checked by the complex step):

>>> helm = bench.PROBLEMS["helmholtz_8"]
>>> helm.own, helm.group, helm.size
(('dualad-fwd', 'dualad-rev'), 'helmholtz', 8)
>>> helm.make("dualad-rev")().shape
(8,)
>>> bench.PROBLEMS["helmholtz_50"].target_of("dualad-fwd")
7.5
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import sys
import timeit
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dualad

__all__ = [
    "GROUPS",
    "HELMHOLTZ_SIZES",
    "HESSIAN_SIZES",
    "NUMPY_LEVEL_PEERS",
    "PROBLEMS",
    "PEER_NAMES",
    "PeerUnavailable",
    "Problem",
    "Result",
    "format_group_table",
    "format_table",
    "grad_sum_sin_exp",
    "helmholtz",
    "helmholtz_grad",
    "helmholtz_problem",
    "hessian_rosenbrock",
    "hvp_rosenbrock",
    "jacfwd_textbook",
    "jvp_sum_sin_exp",
    "main",
    "measure",
    "ratio",
    "rosenbrock",
    "run",
]

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
        peer, each a factory returning a checked thunk (see the module docstring).
    reference:
        Ratios to the primal quoted in the issue for the peers, on the machine
        the issue was measured on: context for the table, not a test.
    beat:
        Peers dualad must be faster than, in this run: the best ratio measured
        among them becomes the target (tightening ``target`` if both are given).
        A problem with neither ``target`` nor ``beat`` is only reported.
    issue:
        The issue that asked for this benchmark (labels the reference row).
    own:
        The factories that are dualad's: ``("dualad",)``, or e.g. the forward
        and reverse gradients ``("dualad-fwd", "dualad-rev")``. The rest are peers.
    published:
        Further reference ratios, by source (a paper's figures), shown like
        ``reference``.
    group, size:
        Problems of one size sweep share a ``group`` and differ in ``size``;
        :func:`main` prints a group as its own table, one row per size
        (:func:`format_group_table`), and ``--only GROUP`` selects all of them.
    """

    name: str
    title: str
    target: float | Mapping[str, float] | None
    factories: dict[str, Factory]
    reference: dict[str, float] = field(default_factory=dict)
    beat: tuple[str, ...] = ()
    issue: int = 2
    own: tuple[str, ...] = ("dualad",)
    published: dict[str, dict[str, float]] = field(default_factory=dict)
    group: str | None = None
    size: int | None = None

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
    for _ in range(repeat):
        for name, (timer, number) in timers.items():
            best[name] = min(best[name], timer.timeit(number) / number)
    return best


def ratio(problem: Problem, impl: str = "dualad", *, repeat: int = 7,
          min_time: float = 0.05) -> float:
    """Time of ``impl`` over time of the primal, both measured now, alternately."""
    times = measure({"primal": problem.make("primal"), impl: problem.make(impl)},
                    repeat=repeat, min_time=min_time)
    return times[impl] / times["primal"]


def _checked(thunk: Thunk, expected: Any, read: Callable[[Any], Any] = lambda r: r,
             what: str = "result", rtol: float = 1e-9, scaled: bool = False) -> Thunk:
    """Call ``thunk`` once (warm-up), check ``read(result)`` against ``expected``.

    Elementwise relative error ≤ ``rtol``; or, with ``scaled``, the largest
    error relative to the largest ``|expected|`` (for matrices with zeros,
    which an approximate method does not reproduce exactly, and for gradients
    with entries near zero).
    """
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


def _require(module: str):
    """Import a peer library, or raise :class:`PeerUnavailable`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerUnavailable(f"{module} is not installed") from exc


def _jax():
    jax = _require("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# -- problems 1 and 5: JVP and gradient of a large elementwise function (issues 2, 4) --


def sum_sin_exp(x, xp=np):
    """``sum(sin(x)·exp(−x²) + log1p(x²))``, written once for every array namespace."""
    return xp.sum(xp.sin(x) * xp.exp(-x**2) + xp.log1p(x**2))


@functools.lru_cache(maxsize=2)
def _jvp_inputs(n: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Point, tangent, and the exact primal and JVP (from the analytic derivative)."""
    rng = np.random.default_rng(20240601)
    x = rng.standard_normal(n)
    t = rng.standard_normal(n)
    s, c, e = np.sin(x), np.cos(x), np.exp(-x * x)
    y = float(np.sum(s * e + np.log1p(x * x)))
    dy = float(np.sum((c * e - 2 * x * s * e + 2 * x / (1 + x * x)) * t))
    return x, t, y, dy


def _hand_dual_sum_sin_exp(x, t):
    """The JVP propagated by hand, one dual operation at a time, in NumPy."""
    x2, dx2 = x * x, 2.0 * x * t
    s, ds = np.sin(x), np.cos(x) * t
    e = np.exp(-x2)
    de = -e * dx2
    a, da = s * e, ds * e + s * de
    lg, dlg = np.log1p(x2), dx2 / (1.0 + x2)
    return np.sum(a + lg), np.sum(da + dlg)


def jvp_sum_sin_exp(n: int = 10**6) -> Problem:
    """JVP of :func:`sum_sin_exp` on ``n`` float64 along one tangent (issue 2: n = 10⁶)."""

    def primal():
        x, _, y, _ = _jvp_inputs(n)
        return _checked(functools.partial(sum_sin_exp, x), y, what="primal")

    def dual():
        x, t, y, dy = _jvp_inputs(n)
        return _checked(functools.partial(dualad.jvp, sum_sin_exp, (x,), (t,)), (y, dy),
                        what="dualad.jvp")

    def hand_dual():
        x, t, y, dy = _jvp_inputs(n)
        return _checked(functools.partial(_hand_dual_sum_sin_exp, x, t), (y, dy),
                        what="hand-written dual")

    def jax_jit():
        jax = _jax()
        import jax.numpy as jnp

        x, t, y, dy = _jvp_inputs(n)
        f = functools.partial(sum_sin_exp, xp=jnp)
        jvp = jax.jit(lambda x, t: jax.jvp(f, (x,), (t,)))
        xj, tj = jax.device_put(x), jax.device_put(t)
        return _checked(lambda: jax.block_until_ready(jvp(xj, tj)), (y, dy),
                        what="jax.jit(jax.jvp)")

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        if not hasattr(ag, "make_jvp"):
            raise PeerUnavailable("this autograd has no forward mode (make_jvp)")
        x, t, y, dy = _jvp_inputs(n)
        jvp_at = ag.make_jvp(functools.partial(sum_sin_exp, xp=anp))
        return _checked(lambda: jvp_at(x)(t), (y, dy), what="autograd.make_jvp")

    def torch_func():
        torch = _require("torch")
        from torch.func import jvp

        x, t, y, dy = _jvp_inputs(n)
        xt, tt = torch.from_numpy(x), torch.from_numpy(t)
        f = functools.partial(sum_sin_exp, xp=torch)
        return _checked(lambda: jvp(f, (xt,), (tt,)), (y, dy), what="torch.func.jvp")

    return Problem(
        name="jvp_sum_sin_exp",
        title=f"jvp sum(sin(x)exp(-x^2)+log1p(x^2)), n={n:.0e}".replace("e+0", "e"),
        target=2.5,
        factories={"primal": primal, "dualad": dual, "hand-dual": hand_dual,
                   "jax.jit": jax_jit, "autograd": autograd, "torch": torch_func},
        reference={"hand-dual": 2.3, "jax.jit": 2.35, "torch": 2.6, "autograd": 3.2},
    )


@functools.lru_cache(maxsize=2)
def _grad_expected(n: int) -> np.ndarray:
    """The exact gradient of :func:`sum_sin_exp` at :func:`_jvp_inputs`'s point."""
    return sum_sin_exp_grad(_jvp_inputs(n)[0])


def sum_sin_exp_grad(x: np.ndarray) -> np.ndarray:
    """The gradient of :func:`sum_sin_exp`, derived by hand:
    ``cos(x)·e − 2x·sin(x)·e + 2x / (1 + x²)`` with ``e = exp(−x²)``."""
    x2 = x * x
    e = np.exp(-x2)
    return (np.cos(x) - 2.0 * x * np.sin(x)) * e + 2.0 * x / (1.0 + x2)


def grad_sum_sin_exp(n: int = 10**6) -> Problem:
    """Gradient of :func:`sum_sin_exp` on ``n`` float64, reverse mode (issue 4: n = 10⁶, ≤ 3×).

    The peers are the gradient written by hand in NumPy (``hand-grad``, the floor
    an AD tool can approach), ``jax.jit(jax.grad)``, ``autograd.grad`` and torch's
    tape (``torch.autograd.grad``). Checked against :func:`sum_sin_exp_grad` to
    1e-12 of the largest entry (the gradient crosses zero, so not elementwise).
    """

    def check(thunk, what, read=lambda r: r):
        return _checked(thunk, _grad_expected(n), read=read, what=what, rtol=1e-12, scaled=True)

    def primal():
        x, _, y, _ = _jvp_inputs(n)
        return _checked(functools.partial(sum_sin_exp, x), y, what="primal")

    def dual():
        x = _jvp_inputs(n)[0]
        return check(functools.partial(dualad.grad(sum_sin_exp), x), "dualad.grad")

    def hand_grad():
        x = _jvp_inputs(n)[0]
        return check(functools.partial(sum_sin_exp_grad, x), "hand-written gradient")

    def jax_jit():
        jax = _jax()
        import jax.numpy as jnp

        grad = jax.jit(jax.grad(functools.partial(sum_sin_exp, xp=jnp)))
        xj = jax.device_put(_jvp_inputs(n)[0])
        return check(lambda: jax.block_until_ready(grad(xj)), "jax.jit(jax.grad)")

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        grad = ag.grad(functools.partial(sum_sin_exp, xp=anp))
        return check(functools.partial(grad, _jvp_inputs(n)[0]), "autograd.grad")

    def torch_tape():
        torch = _require("torch")

        x0 = torch.from_numpy(_jvp_inputs(n)[0])

        def grad():
            x = x0.detach().requires_grad_()
            return torch.autograd.grad(sum_sin_exp(x, xp=torch), x)[0]

        return check(grad, "torch.autograd.grad", read=lambda r: r.numpy())

    return Problem(
        name="grad_sum_sin_exp",
        title=f"grad sum(sin(x)exp(-x^2)+log1p(x^2)), n={n:.0e}".replace("e+0", "e"),
        target=3.0,
        factories={"primal": primal, "dualad": dual, "hand-grad": hand_grad,
                   "jax.jit": jax_jit, "autograd": autograd, "torch": torch_tape},
        issue=4,
    )


# -- problem 2: per-call cost of a small Jacobian ----------------------------------


def textbook(x1, x2, xp=np):
    """The worked example of the AD textbooks: ``ln(x1) + x1·x2 − sin(x2)``."""
    return xp.log(x1) + x1 * x2 - xp.sin(x2)


#: The point, the value, and the gradient of the textbook example.
TEXTBOOK_POINT = (2.0, 5.0)
TEXTBOOK_VALUE = 11.652071455223084
TEXTBOOK_GRADIENT = (5.5, 1.7163378145367738)


def _textbook_num_dual(x):
    """The textbook example in num-dual's idiom (methods of its dual numbers)."""
    x1, x2 = x
    return x1.log() + x1 * x2 - x2.sin()


def jacfwd_textbook() -> Problem:
    """Per-call cost of the gradient of :func:`textbook` at (2, 5), Python floats in."""
    x1, x2 = TEXTBOOK_POINT

    def primal():
        return _checked(functools.partial(textbook, x1, x2), TEXTBOOK_VALUE, what="primal")

    def dual():
        jac = dualad.jacfwd(textbook, argnums=(0, 1))
        return _checked(functools.partial(jac, x1, x2), TEXTBOOK_GRADIENT,
                        what="dualad.jacfwd")

    def num_dual():
        nd = _require("num_dual")
        return _checked(functools.partial(nd.gradient, _textbook_num_dual, [x1, x2]),
                        TEXTBOOK_GRADIENT, read=lambda r: r[1], what="num_dual.gradient")

    def jax_jit():
        jax = _jax()
        import jax.numpy as jnp

        grad = jax.jit(jax.grad(functools.partial(textbook, xp=jnp), argnums=(0, 1)))
        return _checked(lambda: jax.block_until_ready(grad(x1, x2)), TEXTBOOK_GRADIENT,
                        what="jax.jit(jax.grad)")

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        grad = ag.grad(functools.partial(textbook, xp=anp), argnum=(0, 1))
        return _checked(functools.partial(grad, x1, x2), TEXTBOOK_GRADIENT,
                        what="autograd.grad")

    def torch_tape():
        torch = _require("torch")

        def grad():
            a = torch.tensor(x1, dtype=torch.float64, requires_grad=True)
            b = torch.tensor(x2, dtype=torch.float64, requires_grad=True)
            return torch.autograd.grad(textbook(a, b, xp=torch), (a, b))

        return _checked(grad, TEXTBOOK_GRADIENT, what="torch.autograd.grad")

    return Problem(
        name="jacfwd_textbook",
        title="jacfwd ln(x1)+x1*x2-sin(x2), per call",
        target=20.0,
        factories={"primal": primal, "dualad": dual, "num-dual": num_dual,
                   "jax.jit": jax_jit, "autograd": autograd, "torch": torch_tape},
        reference={"num-dual": 2.4, "jax.jit": 13.0, "torch": 97.0, "autograd": 167.0},
    )


# -- problems 3 and 4: Hessian and Hessian-vector product of Rosenbrock ------------------


def rosenbrock(x, xp=np):
    """``sum(100·(x[1:] − x[:-1]²)² + (1 − x[:-1])²)``, as ``scipy.optimize.rosen``.

    Written once for every array namespace (``xp=np``, ``jnp``, ``anp``, ``torch``).
    """
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _rosenbrock_num_dual(x):
    """:func:`rosenbrock` in num-dual's idiom: a Python loop over its dual scalars."""
    s = 0.0
    for a, b in itertools.pairwise(x):
        s = s + 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2
    return s


@functools.lru_cache(maxsize=4)
def _rosen_inputs(n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A point, a direction and the value of :func:`rosenbrock` there (scipy's)."""
    from scipy.optimize import rosen

    rng = np.random.default_rng(20240603 + n)
    x = rng.uniform(-2.0, 2.0, n)
    v = rng.standard_normal(n)
    return x, v, float(rosen(x))


#: Relative tolerance of the exact methods' Hessians and HVPs (issue 3 asks the
#: tests for 1e-14; a benchmark only guards against timing a wrong answer) and
#: of numdifftools' finite differences with Richardson extrapolation.
EXACT_RTOL, APPROX_RTOL = 1e-12, 1e-6

#: The peers that evaluate the function at NumPy level (no compiler): dualad's
#: Hessian must beat every one of them at n = 10 (issue 3).
NUMPY_LEVEL_PEERS = ("num-dual", "jax", "torch", "autograd", "numdifftools")

#: The sizes of the Hessian problems in :data:`PROBLEMS` (and the asv ``params``).
HESSIAN_SIZES = (10, 100)

#: Fixed targets of the Hessian problems, by n (issue 4: ≤ 200× at n = 100, with
#: ``hessian``'s automatic choice of mode); at every n dualad must also beat the
#: NumPy-level peers.
HESSIAN_TARGETS = {100: 200.0}

#: Ratios the issues quote for the peers' Hessians, by n, and the issue quoting them.
_HESSIAN_REFERENCE = {
    10: (3, {"num-dual": 11.0, "jax": 2460.0, "jax.jit": 6.0, "torch": 448.0,
             "autograd": 377.0}),
    100: (4, {"num-dual": 1633.0, "jax": 1768.0, "jax.jit": 18.0, "torch": 519.0,
              "autograd": 1620.0}),
}


def hessian_rosenbrock(n: int = 10) -> Problem:
    """The Hessian of :func:`rosenbrock` in ``n`` variables (issue 3: n = 10 and 100).

    dualad's target is to be faster than every NumPy-level peer
    (:data:`NUMPY_LEVEL_PEERS`), and at n = 100 also ≤ 200× the primal
    (:data:`HESSIAN_TARGETS`, issue 4), with ``hessian``'s automatic mode.
    """

    def expected():
        from scipy.optimize import rosen_hess

        return rosen_hess(_rosen_inputs(n)[0])

    def primal():
        x, _, y = _rosen_inputs(n)
        return _checked(functools.partial(rosenbrock, x), y, what="primal")

    def dual():
        x = _rosen_inputs(n)[0]
        return _checked(functools.partial(dualad.hessian(rosenbrock), x), expected(),
                        what="dualad.hessian", rtol=EXACT_RTOL, scaled=True)

    def num_dual():
        nd = _require("num_dual")
        x = _rosen_inputs(n)[0]
        return _checked(functools.partial(nd.hessian, _rosenbrock_num_dual, x), expected(),
                        read=lambda r: r[2], what="num_dual.hessian", rtol=EXACT_RTOL,
                        scaled=True)

    def jax_hessian(jit: bool):
        def factory():
            jax = _jax()
            import jax.numpy as jnp

            hess = jax.hessian(functools.partial(rosenbrock, xp=jnp))
            hess = jax.jit(hess) if jit else hess
            xj = jax.device_put(_rosen_inputs(n)[0])
            return _checked(lambda: jax.block_until_ready(hess(xj)), expected(),
                            what="jax.jit(jax.hessian)" if jit else "jax.hessian",
                            rtol=EXACT_RTOL, scaled=True)

        return factory

    def torch_func():
        torch = _require("torch")
        from torch.func import hessian

        xt = torch.from_numpy(_rosen_inputs(n)[0])
        hess = hessian(functools.partial(rosenbrock, xp=torch))
        return _checked(functools.partial(hess, xt), expected(), read=lambda r: r.numpy(),
                        what="torch.func.hessian", rtol=EXACT_RTOL, scaled=True)

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        x = _rosen_inputs(n)[0]
        hess = ag.hessian(functools.partial(rosenbrock, xp=anp))
        return _checked(functools.partial(hess, x), expected(), what="autograd.hessian",
                        rtol=EXACT_RTOL, scaled=True)

    def numdifftools():
        ndt = _require("numdifftools")
        x = _rosen_inputs(n)[0]
        return _checked(functools.partial(ndt.Hessian(rosenbrock), x), expected(),
                        what="numdifftools.Hessian", rtol=APPROX_RTOL, scaled=True)

    issue, reference = _HESSIAN_REFERENCE.get(n, (3, {}))
    return Problem(
        name=f"hessian_rosenbrock_{n}",
        title=f"hessian rosenbrock, n={n}",
        target=HESSIAN_TARGETS.get(n),
        factories={"primal": primal, "dualad": dual, "num-dual": num_dual,
                   "jax": jax_hessian(jit=False), "jax.jit": jax_hessian(jit=True),
                   "torch": torch_func, "autograd": autograd, "numdifftools": numdifftools},
        reference=reference,
        beat=NUMPY_LEVEL_PEERS,
        issue=issue,
    )


def hvp_rosenbrock(n: int = 10**4) -> Problem:
    """A Hessian-vector product of :func:`rosenbrock` along a random ``v`` (issue 3: n = 10⁴).

    Reported, no target. The peers do forward-over-reverse (jax, torch) or
    reverse-over-reverse (autograd), O(n); so does ``dualad.hvp`` since it has
    reverse mode, where its hyper-dual passes over chunks of unit vectors were
    O(n²), seconds per call at this size (hence :func:`measure`'s ``slow``).
    """

    def expected():
        from scipy.optimize import rosen_hess_prod

        x, v, _ = _rosen_inputs(n)
        return rosen_hess_prod(x, v)

    def primal():
        x, _, y = _rosen_inputs(n)
        return _checked(functools.partial(rosenbrock, x), y, what="primal")

    def dual():
        x, v, _ = _rosen_inputs(n)
        return _checked(functools.partial(dualad.hvp, rosenbrock, (x,), (v,)), expected(),
                        read=lambda r: r[0], what="dualad.hvp", rtol=EXACT_RTOL, scaled=True)

    def jax_jit():
        jax = _jax()
        import jax.numpy as jnp

        grad = jax.grad(functools.partial(rosenbrock, xp=jnp))
        hvp = jax.jit(lambda x, v: jax.jvp(grad, (x,), (v,))[1])
        x, v, _ = _rosen_inputs(n)
        xj, vj = jax.device_put(x), jax.device_put(v)
        return _checked(lambda: jax.block_until_ready(hvp(xj, vj)), expected(),
                        what="jax.jit(jvp of grad)", rtol=EXACT_RTOL, scaled=True)

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        x, v, _ = _rosen_inputs(n)
        hvp_at = ag.make_hvp(functools.partial(rosenbrock, xp=anp))  # (vjp of grad, grad)
        return _checked(lambda: hvp_at(x)[0](v), expected(), what="autograd.make_hvp",
                        rtol=EXACT_RTOL, scaled=True)

    def torch_func():
        torch = _require("torch")
        from torch.func import grad, jvp

        x, v, _ = _rosen_inputs(n)
        xt, vt = torch.from_numpy(x), torch.from_numpy(v)
        g = grad(functools.partial(rosenbrock, xp=torch))
        return _checked(lambda: jvp(g, (xt,), (vt,))[1], expected(), read=lambda r: r.numpy(),
                        what="torch.func (jvp of grad)", rtol=EXACT_RTOL, scaled=True)

    return Problem(
        name="hvp_rosenbrock",
        title=f"hvp rosenbrock, n={n:.0e}".replace("e+0", "e"),
        target=None,
        factories={"primal": primal, "dualad": dual, "jax.jit": jax_jit,
                   "torch": torch_func, "autograd": autograd},
        issue=3,
    )


# -- problem 6: gradient of the Helmholtz free energy, forward and reverse (issue 4) --

#: The sizes of Baydin et al.'s Table 4 (and the asv ``params``).
HELMHOLTZ_SIZES = (1, 8, 15, 22, 29, 36, 43, 50)

#: Gas constant (J/(mol·K)) and temperature (K) of the benchmark.
HELMHOLTZ_R, HELMHOLTZ_T = 8.314, 300.0

_SQRT2, _SQRT8 = math.sqrt(2.0), math.sqrt(8.0)


def helmholtz(x, A, b, xp=np):
    """The Helmholtz free energy of a mixture, Baydin et al. (2018), Table 4::

        f(x) = R·T·Σᵢ xᵢ log(xᵢ / (1 − bᵀx))
               − xᵀAx / (√8·bᵀx) · log((1 + (1+√2)·bᵀx) / (1 + (1−√2)·bᵀx))

    with ``R``, ``T`` = :data:`HELMHOLTZ_R`, :data:`HELMHOLTZ_T`, ``A`` symmetric
    and ``0 < bᵀx < 1``. Written once for every array namespace (``xp=np``,
    ``jnp``, ``anp``, ``torch``).
    """
    bx = b @ x
    return (HELMHOLTZ_R * HELMHOLTZ_T * xp.sum(x * xp.log(x / (1.0 - bx)))
            - (x @ A @ x) / (_SQRT8 * bx)
            * xp.log((1.0 + (1.0 + _SQRT2) * bx) / (1.0 + (1.0 - _SQRT2) * bx)))


def helmholtz_grad(x: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The gradient of :func:`helmholtz`, derived by hand (``A`` symmetric).

    With ``s = bᵀx``, ``q = xᵀAx``, ``L = log((1 + (1+√2)s) / (1 + (1−√2)s))`` and
    ``L' = dL/ds``::

        ∇f = R·T·(log(x / (1 − s)) + 1 + Σᵢxᵢ / (1 − s) · b)
             − (2·Ax·L + q·(L' − L/s)·b) / (√8·s)

    >>> x, A, b = np.array([0.2, 0.1]), np.array([[1.0, 0.5], [0.5, 2.0]]), np.array([0.3, 0.4])
    >>> h = 1e-30                                       # the complex step agrees
    >>> steps = [helmholtz(x + 1j * h * e, A, b).imag / h for e in np.eye(2)]
    >>> bool(np.allclose(helmholtz_grad(x, A, b), steps, rtol=1e-14))
    True
    """
    s = b @ x
    om = 1.0 - s
    ax = A @ x
    q = x @ ax
    up, um = 1.0 + (1.0 + _SQRT2) * s, 1.0 + (1.0 - _SQRT2) * s
    L = np.log(up / um)
    dL = (1.0 + _SQRT2) / up - (1.0 - _SQRT2) / um
    return (HELMHOLTZ_R * HELMHOLTZ_T * (np.log(x / om) + 1.0 + (x.sum() / om) * b)
            - (2.0 * L * ax + (q * (dL - L / s)) * b) / (_SQRT8 * s))


def _hand_dual_helmholtz(x: np.ndarray, A: np.ndarray, b: np.ndarray):
    """Value and gradient of :func:`helmholtz` by batched forward mode written by hand.

    All n seeds in one pass: every intermediate carries its tangents along the
    n unit vectors, an ``(n, n)`` array (one row per seed) for a vector and an
    ``(n,)`` array for a scalar, propagated one dual operation at a time.
    """
    n = x.size
    dx = np.eye(n)                                      # the seeds
    s, ds = b @ x, dx @ b
    om, dom = 1.0 - s, -ds
    r = x / om
    dr = dx / om - np.outer(dom / om, r)
    lr, dlr = np.log(r), dr / r
    t, dt = x * lr, dx * lr + x * dlr
    s1, ds1 = t.sum(), dt.sum(axis=1)
    ax, dax = A @ x, dx @ A.T
    q, dq = x @ ax, dx @ ax + dax @ x
    c, dc = _SQRT8 * s, _SQRT8 * ds
    up, dup = 1.0 + (1.0 + _SQRT2) * s, (1.0 + _SQRT2) * ds
    um, dum = 1.0 + (1.0 - _SQRT2) * s, (1.0 - _SQRT2) * ds
    w, dw = up / um, (dup * um - up * dum) / (um * um)
    L, dL = np.log(w), dw / w
    p, dp = q / c, (dq * c - q * dc) / (c * c)
    e, de = p * L, dp * L + p * dL
    rt = HELMHOLTZ_R * HELMHOLTZ_T
    return rt * s1 - e, rt * ds1 - de


def _helmholtz_num_dual(x, A, b):
    """:func:`helmholtz` in num-dual's idiom: Python loops over its dual scalars
    (``A`` and ``b`` nested lists of floats)."""
    n = len(x)
    s = sum((x[i] * b[i] for i in range(1, n)), x[0] * b[0])
    om = 1.0 - s
    entropy = sum((xi * (xi / om).log() for xi in x[1:]), x[0] * (x[0] / om).log())
    q = 0.0
    for i, row in enumerate(A):
        q = q + x[i] * sum((x[j] * row[j] for j in range(1, n)), x[0] * row[0])
    ratio = (1.0 + (1.0 + _SQRT2) * s) / (1.0 + (1.0 - _SQRT2) * s)
    return HELMHOLTZ_R * HELMHOLTZ_T * entropy - q / (_SQRT8 * s) * ratio.log()


@functools.lru_cache(maxsize=len(HELMHOLTZ_SIZES))
def _helmholtz_inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray]:
    """``x``, ``A``, ``b``, the value and the gradient (:func:`helmholtz_grad`, checked
    once against the complex step, exact to rounding for this analytic ``f``).

    ``x, b ~ U(0, 1)/n``, so that ``0 < bᵀx < 1/n``; ``A`` symmetric, ``U(0, 1)`` entries.
    """
    rng = np.random.default_rng(20240604 + n)
    x = rng.uniform(size=n) / n
    b = rng.uniform(size=n) / n
    m = rng.uniform(size=(n, n))
    A = 0.5 * (m + m.T)
    assert 0.0 < b @ x < 1.0
    g = helmholtz_grad(x, A, b)
    h = 1e-30
    steps = np.array([helmholtz(x + 1j * h * e, A, b).imag / h for e in np.eye(n)])
    if not np.allclose(g, steps, rtol=0.0, atol=1e-13 * np.max(np.abs(steps))):
        raise AssertionError(f"helmholtz_grad: {g}, complex step: {steps}")
    return x, A, b, float(helmholtz(x, A, b)), g


#: Issue 4's goals at n = 50: forward below DiffSharp's 7.69, reverse 2.6x better than
#: torch's tape (the best uncompiled peer, 26x).
HELMHOLTZ_TARGETS = {50: {"dualad-fwd": 7.5, "dualad-rev": 10.0}}

#: Ratios issue 4 quotes at n = 50 (peers against the NumPy primal) and the figures
#: Baydin et al. publish for DiffSharp (compiled F#, against F#).
_HELMHOLTZ_REFERENCE = {50: {"hand-grad": 1.8, "hand-dual": 5.5, "jax.jit": 1.8, "jax": 816.0,
                             "autograd": 48.0, "torch": 26.0, "torch.jacfwd": 240.0,
                             "num-dual": 219.0}}
_HELMHOLTZ_PUBLISHED = {50: {"DiffSharp": {"dualad-fwd": 7.69, "dualad-rev": 1.96}}}


def helmholtz_problem(n: int = 50) -> Problem:
    """time(∇f) / time(f) for :func:`helmholtz` in ``n`` variables (issue 4).

    dualad twice: forward (``dualad.jacfwd``, the n seeds in one pass) and reverse
    (``dualad.grad``). Peers: the gradient by hand (``hand-grad``), batched duals by
    hand (``hand-dual``), ``jax.jit(jax.grad)``, eager ``jax.grad`` (``jax``),
    ``autograd.grad``, torch's tape (``torch``) and ``torch.func.jacfwd``
    (``torch.jacfwd``), ``num_dual.gradient``. All checked against
    :func:`helmholtz_grad` to 1e-11 of the largest entry.
    """

    def check(thunk, what, read=lambda r: r):
        return _checked(thunk, _helmholtz_inputs(n)[4], read=read, what=what, rtol=1e-11,
                        scaled=True)

    def primal():
        x, A, b, y, _ = _helmholtz_inputs(n)
        return _checked(functools.partial(helmholtz, x, A, b), y, what="primal")

    def forward():
        x, A, b, _, _ = _helmholtz_inputs(n)
        return check(functools.partial(dualad.jacfwd(helmholtz), x, A, b), "dualad.jacfwd")

    def reverse():
        x, A, b, _, _ = _helmholtz_inputs(n)
        return check(functools.partial(dualad.grad(helmholtz), x, A, b), "dualad.grad")

    def hand_grad():
        x, A, b, _, _ = _helmholtz_inputs(n)
        return check(functools.partial(helmholtz_grad, x, A, b), "hand-written gradient")

    def hand_dual():
        x, A, b, _, _ = _helmholtz_inputs(n)
        return check(functools.partial(_hand_dual_helmholtz, x, A, b), "hand-written dual",
                     read=lambda r: r[1])

    def jax_grad(jit: bool):
        def factory():
            jax = _jax()
            import jax.numpy as jnp

            grad = jax.grad(functools.partial(helmholtz, xp=jnp))
            grad = jax.jit(grad) if jit else grad
            x, A, b = map(jax.device_put, _helmholtz_inputs(n)[:3])
            return check(lambda: jax.block_until_ready(grad(x, A, b)),
                         "jax.jit(jax.grad)" if jit else "jax.grad")

        return factory

    def autograd():
        ag = _require("autograd")
        anp = _require("autograd.numpy")
        x, A, b, _, _ = _helmholtz_inputs(n)
        grad = ag.grad(functools.partial(helmholtz, xp=anp))
        return check(functools.partial(grad, x, A, b), "autograd.grad")

    def torch_tape():
        torch = _require("torch")
        x0, A, b = map(torch.from_numpy, _helmholtz_inputs(n)[:3])

        def grad():
            x = x0.detach().requires_grad_()
            return torch.autograd.grad(helmholtz(x, A, b, xp=torch), x)[0]

        return check(grad, "torch.autograd.grad", read=lambda r: r.numpy())

    def torch_jacfwd():
        torch = _require("torch")
        from torch.func import jacfwd

        x, A, b = map(torch.from_numpy, _helmholtz_inputs(n)[:3])
        jac = jacfwd(functools.partial(helmholtz, xp=torch))
        return check(functools.partial(jac, x, A, b), "torch.func.jacfwd",
                     read=lambda r: r.numpy())

    def num_dual():
        nd = _require("num_dual")
        x, A, b, _, _ = _helmholtz_inputs(n)
        A, b = A.tolist(), b.tolist()
        return check(functools.partial(nd.gradient, lambda v: _helmholtz_num_dual(v, A, b),
                                       x.tolist()),
                     "num_dual.gradient", read=lambda r: r[1])

    return Problem(
        name=f"helmholtz_{n}",
        title=f"helmholtz gradient, n={n}",
        target=HELMHOLTZ_TARGETS.get(n),
        factories={"primal": primal, "dualad-fwd": forward, "dualad-rev": reverse,
                   "hand-grad": hand_grad, "hand-dual": hand_dual,
                   "jax.jit": jax_grad(jit=True), "jax": jax_grad(jit=False),
                   "autograd": autograd, "torch": torch_tape, "torch.jacfwd": torch_jacfwd,
                   "num-dual": num_dual},
        reference=_HELMHOLTZ_REFERENCE.get(n, {}),
        issue=4,
        own=("dualad-fwd", "dualad-rev"),
        published=_HELMHOLTZ_PUBLISHED.get(n, {}),
        group="helmholtz",
        size=n,
    )


#: The problems of issues 2, 3 and 4, by name. Factories are cheap: nothing is
#: computed or imported until a thunk is made.
PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    jvp_sum_sin_exp(), grad_sum_sin_exp(), jacfwd_textbook(),
    *map(hessian_rosenbrock, HESSIAN_SIZES), hvp_rosenbrock(),
    *map(helmholtz_problem, HELMHOLTZ_SIZES))}

#: Size sweeps, each printed as its own table: group name -> title.
GROUPS: dict[str, str] = {
    "helmholtz": "Gradient of the Helmholtz free energy (Baydin et al., \"Automatic "
                 "Differentiation in Machine Learning: a Survey\", Table 4)",
}

#: Lines printed under a group's table.
_GROUP_NOTES: dict[str, tuple[str, ...]] = {
    "helmholtz": (
        "Each cell: time of the gradient / time of f, the NumPy primal (column 'primal'), "
        "both measured",
        "in this process. dualad-fwd: dualad.jacfwd, all n seeds in one pass; "
        "dualad-rev: dualad.grad.",
        "DiffSharp: the figures Baydin et al. publish (compiled F#, against F#), for "
        "context; issue 4",
        "reference: the peers as measured when the issue was filed.",
    ),
}

#: Every peer column, in table order.
PEER_NAMES: list[str] = list(dict.fromkeys(k for p in PROBLEMS.values() for k in p.peers))


# -- one process, one table ------------------------------------------------------------


@dataclass
class Result:
    """The measurements of one problem: seconds per call, or why a peer is missing."""

    problem: Problem
    times: dict[str, float]
    missing: dict[str, str]

    def ratio(self, impl: str) -> float:
        return self.times[impl] / self.times["primal"]

    def target_of(self, impl: str | None = None) -> tuple[float | None, str | None]:
        """The target ratio in this run of one of dualad's implementations (the
        first by default), and the peer that set it (if one did)."""
        impl = self.problem.own[0] if impl is None else impl
        target, by = self.problem.target_of(impl), None
        for peer in self.problem.beat:
            if peer in self.times and (target is None or self.ratio(peer) < target):
                target, by = self.ratio(peer), peer
        return target, by

    @property
    def target(self) -> tuple[float | None, str | None]:
        """dualad's target ratio in this run, and the peer that set it (if one did)."""
        return self.target_of()

    def met_of(self, impl: str | None = None) -> bool | None:
        """Whether ``impl`` (dualad's first implementation by default) met its target
        (``<=`` a fixed one, ``<`` a peer's); ``None`` when there is none."""
        impl = self.problem.own[0] if impl is None else impl
        target, by = self.target_of(impl)
        if target is None:
            return None
        r = self.ratio(impl)
        return r < target if by else r <= target

    @property
    def met(self) -> bool | None:
        """Whether every dualad implementation met its target; ``None`` when none has one."""
        mets = [m for m in map(self.met_of, self.problem.own) if m is not None]
        return all(mets) if mets else None

    def target_text(self, impl: str | None = None) -> str:
        target, by = self.target_of(impl)
        if target is None:
            return "report"
        return f"< {_fmt_ratio(target)} {by}" if by else f"<= {target:g}x"


def run(problems: Iterable[Problem], *, peers: Sequence[str] | None = None,
        repeat: int = 5, min_time: float = 0.02, slow: float = 1.0) -> list[Result]:
    """Measure each problem's primal, dualad and peers (all, or those named) together."""
    results = []
    for problem in problems:
        thunks: dict[str, Thunk] = {}
        missing: dict[str, str] = {}
        for impl in ["primal", *problem.own, *problem.peers]:
            ours = impl == "primal" or impl in problem.own
            if not ours and peers is not None and impl not in peers:
                continue
            try:
                thunks[impl] = problem.make(impl)
            except PeerUnavailable as exc:
                missing[impl] = str(exc)
            except Exception as exc:  # a broken peer must not hide dualad's numbers
                if ours:
                    raise
                missing[impl] = f"failed: {type(exc).__name__}: {exc}"
        times = measure(thunks, repeat=repeat, min_time=min_time, slow=slow)
        results.append(Result(problem, times, missing))
    return results


def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _fmt_ratio(r: float) -> str:
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x" if r >= 100 else f"{r:.1f}x"


def _reference_rows(problem: Problem) -> list[tuple[str, dict[str, float]]]:
    """The problem's reference ratios, labelled: published figures, then the issue's."""
    return [*problem.published.items(), (f"issue {problem.issue} reference", problem.reference)]


def _missing_lines(results: Sequence[Result]) -> list[str]:
    """Why peers are ``n/a``, one line per peer and reason (a sweep's sizes merged)."""
    why: dict[tuple[str, str], list[Problem]] = {}
    for r in results:
        for peer, reason in r.missing.items():
            why.setdefault((peer, reason), []).append(r.problem)
    lines = []
    for (peer, reason), problems in why.items():
        if len(problems) > 1 and all(p.group for p in problems):
            where = f"{problems[0].group} (n={','.join(str(p.size) for p in problems)})"
        else:
            where = ", ".join(p.name for p in problems)
        lines.append(f"  {where} / {peer}: {reason}")
    if lines:
        lines.insert(0, "'n/a': not installed, or failed:")
    return lines


def _layout(head: Sequence[str], rows: Sequence[Sequence[str]], left: set[int]) -> list[str]:
    """``head``, a rule and ``rows`` in aligned columns (those in ``left`` left-justified)."""
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(head), "  ".join("-" * w for w in widths), *map(line, rows)]


def format_table(results: Sequence[Result], *, reference: bool = True) -> str:
    """The results as a plain-text table (ASCII only, safe on any terminal).

    One row per problem; the ``dualad`` column is each problem's first dualad
    implementation (a size sweep reads better as :func:`format_group_table`).
    """
    tried = {k for r in results for k in (*r.times, *r.missing)}
    peers = [k for k in dict.fromkeys(k for r in results for k in r.problem.peers) if k in tried]
    head = ["benchmark", "primal", "dualad", "ratio", "target", "", *peers]
    rows = []
    for r in results:
        p = r.problem
        ours = p.own[0]
        met = r.met_of(ours)
        row = [p.title, _fmt_time(r.times["primal"]), _fmt_time(r.times[ours]),
               _fmt_ratio(r.ratio(ours)), r.target_text(ours),
               "" if met is None else "ok" if met else "MISS"]
        for peer in peers:
            if peer in r.times:
                row.append(_fmt_ratio(r.ratio(peer)))
            else:
                row.append("n/a" if peer in r.missing else "-")
        rows.append(row)
        for label, refs in _reference_rows(p) if reference else ():
            if any(k in refs for k in peers):
                rows.append([f"  ({label})", "", "", "", "", "",
                             *(_fmt_ratio(refs[k]) if k in refs else "" for k in peers)])
    out = _layout(head, rows, left={0})
    out.append("")
    out.append("ratio = time / time of the NumPy primal, both measured in this process; "
               "peer columns")
    out.append("are ratios to the same primal; '-': not a peer for this benchmark. "
               "target '< R peer':")
    out.append("faster than the best of " + ", ".join(NUMPY_LEVEL_PEERS)
               + " (NumPy level) in this run; 'report': no target.")
    out += _missing_lines(results)
    return "\n".join(out)


def format_group_table(results: Sequence[Result], *, title: str | None = None,
                       notes: Sequence[str] = (), reference: bool = True) -> str:
    """A size sweep (problems of one ``group``) as a table: one row per size, one
    column per implementation, dualad's first; each cell a ratio to the primal.

    Targets follow as rows ``target, n=N`` (with ``ok`` or ``MISS``), then the
    published and issue reference ratios.
    """
    results = sorted(results, key=lambda r: r.problem.size or 0)
    own = list(dict.fromkeys(k for r in results for k in r.problem.own))
    tried = {k for r in results for k in (*r.times, *r.missing)}
    peers = [k for k in dict.fromkeys(k for r in results for k in r.problem.peers) if k in tried]
    columns = [*own, *peers]
    head = ["n", "primal", *columns]
    rows = []
    for r in results:
        row = [str(r.problem.size), _fmt_time(r.times["primal"])]
        for impl in columns:
            if impl in r.times:
                row.append(_fmt_ratio(r.ratio(impl)))
            else:
                row.append("n/a" if impl in r.missing else "-")
        rows.append(row)
    for r in results:
        targets = {i: r.target_of(i)[0] for i in r.problem.own}
        if any(t is not None for t in targets.values()):
            rows.append([f"target, n={r.problem.size}", "", *(
                f"{r.target_text(i)} {'ok' if r.met_of(i) else 'MISS'}"
                if targets.get(i) is not None else "" for i in columns)])
    for r in results if reference else ():
        for label, refs in _reference_rows(r.problem):
            if any(k in refs for k in columns):
                rows.append([f"({label}, n={r.problem.size})", "",
                             *(_fmt_ratio(refs[k]) if k in refs else "" for k in columns)])
    out = [title, ""] if title else []
    out += _layout(head, rows, left={0})
    out.append("")
    out += notes or ["Each cell: time / time of the NumPy primal (column 'primal'), "
                     "both measured in this process."]
    out += _missing_lines(results)
    return "\n".join(out)


def _format_times(results: Sequence[Result]) -> str:
    lines = []
    for r in results:
        lines.append(f"{r.problem.name}:")
        for impl, t in r.times.items():
            lines.append(f"  {impl:<12} {_fmt_time(t):>10}  {_fmt_ratio(r.ratio(impl)):>8}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m dualad bench``: measure and print the table.

    Returns 0, or 1 with ``--check`` when dualad misses a target.
    """
    parser = argparse.ArgumentParser(
        prog="python -m dualad bench",
        description="Time dualad's transforms against the NumPy primal and peer libraries "
                    "(jax, autograd, num-dual, numdifftools, torch when installed), "
                    "in one process: a table of problems, then one per size sweep "
                    "(helmholtz).")
    parser.add_argument("--only", action="append", choices=sorted([*PROBLEMS, *GROUPS]),
                        metavar="NAME",
                        help="run only this problem, or this group of problems (repeatable): "
                             f"{', '.join([*PROBLEMS, *GROUPS])}")
    parser.add_argument("--peers", default="all",
                        help="comma-separated peers to include, 'all' (default) or 'none'; "
                             f"known: {', '.join(PEER_NAMES)}")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timing loops per implementation; the best is kept (default 5)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds each timing loop lasts at least (default 0.02)")
    parser.add_argument("--times", action="store_true",
                        help="also list every implementation's absolute time")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 if dualad misses a target")
    parser.add_argument("--slow", type=float, default=1.0,
                        help="time once, not in loops, what takes this many seconds per "
                             "call (default 1)")
    args = parser.parse_args(argv)

    if args.peers == "all":
        peers = None
    elif args.peers == "none":
        peers = []
    else:
        peers = [p.strip() for p in args.peers.split(",") if p.strip()]
        unknown = sorted(set(peers) - set(PEER_NAMES))
        if unknown:
            parser.error(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEER_NAMES)}")
    selected = dict.fromkeys(
        p.name for name in (args.only or PROBLEMS)
        for p in ([q for q in PROBLEMS.values() if q.group == name] if name in GROUPS
                  else [PROBLEMS[name]]))
    problems = [PROBLEMS[name] for name in selected]

    results = run(problems, peers=peers, repeat=args.repeat, min_time=args.min_time,
                  slow=args.slow)
    print(f"dualad {dualad.__version__}, numpy {np.__version__}, Python "
          f"{sys.version.split()[0]}; best of {args.repeat} loops of >= {args.min_time:g} s "
          f"(one call when a call takes >= {args.slow:g} s)")
    single = [r for r in results if r.problem.group is None]
    if single:
        print()
        print(format_table(single))
    for group in dict.fromkeys(r.problem.group for r in results if r.problem.group):
        print()
        print(format_group_table([r for r in results if r.problem.group == group],
                                 title=GROUPS.get(group, group),
                                 notes=_GROUP_NOTES.get(group, ())))
    if args.times:
        print()
        print(_format_times(results))
    missed = [r.problem.name for r in results if r.met is False]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
