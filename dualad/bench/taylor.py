"""Taylor mode: the cost of :func:`dualad.jet` against its order K.

Two functions of x ∈ ℝ⁵⁰, a jet along one direction v to order K = 1, 2, 4, 8, 16:

- ``taylor_elementwise``: :func:`composite`, a chain of elementwise functions, a
  quotient and a sum; peer ``jax``: ``jax.jit`` of JAX's ``jet`` of the same function
  written with ``jax.numpy`` (compiled once per K before timing);
- ``taylor_solve``: :func:`with_solve`, a linear solve whose matrix depends on x
  (JAX's ``jet`` has no rule for a solve: no peer).

The goal (the time grows at most as K², not as 2^K as nested duals do) is read from
the sweep: the ratio to the primal is the time in units of the same primal. The first
two terms are checked against ∇f·v and vᵀ∇²f·v from :func:`dualad.jvp` and
:func:`dualad.hvp`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import dualad

from .core import Problem, checked, import_jax

#: The orders of the sweep.
TAYLOR_ORDERS = (1, 2, 4, 8, 16)
_N = 50


def composite(x, xp=np):
    """A chain of elementwise functions, a quotient and a sum."""
    return xp.sum(xp.tanh(xp.sin(x) * xp.exp(-x)) / (1.0 + x * x))


def _matrix() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.normal(size=(_N, _N)) + 10.0 * np.eye(_N)


def with_solve(x, A=None):
    """sum(solve(A + diag(sin x), x)): a solve whose matrix depends on x."""
    A = _matrix() if A is None else A
    return np.sum(np.linalg.solve(A + np.diag(np.sin(x)), x))


def _point() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.uniform(0.5, 1.5, _N), rng.normal(size=_N)


def _first_terms(f: Callable, x: np.ndarray, v: np.ndarray, order: int) -> list:
    """∇f·v and vᵀ∇²f·v, the first terms of the jet, by forward and forward-over-reverse."""
    first = float(dualad.jvp(f, (x,), (v,), replay=False)[1])
    second = float(v @ dualad.hvp(f, (x,), (v,), replay=False)[0])
    return [first, second][:order]


def jet_problem(kind: str, order: int) -> Problem:
    """The jet of :func:`composite` (``kind="elementwise"``) or :func:`with_solve`
    (``"solve"``) to ``order``."""
    x, v = _point()
    f = composite if kind == "elementwise" else functools.partial(with_solve, A=_matrix())
    series = ([v] + [np.zeros(_N)] * (order - 1),)

    def first_terms(result):
        return [float(t) for t in result[1][:2]]

    factories = {
        "primal": lambda: functools.partial(f, x),
        "dualad": lambda: checked(functools.partial(dualad.jet, f, (x,), series),
                                  _first_terms(f, x, v, order), read=first_terms,
                                  what="dualad.jet", rtol=1e-10)}
    if kind == "elementwise":
        def jax_jet():
            jax = import_jax()
            import jax.numpy as jnp
            from jax.experimental.jet import jet

            run = jax.jit(lambda x, s: jet(functools.partial(composite, xp=jnp), (x,), (s,)))
            s = [jnp.asarray(t) for t in series[0]]
            return checked(lambda: jax.block_until_ready(run(x, s)),
                           _first_terms(f, x, v, order), read=first_terms,
                           what="jax.jit(jet)", rtol=1e-10)

        factories["jax"] = jax_jet
    what = "tanh(sin(x)exp(-x))/(1+x^2)" if kind == "elementwise" else \
        "sum(solve(A + diag(sin x), x))"
    return Problem(name=f"taylor_{kind}_{order}", title=f"jet of {what}, n={_N}, K={order}",
                   target=None, factories=factories, group=f"taylor_{kind}", size=order)


TAYLOR_PROBLEMS = [jet_problem(kind, order) for kind in ("elementwise", "solve")
                   for order in TAYLOR_ORDERS]


# -- the Laplacian of an MLP ---------------------------------------------------------

#: Input dimension and widths of the MLP (the collapsed-Taylor paper's set-up, narrower).
LAPLACIAN_D, LAPLACIAN_WIDTH, LAPLACIAN_LAYERS = 50, 50, 5


def _mlp_weights() -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    sizes = [LAPLACIAN_D] + [LAPLACIAN_WIDTH] * (LAPLACIAN_LAYERS - 1) + [1]
    return [rng.normal(size=(m, n)) / np.sqrt(n) for n, m in zip(sizes, sizes[1:])]


def mlp(x, weights, xp=np):
    """A tanh MLP of :data:`LAPLACIAN_LAYERS` layers, scalar output."""
    h = x
    for W in weights[:-1]:
        h = xp.tanh(W @ h)
    return (weights[-1] @ h)[0]


def laplacian_case() -> tuple[Callable, np.ndarray, Callable[[], float]]:
    """:func:`mlp` with its weights, the point, and the reference Laplacian there (the
    trace of nested ``jacfwd``, uncompiled and not replayed), a function."""
    f = functools.partial(mlp, weights=_mlp_weights())
    x = np.random.default_rng(3).normal(size=LAPLACIAN_D)
    return f, x, lambda: np.trace(
        dualad.jacfwd(dualad.jacfwd(f, replay=False), replay=False)(x))


def laplacian_problem() -> Problem:
    """Δf of :func:`mlp` at one point: the collapsed forward Laplacian (dualad), beside
    the trace of dualad's Hessian, ``jax.jit`` of JAX's Hessian trace and ``jax.jit``
    of JAX's ``jet`` along the D unit directions (``vmap``)."""
    f, x, reference = laplacian_case()
    weights = f.keywords["weights"]

    def jax_factory(kind: str):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp
            from jax.experimental.jet import jet

            g = functools.partial(mlp, weights=[jnp.asarray(W) for W in weights], xp=jnp)
            if kind == "hessian":
                run = jax.jit(lambda z: jnp.trace(jax.hessian(g)(z)))
            else:
                def second(z, v):
                    return jet(g, (z,), ((v, jnp.zeros_like(v)),))[1][1]

                run = jax.jit(lambda z: jnp.sum(jax.vmap(second, (None, 0))(
                    z, jnp.eye(LAPLACIAN_D))))
            return checked(lambda: jax.block_until_ready(run(x)), reference(),
                           what=f"jax.jit({kind})", rtol=1e-9)

        return factory

    hessian = dualad.hessian(f)
    factories = {
        "primal": lambda: functools.partial(f, x),
        "dualad": lambda: checked(functools.partial(dualad.laplacian(f), x), reference(),
                                  what="dualad.laplacian", rtol=1e-9),
        "hessian": lambda: checked(lambda: np.trace(hessian(x)), reference(),
                                   what="trace(dualad.hessian)", rtol=1e-9),
        "jax-hessian": jax_factory("hessian"), "jax-jet": jax_factory("jet")}
    return Problem(name="laplacian_mlp", title=f"Laplacian of a {LAPLACIAN_LAYERS}-layer tanh "
                   f"MLP, D={LAPLACIAN_D}", target=None, factories=factories,
                   versus="hessian", versus_target=0.55, beat=("jax-hessian",),
                   group="laplacian")


# -- the sparse Laplacian of a sum over particles --------------------------------------

#: Particles, features per particle, width and layers of the per-particle MLP (folx's
#: set-up: a network applied to each particle, the outputs mixed by a sum).
PARTICLES, PARTICLE_FEATURES, PARTICLE_WIDTH, PARTICLE_LAYERS = 20, 4, 32, 10


def _particle_weights() -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    sizes = [PARTICLE_FEATURES] + [PARTICLE_WIDTH] * (PARTICLE_LAYERS - 1) + [1]
    return [rng.normal(size=(m, n)) / np.sqrt(n) for n, m in zip(sizes, sizes[1:])]


def particle_mlp(x, weights, xp=np):
    """Σ over the particles (the rows of x) of one tanh MLP of :data:`PARTICLE_LAYERS`
    layers of a particle's features: a block-diagonal Hessian."""
    h = x
    for W in weights[:-1]:
        h = xp.tanh(h @ W.T)
    return xp.sum(h @ weights[-1].T)


def laplacian_sparse_problem() -> Problem:
    """Δf of :func:`particle_mlp` at one point: the sparse Laplacian (dualad, one
    direction per feature of a particle), beside the exact one (n directions) and
    ``jax.jit`` of JAX's Hessian trace."""
    weights = _particle_weights()
    x = np.random.default_rng(5).normal(size=(PARTICLES, PARTICLE_FEATURES))
    f = functools.partial(particle_mlp, weights=weights)
    n = x.size

    def reference():
        H = dualad.jacfwd(dualad.jacfwd(f, replay=False), replay=False)(x)
        return np.trace(np.reshape(H, (n, n)))

    def jax_hessian():
        jax = import_jax()
        import jax.numpy as jnp

        g = functools.partial(particle_mlp, weights=[jnp.asarray(W) for W in weights], xp=jnp)
        run = jax.jit(lambda z: jnp.trace(jnp.reshape(jax.hessian(g)(z), (n, n))))
        return checked(lambda: jax.block_until_ready(run(x)), reference(),
                       what="jax.jit(hessian)", rtol=1e-9)

    factories = {
        "primal": lambda: functools.partial(f, x),
        "dualad": lambda: checked(functools.partial(dualad.laplacian(f, method="sparse"), x),
                                  reference(), what="dualad.laplacian(method='sparse')",
                                  rtol=1e-9),
        "dense": lambda: checked(functools.partial(dualad.laplacian(f), x), reference(),
                                 what="dualad.laplacian", rtol=1e-9),
        "jax-hessian": jax_hessian}
    return Problem(name="laplacian_sparse", title=f"Laplacian of a {PARTICLE_LAYERS}-layer "
                   f"tanh MLP per particle, {PARTICLES}x{PARTICLE_FEATURES}",
                   target=None, factories=factories, versus="dense", versus_target=0.05,
                   group="laplacian_sparse")
