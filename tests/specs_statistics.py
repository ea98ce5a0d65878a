"""Spec rows: selection and statistics (median, quantiles, nan-functions, ...).

Rows as in ``specs.py`` (which adds them to ``SPECS``); give each row its
``jax=`` counterpart where JAX has the function.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from specs import ARRAY2, ARRAY3, GAP, Spec, jnp, near, near_integer, small, ties

REDUCE = (((5,),), ((3, 4),), ((2, 3, 4),))


def with_nans(lo: float, hi: float, count: int = 1):
    """Uniform in [lo, hi] with ``count`` elements NaN (none in a 0-d array). Rows keep
    at least one value in every slice they reduce: an all-NaN slice gives NaN."""
    def draw(rng, shape):
        x = rng.uniform(lo, hi, shape)
        if x.ndim:
            x.flat[rng.choice(x.size, min(count, x.size - 1), replace=False)] = np.nan
        return x
    return draw


def with_nonfinite(rng, shape):
    """Uniform in [-2, 2] with a NaN, an inf and a -inf."""
    x = rng.uniform(-2.0, 2.0, shape)
    x.flat[rng.choice(x.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    return x


def _axes(f, *args, **kwargs):
    """f over all elements, the first axis, and the last axis with keepdims."""
    return lambda x: (f(x, *args, **kwargs), f(x, *args, axis=0, **kwargs),
                      f(x, *args, axis=-1, keepdims=True, **kwargs))


def _axes_jax(name, *args, **kwargs):
    return lambda x: _axes(getattr(jnp, name), *args, **kwargs)(x)


def _nan_ties(x) -> bool:
    x = np.asarray(x)
    return ties(x[~np.isnan(x)])


def _near_position(q, n: int) -> bool:
    """q·(n-1) near an integer, where the quantile's derivative in q jumps."""
    return near_integer(np.asarray(q) * (n - 1), 10 * GAP)


def _near_bin_edge(x, bins: int) -> bool:
    """An element near an inner edge of ``bins`` equal bins over [min, max]."""
    lo, hi = np.min(x), np.max(x)
    inner = lo + (hi - lo) * np.arange(1, bins) / bins
    return bool(np.any(np.abs(x[:, None] - inner[None, :]) < 10 * GAP))


def _pieces(x):
    return np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, np.sin, 0.25])


def _pieces_jax(x):
    return jnp.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, jnp.sin, 0.25])


ROWS: list[Spec] = [
    # -- median and quantiles ------------------------------------------------
    Spec("median", _axes(np.median), REDUCE, avoid=ties, jax=_axes_jax("median")),
    Spec("median", lambda x: np.median(x, axis=(0, 2)), ARRAY3, avoid=ties,
         variant="axis=(0, 2)", jax=lambda x: jnp.median(x, axis=(0, 2))),
    Spec("quantile", _axes(np.quantile, 0.3), REDUCE, avoid=ties,
         jax=_axes_jax("quantile", 0.3)),
    Spec("quantile", lambda x: (np.quantile(x, [0.1, 0.5, 0.8], axis=1),
                                np.quantile(x, np.array([0.25, 0.9]), keepdims=True)),
         (((3, 5),),), avoid=ties, variant="q array",
         jax=lambda x: (jnp.quantile(x, jnp.array([0.1, 0.5, 0.8]), axis=1),
                        jnp.quantile(x, jnp.array([0.25, 0.9]), keepdims=True))),
    Spec("quantile", lambda x, q: np.quantile(x, q, axis=-1), (((6,), ()), ((2, 5), (3,))),
         ((-2.0, 2.0), (0.05, 0.95)),
         avoid=lambda x, q: ties(x) or _near_position(q, x.shape[-1]),
         variant="differentiable q", jax=lambda x, q: jnp.quantile(x, q, axis=-1)),
    Spec("quantile", lambda x: tuple(np.quantile(x, 0.35, axis=1, method=m)
                                     for m in ("lower", "higher", "nearest", "midpoint")),
         (((3, 6),),), avoid=ties, variant="methods",
         jax=lambda x: tuple(jnp.quantile(x, 0.35, axis=1, method=m)
                             for m in ("lower", "higher", "nearest", "midpoint"))),
    Spec("percentile", lambda x: (np.percentile(x, 30), np.percentile(x, [10, 90], axis=0)),
         REDUCE[1:], avoid=ties,
         jax=lambda x: (jnp.percentile(x, 30), jnp.percentile(x, jnp.array([10, 90]), axis=0))),
    Spec("percentile", lambda x, q: np.percentile(x, q), (((7,), ()),), ((-2.0, 2.0), (5, 95)),
         avoid=lambda x, q: ties(x) or _near_position(q / 100, x.size),
         variant="differentiable q", jax=lambda x, q: jnp.percentile(x, q)),
    Spec("nanmedian", _axes(np.nanmedian), REDUCE, with_nans(-2.0, 2.0), avoid=_nan_ties,
         jax=_axes_jax("nanmedian")),
    Spec("nanquantile", lambda x: (np.nanquantile(x, 0.3, axis=1),
                                   np.nanquantile(x, [0.2, 0.7], keepdims=True)),
         (((3, 6),),), with_nans(-2.0, 2.0, 3), avoid=_nan_ties,
         jax=lambda x: (jnp.nanquantile(x, 0.3, axis=1),
                        jnp.nanquantile(x, jnp.array([0.2, 0.7]), keepdims=True))),
    Spec("nanquantile", lambda x, q: np.nanquantile(x, q), (((7,), ()),),
         (with_nans(-2.0, 2.0), (0.05, 0.95)),
         avoid=lambda x, q: _nan_ties(x) or _near_position(q, 5),
         variant="differentiable q", jax=lambda x, q: jnp.nanquantile(x, q)),
    Spec("nanpercentile", lambda x: np.nanpercentile(x, [15, 60], axis=-1), (((2, 6),),),
         with_nans(-2.0, 2.0, 2), avoid=_nan_ties,
         jax=lambda x: jnp.nanpercentile(x, jnp.array([15, 60]), axis=-1)),
    # -- averages ------------------------------------------------------------
    Spec("average", lambda x: (np.average(x), np.average(x, axis=0, returned=True)), REDUCE,
         jax=lambda x: (jnp.average(x), jnp.average(x, axis=0, returned=True))),
    Spec("average", lambda x, w: (np.average(x, weights=w),
                                  np.average(x, axis=-1, weights=w, returned=True)),
         (((5,), (5,)), ((3, 4), (3, 4))), ((-2.0, 2.0), (0.5, 2.0)), variant="weights",
         jax=lambda x, w: (jnp.average(x, weights=w),
                           jnp.average(x, axis=-1, weights=w, returned=True))),
    Spec("average", lambda x, w: (np.average(x, axis=1, weights=w),
                                  np.average(x, axis=1, weights=w, keepdims=True)),
         (((3, 4), (4,)),), ((-2.0, 2.0), (0.5, 2.0)), variant="weights along an axis",
         jax=lambda x, w: (jnp.average(x, axis=1, weights=w),
                           jnp.average(x, axis=1, weights=w, keepdims=True))),
    Spec("ptp", _axes(np.ptp), REDUCE, avoid=ties, jax=_axes_jax("ptp")),
    # -- nan-functions: NaN in the inputs, derivative 0 there -------------------
    Spec("nansum", _axes(np.nansum), REDUCE, with_nans(-2.0, 2.0), jax=_axes_jax("nansum")),
    Spec("nanprod", _axes(np.nanprod), REDUCE, with_nans(-1.5, 1.5),
         jax=_axes_jax("nanprod")),
    Spec("nanmean", _axes(np.nanmean), REDUCE, with_nans(-2.0, 2.0),
         jax=_axes_jax("nanmean")),
    Spec("nanvar", _axes(np.nanvar), REDUCE, with_nans(-2.0, 2.0), jax=_axes_jax("nanvar")),
    Spec("nanvar", lambda x: np.nanvar(x, axis=1, ddof=1), ARRAY2, with_nans(-2.0, 2.0, 1),
         variant="ddof=1", jax=lambda x: jnp.nanvar(x, axis=1, ddof=1)),
    # one NaN: every slice keeps two values (std 0 over one value has derivative 0,
    # where JAX's sqrt'(0)·0 gives nan)
    Spec("nanstd", _axes(np.nanstd), REDUCE[:2], with_nans(-2.0, 2.0, 1),
         jax=_axes_jax("nanstd")),
    Spec("nanmax", _axes(np.nanmax), REDUCE, with_nans(-2.0, 2.0), avoid=_nan_ties,
         jax=_axes_jax("nanmax")),
    Spec("nanmin", _axes(np.nanmin), REDUCE, with_nans(-2.0, 2.0), avoid=_nan_ties,
         jax=_axes_jax("nanmin")),
    Spec("nancumsum", lambda x: (np.nancumsum(x), np.nancumsum(x, axis=0)), REDUCE,
         with_nans(-2.0, 2.0), jax=lambda x: (jnp.nancumsum(x), jnp.nancumsum(x, axis=0))),
    Spec("nancumprod", lambda x: (np.nancumprod(x), np.nancumprod(x, axis=-1)), REDUCE,
         with_nans(-1.5, 1.5), jax=lambda x: (jnp.nancumprod(x), jnp.nancumprod(x, axis=-1))),
    Spec("nan_to_num", lambda x: np.nan_to_num(x, nan=0.5, posinf=10.0, neginf=-10.0),
         (((5,),), ((2, 3),)), with_nonfinite,
         jax=lambda x: jnp.nan_to_num(x, nan=0.5, posinf=10.0, neginf=-10.0)),
    Spec("nan_to_num", np.nan_to_num, REDUCE, with_nans(-2.0, 2.0), variant="defaults",
         jax=lambda x: jnp.nan_to_num(x)),
    # -- selection -----------------------------------------------------------
    # the order of the unselected elements is NumPy's (or JAX's): compare the kth
    # element and order-free functions of the two parts
    Spec("partition", lambda x: (np.partition(x, 2)[..., 2],
                                 np.sum(np.partition(x, 2)[..., :2] ** 2, axis=-1),
                                 np.sum(np.partition(x, 1, axis=0)[2:] ** 3, axis=0)),
         (((5,),), ((3, 4),)), avoid=ties,
         jax=lambda x: (jnp.partition(x, 2)[..., 2],
                        jnp.sum(jnp.partition(x, 2)[..., :2] ** 2, axis=-1),
                        jnp.sum(jnp.partition(x, 1, axis=0)[2:] ** 3, axis=0))),
    Spec("sort", lambda x: (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None)), ARRAY3,
         avoid=ties, variant="axes",
         jax=lambda x: (jnp.sort(x), jnp.sort(x, axis=0), jnp.sort(x, axis=None))),
    Spec("piecewise", _pieces, (((7,),), ((2, 3),), ((),)), (-2.0, 2.0),
         avoid=lambda x: near(np.abs(x), 0.5), jax=_pieces_jax),
    Spec("piecewise", lambda x: np.piecewise(x, x > 0, [np.exp, lambda v: -v]), (((6,),),),
         avoid=small, variant="one condition, otherwise",
         jax=lambda x: jnp.piecewise(x, [x > 0], [jnp.exp, lambda v: -v])),
    Spec("select", lambda x, y: np.select([x < -0.5, y > 0.0], [x ** 2, x * y], default=0.25),
         (((5,), (5,)), ((2, 3), (3,))), avoid=lambda x, y: near(x, -0.5) or small(y),
         jax=lambda x, y: jnp.select([x < -0.5, y > 0.0], [x ** 2, x * y], default=0.25)),
    Spec("unique", lambda x: np.unique(x), (((6,),), ((2, 3),)), avoid=ties),
    Spec("unique", lambda x: (np.unique(x, axis=0),
                              np.unique(x, return_index=True, return_counts=True)),
         (((3, 2),),), avoid=ties, variant="axis, return_index"),
    # -- covariance ----------------------------------------------------------
    Spec("cov", lambda x: (np.cov(x), np.cov(x, rowvar=False), np.cov(x, bias=True),
                           np.cov(x, ddof=2)), (((3, 5),), ((5,),)),
         jax=lambda x: (jnp.cov(x), jnp.cov(x, rowvar=False), jnp.cov(x, bias=True),
                        jnp.cov(x, ddof=2))),
    Spec("cov", lambda x, y: np.cov(x, y), (((2, 5), (5,)), ((5,), (5,))), variant="y",
         jax=lambda x, y: jnp.cov(x, y)),
    Spec("cov", lambda x, w: (np.cov(x, aweights=w), np.cov(x, aweights=w, ddof=0),
                              np.cov(x, fweights=[1, 2, 1, 3, 1], aweights=w)),
         (((3, 5), (5,)),), ((-2.0, 2.0), (0.5, 2.0)), variant="weights",
         jax=lambda x, w: (jnp.cov(x, aweights=w), jnp.cov(x, aweights=w, ddof=0),
                           jnp.cov(x, fweights=jnp.array([1, 2, 1, 3, 1]), aweights=w))),
    Spec("corrcoef", lambda x: np.corrcoef(x), (((3, 5),),),
         jax=lambda x: jnp.corrcoef(x)),
    Spec("corrcoef", lambda x, y: (np.corrcoef(x, y), np.corrcoef(x.T, y[:, None], rowvar=False)),
         (((2, 5), (5,)),), variant="y",
         jax=lambda x, y: (jnp.corrcoef(x, y), jnp.corrcoef(x.T, y[:, None], rowvar=False))),
    # -- real input seen as complex ----------------------------------------------
    # (not x.real: on a HyperDual, .real is its value part)
    Spec("real", np.real, (((5,),), ((2, 3),)), jax=lambda x: jnp.real(x)),
    Spec("imag", lambda x: np.imag(x) + x, (((5,),), ((2, 3),)),
         jax=lambda x: jnp.imag(x) + x),
    Spec("angle", lambda x: (np.angle(x) * x, np.angle(x, deg=True) + x), (((5,),), ((2, 3),)),
         avoid=small, jax=lambda x: (jnp.angle(x) * x, jnp.angle(x, deg=True) + x)),
    Spec("histogram", lambda x: np.histogram(x, 4, density=True), (((9,),),),
         avoid=lambda x: ties(x) or _near_bin_edge(x, 4),
         jax=lambda x: jnp.histogram(x, 4, density=True)),
    Spec("histogram", lambda x, w: np.histogram(x, 3, weights=w), (((8,), (8,)),),
         avoid=lambda x, w: ties(x) or _near_bin_edge(x, 3), variant="weights",
         jax=lambda x, w: jnp.histogram(x, 3, weights=w)),
]

# Shapes that depend on the values: refused under dualad_gpu, as by jax.jit.
ROWS = [replace(s, gpu=False) if s.name in ("unique", "histogram") else s for s in ROWS]
