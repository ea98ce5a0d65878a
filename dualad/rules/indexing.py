"""Selecting by index and mask, writing in place, set operations and weighted counts.

Selections (``np.choose``, ``np.compress``, ``np.extract``) are gathers: NumPy
lays out the element numbers of the inputs and the Duals' elements are taken at
those numbers. The in-place writers (``np.put``, ``np.place``,
``np.put_along_axis``, ``np.fill_diagonal``) find the flat positions NumPy
writes, and the values it writes there, the same way, then write through the
Dual's own ``__setitem__`` (which copies before writing, so the caller's arrays
never change and reverse mode records the write). A position written twice
keeps the value NumPy keeps: the last one.

Set operations (``np.intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``)
are decided on the values and gather the elements they keep, like ``np.unique``;
``np.bincount`` is differentiable in its weights; ``np.digitize``, ``np.isin``
and ``np.lexsort`` give integers or booleans (no derivative).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dual import Dual, primal_value
from ..primitive import Boxed, Primitive, implements
from .values import astype as _astype, dtype_of as _dtype, numpy_only as _numpy_only
from .values import on_numpy as _on_numpy, values_only as _values_only
from .shape import _ravel, getitem, index_add, normalize_axis, shape_of


def _positions(shape: tuple) -> np.ndarray:
    """The element numbers of an array of ``shape``, in its shape."""
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)


def _array(a) -> Any:
    """An argument as an array (Python numbers and lists become ndarrays)."""
    return a if hasattr(a, "shape") and hasattr(a, "dtype") else np.asarray(a)


def _static(name: str, what: str, value) -> np.ndarray:
    """The values of an index or mask argument, which fix the result's layout: NumPy's,
    not ones traced by dualad_gpu (jax.jit), where they are unknown when compiling."""
    value = primal_value(value)
    if not _on_numpy(value):
        raise TypeError(f"np.{name}: its {what} decides the shape or layout of the result, "
                        "so under dualad_gpu (jax.jit) it must be a NumPy constant, not a "
                        "value computed from the traced inputs")
    return np.asarray(value)


def _gather(sources: list, layout: np.ndarray, dtype: np.dtype) -> Any:
    """The elements numbered ``layout`` of the flattened ``sources``, one after the other."""
    flat = [_astype(_ravel(s), dtype) for s in sources]
    flat = flat[0] if len(flat) == 1 else np.concatenate(flat)
    return getitem(flat, index=(np.asarray(layout, np.intp),))


# ---------------------------------------------------------------------------
# Selections
# ---------------------------------------------------------------------------


@implements(np.choose)
def _choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise TypeError("np.choose(..., out=...) is not supported on Duals; use the result")
    choices = [_array(c) for c in choices]
    dtype = np.result_type(*(_dtype(c) for c in choices))
    offsets = np.cumsum([0] + [int(np.prod(shape_of(c), dtype=np.int64)) for c in choices])
    numbers = [_positions(shape_of(c)) + offset for c, offset in zip(choices, offsets)]
    layout = np.choose(_static("choose", "index array a", a), numbers, mode=mode)
    return _gather(choices, layout, dtype)


@implements(np.compress)
def _compress(condition, a, axis=None, out=None):
    if out is not None:
        raise TypeError("np.compress(..., out=...) is not supported on Duals; use the result")
    a = _array(a)
    layout = np.compress(_static("compress", "condition", condition), _positions(shape_of(a)),
                         axis)
    return _gather([a], layout, _dtype(a))


@implements(np.extract)
def _extract(condition, arr):
    arr = _array(arr)
    layout = np.extract(_static("extract", "condition", condition), _positions(shape_of(arr)))
    return _gather([arr], layout, _dtype(arr))


# ---------------------------------------------------------------------------
# Writing in place
# ---------------------------------------------------------------------------


def _writable(name: str, a) -> Dual:
    if not isinstance(a, Dual):
        raise TypeError(
            f"np.{name} writes Duals into a plain NumPy array, which cannot hold their "
            "derivative. Make the array a Dual first: start from a copy of a Dual "
            "(y = x.copy()) or from np.zeros_like(x) of one, or build the result with "
            "np.where/np.concatenate")
    return a


def _write(a: Dual, positions: np.ndarray, values, value_numbers: np.ndarray) -> None:
    """``a.flat[positions[i]] = values.flat[value_numbers[i]]`` in order: where a
    position repeats, the last write is the one kept, as in NumPy."""
    positions = np.asarray(positions, np.intp).ravel()
    value_numbers = np.asarray(value_numbers, np.intp).ravel()
    if positions.size == 0:
        return
    reverse_first = np.unique(positions[::-1], return_index=True)[1]
    keep = np.sort(positions.size - 1 - reverse_first)
    values = _array(values)
    taken = getitem(_ravel(values), index=(value_numbers[keep],))
    if isinstance(values, Boxed) and _dtype(a).kind != "f":
        raise TypeError(f"writing Duals into an array of {_dtype(a)} would drop their "
                        "derivative; make the array a float array")
    a[np.unravel_index(positions[keep], a.shape)] = _astype(taken, _dtype(a))


def _cycled(values, count: int) -> np.ndarray:
    """The numbers of the values NumPy writes at ``count`` positions: 0, 1, ... repeated."""
    size = int(np.prod(shape_of(values), dtype=np.int64))
    if size == 0:
        if count:
            raise ValueError("cannot write an empty array of values at a non-empty "
                             "selection of positions")
        return np.zeros(0, np.intp)
    return np.arange(count) % size


@implements(np.put)
def _put(a, ind, v, mode="raise"):
    a = _writable("put", a)
    ind = _static("put", "indices", ind).astype(np.intp).ravel()
    if mode == "wrap":
        ind = ind % a.size
    elif mode == "clip":
        ind = np.clip(ind, 0, a.size - 1)
    else:
        if mode != "raise":
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
        if ind.size and (ind.max() >= a.size or ind.min() < -a.size):
            raise IndexError(f"index out of range for array of size {a.size}")
        ind = ind % max(a.size, 1)
    v = _array(v)
    _write(a, ind, v, _cycled(v, ind.size))


@implements(np.place)
def _place(arr, mask, vals):
    arr = _writable("place", arr)
    mask = np.broadcast_to(_static("place", "mask", mask).astype(bool), arr.shape)
    positions = np.flatnonzero(mask)
    vals = _array(vals)
    if positions.size and not int(np.prod(shape_of(vals), dtype=np.int64)):
        raise ValueError("Cannot insert from an empty array!")
    _write(arr, positions, vals, _cycled(vals, positions.size))


@implements(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    arr = _writable("put_along_axis", arr)
    numbers = _positions(arr.shape)
    indices = _static("put_along_axis", "indices", indices)
    if axis is None:
        picked = numbers.ravel()[indices]
    else:
        picked = np.take_along_axis(numbers, indices, normalize_axis(axis, arr.ndim))
    values = _array(values)
    value_numbers = np.broadcast_to(_positions(shape_of(values)), picked.shape)
    _write(arr, picked, values, value_numbers)


@implements(np.fill_diagonal)
def _fill_diagonal(a, val, wrap=False):
    a = _writable("fill_diagonal", a)
    marker = np.zeros(a.shape, bool)
    np.fill_diagonal(marker, True, wrap=wrap)
    positions = np.flatnonzero(marker)
    val = _array(val)
    _write(a, positions, val, _cycled(val, positions.size))


# ---------------------------------------------------------------------------
# Set operations: decided on the values, the kept elements gathered
# ---------------------------------------------------------------------------


def _pair(name: str, ar1, ar2):
    _numpy_only(name, ar1, ar2)
    ar1, ar2 = _ravel(_array(ar1)), _ravel(_array(ar2))
    dtype = np.result_type(_dtype(ar1), _dtype(ar2))
    return ar1, ar2, np.asarray(primal_value(ar1)), np.asarray(primal_value(ar2)), dtype


def _first_of_each(values: np.ndarray) -> np.ndarray:
    """The index of the first occurrence of each distinct value, in sorted order."""
    return np.unique(values, return_index=True)[1]


@implements(np.intersect1d)
def _intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The common values, with the derivative of their first occurrence in ``ar1``."""
    ar1, ar2, p1, p2, dtype = _pair("intersect1d", ar1, ar2)
    _, i1, i2 = np.intersect1d(p1, p2, assume_unique=assume_unique, return_indices=True)
    values = _gather([ar1], i1, dtype)
    return (values, i1, i2) if return_indices else values


@implements(np.union1d)
def _union1d(ar1, ar2):
    """The distinct values of both, each with the derivative of its first occurrence."""
    ar1, ar2, p1, p2, dtype = _pair("union1d", ar1, ar2)
    return _gather([ar1, ar2], _first_of_each(np.concatenate([p1, p2]).astype(dtype)),
                   dtype)


@implements(np.setdiff1d)
def _setdiff1d(ar1, ar2, assume_unique=False):
    """The values of ``ar1`` not in ``ar2``, each from its first occurrence in ``ar1``."""
    ar1, ar2, p1, p2, _ = _pair("setdiff1d", ar1, ar2)
    numbers = np.arange(p1.size) if assume_unique else _first_of_each(p1)
    numbers = numbers[~np.isin(p1[numbers], p2, assume_unique=assume_unique)]
    return _gather([ar1], numbers, _dtype(ar1))


@implements(np.setxor1d)
def _setxor1d(ar1, ar2, assume_unique=False):
    """The values in exactly one of the inputs, each from its first occurrence there."""
    ar1, ar2, p1, p2, dtype = _pair("setxor1d", ar1, ar2)
    n1 = np.arange(p1.size) if assume_unique else _first_of_each(p1)
    n2 = np.arange(p2.size) if assume_unique else _first_of_each(p2)
    numbers = np.concatenate([n1, n2 + p1.size])
    both = np.concatenate([p1, p2]).astype(dtype)
    order = np.argsort(both[numbers], kind="stable")
    numbers = numbers[order]
    kept = both[numbers]
    once = np.ones(kept.size, bool)
    if kept.size > 1:
        same = kept[1:] == kept[:-1]
        once[1:] &= ~same
        once[:-1] &= ~same
    return _gather([ar1, ar2], numbers[once], dtype)


# ---------------------------------------------------------------------------
# Weighted counts; functions with integer or boolean results
# ---------------------------------------------------------------------------


@implements(np.bincount)
def _bincount(x, weights=None, minlength=0):
    """Counts have no derivative; weighted counts are sums of the weights (linear)."""
    x = _static("bincount", "input x", x)
    if not isinstance(weights, Boxed):
        return np.bincount(x, weights, minlength=minlength)
    weights = _ravel(weights)
    if x.ndim != 1 or shape_of(weights) != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    shape = np.bincount(x, minlength=minlength).shape
    # NumPy sums the weights in float64, whatever their dtype
    return index_add(_astype(weights, np.dtype(np.float64)), index=(x,), shape=shape)


digitize = _values_only(np.digitize, "digitize")
isin = _values_only(np.isin, "isin")


def _lexsort_jax(*keys, axis=-1):
    import jax.numpy as jnp
    return jnp.lexsort(keys, axis=axis)


# np.lexsort takes its keys as one sequence: the primitive takes them one by one.
lexsort = Primitive("lexsort", lambda *keys, axis=-1: np.lexsort(keys, axis=axis))
lexsort.kernels["jax"] = _lexsort_jax


@implements(np.lexsort)
def _lexsort(keys, axis=-1):
    """The keys are the rows of an array or a sequence of arrays; only their values count."""
    return lexsort(*(keys if not isinstance(keys, Boxed) else
                     [getitem(keys, index=(i,)) for i in range(shape_of(keys)[0])]),
                   axis=axis)
