"""Reductions and scans: sum, prod, max/min, cumsum, cumprod, and what builds on them.

Convention: the derivative of ``max``/``min`` is shared equally among the
elements that attain it (the midpoint convention of ``maximum``).
"""

from __future__ import annotations

import numpy as np

from ..dual import primal_value, stop_gradient
from ..primitive import COMPLEX_FUNCTIONS, Primitive, implements
from .elementwise import (divide, equal, greater, maximum, minimum, multiply, sqrt, square,
                          where)
from .linalg_complex import imag, is_complex, real
from .shape import (_diagonal, _ravel, broadcast_to, concatenate, getitem, normalize_axis,
                    reshape, shape_of, transpose)


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(normalize_axis(int(a), ndim) for a in axis))


def keepdims_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _shift(axes: tuple) -> tuple:
    """The axes of a primal counted in its tangent (a seed axis in front)."""
    return tuple(a + 1 if a >= 0 else a for a in axes)


def _cast(a, dtype):
    """``a`` in the accumulator ``dtype`` the caller asked for (as NumPy computes)."""
    return a if dtype is None else a.astype(dtype)


def _unsupported(name: str, **kwargs) -> None:
    given = [k for k, v in kwargs.items() if v is not None]
    if given:
        raise TypeError(f"np.{name}(..., {given[0]}=...) is not supported on Duals")


# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------

def _sum_transpose(ct, args, linear, axis, keepdims):
    shape = args[0].shape
    axis = tuple(a % len(shape) for a in axis)
    if not keepdims:
        ct = reshape(ct, shape=(ct.shape[0],) + keepdims_shape(shape, axis))
    return (broadcast_to(ct, shape=(ct.shape[0],) + tuple(shape)),)


def _sum_shape(x, axis, keepdims):
    axis = tuple(a % x.ndim for a in axis)
    shape = keepdims_shape(x.shape, axis) if keepdims else tuple(
        n for i, n in enumerate(x.shape) if i not in axis)
    return shape, x.dtype


sum_ = Primitive(
    "sum", lambda x, axis, keepdims: np.add.reduce(x, axis=axis, keepdims=keepdims),
    jvp=lambda primals, tangents, ans, axis, keepdims: sum_(
        tangents[0], axis=_shift(axis), keepdims=keepdims),
    linear="all", transpose=_sum_transpose, shape_rule=_sum_shape,
)


def unbroadcast(ct, shape: tuple):
    """Sum a cotangent ``(B, *broadcast shape)`` back to ``(B, *shape)``."""
    if ct.shape[1:] == tuple(shape):
        return ct
    extra = ct.ndim - 1 - len(shape)
    if extra > 0:
        ct = sum_(ct, axis=tuple(range(1, 1 + extra)), keepdims=False)
    axes = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and ct.shape[i + 1] != 1)
    return sum_(ct, axis=axes, keepdims=True) if axes else ct


def _extremum_jvp(primals, tangents, ans, axis, keepdims):
    x, t = primals[0], tangents[0]
    peak = ans if keepdims else reshape(ans, shape=keepdims_shape(x.shape, axis))
    hits = equal(x, peak).astype(x.dtype)
    share = divide(hits, sum_(hits, axis=axis, keepdims=True))
    return sum_(multiply(share, t), axis=_shift(axis), keepdims=keepdims)


amax = Primitive("max", lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims),
                 jvp=_extremum_jvp)
amin = Primitive("min", lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims),
                 jvp=_extremum_jvp)


def _l2_norm_jvp(primals, tangents, ans, axis, keepdims):
    x, t = primals[0], tangents[0]
    norm = ans if keepdims else reshape(ans, shape=keepdims_shape(x.shape, axis))
    nonzero = greater(norm, 0.0)
    # x/‖x‖, and 0 at x = 0: the centre of the cone's subdifferential (hypot's convention)
    direction = where(nonzero, divide(x, where(nonzero, norm, 1.0)), 0.0)
    return sum_(multiply(direction, t), axis=_shift(axis), keepdims=keepdims)


l2_norm = Primitive(
    "l2_norm",
    lambda x, axis, keepdims: np.sqrt(np.add.reduce(x * x, axis=axis, keepdims=keepdims)),
    jvp=_l2_norm_jvp)


def _exclusive_products(x):
    """Product of all the other elements along the last axis, without division."""
    last = x.ndim - 1
    ones = np.ones(x.shape[:-1] + (1,), x.dtype)
    before = cumprod(concatenate(ones, getitem(x, index=(Ellipsis, slice(None, -1))),
                                 axis=last), axis=last)
    after_reversed = cumprod(concatenate(ones, getitem(x, index=(Ellipsis, slice(None, 0, -1))),
                                         axis=last), axis=last)
    return before * getitem(after_reversed, index=(Ellipsis, slice(None, None, -1)))


def _prod_jvp(primals, tangents, ans, axis, keepdims):
    x, t = primals[0], tangents[0]
    # Gather the reduced axes into one trailing axis, then Σ t·Π(others).
    order = tuple(i for i in range(x.ndim) if i not in axis) + axis
    lead = tuple(x.shape[i] for i in order[:x.ndim - len(axis)])
    flat_x = reshape(transpose(x, axes=order), shape=lead + (-1,))
    flat_t = reshape(transpose(t, axes=(0,) + _shift(order)),
                     shape=(t.shape[0],) + lead + (-1,))
    out = sum_(multiply(_exclusive_products(flat_x), flat_t), axis=(len(lead) + 1,),
               keepdims=False)
    return reshape(out, shape=(t.shape[0],) + ans.shape)


prod = Primitive("prod", lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
                 jvp=_prod_jvp)

def _reversed(x, axis: int):
    return getitem(x, index=(slice(None),) * axis + (slice(None, None, -1),))


cumsum = Primitive(
    "cumsum", lambda x, axis: np.cumsum(x, axis=axis),
    jvp=lambda primals, tangents, ans, axis: cumsum(tangents[0], axis=axis + 1),
    # the transpose of a running sum is a running sum from the other end
    linear="all", shape_rule=lambda x, axis: (x.shape, x.dtype),
    transpose=lambda ct, args, linear, axis: (
        _reversed(cumsum(_reversed(ct, axis + 1), axis=axis + 1), axis + 1),),
)


def _cumprod_jvp(primals, tangents, ans, axis):
    x, t = primals[0], tangents[0]
    value = primal_value(x)
    if isinstance(value, (np.ndarray, np.generic)) and np.all(value != 0):
        return ans * cumsum(t / x, axis=axis + 1)
    # With zeros, run the recurrence  ẏᵢ = xᵢ·ẏᵢ₋₁ + yᵢ₋₁·tᵢ  along the axis.
    def at(a, i, shift=0):
        return getitem(a, index=(slice(None),) * (axis + shift) + (slice(i, i + 1),))

    pieces = [at(t, 0, 1)]
    for i in range(1, x.shape[axis]):
        pieces.append(at(x, i) * pieces[-1] + at(ans, i - 1) * at(t, i, 1))
    return concatenate(*pieces, axis=axis + 1)


cumprod = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis), jvp=_cumprod_jvp)


# ---------------------------------------------------------------------------
# NumPy functions
# ---------------------------------------------------------------------------


def _masked(a, where_, fill: float):
    """``a`` with ``fill`` where the mask ``where_`` (broadcast to ``a``) is False."""
    if where_ is None or where_ is True:
        return a
    mask = primal_value(where_)
    if isinstance(mask, (list, tuple, bool, np.bool_, np.ndarray)):  # (not JAX's values)
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), shape_of(a))
        if mask.all():
            return a
    return where(mask, a, fill)


def _with_initial(reduced, initial, combine):
    return reduced if initial is None else combine(reduced, initial)


@implements(np.sum)
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("sum", out=out)
    a = _masked(_cast(a, dtype), where, 0)
    total = sum_(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _with_initial(total, initial, lambda t, c: t + c)


@implements(np.prod)
def _prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("prod", out=out)
    a = _masked(_cast(a, dtype), where, 1)
    product = prod(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _with_initial(product, initial, lambda p, c: p * c)


def _extremum(name: str, primitive: Primitive, combine, a, axis, keepdims, initial, where_):
    if where_ is not None and where_ is not True and initial is None:
        ufunc = "maximum" if name == "max" else "minimum"
        raise ValueError(f"reduction operation '{ufunc}' does not have an identity, so to "
                         "use a where mask one has to specify 'initial'")
    a = _masked(a, where_, -np.inf if name == "max" else np.inf)
    peak = primitive(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _with_initial(peak, initial, combine)


@implements(np.max, np.amax)
def _max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("max", out=out)
    return _extremum("max", amax, maximum, a, axis, keepdims, initial, where)


@implements(np.min, np.amin)
def _min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("min", out=out)
    return _extremum("min", amin, minimum, a, axis, keepdims, initial, where)


def _scan(primitive, a, axis):
    if axis is None:
        a, axis = _ravel(a), 0
    return primitive(a, axis=normalize_axis(axis, len(shape_of(a))))


@implements(np.cumsum)
def _cumsum(a, axis=None, dtype=None, out=None):
    _unsupported("cumsum", out=out)
    return _scan(cumsum, _cast(a, dtype), axis)


@implements(np.cumprod)
def _cumprod(a, axis=None, dtype=None, out=None):
    _unsupported("cumprod", out=out)
    return _scan(cumprod, _cast(a, dtype), axis)


def _count(shape, axes) -> int:
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _unsupported("mean", out=out)
    axes = normalize_axes(axis, len(shape_of(a)))
    total = _sum(a, axes, dtype=dtype, keepdims=keepdims, where=where)
    if where is None or where is True:
        return total / _count(shape_of(a), axes)
    mask = primal_value(where)
    mask = broadcast_to(np.asarray(mask) if isinstance(mask, (list, tuple)) else mask,
                        shape=shape_of(a))
    real = np.finfo(primal_value(total).dtype).dtype  # (float32 stays float32)
    return total / sum_(mask.astype(real), axis=axes, keepdims=bool(keepdims))


@implements(np.var)
def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         mean=None, correction=None):
    _unsupported("var", out=out, where=where, mean=mean)
    ddof = ddof if correction is None else correction
    axes = normalize_axes(axis, len(shape_of(a)))
    a = _cast(a, dtype)
    count = _count(shape_of(a), axes)
    if count == 1:  # a - mean(a) is 0 whatever a is: a constant, derivative 0 (std too)
        a = stop_gradient(a)
    centred = a - _mean(a, axes, keepdims=True)
    if is_complex(centred):  # mean |a - mean(a)|², real (NumPy's)
        squares = square(real(centred)) + square(imag(centred))
    else:
        squares = square(centred)
    return _sum(squares, axes, keepdims=keepdims) / (count - ddof)


@implements(np.std)
def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         mean=None, correction=None):
    return sqrt(_var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                     correction=correction))


@implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _unsupported("trace", out=out)
    diagonal = _diagonal(_cast(a, dtype), offset, axis1, axis2)
    return sum_(diagonal, axis=(len(shape_of(diagonal)) - 1,), keepdims=False)


COMPLEX_FUNCTIONS.update({np.var, np.std})  # var: the mean of |a - mean(a)|²
