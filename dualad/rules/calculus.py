"""Differences, sums, interpolation and products: diff, ediff1d, gradient, unwrap,
trapezoid, interp, convolve, correlate, kron, cross (polynomials are in
``polynomials.py``, which builds np.polymul on convolve).

All are compositions of primitives of the table (slices, concatenation,
gathers, products), so every mode differentiates them. Values are computed with
NumPy's own sequence of operations, so they equal NumPy's.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..dual import primal_value
from ..primitive import Boxed, Primitive, implements
from .elementwise import maximum, minimum, where
from .linalg import matmul
from .reductions import cumsum, sum_
from .shape import (
    _concatenate,
    _moveaxis,
    _ravel,
    broadcast_to,
    getitem,
    normalize_axis,
    reshape,
    shape_of,
)


def _operand(a):
    """An argument as an array (Python numbers and lists become ndarrays)."""
    return a if hasattr(a, "shape") and hasattr(a, "dtype") else np.asarray(a)


def _dtype(a) -> np.dtype:
    return primal_value(a).dtype


def _cast(a, dtype):
    """``a`` as ``dtype`` (a copy-free no-op when it already is)."""
    return a if _dtype(a) == dtype else a.astype(dtype)


def _along(a, axis: int, index):
    """``a[..., index, ...]`` with ``index`` at ``axis``."""
    return getitem(a, index=(slice(None),) * axis + (index,))


# ---------------------------------------------------------------------------
# Differences
# ---------------------------------------------------------------------------


@implements(np.diff)
def _diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = _operand(a)
    shape = shape_of(a)
    if len(shape) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, len(shape))
    edge = shape[:axis] + (1,) + shape[axis + 1:]
    parts = []
    for value in (prepend, a, append):
        if value is np._NoValue:
            continue
        value = _operand(value)
        if value is not a and len(shape_of(value)) == 0:
            value = broadcast_to(value, shape=edge)
        parts.append(value)
    if len(parts) > 1:
        a = _concatenate(parts, axis=axis)
    for _ in range(n):
        a = _along(a, axis, slice(1, None)) - _along(a, axis, slice(None, -1))
    return a


@implements(np.ediff1d)
def _ediff1d(ary, to_end=None, to_begin=None):
    ary = _ravel(_operand(ary))
    dtype = _dtype(ary)
    parts = []
    if to_begin is not None:
        parts.append(_edge_values(to_begin, dtype, "to_begin"))
    parts.append(getitem(ary, index=(slice(1, None),)) - getitem(ary, index=(slice(None, -1),)))
    if to_end is not None:
        parts.append(_edge_values(to_end, dtype, "to_end"))
    return parts[0] if len(parts) == 1 else _concatenate(parts)


def _edge_values(values, dtype, name: str):
    values = _operand(values)
    if not np.can_cast(_dtype(values), dtype, casting="same_kind"):
        raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return _cast(_ravel(values), dtype)


@implements(np.gradient)
def _gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient on Duals: differentiable in ``f`` and in the spacing.

    Coordinate arrays that are Duals always take the non-uniform formula (NumPy
    switches to the uniform one when the spacing is exactly equal, a branch
    whose derivative in the coordinates would be wrong; the values agree).
    """
    f = _operand(f)
    shape = shape_of(f)
    ndim = len(shape)
    axes = tuple(range(ndim)) if axis is None else np.lib.array_utils.normalize_axis_tuple(
        axis, ndim)
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = [_spacing(d, shape[ax]) for d, ax in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = _dtype(f)
    if otype.kind != "f":
        f, otype = _cast(f, np.float64), np.dtype(np.float64)
    out = []
    for ax, dx in zip(axes, spacing):
        if shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        pieces = _gradient_pieces(f, ax, dx, edge_order, ndim)
        out.append(_cast(_concatenate(pieces, axis=ax), otype))
    return out[0] if len(axes) == 1 else tuple(out)


def _spacing(distances, length: int):
    """One axis's spacing: a scalar, or the differences of its coordinates."""
    distances = _operand(distances)
    if len(shape_of(distances)) == 0:
        return distances
    if len(shape_of(distances)) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if shape_of(distances)[0] != length:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if _dtype(distances).kind in "biu":
        distances = distances.astype(np.float64)
    diffx = _diff(distances)
    if not isinstance(diffx, Boxed) and isinstance(diffx, np.ndarray) and np.all(
            diffx == diffx[0]):
        return diffx[0]  # constant coordinates, evenly spaced: NumPy's uniform formula
    return diffx


def _gradient_pieces(f, axis, dx, edge_order, ndim):
    """The first edge, the interior and the last edge of the gradient along ``axis``."""
    def at(i, j=None):
        return _along(f, axis, slice(i, j))

    uniform = len(shape_of(dx)) == 0
    if uniform:
        interior = (at(2, None) - at(None, -2)) / (2. * dx)
    else:
        view = [1] * ndim
        view[axis] = -1
        dx1, dx2 = getitem(dx, index=(slice(0, -1),)), getitem(dx, index=(slice(1, None),))
        a = reshape(-dx2 / (dx1 * (dx1 + dx2)), shape=tuple(view))
        b = reshape((dx2 - dx1) / (dx1 * dx2), shape=tuple(view))
        c = reshape(dx1 / (dx2 * (dx1 + dx2)), shape=tuple(view))
        interior = a * at(None, -2) + b * at(1, -1) + c * at(2, None)
    first = (lambda i: dx) if uniform else (lambda i: getitem(dx, index=(i,)))
    if edge_order == 1:
        start = (at(1, 2) - at(0, 1)) / first(0)
        end = (at(-1, None) - at(-2, -1)) / first(-1)
        return [start, interior, end]
    if uniform:
        a, b, c = -1.5 / dx, 2. / dx, -0.5 / dx
    else:
        dx1, dx2 = first(0), first(1)
        a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = - dx1 / (dx2 * (dx1 + dx2))
    start = a * at(0, 1) + b * at(1, 2) + c * at(2, 3)
    if uniform:
        a, b, c = 0.5 / dx, -2. / dx, 1.5 / dx
    else:
        dx1, dx2 = first(-2), first(-1)
        a = (dx2) / (dx1 * (dx1 + dx2))
        b = - (dx2 + dx1) / (dx1 * dx2)
        c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
    end = a * at(-3, -2) + b * at(-2, -1) + c * at(-1, None)
    return [start, interior, end]


@implements(np.unwrap)
def _unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """np.unwrap on Duals: NumPy's steps on Duals. The corrections (multiples of
    the period) have derivative zero in ``p`` and follow ``period`` if it is a Dual."""
    p = _operand(p)
    axis = normalize_axis(axis, len(shape_of(p)))
    dd = _diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(_dtype(dd), primal_value(period))
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = np.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:  # NumPy's copyto(ddmod, interval_high, where=...)
        ddmod = where((ddmod == interval_low) & (dd > 0),
                      _cast(_operand(interval_high), _dtype(ddmod)), ddmod)
    correction = ddmod - dd
    correction = where(abs(dd) < primal_value(discont), np.zeros((), _dtype(correction)),
                       correction)
    rest = _along(p, axis, slice(1, None)) + cumsum(correction, axis=axis)
    return _concatenate([_cast(_along(p, axis, slice(None, 1)), dtype), _cast(rest, dtype)],
                        axis=axis)


# ---------------------------------------------------------------------------
# Integration
# ---------------------------------------------------------------------------


@implements(np.trapezoid)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _operand(y)
    ndim = len(shape_of(y))
    axis = normalize_axis(axis, ndim)
    if x is None:
        d = dx
    else:
        x = _operand(x)
        if len(shape_of(x)) == 1:
            d = _diff(x)
            view = [1] * ndim
            view[axis] = shape_of(d)[0]
            d = reshape(d, shape=tuple(view))
        else:
            d = _diff(x, axis=axis)
    trapezoids = d * (_along(y, axis, slice(1, None)) + _along(y, axis, slice(None, -1))) / 2.0
    return sum_(trapezoids, axis=(axis,), keepdims=False)


# ---------------------------------------------------------------------------
# Interpolation
# ---------------------------------------------------------------------------

searchsorted = Primitive("searchsorted", np.searchsorted)  # no derivative: positions


def _jax_searchsorted(a, v, side="left"):
    import jax.numpy as jnp

    return jnp.searchsorted(a, v, side=side)


searchsorted.kernels["jax"] = _jax_searchsorted


@implements(np.interp)
def _interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp on Duals: differentiable in ``x``, ``fp``, ``xp``, ``left`` and ``right``.

    At a sample point the derivative in ``x`` is the slope of the interval to its
    right (at the last one, of the interval to its left), as in JAX.
    """
    x, xp, fp = (_cast(_operand(v), np.float64) for v in (x, xp, fp))
    if len(shape_of(xp)) != 1 or len(shape_of(fp)) != 1:
        raise ValueError("object too deep for desired array" if len(shape_of(xp)) > 1
                         else "object of too small depth for desired array")
    n = shape_of(xp)[0]
    if shape_of(fp)[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    if n == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if isinstance(period, Boxed):
            raise TypeError("np.interp: the period must be a constant, not a Dual")
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x, xp = x % period, xp % period
        order = np.argsort(primal_value(xp)) if not isinstance(xp, Boxed) else np.argsort(xp)
        xp, fp = getitem(xp, index=(order,)), getitem(fp, index=(order,))
        xp = _concatenate([getitem(xp, index=(slice(-1, None),)) - period, xp,
                           getitem(xp, index=(slice(0, 1),)) + period])
        fp = _concatenate([getitem(fp, index=(slice(-1, None),)), fp,
                           getitem(fp, index=(slice(0, 1),))])
        n += 2
    first, last = getitem(xp, index=(0,)), getitem(xp, index=(-1,))
    left = getitem(fp, index=(0,)) if left is None else _cast(_operand(left), np.float64)
    right = getitem(fp, index=(-1,)) if right is None else _cast(_operand(right), np.float64)
    if n == 1:
        inside = where(x == first, getitem(fp, index=(0,)), x * 0.0)
    else:
        # the interval [xp[j], xp[j+1]] holding x (NumPy's binary search), clipped
        j = searchsorted(primal_value(xp), primal_value(x), side="right") - 1
        j = minimum(maximum(j, 0), n - 2)
        x0, x1 = getitem(xp, index=(j,)), getitem(xp, index=(j + 1,))
        f0, f1 = getitem(fp, index=(j,)), getitem(fp, index=(j + 1,))
        slope = (f1 - f0) / (x1 - x0)
        inside = slope * (x - x0) + f0
        # NumPy returns fp[-1] exactly at xp[-1]; the slope still follows x
        inside = where(x == last, slope * (x - last) + getitem(fp, index=(-1,)), inside)
    return where(x > last, right, where(x < first, left, inside))


# ---------------------------------------------------------------------------
# Convolution and products
# ---------------------------------------------------------------------------


def _mode(mode) -> str:
    """np.correlate's mode by its full name ("v", 0 -> "valid", ...)."""
    return {"f": "full", "s": "same", "v": "valid", 0: "valid", 1: "same", 2: "full"}.get(
        mode if not isinstance(mode, str) else mode[:1], mode)


# NumPy's own convolve and correlate of values: no derivative (the composition of
# _correlation gives it); its dot products sum in another order than matmul's.
correlate_values = Primitive("correlate_values",
                             lambda a, v, mode: np.correlate(a, v, mode=mode))
convolve_values = Primitive("convolve_values", lambda a, v, mode: np.convolve(a, v, mode=mode))


def _jax_correlation(name: str):
    def kernel(a, v, mode):
        import jax.numpy as jnp

        return getattr(jnp, name)(a, v, mode=mode)
    return kernel


correlate_values.kernels["jax"] = _jax_correlation("correlate")
convolve_values.kernels["jax"] = _jax_correlation("convolve")


def _with_numpy_values(values: Primitive, out, a, v, mode):
    """``out`` (a Dual) with the values NumPy's function gives, bit for bit."""
    if not isinstance(out, Boxed):
        return out
    value = values(primal_value(_operand(a)), primal_value(_operand(v)), mode=_mode(mode))
    return value + (out - primal_value(out))


def _correlation(a, v, mode: str):
    """Σₙ a[n + k]·v[n] over the lags ``mode`` keeps: a gather of windows of the
    zero-padded ``a`` and a matrix-vector product."""
    a, v = _operand(a), _operand(v)
    if len(shape_of(a)) != 1 or len(shape_of(v)) != 1:
        raise ValueError("object too deep for desired array")
    n, m = shape_of(a)[0], shape_of(v)[0]
    if n == 0:
        raise ValueError("a cannot be empty")
    if m == 0:
        raise ValueError("v cannot be empty")
    mode = _mode(mode)
    long, short = max(n, m), min(n, m)
    if mode == "full":
        start, length = 0, n + m - 1
    elif mode == "same":
        # centred; NumPy rounds the offset up when it swapped a and v (m > n)
        start, length = (short - 1) // 2 if n >= m else (short - 1) - (short - 1) // 2, long
    elif mode == "valid":
        start, length = short - 1, long - short + 1
    else:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    dtype = np.result_type(_dtype(a), _dtype(v))
    zeros = np.zeros(m - 1, dtype)
    padded = _concatenate([zeros, _cast(a, dtype), zeros]) if m > 1 else _cast(a, dtype)
    windows = (start + np.arange(length))[:, None] + np.arange(m)
    return matmul(getitem(padded, index=(windows,)), _cast(v, dtype))


@implements(np.correlate)
def _correlate(a, v, mode="valid"):
    return _with_numpy_values(correlate_values, _correlation(a, v, mode), a, v, mode)


@implements(np.convolve)
def _convolve(a, v, mode="full"):
    first, second = a, v = _operand(a), _operand(v)
    if len(shape_of(v)) == 1 and len(shape_of(a)) == 1 and shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a
    if len(shape_of(v)) != 1:
        raise ValueError("object too deep for desired array")
    out = _correlation(a, getitem(v, index=(slice(None, None, -1),)), mode)
    return _with_numpy_values(convolve_values, out, first, second, mode)


@implements(np.kron)
def _kron(a, b):
    a, b = _operand(a), _operand(b)
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    sa, sb = (1,) * (ndim - len(sa)) + sa, (1,) * (ndim - len(sb)) + sb
    # a[i, j, ...]·b[k, l, ...] at (i, k, j, l, ...), merged pairwise
    product = (reshape(a, shape=tuple(n for s in sa for n in (s, 1)))
               * reshape(b, shape=tuple(n for s in sb for n in (1, s))))
    return reshape(product, shape=tuple(p * q for p, q in zip(sa, sb)))


#: Whether this NumPy's cross product takes 2-vectors (deprecated in 2.0, gone in 2.5).
CROSS_OF_2_VECTORS = np.lib.NumpyVersion(np.__version__) < "2.5.0"


@implements(np.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _operand(a), _operand(b)
    shapes = shape_of(a), shape_of(b)
    a = _moveaxis(a, normalize_axis(axisa, len(shapes[0])), -1)
    b = _moveaxis(b, normalize_axis(axisb, len(shapes[1])), -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    sizes = (2, 3) if CROSS_OF_2_VECTORS else (3,)
    if na not in sizes or nb not in sizes:
        np.cross(*map(np.zeros, shapes), axisa, axisb, axisc)  # NumPy's own error
        raise ValueError("incompatible dimensions for cross product\n(dimension must be "
                         + " or ".join(map(str, sizes)) + ")")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    a0, a1, b0, b1 = (getitem(v, index=(Ellipsis, i)) for v in (a, b) for i in (0, 1))
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    a2 = getitem(a, index=(Ellipsis, 2)) if na == 3 else None
    b2 = getitem(b, index=(Ellipsis, 2)) if nb == 3 else None
    if a2 is None:
        parts = [a1 * b2, -(a0 * b2), a0 * b1 - a1 * b0]
    elif b2 is None:
        parts = [-(a2 * b1), a2 * b0, a0 * b1 - a1 * b0]
    else:
        parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    shape = np.broadcast_shapes(*(shape_of(p) for p in parts))
    dtype = np.result_type(*(_dtype(p) for p in parts))
    parts = [reshape(broadcast_to(_cast(p, dtype), shape=shape), shape=shape + (1,))
             for p in parts]
    result = _concatenate(parts, axis=-1)
    return _moveaxis(result, -1, normalize_axis(axisc, len(shape) + 1))
