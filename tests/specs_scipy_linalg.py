"""Spec rows: scipy.linalg beyond specs_scipy.py (its versions of NumPy's
decompositions, qr_multiply, lu, polar, expm_frechet, eigh_tridiagonal, the special
matrices).

Rows as in ``specs.py`` (which adds them to ``SPECS``). Every ``fun`` calls
``scipy.linalg`` as users do; ``jax=`` is the ``jax.scipy.linalg`` call, or the JAX
functions that compute the same thing where JAX's reads another part of ``a``
(JAX's ``eigh`` and ``solve(assume_a='sym')`` use the whole matrix, SciPy one
triangle: the JAX rows pass the triangle mirrored), lacks the keyword
(``subset_by_index``, ``transposed``, ``assume_a`` of ``inv``) or has no derivative
(``qr_multiply``: geqrf has no JVP in JAX; ``eigh_tridiagonal``: JAX's derivative is
that of its bisection iterations, not of the eigenvalues, so the rows use
``eigvalsh`` of the dense matrix). JAX's ``solve(assume_a='pos')`` symmetrizes the
tangent, SciPy reads one triangle: the row mirrors that triangle. No ``jax=``: the generalized ``eigh(a, b)`` and ``qr(pivoting=True)`` (JAX has
no derivative of either). Eigenvector rows take the signs out (``signed_vectors``);
QR rows keep away from LAPACK's sign flips (``householder_kink``).
"""

from __future__ import annotations

import numpy as np
from specs import (
    GAP,
    MATRIX,
    LazyModule,
    Spec,
    close_eigenvalues,
    jnp,
    matrices,
    signed_vectors,
    ties,
)
from specs_decompositions import close_singular, jax_signed, svd_signs
from specs_scipy import pivoting, small_matrices, spd

try:
    import scipy.linalg as sl
except ImportError:  # scipy is optional
    sl = None

jsl = LazyModule("jax.scipy.linalg")

TALL, WIDE = (((4, 3),),), (((3, 4),),)
SOLVE = (((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)))


def _mirror(a, lower: bool, xp=np):
    """The symmetric matrix SciPy reads from one triangle of ``a``."""
    if lower:
        return xp.tril(a) + xp.swapaxes(xp.tril(a, -1), -1, -2)
    return xp.triu(a) + xp.swapaxes(xp.triu(a, 1), -1, -2)


def symmetric(rng: np.random.Generator, shape) -> np.ndarray:
    a = rng.uniform(-2.0, 2.0, shape)
    return a + np.swapaxes(a, -1, -2)


def _close(a) -> bool:
    return close_eigenvalues(a) or close_eigenvalues(a, "U")


def _generalized_close(a, b) -> bool:
    return ties(sl.eigh(_mirror(a, True), _mirror(b, True), eigvals_only=True), gap=0.05)


def _pivots_close(a) -> bool:
    """Column norms (geqp3's first pivot choice) within 0.05: the order may change."""
    return ties(np.linalg.norm(a, axis=0), gap=0.05)


def householder_kink(a) -> bool:
    """A Householder pivot of LAPACK's QR near 0 (or R near singular): where it crosses 0
    a row of R and a column of Q change sign (LAPACK's convention, NumPy's too)."""
    if close_singular(a) or close_singular(a[..., :3, :3]):
        return True
    (qr, tau), _ = sl.qr(a, mode="raw")
    b = a.copy()
    for k in range(min(a.shape[0] - 1, a.shape[1])):
        if abs(b[k, k]) < 10 * GAP:
            return True
        v = np.concatenate([np.zeros(k), [1.0], qr[k + 1:, k]])
        b = b - tau[k] * np.outer(v, v @ b)
    return False


def _tridiagonal_close(d, e) -> bool:
    return ties(sl.eigh_tridiagonal(d, e, eigvals_only=True), gap=0.05)


def _jax_tridiagonal(d, e):
    return jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(e, -1)


def _jax_qr_multiply(a, c, mode="right"):
    """JAX's qr_multiply has no derivative (geqrf has no JVP): its economic Q times c."""
    q, r = jsl.qr(a, mode="economic")
    return (q @ c if mode == "left" else c @ q), r


ROWS: list[Spec] = []

if sl is not None:
    ROWS += [
        # -- det, inv, solve -------------------------------------------------------
        Spec("scipy.linalg.det", sl.det, MATRIX, matrices, jax=jsl.det),
        Spec("scipy.linalg.inv", sl.inv, MATRIX, matrices, jax=jsl.inv),
        Spec("scipy.linalg.inv",
             lambda a: (sl.inv(a, assume_a="pos"), sl.inv(a, assume_a="sym", lower=True),
                        sl.inv(a, assume_a="upper triangular")),
             (((3, 3),),), spd, variant="assume_a",
             jax=lambda a: (jnp.linalg.inv(_mirror(a, False, jnp)),
                            jnp.linalg.inv(_mirror(a, True, jnp)), jnp.linalg.inv(jnp.triu(a)))),
        Spec("scipy.linalg.solve", sl.solve, SOLVE, (matrices, (-1.0, 1.0)), jax=jsl.solve),
        Spec("scipy.linalg.solve",
             lambda a, b: (sl.solve(a, b, assume_a="pos"), sl.solve(a, b, assume_a="pos", lower=True),
                           sl.solve(a, b, assume_a="sym"), sl.solve(a, b, transposed=True),
                           sl.solve(a, b, assume_a="diagonal")),
             SOLVE[:2], (spd, (-1.0, 1.0)), variant="assume_a, transposed",
             jax=lambda a, b: (jnp.linalg.solve(_mirror(a, False, jnp), b),
                               jnp.linalg.solve(_mirror(a, True, jnp), b),
                               jnp.linalg.solve(_mirror(a, False, jnp), b),
                               jnp.linalg.solve(a.T, b),
                               jnp.linalg.solve(jnp.diag(jnp.diag(a)), b))),
        # -- eigh, cholesky ------------------------------------------------------
        Spec("scipy.linalg.eigh",
             lambda a: (sl.eigh(a)[0], signed_vectors(sl.eigh(a)[1]),
                        sl.eigh(a, lower=False, eigvals_only=True),
                        signed_vectors(sl.eigh(a, lower=False)[1])),
             MATRIX, symmetric, avoid=_close, rtol=1e-5,
             jax=lambda a: (jsl.eigh(_mirror(a, True, jnp))[0],
                            jax_signed(jsl.eigh(_mirror(a, True, jnp))[1]),
                            jsl.eigh(_mirror(a, False, jnp), eigvals_only=True),
                            jax_signed(jsl.eigh(_mirror(a, False, jnp))[1]))),
        Spec("scipy.linalg.eigh",
             lambda a: (sl.eigh(a, subset_by_index=(1, 2))[0],
                        signed_vectors(sl.eigh(a, subset_by_index=[0, 1])[1])),
             (((4, 4),),), symmetric, avoid=_close, rtol=1e-5, variant="subset_by_index",
             jax=lambda a: (jsl.eigh(_mirror(a, True, jnp))[0][1:3],
                            jax_signed(jsl.eigh(_mirror(a, True, jnp))[1][:, :2]))),
        Spec("scipy.linalg.eigh",
             lambda a, b: (sl.eigh(a, b)[0], signed_vectors(sl.eigh(a, b)[1]),
                           sl.eigh(a, b, lower=False, eigvals_only=True)),
             (((3, 3), (3, 3)),), (symmetric, spd),
             avoid=lambda a, b: _generalized_close(a, b) or _generalized_close(a.T, b.T),
             rtol=1e-5, variant="generalized"),
        Spec("scipy.linalg.cholesky", lambda a: (sl.cholesky(a), sl.cholesky(a, lower=True)),
             MATRIX, spd,
             jax=lambda a: (jsl.cholesky(_mirror(a, False, jnp)),
                            jsl.cholesky(_mirror(a, True, jnp), lower=True))),
        # -- qr, svd -----------------------------------------------------------
        Spec("scipy.linalg.qr", lambda a: (sl.qr(a), sl.qr(a, mode="economic"),
                                           sl.qr(a, mode="r")),
             TALL + MATRIX[:1] + WIDE, (-1.0, 1.0), avoid=householder_kink, rtol=1e-5,
             jax=lambda a: (jsl.qr(a), jsl.qr(a, mode="economic"), jsl.qr(a, mode="r"))),
        Spec("scipy.linalg.qr", lambda a: sl.qr(a, pivoting=True)[:2] + sl.qr(a, mode="r",
                                                                             pivoting=True)[:1],
             TALL + MATRIX[:1], (-1.0, 1.0),
             avoid=lambda a: _pivots_close(a) or householder_kink(
                 a[:, sl.qr(a, pivoting=True, mode="r")[1]]),
             rtol=1e-5, variant="pivoting"),
        Spec("scipy.linalg.qr_multiply",
             lambda a, c, d: (sl.qr_multiply(a, c, mode="left"), sl.qr_multiply(a, d),
                              sl.qr_multiply(a, c[:, 0], mode="left")[0]),
             (((4, 3), (3, 2), (2, 4)), ((3, 3), (3, 2), (2, 3))), (-1.0, 1.0),
             avoid=lambda a, c, d: householder_kink(a), rtol=1e-5,
             jax=lambda a, c, d: (_jax_qr_multiply(a, c, "left"), _jax_qr_multiply(a, d),
                                  _jax_qr_multiply(a, c[:, 0], "left")[0])),
        Spec("scipy.linalg.svd",
             lambda a: (sl.svd(a, compute_uv=False),
                        signed_vectors(sl.svd(a, full_matrices=False)[0]),
                        signed_vectors(np.swapaxes(sl.svd(a, full_matrices=False)[2], -1, -2)),
                        sl.svd(a, lapack_driver="gesvd")[1]),
             TALL + MATRIX + WIDE, (-1.0, 1.0), avoid=svd_signs, rtol=1e-5,
             jax=lambda a: (jsl.svd(a, compute_uv=False),
                            jax_signed(jsl.svd(a, full_matrices=False)[0]),
                            jax_signed(jnp.swapaxes(jsl.svd(a, full_matrices=False)[2], -1, -2)),
                            jsl.svd(a, full_matrices=False)[1])),
        # -- lu, polar, expm_frechet, eigh_tridiagonal ---------------------------
        Spec("scipy.linalg.lu",
             lambda a: sl.lu(a)[1:] + sl.lu(a, permute_l=True) + sl.lu(a, p_indices=True)[1:],
             (((3, 3),), ((4, 4),), ((2, 3, 3),)), pivoting,
             jax=lambda a: jsl.lu(a)[1:] + jsl.lu(a, permute_l=True) + jsl.lu(a)[1:]),
        Spec("scipy.linalg.polar", lambda a: sl.polar(a) + sl.polar(a, side="left"),
             (((3, 3),), ((4, 3),)), (-1.0, 1.0), avoid=close_singular, rtol=1e-5,
             jax=lambda a: jsl.polar(a, method="svd") + jsl.polar(a, side="left",
                                                                   method="svd")),
        Spec("scipy.linalg.expm_frechet",
             lambda a, e: sl.expm_frechet(a, e) + (sl.expm_frechet(a, e, compute_expm=False),),
             (((3, 3), (3, 3)),), small_matrices,
             jax=lambda a, e: jsl.expm_frechet(a, e) + (jsl.expm_frechet(a, e,
                                                                         compute_expm=False),)),
        Spec("scipy.linalg.eigh_tridiagonal",
             lambda d, e: (sl.eigh_tridiagonal(d, e, eigvals_only=True),
                           sl.eigh_tridiagonal(d, e, select="i", select_range=(1, 2),
                                               eigvals_only=True)),
             (((4,), (3,)),), ((-2.0, 2.0), (0.2, 1.0)), avoid=_tridiagonal_close,
             jax=lambda d, e: (jnp.linalg.eigvalsh(_jax_tridiagonal(d, e)),
                               jnp.linalg.eigvalsh(_jax_tridiagonal(d, e))[1:3])),
        Spec("scipy.linalg.eigh_tridiagonal",
             lambda d, e: signed_vectors(sl.eigh_tridiagonal(d, e)[1]),
             (((4,), (3,)),), ((-2.0, 2.0), (0.2, 1.0)), avoid=_tridiagonal_close, rtol=1e-5,
             variant="eigenvectors",
             jax=lambda d, e: jax_signed(jnp.linalg.eigh(_jax_tridiagonal(d, e))[1])),
        # -- special matrices --------------------------------------------------
        Spec("scipy.linalg.block_diag",
             lambda a, b, c: (sl.block_diag(a, b, c), sl.block_diag(b), sl.block_diag(a, 2.0)),
             (((2, 3), (3,), ()),), jax=lambda a, b, c: (
                 jsl.block_diag(a, b, c), jsl.block_diag(b), jsl.block_diag(a, 2.0))),
        Spec("scipy.linalg.circulant", sl.circulant, (((4,),), ((2, 3),)), jax=jsl.circulant),
        Spec("scipy.linalg.toeplitz", lambda c, r: (sl.toeplitz(c), sl.toeplitz(c, r)),
             (((3,), (4,)), ((2, 3), (2, 4))), jax=lambda c, r: (jsl.toeplitz(c),
                                                                jsl.toeplitz(c, r))),
        Spec("scipy.linalg.hankel", lambda c, r: (sl.hankel(c), sl.hankel(c, r)),
             (((3,), (4,)),), jax=lambda c, r: (jsl.hankel(c), jsl.hankel(c, r))),
        Spec("scipy.linalg.companion", sl.companion, (((4,),), ((2, 3),)),
             ((0.5, 2.0),), jax=jsl.companion),
        Spec("scipy.linalg.convolution_matrix",
             lambda a: (sl.convolution_matrix(a, 5), sl.convolution_matrix(a, 5, "same"),
                        sl.convolution_matrix(a, 2, mode="same"),
                        sl.convolution_matrix(a, 5, mode="valid")), (((3,),), ((2, 4),)),
             jax=lambda a: (jsl.convolution_matrix(a, 5), jsl.convolution_matrix(a, 5, "same"),
                            jsl.convolution_matrix(a, 2, mode="same"),
                            jsl.convolution_matrix(a, 5, mode="valid"))),
        Spec("scipy.linalg.fiedler", sl.fiedler, (((4,),), ((2, 3),)),
             avoid=lambda a: ties(a, axis=-1, gap=GAP), jax=jsl.fiedler),
        Spec("scipy.linalg.fiedler_companion", sl.fiedler_companion,
             (((6,),), ((5,),), ((2,),), ((2, 4),)), ((0.5, 2.0),), jax=jsl.fiedler_companion),
        Spec("scipy.linalg.leslie", sl.leslie, (((4,), (3,)), ((2, 3), (2,))),
             jax=jsl.leslie),
    ]
