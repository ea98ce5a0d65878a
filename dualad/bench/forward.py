"""Forward-mode problems: the JVP of a large elementwise sum (issue 2) and the
per-call cost of a small gradient by ``jacfwd`` (issue 2)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import dualad

from .core import Factory, PeerUnavailable, Problem, checked, import_jax, require


# -- problem 1: JVP of a large elementwise function (issue 2; its gradient: reverse.py) --


def sum_sin_exp(x, xp=np):
    """``sum(sin(x)·exp(−x²) + log1p(x²))``, written once for every array namespace."""
    return xp.sum(xp.sin(x) * xp.exp(-x**2) + xp.log1p(x**2))


@functools.lru_cache(maxsize=2)
def sum_sin_exp_inputs(n: int) -> tuple[np.ndarray, np.ndarray, float, float]:
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


def sum_sin_exp_problem(transform: str, n: int, *, factories: dict[str, Factory],
                        **fields: Any) -> Problem:
    """A problem on :func:`sum_sin_exp` in ``n`` float64, ``{transform}_sum_sin_exp``:
    the NumPy primal, then ``factories`` (dualad's and the peers'); ``fields`` go to
    :class:`Problem`. The JVP and the gradient share their inputs, title and primal."""

    def primal():
        x, _, y, _ = sum_sin_exp_inputs(n)
        return checked(functools.partial(sum_sin_exp, x), y, what="primal")

    return Problem(
        name=f"{transform}_sum_sin_exp",
        title=f"{transform} sum(sin(x)exp(-x^2)+log1p(x^2)), n={n:.0e}".replace("e+0", "e"),
        factories={"primal": primal, **factories},
        **fields,
    )


def jvp_sum_sin_exp(n: int = 10**6) -> Problem:
    """JVP of :func:`sum_sin_exp` on ``n`` float64 along one tangent (issue 2: n = 10⁶)."""

    def dual():
        x, t, y, dy = sum_sin_exp_inputs(n)
        return checked(functools.partial(dualad.jvp, sum_sin_exp, (x,), (t,)), (y, dy),
                       what="dualad.jvp")

    def hand_dual():
        x, t, y, dy = sum_sin_exp_inputs(n)
        return checked(functools.partial(_hand_dual_sum_sin_exp, x, t), (y, dy),
                       what="hand-written dual")

    def jax_jit():
        jax = import_jax()
        import jax.numpy as jnp

        x, t, y, dy = sum_sin_exp_inputs(n)
        f = functools.partial(sum_sin_exp, xp=jnp)
        jvp = jax.jit(lambda x, t: jax.jvp(f, (x,), (t,)))
        xj, tj = jax.device_put(x), jax.device_put(t)
        return checked(lambda: jax.block_until_ready(jvp(xj, tj)), (y, dy),
                       what="jax.jit(jax.jvp)")

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        if not hasattr(ag, "make_jvp"):
            raise PeerUnavailable("this autograd has no forward mode (make_jvp)")
        x, t, y, dy = sum_sin_exp_inputs(n)
        jvp_at = ag.make_jvp(functools.partial(sum_sin_exp, xp=anp))
        return checked(lambda: jvp_at(x)(t), (y, dy), what="autograd.make_jvp")

    def torch_func():
        torch = require("torch")
        from torch.func import jvp

        x, t, y, dy = sum_sin_exp_inputs(n)
        xt, tt = torch.from_numpy(x), torch.from_numpy(t)
        f = functools.partial(sum_sin_exp, xp=torch)
        return checked(lambda: jvp(f, (xt,), (tt,)), (y, dy), what="torch.func.jvp")

    return sum_sin_exp_problem(
        "jvp", n, target=2.5,
        factories={"dualad": dual, "hand-dual": hand_dual, "jax.jit": jax_jit,
                   "autograd": autograd, "torch": torch_func},
        reference={"hand-dual": 2.3, "jax.jit": 2.35, "torch": 2.6, "autograd": 3.2},
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
        return checked(functools.partial(textbook, x1, x2), TEXTBOOK_VALUE, what="primal")

    def dual():
        jac = dualad.jacfwd(textbook, argnums=(0, 1))
        return checked(functools.partial(jac, x1, x2), TEXTBOOK_GRADIENT,
                       what="dualad.jacfwd")

    def num_dual():
        nd = require("num_dual")
        return checked(functools.partial(nd.gradient, _textbook_num_dual, [x1, x2]),
                       TEXTBOOK_GRADIENT, read=lambda r: r[1], what="num_dual.gradient")

    def jax_jit():
        jax = import_jax()
        import jax.numpy as jnp

        grad = jax.jit(jax.grad(functools.partial(textbook, xp=jnp), argnums=(0, 1)))
        return checked(lambda: jax.block_until_ready(grad(x1, x2)), TEXTBOOK_GRADIENT,
                       what="jax.jit(jax.grad)")

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        grad = ag.grad(functools.partial(textbook, xp=anp), argnum=(0, 1))
        return checked(functools.partial(grad, x1, x2), TEXTBOOK_GRADIENT,
                       what="autograd.grad")

    def torch_tape():
        torch = require("torch")

        def grad():
            a = torch.tensor(x1, dtype=torch.float64, requires_grad=True)
            b = torch.tensor(x2, dtype=torch.float64, requires_grad=True)
            return torch.autograd.grad(textbook(a, b, xp=torch), (a, b))

        return checked(grad, TEXTBOOK_GRADIENT, what="torch.autograd.grad")

    return Problem(
        name="jacfwd_textbook",
        title="jacfwd ln(x1)+x1*x2-sin(x2), per call",
        target=20.0,
        factories={"primal": primal, "dualad": dual, "num-dual": num_dual,
                   "jax.jit": jax_jit, "autograd": autograd, "torch": torch_tape},
        reference={"num-dual": 2.4, "jax.jit": 13.0, "torch": 97.0, "autograd": 167.0},
    )
