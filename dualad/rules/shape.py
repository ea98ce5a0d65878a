"""Shape and indexing primitives (all linear) and the NumPy functions built on them.

Five primitives carry every rearrangement: ``reshape``, ``transpose``,
``broadcast_to``, ``getitem`` and ``concatenate``. Their tangent rule applies
the same operation to the tangent, shifted past the leading seed axis; being
linear, each also gets a transpose rule for reverse mode. Everything else here
(``squeeze``, ``stack``, ``flip``, ``roll``, ``sort``, ...) is a composition.
"""

from __future__ import annotations

import numpy as np

from ..dual import Dual, primal_value
from ..tangents import align_tangent
from ..primitive import Primitive, implements, register_function
from .elementwise import where

# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------


def _seeds(tangents) -> int:
    return next(t.shape[0] for t in tangents if t is not None)


# Transpose rules receive a cotangent with a leading axis of B seeds and the
# arguments as recorded (a tangent's shape includes its own seed axis).

reshape = Primitive(
    "reshape", lambda x, shape: x.reshape(shape),
    jvp=lambda primals, tangents, ans, shape: reshape(
        tangents[0], shape=(tangents[0].shape[0],) + ans.shape),
    linear="all",
    transpose=lambda ct, args, linear, shape: (
        reshape(ct, shape=(ct.shape[0],) + tuple(args[0].shape)),),
)

transpose = Primitive(
    "transpose", lambda x, axes: x.transpose(axes),
    jvp=lambda primals, tangents, ans, axes: transpose(
        tangents[0], axes=(0,) + tuple(a + 1 for a in axes)),
    linear="all",
    transpose=lambda ct, args, linear, axes: (
        transpose(ct, axes=(0,) + tuple(int(a) + 1 for a in np.argsort(axes))),),
)

broadcast_to = Primitive(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
    jvp=lambda primals, tangents, ans, shape: broadcast_to(
        align_tangent(tangents[0], len(shape)), shape=(tangents[0].shape[0],) + tuple(shape)),
    linear="all",
    transpose=lambda ct, args, linear, shape: (unbroadcast(ct, args[0].shape),),
)


def _is_basic(index: tuple) -> bool:
    return all(i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer))
               for i in index)


def _expand_ellipsis(index: tuple, ndim: int) -> tuple:
    """Replace ``...`` by explicit full slices so appended axes stay untouched."""
    if not any(i is Ellipsis for i in index):
        return index
    used = sum(0 if i is None or i is Ellipsis else
               i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1
               for i in index)
    at = next(k for k, i in enumerate(index) if i is Ellipsis)
    return index[:at] + (slice(None),) * (ndim - used) + index[at + 1:]


def batched_getitem(t, index: tuple, ndim: int):
    """``t[index]`` on every slice of ``t``'s leading (seed) axis.

    ``index`` indexes an array of ``ndim`` axes; ``t`` has one more in front.
    Advanced indexing may move the indexed axes to the front, so it indexes
    with the seed axis last, where NumPy never moves it, and moves it back.
    """
    if _is_basic(index):
        return getitem(t, index=(slice(None),) + index)
    moved = transpose(t, axes=tuple(range(1, t.ndim)) + (0,))
    picked = getitem(moved, index=_expand_ellipsis(index, ndim))
    return transpose(picked, axes=(picked.ndim - 1,) + tuple(range(picked.ndim - 1)))


def batched_index_add(ct, index: tuple, shape: tuple):
    """Zeros of ``(B, *shape)`` with ``ct`` added at ``index`` of every seed slice."""
    seeds = ct.shape[0]
    if _is_basic(index):
        return index_add(ct, index=(slice(None),) + index, shape=(seeds,) + tuple(shape))
    moved = transpose(ct, axes=tuple(range(1, ct.ndim)) + (0,))
    added = index_add(moved, index=_expand_ellipsis(index, len(shape)),
                      shape=tuple(shape) + (seeds,))
    return transpose(added, axes=(added.ndim - 1,) + tuple(range(added.ndim - 1)))


getitem = Primitive(
    "getitem", lambda x, index: x[index],
    jvp=lambda primals, tangents, ans, index: batched_getitem(
        tangents[0], index, primals[0].ndim),
    linear="all",
    transpose=lambda ct, args, linear, index: (
        batched_index_add(ct, index, args[0].shape),),
)


def _index_add_kernel(values, index, shape):
    out = np.zeros_like(values, shape=shape)  # like values: a replay's recording sees it
    if _is_basic(index):
        out[index] = values  # basic indexing never repeats an element
    else:
        np.add.at(out, index, values)
    return out


# index_add(v, index, shape): zeros of ``shape`` with ``v`` added at ``index``
# (repeated indices accumulate) — the transpose of indexing.
index_add = Primitive(
    "index_add", _index_add_kernel,
    jvp=lambda primals, tangents, ans, index, shape: batched_index_add(
        tangents[0], index, shape),
    linear="all", shape_rule=lambda v, index, shape: (tuple(shape), v.dtype),
    transpose=lambda ct, args, linear, index, shape: (
        batched_getitem(ct, index, len(shape)),),
)


def _concatenate_jvp(primals, tangents, ans, axis):
    axis %= len(ans.shape)
    k = _seeds(tangents)
    parts = []
    for x, t in zip(primals, tangents):
        if t is None:
            t = np.zeros((k,) + x.shape, ans.dtype)
        parts.append(t)
    return concatenate(*parts, axis=axis + 1)


def _concatenate_transpose(ct, args, linear, axis):
    axis %= len(args[0].shape)
    cts, start = [], 0
    for x, is_linear in zip(args, linear):
        stop = start + x.shape[axis]
        cts.append(getitem(ct, index=(slice(None),) * (axis + 1) + (slice(start, stop),))
                   if is_linear else None)
        start = stop
    return tuple(cts)


def _concatenate_shape(*xs, axis):
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return tuple(shape), np.result_type(*(x.dtype for x in xs))


concatenate = Primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                        jvp=_concatenate_jvp, linear="all", transpose=_concatenate_transpose,
                        shape_rule=_concatenate_shape)


def normalize_index(index) -> tuple:
    """An index as a tuple, with lists turned into arrays (as NumPy does)."""
    if not isinstance(index, tuple):
        index = (index,)
    return tuple(np.asarray(i) if isinstance(i, list) else i for i in index)


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def shape_of(x) -> tuple[int, ...]:
    return tuple(primal_value(x).shape) if hasattr(x, "shape") else np.shape(x)


# ---------------------------------------------------------------------------
# Reshaping
# ---------------------------------------------------------------------------


@implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    target = np.empty(shape_of(a), dtype=np.bool_).reshape(shape).shape  # resolves -1
    if _memory_order(a, order) == "F":  # F order is C order of the reversed axes
        return _reverse_axes(reshape(_reverse_axes(a), shape=target[::-1]))
    return reshape(a, shape=target)


@implements(np.ravel)
def _ravel(a, order="C"):
    if order == "K":  # the elements in memory order: the axes sorted by stride
        strides = getattr(primal_value(a), "strides", None)
        if strides is not None:
            axes = tuple(int(i) for i in np.argsort([-abs(n) for n in strides], kind="stable"))
            return reshape(transpose(a, axes=axes), shape=(-1,))
        order = "C"
    return _reshape(a, (-1,), order=order)


def _memory_order(a, order: str) -> str:
    """NumPy's reading of ``order``: "A" is F for Fortran-ordered arrays, else C."""
    if order not in ("C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', got {order!r}")
    if order == "A":
        flags = getattr(primal_value(a), "flags", None)
        return "F" if flags is not None and flags.f_contiguous and not flags.c_contiguous else "C"
    return order


def _reverse_axes(a):
    return transpose(a, axes=tuple(range(len(shape_of(a))))[::-1])


@implements(np.squeeze)
def _squeeze(a, axis=None):
    shape = shape_of(a)
    if axis is None:
        axes = {i for i, n in enumerate(shape) if n == 1}
    else:
        axes = {normalize_axis(i, len(shape)) for i in np.atleast_1d(axis)}
        if any(shape[i] != 1 for i in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    return reshape(a, shape=tuple(n for i, n in enumerate(shape) if i not in axes))


@implements(np.expand_dims)
def _expand_dims(a, axis):
    shape = list(shape_of(a))
    axes = np.atleast_1d(axis)
    ndim = len(shape) + len(axes)
    for i in sorted(normalize_axis(int(i), ndim) for i in axes):
        shape.insert(i, 1)
    return reshape(a, shape=tuple(shape))


_ATLEAST_SHAPES = {  # (ndim wanted, ndim given) -> new shape, as NumPy does it
    (1, 0): lambda s: (1,),
    (2, 0): lambda s: (1, 1), (2, 1): lambda s: (1,) + s,
    (3, 0): lambda s: (1, 1, 1), (3, 1): lambda s: (1,) + s + (1,), (3, 2): lambda s: s + (1,),
}


def _atleast(ndim, a):
    shape = shape_of(a)
    if len(shape) >= ndim:
        return a
    return reshape(a, shape=_ATLEAST_SHAPES[ndim, len(shape)](shape))


@implements(np.atleast_1d)
def _atleast_1d(*arys):
    out = [_atleast(1, a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_2d)
def _atleast_2d(*arys):
    out = [_atleast(2, a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_3d)
def _atleast_3d(*arys):
    out = [_atleast(3, a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return broadcast_to(array, shape=shape)


@implements(np.shape)
def _shape(a):
    return shape_of(a)


@implements(np.ndim)
def _ndim(a):
    return len(shape_of(a))


@implements(np.size)
def _size(a, axis=None):
    return np.size(primal_value(a), axis)


@implements(np.copy)
def _copy(a, order="K", subok=False):
    return a.copy()


# ---------------------------------------------------------------------------
# Axes
# ---------------------------------------------------------------------------


@implements(np.transpose, np.permute_dims)
def _transpose(a, axes=None):
    ndim = len(shape_of(a))
    axes = tuple(range(ndim))[::-1] if axes is None else tuple(
        normalize_axis(int(i), ndim) for i in axes)
    return transpose(a, axes=axes)


@implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    ndim = len(shape_of(a))
    axes = list(range(ndim))
    i, j = normalize_axis(axis1, ndim), normalize_axis(axis2, ndim)
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, axes=tuple(axes))


@implements(np.moveaxis)
def _moveaxis(a, source, destination):
    ndim = len(shape_of(a))
    source = [normalize_axis(int(i), ndim) for i in np.atleast_1d(source)]
    destination = [normalize_axis(int(i), ndim) for i in np.atleast_1d(destination)]
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(a, axes=tuple(order))


# ---------------------------------------------------------------------------
# Joining and splitting
# ---------------------------------------------------------------------------


def _operands(arrays) -> list:
    """The arrays to join, with Python numbers and lists (constants) as ndarrays."""
    return [a if hasattr(a, "shape") else np.asarray(a) for a in arrays]


@implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting=None):
    if out is not None:
        raise TypeError("np.concatenate(..., out=...) would drop the derivative of a Dual")
    arrays = _operands(arrays)
    if axis is None:
        arrays, axis = [_ravel(a) for a in arrays], 0
    return concatenate(*arrays, axis=normalize_axis(axis, len(shape_of(arrays[0]))))


@implements(np.stack)
def _stack(arrays, axis=0, out=None, dtype=None, casting=None):
    arrays = _operands(arrays)
    axis = normalize_axis(axis, len(shape_of(arrays[0])) + 1)
    return _concatenate([_expand_dims(a, axis) for a in arrays], axis=axis)


@implements(np.hstack)
def _hstack(tup, dtype=None, casting=None):
    arrays = [_atleast(1, a) for a in _operands(tup)]
    return _concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1)


@implements(np.vstack)
def _vstack(tup, dtype=None, casting=None):
    return _concatenate([_atleast(2, a) for a in _operands(tup)], axis=0)


def _split_by(numpy_split, ary, indices_or_sections, axis):
    """Split ``ary`` into the pieces ``numpy_split`` makes of its positions."""
    axis = normalize_axis(axis, len(shape_of(ary)))
    pieces = numpy_split(np.arange(shape_of(ary)[axis]), indices_or_sections)
    lead = (slice(None),) * axis
    out, start = [], 0
    for piece in pieces:
        out.append(getitem(ary, index=lead + (slice(start, start + len(piece)),)))
        start += len(piece)
    return out


@implements(np.split)
def _split(ary, indices_or_sections, axis=0):
    return _split_by(np.split, ary, indices_or_sections, axis)


@implements(np.array_split)
def _array_split(ary, indices_or_sections, axis=0):
    return _split_by(np.array_split, ary, indices_or_sections, axis)


# ---------------------------------------------------------------------------
# Indexing and reordering
# ---------------------------------------------------------------------------


def _index_array(indices):
    """Integer indices as an array (of NumPy, unless they already are one of JAX)."""
    return indices if hasattr(indices, "ndim") else np.asarray(indices)


def take_along(a, indices, axis: int):
    """``a`` indexed by ``indices`` along ``axis`` (``np.take(a, indices, axis)``)."""
    return getitem(a, index=(slice(None),) * axis + (_index_array(indices),))


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise TypeError("np.take on Duals supports neither out= nor mode=")
    if axis is None:
        return take_along(_ravel(a), indices, 0)
    return take_along(a, indices, normalize_axis(axis, len(shape_of(a))))


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    if axis is None:
        return getitem(_ravel(arr), index=(_index_array(indices),))
    shape = shape_of(arr)
    axis = normalize_axis(axis, len(shape))
    index = []
    for dim in range(len(shape)):
        if dim == axis:
            index.append(_index_array(indices))
        else:
            view = [1] * len(shape)
            view[dim] = shape[dim]
            index.append(np.arange(shape[dim]).reshape(view))
    return getitem(arr, index=tuple(index))


@implements(np.sort)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if axis is None:
        a, axis = _ravel(a), 0
    order_ = argsort(primal_value(a), axis=axis, kind=kind, stable=stable)
    return _take_along_axis(a, order_, axis=axis)  # the tangent follows the permutation


@implements(np.flip)
def _flip(m, axis=None):
    ndim = len(shape_of(m))
    axes = range(ndim) if axis is None else [normalize_axis(int(i), ndim)
                                              for i in np.atleast_1d(axis)]
    index = [slice(None)] * ndim
    for i in axes:
        index[i] = slice(None, None, -1)
    return getitem(m, index=tuple(index))


@implements(np.fliplr)
def _fliplr(m):
    return _flip(m, 1)


@implements(np.flipud)
def _flipud(m):
    return _flip(m, 0)


@implements(np.roll)
def _roll(a, shift, axis=None):
    if axis is None:
        return _reshape(_roll(_ravel(a), shift, 0), shape_of(a))
    shape = shape_of(a)
    for s, ax in np.broadcast(np.atleast_1d(shift), np.atleast_1d(axis)):
        ax = normalize_axis(int(ax), len(shape))
        a = take_along(a, (np.arange(shape[ax]) - s) % shape[ax], ax)
    return a


# Modes of np.pad that only copy elements: the padded array is a gather.
_GATHER_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


@implements(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    """np.pad as a gather of ``array``'s elements (the positions padded by NumPy
    itself, applied to element numbers), and constants where mode="constant"."""
    if mode not in _GATHER_PAD_MODES or kwargs.get("reflect_type", "even") != "even":
        raise TypeError(f"np.pad(..., mode={mode!r}) is not supported on Duals; supported "
                        f"modes: {', '.join(_GATHER_PAD_MODES)} (reflect_type='even')")
    shape = shape_of(array)
    positions = np.arange(int(np.prod(shape))).reshape(shape)
    if mode != "constant":
        return getitem(_ravel(array), index=(np.pad(positions, pad_width, mode=mode, **kwargs),))
    padded = np.pad(positions, pad_width, constant_values=-1)
    constants = np.pad(np.zeros(shape, primal_value(array).dtype), pad_width, **kwargs)
    gathered = getitem(_ravel(array), index=(np.maximum(padded, 0),))
    return where(padded < 0, constants, gathered)


@implements(np.repeat)
def _repeat(a, repeats, axis=None):
    if axis is None:
        a, axis = _ravel(a), 0
    axis = normalize_axis(axis, len(shape_of(a)))
    return take_along(a, np.repeat(np.arange(shape_of(a)[axis]), repeats), axis)


@implements(np.tile)
def _tile(A, reps):
    reps = tuple(np.atleast_1d(reps))
    shape = shape_of(A)
    ndim = max(len(shape), len(reps))
    A = reshape(A, shape=(1,) * (ndim - len(shape)) + shape)
    reps = (1,) * (ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            A = take_along(A, np.tile(np.arange(shape_of(A)[axis]), r), axis)
    return A


@implements(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    a = _moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = shape_of(a)[-2:]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = np.arange(length) + max(-offset, 0)
    j = np.arange(length) + max(offset, 0)
    return getitem(a, index=(Ellipsis, i, j))


@implements(np.diag)
def _diag(v, k=0):
    shape = shape_of(v)
    if len(shape) == 2:
        return _diagonal(v, k)
    if len(shape) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    size = shape[0] + abs(k)
    pad = np.zeros(abs(k), primal_value(v).dtype)
    padded = _concatenate([v, pad] if k >= 0 else [pad, v])
    return reshape(padded, shape=(size, 1)) * np.eye(size, k=k, dtype=pad.dtype)


@implements(np.where)
def _where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(primal_value(condition))
    return where(condition, x, y)


# Functions whose result is a plain array computed from primal values only: each
# is a primitive without a derivative, so other backends give their own kernel.
ON_PRIMAL: dict[str, Primitive] = {}


def _on_primal(func):
    prim = ON_PRIMAL[func.__name__] = Primitive(func.__name__, func)

    def implementation(*args, **kwargs):
        return prim(*(primal_value(a) for a in args), **kwargs)

    implementation.__name__ = func.__name__
    register_function(func, implementation)


for _func in (np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero,
              np.count_nonzero, np.searchsorted, np.round, np.around, np.isclose,
              np.allclose, np.array_equal, np.all, np.any, np.array_equiv):
    _on_primal(_func)
del _func
argsort = ON_PRIMAL["argsort"]


def _constant_like(func):
    """``np.zeros_like(dual)`` and friends: a Dual of the same kind with a zero
    tangent, so that code filling an array element by element keeps derivatives."""

    prim = ON_PRIMAL[func.__name__] = Primitive(func.__name__, func)

    def implementation(a, *args, dtype=None, **kwargs):
        value = prim(primal_value(a), *args, dtype=dtype, **kwargs)
        if value.dtype.kind != "f" or not isinstance(a, Dual):
            return value
        return _constant_of_kind(a, value)

    implementation.__name__ = func.__name__
    register_function(func, implementation)


def _constant_of_kind(a, value):
    inner = a.primal
    primal = _constant_of_kind(inner, value) if isinstance(inner, Dual) else value
    return a._wrap(primal, None)


for _func in (np.zeros_like, np.ones_like, np.empty_like, np.full_like):
    _constant_like(_func)
del _func

from . import reductions  # noqa: E402  (reductions build on this module: bound late)


def unbroadcast(ct, shape: tuple):
    return reductions.unbroadcast(ct, shape)
