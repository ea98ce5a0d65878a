"""Norms and condition numbers: np.linalg.norm (vector and matrix orders),
vector_norm, matrix_norm and cond, built on the reductions, the 2-norm primitive
and the singular values of the SVD rule. Norms of complex arrays are those of
``|x|`` (the 2-norm's too), as NumPy computes them.
"""

from __future__ import annotations

import numpy as np

from ..dual import primal_value
from ..primitive import COMPLEX_FUNCTIONS, implements
from .decompositions import svd_values
from .elementwise import divide, multiply, power
from .linalg import inv
from .linalg_complex import absolute, is_complex
from .reductions import _max, _min, _sum, l2_norm, normalize_axes, sum_
from .shape import _moveaxis, getitem, normalize_axis, reshape, shape_of, transpose


@implements(np.linalg.norm)
def _norm(x, ord=None, axis=None, keepdims=False):
    ndim = len(shape_of(x))
    if axis is None:
        if ord is None:  # 2-norm of all elements, whatever the shape
            return _l2_norm(x, tuple(range(ndim)), keepdims)
        axis = tuple(range(ndim))
    axes = tuple(normalize_axis(int(a), ndim) for a in np.atleast_1d(axis))
    if len(axes) == 1:
        return _vector_norm(x, 2 if ord is None else ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, "fro" if ord is None else ord, axes, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def _l2_norm(x, axes, keepdims):
    axes = normalize_axes(axes, len(shape_of(x)))
    return l2_norm(absolute(x) if is_complex(x) else x, axis=axes, keepdims=bool(keepdims))


def _vector_norm(x, ord, axes, keepdims):
    if ord == 2:
        return _l2_norm(x, axes, keepdims)
    if ord == np.inf:
        return _max(absolute(x), axes, keepdims=keepdims)
    if ord == -np.inf:
        return _min(absolute(x), axes, keepdims=keepdims)
    if ord == 1:
        return _sum(absolute(x), axes, keepdims=keepdims)
    if ord == 0:  # a count: piecewise constant
        value = primal_value(x)
        return np.sum(value != 0, axis=axes, keepdims=keepdims).astype(np.real(value).dtype)
    return power(_sum(power(absolute(x), ord), axes, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    rows, cols = axes
    if ord in ("fro", "f"):
        return _l2_norm(x, axes, keepdims)
    if ord in (1, -1):  # largest (smallest) column sum
        sums, over, pick = _sum(absolute(x), rows, keepdims=True), cols, ord == 1
    elif ord in (np.inf, -np.inf):  # largest (smallest) row sum
        sums, over, pick = _sum(absolute(x), cols, keepdims=True), rows, ord == np.inf
    elif ord in (2, -2, "nuc"):
        return _spectral_norm(x, ord, axes, keepdims)
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    out = (_max if pick else _min)(sums, over, keepdims=True)
    if keepdims:
        return out
    return reshape(out, shape=tuple(n for i, n in enumerate(shape_of(out)) if i not in axes))


def _spectral_norm(x, ord, axes, keepdims):
    """The largest (2) or smallest (-2) singular value, or their sum ("nuc"): from
    the singular values NumPy's own norm computes (the SVD rule differentiates them)."""
    singular = svd_values(_moveaxis(x, axes, (-2, -1)), how="N")  # descending
    last = (len(shape_of(singular)) - 1,)
    if ord == "nuc":
        out = sum_(singular, axis=last, keepdims=False)
    else:
        out = getitem(singular, index=(Ellipsis, 0 if ord == 2 else -1))
    if not keepdims:
        return out
    shape = list(shape_of(out))
    for axis in sorted(axes):
        shape.insert(axis, 1)
    return reshape(out, shape=tuple(shape))


@implements(np.linalg.cond)
def _cond(x, p=None):
    """svd values for p = None, 2, -2; else norm(x, p)·norm(inv(x), p), as NumPy."""
    shape = shape_of(x)
    if len(shape) >= 2 and 0 in shape[-2:]:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svd_values(x, how="N")
        first, last = getitem(s, index=(Ellipsis, 0)), getitem(s, index=(Ellipsis, -1))
        r = divide(last, first) if p == -2 else divide(first, last)
    else:
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        r = multiply(_norm(x, p, axis=(-2, -1)), _norm(inv(x), p, axis=(-2, -1)))
    return r


@implements(np.linalg.vector_norm)
def _vector_norm_api(x, /, *, axis=None, keepdims=False, ord=2):
    shape = tuple(shape_of(x))
    ndim = len(shape)
    if axis is None:
        y, axes = reshape(x, shape=(-1,)), tuple(range(ndim))
    elif isinstance(axis, tuple):  # NumPy moves the axes first and flattens them
        axes = tuple(normalize_axis(int(i), ndim) for i in axis)
        rest = tuple(i for i in range(ndim) if i not in axes)
        y = reshape(transpose(x, axes=axes + rest),
                    shape=(int(np.prod([shape[i] for i in axes], dtype=int)),)
                    + tuple(shape[i] for i in rest))
    else:
        y, axes = x, (normalize_axis(int(axis), ndim),)
    res = _norm(y, axis=0 if axis is None or isinstance(axis, tuple) else axis, ord=ord)
    if keepdims:
        res = reshape(res, shape=tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return res


@implements(np.linalg.matrix_norm)
def _matrix_norm_api(x, /, *, keepdims=False, ord="fro"):
    return _norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


COMPLEX_FUNCTIONS.update({np.linalg.norm, np.linalg.vector_norm, np.linalg.matrix_norm,
                          np.linalg.cond})
