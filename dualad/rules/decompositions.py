"""Matrix decompositions and what is built on them: cholesky, qr, svd, eig, lstsq and pinv
(cond and the norms: rules/norms.py; matrix_power, multi_dot: rules/linalg_namespace.py).

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

Complex matrices follow JAX (``Aᴴ`` where a real rule has ``Aᵀ``), which also
fixes the phases singular vectors and eigenvectors leave free: eigh's and the
SVD's ``V`` have ``Im(vᵢᴴ dvᵢ) = 0`` (the SVD's ``U`` then takes the rest),
cholesky and qr have the real diagonal LAPACK gives, and eig's vectors keep
LAPACK's normalization (unit norm, largest component real). Real matrices with
complex eigenvalues give eig/eigvals complex values and their derivatives.

Under ``dualad_gpu`` nothing can be raised from a traced value: eig/eigvals of a
real matrix with a complex spectrum give nan, and lstsq's residuals are those of
a full-rank A.
"""

from __future__ import annotations

import numpy as np

from ..dual import primal_value
from ..primitive import COMPLEX_FUNCTIONS, Primitive, implements
from .elementwise import absolute, equal, multiply, sign, where
from .linalg import eigh_vectors, eigvalsh, matmul, solve, solve_seeds
from .linalg_complex import conj, hermitian_part, imag, is_complex, mH, real
from .reductions import _sum
from .shape import (ON_PRIMAL, _swapaxes, _take_along_axis, argsort, concatenate, getitem,
                    reshape, shape_of)

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
    LAPACK reads for cholesky, eigh, svd(hermitian=True) and pinv(hermitian=True)
    (Hermitian for complex ``x``)."""
    if is_complex(x):
        return hermitian_part(x, lower)
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
# Cholesky: dL = L Φ(L⁻¹ dA L⁻ᴴ), Φ the lower triangle with the diagonal halved
# (Murray 2016). NumPy reads the lower triangle of A (upper=True: the upper one),
# so the rule differentiates that triangle mirrored; JAX symmetrizes (dA + dAᴴ)/2
# instead: both agree for Hermitian perturbations (A built Hermitian).
# ---------------------------------------------------------------------------


def _cholesky_jvp(primals, tangents, ans, upper=False):
    lower = mH(ans) if upper else ans
    sym = _mirror(tangents[0], lower=not upper)
    x = solve_seeds(lower, mH(solve_seeds(lower, sym, vector=False)), vector=False)
    n = shape_of(ans)[-1]
    phi = _tril(x) - 0.5 * where(np.eye(n, dtype=bool), x, 0.0)
    dl = matmul(lower, phi)
    return mH(dl) if upper else dl


def _mirror_jax(a, lower: bool = True):
    """_mirror for the JAX kernels (traced arrays)."""
    import jax.numpy as jnp
    strict = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    diagonal = jnp.real(jnp.diagonal(a, axis1=-2, axis2=-1)).astype(a.dtype)
    return strict + jnp.conj(jnp.swapaxes(strict, -1, -2)) + diagonal[..., None] * jnp.eye(
        a.shape[-1], dtype=a.dtype)


def _cholesky_jax(a, upper=False):
    import jax.numpy as jnp
    return jnp.linalg.cholesky(_mirror_jax(a, lower=not upper), upper=upper,
                               symmetrize_input=False)


cholesky = Primitive("cholesky", lambda a, upper=False: np.linalg.cholesky(a, upper=upper),
                     jvp=_cholesky_jvp, complex_ok=True)
cholesky.kernels["jax"] = _cholesky_jax


@implements(np.linalg.cholesky)
def _cholesky(a, /, *, upper=False):
    return cholesky(a, upper=True) if upper else cholesky(a)


# ---------------------------------------------------------------------------
# QR (Townsend's rule, and JAX's extensions to wide and complete factors)
# ---------------------------------------------------------------------------


def _thin_qr_jvp(q, r, t):
    """dQ, dR of A = QR for m ≥ n: with X = Qᴴ dA R⁻¹ and Ω = tril(X,-1) - tril(X,-1)ᴴ
    (+ i·Im diag(X) for complex A, which keeps R's diagonal real),
    dQ = Q(Ω - X) + dA R⁻¹ and dR = (X - Ω) R."""
    t_rinv = _right_solve(t, r)
    x = matmul(mH(q), t_rinv)
    low = _tril(x, -1)
    omega = low - mH(low)
    if is_complex(x):
        omega = omega + where(np.eye(shape_of(x)[-1], dtype=bool), x - real(x), 0.0)
    return matmul(q, omega - x) + t_rinv, matmul(x - omega, r)


def _qr_tangents(a, t, mode):
    """dQ and dR of np.linalg.qr(a, mode) ("r" is differentiated as "reduced")."""
    m, n = shape_of(a)[-2:]
    mode = "reduced" if mode == "r" else mode
    q, r = qr_q(a, mode=mode), qr_r(a, mode=mode)
    if m < n:  # A = Q [R1 R2]: the square rule for A1 = Q R1, then R2 = Qᴴ A2
        dq, dr1 = _thin_qr_jvp(q, getitem(r, index=(Ellipsis, slice(None, m))),
                               getitem(t, index=(Ellipsis, slice(None, m))))
        a2 = getitem(a, index=(Ellipsis, slice(m, None)))
        dr2 = matmul(mH(dq), a2) + matmul(mH(q), getitem(t, index=(Ellipsis, slice(m, None))))
        return dq, concatenate(dr1, dr2, axis=len(shape_of(dr1)) - 1)
    if mode == "reduced" or m == n:
        return _thin_qr_jvp(q, r, t)
    # complete, m > n (arXiv 2409.13374): the last m - n columns of Q follow
    # LAPACK's Householder construction, Z = Q_pn (Q_nn - I)⁻¹ (z_t is Zᴴ)
    q_mn, q_mp = getitem(q, index=(Ellipsis, slice(None, n))), getitem(
        q, index=(Ellipsis, slice(n, None)))
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, getitem(r, index=(Ellipsis, slice(None, n), slice(None))),
                                t)
    q_nn = getitem(q_mn, index=(Ellipsis, slice(None, n), slice(None)))
    q_pn = getitem(q_mn, index=(Ellipsis, slice(n, None), slice(None)))
    z_t = solve(mH(q_nn - np.eye(n, dtype=q.dtype)), mH(q_pn))
    dq_nn = getitem(dq_mn, index=(Ellipsis, slice(None, n), slice(None)))
    dq_pn = getitem(dq_mn, index=(Ellipsis, slice(n, None), slice(None)))
    dq_mp = matmul(dq_mn, z_t) - matmul(q_mn + matmul(q_mp, mH(z_t)),
                                        mH(dq_pn - matmul(mH(z_t), dq_nn)))
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
                 _qr_tangents(primals[0], tangents[0], mode)[0], complex_ok=True)
qr_r = Primitive("qr_r", _qr_kernel(1), jvp=lambda primals, tangents, ans, mode="reduced":
                 _qr_tangents(primals[0], tangents[0], mode)[1], complex_ok=True)
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
# SVD. With S = Uᴴ dA V (reduced factors): ds = Re diag(S); F_ij = 1/(s_j² - s_i²)
# off the diagonal; dU = U (F ∘ (S diag(s) + diag(s) Sᴴ)) (+ (I - UUᴴ) dA V / s
# when m > n), dV likewise (JAX's rule). For complex A, U also takes the phase
# term i·Im(Sᵢᵢ)/sᵢ on its diagonal, so that Im(vᵢᴴ dvᵢ) = 0 (JAX's choice).
# Repeated singular values make F infinite: the vectors' derivatives are then
# inf/nan, as in JAX, while the values' derivative (and of anything invariant,
# like norms) stays exact.
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
    return s, u, mH(vh)


def _svd_values_jvp(primals, tangents, ans, how):
    _, u, v = _svd_factors(primals[0], how == "A")
    return real(_diagonal(matmul(matmul(mH(u), tangents[0]), v)))


def _svd_vectors_jvp(primals, tangents, ans, full_matrices, left):
    """dU (left) or dVh of the first min(m, n) singular vectors; the last |m - n|
    columns of a full U (rows of Vh) are any orthonormal basis of a complement and
    have no derivative (JAX raises): their tangents are nan, so that the singular
    values and the other vectors of ``svd(a)`` still differentiate."""
    a, t = primals[0], tangents[0]
    m, n = shape_of(a)[-2:]
    s, u, v = _svd_factors(a, full_matrices)
    ds = matmul(matmul(mH(u), t), v)
    s_row = _rows(s)
    f = _inverse_gaps((s_row + _mT(s_row)) * (s_row - _mT(s_row)))
    if left:  # dU = U (F ∘ (dS diag(s) + diag(s) dSᴴ)) + (I - UUᴴ) dA V diag(1/s)
        inner = f * (ds * s_row + mH(ds * s_row))
        if is_complex(ds):  # the phase term, diag((dS - dSᴴ)/2s), 0 where s = 0 (JAX)
            zero = primal_value(s_row) == 0
            half_inverse = where(zero, 0.0, 0.5 / where(zero, 1.0, s_row))
            inner = inner + where(np.eye(shape_of(ds)[-1], dtype=bool), ds - mH(ds),
                                  0.0) * half_inverse
        d = matmul(u, inner)
        if m > n:
            dav = matmul(t, v)
            d = d + (dav - matmul(u, matmul(mH(u), dav))) / s_row
    else:
        d = matmul(v, f * (_mT(s_row) * ds + mH(_mT(s_row) * ds)))
        if n > m:
            dau = matmul(mH(t), u)
            d = d + (dau - matmul(v, matmul(mH(v), dau))) / s_row
    if full_matrices and m != n and (m > n) == left:
        batch = tuple(shape_of(d)[:-1])
        d = concatenate(d, np.full(batch + (abs(m - n),), np.nan, dtype=d.dtype),
                        axis=len(batch))
    return d if left else mH(d)


def _svd_vectors_jax(part):
    def kernel(a, full_matrices):
        import jax.numpy as jnp
        return jnp.linalg.svd(a, full_matrices)[part]
    return kernel


svd_values = Primitive("svd_values", _svd_kernel, jvp=_svd_values_jvp, complex_ok=True)
svd_u = Primitive("svd_u", lambda a, full_matrices: np.linalg.svd(a, full_matrices)[0],
                  jvp=lambda p, t, ans, full_matrices: _svd_vectors_jvp(
                      p, t, ans, full_matrices, left=True), complex_ok=True)
svd_vh = Primitive("svd_vh", lambda a, full_matrices: np.linalg.svd(a, full_matrices)[2],
                   jvp=lambda p, t, ans, full_matrices: _svd_vectors_jvp(
                       p, t, ans, full_matrices, left=False), complex_ok=True)
svd_values.kernels["jax"] = _svd_jax
svd_u.kernels["jax"], svd_vh.kernels["jax"] = _svd_vectors_jax(0), _svd_vectors_jax(2)
_SVDResult = type(np.linalg.svd(np.eye(1)))


def _hermitian_svd(a, compute_uv):
    """NumPy's svd(hermitian=True): eigh of the lower triangle, |eigenvalues| sorted
    in descending order, their signs moved into Vh = (U·sign)ᴴ (NumPy's code, on Duals)."""
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
    return _SVDResult(u, s, mH(u * _rows(sgn)))


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
# (Aᴴ for complex A where the real rule has Aᵀ.)
# ---------------------------------------------------------------------------


def _pinv_jvp(primals, tangents, ans, rcond, hermitian=False):
    a, t = primals[0], tangents[0]
    p = ans
    if hermitian:  # NumPy reads the lower triangle
        a, t = _mirror(a), _mirror(t)
    m, n = shape_of(a)[-2:]
    if m >= n:
        s = matmul(matmul(p, mH(p)), mH(t))
        u = matmul(matmul(mH(t), mH(p)), p)
        return -matmul(matmul(p, t), p) + s - matmul(matmul(s, a), p) + u - matmul(
            matmul(p, a), u)
    s = matmul(p, matmul(mH(p), mH(t)))
    u = matmul(mH(t), matmul(mH(p), p))
    return -matmul(p, matmul(t, p)) + s - matmul(s, matmul(a, p)) + u - matmul(
        p, matmul(a, u))


def _pinv_jax(a, rcond, hermitian=False):
    """NumPy's algorithm (its cutoff, its lower triangle for hermitian=True)."""
    import jax.numpy as jnp
    if hermitian:
        a = _mirror_jax(a)
    u, s, vt = jnp.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = jnp.asarray(rcond)[..., None] * jnp.max(s, axis=-1, keepdims=True)
    large = s > cutoff
    s = jnp.where(large, 1 / jnp.where(large, s, 1), 0)
    return jnp.matmul(jnp.conj(jnp.swapaxes(vt, -1, -2)),
                      s[..., None] * jnp.conj(jnp.swapaxes(u, -1, -2)))


pinv = Primitive("pinv", lambda a, rcond, hermitian=False: np.linalg.pinv(
    a, rcond=rcond, hermitian=hermitian), jvp=_pinv_jvp, complex_ok=True)
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
# Eigenvalues and eigenvectors of general matrices. With P = V⁻¹ dA V: dw =
# diag(P); dV = U + V diag(c), U = V (F ∘ P), F_ij = 1/(w_j - w_i), and c_j =
# -Re(v_jᴴ u_j) - i·Im(u_kj)/v_kj (k: the largest component of v_j) keeping each
# column as LAPACK's geev leaves it, of unit norm with its largest component
# real (JAX's rule; JAX differentiates the vectors only with
# enable_eigvec_derivs=True). The primitives are complex; the functions return
# NumPy's dtype: complex from NumPy 2.5 on, before it real where every eigenvalue
# of a real matrix is real (real_where_real).
# Repeated eigenvalues give inf/nan vectors' tangents.
# ---------------------------------------------------------------------------

#: Whether np.linalg.eig and eigvals return complex arrays whatever the values (NumPy 2.5).
EIG_ALWAYS_COMPLEX = np.linalg.eigvals(np.eye(1)).dtype.kind == "c"


def _eig_jax(part):
    def kernel(a):
        import jax.numpy as jnp
        return jnp.linalg.eig(a)[part] if part is not None else jnp.linalg.eigvals(a)
    return kernel


def _complex_kernel(func):
    """``func``'s eigenvalues or vectors, complex whatever the spectrum: a primitive's
    dtype does not depend on its values (the replay records it once)."""
    def kernel(a):
        out = func(a)
        return out if out.dtype.kind == "c" else out.astype(np.result_type(out, np.complex64))
    return kernel


def real_where_real(w, *others):
    """A real matrix's eigenvalues ``w`` (and ``others`` with them: its vectors) real
    where every eigenvalue is real, as NumPy before 2.5 returns them (and np.roots, np.poly
    in any version). A recording's traced value stays one, so that the decision is a guard
    of the replay; under jax.jit, which cannot decide, nan where some is complex."""
    value = primal_value(w)
    if isinstance(value, (np.ndarray, np.generic)):
        if np.all(value.imag == 0):
            return tuple(real(x) for x in (w, *others))
        return (w, *others)
    nan_unless_real = where(ON_PRIMAL["all"](equal(imag(w), 0.0)), 1.0, np.nan)
    return tuple(real(x) * nan_unless_real for x in (w, *others))  # (derivatives nan too)


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
    if not is_complex(v):
        return u - v * _sum(multiply(v, u), axis=-2, keepdims=True)
    value = primal_value(v)  # the largest components: locally constant
    largest = ON_PRIMAL["argmax"](absolute(value), axis=-2)  # (primitives: traced values too)
    at_largest = equal(np.arange(shape_of(value)[-2])[:, None],
                       getitem(largest, index=(Ellipsis, None, slice(None))))
    u_k = _sum(where(at_largest, u, 0.0), axis=-2, keepdims=True)
    v_k = real(_sum(where(at_largest, v, 0.0), axis=-2, keepdims=True))
    c = real(_sum(multiply(conj(v), u), axis=-2, keepdims=True)) + 1j * (imag(u_k) / v_k)
    return u - v * c


eig_values = Primitive("eig_values", _complex_kernel(lambda a: np.linalg.eig(a)[0]),
                       jvp=_eig_values_jvp, complex_ok=True)
eig_vectors = Primitive("eig_vectors", _complex_kernel(lambda a: np.linalg.eig(a)[1]),
                        jvp=_eig_vectors_jvp, complex_ok=True)
# eigvals' JVP takes V from np.linalg.eig, whose LAPACK call orders the eigenvalues alike.
eigvals = Primitive("eigvals", _complex_kernel(np.linalg.eigvals), jvp=_eig_values_jvp,
                    complex_ok=True)
eig_values.kernels["jax"], eig_vectors.kernels["jax"] = _eig_jax(0), _eig_jax(1)
eigvals.kernels["jax"] = _eig_jax(None)
_EigResult = type(np.linalg.eig(np.eye(1)))


@implements(np.linalg.eig)
def _eig(a):
    w, v = eig_values(a), eig_vectors(a)
    return _EigResult(*((w, v) if EIG_ALWAYS_COMPLEX or is_complex(a)
                        else real_where_real(w, v)))


@implements(np.linalg.eigvals)
def _eigvals(a):
    w = eigvals(a)
    return w if EIG_ALWAYS_COMPLEX or is_complex(a) else real_where_real(w)[0]


# ---------------------------------------------------------------------------
# Least squares: x = A⁺b, so dx = A⁺(db - dA x) + A⁺A⁺ᴴ dAᴴ r + (I - A⁺A) dAᴴ A⁺ᴴ x
# with r = b - Ax (the pseudo-inverse's rule applied to b). The residuals
# ‖r‖² have d = 2 Re rᴴ(db - dA x) (Aᴴr = 0); s are A's singular values.
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
    r = jnp.sum(jnp.abs(b - a @ x) ** 2, axis=0)
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
        return None if shape_of(ans)[-1] == 0 else 2.0 * real(
            _sum(multiply(conj(r), d), axis=-2))
    p = pinv(a, rcond=_pinv_rcond(a, rcond))
    dx = matmul(p, d)
    if ta is not None:
        ta_h = mH(ta)
        n = shape_of(a)[-1]
        dx = dx + matmul(matmul(p, mH(p)), matmul(ta_h, r)) + matmul(
            np.eye(n, dtype=a.dtype) - matmul(p, a), matmul(ta_h, matmul(mH(p), x)))
    return getitem(dx, index=(Ellipsis, 0)) if vector else dx


def _pinv_rcond(a, rcond):
    """The pseudo-inverse cutoff LAPACK's gelsd uses for lstsq's rcond."""
    if rcond is None or rcond < 0:
        return float(np.finfo(a.dtype).eps * max(shape_of(a)))
    return float(rcond)


lstsq = Primitive("lstsq", _lstsq_kernel, jvp=_lstsq_jvp, complex_ok=True)
lstsq.kernels["jax"] = _lstsq_jax


@implements(np.linalg.lstsq)
def _lstsq(a, b, rcond=None):
    return tuple(lstsq(a, b, rcond=rcond, part=part) for part in range(4))


COMPLEX_FUNCTIONS.update({
    np.linalg.cholesky, np.linalg.qr, np.linalg.svd, np.linalg.svdvals, np.linalg.eig,
    np.linalg.eigvals, np.linalg.pinv, np.linalg.lstsq,
})
