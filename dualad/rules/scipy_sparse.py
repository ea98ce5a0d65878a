"""scipy.sparse operators applied to Duals: ``A @ x``, ``x @ A``, ``A.dot(x)``, an
``spmatrix``'s ``A * x``, and ``scipy.sparse.linalg.spsolve(A, b)``, for a constant
sparse ``A`` (a discretised operator: the method of lines' Laplacian) and a Dual ``x``
or ``b`` of one or two dimensions.

Both are linear in the Dual: the tangents of every seed go through ``A`` in one
product (one sparse solve), the seed axis moved last as columns of a matrix; the
reverse mode multiplies by (solves with) ``Aᵀ``. A sparse matrix holds numbers, not
Duals: one built from Duals (``scipy.sparse.diags([..., 2.0 + k, ...])``) is refused
with an error that says how to write the operator instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import NeedsHost, Primitive, backend_of
from .scipy_functions import original, scipy_rule
from .shape import reshape, shape_of, transpose

_BUILT_FROM_DUALS = (
    "a scipy.sparse matrix holds numbers, not Duals, so it cannot be built from values "
    "that carry a derivative. Keep the sparse matrix constant and apply the varying part "
    "with NumPy (A @ u + k * u for a diagonal k, or np.diag(k) @ u), or build the "
    "operator densely in the function (np.diag(k) + np.diag(off, 1) + ...)")


def _as_columns(apply: Any, x: np.ndarray, rows: int, core: int) -> np.ndarray:
    """``apply`` (a linear map on the columns of a matrix) on ``x``, whose last ``core``
    axes are the operand's (a vector or a matrix) and whose leading axes (seeds, and
    the cotangents pulled back at once) are moved last as more columns: one call."""
    lead = x.ndim - core
    if lead == 0:
        return apply(x)
    columns = np.moveaxis(x, tuple(range(lead)), tuple(range(-lead, 0)))
    out = np.asarray(apply(columns.reshape(columns.shape[0], -1)))
    out = out.reshape((rows,) + columns.shape[1:])
    return np.moveaxis(out, tuple(range(-lead, 0)), tuple(range(lead)))


def _one_operation(kernel: Any) -> Any:
    """``kernel(x, matrix, core, ...)``, called through the ``__array_function__`` of an
    ndarray subclass that has its own (a replay's recording: one operation, the
    constant matrix with it), else as it is (SciPy's code is no NumPy call)."""

    def call(x, matrix, core, **options):
        kind = type(x)
        if kind is not np.ndarray and isinstance(x, np.ndarray) \
                and kind.__array_function__ is not np.ndarray.__array_function__:
            result = x.__array_function__(call, (kind,), (x, matrix, core), options)
            if result is not NotImplemented:
                return result
        return kernel(x, matrix, core, **options)

    call.__name__ = kernel.__name__
    call._implementation = kernel  # (what ndarray's own __array_function__ calls)
    return call


def _product_shape(x, matrix, core):
    lead = x.ndim - core
    shape = tuple(x.shape[:lead]) + (matrix.shape[0],) + tuple(x.shape[lead + 1:])
    return shape, np.result_type(x.dtype, matrix.dtype)


def _product(x, matrix, core):
    return _as_columns(matrix.__matmul__, x, matrix.shape[0], core)


#: ``sparse_matmul(x, matrix=A, core=x.ndim)``: A @ x for a constant sparse A, over the
#: leading axes of x beyond its ``core`` ones.
sparse_matmul = Primitive(
    "sparse_matmul", _one_operation(_product),
    jvp=lambda primals, tangents, ans, matrix, core: sparse_matmul(
        tangents[0], matrix=matrix, core=core),
    linear="all", shape_rule=_product_shape,
    transpose=lambda ct, args, linear, matrix, core: (
        sparse_matmul(ct, matrix=matrix.T, core=core),),
)


def _solve_kernel(b, matrix, core, options=(None, True)):
    spsolve = original("scipy.sparse.linalg", "spsolve")
    return _as_columns(lambda columns: spsolve(matrix, columns, *options), b,
                       matrix.shape[1], core)


#: ``sparse_solve(b, matrix=A, core=b.ndim, options=(permc_spec, use_umfpack))``:
#: spsolve(A, b) for a constant sparse A.
sparse_solve = Primitive(
    "sparse_solve", _one_operation(_solve_kernel),
    jvp=lambda primals, tangents, ans, matrix, core, options: sparse_solve(
        tangents[0], matrix=matrix, core=core, options=options),
    linear="all", shape_rule=lambda b, matrix, core, options: (b.shape, np.result_type(
        b.dtype, matrix.dtype)),
    transpose=lambda ct, args, linear, matrix, core, options: (
        sparse_solve(ct, matrix=matrix.T.tocsc(), core=core, options=options),),
)


def _checked(matrix: Any, x: Any, what: str) -> Any:
    x = as_operand(x)
    if backend_of([primal_value(x)]) != "numpy":
        raise NeedsHost(f"{what}: a scipy.sparse matrix multiplies NumPy values, on the "
                        "host: it met JAX values (jax.jit)")
    shape = tuple(shape_of(x))
    if len(matrix.shape) != 2 or len(shape) not in (1, 2):
        raise TypeError(f"{what}: dualad applies a 2-D scipy.sparse matrix or array to a "
                        f"Dual of one or two dimensions (got shapes {matrix.shape} and "
                        f"{shape}); write the product with NumPy otherwise")
    return x


@scipy_rule("scipy.sparse._base", "_spbase._matmul_dispatch")
@scipy_rule("scipy.sparse._coo", "_coo_base._matmul_dispatch")
def matmul_dispatch(matrix: Any, other: Any) -> Any:
    """``A @ x`` (``A.dot(x)``, an spmatrix's ``A * x``) for a constant sparse ``A``."""
    x = _checked(matrix, other, "scipy.sparse A @ x")
    if shape_of(x)[0] != matrix.shape[1]:
        raise ValueError(f"matmul: dimension mismatch with signature (n,k={matrix.shape[1]}),"
                         f"(k={shape_of(x)[0]},m?)->(n,m?)")
    return sparse_matmul(x, matrix=matrix, core=len(shape_of(x)))


@scipy_rule("scipy.sparse._base", "_spbase._rmatmul_dispatch")
@scipy_rule("scipy.sparse._coo", "_coo_base._rmatmul_dispatch")
def rmatmul_dispatch(matrix: Any, other: Any) -> Any:
    """``x @ A`` for a constant sparse ``A``: ``(Aᵀ @ xᵀ)ᵀ``."""
    x = _checked(matrix, other, "scipy.sparse x @ A")
    if shape_of(x)[-1] != matrix.shape[0]:
        raise ValueError(f"matmul: dimension mismatch with signature (n?,k={shape_of(x)[-1]}),"
                         f"(k={matrix.shape[0]},m)->(n?,m)")
    core = len(shape_of(x))
    product = sparse_matmul(transpose(x, axes=(1, 0)) if core == 2 else x, matrix=matrix.T,
                            core=core)
    return transpose(product, axes=(1, 0)) if core == 2 else product


@scipy_rule("scipy.sparse.linalg", "spsolve")
@scipy_rule("scipy.sparse.linalg._dsolve.linsolve", "spsolve")
def spsolve(A: Any, b: Any, permc_spec: Any = None, use_umfpack: bool = True) -> Any:
    """``scipy.sparse.linalg.spsolve(A, b)`` for a constant sparse ``A`` and a Dual ``b``
    (a dense Dual ``A`` solves by ``np.linalg.solve``)."""
    if isinstance(primal_value(A), np.ndarray) or not hasattr(A, "tocsc"):
        return np.linalg.solve(as_operand(A), as_operand(b))
    x = _checked(A, b, "scipy.sparse.linalg.spsolve")
    if len(shape_of(x)) == 2 and shape_of(x)[1] == 1:  # a column: SciPy's x is a vector
        x = reshape(x, shape=(shape_of(x)[0],))
    matrix = A if A.format in ("csc", "csr") else A.tocsc()
    return sparse_solve(x, matrix=matrix, core=len(shape_of(x)),
                        options=(permc_spec, use_umfpack))


@scipy_rule("scipy.sparse._construct", "diags_array", "diags", "spdiags")
@scipy_rule("scipy.sparse", "diags_array", "diags", "spdiags")
@scipy_rule("scipy.sparse._base", "_spbase.__init__")  # csr_array(x), coo_array((x, ij)), ...
def built_from_duals(*args: Any, **kwargs: Any) -> Any:
    """A sparse matrix built from Duals: refused, saying how to write it instead."""
    raise TypeError(_BUILT_FROM_DUALS)
