"""Spec rows: differences, sums, interpolation, building and splitting arrays.

Rows as in ``specs.py`` (which adds them to ``SPECS``); give each row its
``jax=`` counterpart where JAX has the function.
"""

import warnings
from dataclasses import replace

import numpy as np
from specs import GAP, Spec, jnp, near_integer, small, ties

from dualad.rules.calculus import CROSS_OF_2_VECTORS


def increasing(lo: float = 0.3, hi: float = 1.0):
    """Coordinates increasing along the last axis by steps uniform in [lo, hi]."""
    def draw(rng, shape):
        return np.cumsum(rng.uniform(lo, hi, shape), axis=-1) - 1.0
    return draw


def near_any(x, points, gap: float = GAP) -> bool:
    """An element of ``x`` within ``gap`` of one of ``points`` (kinks of interp)."""
    return bool(np.any(np.abs(np.asarray(x)[..., None] - np.asarray(points)) < gap))


# Sample points of interp: constant, unevenly spaced, from 0 to 3.
XP = np.array([0.0, 0.4, 1.1, 1.5, 2.2, 3.0])
# Abscissae of polyfit: constant.
T = np.linspace(-1.0, 1.0, 7)


def _row_stack(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.row_stack([a, b])


def _cross_2d(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.cross(a, b)


def _cumulative_trapezoid(y, x):
    return np.concatenate([np.zeros(y.shape[:-1] + (1,)),
                           np.cumsum(np.diff(x) * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)],
                          axis=-1)


def _jax_cumulative_trapezoid(y, x):
    return jnp.concatenate([jnp.zeros(y.shape[:-1] + (1,), y.dtype),
                            jnp.cumsum(jnp.diff(x) * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)],
                           axis=-1)


def _square(x):
    """A 1-D x as the square matrix NumPy's triu/tril broadcast it to (JAX wants 2-D)."""
    return jnp.broadcast_to(x, x.shape * 2) if x.ndim == 1 else x


VECTORS = (((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((6,), (2,)), ((1,), (3,)))

# ---------------------------------------------------------------------------
# Differences, sums, interpolation, polynomials, products (dualad/rules/calculus.py)
# ---------------------------------------------------------------------------

CALCULUS = [
    Spec("diff", lambda x: (np.diff(x), np.diff(x, 2, axis=0),
                            np.diff(x, axis=0, prepend=0.5, append=x[:1])),
         (((5,),), ((3, 4),)),
         jax=lambda x: (jnp.diff(x), jnp.diff(x, 2, axis=0),
                        jnp.diff(x, axis=0, prepend=0.5, append=x[:1]))),
    Spec("diff", lambda x, p: np.diff(x, prepend=p, append=2.0 * p), (((3, 4), (3, 1)),),
         variant="differentiable prepend",
         jax=lambda x, p: jnp.diff(x, prepend=p, append=2.0 * p)),
    Spec("ediff1d", lambda x, b: (np.ediff1d(x), np.ediff1d(x, to_begin=b, to_end=[1.0, 2.0])),
         (((5,), (2,)), ((2, 3), ())),
         jax=lambda x, b: (jnp.ediff1d(x), jnp.ediff1d(x, to_begin=b,
                                                       to_end=jnp.array([1.0, 2.0])))),
    Spec("gradient", lambda f: (np.gradient(f, axis=0), np.gradient(f, 0.5, axis=-1),
                                np.gradient(f, 2.0)),
         (((5,),), ((3, 4),)),
         jax=lambda f: (jnp.gradient(f, axis=0), jnp.gradient(f, 0.5, axis=-1),
                        jnp.gradient(f, 2.0))),
    Spec("gradient", lambda f: (np.gradient(f, XP[:5], axis=-1),
                                np.gradient(f, np.arange(5.0) / 2, axis=-1)),
         (((5,),), ((3, 5),)), variant="coordinates",
         jax=lambda f: (jnp.gradient(f, jnp.asarray(XP[:5]), axis=-1),
                        jnp.gradient(f, jnp.arange(5.0) / 2, axis=-1))),
    Spec("gradient", lambda f, x: np.gradient(f, x, axis=-1), (((3, 5), (5,)), ((4,), (4,))),
         (((-2.0, 2.0)), increasing()), variant="differentiable coordinates",
         jax=lambda f, x: jnp.gradient(f, x, axis=-1)),
    Spec("gradient", lambda f, x: (np.gradient(f, edge_order=2),
                                   np.gradient(f, 1.5, edge_order=2, axis=0),
                                   np.gradient(f, x, axis=-1, edge_order=2),
                                   np.gradient(f, XP[:4], axis=-1, edge_order=2)),
         (((3, 4), (4,)),), (((-2.0, 2.0)), increasing()), variant="edge_order=2"),
    Spec("trapezoid", lambda y: (np.trapezoid(y), np.trapezoid(y, dx=0.5, axis=0)),
         (((5,),), ((3, 4),)),
         jax=lambda y: (jnp.trapezoid(y), jnp.trapezoid(y, dx=0.5, axis=0))),
    Spec("trapezoid", lambda y, x: (np.trapezoid(y, x), np.trapezoid(y, x, axis=-1)),
         (((3, 5), (5,)), ((3, 5), (3, 5))), variant="x",
         jax=lambda y, x: (jnp.trapezoid(y, x), jnp.trapezoid(y, x, axis=-1))),
    Spec("cumsum", _cumulative_trapezoid, (((5,), (5,)), ((2, 4), (4,))),
         variant="cumulative trapezoid", jax=_jax_cumulative_trapezoid),
    Spec("interp", lambda x, fp: (np.interp(x, XP, fp),
                                  np.interp(x, XP, fp, left=-1.0, right=2.0)),
         (((7,), (6,)), ((2, 3), (6,)), ((), (6,))), ((-0.5, 3.5), (-2.0, 2.0)),
         avoid=lambda x, fp: near_any(x, XP),
         jax=lambda x, fp: (jnp.interp(x, jnp.asarray(XP), fp),
                            jnp.interp(x, jnp.asarray(XP), fp, left=-1.0, right=2.0))),
    Spec("interp", lambda x, fp, left, right: np.interp(x, XP, fp, left=left, right=right),
         (((7,), (6,), (), ()),), ((-0.5, 3.5), (-2.0, 2.0), (-2.0, 2.0), (-2.0, 2.0)),
         avoid=lambda x, *_: near_any(x, XP), variant="left, right",
         jax=lambda x, fp, left, right: jnp.interp(x, jnp.asarray(XP), fp, left=left,
                                                   right=right)),
    Spec("interp", lambda x, xp, fp: np.interp(x, xp, fp), (((7,), (5,), (5,)),),
         ((-1.5, 3.5), increasing(), (-2.0, 2.0)),
         avoid=lambda x, xp, fp: near_any(x, xp, 10 * GAP), variant="differentiable xp",
         jax=lambda x, xp, fp: jnp.interp(x, xp, fp)),
    Spec("interp", lambda x, fp: np.interp(x, XP, fp, period=2.5), (((7,), (6,)),),
         ((-3.0, 6.0), (-2.0, 2.0)),
         avoid=lambda x, fp: near_any(np.asarray(x) % 2.5, np.r_[XP % 2.5, 2.5, 0.0]),
         variant="period",
         jax=lambda x, fp: jnp.interp(x, jnp.asarray(XP), fp, period=2.5)),
    Spec("polyval", np.polyval, (((4,), (5,)), ((3,), (2, 3)), ((1,), ())),
         jax=lambda p, x: jnp.polyval(p, x)),
    Spec("polyfit", lambda y: (np.polyfit(T, y, 2), np.polyfit(T, y, 0)), (((7,),), ((7, 2),)),
         jax=lambda y: (jnp.polyfit(jnp.asarray(T), y, 2), jnp.polyfit(jnp.asarray(T), y, 0))),
    Spec("polyfit", lambda x, y, w: np.polyfit(x, y, 2, w=w), (((6,), (6,), (6,)),),
         (increasing(), (-2.0, 2.0), (0.5, 1.5)), variant="x, w",
         jax=lambda x, y, w: jnp.polyfit(x, y, 2, w=w)),
    Spec("polyfit", lambda x, y: np.polyfit(x, y, 1, cov=True), (((6,), (6,)), ((6,), (6, 2))),
         (increasing(), (-2.0, 2.0)), variant="cov", rtol=1e-5,
         jax=lambda x, y: jnp.polyfit(x, y, 1, cov=True)),
    Spec("convolve", lambda a, v: (np.convolve(a, v), np.convolve(a, v, "same"),
                                   np.convolve(a, v, mode="valid")), VECTORS,
         jax=lambda a, v: (jnp.convolve(a, v), jnp.convolve(a, v, "same"),
                           jnp.convolve(a, v, mode="valid"))),
    Spec("correlate", lambda a, v: (np.correlate(a, v), np.correlate(a, v, "same"),
                                    np.correlate(a, v, mode="full")), VECTORS,
         jax=lambda a, v: (jnp.correlate(a, v), jnp.correlate(a, v, "same"),
                           jnp.correlate(a, v, mode="full"))),
    Spec("kron", np.kron, (((2, 3), (4,)), ((2,), (3,)), ((2, 2), (2, 1, 3)), ((), (3,))),
         jax=lambda a, b: jnp.kron(a, b)),
    Spec("cross", np.cross, (((4, 3), (3,)), ((3,), (3,)), ((2, 1, 3), (4, 3))),
         jax=lambda a, b: jnp.cross(a, b)),
    Spec("cross", lambda a, b: (np.cross(a, b, axisa=0, axisc=0), np.cross(a, b.T, axis=0)),
         (((3, 4), (4, 3)),), variant="axes",
         jax=lambda a, b: (jnp.cross(a, b, axisa=0, axisc=0), jnp.cross(a, b.T, axis=0))),
    *[Spec("cross", _cross_2d, (((4, 2), (3,)), ((3,), (2,)), ((2,), (2,))),
           variant="2-vectors", jax=lambda a, b: jnp.cross(a, b))] * CROSS_OF_2_VECTORS,
]

# ---------------------------------------------------------------------------
# Building and splitting arrays (dualad/rules/building.py)
# ---------------------------------------------------------------------------

BUILDING = [
    Spec("append", lambda x, v: (np.append(x, v), np.append(x, v[None], axis=0),
                                 np.append(x, 1.5)), (((3, 4), (4,)),),
         jax=lambda x, v: (jnp.append(x, v), jnp.append(x, v[None], axis=0),
                           jnp.append(x, 1.5))),
    Spec("insert", lambda x, v: (np.insert(x, 1, v, axis=0), np.insert(x, [1, 2], 5.0),
                                 np.insert(x, 2, v[:3], axis=1),
                                 np.insert(x, slice(0, 2), v[:2], axis=None)),
         (((3, 4), (4,)),),
         jax=lambda x, v: (jnp.insert(x, 1, v, axis=0), jnp.insert(x, jnp.array([1, 2]), 5.0),
                           jnp.insert(x, 2, v[:3], axis=1),
                           jnp.insert(x, slice(0, 2), v[:2], axis=None))),
    Spec("delete", lambda x: (np.delete(x, 1), np.delete(x, [0, 2], axis=0),
                              np.delete(x, slice(1, None, 2), axis=1)), (((3, 4),),),
         jax=lambda x: (jnp.delete(x, 1), jnp.delete(x, jnp.array([0, 2]), axis=0),
                        jnp.delete(x, slice(1, None, 2), axis=1))),
    Spec("column_stack", lambda a, b: np.column_stack([a, b]),
         (((4,), (4,)), ((3, 2), (3,)), ((), ())),
         jax=lambda a, b: jnp.column_stack([a, b])),
    Spec("dstack", lambda a, b: np.dstack((a, b)),
         (((4,), (4,)), ((3, 2), (3, 2)), ((2, 1, 2), (2, 1, 1))),
         jax=lambda a, b: jnp.dstack((a, b))),
    *[Spec("row_stack", _row_stack, (((3,), (3,)), ((2, 3), (3,))),
           jax=lambda a, b: jnp.vstack([a, b]))] * hasattr(np, "row_stack"),  # gone in 2.5
    Spec("hsplit", lambda x: (np.hsplit(x, 2), np.hsplit(x, [1, 3])), (((6,),), ((3, 4),)),
         jax=lambda x: (jnp.hsplit(x, 2), jnp.hsplit(x, [1, 3]))),
    Spec("vsplit", lambda x: np.vsplit(x, [1]), (((3, 4),),),
         jax=lambda x: jnp.vsplit(x, [1])),
    Spec("dsplit", lambda x: np.dsplit(x, 2), (((2, 3, 4),),),
         jax=lambda x: jnp.dsplit(x, 2)),
    Spec("rot90", lambda x: (np.rot90(x), np.rot90(x, 2), np.rot90(x, -1, axes=(2, 0)),
                             np.rot90(x, 4)), (((2, 3, 4),),),
         jax=lambda x: (jnp.rot90(x), jnp.rot90(x, 2), jnp.rot90(x, -1, axes=(2, 0)),
                        jnp.rot90(x, 4))),
    Spec("rollaxis", lambda x: (np.rollaxis(x, 2), np.rollaxis(x, 0, 3), np.rollaxis(x, -1, 1)),
         (((2, 3, 4),),),
         jax=lambda x: (jnp.rollaxis(x, 2), jnp.rollaxis(x, 0, 3), jnp.rollaxis(x, -1, 1))),
    Spec("triu", lambda x: (np.triu(x), np.triu(x, 1), np.triu(x, -1)),
         (((3, 4),), ((2, 3, 3),), ((4,),)),
         jax=lambda x: (jnp.triu(_square(x)), jnp.triu(_square(x), 1), jnp.triu(_square(x), -1))),
    Spec("tril", lambda x: (np.tril(x), np.tril(x, 1), np.tril(x, -2)),
         (((3, 4),), ((2, 3, 3),), ((4,),)),
         jax=lambda x: (jnp.tril(_square(x)), jnp.tril(_square(x), 1), jnp.tril(_square(x), -2))),
    Spec("meshgrid", lambda a, b, c: (np.meshgrid(a, b), np.meshgrid(a, b, c, indexing="ij"),
                                      np.meshgrid(a, c, sparse=True)),
         (((4,), (3,), (2,)), ((2,), (), (1,))),
         jax=lambda a, b, c: (jnp.meshgrid(a, jnp.ravel(b)),
                              jnp.meshgrid(a, jnp.ravel(b), c, indexing="ij"),
                              jnp.meshgrid(a, c, sparse=True))),
    Spec("linspace", lambda a, b: (np.linspace(a, b, 5), np.linspace(a, b, 4, endpoint=False),
                                   np.linspace(a, b, 3, axis=-1), np.linspace(a, 2.0, 1),
                                   np.linspace(a, b, 4, retstep=True)),
         (((), ()), ((3,), ()), ((2, 1), (3,))),
         jax=lambda a, b: (jnp.linspace(a, b, 5), jnp.linspace(a, b, 4, endpoint=False),
                           jnp.linspace(a, b, 3, axis=-1), jnp.linspace(a, 2.0, 1),
                           jnp.linspace(a, b, 4, retstep=True))),
    Spec("logspace", lambda a, b: (np.logspace(a, b, 5), np.logspace(a, b, 4, base=2.0,
                                                                       endpoint=False, axis=-1)),
         (((), ()), ((3,), ())), (-1.0, 1.0),
         jax=lambda a, b: (jnp.logspace(a, b, 5), jnp.logspace(a, b, 4, base=2.0,
                                                                endpoint=False, axis=-1))),
    Spec("logspace", lambda a, b, base: np.logspace(a, b, 3, base=base), (((), (), (2,)),),
         ((-1.0, 1.0), (-1.0, 1.0), (1.5, 3.0)), variant="differentiable base",
         # NumPy puts base on an axis of its own; JAX broadcasts it with the samples
         jax=lambda a, b, base: jnp.power(base, jnp.linspace(a, b, 3)[:, None])),
    Spec("geomspace", lambda a, b: (np.geomspace(a, b, 5), np.geomspace(a, b, 4, endpoint=False),
                                    np.geomspace(-a, -b, 3, axis=-1)),
         (((), ()), ((3,), ())), (0.5, 3.0),
         jax=lambda a, b: (jnp.geomspace(a, b, 5), jnp.geomspace(a, b, 4, endpoint=False),
                           jnp.geomspace(-a, -b, 3, axis=-1))),
    Spec("concatenate", lambda a, b: (np.r_[a, 0.0, b], np.r_[a, 1:3, b[:2]],
                                      np.r_["1,2", a, b], np.r_[a, 0:1:3j]),
         (((3,), (4,)),), variant="np.r_",
         jax=lambda a, b: (jnp.r_[a, 0.0, b], jnp.r_[a, 1:3, b[:2]],
                           jnp.r_["1,2", a, b], jnp.r_[a, 0:1:3j])),
    Spec("concatenate", lambda a, b: (np.c_[a, b], np.c_[a, 2.0 * b, a]),
         (((3,), (3,)), ((2, 3), (2, 1))), variant="np.c_",
         jax=lambda a, b: (jnp.c_[a, b], jnp.c_[a, 2.0 * b, a])),
]

# ---------------------------------------------------------------------------
# Selecting, writing in place, set operations, counts (dualad/rules/indexing.py,
# building.py, selection.py)
# ---------------------------------------------------------------------------


def _choice(shape, n: int = 2) -> np.ndarray:
    """A constant index array of ``shape`` with values 0 .. n - 1."""
    return (np.arange(int(np.prod(shape))) * 7 % n).reshape(shape)


def _mask(shape) -> np.ndarray:
    """A constant boolean mask of ``shape`` (every other element, shifted by rows)."""
    return np.arange(int(np.prod(shape))).reshape(shape) % 3 != 1


def _zero_ends(x):
    """``x`` with its first and last elements multiplied by 0: zeros that stay zeros
    when ``x`` moves, so that np.trim_zeros keeps the same elements."""
    ends = np.ones(x.shape)
    ends[..., :1] = ends[..., -1:] = 0.0
    return x * ends


def _put(x, v):
    y = x.copy()
    np.put(y, [0, 5, 2], v)
    return y


def _put_wrap(x, v):
    y = x.copy()
    np.put(y, [-1, 7, 13], v, mode="wrap")
    return y


def _place(x, v):
    y = x.copy()
    np.place(y, _mask(x.shape), v)
    return y


def _put_along_axis(x, v):
    y = x.copy()
    np.put_along_axis(y, _choice((x.shape[0], 2), x.shape[1]), v, axis=1)
    return y


def _fill_diagonal(x, v):
    y = x.copy()
    np.fill_diagonal(y, v)
    return y


BINS = np.array([0, 2, 2, 4, 1, 0, 3, 2])


def _near_bin_edges(x, bins: int) -> bool:
    """An element near an inner edge of ``bins`` equal bins over [min, max] (as
    ``_near_bin_edge`` of specs_statistics)."""
    x = np.asarray(x)
    lo, hi = np.min(x), np.max(x)
    inner = lo + (hi - lo) * np.arange(1, bins) / bins
    return bool(np.any(np.abs(x[:, None] - inner[None, :]) < 10 * GAP))


INDEXING = [
    Spec("block", lambda a, b: (np.block([[a, b], [b, a]]), np.block([[a], [2.0 * b]])),
         (((2, 2), (2, 2)), ((3,), (3,))),
         jax=lambda a, b: (jnp.block([[a, b], [b, a]]), jnp.block([[a], [2.0 * b]]))),
    Spec("block", lambda a, b: np.block([a, 1.5, b]), (((3,), (2,)), ((), ())),
         variant="scalars", jax=lambda a, b: jnp.block([a, 1.5, b])),
    Spec("choose", lambda a, b: (np.choose(_choice(np.broadcast_shapes(a.shape, b.shape)),
                                           [a, b]),
                                 np.choose(_choice(a.shape, 3) + 1, [a, b, 2.0 * a],
                                           mode="wrap")),
         (((2, 3), (2, 3)), ((2, 3), (3,))),
         jax=lambda a, b: (jnp.choose(_choice(jnp.broadcast_shapes(a.shape, b.shape)),
                                      [a, b]),
                           jnp.choose(_choice(a.shape, 3) + 1, [a, b, 2.0 * a],
                                      mode="wrap"))),
    Spec("compress", lambda x: (np.compress([True, False, True], x, axis=-1),
                                np.compress([False, True], x)),
         (((2, 3),), ((3,),)),
         jax=lambda x: (jnp.compress(jnp.array([True, False, True]), x, axis=-1),
                        jnp.compress(jnp.array([False, True]), x))),
    Spec("extract", lambda x: np.extract(_mask(x.shape), x), (((2, 3),), ((5,),)),
         jax=lambda x: jnp.extract(_mask(x.shape), x)),
    Spec("diagflat", lambda x: (np.diagflat(x), np.diagflat(x, -1)), (((3,),), ((2, 2),)),
         jax=lambda x: (jnp.diagflat(x), jnp.diagflat(x, -1))),
    Spec("resize", lambda x: (np.resize(x, (3, 4)), np.resize(x, 2)), (((2, 3),), ((5,),)),
         jax=lambda x: (jnp.resize(x, (3, 4)), jnp.resize(x, 2))),
    Spec("trim_zeros", lambda x: (np.trim_zeros(_zero_ends(x)), np.trim_zeros(_zero_ends(x), "b"),
                                  np.trim_zeros(_zero_ends(x), axis=-1)),
         (((6,),), ((3,),), ((2, 4),)), avoid=small,
         jax=lambda x: (jnp.trim_zeros(_zero_ends(x)), jnp.trim_zeros(_zero_ends(x), "b"),
                        jnp.trim_zeros(_zero_ends(x), axis=-1))),
    Spec("unstack", lambda x: (np.unstack(x), np.unstack(x, axis=-1)), (((2, 3),), ((3, 1, 2),)),
         jax=lambda x: (jnp.unstack(x), jnp.unstack(x, axis=-1))),
    Spec("broadcast_arrays", lambda a, b: np.broadcast_arrays(a, b, 0.5 * a),
         (((2, 3), (3,)), ((4, 1), (1, 2)), ((), (2,))),
         jax=lambda a, b: jnp.broadcast_arrays(a, b, 0.5 * a)),
    Spec("astype", lambda x: (np.astype(x, x.dtype), np.astype(x, np.float64) * x),
         (((2, 3),), ((),)),
         jax=lambda x: (jnp.astype(x, x.dtype), jnp.astype(x, jnp.float64) * x)),
    Spec("cumulative_sum", lambda x: (np.cumulative_sum(x, axis=-1),
                                      np.cumulative_sum(x, axis=0, include_initial=True)),
         (((2, 3),), ((4,),)),
         jax=lambda x: (jnp.cumulative_sum(x, axis=-1),
                        jnp.cumulative_sum(x, axis=0, include_initial=True))),
    Spec("cumulative_prod", lambda x: (np.cumulative_prod(x, axis=-1),
                                       np.cumulative_prod(x, axis=0, include_initial=True)),
         (((2, 3),), ((4,),)),
         jax=lambda x: (jnp.cumulative_prod(x, axis=-1),
                        jnp.cumulative_prod(x, axis=0, include_initial=True))),
    Spec("apply_along_axis",
         lambda x: (np.apply_along_axis(lambda r: np.sin(r) * r[0], -1, x),
                    np.apply_along_axis(lambda r: np.outer(r, r), 0, x),
                    np.apply_along_axis(np.sum, 0, x)),
         (((2, 3),), ((2, 3, 2),)),
         jax=lambda x: (jnp.apply_along_axis(lambda r: jnp.sin(r) * r[0], -1, x),
                        jnp.apply_along_axis(lambda r: jnp.outer(r, r), 0, x),
                        jnp.apply_along_axis(jnp.sum, 0, x))),
    Spec("apply_over_axes", lambda x: (np.apply_over_axes(np.sum, x, [0, 2]),
                                       np.apply_over_axes(np.cumsum, x, 1)),
         (((2, 3, 2),),),
         jax=lambda x: (jnp.apply_over_axes(jnp.sum, x, [0, 2]),
                        jnp.apply_over_axes(jnp.cumsum, x, [1]))),
    Spec("put", _put, (((2, 3), (3,)), ((6,), (2,)), ((3, 2), ())),
         jax=lambda x, v: jnp.put(x, jnp.array([0, 5, 2]), v, inplace=False)),
    Spec("put", _put_wrap, (((2, 3), (3,)),), variant="mode=wrap",
         jax=lambda x, v: jnp.put(x, jnp.array([-1, 7, 13]), v, mode="wrap",
                                  inplace=False)),
    Spec("place", _place, (((2, 3), (4,)), ((5,), (2,))),
         jax=lambda x, v: jnp.place(x, _mask(x.shape), v, inplace=False)),
    Spec("put_along_axis", _put_along_axis, (((3, 4), (3, 2)), ((3, 4), (3, 1))),
         jax=lambda x, v: jnp.put_along_axis(x, _choice((x.shape[0], 2), x.shape[1]), v,
                                             axis=1, inplace=False)),
    Spec("fill_diagonal", _fill_diagonal, (((3, 3), (3,)), ((3, 4), ()), ((2, 2, 2), (2,))),
         jax=lambda x, v: jnp.fill_diagonal(x, v, inplace=False)),
    Spec("bincount", lambda w: (np.bincount(BINS, w), np.bincount(BINS, w, minlength=7)),
         (((8,),),),
         jax=lambda w: (jnp.bincount(BINS, w), jnp.bincount(BINS, w, minlength=7))),
    Spec("histogram_bin_edges", lambda x: (np.histogram_bin_edges(x, 4),
                                           np.histogram_bin_edges(x, [-1.0, 0.0, 2.0])),
         (((7,),), ((2, 3),)), avoid=ties,
         jax=lambda x: (jnp.histogram_bin_edges(x, 4),
                        jnp.histogram_bin_edges(x, jnp.array([-1.0, 0.0, 2.0])))),
    Spec("histogram2d", lambda x, y, w: (np.histogram2d(x, y, 3, weights=w),
                                         np.histogram2d(x, y, [2, 3], density=True)),
         (((9,), (9,), (9,)),), ((-2.0, 2.0), (-2.0, 2.0), (0.5, 1.5)),
         avoid=lambda x, y, w: ties(x) or ties(y) or _near_bin_edges(x, 6)
         or _near_bin_edges(y, 6),
         jax=lambda x, y, w: (jnp.histogram2d(x, y, 3, weights=w),
                              jnp.histogram2d(x, y, [2, 3], density=True))),
    Spec("histogramdd", lambda s, w: (np.histogramdd(s, (3, 2), weights=w, density=True),
                                      np.histogramdd(s, 2)[1]),
         (((9, 2), (9,)),), ((-2.0, 2.0), (0.5, 1.5)),
         avoid=lambda s, w: any(ties(c) or _near_bin_edges(c, 6) for c in s.T),
         jax=lambda s, w: (jnp.histogramdd(s, (3, 2), weights=w, density=True),
                           jnp.histogramdd(s, 2)[1])),
    # Set operations: their values carry the derivative of the elements picked
    # (jax.numpy's are sorted selections with derivative 0 there, as for np.unique).
    Spec("union1d", np.union1d, (((4,), (3,)), ((2, 2), ())),
         avoid=lambda a, b: ties(np.r_[a.ravel(), b.ravel()])),
    Spec("intersect1d", lambda a, b: (np.intersect1d(a, np.r_[b, a[:2]]),
                                      np.intersect1d(np.r_[b, a[1:]], a, assume_unique=True)),
         (((4,), (3,)),), avoid=lambda a, b: ties(np.r_[a, b])),
    Spec("setdiff1d", lambda a, b: (np.setdiff1d(a, b), np.setdiff1d(np.r_[a, a[:2]], a[1:]),
                                    np.setdiff1d(a, b[:1], assume_unique=True)),
         (((4,), (3,)),), avoid=lambda a, b: ties(np.r_[a, b])),
    Spec("setxor1d", lambda a, b: (np.setxor1d(a, np.r_[b, a[:2]]),
                                   np.setxor1d(a, b, assume_unique=True)),
         (((4,), (3,)),), avoid=lambda a, b: ties(np.r_[a, b])),
    Spec("unique_values", lambda x: np.unique_values(np.r_[x, x[:2]]), (((5,),),),
         avoid=ties),
    Spec("unique_all", lambda x: np.unique_all(np.r_[x.ravel(), x.ravel()[:1]]).values,
         (((5,),), ((2, 3),)), avoid=ties),
    Spec("unique_counts", lambda x: np.unique_counts(x).values, (((5,),), ((2, 3),)),
         avoid=ties),
    Spec("unique_inverse", lambda x: np.unique_inverse(x).values, (((5,),), ((2, 3),)),
         avoid=ties),
    # lexsort gives integers: the row differentiates the gather it orders.
    Spec("lexsort", lambda x, y: np.take(x, np.lexsort((x, np.round(y)))), (((6,), (6,)),),
         avoid=lambda x, y: ties(x) or near_integer(y + 0.5),
         jax=lambda x, y: jnp.take(x, jnp.lexsort((x, jnp.round(y))))),
]

ROWS: list[Spec] = CALCULUS + BUILDING + INDEXING

#: Rows of functions whose result's shape depends on the input's values: computed on
#: NumPy values only, so under dualad_gpu (jax.jit) they raise a TypeError, as the
#: jax.numpy functions do without a static ``size=``.
VALUE_SHAPED = frozenset({"trim_zeros", "union1d", "intersect1d", "setdiff1d", "setxor1d",
                          "unique_values", "unique_all", "unique_counts", "unique_inverse"})
ROWS = [replace(s, gpu=False) if s.name in VALUE_SHAPED else s for s in ROWS]
