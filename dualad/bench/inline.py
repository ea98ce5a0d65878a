"""Transforms written inline: ``dualad.jacfwd(f)(x)`` made anew at every call.

Users write ``hess=lambda x: dualad.hessian(f)(x)`` for SciPy, or take a
derivative inside a loop; the replay's cache is found from ``f`` and the
transform's options, so such calls replay like a transform made once and kept
(the hoisted problems of :mod:`.forward`, :mod:`.reverse`, :mod:`.second_order`).
Each problem here is one of those with dualad's implementations written inline,
the same targets, and the primal (and the peers a target names) beside it.
"""

from __future__ import annotations

import dataclasses
import functools

import dualad

from .core import EXACT_RTOL, Problem, checked
from .forward import TEXTBOOK_GRADIENT, TEXTBOOK_POINT, jacfwd_textbook, textbook
from .reverse import _helmholtz_inputs, helmholtz, helmholtz_problem
from .second_order import _rosen_inputs, hessian_rosenbrock, rosenbrock

__all__ = ["INLINE_PROBLEMS"]


def _inline(problem: Problem, factories: dict, peers: tuple[str, ...] = ()) -> Problem:
    """``problem`` with ``factories`` (inline) as dualad's, in the group "inline"."""
    return dataclasses.replace(
        problem, name=f"{problem.name}_inline", title=f"{problem.title}, written inline",
        factories={"primal": problem.factories["primal"], **factories,
                   **{p: problem.factories[p] for p in peers}},
        own=tuple(factories), reference={}, published={}, group="inline")


def _textbook() -> Problem:
    x1, x2 = TEXTBOOK_POINT

    def dual():
        return checked(lambda: dualad.jacfwd(textbook, argnums=(0, 1))(x1, x2),
                       TEXTBOOK_GRADIENT, what="dualad.jacfwd inline")

    return _inline(jacfwd_textbook(), {"dualad": dual})


def _helmholtz(mode: str, n: int = 50) -> Problem:
    """The forward (``jacfwd``) or reverse (``grad``) gradient of the Helmholtz energy."""
    x, A, b, _, expected = _helmholtz_inputs(n)
    transform = dualad.jacfwd if mode == "fwd" else dualad.grad

    def dual():
        return checked(lambda: transform(helmholtz)(x, A, b), expected, rtol=1e-11,
                       scaled=True, what=f"dualad.{transform.__name__} inline")

    problem = helmholtz_problem(n)
    return dataclasses.replace(
        _inline(problem, {"dualad": dual}), name=f"helmholtz_{n}_{mode}_inline",
        title=f"{problem.title}, {transform.__name__}, written inline",
        target=problem.target_of(f"dualad-{mode}"))


def _rosenbrock(n: int = 10) -> Problem:
    from scipy.optimize import rosen_hess

    x = _rosen_inputs(n)[0]

    def dual():
        return checked(functools.partial(lambda x: dualad.hessian(rosenbrock)(x), x),
                       rosen_hess(x), what="dualad.hessian inline", rtol=EXACT_RTOL,
                       scaled=True)

    problem = hessian_rosenbrock(n)
    return dataclasses.replace(_inline(problem, {"dualad": dual}, peers=("num-dual",)),
                               beat=("num-dual",))


INLINE_PROBLEMS = (_textbook(), _helmholtz("fwd"), _helmholtz("rev"), _rosenbrock(10))
