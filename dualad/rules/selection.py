"""Selection: partition, piecewise, select, unique, histogram, and the complex parts of real input.

Part of the statistics family (imported by :mod:`dualad.rules.statistics`).
Selections carry the derivative of the elements they select; what depends on
the data only through comparisons (indices, counts) has no derivative.
"""

from __future__ import annotations

import numpy as np

from ..dual import Dual, primal_value
from ..primitive import Primitive, register_function, implements
from .elementwise import add, arctan2, divide, multiply, subtract
from .elementwise import where as _where
from .reductions import amax, amin, sum_
from .shape import (ON_PRIMAL, _ravel, _take_along_axis, broadcast_to, concatenate, getitem,
                    index_add, normalize_axis, reshape, shape_of)
from .statistics import (_as_array, _astype, _dtype, _logical_not, _logical_or, _on_numpy,
                         _stand_in)

# ---------------------------------------------------------------------------
# Functions of the primal values only (indices): no derivative
# ---------------------------------------------------------------------------


def _index_function(func, jax_name: str) -> Primitive:
    prim = Primitive(func.__name__, func)

    def jax_kernel(*args, **params):
        import jax.numpy as jnp
        return getattr(jnp, jax_name)(*args, **params)

    prim.kernels["jax"] = jax_kernel

    def implementation(a, *args, **kwargs):
        return prim(primal_value(a), *args, **kwargs)

    implementation.__name__ = func.__name__
    register_function(func, implementation)
    return prim


nanargmax = _index_function(np.nanargmax, "nanargmax")
nanargmin = _index_function(np.nanargmin, "nanargmin")
argpartition = _index_function(np.argpartition, "argpartition")


# ---------------------------------------------------------------------------
# Selection: partition, piecewise, select
# ---------------------------------------------------------------------------


@implements(np.partition)
def _partition(a, kth, axis=-1, kind="introselect", order=None):
    """The elements ``np.argpartition`` picks, so the derivative follows them."""
    if axis is None:
        a, axis = _ravel(a), 0
    axis = normalize_axis(axis, len(shape_of(a)))
    return _take_along_axis(a, argpartition(primal_value(a), kth, axis=axis), axis=axis)


def _is_array(x) -> bool:
    return hasattr(x, "ndim")


def _one_condition(condlist, ndim: int) -> bool:
    """NumPy's reading of ``condlist``: one condition, not a list of them, when it
    is a scalar or its first item is not an array or list (x not 0-d)."""
    if np.isscalar(condlist) or getattr(condlist, "ndim", None) == 0:
        return True
    if _is_array(condlist):  # its items are arrays from two axes on
        return len(shape_of(condlist)) < 2 and ndim != 0
    first = condlist[0]
    is_array = _is_array(first) and not isinstance(first, np.generic)
    return not (isinstance(first, (list, tuple)) or is_array) and ndim != 0


@implements(np.piecewise)
def _piecewise(x, condlist, funclist, *args, **kw):
    """np.piecewise: each function of ``funclist`` applied where its condition holds.

    On NumPy values each function receives the selected elements only, as in
    NumPy; under ``dualad_gpu`` (where a boolean mask cannot pick a traced
    number of elements) each receives all of ``x`` and a select keeps its
    part, as ``jax.numpy.piecewise`` does.
    """
    x = _as_array(x)
    ndim = len(shape_of(x))
    if _one_condition(condlist, ndim):
        condlist = [condlist]
    conds = [c if _is_array(c) else np.asarray(c, bool) for c in condlist]
    conds = [broadcast_to(c, shape=shape_of(x)) if shape_of(c) != shape_of(x) else c
             for c in conds]
    if len(conds) == len(funclist) - 1:  # the "otherwise" condition
        taken = conds[0]
        for c in conds[1:]:
            taken = _logical_or(taken, c)
        conds.append(_logical_not(taken))
    elif len(conds) != len(funclist):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    dtype = _dtype(x)
    y = np.zeros(shape_of(x), dtype)
    on_numpy = _on_numpy(x, *conds)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = _where(cond, func, y)
        elif not on_numpy:
            y = _where(cond, func(x, *args, **kw), y)
        else:
            cond = np.asarray(cond, bool)
            if ndim == 0:
                picked = getitem(reshape(x, shape=(1,)), index=(cond.reshape(1),))
            else:
                picked = getitem(x, index=tuple(np.nonzero(cond)))
            if shape_of(picked)[0] == 0:
                continue
            values = broadcast_to(func(picked, *args, **kw), shape=shape_of(picked))
            if ndim == 0:
                scattered = reshape(values, shape=())
            else:
                scattered = index_add(values, index=tuple(np.nonzero(cond)),
                                      shape=shape_of(x))
            y = _where(cond, scattered, y)
    return _astype(y, dtype)


@implements(np.select)
def _select(condlist, choicelist, default=0):
    """np.select: the first choice whose condition holds, a select of choices."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [_as_array(c) if not type(c) in (bool, int, float) else c
               for c in choicelist]
    dtype = np.result_type(*(_stand_in(c) for c in choices), _stand_in(default))
    conds = []
    for i, cond in enumerate(condlist):
        cond = _as_array(cond)
        if _dtype(cond) != bool:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
        conds.append(primal_value(cond))
    shape = np.broadcast_shapes(*(shape_of(c) for c in conds + choices), shape_of(default))
    result = default
    for cond, choice in zip(conds[::-1], choices[::-1]):
        result = _where(cond, choice, result)
    if shape_of(result) != shape:
        result = broadcast_to(result, shape=shape)
    return _astype(result, dtype)


# ---------------------------------------------------------------------------
# Complex parts of real input (complex Duals are refused elsewhere)
# ---------------------------------------------------------------------------


@implements(np.real)
def _real(val):
    return val


@implements(np.imag)
def _imag(val):
    return np.zeros(shape_of(val), _dtype(val))


@implements(np.angle)
def _angle(z, deg=False):
    """0 or π (180 with ``deg``), with derivative 0 (JAX's is nan at 0)."""
    value = primal_value(z)
    angle = arctan2(ON_PRIMAL["zeros_like"](value), value)
    return multiply(angle, np.asarray(180 / np.pi, angle.dtype)) if deg else angle


@implements(np.iscomplexobj)
def _iscomplexobj(x):
    return False


@implements(np.isrealobj)
def _isrealobj(x):
    return True


@implements(np.real_if_close)
def _real_if_close(a, tol=100):
    return a


# ---------------------------------------------------------------------------
# Histogram and unique: computed on NumPy values (their shapes depend on them)
# ---------------------------------------------------------------------------


def _numpy_only(name: str, *xs) -> None:
    if not _on_numpy(*xs):
        raise TypeError(
            f"np.{name} on Duals is computed on NumPy values and does not compile under "
            f"dualad_gpu (jax.jit); call it outside the transform, or on "
            f"dualad.primal_value(x) where its derivative is not needed")


@implements(np.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram: the counts do not depend smoothly on the data (derivative 0, as
    in JAX), but the bin edges computed from its minimum and maximum do, and so do
    weighted counts in the weights and densities in the edges."""
    _numpy_only("histogram", a, *(() if weights is None else (weights,)))
    if isinstance(bins, str):
        raise TypeError(f"np.histogram(..., bins={bins!r}) on a Dual is not supported: its "
                        "edges come from an estimator of the data; give a number of bins "
                        "or the edges, or call it on dualad.primal_value(a)")
    a = _ravel(_as_array(a))
    value = primal_value(a)
    plain_weights = None if weights is None else primal_value(weights)
    counts, edges = np.histogram(value, bins if not isinstance(bins, Dual) else
                                 primal_value(bins), range, weights=plain_weights)
    if isinstance(bins, Dual):
        edges = bins
    elif np.ndim(bins) == 0 and range is None and value.size:
        n = int(bins)
        lo, hi = amin(a, axis=(0,), keepdims=False), amax(a, axis=(0,), keepdims=False)
        if primal_value(lo) == primal_value(hi):
            lo, hi = subtract(lo, 0.5), add(hi, 0.5)
        step = divide(subtract(hi, lo), n)  # np.linspace's form, its last edge exact
        inner = add(lo, multiply(np.arange(n, dtype=edges.dtype), step))
        edges = concatenate(inner, reshape(hi, shape=(1,)), axis=0)
    if weights is not None and isinstance(weights, Dual):
        w = _ravel(weights)
        positions = np.searchsorted(primal_value(edges), value, side="right") - 1
        positions[value == primal_value(edges)[-1]] = len(counts) - 1
        keep = (positions >= 0) & (positions < len(counts))
        counts = index_add(getitem(w, index=(np.nonzero(keep)[0],)),
                           index=(positions[keep],), shape=counts.shape)
    if density:
        widths = subtract(getitem(edges, index=(slice(1, None),)),
                          getitem(edges, index=(slice(None, -1),)))
        total = sum_(counts, axis=(0,), keepdims=False)
        counts = divide(divide(counts, widths), total)
    return counts, edges


@implements(np.unique)
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
            **kwargs):
    """np.unique: the distinct values, each carrying the derivative of its first
    occurrence (jax.numpy.unique gives 0 there; it is that of the values that are
    selected, as for np.sort)."""
    _numpy_only("unique", ar)
    ar = _as_array(ar)
    found = np.unique(primal_value(ar), return_index=True, return_inverse=return_inverse,
                      return_counts=return_counts, axis=axis, **kwargs)
    if axis is None:
        values = getitem(_ravel(ar), index=(found[1],))
    else:
        axis = normalize_axis(axis, len(shape_of(ar)))
        values = getitem(ar, index=(slice(None),) * axis + (found[1],))
    extras = ([found[1]] if return_index else []) + list(found[2:])
    return values if not extras else (values, *extras)
