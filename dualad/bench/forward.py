"""Forward-mode problems: the JVP of an elementwise sum at 10³ and 10⁶ elements,
the same JVP along K seeds at once (``batched=True``), and the per-call cost of a
small gradient by ``jacfwd``. The dense Jacobians
(``jacfwd`` and ``jacrev`` of a layer) are in :mod:`dualad.bench.jacobians`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import dualad

from .core import (APPROX_RTOL, Factory, PeerUnavailable, Problem, checked, import_jax, require,
                   warmed_up)


# -- JVP of a large elementwise function (its gradient: reverse.py) ---------------------

#: The sizes of the JVP problems, 10³ and 10⁶ elements (the asv ``params``).
JVP_SIZES = (10**3, 10**6)

#: The largest n at which num-dual, whose numbers are Python scalars, is timed on
#: the elementwise sum: a Python loop over the elements (about 2 ms at n = 10³,
#: seconds at 10⁶).
NUM_DUAL_MAX_ELEMENTS = 10**4


def sum_sin_exp(x, xp=np):
    """``sum(sin(x)·exp(−x²) + log1p(x²))``, written once for every array namespace."""
    return xp.sum(xp.sin(x) * xp.exp(-x**2) + xp.log1p(x**2))


@functools.lru_cache(maxsize=4)
def sum_sin_exp_inputs(n: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Point, tangent, and the exact primal and JVP (from the analytic derivative)."""
    rng = np.random.default_rng(20240601)
    x = rng.standard_normal(n)
    t = rng.standard_normal(n)
    s, c, e = np.sin(x), np.cos(x), np.exp(-x * x)
    y = float(np.sum(s * e + np.log1p(x * x)))
    dy = float(np.sum((c * e - 2 * x * s * e + 2 * x / (1 + x * x)) * t))
    return x, t, y, dy


def sum_sin_exp_grad(x: np.ndarray) -> np.ndarray:
    """The gradient of :func:`sum_sin_exp`, derived by hand:
    ``cos(x)·e − 2x·sin(x)·e + 2x / (1 + x²)`` with ``e = exp(−x²)``."""
    x2 = x * x
    e = np.exp(-x2)
    return (np.cos(x) - 2.0 * x * np.sin(x)) * e + 2.0 * x / (1.0 + x2)


def _hand_dual_sum_sin_exp(x, t):
    """The JVP propagated by hand, one dual operation at a time, in NumPy; ``t`` of
    shape ``(n,)``, or ``(K, n)`` for K seeds at once (then K tangents out)."""
    x2, dx2 = x * x, 2.0 * x * t
    s, ds = np.sin(x), np.cos(x) * t
    e = np.exp(-x2)
    de = -e * dx2
    a, da = s * e, ds * e + s * de
    lg, dlg = np.log1p(x2), dx2 / (1.0 + x2)
    return np.sum(a + lg), np.sum(da + dlg, axis=-1)


def _sum_sin_exp_num_dual(xs):
    """:func:`sum_sin_exp` in num-dual's idiom: a Python loop over its dual scalars."""
    acc = 0.0
    for x in xs:
        x2 = x * x
        acc = acc + x.sin() * (-x2).exp() + x2.log1p()
    return acc


def sum_sin_exp_problem(transform: str, n: int, *, factories: dict[str, Factory],
                        **fields: Any) -> Problem:
    """A problem on :func:`sum_sin_exp` in ``n`` float64, ``{transform}_sum_sin_exp``
    (n = 10⁶), or ``{transform}_sum_sin_exp_{n}``: the NumPy primal, then
    ``factories`` (dualad's and the peers'); ``fields`` go to :class:`Problem`. The
    JVP and the gradient share their inputs, title and primal."""

    def primal():
        x, _, y, _ = sum_sin_exp_inputs(n)
        return checked(functools.partial(sum_sin_exp, x), y, what="primal")

    return Problem(
        name=f"{transform}_sum_sin_exp" + ("" if n == 10**6 else f"_{n}"),
        title=f"{transform} sum(sin(x)exp(-x^2)+log1p(x^2)), n={_fmt_size(n)}",
        factories={"primal": primal, **factories},
        **fields,
    )


#: The JVP's target by n (≤ 2.5× the primal at 10⁶); other sizes are reported.
JVP_TARGETS = {10**6: 2.5}

_JVP_REFERENCE = {10**6: {"hand-dual": 2.3, "jax.jit": 2.35, "torch": 2.6, "autograd": 3.2}}


def _fmt_size(n: int) -> str:
    """``1e6`` for 10⁶, ``1000`` for 1000: sizes as the titles print them."""
    return f"{n:.0e}".replace("e+0", "e") if n > 10**4 else str(n)


def jvp_sum_sin_exp(n: int = 10**6) -> Problem:
    """JVP of :func:`sum_sin_exp` on ``n`` float64 along one tangent (target at
    n = 10⁶: ≤ 2.5× the primal; n = 10³ is reported).

    Peers: the JVP propagated by hand in NumPy (``hand-dual``), ``jax.jvp`` eager
    (``jax``) and under ``jax.jit``, ``autograd.make_jvp``, ``torch.func.jvp``
    (``torch``), num-dual's scalar duals (up to :data:`NUM_DUAL_MAX_ELEMENTS`), and
    numdifftools' derivative of ``h ↦ f(x + h·t)`` at 0 (finite differences,
    checked to :data:`APPROX_RTOL`).
    """

    def dual():
        x, t, y, dy = sum_sin_exp_inputs(n)
        return checked(functools.partial(dualad.jvp, sum_sin_exp, (x,), (t,)), (y, dy),
                       what="dualad.jvp")

    def hand_dual():
        x, t, y, dy = sum_sin_exp_inputs(n)
        return checked(functools.partial(_hand_dual_sum_sin_exp, x, t), (y, dy),
                       what="hand-written dual")

    def jax_jvp(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            x, t, y, dy = sum_sin_exp_inputs(n)
            f = functools.partial(sum_sin_exp, xp=jnp)
            jvp = lambda x, t: jax.jvp(f, (x,), (t,))
            jvp = jax.jit(jvp) if jit else jvp
            xj, tj = jax.device_put(x), jax.device_put(t)
            return checked(lambda: jax.block_until_ready(jvp(xj, tj)), (y, dy),
                           what="jax.jit(jax.jvp)" if jit else "jax.jvp")

        return factory

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
        return checked(warmed_up(lambda: jvp(f, (xt,), (tt,))), (y, dy), what="torch.func.jvp")

    def num_dual():
        nd = require("num_dual")
        if n > NUM_DUAL_MAX_ELEMENTS:
            raise PeerUnavailable(f"num-dual loops over Python scalars: timed at n <= "
                                  f"{NUM_DUAL_MAX_ELEMENTS} only (seconds a call at n={n})")
        x, t, y, dy = sum_sin_exp_inputs(n)
        xl, tl = x.tolist(), t.tolist()
        return checked(lambda: _sum_sin_exp_num_dual(map(nd.Dual64, xl, tl)), (y, dy),
                       read=lambda d: (d.value, d.first_derivative), what="num-dual Dual64")

    def numdifftools():
        ndt = require("numdifftools")
        x, t, _, dy = sum_sin_exp_inputs(n)
        along = ndt.Derivative(lambda h: sum_sin_exp(x + h * t))
        return checked(functools.partial(along, 0.0), dy, rtol=APPROX_RTOL,
                       what="numdifftools.Derivative of f(x + h t)")

    return sum_sin_exp_problem(
        "jvp", n, target=JVP_TARGETS.get(n),
        factories={"dualad": dual, "hand-dual": hand_dual, "jax.jit": jax_jvp(jit=True),
                   "jax": jax_jvp(jit=False), "autograd": autograd, "torch": torch_func,
                   "num-dual": num_dual, "numdifftools": numdifftools},
        reference=_JVP_REFERENCE.get(n, {}),
    )


# -- the same JVP along K seeds at once ---------------------------------------------

#: The numbers of seeds of the batched JVP problems (the asv ``params``).
BATCH_SIZES = (1, 16, 256)

#: The number of elements of the batched JVP problems: K·n tangents, 20 MB at K = 256.
BATCHED_JVP_SIZE = 10**4


@functools.lru_cache(maxsize=len(BATCH_SIZES))
def _batched_inputs(k: int, n: int) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Point, ``(K, n)`` tangents, the value and the K exact JVPs (``T @ ∇f``)."""
    x, _, y, _ = sum_sin_exp_inputs(n)
    seeds = np.random.default_rng(20240607 + k).standard_normal((k, n))
    return x, seeds, y, seeds @ sum_sin_exp_grad(x)


def jvp_batched(k: int, n: int = BATCHED_JVP_SIZE) -> Problem:
    """The JVPs of :func:`sum_sin_exp` on ``n`` float64 along ``k`` seeds at once:
    ``dualad.jvp(f, (x,), (T,), batched=True)``, ``T`` of shape ``(k, n)``
    (K = 1, 16, 256; reported, no target).

    Peers: the batched JVP by hand in NumPy (``hand-dual``), ``jax.vmap`` of
    ``jax.jvp`` eager (``jax``) and under ``jax.jit``, ``torch.func.vmap`` of
    ``torch.func.jvp`` (``torch``) and a Python loop of ``autograd.make_jvp`` over
    the seeds (autograd has no batching). All give the K tangents, checked against
    ``T @ ∇f`` (:func:`sum_sin_exp_grad`) to 1e-12 of the largest.
    """

    def check(thunk, what, read=lambda r: r[1]):
        return checked(thunk, _batched_inputs(k, n)[3], read=read, what=what, rtol=1e-12,
                       scaled=True)

    def primal():
        x, _, y, _ = _batched_inputs(k, n)
        return checked(functools.partial(sum_sin_exp, x), y, what="primal")

    def dual():
        x, seeds, _, _ = _batched_inputs(k, n)
        return check(functools.partial(dualad.jvp, sum_sin_exp, (x,), (seeds,), batched=True),
                     "dualad.jvp(batched=True)")

    def hand_dual():
        x, seeds, _, _ = _batched_inputs(k, n)
        return check(functools.partial(_hand_dual_sum_sin_exp, x, seeds), "hand-written dual")

    def jax_vmap(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            f = functools.partial(sum_sin_exp, xp=jnp)
            jvps = jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,)), in_axes=(None, 0),
                            out_axes=(None, 0))
            jvps = jax.jit(jvps) if jit else jvps
            x, seeds = map(jax.device_put, _batched_inputs(k, n)[:2])
            return check(lambda: jax.block_until_ready(jvps(x, seeds)),
                         "jax.jit(jax.vmap(jax.jvp))" if jit else "jax.vmap(jax.jvp)")

        return factory

    def torch_func():
        torch = require("torch")
        from torch.func import jvp, vmap

        x, seeds = map(torch.from_numpy, _batched_inputs(k, n)[:2])
        f = functools.partial(sum_sin_exp, xp=torch)
        jvps = vmap(lambda t: jvp(f, (x,), (t,)), out_dims=(None, 0))
        return check(warmed_up(functools.partial(jvps, seeds)), "torch.func.vmap(torch.func.jvp)",
                     read=lambda r: r[1].numpy())

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        if not hasattr(ag, "make_jvp"):
            raise PeerUnavailable("this autograd has no forward mode (make_jvp)")
        x, seeds, _, _ = _batched_inputs(k, n)
        jvp_at = ag.make_jvp(functools.partial(sum_sin_exp, xp=anp))(x)
        return check(lambda: [jvp_at(t)[1] for t in seeds], "autograd.make_jvp, a loop",
                     read=lambda r: r)

    return Problem(
        name=f"jvp_batched_{k}",
        title=f"jvp, {k} seeds at once, sum(sin(x)exp(-x^2)+log1p(x^2)), n={_fmt_size(n)}",
        target=None,
        factories={"primal": primal, "dualad": dual, "hand-dual": hand_dual,
                   "jax.jit": jax_vmap(jit=True), "jax": jax_vmap(jit=False),
                   "torch": torch_func, "autograd": autograd},
        group="jvp_batched",
        size=k,
    )


# -- per-call cost of a small Jacobian ---------------------------------------------


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
    """Per-call cost of the gradient of :func:`textbook` at (2, 5), Python floats in
    (target ≤ 20× the primal).

    Peers: ``num_dual.gradient``, ``jax.grad`` under ``jax.jit`` and eager (``jax``),
    ``autograd.grad``, torch's tape (``torch``) and ``torch.func.jacfwd``
    (``torch.jacfwd``; both make their two tensors in the call), and
    ``numdifftools.Gradient`` (finite differences, checked to :data:`APPROX_RTOL`).
    """
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

    def jax_grad(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            grad = jax.grad(functools.partial(textbook, xp=jnp), argnums=(0, 1))
            grad = jax.jit(grad) if jit else grad
            return checked(lambda: jax.block_until_ready(grad(x1, x2)), TEXTBOOK_GRADIENT,
                           what="jax.jit(jax.grad)" if jit else "jax.grad")

        return factory

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

        return checked(warmed_up(grad), TEXTBOOK_GRADIENT, what="torch.autograd.grad")

    def torch_jacfwd():
        torch = require("torch")
        from torch.func import jacfwd

        jac = jacfwd(functools.partial(textbook, xp=torch), argnums=(0, 1))

        def call():
            return jac(torch.tensor(x1, dtype=torch.float64),
                       torch.tensor(x2, dtype=torch.float64))

        return checked(warmed_up(call), TEXTBOOK_GRADIENT, what="torch.func.jacfwd")

    def numdifftools():
        ndt = require("numdifftools")
        grad = ndt.Gradient(lambda x: textbook(x[0], x[1]))
        return checked(functools.partial(grad, [x1, x2]), TEXTBOOK_GRADIENT,
                       what="numdifftools.Gradient", rtol=APPROX_RTOL)

    return Problem(
        name="jacfwd_textbook",
        title="jacfwd ln(x1)+x1*x2-sin(x2), per call",
        target=20.0,
        factories={"primal": primal, "dualad": dual, "num-dual": num_dual,
                   "jax.jit": jax_grad(jit=True), "jax": jax_grad(jit=False),
                   "autograd": autograd, "torch": torch_tape, "torch.jacfwd": torch_jacfwd,
                   "numdifftools": numdifftools},
        reference={"num-dual": 2.4, "jax.jit": 13.0, "torch": 97.0, "autograd": 167.0},
    )
