"""Spec rows: polynomials (np.poly*, roots, vander), unwrap, and numpy.linalg's
array-API names and tensor solves (dualad/rules/polynomials.py, calculus.py,
linalg_namespace.py).

Rows as in ``specs.py`` (which adds them to ``SPECS``); each has its ``jax=``
counterpart. polyval and polyfit keep their rows in ``specs_arrays.py``.
"""

from __future__ import annotations

import numpy as np
from specs import GAP, Spec, close_eigenvalues, jnp

# ---------------------------------------------------------------------------
# Domains
# ---------------------------------------------------------------------------


def leading(lo: float = 0.5, hi: float = 2.0):
    """Coefficients uniform in [-2, 2] whose first one has |c| in [lo, hi]."""
    def draw(rng, shape):
        c = rng.uniform(-2.0, 2.0, shape)
        c[..., 0] = rng.uniform(lo, hi) * rng.choice([-1.0, 1.0])
        return c
    return draw


def real_roots(rng, shape):
    """Coefficients of a polynomial with real roots at least 0.5 apart."""
    r = np.cumsum(rng.uniform(0.5, 1.5, shape[0] - 1)) - 0.5 * shape[0]
    return np.poly(r) * rng.uniform(0.5, 2.0) * rng.choice([-1.0, 1.0])


def jumpy(jump: float):
    """Phases along the last axis: steps uniform in [-2, 2], some of them moved
    by ±jump (the wraps unwrap removes)."""
    def draw(rng, shape):
        steps = rng.uniform(-2.0, 2.0, shape) + jump * rng.integers(-1, 2, shape)
        return np.cumsum(steps, axis=-1)
    return draw


def tensor_matrices(rng, shape):
    """Tensors whose square reshape (products of leading and trailing axes) is a
    well-conditioned matrix."""
    n = int(np.sqrt(np.prod(shape)))
    return (rng.uniform(-1.0, 1.0, (n, n)) + 2.0 * np.sqrt(n) * np.eye(n)).reshape(shape)


def small_remainder(u, v) -> bool:
    """polydiv's remainder with a leading coefficient near 0 (NumPy trims it); by a
    constant, the remainder is 0 by construction."""
    return len(v) > 1 and bool(abs(np.polydiv(u, v)[1][0]) < 10 * GAP)


def _polydiv(u, v, polydiv=np.polydiv):
    """polydiv's quotient and the last len(v) - 1 coefficients of its remainder: NumPy
    trims the leading ones (zero by construction) in float64 but keeps them in float32,
    where they exceed its absolute tolerance 1e-8 (test_coverage_polynomials.py checks
    the trimming)."""
    q, r = polydiv(u, v)
    return q, r[-max(len(v) - 1, 1):]


def _jax_polydiv(u, v):
    return _polydiv(u, v, jnp.polydiv)


def _jax_roots(p):
    """jnp.roots(p, strip_zeros=False) with the eigenvector derivatives JAX's second
    order needs enabled: the eigenvalues of the companion matrix jnp.roots builds."""
    import jax

    n = len(p)
    a = jnp.diag(jnp.ones(n - 2, p.dtype), -1).at[0].set(-p[1:] / p[0])
    w = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)[0]
    return jnp.sort(jnp.real(w))


def _symmetric(a):
    return a + a.T


# ---------------------------------------------------------------------------
# Polynomials (dualad/rules/polynomials.py)
# ---------------------------------------------------------------------------

PAIRS = (((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((1,), (3,)))

POLYNOMIALS = [
    Spec("polyadd", np.polyadd, PAIRS, jax=jnp.polyadd),
    Spec("polyadd", lambda a: np.polyadd(a, [1.0, 2.0]), (((4,),), ((1,),)),
         variant="list", jax=lambda a: jnp.polyadd(a, jnp.array([1.0, 2.0], a.dtype))),
    Spec("polysub", np.polysub, PAIRS, jax=jnp.polysub),
    Spec("polymul", np.polymul, PAIRS, jax=jnp.polymul),
    Spec("polydiv", _polydiv, (((6,), (3,)), ((3,), (5,)), ((4,), (1,)), ((4,), (4,))),
         domain=(leading(), leading()), avoid=small_remainder, jax=_jax_polydiv),
    Spec("polyder", lambda p: (np.polyder(p), np.polyder(p, 2), np.polyder(p, m=0)),
         (((5,),), ((3,),)),
         jax=lambda p: (jnp.polyder(p), jnp.polyder(p, 2), jnp.polyder(p, m=0))),
    Spec("polyint", lambda p: (np.polyint(p), np.polyint(p, 3)), (((4,),), ((1,),)),
         jax=lambda p: (jnp.polyint(p), jnp.polyint(p, 3))),
    Spec("polyint", lambda p, k: np.polyint(p, 2, k), (((4,), (2,)), ((3,), (1,))),
         variant="k", jax=lambda p, k: jnp.polyint(p, 2, k)),
    Spec("polyint", lambda p, k: np.polyint(p, k=k), (((3,), ()),), variant="scalar k",
         jax=lambda p, k: jnp.polyint(p, k=k)),
    Spec("poly", np.poly, (((3,),), ((1,),), ((5,),)), jax=jnp.poly),
    Spec("poly", lambda a: np.poly(_symmetric(a)), (((3, 3),), ((1, 1),)), variant="matrix",
         avoid=lambda a: close_eigenvalues(_symmetric(a)),
         jax=lambda a: jnp.poly(jnp.linalg.eigvalsh(_symmetric(a)))),
    Spec("roots", lambda p: np.sort(np.roots(p)), (((4,),), ((2,),), ((6,),)),
         domain=real_roots, rtol=1e-5, jax=_jax_roots),
    Spec("vander", lambda x: (np.vander(x), np.vander(x, 3, increasing=True),
                              np.vander(x, N=1)),
         (((4,),), ((1,),)),
         jax=lambda x: (jnp.vander(x), jnp.vander(x, 3, increasing=True), jnp.vander(x, N=1))),
]

# ---------------------------------------------------------------------------
# unwrap (dualad/rules/calculus.py); the steps keep clear of ±period/2 and of the
# discontinuity threshold, where the corrections jump
# ---------------------------------------------------------------------------

UNWRAP = [
    Spec("unwrap", np.unwrap, (((7,),), ((3, 5),)), domain=jumpy(2 * np.pi), jax=jnp.unwrap),
    Spec("unwrap", lambda p: np.unwrap(p, discont=4.0, axis=0, period=5.0), (((6, 2),),),
         variant="discont, axis, period",
         # steps within 0.8 of 0 or ±5: clear of |step| = discont and of ±period/2
         domain=lambda rng, shape: np.cumsum(rng.uniform(-0.8, 0.8, shape)
                                             + 5.0 * rng.integers(-1, 2, shape), axis=0),
         jax=lambda p: jnp.unwrap(p, discont=4.0, axis=0, period=5.0)),
    Spec("unwrap", lambda p, period: np.unwrap(p, period=period), (((7,), ()),),
         variant="Dual period", domain=(jumpy(7.0), (6.5, 7.5)),
         jax=lambda p, period: jnp.unwrap(p, period=period)),
]

# ---------------------------------------------------------------------------
# numpy.linalg's other names (dualad/rules/linalg_namespace.py)
# ---------------------------------------------------------------------------

LINALG = [
    Spec("linalg.cross", np.linalg.cross, (((4, 3), (4, 3)), ((3,), (2, 3))),
         jax=jnp.linalg.cross),
    Spec("linalg.cross", lambda a, b: np.linalg.cross(a, b, axis=0), (((3, 2), (3, 2)),),
         variant="axis", jax=lambda a, b: jnp.linalg.cross(a, b, axis=0)),
    Spec("linalg.diagonal", lambda x: (np.linalg.diagonal(x), np.linalg.diagonal(x, offset=1)),
         (((2, 3, 4),), ((3, 3),)),
         jax=lambda x: (jnp.linalg.diagonal(x), jnp.linalg.diagonal(x, offset=1))),
    Spec("linalg.trace", lambda x: (np.linalg.trace(x), np.linalg.trace(x, offset=-1)),
         (((2, 3, 4),), ((3, 3),)),
         jax=lambda x: (jnp.linalg.trace(x), jnp.linalg.trace(x, offset=-1))),
    Spec("linalg.matrix_transpose", np.linalg.matrix_transpose, (((2, 3, 4),), ((3, 2),)),
         jax=jnp.linalg.matrix_transpose),
    Spec("matrix_transpose", np.matrix_transpose, (((2, 3, 4),), ((3, 2),)),
         jax=jnp.matrix_transpose),
    Spec("linalg.outer", np.linalg.outer, (((3,), (4,)), ((1,), (2,))), jax=jnp.linalg.outer),
    Spec("linalg.tensordot", np.linalg.tensordot, (((2, 3, 4), (3, 4, 2)),),
         jax=jnp.linalg.tensordot),
    Spec("linalg.tensordot", lambda a, b: np.linalg.tensordot(a, b, axes=([0], [1])),
         (((3, 2), (4, 3)),), variant="axes pairs",
         jax=lambda a, b: jnp.linalg.tensordot(a, b, axes=([0], [1]))),
    Spec("linalg.tensorinv", np.linalg.tensorinv, (((2, 3, 6),), ((2, 2, 4),)),
         domain=tensor_matrices, jax=jnp.linalg.tensorinv),
    Spec("linalg.tensorinv", lambda a: np.linalg.tensorinv(a, ind=1), (((6, 2, 3),),),
         variant="ind=1", domain=tensor_matrices,
         jax=lambda a: jnp.linalg.tensorinv(a, ind=1)),
    Spec("linalg.tensorsolve", np.linalg.tensorsolve, (((2, 3, 6), (2, 3)), ((4, 4), (4,))),
         domain=(tensor_matrices, (-2.0, 2.0)), jax=jnp.linalg.tensorsolve),
    Spec("linalg.tensorsolve", lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)),
         (((6, 2, 3), (2, 3)),), variant="axes", domain=(tensor_matrices, (-2.0, 2.0)),
         jax=lambda a, b: jnp.linalg.tensorsolve(a, b, axes=(0,))),
]

ROWS: list[Spec] = POLYNOMIALS + UNWRAP + LINALG
