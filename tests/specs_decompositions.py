"""Spec rows: matrix decompositions and the linear algebra built on them.

Rows as in ``specs.py`` (which adds them to ``SPECS``); give each row its
``jax=`` counterpart where JAX has the function.

Singular vectors and eigenvectors are compared with the sign of each one's first
entry taken out (``signed_vectors``): locally constant, so central differences see
the derivative of the vectors NumPy returned, and JAX's LAPACK may pick other signs.
NumPy's cholesky, eigh and svd/pinv(hermitian=True) read one triangle of the
matrix where JAX symmetrizes it: the JAX counterparts mirror that triangle.
"""

from __future__ import annotations

import numpy as np
from specs import (
    MATRIX,
    LazyModule,
    Spec,
    jnp,
    matrices,
    nonzero,
    signed_vectors,
    small,
    sum_ties,
    ties,
)

lax_linalg = LazyModule("jax.lax.linalg")
TALL, WIDE = (((4, 3),), ((2, 4, 3),)), (((3, 5),), ((2, 2, 4),))


# ---------------------------------------------------------------------------
# Domains and predicates
# ---------------------------------------------------------------------------


def spd(rng: np.random.Generator, shape) -> np.ndarray:
    """Symmetric positive definite matrices, well conditioned."""
    a = rng.uniform(-1.0, 1.0, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def real_spectrum(rng: np.random.Generator, shape) -> np.ndarray:
    """Nonsymmetric matrices V diag(w) V⁻¹ with real eigenvalues at least 1 apart."""
    n = shape[-1]
    v = rng.uniform(-1.0, 1.0, shape) + 2.0 * np.eye(n)
    w = np.arange(n) * 1.5 - 1.0 + rng.uniform(-0.2, 0.2, shape[:-1])
    return (v * w[..., None, :]) @ np.linalg.inv(v)


def close_singular(x, gap: float = 0.05) -> bool:
    """Singular values (of the last two axes) closer than ``gap``, or near 0."""
    s = np.linalg.svd(x, compute_uv=False)
    return ties(s, axis=-1, gap=gap) or bool(np.any(s < gap))


def svd_signs(x) -> bool:
    """Close singular values, or a singular vector whose first entry is near 0."""
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    return close_singular(x) or small(u[..., :1, :], vh[..., :, :1])


def lower(a, xp=np):
    """The symmetric matrix NumPy's cholesky/eigh read from ``a``: its lower triangle."""
    return xp.tril(a) + xp.swapaxes(xp.tril(a, -1), -1, -2)


def upper(a, xp=np):
    return xp.triu(a) + xp.swapaxes(xp.triu(a, 1), -1, -2)


def jax_signed(v):
    return v * jnp.sign(v[..., :1, :])


def _jax_eig(a):
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w.real, v.real


def _norm_ties(x) -> bool:
    return sum_ties(x, -1, axis=-1) or sum_ties(x, -2, axis=-1)


def _cond_ties(a) -> bool:
    return _norm_ties(a) or _norm_ties(np.linalg.inv(a))


# ---------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------

ROWS: list[Spec] = [
    # cholesky: of a matrix built symmetric (JAX agrees), and of a general matrix,
    # whose lower (upper=True: upper) triangle NumPy reads
    Spec("linalg.cholesky", lambda a: (np.linalg.cholesky(a @ a.mT + 3 * np.eye(3)),
                                       np.linalg.cholesky(a @ a.mT + 3 * np.eye(3), upper=True)),
         MATRIX, rtol=1e-5, variant="symmetric",
         jax=lambda a: (jnp.linalg.cholesky(a @ a.mT + 3 * jnp.eye(3)),
                        jnp.linalg.cholesky(a @ a.mT + 3 * jnp.eye(3), upper=True))),
    Spec("linalg.cholesky", lambda a: (np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True)),
         MATRIX, spd, rtol=1e-5, variant="triangle read",
         jax=lambda a: (jnp.linalg.cholesky(lower(a, jnp)),
                        jnp.linalg.cholesky(upper(a, jnp), upper=True))),
    # qr
    Spec("linalg.qr", lambda a: tuple(np.linalg.qr(a)), TALL + MATRIX + WIDE, (-1.0, 1.0),
         avoid=lambda a: close_singular(a[..., :3, :3], 0.05),
         rtol=1e-5, variant="reduced", jax=lambda a: tuple(jnp.linalg.qr(a))),
    Spec("linalg.qr", lambda a: tuple(np.linalg.qr(a, mode="complete")), TALL + WIDE,
         (-1.0, 1.0), avoid=lambda a: close_singular(a[..., :3, :3], 0.05), rtol=1e-5,
         variant="complete", jax=lambda a: tuple(jnp.linalg.qr(a, mode="complete"))),
    Spec("linalg.qr", lambda a: np.linalg.qr(a, mode="r"), TALL + WIDE, (-1.0, 1.0),
         avoid=lambda a: close_singular(a[..., :3, :3], 0.05), rtol=1e-5, variant="r",
         jax=lambda a: jnp.linalg.qr(a, mode="r")),
    # svd
    Spec("linalg.svd", lambda a: np.linalg.svd(a, compute_uv=False), TALL + MATRIX + WIDE,
         avoid=close_singular, rtol=1e-5, variant="compute_uv=False",
         jax=lambda a: jnp.linalg.svd(a, compute_uv=False)),
    Spec("linalg.svdvals", np.linalg.svdvals, TALL[:1] + WIDE[1:], avoid=close_singular,
         rtol=1e-5, jax=jnp.linalg.svdvals),
    Spec("linalg.svd", lambda a: (signed_vectors(np.linalg.svd(a, full_matrices=False).U),
                                  np.linalg.svd(a, full_matrices=False).S,
                                  signed_vectors(np.linalg.svd(a, full_matrices=False).Vh.mT)),
         TALL + MATRIX + WIDE, avoid=svd_signs, rtol=1e-5, variant="full_matrices=False",
         jax=lambda a: (jax_signed(jnp.linalg.svd(a, full_matrices=False)[0]),
                        jnp.linalg.svd(a, full_matrices=False)[1],
                        jax_signed(jnp.linalg.svd(a, full_matrices=False)[2].mT))),
    # full_matrices=True: square, where JAX differentiates it; the vectors of rectangular
    # matrices that have a derivative (tests/test_coverage_decompositions.py)
    Spec("linalg.svd", lambda a: (signed_vectors(np.linalg.svd(a)[0]), np.linalg.svd(a)[1],
                                  signed_vectors(np.linalg.svd(a)[2].mT)),
         MATRIX, avoid=svd_signs, rtol=1e-5, variant="full_matrices=True",
         jax=lambda a: (jax_signed(jnp.linalg.svd(a)[0]), jnp.linalg.svd(a)[1],
                        jax_signed(jnp.linalg.svd(a)[2].mT))),
    Spec("linalg.svd", lambda a: (np.linalg.svd(a)[1], signed_vectors(np.linalg.svd(a)[2].mT),
                                  signed_vectors(np.linalg.svd(a.mT)[0])),
         TALL, avoid=svd_signs, rtol=1e-5, variant="full_matrices=True, rectangular"),
    Spec("linalg.svd", lambda a: (np.linalg.svd(a, hermitian=True).S,
                                  np.linalg.svd(a, compute_uv=False, hermitian=True),
                                  signed_vectors(np.linalg.svd(a, hermitian=True).U),
                                  signed_vectors(np.linalg.svd(a, hermitian=True).Vh.mT)),
         MATRIX, avoid=lambda a: svd_signs(lower(a)), rtol=1e-5, variant="hermitian",
         jax=lambda a: (jnp.linalg.svd(lower(a, jnp), hermitian=True)[1],
                        jnp.linalg.svd(lower(a, jnp), compute_uv=False, hermitian=True),
                        jax_signed(jnp.linalg.svd(lower(a, jnp), hermitian=True)[0]),
                        jax_signed(jnp.linalg.svd(lower(a, jnp), hermitian=True)[2].mT))),
    # eig, eigvals: real spectra
    # (np.real: NumPy 2.5's values are complex, whatever the spectrum)
    Spec("linalg.eigvals", lambda a: np.real(np.linalg.eigvals(a)), MATRIX, real_spectrum,
         rtol=1e-5, jax=lambda a: _jax_eig(a)[0]),
    Spec("linalg.eig", lambda a: (np.real(np.linalg.eig(a).eigenvalues),
                                  signed_vectors(np.real(np.linalg.eig(a).eigenvectors))),
         MATRIX, real_spectrum, rtol=1e-5, avoid=lambda a: small(np.linalg.eig(a)[1][..., :1, :]),
         jax=lambda a: (_jax_eig(a)[0], jax_signed(_jax_eig(a)[1]))),
    # pinv
    Spec("linalg.pinv", np.linalg.pinv, TALL + MATRIX + WIDE, avoid=close_singular, rtol=1e-5,
         jax=jnp.linalg.pinv),
    Spec("linalg.pinv", lambda a: (np.linalg.pinv(a, rcond=1e-10), np.linalg.pinv(a, rtol=None),
                                   np.linalg.pinv(a, rtol=1e-12)),
         TALL[:1], avoid=close_singular, rtol=1e-5, variant="rcond, rtol",
         jax=lambda a: (jnp.linalg.pinv(a, rtol=1e-10), jnp.linalg.pinv(a),
                        jnp.linalg.pinv(a, rtol=1e-12))),
    Spec("linalg.pinv", lambda a: np.linalg.pinv(a, hermitian=True), MATRIX,
         avoid=lambda a: close_singular(lower(a)), rtol=1e-5, variant="hermitian",
         jax=lambda a: jnp.linalg.pinv(lower(a, jnp), hermitian=True)),
    # lstsq (one matrix, as NumPy's)
    Spec("linalg.lstsq", lambda a, b: (np.linalg.lstsq(a, b)[0], np.linalg.lstsq(a, b)[1],
                                       np.linalg.lstsq(a, b)[3]),
         (((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)), ((3, 3), (3, 2))),
         avoid=lambda a, b: close_singular(a), rtol=1e-5,
         jax=lambda a, b: (jnp.linalg.lstsq(a, b, numpy_resid=True)[0],
                           jnp.linalg.lstsq(a, b, numpy_resid=True)[1],
                           jnp.linalg.lstsq(a, b, numpy_resid=True)[3])),
    Spec("linalg.lstsq", lambda a, b: np.linalg.lstsq(a, b, rcond=1e-8)[0],
         (((4, 3), (4, 2)),), avoid=lambda a, b: close_singular(a), rtol=1e-5, variant="rcond",
         jax=lambda a, b: jnp.linalg.lstsq(a, b, rcond=1e-8)[0]),
    # products
    Spec("linalg.matrix_power", lambda a: tuple(np.linalg.matrix_power(a, n)
                                                for n in (0, 1, 2, 3, 5, 6, -1, -3)),
         MATRIX, lambda rng, shape: matrices(rng, shape) / 3, rtol=1e-5,
         jax=lambda a: tuple(jnp.linalg.matrix_power(a, n) for n in (0, 1, 2, 3, 5, 6, -1, -3))),
    Spec("linalg.multi_dot", lambda a, b, c: (np.linalg.multi_dot([a, b, c]),
                                              np.linalg.multi_dot([a[0], b, c, c.T, b.T]),
                                              np.linalg.multi_dot([b, c, c.T, c[:, 0]]),
                                              np.linalg.multi_dot([a[0], b[:, 0]])),
         (((2, 3), (3, 4), (4, 5)),),
         jax=lambda a, b, c: (jnp.linalg.multi_dot([a, b, c]),
                              jnp.linalg.multi_dot([a[0], b, c, c.T, b.T]),
                              jnp.linalg.multi_dot([b, c, c.T, c[:, 0]]),
                              jnp.linalg.multi_dot([a[0], b[:, 0]]))),
    # cond and the norms
    Spec("linalg.cond", lambda a: (np.linalg.cond(a), np.linalg.cond(a, 2), np.linalg.cond(a, -2)),
         TALL[:1] + MATRIX + WIDE[:1], avoid=close_singular, rtol=1e-5, variant="2",
         jax=lambda a: (jnp.linalg.cond(a), jnp.linalg.cond(a, 2), jnp.linalg.cond(a, -2))),
    Spec("linalg.cond", lambda a: tuple(np.linalg.cond(a, p)
                                        for p in ("fro", 1, -1, np.inf, -np.inf, "nuc")),
         MATRIX, matrices, avoid=lambda a: _cond_ties(a) or close_singular(a), rtol=1e-5,
         variant="p", jax=lambda a: tuple(jnp.linalg.cond(a, p) for p in
                                          ("fro", 1, -1, jnp.inf, -jnp.inf, "nuc"))),
    Spec("linalg.vector_norm",
         lambda x: (np.linalg.vector_norm(x), np.linalg.vector_norm(x, ord=1, axis=1),
                    np.linalg.vector_norm(x, ord=np.inf, axis=(0, 2), keepdims=True),
                    np.linalg.vector_norm(x, ord=3, axis=(2, 0)),
                    np.linalg.vector_norm(x, ord=-np.inf, axis=-1, keepdims=True),
                    np.linalg.vector_norm(x, keepdims=True)),
         (((2, 3, 4),),), nonzero(0.1, 2.0),
         avoid=lambda x: ties(np.abs(x)), variant="ord, axis, keepdims",
         jax=lambda x: (jnp.linalg.vector_norm(x), jnp.linalg.vector_norm(x, ord=1, axis=1),
                        jnp.linalg.vector_norm(x, ord=jnp.inf, axis=(0, 2), keepdims=True),
                        jnp.linalg.vector_norm(x, ord=3, axis=(2, 0)),
                        jnp.linalg.vector_norm(x, ord=-jnp.inf, axis=-1, keepdims=True),
                        jnp.linalg.vector_norm(x, keepdims=True))),
    Spec("linalg.matrix_norm",
         lambda x: (np.linalg.matrix_norm(x), np.linalg.matrix_norm(x, ord=1),
                    np.linalg.matrix_norm(x, ord=-np.inf, keepdims=True),
                    np.linalg.matrix_norm(x, ord=2), np.linalg.matrix_norm(x, ord="nuc")),
         (((3, 4),), ((2, 3, 4),)), avoid=lambda x: _norm_ties(x) or close_singular(x),
         rtol=1e-5, variant="ord, keepdims",
         jax=lambda x: (jnp.linalg.matrix_norm(x), jnp.linalg.matrix_norm(x, ord=1),
                        jnp.linalg.matrix_norm(x, ord=-jnp.inf, keepdims=True),
                        jnp.linalg.matrix_norm(x, ord=2), jnp.linalg.matrix_norm(x, ord="nuc"))),
]
