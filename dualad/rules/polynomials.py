"""Polynomials as coefficient arrays (highest power first): np.poly, polyadd,
polysub, polymul, polydiv, polyder, polyint, polyval, polyfit, roots and vander.

All are compositions of primitives of the table, so every mode differentiates
them; values are computed with NumPy's own sequence of operations, so they equal
NumPy's (dtypes too: polyder, polyint and vander give float64 for float32, as
NumPy does). Shapes that depend on values are decided on the primal: the
leading zeros polydiv trims from the remainder, the zero coefficients np.roots
strips; where that would drop a derivative that is not zero, a Dual is refused
with a TypeError (see _polydiv, _roots). Under ``jax.jit`` (dualad_gpu) the primal
is abstract: polydiv's remainder keeps the ``len(v) - 1`` coefficients that are not
zero by construction and roots strips no zeros (JAX's ``strip_zeros=False``).
np.roots and np.poly of a matrix go through np.linalg.eigvals: complex roots are
differentiated as complex eigenvalues, and np.poly keeps NumPy's real
coefficients when its roots come in conjugate pairs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..dual import primal_value
from ..primitive import Boxed, Primitive, implements
from .calculus import _cast, _convolve, _dtype, _operand
from .decompositions import eigvals, real_where_real
from .elementwise import sqrt
from .linalg import matmul, solve
from .reductions import sum_
from .shape import _concatenate, _transpose, getitem, reshape, shape_of


def _refuse_poly1d(name: str, *args: Any) -> None:
    if any(isinstance(a, np.poly1d) for a in args):
        raise TypeError(f"np.{name} with a np.poly1d is not supported on Duals; pass the "
                        "coefficients as an array")


def _vector(a):
    """``np.atleast_1d(a)``."""
    a = _operand(a)
    return reshape(a, shape=(1,)) if len(shape_of(a)) == 0 else a


def _concrete(value) -> np.ndarray | None:
    """``value`` as a NumPy array, or None for an abstract one (a JAX tracer). A
    recording's traced array stays one: decisions taken on it become the replay's
    guards."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asanyarray(value)
    try:
        return np.asarray(value)
    except Exception:  # noqa: BLE001  (jax.errors.TracerArrayConversionError and kin)
        return None


def _length(a) -> int:
    return shape_of(a)[0]


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------


def _aligned(a1, a2):
    """The two coefficient vectors, the shorter one padded with leading zeros."""
    a1, a2 = _vector(a1), _vector(a2)
    diff = _length(a2) - _length(a1)
    if diff > 0:
        a1 = _concatenate([np.zeros(diff, _dtype(a1)), a1])
    elif diff < 0:
        a2 = _concatenate([np.zeros(-diff, _dtype(a2)), a2])
    return a1, a2


@implements(np.polyadd)
def _polyadd(a1, a2):
    _refuse_poly1d("polyadd", a1, a2)
    a1, a2 = _aligned(a1, a2)
    return a1 + a2


@implements(np.polysub)
def _polysub(a1, a2):
    _refuse_poly1d("polysub", a1, a2)
    a1, a2 = _aligned(a1, a2)
    return a1 - a2


@implements(np.polymul)
def _polymul(a1, a2):
    _refuse_poly1d("polymul", a1, a2)
    return _convolve(_vector(a1), _vector(a2))


def _set(r, start: int, values):
    """``r`` with ``r[start:start + len(values)]`` replaced by ``values``."""
    n, m = _length(r), _length(values)
    parts = [getitem(r, index=(slice(None, start),)), values,
             getitem(r, index=(slice(start + m, None),))]
    return _concatenate([p for p, size in zip(parts, (start, m, n - start - m)) if size])


@implements(np.polydiv)
def _polydiv(u, v):
    """Long division as NumPy runs it, the in-place updates written as concatenations.

    The leading remainder coefficients NumPy trims (``allclose(r[0], 0, rtol=1e-14)``)
    are decided on the primal. The first ``len(u) - len(v) + 1`` vanish by construction
    (derivative zero too); trimming more drops coefficients whose derivatives are not
    zero, so that is refused for Duals.
    """
    _refuse_poly1d("polydiv", u, v)
    u, v = _vector(u) + 0.0, _vector(v) + 0.0
    dtype = np.result_type(_dtype(u), _dtype(v))
    m, n = _length(u) - 1, _length(v) - 1
    scale = 1.0 / getitem(v, index=(0,))
    quotient = []
    r = _cast(u, dtype)
    for k in range(m - n + 1):
        d = scale * getitem(r, index=(k,))
        quotient.append(reshape(d, shape=(1,)))
        r = _set(r, k, getitem(r, index=(slice(k, k + n + 1),)) - d * v)
    q = _concatenate(quotient) if quotient else np.zeros(1, dtype)
    structural = max(m - n + 1, 0) if n > 0 else m
    value = _concrete(primal_value(r))
    if value is None:  # abstract (jax.jit): only the coefficients zero by construction
        return q, getitem(r, index=(slice(structural, None),))
    start = 0
    while start < len(value) - 1 and np.allclose(value[start], 0, rtol=1e-14):
        start += 1
    if start > structural and isinstance(r, Boxed):
        raise TypeError(
            f"np.polydiv: the remainder's {start - structural} leading coefficient(s) after "
            "those that vanish by construction are 0 here, and NumPy drops them; their "
            "derivatives are not 0, so dualad refuses rather than drop them")
    return q, getitem(r, index=(slice(start, None),)) if start else r


# ---------------------------------------------------------------------------
# Calculus
# ---------------------------------------------------------------------------


@implements(np.polyder)
def _polyder(p, m=1):
    _refuse_poly1d("polyder", p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _vector(p)
    for _ in range(m):
        n = _length(p) - 1
        p = getitem(p, index=(slice(None, -1),)) * np.arange(n, 0, -1)
    return p


@implements(np.polyint)
def _polyint(p, m=1, k=None):
    """np.polyint on Duals: differentiable in ``p`` and in the constants ``k``."""
    _refuse_poly1d("polyint", p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _vector(np.zeros(m, float) if k is None else k)
    if _length(k) == 1 and m > 1:
        k = getitem(k, index=(0,)) * np.ones(m, float)
    if _length(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _operand(p)
    for i in range(m):
        y = p / np.arange(_length(p), 0, -1)
        constant = getitem(k, index=(slice(i, i + 1),))
        dtype = np.result_type(_dtype(y), _dtype(constant))
        p = _concatenate([_cast(y, dtype), _cast(constant, dtype)])
    return p


# ---------------------------------------------------------------------------
# Roots and coefficients
# ---------------------------------------------------------------------------


@implements(np.poly)
def _poly(seq_of_zeros):
    """Coefficients from roots: one product by (x - z) per root, with the values of
    NumPy's ``convolve(a, [1, -z])`` (a[i] - z·a[i-1], exactly)."""
    zeros = _vector(seq_of_zeros)
    shape = shape_of(zeros)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = _eigenvalues_real_where_real(zeros)
    elif len(shape) == 1:
        dtype = np.dtype(np.mintypecode(_dtype(zeros).char))
        zeros = _cast(zeros, dtype)
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if _length(zeros) == 0:
        return 1.0
    dtype = _dtype(zeros)
    zero = np.zeros(1, dtype)
    a = np.ones(1, dtype)
    for i in range(_length(zeros)):
        a = _concatenate([a, zero]) - getitem(zeros, index=(i,)) * _concatenate([zero, a])
    roots = _concrete(primal_value(zeros)) if dtype.kind == "c" else None
    if roots is not None and np.all(np.sort(roots) == np.sort(roots.conjugate())):
        a = np.real(a)  # conjugate pairs: real coefficients, as NumPy's
    return a


def _companion_eigenvalues(p):
    """The roots of a polynomial without zero leading coefficient, as NumPy finds them."""
    if _dtype(p).kind not in "fc":
        p = _cast(p, np.float64)
    size = _length(p)
    if size <= 1:
        return np.array([])
    first = -getitem(p, index=(slice(1, None),)) / getitem(p, index=(0,))
    companion = _concatenate([reshape(first, shape=(1, size - 1)),
                              np.eye(size - 2, size - 1, dtype=_dtype(first))])
    return _eigenvalues_real_where_real(companion)


def _eigenvalues_real_where_real(a):
    """``np.linalg.eigvals(a)``, real where ``a`` is real and so is every eigenvalue, as
    np.roots and np.poly find them (NumPy 2.5's eigvals is complex whatever the values)."""
    w = eigvals(a)
    return w if _dtype(a).kind == "c" else real_where_real(w)[0]


@implements(np.roots)
def _roots(p):
    """The roots: the eigenvalues of the companion matrix NumPy builds (bit for bit), complex
    ones included.

    NumPy strips leading and trailing zero coefficients (decided on the primal). Zero
    trailing coefficients of a Dual still move the roots: their derivatives are then
    those of the eigenvalues of the whole polynomial's companion matrix, on NumPy's
    values. Refused for a Dual: a zero leading coefficient (any perturbation of it
    adds a root) and several zero trailing ones (0 is then a multiple root).
    """
    p = _vector(p)
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    value = _concrete(primal_value(p))
    if value is None:  # abstract (jax.jit): nothing stripped, as JAX's strip_zeros=False
        return _companion_eigenvalues(p)
    non_zero = np.nonzero(value)[0]
    if len(non_zero) == 0:
        return np.array([])
    first, last = int(non_zero[0]), int(non_zero[-1]) + 1
    if first and isinstance(p, Boxed):
        raise TypeError("np.roots: the leading coefficient of this polynomial is 0, and any "
                        "perturbation of it adds a root: the roots have no derivative in it. "
                        "Pass the coefficients without the leading zeros.")
    trailing = _length(p) - last
    if trailing > 1 and isinstance(p, Boxed):
        raise TypeError(f"np.roots: this polynomial ends with {trailing} zero coefficients, "
                        "so 0 is a multiple root, which has no derivative.")
    if not trailing:
        return _companion_eigenvalues(getitem(p, index=(slice(first, None),)))
    stripped = value[first:last]
    roots = _companion_eigenvalues(stripped if isinstance(p, Boxed) else getitem(
        p, index=(slice(first, last),)))
    roots = _concatenate([roots, np.zeros(trailing, _dtype(roots))])
    if not isinstance(p, Boxed):
        return roots
    whole = _companion_eigenvalues(p)
    # the whole polynomial's roots in NumPy's order (its stripped roots, then the zeros)
    order = np.argsort(primal_value(whole))[np.argsort(np.argsort(roots))]
    whole = getitem(whole, index=(order,))
    return roots + (whole - primal_value(whole))


# ---------------------------------------------------------------------------
# Evaluation and fitting
# ---------------------------------------------------------------------------


def _vander(x, order: int):
    """np.vander(x, order) as NumPy computes it: running products of x, in the
    dtype of x and an integer (float64 for float32 x)."""
    n = shape_of(x)[0]
    x = _cast(x, np.promote_types(_dtype(x), int))
    if order <= 1:
        return np.ones((n, order), _dtype(x))
    column = reshape(x, shape=(n, 1))
    ones = np.ones((n, 1), _dtype(x))
    powers = np.cumprod(_concatenate([ones] + [column] * (order - 1), axis=1), axis=1)
    return getitem(powers, index=(slice(None), slice(None, None, -1)))


@implements(np.vander)
def _np_vander(x, N=None, increasing=False):
    x = _operand(x)
    if len(shape_of(x)) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    v = _vander(x, _length(x) if N is None else int(N))
    return getitem(v, index=(slice(None), slice(None, None, -1))) if increasing else v


@implements(np.polyval)
def _polyval(p, x):
    _refuse_poly1d("polyval", p, x)
    p, x = _operand(p), _operand(x)
    y = np.zeros_like(x)
    for i in range(shape_of(p)[0]):
        y = y * x + getitem(p, index=(i,))
    return y


def _lstsq_kernel(a, b, rcond):
    solution, _, rank, _ = np.linalg.lstsq(a, b, rcond)
    if rank != a.shape[1]:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    return solution


def _jax_lstsq(a, b, rcond):
    import jax.numpy as jnp

    return jnp.linalg.lstsq(a, b, rcond=rcond)[0]


# The least-squares solution of constant arrays (no derivative: polyfit adds it).
lstsq_solution = Primitive("lstsq_solution", _lstsq_kernel)
lstsq_solution.kernels["jax"] = _jax_lstsq


@implements(np.polyfit)
def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """np.polyfit on Duals: differentiable in ``y``, ``x`` and ``w``.

    The coefficients are NumPy's (its least-squares solution of the column-scaled
    Vandermonde system A); their derivatives come from the normal equations
    AᵀA dc = Aᵀ(dy - dA c) + dAᵀ r, accurate while cond(A)² is well below 1/ε
    (JAX differentiates an SVD instead: the same numbers there).
    """
    if full:
        raise TypeError("np.polyfit(..., full=True) is not supported on Duals (its rank "
                        "and singular values have no derivative); compute the residuals "
                        "from the coefficients")
    order = int(deg) + 1
    x, y = _operand(x) + 0.0, _operand(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape_of(y)) < 1 or len(shape_of(y)) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = shape_of(x)[0] * np.finfo(_dtype(x)).eps
    lhs, rhs = _vander(x, order), y
    if w is not None:
        w = _operand(w) + 0.0
        if len(shape_of(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")
        column = reshape(w, shape=(shape_of(w)[0], 1))
        lhs = lhs * column
        rhs = rhs * (column if len(shape_of(rhs)) == 2 else w)
    lhs_value, rhs_value = primal_value(lhs), primal_value(rhs)
    # Columns scaled by constants: the solution does not depend on the scaling.
    scale = sqrt(sum_(lhs_value * lhs_value, axis=(0,), keepdims=False))
    lhs, lhs_value = lhs / scale, lhs_value / scale
    c = lstsq_solution(lhs_value, rhs_value, rcond=rcond)
    if isinstance(lhs, Boxed) or isinstance(rhs, Boxed):
        # c + (d - d's value): NumPy's values, the derivatives of d = M⁻¹Aᵀ(y - A c),
        # which are those of the least-squares solution M⁻¹Aᵀy (AᵀA c is constant)
        lhs_t = _transpose(lhs)
        d = solve(matmul(lhs_t, lhs), matmul(lhs_t, rhs - matmul(lhs, c)))
        c = c + (d - primal_value(d))
    c = _transpose(_transpose(c) / scale)
    if not cov:
        return c
    lhs_t = _transpose(lhs)
    base = np.linalg.inv(matmul(lhs_t, lhs)) / (reshape(scale, shape=(-1, 1)) * scale)
    if cov == "unscaled":
        return c, base
    points = shape_of(x)[0]
    if points <= order:
        raise ValueError("the number of data points must exceed order to scale the "
                         "covariance matrix")
    residual = rhs - matmul(lhs, _transpose(_transpose(c) * scale))
    fac = sum_(residual * residual, axis=(0,), keepdims=False) / (points - order)
    if len(shape_of(y)) == 1:
        return c, base * fac
    return c, reshape(base, shape=shape_of(base) + (1,)) * fac
