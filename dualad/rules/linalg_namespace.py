"""numpy.linalg's array-API names and tensor solves: linalg.cross, diagonal,
matrix_transpose (and np.matrix_transpose), outer, tensordot, trace, tensorinv,
tensorsolve, and matrix_rank as a value.

NumPy 2 semantics: linalg.diagonal and linalg.trace act on the last two axes,
linalg.outer takes 1-D vectors only, linalg.cross 3-vectors only. Each is the
NumPy function it stands for called on Duals (np.trace, np.swapaxes,
np.linalg.inv, np.linalg.solve, ...). matrix_rank is an integer: computed on the
value, derivative zero.
"""

from __future__ import annotations

import numpy as np

from ..dual import primal_value
from ..primitive import Primitive, implements, register_function
from .calculus import _operand
from .shape import ON_PRIMAL, shape_of


def _ndim(x) -> int:
    return len(shape_of(x))


@implements(np.linalg.matrix_transpose, np.matrix_transpose)
def _matrix_transpose(x, /):
    x = _operand(x)
    if _ndim(x) < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {_ndim(x)}")
    return np.swapaxes(x, -1, -2)


@implements(np.linalg.diagonal)
def _diagonal(x, /, *, offset=0):
    return np.diagonal(_operand(x), offset, axis1=-2, axis2=-1)


@implements(np.linalg.trace)
def _trace(x, /, *, offset=0, dtype=None):
    return np.trace(_operand(x), offset, axis1=-2, axis2=-1, dtype=dtype)


@implements(np.linalg.outer)
def _outer(x1, x2, /):
    x1, x2 = _operand(x1), _operand(x2)
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={_ndim(x1)} and x2.ndim={_ndim(x2)}.")
    return np.outer(x1, x2)


@implements(np.linalg.tensordot)
def _tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(_operand(x1), _operand(x2), axes=axes)


@implements(np.linalg.cross)
def _cross(x1, x2, /, *, axis=-1):
    x1, x2 = _operand(x1), _operand(x2)
    n1, n2 = shape_of(x1)[axis], shape_of(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {n1} and {n2} dimensional instead.")
    return np.cross(x1, x2, axis=axis)


@implements(np.linalg.tensorinv)
def _tensorinv(a, ind=2):
    a = _operand(a)
    shape = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    size = int(np.prod(shape[ind:], dtype=np.int64))
    inverse = np.linalg.inv(np.reshape(a, (size, -1)))
    return np.reshape(inverse, shape[ind:] + shape[:ind])


@implements(np.linalg.tensorsolve)
def _tensorsolve(a, b, axes=None):
    a, b = _operand(a), _operand(b)
    ndim = _ndim(a)
    if axes is not None:
        order = list(range(ndim))
        for k in axes:
            order.remove(k)
            order.insert(ndim, k)
        a = np.transpose(a, order)
    shape = shape_of(a)[-(ndim - _ndim(b)):]
    size = int(np.prod(shape, dtype=np.int64))
    if int(np.prod(shape_of(a), dtype=np.int64)) != size ** 2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement "
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return np.reshape(np.linalg.solve(np.reshape(a, (size, size)), np.ravel(b)), shape)


def _matrix_rank_jax(A, tol=None, hermitian=False, *, rtol=None):
    import jax.numpy as jnp

    return jnp.linalg.matrix_rank(A, rtol, hermitian=hermitian, tol=tol)


# An integer: NumPy's on the value (the JAX kernel under dualad_gpu).
matrix_rank = ON_PRIMAL["matrix_rank"] = Primitive("matrix_rank", np.linalg.matrix_rank)
matrix_rank.kernels["jax"] = _matrix_rank_jax


def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    return matrix_rank(primal_value(A), tol=primal_value(tol), hermitian=hermitian,
                       rtol=primal_value(rtol))


register_function(np.linalg.matrix_rank, _matrix_rank)
