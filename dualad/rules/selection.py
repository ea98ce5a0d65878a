"""Selection: partition, piecewise, select, unique (and NumPy 2's unique_all, unique_counts,
unique_inverse, unique_values), histogram (and histogram_bin_edges, histogram2d,
histogramdd), real_if_close and the predicates isneginf, isposinf,
isreal and iscomplex.

Part of the statistics family (imported by :mod:`dualad.rules.statistics`).
Selections carry the derivative of the elements they select; what depends on
the data only through comparisons (indices, counts) has no derivative.
"""

from __future__ import annotations

import numpy as np

from ..dual import Dual, primal_value
from ..primitive import UFUNC_HANDLERS, Primitive, implements, register_function
from .elementwise import add, divide, multiply, subtract
from .elementwise import equal as _equal
from .elementwise import where as _where
from .linalg import matmul
from .reductions import amax, amin, sum_
from .shape import (
    _ravel,
    _take_along_axis,
    broadcast_to,
    concatenate,
    getitem,
    index_add,
    normalize_axis,
    reshape,
    shape_of,
)
from .values import as_array as _as_array, astype as _astype, dtype_of as _dtype
from .values import numpy_only as _numpy_only, on_numpy as _on_numpy, stand_in as _stand_in
from .values import values_only as _values_only

_logical_or = UFUNC_HANDLERS[np.logical_or]
_logical_not = UFUNC_HANDLERS[np.logical_not]

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


@implements(np.real_if_close)
def _real_if_close(a, tol=100):
    return a


# ---------------------------------------------------------------------------
# Histogram and unique: computed on NumPy values (their shapes depend on them)
# ---------------------------------------------------------------------------


def _edges_of(a, bins, range, edges):
    """NumPy's bin ``edges`` of the 1-D ``a``, as Duals where they depend on it: given
    ``bins`` that are a Dual, or ``bins`` edges spread from its minimum to its maximum."""
    if isinstance(bins, Dual):
        return bins
    if np.ndim(bins) == 0 and range is None and shape_of(a)[0] and isinstance(a, Dual):
        n = int(bins)
        lo, hi = amin(a, axis=(0,), keepdims=False), amax(a, axis=(0,), keepdims=False)
        if primal_value(lo) == primal_value(hi):
            lo, hi = subtract(lo, 0.5), add(hi, 0.5)
        lo, hi = _astype(lo, edges.dtype), _astype(hi, edges.dtype)
        step = divide(subtract(hi, lo), n)  # np.linspace's form, its last edge exact
        inner = add(lo, multiply(np.arange(n, dtype=edges.dtype), step))
        return concatenate(inner, reshape(hi, shape=(1,)), axis=0)
    return edges


def _bin_numbers(value: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each value (-1 or len(edges) - 1 outside), the last edge in the last bin."""
    positions = np.searchsorted(edges, value, side="right") - 1
    positions[value == edges[-1]] = len(edges) - 2
    return positions


@implements(np.histogram_bin_edges)
def _histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges spread from the data's minimum to its maximum follow them (as in JAX)."""
    if isinstance(bins, str):
        raise TypeError(f"np.histogram_bin_edges(..., bins={bins!r}) on a Dual is not "
                        "supported: its edges come from an estimator of the data; give a "
                        "number of bins or the edges, or call it on dualad.primal_value(a)")
    a = _ravel(_as_array(a))
    if not _on_numpy(a):
        return _traced_edges(a, bins, range)
    edges = np.histogram_bin_edges(primal_value(a), primal_value(bins), range,
                                   None if weights is None else primal_value(weights))
    return _edges_of(a, bins, range, edges)


# -- the same under dualad_gpu (jax.jit): no value is known, the shapes are ------


def _traced_edges(a, bins, range):
    """The bin edges of the 1-D ``a`` whose values are traced (as jax.numpy computes them)."""
    dtype = _dtype(a) if _dtype(a).kind == "f" else np.dtype(np.float64)
    if np.ndim(bins) == 1:
        return _astype(_as_array(bins), dtype)
    n = int(bins)
    if range is not None:
        lo, hi = (float(r) for r in range)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return np.linspace(lo, hi, n + 1, dtype=dtype)
    lo, hi = amin(a, axis=(0,), keepdims=False), amax(a, axis=(0,), keepdims=False)
    same = _equal(lo, hi)
    lo = _astype(_where(same, subtract(lo, 0.5), lo), dtype)
    hi = _astype(_where(same, add(hi, 0.5), hi), dtype)
    step = divide(subtract(hi, lo), n)
    inner = add(lo, multiply(np.arange(n, dtype=dtype), step))
    return concatenate(inner, reshape(hi, shape=(1,)), axis=0)


def _one_hot_kernel(xp):
    def kernel(values, *edges):
        """(samples, bins) indicators of the bin of each sample row, NumPy's bin rules
        (the last edge in the last bin, samples outside every bin in none)."""
        flat, valid, total = 0, True, 1
        for d in reversed(np.arange(len(edges))):
            e, v = edges[d], values[:, d]
            n = e.shape[0] - 1
            index = xp.searchsorted(e, v, side="right") - 1
            index = xp.where(v == e[-1], n - 1, index)
            valid = valid & (index >= 0) & (index < n)
            flat, total = flat + index * total, total * n
        hits = (flat[:, None] == xp.arange(total)[None, :]) & valid[:, None]
        return hits.astype(values.dtype)

    return kernel


def _one_hot_jax(values, *edges):
    import jax.numpy as jnp
    return _one_hot_kernel(jnp)(values, *edges)


_bin_one_hot = Primitive("histogram_bins", _one_hot_kernel(np))
_bin_one_hot.kernels["jax"] = _one_hot_jax


def _traced_histogramdd(sample, bins, range, density, weights):
    dims = shape_of(sample)[1]
    per_dim = bins if isinstance(bins, (list, tuple)) else [bins] * dims
    edges = [_traced_edges(getitem(sample, index=(slice(None), d)), per_dim[d],
                           None if range is None else range[d]) for d in np.arange(dims)]
    hits = _bin_one_hot(sample, *edges)
    nbins = tuple(shape_of(e)[0] - 1 for e in edges)
    if weights is None:
        counts = sum_(hits, axis=(0,), keepdims=False)
    else:
        counts = matmul(_astype(_as_array(weights), _dtype(hits)), hits)
    return _density(reshape(counts, shape=nbins), edges, density), edges


def _density(counts, edges: list, density):
    """The counts divided by their total and by the widths of their bins."""
    if not density:
        return counts
    dims = len(edges)
    counts = divide(counts, sum_(counts, axis=tuple(np.arange(dims)), keepdims=False))
    for d, e in enumerate(edges):
        widths = subtract(getitem(e, index=(slice(1, None),)),
                          getitem(e, index=(slice(None, -1),)))
        counts = divide(counts, reshape(widths, shape=tuple(
            shape_of(e)[0] - 1 if i == d else 1 for i in np.arange(dims))))
    return counts


@implements(np.histogramdd)
def _histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """np.histogramdd: as np.histogram in each dimension (counts without derivative,
    edges from the data's extremes, weighted counts in the weights, densities)."""
    if isinstance(sample, (list, tuple)):
        sample = np.stack([_ravel(_as_array(s)) for s in sample], axis=-1)
    sample = _as_array(sample)
    if len(shape_of(sample)) == 1:
        sample = reshape(sample, shape=shape_of(sample) + (1,))
    dims = shape_of(sample)[1]
    if isinstance(bins, str) or (isinstance(bins, (list, tuple))
                                 and any(isinstance(b, str) for b in bins)):
        raise TypeError("np.histogramdd(..., bins='...') on Duals is not supported; give "
                        "numbers of bins or the edges")
    if not _on_numpy(sample, *(() if weights is None else (weights,))):
        return _traced_histogramdd(sample, bins, range, density, weights)
    value = np.asarray(primal_value(sample))
    plain_bins = [primal_value(b) for b in bins] if isinstance(bins, (list, tuple)) else bins
    counts, edges = np.histogramdd(value, plain_bins, range,
                                   weights=None if weights is None else primal_value(weights))
    per_dim = bins if isinstance(bins, (list, tuple)) else [bins] * dims
    edges = [_edges_of(getitem(sample, index=(slice(None), d)), per_dim[d],
                       None if range is None else range[d], edges[d]) for d in np.arange(dims)]
    if isinstance(weights, Dual):
        numbers = [_bin_numbers(value[:, d], np.asarray(primal_value(e)))
                   for d, e in enumerate(edges)]
        keep = np.all([(n >= 0) & (n < size) for n, size in zip(numbers, counts.shape)],
                      axis=0)
        flat = np.ravel_multi_index(tuple(n[keep] for n in numbers), counts.shape)
        kept = getitem(_ravel(weights), index=(np.nonzero(keep)[0],))
        counts = index_add(_astype(kept, counts.dtype), index=(flat,), shape=(counts.size,))
        counts = reshape(counts, shape=tuple(len(primal_value(e)) - 1 for e in edges))
    return _density(counts, edges, density), edges


@implements(np.histogram2d)
def _histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """np.histogram2d: np.histogramdd of the pair, with its reading of ``bins``."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [bins, bins]
    counts, edges = _histogramdd([x, y], bins, range, density, weights)
    return counts, edges[0], edges[1]


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
    edges = _edges_of(a, bins, range, edges)
    if weights is not None and isinstance(weights, Dual):
        w = _ravel(weights)
        positions = _bin_numbers(value, np.asarray(primal_value(edges)))
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


def _unique_array_api(func):
    """np.unique_all/_counts/_inverse/_values: NumPy's result, its values gathered from
    the first occurrence of each (the indices, inverse and counts are integers)."""
    name = func.__name__

    def implementation(x):
        _numpy_only(name, x)
        x = _as_array(x)
        value = np.asarray(primal_value(x))
        found = func(value)
        values = found if name == "unique_values" else found.values
        distinct, first = np.unique(value.ravel(), return_index=True)
        numbers = first[np.minimum(np.searchsorted(distinct, values), len(distinct) - 1)]
        gathered = getitem(_ravel(x), index=(numbers,))
        return gathered if name == "unique_values" else found._replace(values=gathered)

    implementation.__name__ = f"_{name}"
    register_function(func, implementation)


for _func in (np.unique_all, np.unique_counts, np.unique_inverse, np.unique_values):
    _unique_array_api(_func)

# Predicates of the values (NumPy's isneginf/isposinf/isreal/iscomplex are Python
# functions that would convert a Dual): boolean results, no derivative.
isneginf = _values_only(np.isneginf, "isneginf")
isposinf = _values_only(np.isposinf, "isposinf")
isreal = _values_only(np.isreal, "isreal")
iscomplex = _values_only(np.iscomplex, "iscomplex")
