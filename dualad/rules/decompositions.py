"""Matrix decompositions and what is built on them: cholesky, qr, svd, eig, lstsq, pinv,
matrix_power, multi_dot, cond, vector_norm, matrix_norm.

Each output of a decomposition is a primitive of its own whose kernel is NumPy's
call itself, so values (and the signs of singular vectors and eigenvectors) are
NumPy's exactly; a JVP rule asks the sibling primitives for the other factors.
The rules are the standard matrix-calculus ones, written as JAX writes them
(``jax/_src/lax/linalg.py``), with table primitives only, so hyper-duals, reverse
mode and ``dualad_gpu`` use them as they are. Triangular solves are ``solve``
on the triangular factor. Every function accepts stacks of matrices
``(..., m, n)`` where NumPy does (``lstsq`` does not: NumPy's takes one matrix).

Degenerate spectra, as in JAX: the tangents of singular vectors (eigenvectors)
carry 1/(s_i² - s_j²) (1/(w_j - w_i)), infinite for repeated values (inf/nan
tangents) and large near them. Values stay NumPy's, and what does not depend on
the choice of vectors keeps an exact derivative: singular values and
eigenvalues (their JVP has no gap term), pinv and lstsq (Golub-Pereyra, no SVD
derivative), cond, norms; projections onto a well-separated group of vectors
lose only the digits the gap inside the group takes (1e-6 apart: about 1e-10).

Under ``dualad_gpu`` nothing can be raised from a traced value: eig/eigvals of a
complex spectrum give nan, and lstsq's residuals are those of a full-rank A.
"""

from __future__ import annotations

import operator

import numpy as np

from ..dual import primal_value
from ..primitive import Primitive, implements
from .elementwise import absolute, multiply, sign, where
from .linalg import _dot, eigh_vectors, eigvalsh, inv, matmul, solve, solve_seeds
from .reductions import _sum
from .shape import (_swapaxes, _take_along_axis, argsort, concatenate, getitem, reshape, shape_of)

# ---------------------------------------------------------------------------
# Helpers written with table primitives (they act on tangents too: a tangent has
# a leading seed axis, and every helper works on the last two axes)
# ---------------------------------------------------------------------------


def _mT(x):
    return _swapaxes(x, -1, -2)


def _tril(x, k: int = 0):
    rows, cols = shape_of(x)[-2:]
    return where(np.tri(rows, cols, k, dtype=bool), x, 0.0)


def _triu(x, k: int = 0):
    rows, cols = shape_of(x)[-2:]
    return where(~np.tri(rows, cols, k - 1, dtype=bool), x, 0.0)


def _mirror(x, lower: bool = True):
    """The symmetric matrix whose lower (upper) triangle is that of ``x``: what
    LAPACK reads for cholesky, eigh, svd(hermitian=True) and pinv(hermitian=True)."""
    if lower:
        return _tril(x) + _mT(_tril(x, -1))
    return _triu(x) + _mT(_triu(x, 1))


def _diagonal(x):
    i = np.arange(min(shape_of(x)[-2:]))
    return getitem(x, index=(Ellipsis, i, i))


def _rows(x):
    """A vector stack (..., n) as row vectors (..., 1, n), to scale columns."""
    return getitem(x, index=(Ellipsis, None, slice(None)))


def _cols(x):
    return getitem(x, index=(Ellipsis, slice(None), None))


def _inverse_gaps(d):
    """F_ij = 1 / d_ij off the diagonal, 0 on it (inf where two values coincide)."""
    off = ~np.eye(shape_of(d)[-1], dtype=bool)
    return where(off, 1.0 / where(off, d, 1.0), 0.0)


def _right_solve(t, r):
    """t R⁻¹ for every seed of ``t`` (a solve against Rᵀ)."""
    return _mT(solve_seeds(_mT(r), _mT(t), vector=False))


def _zeros_like_tangent(t, shape):
    return np.zeros((shape_of(t)[0],) + tuple(shape), dtype=t.dtype)


# ---------------------------------------------------------------------------
# Cholesky: dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ the lower triangle with the diagonal halved
# (Murray 2016). NumPy reads the lower triangle of A (upper=True: the upper one),
# so the rule differentiates that triangle mirrored; JAX symmetrizes (dA + dAᵀ)/2
# instead: both agree for symmetric perturbations (A built symmetric).
# ---------------------------------------------------------------------------


def _cholesky_jvp(primals, tangents, ans, upper=False):
    lower = _mT(ans) if upper else ans
    sym = _mirror(tangents[0], lower=not upper)
    x = solve_seeds(lower, _mT(solve_seeds(lower, sym, vector=False)), vector=False)
    n = shape_of(ans)[-1]
    phi = _tril(x) - 0.5 * where(np.eye(n, dtype=bool), x, 0.0)
    dl = matmul(lower, phi)
    return _mT(dl) if upper else dl


def _cholesky_jax(a, upper=False):
    import jax.numpy as jnp
    sym = jnp.triu(a) + jnp.swapaxes(jnp.triu(a, 1), -1, -2) if upper else \
        jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)
    return jnp.linalg.cholesky(sym, upper=upper, symmetrize_input=False)


cholesky = Primitive("cholesky", lambda a, upper=False: np.linalg.cholesky(a, upper=upper),
                     jvp=_cholesky_jvp)
cholesky.kernels["jax"] = _cholesky_jax


@implements(np.linalg.cholesky)
def _cholesky(a, /, *, upper=False):
    return cholesky(a, upper=True) if upper else cholesky(a)


# ---------------------------------------------------------------------------
# QR (Townsend's rule, and JAX's extensions to wide and complete factors)
# ---------------------------------------------------------------------------


def _thin_qr_jvp(q, r, t):
    """dQ, dR of A = QR for m ≥ n: with X = Qᵀ dA R⁻¹ and Ω = tril(X,-1) - tril(X,-1)ᵀ,
    dQ = Q(Ω - X) + dA R⁻¹ and dR = (X - Ω) R."""
    t_rinv = _right_solve(t, r)
    x = matmul(_mT(q), t_rinv)
    low = _tril(x, -1)
    omega = low - _mT(low)
    return matmul(q, omega - x) + t_rinv, matmul(x - omega, r)


def _qr_tangents(a, t, mode):
    """dQ and dR of np.linalg.qr(a, mode) ("r" is differentiated as "reduced")."""
    m, n = shape_of(a)[-2:]
    mode = "reduced" if mode == "r" else mode
    q, r = qr_q(a, mode=mode), qr_r(a, mode=mode)
    if m < n:  # A = Q [R1 R2]: the square rule for A1 = Q R1, then R2 = Qᵀ A2
        dq, dr1 = _thin_qr_jvp(q, getitem(r, index=(Ellipsis, slice(None, m))),
                               getitem(t, index=(Ellipsis, slice(None, m))))
        a2 = getitem(a, index=(Ellipsis, slice(m, None)))
        dr2 = matmul(_mT(dq), a2) + matmul(_mT(q), getitem(t, index=(Ellipsis, slice(m, None))))
        return dq, concatenate(dr1, dr2, axis=len(shape_of(dr1)) - 1)
    if mode == "reduced" or m == n:
        return _thin_qr_jvp(q, r, t)
    # complete, m > n (arXiv 2409.13374): the last m - n columns of Q follow
    # LAPACK's Householder construction, Z = Q_pn (Q_nn - I)⁻¹
    q_mn, q_mp = getitem(q, index=(Ellipsis, slice(None, n))), getitem(
        q, index=(Ellipsis, slice(n, None)))
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, getitem(r, index=(Ellipsis, slice(None, n), slice(None))),
                                t)
    q_nn = getitem(q_mn, index=(Ellipsis, slice(None, n), slice(None)))
    q_pn = getitem(q_mn, index=(Ellipsis, slice(n, None), slice(None)))
    z_t = solve(_mT(q_nn - np.eye(n, dtype=q.dtype)), _mT(q_pn))  # Zᵀ
    dq_nn = getitem(dq_mn, index=(Ellipsis, slice(None, n), slice(None)))
    dq_pn = getitem(dq_mn, index=(Ellipsis, slice(n, None), slice(None)))
    dq_mp = matmul(dq_mn, z_t) - matmul(q_mn + matmul(q_mp, _mT(z_t)),
                                        _mT(dq_pn - matmul(_mT(z_t), dq_nn)))
    axis = len(shape_of(dq_mn)) - 1
    dq = concatenate(dq_mn, dq_mp, axis=axis)
    dr = concatenate(dr_nn, _zeros_like_tangent(t, tuple(shape_of(r)[:-2]) + (m - n, n)),
                     axis=axis - 1)
    return dq, dr


def _qr_kernel(part):
    def kernel(a, mode="reduced"):
        return np.linalg.qr(a, mode) if mode == "r" else np.linalg.qr(a, mode)[part]
    return kernel


def _qr_jax(part):
    def kernel(a, mode="reduced"):
        import jax.numpy as jnp
        return jnp.linalg.qr(a, mode) if mode == "r" else jnp.linalg.qr(a, mode)[part]
    return kernel


qr_q = Primitive("qr_q", _qr_kernel(0), jvp=lambda primals, tangents, ans, mode="reduced":
                 _qr_tangents(primals[0], tangents[0], mode)[0])
qr_r = Primitive("qr_r", _qr_kernel(1), jvp=lambda primals, tangents, ans, mode="reduced":
                 _qr_tangents(primals[0], tangents[0], mode)[1])
qr_q.kernels["jax"], qr_r.kernels["jax"] = _qr_jax(0), _qr_jax(1)
_QRResult = type(np.linalg.qr(np.eye(1)))


@implements(np.linalg.qr)
def _qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'; np.linalg.qr on Duals supports "
                         "'reduced', 'complete' and 'r' ('raw' returns LAPACK's Householder "
                         "reflectors, which have no derivative rule)")
    if mode == "r":
        return qr_r(a, mode="r")
    return _QRResult(qr_q(a, mode=mode), qr_r(a, mode=mode))


# ---------------------------------------------------------------------------
# SVD. With S = Uᵀ dA V (reduced factors): ds = diag(S); F_ij = 1/(s_j² - s_i²)
# off the diagonal; dU = U (F ∘ (S diag(s) + diag(s) Sᵀ)) (+ (I - UUᵀ) dA V / s
# when m > n), dV likewise (JAX's rule, real matrices). Repeated singular values
# make F infinite: the vectors' derivatives are then inf/nan, as in JAX, while
# the values' derivative (and of anything invariant, like norms) stays exact.
# ---------------------------------------------------------------------------


def _svd_kernel(a, how):
    if how == "N":
        return np.linalg.svd(a, compute_uv=False)
    return np.linalg.svd(a, full_matrices=how == "A")[1]


def _svd_jax(a, how):
    import jax.numpy as jnp
    if how == "N":
        return jnp.linalg.svd(a, compute_uv=False)
    return jnp.linalg.svd(a, full_matrices=how == "A")[1]


def _svd_factors(a, full):
    """s, U and V of the reduced SVD, taken from the call (full or not) whose outputs
    the derivative is for, so that the signs of the vectors match."""
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    s = svd_values(a, how="A" if full else "S")
    u, vh = svd_u(a, full_matrices=full), svd_vh(a, full_matrices=full)
    if full:
        u = getitem(u, index=(Ellipsis, slice(None, k)))
        vh = getitem(vh, index=(Ellipsis, slice(None, k), slice(None)))
    return s, u, _mT(vh)


def _svd_values_jvp(primals, tangents, ans, how):
    _, u, v = _svd_factors(primals[0], how == "A")
    return _diagonal(matmul(matmul(_mT(u), tangents[0]), v))


def _svd_vectors_jvp(primals, tangents, ans, full_matrices, left):
    """dU (left) or dVh of the first min(m, n) singular vectors; the last |m - n|
    columns of a full U (rows of Vh) are any orthonormal basis of a complement and
    have no derivative (JAX raises): their tangents are nan, so that the singular
    values and the other vectors of ``svd(a)`` still differentiate."""
    a, t = primals[0], tangents[0]
    m, n = shape_of(a)[-2:]
    s, u, v = _svd_factors(a, full_matrices)
    ds = matmul(matmul(_mT(u), t), v)
    s_row = _rows(s)
    f = _inverse_gaps((s_row + _mT(s_row)) * (s_row - _mT(s_row)))
    if left:  # dU = U (F ∘ (dS diag(s) + diag(s) dSᵀ)) + (I - UUᵀ) dA V diag(1/s)
        d = matmul(u, f * (ds * s_row + _mT(ds * s_row)))
        if m > n:
            dav = matmul(t, v)
            d = d + (dav - matmul(u, matmul(_mT(u), dav))) / s_row
    else:
        d = matmul(v, f * (_mT(s_row) * ds + _mT(_mT(s_row) * ds)))
        if n > m:
            dau = matmul(_mT(t), u)
            d = d + (dau - matmul(v, matmul(_mT(v), dau))) / s_row
    if full_matrices and m != n and (m > n) == left:
        batch = tuple(shape_of(d)[:-1])
        d = concatenate(d, np.full(batch + (abs(m - n),), np.nan, dtype=t.dtype),
                        axis=len(batch))
    return d if left else _mT(d)


def _svd_vectors_jax(part):
    def kernel(a, full_matrices):
        import jax.numpy as jnp
        return jnp.linalg.svd(a, full_matrices)[part]
    return kernel


svd_values = Primitive("svd_values", _svd_kernel, jvp=_svd_values_jvp)
svd_u = Primitive("svd_u", lambda a, full_matrices: np.linalg.svd(a, full_matrices)[0],
                  jvp=lambda p, t, ans, full_matrices: _svd_vectors_jvp(
                      p, t, ans, full_matrices, left=True))
svd_vh = Primitive("svd_vh", lambda a, full_matrices: np.linalg.svd(a, full_matrices)[2],
                   jvp=lambda p, t, ans, full_matrices: _svd_vectors_jvp(
                       p, t, ans, full_matrices, left=False))
svd_values.kernels["jax"] = _svd_jax
svd_u.kernels["jax"], svd_vh.kernels["jax"] = _svd_vectors_jax(0), _svd_vectors_jax(2)
_SVDResult = type(np.linalg.svd(np.eye(1)))


def _hermitian_svd(a, compute_uv):
    """NumPy's svd(hermitian=True): eigh of the lower triangle, |eigenvalues| sorted
    in descending order, their signs moved into Vh (NumPy's code, on Duals)."""
    w = eigvalsh(a)
    if not compute_uv:
        s = absolute(w)
        order = argsort(primal_value(s), axis=-1)
        return _take_along_axis(s, order[..., ::-1], axis=-1)
    u = eigh_vectors(a)
    sgn = sign(primal_value(w))
    s = absolute(w)
    order = argsort(primal_value(s), axis=-1)[..., ::-1]
    sgn = _take_along_axis(sgn, order, axis=-1)
    s = _take_along_axis(s, order, axis=-1)
    u = _take_along_axis(u, order[..., None, :], axis=-1)
    return _SVDResult(u, s, _mT(u * _rows(sgn)))


@implements(np.linalg.svd)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    if not compute_uv:
        return svd_values(a, how="N")
    full = bool(full_matrices)
    return _SVDResult(svd_u(a, full_matrices=full), svd_values(a, how="A" if full else "S"),
                      svd_vh(a, full_matrices=full))


@implements(np.linalg.svdvals)
def _svdvals(x, /):
    return svd_values(x, how="N")


# ---------------------------------------------------------------------------
# Pseudo-inverse (Golub & Pereyra 1973, as JAX's pinv): exact wherever the rank
# is locally constant, whatever the spectrum; at a change of rank NumPy's pinv
# jumps and the rule gives the derivative of the constant-rank branch.
# ---------------------------------------------------------------------------


def _pinv_jvp(primals, tangents, ans, rcond, hermitian=False):
    a, t = primals[0], tangents[0]
    p = ans
    if hermitian:  # NumPy reads the lower triangle
        a, t = _mirror(a), _mirror(t)
    m, n = shape_of(a)[-2:]
    if m >= n:
        s = matmul(matmul(p, _mT(p)), _mT(t))
        u = matmul(matmul(_mT(t), _mT(p)), p)
        return -matmul(matmul(p, t), p) + s - matmul(matmul(s, a), p) + u - matmul(
            matmul(p, a), u)
    s = matmul(p, matmul(_mT(p), _mT(t)))
    u = matmul(_mT(t), matmul(_mT(p), p))
    return -matmul(p, matmul(t, p)) + s - matmul(s, matmul(a, p)) + u - matmul(
        p, matmul(a, u))


def _pinv_jax(a, rcond, hermitian=False):
    """NumPy's algorithm (its cutoff, its lower triangle for hermitian=True)."""
    import jax.numpy as jnp
    if hermitian:
        a = jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)
    u, s, vt = jnp.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = jnp.asarray(rcond)[..., None] * jnp.max(s, axis=-1, keepdims=True)
    large = s > cutoff
    s = jnp.where(large, 1 / jnp.where(large, s, 1), 0)
    return jnp.matmul(jnp.swapaxes(vt, -1, -2), s[..., None] * jnp.swapaxes(u, -1, -2))


pinv = Primitive("pinv", lambda a, rcond, hermitian=False: np.linalg.pinv(
    a, rcond=rcond, hermitian=hermitian), jvp=_pinv_jvp)
pinv.kernels["jax"] = _pinv_jax
_NO_VALUE = object()


@implements(np.linalg.pinv)
def _pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    if rcond is None:  # NumPy 2's defaults
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(shape_of(a)[-2:]) * np.finfo(primal_value(a).dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = float(rcond) if np.ndim(rcond) == 0 else np.asarray(rcond)
    return pinv(a, rcond=rcond, **({"hermitian": True} if hermitian else {}))


# ---------------------------------------------------------------------------
# Eigenvalues and eigenvectors of general real matrices, while all eigenvalues
# are real. With P = V⁻¹ dA V: dw = diag(P); dV = V (F ∘ P) + V diag(c), F_ij =
# 1/(w_j - w_i), c_j = -v_jᵀ (V (F ∘ P))_j keeping each column of unit norm as
# LAPACK's geev does (JAX's rule; JAX differentiates the vectors only with
# enable_eigvec_derivs=True). Repeated eigenvalues give inf/nan vectors' tangents.
# ---------------------------------------------------------------------------


def _real_eigenvalues(w, function="eig"):
    if np.iscomplexobj(w):
        raise TypeError(
            f"np.linalg.{function} of this matrix has complex eigenvalues, and dualad does not "
            "differentiate complex numbers yet. Real eigenvalues of real matrices are "
            "supported (for a symmetric matrix use np.linalg.eigh or eigvalsh).")
    return w


def _eig_jax(part):
    def kernel(a):
        import jax.numpy as jnp
        out = jnp.linalg.eig(a)[part] if part is not None else jnp.linalg.eigvals(a)
        # No error can be raised while tracing: a complex spectrum gives nan.
        real = jnp.all(jnp.imag(out) == 0, axis=tuple(range(out.ndim)))
        return jnp.where(real, jnp.real(out), jnp.nan)
    return kernel


def _in_eigenbasis(a, t):
    v = eig_vectors(a)
    return v, matmul(solve_seeds(v, t, vector=False), v)


def _eig_values_jvp(primals, tangents, ans):
    return _diagonal(_in_eigenbasis(primals[0], tangents[0])[1])


def _eig_vectors_jvp(primals, tangents, ans):
    a = primals[0]
    w = eig_values(a)
    v, p = _in_eigenbasis(a, tangents[0])
    u = matmul(v, _inverse_gaps(_rows(w) - _cols(w)) * p)
    c = _sum(multiply(v, u), axis=-2, keepdims=True)
    return u - v * c


eig_values = Primitive("eig_values", lambda a: _real_eigenvalues(np.linalg.eig(a)[0]),
                       jvp=_eig_values_jvp)
eig_vectors = Primitive("eig_vectors", lambda a: _real_eigenvalues(np.linalg.eig(a)[1]),
                        jvp=_eig_vectors_jvp)
# eigvals' JVP takes V from np.linalg.eig, whose LAPACK call orders the eigenvalues alike.
eigvals = Primitive("eigvals", lambda a: _real_eigenvalues(np.linalg.eigvals(a), "eigvals"),
                    jvp=_eig_values_jvp)
eig_values.kernels["jax"], eig_vectors.kernels["jax"] = _eig_jax(0), _eig_jax(1)
eigvals.kernels["jax"] = _eig_jax(None)
_EigResult = type(np.linalg.eig(np.eye(1)))


@implements(np.linalg.eig)
def _eig(a):
    return _EigResult(eig_values(a), eig_vectors(a))


@implements(np.linalg.eigvals)
def _eigvals(a):
    return eigvals(a)


# ---------------------------------------------------------------------------
# Least squares: x = A⁺b, so dx = A⁺(db - dA x) + A⁺A⁺ᵀ dAᵀ r + (I - A⁺A) dAᵀ A⁺ᵀ x
# with r = b - Ax (the pseudo-inverse's rule applied to b). The residuals
# ‖r‖² have d = 2 rᵀ(db - dA x) (Aᵀr = 0); s are A's singular values.
# ---------------------------------------------------------------------------


def _lstsq_kernel(a, b, rcond, part):
    return np.linalg.lstsq(a, b, rcond=rcond)[part]


def _lstsq_jax(a, b, rcond, part):
    import jax.numpy as jnp
    x, _, rank, s = jnp.linalg.lstsq(a, b, rcond=rcond)
    if part in (0, 2, 3):
        return (x, None, rank, s)[part]
    # The rank is not known while tracing: residuals as NumPy's when A has full rank.
    m, n = a.shape
    r = jnp.sum((b - a @ x) ** 2, axis=0)
    return jnp.reshape(r, (-1,)) if m > n else jnp.zeros((0,), r.dtype)


def _lstsq_jvp(primals, tangents, ans, rcond, part):
    a, b = primals
    ta, tb = tangents
    if part == 2:  # the rank: an integer
        return None
    if part == 3:
        return None if ta is None else _svd_values_jvp((a,), (ta,), None, how="S")
    vector = len(shape_of(b)) == 1  # then b, x and their tangents become columns

    def column(y):
        return reshape(y, shape=tuple(shape_of(y)) + (1,)) if vector else y

    x = column(lstsq(a, b, rcond=rcond, part=0))
    r = column(b) - matmul(a, x)
    d = None if tb is None else column(tb)  # d(b - Ax) at fixed x
    if ta is not None:
        d = -matmul(ta, x) if d is None else d - matmul(ta, x)
    if part == 1:
        return None if shape_of(ans)[-1] == 0 else 2.0 * _sum(multiply(r, d), axis=-2)
    p = pinv(a, rcond=_pinv_rcond(a, rcond))
    dx = matmul(p, d)
    if ta is not None:
        ta_t = _mT(ta)
        n = shape_of(a)[-1]
        dx = dx + matmul(matmul(p, _mT(p)), matmul(ta_t, r)) + matmul(
            np.eye(n, dtype=a.dtype) - matmul(p, a), matmul(ta_t, matmul(_mT(p), x)))
    return getitem(dx, index=(Ellipsis, 0)) if vector else dx


def _pinv_rcond(a, rcond):
    """The pseudo-inverse cutoff LAPACK's gelsd uses for lstsq's rcond."""
    if rcond is None or rcond < 0:
        return float(np.finfo(a.dtype).eps * max(shape_of(a)))
    return float(rcond)


lstsq = Primitive("lstsq", _lstsq_kernel, jvp=_lstsq_jvp)
lstsq.kernels["jax"] = _lstsq_jax


@implements(np.linalg.lstsq)
def _lstsq(a, b, rcond=None):
    return tuple(lstsq(a, b, rcond=rcond, part=part) for part in range(4))


# ---------------------------------------------------------------------------
# Compositions: matrix_power, multi_dot (cond and the norms: rules/norms.py)
# ---------------------------------------------------------------------------


@implements(np.linalg.matrix_power)
def _matrix_power(a, n):
    """NumPy's own sequence of products (binary powers), so values are NumPy's."""
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:  # the identity: a constant
        value = primal_value(a)
        return value * 0 + np.eye(shape[-1], dtype=value.dtype)
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = matmul(result, a)
        return result
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@implements(np.linalg.multi_dot)
def _multi_dot(arrays, *, out=None):
    """NumPy's order of products (chosen from the shapes alone), so values are NumPy's."""
    if out is not None:
        raise TypeError("np.linalg.multi_dot(..., out=...) would drop the derivative of a Dual")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _dot(arrays[0], arrays[1])
    ndim_first, ndim_last = len(shape_of(arrays[0])), len(shape_of(arrays[-1]))
    if ndim_first == 1:
        arrays[0] = reshape(arrays[0], shape=(1,) + tuple(shape_of(arrays[0])))
    if ndim_last == 1:
        arrays[-1] = reshape(arrays[-1], shape=tuple(shape_of(arrays[-1])) + (1,))
    # NumPy's chain order from zero-cost stand-ins of the same shapes
    stand_ins = [np.broadcast_to(np.zeros((), np.float64), shape_of(x)) for x in arrays]
    if len(arrays) == 3:
        a, b, c = (shape_of(x) for x in arrays)
        left_first = a[0] * a[1] * b[1] + a[0] * b[1] * c[1] < \
            b[0] * b[1] * c[1] + a[0] * a[1] * c[1]
        result = _dot(_dot(arrays[0], arrays[1]), arrays[2]) if left_first else \
            _dot(arrays[0], _dot(arrays[1], arrays[2]))
    else:
        from numpy.linalg._linalg import _multi_dot_matrix_chain_order
        order = _multi_dot_matrix_chain_order(stand_ins)

        def product(i, j):
            if i == j:
                return arrays[i]
            return _dot(product(i, order[i, j]), product(order[i, j] + 1, j))

        result = product(0, len(arrays) - 1)
    if ndim_first == 1 and ndim_last == 1:
        return getitem(result, index=(0, 0))
    if ndim_first == 1 or ndim_last == 1:
        return reshape(result, shape=(-1,))
    return result
