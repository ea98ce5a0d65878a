"""Sparsity detection: ``jacobian_sparsity`` and ``hessian_sparsity``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..constructors import scoped
from ..dual import Dual, as_float_array
from ..operands import output_of
from ..reverse import grad
from . import rows as _rows
from .patterns import DETECTING, PatternTag, PatternVar, ValueDependentError, varying

__all__ = ["jacobian_sparsity", "hessian_sparsity"]


def jacobian_sparsity(fun: Callable, x: Any, *args: Any, local: bool = False) -> Any:
    """The sparsity pattern of the Jacobian of ``fun`` with respect to ``x``.

    ``fun(x, *args)`` runs once, unmodified, on a Dual whose tangent records
    which elements of ``x`` each element depends on (see
    :mod:`dualad.sparse.patterns`): memory grows with the number of nonzeros,
    never with ``m × n``.

    Parameters
    ----------
    fun:
        A function of an array ``x`` (and other arguments, held fixed) returning
        an array.
    x:
        The point; its shape and dtype are what the pattern is for.
    local:
        ``False`` (the default) gives the global pattern, valid for every ``x``:
        products count whatever the values of their factors, ``np.where`` and
        ``np.maximum`` count both sides, and Python control flow on a value of
        ``x`` raises. ``True`` gives the pattern at this ``x``: a product with a
        zero factor or the side of a ``where`` not taken adds nothing.

        Where a rule reads values of ``x`` in a way the global detection cannot
        bound (to pick elements or zeros), the pattern is found again at a second
        point (``x``'s values moved by one place, plus a small ramp); if the two
        differ, :class:`~dualad.sparse.ValueDependentError` says so rather than
        return a pattern that holds at ``x`` only.

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, of shape ``(fun(x).size, x.size)`` (both flattened in C order):
        ``True`` where ∂fᵢ/∂xⱼ may be nonzero.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> def residual(u):  # a 1-D Laplacian with a reaction term
    ...     padded = np.concatenate(([0.0], u, [0.0]))
    ...     return padded[:-2] - 2 * u + padded[2:] + np.exp(u)
    >>> dualad.jacobian_sparsity(residual, np.zeros(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1],
           [0, 0, 1, 1]])
    >>> f = lambda x: np.where(x > 0, x[::-1], 0.0)
    >>> dualad.jacobian_sparsity(f, np.array([1.0, -1.0])).toarray()
    array([[False,  True],
           [ True, False]])
    >>> dualad.jacobian_sparsity(f, np.array([1.0, -1.0]), local=True).toarray()
    array([[False,  True],
           [False, False]])
    """
    x = as_float_array(x)
    pattern, doubts = _detect(fun, x, args, local)
    if local or not doubts:
        return pattern
    # A rule read x's values where the Varying mark cannot follow (np.asarray drops
    # it), to pick elements or zeros: a second opinion at another point, x's values
    # moved by one place plus a small ramp, so that equal values (a starting guess of
    # zeros) part.
    flat = x.ravel()
    if flat.size > 1:
        ramp = np.linspace(0.0, 1e-3 * (1.0 + float(np.max(np.abs(flat)))), flat.size)
        other = (np.roll(flat, 1) + ramp).astype(x.dtype).reshape(x.shape)
    else:
        other = -2.0 * x - 1.0
    try:
        with np.errstate(all="ignore"):  # that point is ours: its warnings are not news
            twin, _ = _detect(fun, other, args, local)
    except Exception:  # noqa: BLE001 - the function refuses that point: no second opinion
        return pattern
    if not (twin.shape == pattern.shape and np.array_equal(twin.indptr, pattern.indptr)
            and np.array_equal(twin.indices, pattern.indices)):
        raise ValueDependentError(
            "the sparsity pattern found at x differs from the one at another point: the "
            "function picks elements by their values (the set functions np.union1d, "
            "np.setdiff1d, ...). Detect the pattern at this "
            "x only with local=True, or give the pattern (sparsity=) to sparse_jacobian.")
    return pattern


@scoped
def _detect(fun: Callable, x: np.ndarray, args: tuple, local: bool) -> tuple[Any, bool]:
    """The pattern at x, and whether the detection doubts it holds elsewhere."""
    n = x.size
    tag = PatternTag(n, local)
    seed = PatternVar(_rows.identity(n), (1,) + x.shape, x.dtype, tag)
    token = DETECTING.set(tag)
    try:
        # Globally, every value computed from x carries the mark of a Varying array, so
        # an index or a mask a rule derives from it counts as any index or mask.
        out = output_of(fun(Dual._new(x if local else varying(x), seed, tag), *args))
    finally:
        DETECTING.reset(token)
        tag.live = False
    return _rows_of(out, tag, n), tag.doubts


def hessian_sparsity(fun: Callable, x: Any, *args: Any, local: bool = False) -> Any:
    """The sparsity pattern of the Hessian of a scalar ``fun`` with respect to ``x``.

    It is the Jacobian pattern of the gradient: ``grad(fun)`` runs on a Dual
    that records dependencies, so only second-order interactions appear
    (``x·y`` links x and y, ``sin(x)`` links x with itself, ``x + y`` links
    nothing). The pattern is symmetric, of shape ``(x.size, x.size)``;
    ``local`` is as for :func:`jacobian_sparsity`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> rosenbrock = lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> dualad.hessian_sparsity(rosenbrock, np.zeros(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1],
           [0, 0, 1, 1]])
    >>> dualad.hessian_sparsity(lambda x: x[0] * x[1] + x[2], np.ones(3)).toarray().astype(int)
    array([[0, 1, 0],
           [1, 0, 0],
           [0, 0, 0]])
    """
    gradient = grad(fun, replay=False)
    pattern = jacobian_sparsity(lambda x, *args: gradient(x, *args), x, *args, local=local)
    return _rows.compact((pattern + pattern.T).tocsr())


def _rows_of(out: Any, tag: PatternTag, n: int) -> Any:
    if isinstance(out, Dual) and out._tag is tag:
        size = out.size
        if isinstance(out.tangent, PatternVar):
            rows = out.tangent.rows
            if rows.shape[0] != size:  # a tangent left broadcast smaller than its primal
                rows = _rows.gather(rows, np.zeros(size, np.int64)) if rows.shape[0] == 1 \
                    else rows
            rows = rows.tocsr()
            if not rows.has_canonical_format:  # sorted, once each: comparable
                rows.sum_duplicates()
            return _rows.compact(rows)
        return _rows.empty(size, n)
    if isinstance(out, (np.ndarray, np.generic, float, int)):
        return _rows.empty(int(np.size(out)), n)
    raise TypeError(f"jacobian_sparsity: fun must return an array, got {type(out).__name__}")
