"""Statistics: median, quantiles, average, the nan-functions, ptp, cov, corrcoef.

Everything here is a composition of primitives of the table (``where``,
``getitem``, ``sum``, ``max``, ...) and of the permutations that sorting and
selection compute on the primal values, so every mode (forward, reverse,
hyper-dual, ``dualad_gpu``) differentiates it with no rule of its own.

Conventions, those of JAX:

* a quantile gathers the sorted values below and above its position and
  interpolates, so its derivative goes to those one or two elements (the
  median: the middle one, or half to each of the two middle ones); ties take
  the order of a stable sort. The derivative in ``q`` is ``(high - low)·(n-1)``,
  0 where ``q·(n-1)`` is an integer (there ``low`` and ``high`` coincide);
* the nan-functions replace NaN by the neutral element (``where``, a select),
  so the derivative is exactly 0 at the NaN positions and no NaN reaches the
  derivative of the other elements, in reverse mode too;
* selections (``partition``, ``sort``, ``piecewise``, ``select``, in
  :mod:`dualad.rules.selection`) carry the derivative of the elements they select.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..dual import Dual, primal_value
from ..primitive import UFUNC_HANDLERS, implements
from .elementwise import (add, ceil, clip, divide, floor, greater, greater_equal,
                          isinf, isnan, maximum, minimum, multiply, sqrt, square, subtract)
from .values import as_array as _as_array, astype as _astype, dtype_of as _dtype
from .values import on_numpy as _on_numpy, stand_in as _stand_in
from .elementwise import where as _where  # (NumPy's functions take a where= keyword)
from .reductions import (_mean, amax, amin, cumprod, cumsum, keepdims_shape, normalize_axes,
                         prod, sum_)
from .shape import (ON_PRIMAL, _diagonal, _ravel, _take_along_axis, argsort, broadcast_to,
                    concatenate, getitem, normalize_axis, reshape, shape_of, transpose)

_any = ON_PRIMAL["any"]
_all = ON_PRIMAL["all"]
_logical_or = UFUNC_HANDLERS[np.logical_or]
_logical_not = UFUNC_HANDLERS[np.logical_not]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _refuse(name: str, **given) -> None:
    for key, value in given.items():
        if value is not None:
            raise TypeError(f"np.{name}(..., {key}=...) is not supported on Duals; "
                            "use the returned value instead")


def _reduce_axes_last(a, axes: tuple):
    """``a`` with the reduced ``axes`` moved to the end and merged into one."""
    shape = shape_of(a)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    if kept + axes != tuple(range(len(shape))):
        a = transpose(a, axes=kept + axes)
    rest = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    if len(axes) != 1:
        a = reshape(a, shape=rest + (n,))
    return a, rest, n


# ---------------------------------------------------------------------------
# Quantiles: sort along the reduced axes, gather the neighbours of the position
# ---------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(a, q, axis, method, keepdims, squash_nans, name):
    """np.quantile (and median, percentile and the nan-versions) on sorted values."""
    if method not in _METHODS:
        raise ValueError(
            f"np.{name}(..., method={method!r}) is not supported on Duals; supported "
            f"methods: {', '.join(_METHODS)} (those jax.numpy differentiates, with "
            "NumPy's rounding for 'nearest')")
    out_dtype = np.result_type(_stand_in(a), _stand_in(q))  # NumPy's: a Python q is weak
    a, q = _as_array(a), _as_array(q)
    q_shape = shape_of(q)
    if len(q_shape) > 1:
        raise ValueError(f"np.{name} on Duals takes a q of at most one axis, got shape "
                         f"{q_shape}")
    if _on_numpy(q):
        value = np.asarray(primal_value(q))
        if not np.all((0 <= value) & (value <= 1)):
            raise ValueError("Quantiles must be in the range [0, 1]")
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape))
    a, rest, n = _reduce_axes_last(a, axes)
    if n == 0 and not squash_nans and name != "median":  # (NumPy: an IndexError)
        raise ValueError(f"np.{name} of an empty axis is not defined")
    if n == 0 or (squash_nans and 0 in rest):
        # NumPy's answer: the mean of an empty slice, NaN (the nan-versions, for an
        # empty a, return np.nanmean(a, axis), whatever q is)
        if n == 0:
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)
        out = keepdims_shape(shape, axes) if keepdims else rest
        if squash_nans:
            q_shape, out_dtype = (), np.result_type(_stand_in(a), 0.0)
        return np.full(q_shape + tuple(out), np.nan, out_dtype)
    last = len(rest)
    if not _on_numpy(a) or np.isnan(primal_value(a)).any():
        # a NaN in a slice makes its quantiles NaN (the nan-versions: an all-NaN
        # slice), and has derivative 0
        nan = isnan(a)
        a = _where(nan if squash_nans else _any(nan, axis=last, keepdims=True), np.nan, a)
    order = argsort(primal_value(a), axis=last, kind="stable")  # NaN sorts last
    s = _take_along_axis(a, order, axis=last)
    if squash_nans:
        count = sum_(_logical_not(isnan(primal_value(a))).astype(_dtype(q)),
                     axis=(last,), keepdims=False)
        q = reshape(q, shape=q_shape + (1,) * last)
    else:
        count = n
    pos = multiply(q, subtract(count, 1))  # Q, or Q + rest for the nan-versions
    low_f = floor(primal_value(pos))
    high_f = ceil(primal_value(pos))
    top = subtract(count, 1)
    low = maximum(minimum(low_f, top), 0).astype(np.intp)
    high = maximum(minimum(high_f, top), 0).astype(np.intp)
    if method == "nearest":  # NumPy rounds half to even (JAX would round down)
        low = high = maximum(minimum(ON_PRIMAL["around"](primal_value(pos)), top),
                             0).astype(np.intp)
    elif method == "lower":
        high = low
    elif method == "higher":
        low = high
    if squash_nans:  # one position per row
        lo_value = _gather_rows(s, low, rest)
        hi_value = _gather_rows(s, high, rest)
    else:
        lo_value = _gather_same(s, low, rest)
        hi_value = _gather_same(s, high, rest)
    if method == "linear":
        gamma = subtract(pos, low_f)  # carries the derivative in q
        if not squash_nans and len(q_shape):
            gamma = reshape(gamma, shape=q_shape + (1,) * last)
        diff = subtract(hi_value, lo_value)
        result = _where(greater_equal(primal_value(gamma), 0.5),  # NumPy's _lerp
                        subtract(hi_value, multiply(diff, subtract(1, gamma))),
                        add(lo_value, multiply(diff, gamma)))
    elif method == "midpoint":
        result = multiply(add(lo_value, hi_value), 0.5)
    else:
        result = lo_value
    result = _astype(result, out_dtype)
    if keepdims:
        result = reshape(result, shape=q_shape + keepdims_shape(shape, axes))
    return result


def _gather_same(s, index, rest: tuple):
    """``s[..., index]`` with ``index`` of shape Q (the same for every row): Q + rest."""
    q_ndim = len(shape_of(index))
    if not q_ndim and isinstance(index, (np.ndarray, np.generic)):
        index = int(index)  # basic indexing: a view, and a pad as its transpose
    out = getitem(s, index=(Ellipsis, index))
    if q_ndim:  # q's axis comes first, as NumPy puts it
        n = len(rest)
        out = transpose(out, axes=(n,) + tuple(range(n)))
    return out


def _gather_rows(s, index, rest: tuple):
    """``s[..., index]`` with one index per row (``index`` of shape Q + rest)."""
    grids = tuple(np.arange(m).reshape((m,) + (1,) * (len(rest) - 1 - i))
                  for i, m in enumerate(rest))
    return getitem(s, index=grids + (index,))


def _check_quantile_call(name, out, weights):
    _refuse(name, out=out)
    if weights is not None:
        raise TypeError(f"np.{name}(..., weights=...) (method='inverted_cdf') is not "
                        "supported on Duals")


@implements(np.quantile)
def _quantile_(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    _check_quantile_call("quantile", out, weights)
    return _quantile(a, q, axis, interpolation or method, keepdims, False, "quantile")


@implements(np.nanquantile)
def _nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None, interpolation=None):
    _check_quantile_call("nanquantile", out, weights)
    return _quantile(a, q, axis, interpolation or method, keepdims, True, "nanquantile")


def _percent(q):
    return q / 100 if type(q) in (int, float) else divide(_as_array(q), 100)


def _check_percent(q):
    if _on_numpy(q):
        value = np.asarray(primal_value(q))
        if not np.all((0 <= value) & (value <= 100)):
            raise ValueError("Percentiles must be in the range [0, 100]")


@implements(np.percentile)
def _percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    _check_quantile_call("percentile", out, weights)
    _check_percent(q)
    return _quantile(a, _percent(q), axis, interpolation or method, keepdims, False,
                     "percentile")


@implements(np.nanpercentile)
def _nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):
    _check_quantile_call("nanpercentile", out, weights)
    _check_percent(q)
    return _quantile(a, _percent(q), axis, interpolation or method, keepdims, True,
                     "nanpercentile")


@implements(np.median)
def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _refuse("median", out=out)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


@implements(np.nanmedian)
def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _refuse("nanmedian", out=out)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


# ---------------------------------------------------------------------------
# The nan-functions: NaN replaced by the neutral element with a select, so the
# derivative there is 0 and no NaN reaches the others' (as jax.numpy's)
# ---------------------------------------------------------------------------


def _replace_nan(a, value):
    a = _as_array(a)
    if isinstance(a, Dual) or not _on_numpy(a):
        return _where(isnan(a), value, a)
    return np.where(np.isnan(a), value, a)


def _nan_reduction(name, primitive, neutral, a, axis, dtype, out, keepdims, initial, where_):
    _refuse(name, out=out, initial=initial, where=where_)
    a = _replace_nan(a, neutral)
    if dtype is not None:
        a = _astype(a, np.dtype(dtype))
    return primitive(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))


@implements(np.nansum)
def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction("nansum", sum_, 0, a, axis, dtype, out, keepdims, initial, where)


@implements(np.nanprod)
def _nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction("nanprod", prod, 1, a, axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name, primitive, fill, a, axis, out, keepdims, initial, where_):
    _refuse(name, out=out, initial=initial, where=where_)
    a = _as_array(a)
    axes = normalize_axes(axis, len(shape_of(a)))
    result = primitive(_replace_nan(a, fill), axis=axes, keepdims=bool(keepdims))
    every_nan = _all(isnan(primal_value(a)), axis=axes, keepdims=bool(keepdims))
    return _where(every_nan, np.nan, result)  # an all-NaN slice gives NaN, as NumPy


@implements(np.nanmax)
def _nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extremum("nanmax", amax, -np.inf, a, axis, out, keepdims, initial, where)


@implements(np.nanmin)
def _nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extremum("nanmin", amin, np.inf, a, axis, out, keepdims, initial, where)


def _valid_count(a, axes, keepdims, dtype):
    """The number of elements that are not NaN along ``axes`` (a plain array)."""
    return sum_(_logical_not(isnan(primal_value(a))).astype(dtype), axis=axes,
                keepdims=keepdims)


@implements(np.nanmean)
def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _refuse("nanmean", out=out, where=where)
    a = _as_array(a)
    if dtype is not None:
        a = _astype(a, np.dtype(dtype))
    axes = normalize_axes(axis, len(shape_of(a)))
    total = sum_(_replace_nan(a, 0), axis=axes, keepdims=bool(keepdims))
    count = _valid_count(a, axes, bool(keepdims), _dtype(total))
    # an all-NaN slice gives NaN, as NumPy, with derivative 0 in every mode
    return _where(greater(count, 0), divide(total, maximum(count, 1)), np.nan)


@implements(np.nanvar)
def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
            mean=None, correction=None):
    _refuse("nanvar", out=out, where=where, mean=mean)
    ddof = ddof if correction is None else correction
    a = _as_array(a)
    if dtype is not None:
        a = _astype(a, np.dtype(dtype))
    axes = normalize_axes(axis, len(shape_of(a)))
    centred = subtract(a, _nanmean(a, axes, keepdims=True))
    total = sum_(square(_replace_nan(centred, 0)), axis=axes, keepdims=bool(keepdims))
    dof = subtract(_valid_count(a, axes, bool(keepdims), _dtype(total)), ddof)
    with np.errstate(invalid="ignore", divide="ignore"):  # dof <= 0: NaN, as NumPy
        return _where(greater(dof, 0), divide(total, maximum(dof, 1)), np.nan)


@implements(np.nanstd)
def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
            mean=None, correction=None):
    return sqrt(_nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


def _nan_scan(name, primitive, neutral, a, axis, dtype, out):
    _refuse(name, out=out)
    a = _replace_nan(a, neutral)
    if dtype is not None:
        a = _astype(a, np.dtype(dtype))
    if axis is None:
        a, axis = _ravel(a), 0
    return primitive(a, axis=normalize_axis(axis, len(shape_of(a))))


@implements(np.nancumsum)
def _nancumsum(a, axis=None, dtype=None, out=None):
    return _nan_scan("nancumsum", cumsum, 0, a, axis, dtype, out)


@implements(np.nancumprod)
def _nancumprod(a, axis=None, dtype=None, out=None):
    return _nan_scan("nancumprod", cumprod, 1, a, axis, dtype, out)


@implements(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    dtype = _dtype(x)
    if dtype.kind != "f":
        return x
    info = np.finfo(dtype)
    value = primal_value(x)
    infinite = isinf(value)
    x = _where(isnan(value), np.asarray(nan, dtype), x)
    x = _where(infinite & greater(value, 0),
              np.asarray(info.max if posinf is None else posinf, dtype), x)
    return _where(infinite & _logical_not(greater(value, 0)),
                 np.asarray(info.min if neginf is None else neginf, dtype), x)


# ---------------------------------------------------------------------------
# Averages, spread, covariance
# ---------------------------------------------------------------------------


@implements(np.average)
def _average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """np.average: differentiable in the data and in the weights."""
    a = _as_array(a)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape))
    keepdims = bool(keepdims)
    if weights is None:
        avg = _mean(a, axes, keepdims=keepdims)
        scl = np.asarray(np.prod(shape, dtype=np.int64) / max(1, np.prod(shape_of(avg),
                                                                          dtype=np.int64)),
                         _dtype(avg))
    else:
        w = _as_array(weights)
        if shape_of(w) != shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            given = normalize_axes(axis, len(shape)) if isinstance(axis, (int, np.integer)) \
                else tuple(normalize_axis(int(i), len(shape)) for i in axis)
            if shape_of(w) != tuple(shape[i] for i in given):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            order = tuple(int(i) for i in np.argsort(given))
            if order != tuple(range(len(order))):
                w = transpose(w, axes=order)
            w = reshape(w, shape=tuple(n if i in axes else 1 for i, n in enumerate(shape)))
        if _dtype(a).kind in "biu":
            dtype = np.result_type(_dtype(a), _dtype(w), "f8")
        else:
            dtype = np.result_type(_dtype(a), _dtype(w))
        scl = sum_(_astype(w, dtype), axis=axes, keepdims=keepdims)
        if _on_numpy(scl) and np.any(primal_value(scl) == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = divide(sum_(multiply(_astype(a, dtype), _astype(w, dtype)), axis=axes,
                          keepdims=keepdims), scl)
    if not returned:
        return avg
    if shape_of(scl) != shape_of(avg):
        scl = broadcast_to(scl, shape=shape_of(avg))
    return avg, scl


@implements(np.ptp)
def _ptp(a, axis=None, out=None, keepdims=False):
    _refuse("ptp", out=out)
    axes = normalize_axes(axis, len(shape_of(a)))
    return subtract(amax(a, axis=axes, keepdims=bool(keepdims)),
                    amin(a, axis=axes, keepdims=bool(keepdims)))


def _rows(x, rowvar: bool, dtype):
    """``x`` as a 2-d array of variables (rows) by observations, in ``dtype``."""
    x = _astype(_as_array(x), dtype)
    if len(shape_of(x)) > 2:
        raise ValueError("m has more than 2 dimensions")
    if len(shape_of(x)) < 2:
        x = reshape(x, shape=(1,) * (2 - len(shape_of(x))) + shape_of(x))
    return x


@implements(np.cov)
def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
         dtype=None):
    """np.cov, written as NumPy writes it: differentiable in m, y and aweights."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if dtype is None:
        dtype = np.result_type(*(_stand_in(v) for v in (m, y) if v is not None), np.float64)
    m_ndim = len(shape_of(_as_array(m)))
    X = _rows(m, rowvar, dtype)
    if not rowvar and m_ndim != 1:
        X = transpose(X, axes=(1, 0))
    if shape_of(X)[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        Y = _rows(y, rowvar, dtype)
        if not rowvar and shape_of(Y)[0] != 1:
            Y = transpose(Y, axes=(1, 0))
        X = concatenate(X, Y, axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(X)[1]
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        given = _astype(_as_array(given), np.dtype(float))
        if len(shape_of(given)) > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if shape_of(given)[0] != n:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        if _on_numpy(given):
            value = primal_value(given)
            if name == "fweights" and not np.all(value == np.around(value)):
                raise TypeError("fweights must be integer")
            if np.any(value < 0):
                raise ValueError(f"{name} cannot be negative")
        w = given if w is None else multiply(w, given)
    avg, w_sum = _average(X, axis=1, weights=w, returned=True)
    w_sum = getitem(w_sum, index=(0,))
    if w is None:
        fact = n - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = subtract(w_sum, ddof)
    else:
        a_w = _astype(_as_array(aweights), np.dtype(float))
        fact = subtract(w_sum, divide(multiply(ddof, sum_(multiply(w, a_w), axis=(0,),
                                                          keepdims=False)), w_sum))
    if _on_numpy(fact) and primal_value(fact) <= 0:
        fact = 0.0  # NumPy warns and divides by 0
    X = subtract(X, reshape(avg, shape=(shape_of(avg)[0], 1)))
    X_T = transpose(X if w is None else multiply(X, w), axes=(1, 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = multiply(np.matmul(X, X_T), divide(np.ones((), dtype), fact))
    return reshape(c, shape=tuple(k for k in shape_of(c) if k != 1))


@implements(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None):
    c = _cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return divide(c, c)  # nan for a degenerate variance, 1 otherwise
    std = sqrt(_diagonal(c))
    k = shape_of(std)[0]
    c = divide(divide(c, reshape(std, shape=(k, 1))), reshape(std, shape=(1, k)))
    return clip(c, -1.0, 1.0)


from . import selection  # noqa: E402,F401  (partition, piecewise, select, unique, histogram, ...)
