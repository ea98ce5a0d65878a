"""Building and splitting arrays: append, insert, delete, block, the stacks, the
splits, unstack, broadcast_arrays, resize, trim_zeros, diagflat, rot90, rollaxis,
triu/tril, meshgrid, linspace/geomspace/logspace, np.r_ and np.c_, np.astype,
cumulative_sum/cumulative_prod, apply_along_axis and apply_over_axes.

Rearrangements are gathers: NumPy itself lays out the element numbers of the
inputs (``np.insert(positions, ...)``), and the Duals' elements are taken at
those numbers, so every index rule of NumPy holds with no copy of it here.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from numpy.lib import _index_tricks_impl

from ..dual import _astype, primal_value
from ..operands import arguments_as_given
from ..primitive import FUNCTION_HANDLERS, STATIC_OBJECTS, Boxed, entry_point, implements
from .calculus import _cast, _dtype, _operand
from .elementwise import floor, where
from .shape import (
    _atleast,
    _concatenate,
    _flip,
    _moveaxis,
    _ravel,
    _split,
    _stack,
    _transpose,
    broadcast_to,
    getitem,
    normalize_axis,
    reshape,
    shape_of,
)


def _positions(a) -> np.ndarray:
    """The element numbers of ``a``, in its shape."""
    shape = shape_of(a)
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)


# ---------------------------------------------------------------------------
# Appending, inserting, deleting
# ---------------------------------------------------------------------------


@implements(np.append)
def _append(arr, values, axis=None):
    arr = _operand(arr)
    if axis is None:
        if len(shape_of(arr)) != 1:
            arr = _ravel(arr)
        values, axis = _ravel(_operand(values)), len(shape_of(arr)) - 1
    return _concatenate([arr, _operand(values)], axis=axis)


@implements(np.insert)
def _insert(arr, obj, values, axis=None):
    arr, values = _operand(arr), _operand(values)
    dtype = _dtype(arr)
    if isinstance(values, Boxed) and dtype.kind != "f":
        raise TypeError(f"np.insert casts the values to the dtype of arr ({dtype}), which "
                        "would drop their derivative; make arr a float array")
    values = _cast(values, dtype)
    size = int(np.prod(shape_of(arr), dtype=np.int64))
    # NumPy inserts the values' element numbers among arr's (broadcasting them)
    layout = np.insert(_positions(arr), obj, _positions(values) + size, axis=axis)
    return getitem(_concatenate([_ravel(arr), _ravel(values)]), index=(layout,))


@implements(np.delete)
def _delete(arr, obj, axis=None):
    arr = _operand(arr)
    return getitem(_ravel(arr), index=(np.delete(_positions(arr), obj, axis=axis),))


def _leaves(nested) -> list:
    """The arrays of a nested list, depth first (what np.block lays out)."""
    if isinstance(nested, list):
        return [leaf for item in nested for leaf in _leaves(item)]
    return [nested]


def _numbered(nested, numbers: list):
    """``nested`` with each leaf replaced by its element numbers from ``numbers``."""
    if isinstance(nested, list):
        return [_numbered(item, numbers) for item in nested]
    return numbers.pop(0)


# np.block's "arrays" is a nested list of arrays, not one sequence of arrays that
# Dual.__array_function__ should convert: its rule reads the nesting itself.
arguments_as_given(np.block)


@implements(np.block)
def _block(arrays):
    """NumPy's own np.block lays out the element numbers of the leaves, which are
    then gathered from the leaves' elements."""
    leaves = [_operand(leaf) for leaf in _leaves(arrays)]
    dtype = np.result_type(*(_dtype(leaf) for leaf in leaves))
    numbers, offset = [], 0
    for leaf in leaves:
        numbers.append(_positions(leaf) + offset)
        offset += int(np.prod(shape_of(leaf), dtype=np.int64))
    layout = np.block(_numbered(arrays, numbers))
    flat = _concatenate([_cast(_ravel(leaf), dtype) for leaf in leaves])
    return getitem(flat, index=(layout,))


@implements(np.resize)
def _resize(a, new_shape):
    a = _operand(a)
    if not int(np.prod(shape_of(a), dtype=np.int64)):  # NumPy fills with zeros
        return np.zeros(new_shape, _dtype(a))
    return getitem(_ravel(a), index=(np.resize(_positions(a), new_shape),))


@implements(np.diagflat)
def _diagflat(v, k=0):
    v = _operand(v)
    layout = np.diagflat(_positions(v) + 1, k)  # 0: off the diagonal
    gathered = getitem(_ravel(v), index=(np.maximum(layout - 1, 0),))
    return where(layout > 0, gathered, np.zeros(1, _dtype(v)))


@implements(np.trim_zeros)
def _trim_zeros(filt, trim="fb", axis=None):
    """The zeros are found on the value; the rest is a slice of ``filt``."""
    filt = _operand(filt)
    value = primal_value(filt)
    if not isinstance(value, (np.ndarray, np.generic)):
        raise TypeError("np.trim_zeros: the length of its result depends on the values, "
                        "which dualad_gpu (jax.jit) does not know when compiling; call it "
                        "outside the transform")
    value = np.asarray(value)
    trim = trim.lower()
    if any(c not in "fb" for c in trim):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    ndim = value.ndim
    axes = range(ndim) if axis is None else [normalize_axis(a, ndim) for a in np.atleast_1d(axis)]
    nonzero = value != 0
    index = [slice(None)] * ndim
    for ax in axes:
        along = np.flatnonzero(nonzero.any(axis=tuple(d for d in range(ndim) if d != ax)))
        if along.size == 0:
            index[ax] = slice(0, 0)
        else:
            index[ax] = slice(along[0] if "f" in trim else 0,
                              along[-1] + 1 if "b" in trim else None)
    return getitem(filt, index=tuple(index))


# ---------------------------------------------------------------------------
# Stacks and splits
# ---------------------------------------------------------------------------


@implements(np.column_stack)
def _column_stack(tup):
    columns = []
    for v in tup:
        v = _operand(v)
        if len(shape_of(v)) < 2:
            v = _transpose(_atleast(2, v))
        columns.append(v)
    return _concatenate(columns, axis=1)


@implements(np.dstack)
def _dstack(tup):
    return _concatenate([_atleast(3, _operand(v)) for v in tup], axis=2)


if hasattr(np, "row_stack"):  # deprecated in NumPy 2.0 (warns as NumPy does), removed in 2.5
    @implements(np.row_stack)
    def _row_stack(tup, *, dtype=None, casting="same_kind"):
        warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                      DeprecationWarning, stacklevel=2)
        return FUNCTION_HANDLERS[np.vstack](tup, dtype=dtype, casting=casting)


@implements(np.hsplit)
def _hsplit(ary, indices_or_sections):
    ndim = len(shape_of(ary))
    if ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if ndim > 1 else 0)


@implements(np.vsplit)
def _vsplit(ary, indices_or_sections):
    if len(shape_of(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def _dsplit(ary, indices_or_sections):
    if len(shape_of(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------------------
# Rotations, axes, triangles
# ---------------------------------------------------------------------------


@implements(np.rot90)
def _rot90(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    ndim = len(shape_of(m))
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ValueError("Axes must be different.")
    if not (-ndim <= axes[0] < ndim and -ndim <= axes[1] < ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={ndim}.")
    k %= 4
    if k == 0:
        return getitem(m, index=(slice(None),))
    if k == 2:
        return _flip(_flip(m, axes[0]), axes[1])
    order = list(range(ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return _transpose(_flip(m, axes[1]), order)
    return _flip(_transpose(m, order), axes[1])


@implements(np.rollaxis)
def _rollaxis(a, axis, start=0):
    n = len(shape_of(a))
    axis = normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return getitem(a, index=(Ellipsis,))
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return _transpose(a, order)


@implements(np.tril)
def _tril(m, k=0):
    mask = np.tri(*shape_of(m)[-2:], k=k, dtype=bool)
    return where(mask, m, np.zeros(1, _dtype(m)))


@implements(np.triu)
def _triu(m, k=0):
    mask = np.tri(*shape_of(m)[-2:], k=k - 1, dtype=bool)
    return where(mask, np.zeros(1, _dtype(m)), m)


# ---------------------------------------------------------------------------
# Grids and ranges
# ---------------------------------------------------------------------------


@implements(np.meshgrid)
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xi = [_ravel(_operand(x)) for x in xi]
    ndim = len(xi)
    # x_i along axis i (axes 0 and 1 swapped for 'xy')
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0
    output = []
    for x, at in zip(xi, axes):
        shape = [1] * ndim
        shape[at] = shape_of(x)[0]
        output.append(reshape(x, shape=tuple(shape)))
    if not sparse:
        shape = np.broadcast_shapes(*(shape_of(x) for x in output))
        output = [broadcast_to(x, shape=shape) for x in output]
    if copy:
        output = [x.copy() for x in output]
    return tuple(output)


def _weak_dtype(*values) -> np.dtype:
    """NumPy's result type of ``values``, Python numbers being weak (NEP 50), made
    inexact."""
    dt = np.result_type(*(v if isinstance(v, (int, float)) else _dtype(v) for v in values))
    return dt if dt.kind in "fc" else np.result_type(dt, 1.0)


def _with_row(y, row: int, value):
    """``y`` with its first (0) or last (-1) row along axis 0 replaced by ``value``."""
    rest = shape_of(y)[1:]
    value = broadcast_to(reshape(_cast(value, _dtype(y)), shape=(1,) + shape_of(value)),
                         shape=(1,) + rest)
    if row == 0:
        return _concatenate([value, getitem(y, index=(slice(1, None),))])
    return _concatenate([getitem(y, index=(slice(None, -1),)), value])


@implements(np.linspace)
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = _weak_dtype(start, stop)
    integer_dtype = dtype is not None and np.issubdtype(dtype, np.integer)
    dtype = dt if dtype is None else np.dtype(dtype)
    start, stop = _operand(start), _operand(stop)
    delta = _cast(stop, dt) - _cast(start, dt)
    y = np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * len(shape_of(delta)))
    if div > 0:
        step = delta / div
        value = primal_value(step)
        if isinstance(value, (np.ndarray, np.generic)) and np.any(value == 0):
            y = y / div * delta  # denormal steps, as NumPy (gh-5437)
        else:
            y = y * step
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y = _with_row(y, -1, stop)
    if axis != 0:
        y = _moveaxis(y, 0, axis)
    if integer_dtype:
        y = floor(primal_value(y)).astype(dtype)
    y = _cast(y, dtype)
    return (y, step) if retstep else y


@implements(np.logspace)
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not isinstance(base, (float, int)) and len(shape_of(_operand(base))):
        start, stop, base = _operand(start), _operand(stop), _operand(base)
        ndmax = len(np.broadcast_shapes(*(shape_of(a) for a in (start, stop, base))))
        start, stop, base = (reshape(a, shape=(1,) * (ndmax - len(shape_of(a))) + shape_of(a))
                             for a in (start, stop, base))
        base = reshape(base, shape=np.expand_dims(np.empty(shape_of(base), np.int8),
                                                  axis).shape)
    y = _linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    y = np.power(base, y)
    return y if dtype is None else _cast(y, np.dtype(dtype))


@implements(np.geomspace)
def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = _operand(start), _operand(stop)
    values = [primal_value(v) for v in (start, stop)]
    if all(isinstance(v, (np.ndarray, np.generic)) for v in values) and any(
            np.any(v == 0) for v in values):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(_dtype(start), _dtype(stop), float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    if dt.kind == "c":
        raise TypeError("np.geomspace between complex end points is not supported on Duals")
    start, stop = _cast(start, dt), _cast(stop, dt)
    # negative end points: a sequence between positive ones, its sign put back
    out_sign = np.sign(start)
    start, stop = start / out_sign, stop / out_sign
    result = _logspace(np.log10(start), np.log10(stop), num=num, endpoint=endpoint,
                       base=10.0, dtype=dt)
    if num > 0:  # the end points exactly (10**log10(x) need not be x)
        result = _with_row(result, 0, start)
        if num > 1 and endpoint:
            result = _with_row(result, -1, stop)
    result = result * out_sign
    if axis != 0:
        result = _moveaxis(result, 0, axis)
    return _cast(result, dtype)


# ---------------------------------------------------------------------------
# unstack, broadcast_arrays, np.astype, cumulative sums and products
# ---------------------------------------------------------------------------


@implements(np.unstack)
def _unstack(x, /, *, axis=0):
    x = _operand(x)
    axis = normalize_axis(axis, len(shape_of(x)))
    return tuple(getitem(x, index=(slice(None),) * axis + (i,))
                 for i in range(shape_of(x)[axis]))


@implements(np.broadcast_arrays)
def _broadcast_arrays(*args, subok=False):
    args = [_operand(a) for a in args]
    shape = np.broadcast_shapes(*(shape_of(a) for a in args))
    return tuple(a if shape_of(a) == shape else broadcast_to(a, shape=shape) for a in args)


@implements(np.astype)
def _np_astype(x, dtype, /, *, copy=True, device=None):
    """As ``x.astype``: a float dtype keeps the derivative, integers and booleans
    are values (piecewise constant)."""
    return _astype(x, dtype)


def _cumulative(name: str, accumulate, initial: float):
    def implementation(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        if out is not None:
            raise TypeError(f"np.{name}(..., out=...) is not supported on Duals; use the result")
        x = _operand(x)
        ndim = len(shape_of(x))
        if axis is None:
            if ndim > 1:
                raise ValueError("For arrays which have more than one dimension ``axis`` "
                                 "argument is required.")
            axis = 0
        if ndim == 0:
            raise ValueError(f"{name} does not support 0-d arrays")
        axis = normalize_axis(axis, ndim)
        y = accumulate(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(shape_of(y))
            shape[axis] = 1
            y = _concatenate([np.full(shape, initial, _dtype(y)), y], axis=axis)
        return y

    implementation.__name__ = f"_{name}"
    return implementation


if hasattr(np, "cumulative_sum"):  # NumPy 2.1
    implements(np.cumulative_sum)(_cumulative("cumulative_sum", np.cumsum, 0))
    implements(np.cumulative_prod)(_cumulative("cumulative_prod", np.cumprod, 1))


# ---------------------------------------------------------------------------
# apply_along_axis, apply_over_axes: the user's function on Dual slices
# ---------------------------------------------------------------------------


@implements(np.apply_along_axis)
def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` on each 1-D slice along ``axis``; the results stacked where the
    axis was, as NumPy lays them out."""
    arr = _operand(arr)
    ndim = len(shape_of(arr))
    axis = normalize_axis(axis, ndim)
    moved = _moveaxis(arr, axis, -1)
    outer = shape_of(moved)[:-1]
    if not int(np.prod(outer, dtype=np.int64)):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [_operand(func1d(getitem(moved, index=index), *args, **kwargs))
               for index in np.ndindex(*outer)]
    res_ndim = len(shape_of(results[0]))
    stacked = reshape(_stack(results), shape=outer + shape_of(results[0]))
    # the result's own axes go where ``axis`` was
    order = (list(range(axis)) + list(range(len(outer), len(outer) + res_ndim))
             + list(range(axis, len(outer))))
    return _transpose(stacked, order)


@implements(np.apply_over_axes)
def _apply_over_axes(func, a, axes):
    val = _operand(a)
    ndim = len(shape_of(val))
    for axis in np.atleast_1d(axes):
        axis = int(axis) + ndim if axis < 0 else int(axis)
        res = _operand(func(val, axis))
        if len(shape_of(res)) == ndim:
            val = res
        elif len(shape_of(res)) == ndim - 1:
            val = reshape(res, shape=shape_of(res)[:axis] + (1,) + shape_of(res)[axis:])
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return val


# ---------------------------------------------------------------------------
# np.r_ and np.c_
# ---------------------------------------------------------------------------
# They are objects whose __getitem__ converts every item with np.array, which
# would drop a Dual's derivative (and is refused). AxisConcatenator.__getitem__
# is wrapped: keys holding a Dual are laid out by NumPy's own __getitem__ on
# element numbers, then gathered from the Duals; other keys run NumPy's code.

_numpy_getitem = _index_tricks_impl.AxisConcatenator.__getitem__


def _concatenator_getitem(self, key):
    items = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(item, Boxed) for item in items) or type(
            self).concatenate is not _index_tricks_impl.AxisConcatenator.concatenate:
        return _numpy_getitem(self, key)
    return _concatenate_items(self, items)


@entry_point
def _concatenate_items(concatenator, items: tuple):
    return _concatenate_key(concatenator, items)


def _concatenate_key(concatenator, items: tuple):
    duals = [item for item in items if isinstance(item, Boxed)]

    def laid_out(make):
        """NumPy's result with each Dual replaced by ``make(dual, offset)``."""
        offset, replaced = 1, []
        for item in items:
            if isinstance(item, Boxed):
                replaced.append(make(item, offset))
                offset += int(np.prod(shape_of(item), dtype=np.int64))
            else:
                replaced.append(item)
        return _numpy_getitem(concatenator, tuple(replaced))

    # The constants and the dtype, then where each Dual's elements land (numbered
    # from 1, so that they differ from the zeros of a second layout).
    constants = laid_out(lambda d, offset: np.zeros(shape_of(d), _dtype(d)))
    if isinstance(constants, np.matrix):
        raise TypeError("np.r_/np.c_ with the 'r' or 'c' directive make a np.matrix, which "
                        "cannot hold a Dual; leave the directive out")
    numbers = laid_out(lambda d, offset: offset + _positions(d).astype(np.float64))
    zeros = laid_out(lambda d, offset: np.zeros(shape_of(d), np.float64))
    from_duals = numbers != zeros
    flat = _concatenate([_cast(_ravel(d), constants.dtype) for d in duals])
    gathered = getitem(flat, index=(np.where(from_duals, numbers - 1, 0).astype(np.intp),))
    return where(from_duals, gathered, constants)


_index_tricks_impl.AxisConcatenator.__getitem__ = _concatenator_getitem
STATIC_OBJECTS += [np.c_, np.r_]
