"""Determinants: det, slogdet, and the adjugate (det's derivative, also at singular
matrices).

det is holomorphic for complex matrices (its real rule holds as written); slogdet's sign
is ``det/|det|`` and its log is real, as in JAX.
"""

from __future__ import annotations

import functools

import numpy as np

from ..dual import primal_value
from ..primitive import Primitive, implements, register_function
from .elementwise import multiply, negative, subtract
from .linalg import inv, matmul
from .linalg_complex import is_complex, mH, real
from .reductions import sum_
from .shape import _swapaxes, getitem, reshape, shape_of


def _trace_of_product(a, b, keepdims: bool = False):
    """tr(A B) = Σ_ij A_ij B_ji over the last two axes, for every seed (``keepdims``:
    shaped (..., 1, 1), to scale matrices)."""
    product = multiply(_swapaxes(a, -1, -2), b)
    last_two = (product.ndim - 2, product.ndim - 1)
    return sum_(product, axis=last_two, keepdims=keepdims)


def _trace_of_inverse_times(a, ta):
    """tr(A⁻¹ dA) for every seed: the derivative of log|det A|."""
    return _trace_of_product(inv(a), ta)


def _nearly_singular(a) -> bool:
    """Whether some matrix of ``a`` has a condition number above 1e8, where det·A⁻¹
    loses the adjugate's digits (or A⁻¹ does not exist). Values of other array
    backends (traced JAX arrays) cannot be looked at: False."""
    value = primal_value(a)
    if not isinstance(value, np.ndarray) or not np.all(np.isfinite(value)):
        return False
    s = np.linalg.svd(value, compute_uv=False)
    return not np.all(s[..., -1] > 1e-8 * s[..., 0])


def _det_jvp(primals, tangents, ans):
    a, ta = primals[0], tangents[0]
    if _nearly_singular(a):  # tr(adj(A) dA): the adjugate exists at singular matrices too
        last_two = (ta.ndim - 2, ta.ndim - 1)
        return sum_(multiply(_swapaxes(adjugate(a), -1, -2), ta), axis=last_two,
                    keepdims=False)
    return ans * _trace_of_inverse_times(a, ta)


det = Primitive("det", np.linalg.det, jvp=_det_jvp, complex_ok=True)
register_function(np.linalg.det, det)


def _products_of_others(s):
    """Π_{j≠i} s_j along the last axis, without division (exact where some s_j = 0)."""
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)
    return before * after[..., ::-1]


def _svd(a):
    """U, s, V and det(U)·det(Vᴴ) (±1, or a unit complex number) of A = U diag(s) Vᴴ."""
    u, s, vh = np.linalg.svd(a)
    return u, s, mH(vh), np.linalg.det(u) * np.linalg.det(vh)


def _adjugate_kernel(a):
    # adj(U S Vᴴ) = det(U)·det(Vᴴ) · V adj(S) Uᴴ, adj(S) = diag(Π_{j≠i} s_j): no division
    u, s, v, sign = _svd(a)
    adj = np.matmul(v * _products_of_others(s)[..., None, :], np.conj(np.swapaxes(u, -1, -2)))
    return sign[..., None, None] * adj


def _adjugate_jvp_polynomial(a, e):
    """d adj(A)[E] from Faddeev–LeVerrier's recursion, adj(A) = (-1)^(n+1) M_n with
    M_1 = I, M_k = A M_(k-1) + c_k I, c_k = -tr(A M_(k-1))/(k-1): a polynomial in A and
    E, so that differentiating it again is exact at singular matrices too (through the
    SVD, the rounding of the zero singular value comes back amplified)."""
    n, dtype = shape_of(a)[-1], primal_value(a).dtype
    eye = np.eye(n, dtype=dtype)
    m, dm = eye, np.zeros((n, n), dtype)
    trace = functools.partial(_trace_of_product, keepdims=True)
    for k in range(1, n):
        c, dc = -trace(a, m) / k, -(trace(e, m) + trace(a, dm)) / k
        m, dm = (matmul(a, m) + multiply(c, eye),
                 matmul(e, m) + matmul(a, dm) + multiply(dc, eye))
    return dm if n % 2 else negative(dm)


def _adjugate_jvp(primals, tangents, ans):
    a, e = primals[0], tangents[0]
    if primal_value(a) is not a:  # a Dual: this formula is differentiated again
        return _adjugate_jvp_polynomial(a, e)
    u, s, v, sign = _svd(a)
    sign = primal_value(sign)  # ±1: locally constant
    n = s.shape[-1]
    eye = np.eye(n, dtype=bool)
    # q_ij = Π_{l≠i,j} s_l. With P = Uᴴ dA V, adj(S + P) - adj(S) is, to first order,
    # -q_ij P_ij off the diagonal and Σ_{k≠i} q_ik P_kk on it.
    q = np.where(eye, 0.0, _products_of_others(np.where(eye, 1.0, s[..., None, :])))
    p = matmul(matmul(mH(u), e), v)
    i = np.arange(n)
    diag_p = getitem(p, index=(Ellipsis, i, i))
    on_diag = matmul(q, reshape(diag_p, shape=tuple(diag_p.shape) + (1,)))
    d = multiply(-q, p) + multiply(eye.astype(q.dtype), on_diag)
    return multiply(sign[..., None, None], matmul(matmul(v, d), mH(u)))


# The adjugate adj(A) (det(A)·A⁻¹ where A is invertible): the derivative of det.
adjugate = Primitive("adjugate", _adjugate_kernel, jvp=_adjugate_jvp, complex_ok=True)

# d log|det A| = Re tr(A⁻¹ dA)
log_abs_det = Primitive("log_abs_det", lambda a: np.linalg.slogdet(a)[1],
                        jvp=lambda primals, tangents, ans: real(_trace_of_inverse_times(
                            primals[0], tangents[0])), complex_ok=True)

_SlogdetResult = type(np.linalg.slogdet(np.eye(1)))


# ±1 for real matrices: locally constant.
sign_of_det = Primitive("sign_of_det", lambda a: np.linalg.slogdet(a)[0])


def _phase_of_det_jvp(primals, tangents, ans):
    # sign = det/|det| turns with the imaginary part of d log det: d sign = i·Im tr(A⁻¹dA)·sign
    trace = _trace_of_inverse_times(primals[0], tangents[0])
    return multiply(ans, subtract(trace, real(trace)))


def _phase_of_det_jax(a):
    import jax.numpy as jnp
    return jnp.linalg.slogdet(a)[0]


# det/|det| of complex matrices.
phase_of_det = Primitive("phase_of_det", lambda a: np.linalg.slogdet(a)[0],
                         jvp=_phase_of_det_jvp, complex_ok=True)
phase_of_det.kernels["jax"] = _phase_of_det_jax


@implements(np.linalg.slogdet)
def _slogdet(a):
    sign = phase_of_det(a) if is_complex(a) else sign_of_det(primal_value(a))
    return _SlogdetResult(sign, log_abs_det(a))
