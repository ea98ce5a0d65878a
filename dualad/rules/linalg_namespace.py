"""numpy.linalg's array-API names, products and tensor solves: linalg.cross, diagonal,
matrix_transpose (and np.matrix_transpose), outer, tensordot, trace, matrix_power,
multi_dot, tensorinv, tensorsolve, and matrix_rank as a value (of complex matrices too).

NumPy 2 semantics: linalg.diagonal and linalg.trace act on the last two axes,
linalg.outer takes 1-D vectors only, linalg.cross 3-vectors only. Each is the
NumPy function it stands for called on Duals (np.trace, np.swapaxes,
np.linalg.inv, np.linalg.solve, ...). matrix_rank is an integer: computed on the
value, derivative zero.
"""

from __future__ import annotations

import operator

import numpy as np

from ..dual import primal_value
from ..primitive import COMPLEX_FUNCTIONS, Primitive, implements, register_function
from .calculus import _operand
from .linalg import _dot, inv, matmul
from .shape import ON_PRIMAL, getitem, reshape, shape_of


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


# ---------------------------------------------------------------------------
# Compositions of products: matrix_power, multi_dot
# ---------------------------------------------------------------------------


@implements(np.linalg.matrix_power)
def _matrix_power(a, n):
    """NumPy's own sequence of products (binary powers), so values are NumPy's."""
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:  # the identity: a constant
        value = primal_value(a)
        return value * 0 + np.eye(shape[-1], dtype=value.dtype)
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = matmul(result, a)
        return result
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@implements(np.linalg.multi_dot)
def _multi_dot(arrays, *, out=None):
    """NumPy's order of products (chosen from the shapes alone), so values are NumPy's."""
    if out is not None:
        raise TypeError("np.linalg.multi_dot(..., out=...) would drop the derivative of a Dual")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _dot(arrays[0], arrays[1])
    ndim_first, ndim_last = len(shape_of(arrays[0])), len(shape_of(arrays[-1]))
    if ndim_first == 1:
        arrays[0] = reshape(arrays[0], shape=(1,) + tuple(shape_of(arrays[0])))
    if ndim_last == 1:
        arrays[-1] = reshape(arrays[-1], shape=tuple(shape_of(arrays[-1])) + (1,))
    # NumPy's chain order from zero-cost stand-ins of the same shapes
    stand_ins = [np.broadcast_to(np.zeros((), np.float64), shape_of(x)) for x in arrays]
    if len(arrays) == 3:
        a, b, c = (shape_of(x) for x in arrays)
        left_first = a[0] * a[1] * b[1] + a[0] * b[1] * c[1] < \
            b[0] * b[1] * c[1] + a[0] * a[1] * c[1]
        result = _dot(_dot(arrays[0], arrays[1]), arrays[2]) if left_first else \
            _dot(arrays[0], _dot(arrays[1], arrays[2]))
    else:
        from numpy.linalg._linalg import _multi_dot_matrix_chain_order
        order = _multi_dot_matrix_chain_order(stand_ins)

        def product(i, j):
            if i == j:
                return arrays[i]
            return _dot(product(i, order[i, j]), product(order[i, j] + 1, j))

        result = product(0, len(arrays) - 1)
    if ndim_first == 1 and ndim_last == 1:
        return getitem(result, index=(0, 0))
    if ndim_first == 1 or ndim_last == 1:
        return reshape(result, shape=(-1,))
    return result


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
COMPLEX_FUNCTIONS.update({np.linalg.tensorinv, np.linalg.tensorsolve, np.linalg.matrix_rank})
