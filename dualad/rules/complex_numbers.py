"""Complex numbers: which rules hold over ℂ, and the few that are not holomorphic.

A holomorphic function's derivative is one complex number, so its real row of
partials (``exp' = exp``, ``(xy)' = (y, x)``) is right over ℂ as written, and
the transpose of a ℂ-linear map is its plain, unconjugated transpose: JAX's
convention, in which a cotangent ``c`` pairs with a tangent ``t`` as
``Re Σ c·t``. Those primitives are marked ``complex_ok`` here; every other one
refuses complex values (``Dual._process``) rather than give a wrong derivative.

``real``, ``imag`` and ``conjugate`` are ℝ-linear, not ℂ-linear: each has its
own transpose (``real``: ``c ↦ c``, ``imag``: ``c ↦ -ic``, ``conj``: ``c ↦ c̄``).
``abs`` and ``angle`` of complex values are written with them
(``hypot(re z, im z)``, ``arctan2(im z, re z)``), so every mode that
differentiates real functions differentiates these too.

NumPy functions that dualad writes as compositions of primitives are checked
the same way: those in :data:`~dualad.primitive.COMPLEX_FUNCTIONS` (structural,
linear, or written for ℂ) take complex values; the others refuse them
(``Dual.__array_function__``), since a composition written for real numbers
(``var`` as a mean of squares, ``vdot`` without its conjugate) would be wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dual import primal_value
from ..operands import complex_error, is_complex
from ..primitive import (COMPLEX_FUNCTIONS, UFUNC_HANDLERS, Primitive, qualified_name,
                         register_function)
from . import elementwise as _e
from . import linalg as _linalg
from . import reductions as _reductions
from . import shape as _shape
from .shape import ON_PRIMAL

#: Elementwise primitives whose row of partials is right over ℂ as written.
HOLOMORPHIC = (
    _e.add, _e.subtract, _e.multiply, _e.divide, _e.negative, _e.positive, _e.square,
    _e.reciprocal, _e.power, _e.float_power, _e.sqrt, _e.exp, _e.exp2, _e.expm1, _e.log,
    _e.log2, _e.log10, _e.log1p, _e.sin, _e.cos, _e.tan, _e.arcsin, _e.arccos, _e.arctan,
    _e.sinh, _e.cosh, _e.tanh, _e.arcsinh, _e.arccosh, _e.arctanh,
)
#: Linear primitives whose transpose is right over ℂ (the plain transpose of a ℂ-linear
#: map, or real/imag/conj's own); any other linear one (scipy.linalg's triangular,
#: banded and Sylvester solves, odeint's tangent) refuses complex values.
LINEAR = (
    _e.add, _e.subtract, _e.negative, _e.positive, _e.multiply, _e.divide, _e.scale,
    _e.combine, _e.convert, _e.conjugate, _e.where, _shape.broadcast_to, _shape.concatenate,
    _shape.getitem, _shape.index_add, _shape.reshape, _shape.transpose, _reductions.sum_,
    _reductions.cumsum, _linalg.matmul, _linalg.einsum, _linalg.solve,
)
for _prim in HOLOMORPHIC + LINEAR:
    _prim.complex_ok = True


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.finfo(dtype).dtype  # complex128 -> float64, float32 -> float32


def _part_shape_rule(x):
    return x.shape, _real_dtype(x.dtype)


def _to_complex(ct: Any, like: Any) -> Any:
    return _e.convert(ct, dtype=np.result_type(like.dtype, np.complex64))


real = Primitive(
    "real", np.real, jvp=lambda primals, tangents, ans: real(tangents[0]),
    linear="all", complex_ok=True, shape_rule=_part_shape_rule,
    transpose=lambda ct, args, linear: (_to_complex(ct, args[0]),))
imag = Primitive(
    "imag", np.imag, jvp=lambda primals, tangents, ans: imag(tangents[0]),
    linear="all", complex_ok=True, shape_rule=_part_shape_rule,
    transpose=lambda ct, args, linear: (_e.multiply(_to_complex(ct, args[0]), -1j),))


def real_part(x: Any) -> Any:
    """``np.real``: ``x`` itself for real input (as NumPy), the primitive for complex."""
    return real(x) if is_complex(x) else x


def imaginary_part(x: Any) -> Any:
    if is_complex(x):
        return imag(x)
    value = primal_value(x)
    return np.zeros(np.shape(value), getattr(value, "dtype", np.float64))


def absolute(x: Any) -> Any:
    """|x|; of a complex x, hypot(re x, im x) (0 at 0, the centre of its cone)."""
    return _e.hypot(real(x), imag(x)) if is_complex(x) else _e.absolute(x)


def angle(z: Any, deg: bool = False) -> Any:
    """arctan2(im z, re z); of real input 0 or π, with derivative 0 (JAX's is nan at 0)."""
    value = primal_value(z)
    if is_complex(z):
        result = _e.arctan2(imag(z), real(z))
    else:
        result = _e.arctan2(ON_PRIMAL["zeros_like"](value), value)
    return _e.multiply(result, np.asarray(180 / np.pi, result.dtype)) if deg else result


register_function(np.real, real_part)
register_function(np.imag, imaginary_part)
register_function(np.absolute, absolute)
register_function(np.angle, angle)
register_function(np.iscomplexobj, is_complex)
register_function(np.isrealobj, lambda x: not is_complex(x))


def _sign(x: Any) -> Any:
    """sign(z) = z/|z| (0 at 0) for complex z, which is not piecewise constant."""
    if not is_complex(x):
        return _e.sign(x)
    size = absolute(x)
    zero = primal_value(size) == 0
    return _e.where(zero, 0, _e.divide(x, _e.where(zero, 1, size)))


register_function(np.sign, _sign)


def _refusing_complex(name: str, implementation: Any) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        if any(is_complex(a) for a in args):
            raise complex_error(name)
        return implementation(*args, **kwargs)
    return refuse


# Ufuncs written as compositions for real numbers (vecdot conjugates its first argument).
for _ufunc, _handler in list(UFUNC_HANDLERS.items()):
    if not isinstance(_handler, Primitive) and _ufunc not in (np.absolute, np.sign):
        UFUNC_HANDLERS[_ufunc] = _refusing_complex(qualified_name(_ufunc), _handler)

_ln = np.linalg
COMPLEX_FUNCTIONS.update({
    # structure and selection
    np.append, np.array_split, np.astype, np.atleast_1d, np.atleast_2d, np.atleast_3d,
    np.block, np.broadcast_arrays, np.broadcast_to, np.choose, np.column_stack, np.compress,
    np.concatenate, np.copy, np.delete, np.diag, np.diagflat, np.diagonal, np.dsplit,
    np.dstack, np.expand_dims, np.extract, np.flip, np.fliplr, np.flipud, np.hsplit,
    np.hstack, np.insert, np.meshgrid, np.ix_, np.moveaxis, np.pad, np.ravel, np.repeat,
    np.reshape, np.resize, np.roll, np.rollaxis, np.rot90, np.split,
    np.squeeze, np.stack, np.swapaxes, np.take, np.take_along_axis, np.tile, np.transpose,
    np.tril, np.triu, np.unstack, np.vsplit, np.vstack, np.where, np.select,
    np.matrix_transpose, _ln.matrix_transpose, _ln.diagonal, np.trim_zeros, np.sort,
    np.argsort, np.round, np.around, np.real_if_close,
    # linear and bilinear (no conjugate)
    np.sum, np.mean, np.average, np.cumsum, np.cumulative_sum, np.diff, np.ediff1d,
    np.gradient, np.trapezoid, np.trace, _ln.trace, np.dot, np.inner, np.outer, _ln.outer,
    np.einsum, np.tensordot, _ln.tensordot, np.kron, np.cross, _ln.cross, _ln.matmul,
    _ln.multi_dot, _ln.matrix_power, np.linspace, np.vander, np.polyval, np.polyadd,
    np.polysub, np.polymul, np.polyder, np.polyint,
    # values, predicates and shapes: no derivative to get wrong
    np.real, np.imag, np.angle, np.iscomplexobj, np.isrealobj, np.iscomplex, np.isreal,
    np.shape, np.size, np.ndim, np.result_type, np.can_cast, np.min_scalar_type, np.isclose,
    np.allclose, np.array_equal, np.array_equiv, np.nonzero, np.flatnonzero, np.argwhere,
    np.count_nonzero, np.all, np.any, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array_repr, np.array_str, np.einsum_path,
    # functions of functions: their inner calls are checked
    np.apply_along_axis, np.apply_over_axes, np.piecewise,
})
if hasattr(np, "row_stack"):  # removed in NumPy 2.5
    COMPLEX_FUNCTIONS.add(np.row_stack)
