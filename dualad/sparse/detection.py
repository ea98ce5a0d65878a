"""Sparsity detection: ``jacobian_sparsity`` and ``hessian_sparsity``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import Dual, as_float_array
from ..operands import output_of
from ..reverse import grad
from . import rows as _rows
from .patterns import PatternTag, PatternVar, ValueDependentError, varying

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

        The global pattern is found twice, at ``x`` and at its values shuffled; if
        the two differ (the function picks elements by their values in a way the
        detection cannot bound), :class:`~dualad.sparse.ValueDependentError`
        says so rather than return a pattern that holds at ``x`` only.

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
    if local or x.size == 0:
        return _detect(fun, x, args, local)
    # A second opinion, at x's values shuffled (one value: moved), catches a rule that
    # picks elements by their values where the Varying mark cannot follow (np.asarray
    # drops it). It runs first and leaves a fingerprint: one pattern in memory at a time.
    shuffled = (np.random.default_rng(0).permutation(x.ravel()).reshape(x.shape)
                if x.size > 1 else -2.0 * x - 1.0)
    try:
        with np.errstate(all="ignore"):  # that point is ours: its warnings are not news
            twin = _fingerprint(_detect(fun, shuffled, args, local))
    except Exception:  # noqa: BLE001 - the function refuses that point: no second opinion
        twin = None
    pattern = _detect(fun, x, args, local)
    if twin is not None and twin != _fingerprint(pattern):
        raise ValueDependentError(
            "the sparsity pattern found at x differs from the one at another point: the "
            "function picks elements by their values (the set functions np.union1d, "
            "np.setdiff1d, ...). Detect the pattern at this "
            "x only with local=True, or give the pattern (sparsity=) to sparse_jacobian.")
    return pattern


def _fingerprint(pattern: Any) -> tuple:
    """The pattern's shape and a hash of its canonical structure."""
    if not pattern.has_canonical_format:
        pattern.sum_duplicates()
    digest = hashlib.blake2b(digest_size=16)
    for part in (pattern.indptr, pattern.indices):
        digest.update(part.dtype.str.encode())
        digest.update(np.ascontiguousarray(part))
    return pattern.shape, digest.digest()


def _detect(fun: Callable, x: np.ndarray, args: tuple, local: bool) -> Any:
    n = x.size
    tag = PatternTag(n, local)
    seed = PatternVar(_rows.identity(n), (1,) + x.shape, x.dtype, tag)
    try:
        # Globally, every value computed from x carries the mark of a Varying array, so
        # an index or a mask a rule derives from it counts as any index or mask.
        out = output_of(fun(Dual._new(x if local else varying(x), seed, tag), *args))
    finally:
        tag.live = False
    return _rows_of(out, tag, n)


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
    return (pattern + pattern.T).tocsr()


def _rows_of(out: Any, tag: PatternTag, n: int) -> Any:
    if isinstance(out, Dual) and out._tag is tag:
        size = out.size
        if isinstance(out.tangent, PatternVar):
            rows = out.tangent.rows
            if rows.shape[0] != size:  # a tangent left broadcast smaller than its primal
                rows = _rows.gather(rows, np.zeros(size, np.int64)) if rows.shape[0] == 1 \
                    else rows
            return rows.tocsr()
        return _rows.empty(size, n)
    if isinstance(out, (np.ndarray, np.generic, float, int)):
        return _rows.empty(int(np.size(out)), n)
    raise TypeError(f"jacobian_sparsity: fun must return an array, got {type(out).__name__}")
