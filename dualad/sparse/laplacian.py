"""The sparse forward Laplacian: ``dualad.laplacian(f, method="sparse")``.

The collapsed pass of :mod:`dualad.operators` computes Σ_d ½u_dᵀ∇²f u_d along any
directions u_d at a cost that grows with their number D. The exact Laplacian takes
the n unit directions. Where ∂²f/∂xᵢ∂xⱼ is structurally zero for most pairs, the
coordinates are grouped into colours, no two coupled coordinates in one
(:func:`~dualad.sparse.coloring.distance1_coloring` of the Hessian's pattern), and
one direction per colour, u_c = Σ_{i of colour c} e_i, gives

    Σ_c u_cᵀ∇²f u_c = Σ_i ∂²f/∂xᵢ² + Σ_c Σ_{i ≠ j of colour c} ∂²f/∂xᵢ∂xⱼ = Δf,

the second sum being structural zeros: D is the number of colours, not n. A sum
over particles of a per-particle network has one colour per feature of a particle.

The pattern is the one :func:`~dualad.sparse.sparse_hessian` finds and keeps:
:func:`~dualad.hessian_sparsity` of the sum of the output's leaves (the union of
their patterns), prepared once per input shape and dtype, checked at every call
that the evaluation does not replay to the end (:class:`~dualad.sparse.PatternChanged`
prepares it again), and detected at the first point only with ``local=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse

from ..pytrees import tree_leaves, tree_map
from ..dual import as_float_array, primal_value
from ..inputs import as_array
from ..collapsed import collapsed, scalar_input
from ..replay import REPLAY_BY_DEFAULT
from . import coloring
from .detection import hessian_sparsity
from .patterns import ValueDependentError
from .checked import _ByShape, _Checked, _detector

__all__ = ["SparseLaplacian", "sparse_laplacian"]


def _summed(fun: Callable) -> Callable:
    """A scalar whose Hessian pattern is the union of those of ``fun``'s output leaves
    (a sum: dependencies are unions, whatever the values)."""
    def total(*args: Any, **kwargs: Any) -> Any:
        leaves = tree_leaves(fun(*args, **kwargs))
        parts = [np.real(leaf) + np.imag(leaf) if np.iscomplexobj(primal_value(leaf))
                 else leaf for leaf in leaves]
        return sum((np.sum(part) for part in parts), start=0.0)

    return total


class SparseLaplacian(_Checked):
    """A Hessian pattern prepared for the Laplacian at one input shape and dtype: call
    it to evaluate (``lap.prepare(x)`` of :func:`sparse_laplacian` gives it).

    Attributes
    ----------
    pattern:
        Symmetric boolean ``scipy.sparse.csr_array`` of shape ``(n, n)``: the union of
        the output leaves' Hessian patterns.
    colors:
        The colour of each coordinate (flattened in C order), no two coupled ones alike.
    passes:
        The number of colours: the directions of the collapsed pass, against ``n``
        for the exact Laplacian.
    """

    def __init__(self, fun: Callable, args: tuple, argnum: int = 0, *, local: bool = False,
                 replay: bool = REPLAY_BY_DEFAULT, kwargs: dict | None = None,
                 detected: sparse.csr_array | None = None) -> None:
        x = as_float_array(args[argnum])
        find = _detector(hessian_sparsity, _summed(fun), argnum, local, symmetric=True)
        if detected is None:
            try:
                detected = find(_primal_args(args, argnum), kwargs or {})
            except ValueDependentError as error:
                raise ValueDependentError(
                    f"laplacian(method='sparse'): {error} For the Laplacian: "
                    "local=True takes the pattern at the first point (and trusts it at "
                    "later calls), method='exact' needs no pattern.") from None
        self.pattern = detected
        self.colors = coloring.distance1_coloring(detected)
        self.passes = int(self.colors.max(initial=-1)) + 1
        seeds = self.colors == np.arange(self.passes)[:, None]
        self.directions = seeds.astype(x.dtype).reshape((self.passes,) + tuple(x.shape))
        detect = None if local else (
            lambda args, kwargs, local=False: find(_primal_args(args, argnum), kwargs, local))
        proving = detect is not None and REPLAY_BY_DEFAULT and replay
        self._checking(fun, argnum, x, self._interpret, replay, detect, proving)

    def __repr__(self) -> str:
        n = self.pattern.shape[0]
        return f"SparseLaplacian({n}x{n}, nnz={self.pattern.nnz}, passes={self.passes})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The Laplacian of each output leaf at ``args`` (of the shape prepared for);
        keyword arguments go to the function. A call whose evaluation does not replay
        to the end checks the pattern first, as :meth:`SparseHessian.__call__
        <dualad.sparse.SparseJacobian.__call__>` does."""
        return self._checked(args, kwargs)

    def _interpret(self, fun: Callable, *args: Any) -> Any:
        _, sums = collapsed(fun, args, self.argnum, self.directions, np.ones(self.passes))
        return tree_map(lambda s: as_array(s * 2), sums)


def _primal_args(args: tuple, argnum: int) -> tuple:
    """``args`` with the point's values only (an enclosing transform's Duals have the
    pattern of their values: the detection runs on those)."""
    return args[:argnum] + (primal_value(args[argnum]),) + args[argnum + 1:]


def sparse_laplacian(fun: Callable, argnums: int = 0, *, local: bool = False,
                     replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """``dualad.laplacian(fun, argnums, method="sparse", local=local, replay=replay)``:
    see :func:`dualad.laplacian`. ``lap.prepare(*args)`` gives the
    :class:`SparseLaplacian` (pattern, colours, passes) used for those shapes.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.sum(np.sin(x[1:] * x[:-1]))   # a tridiagonal Hessian
    >>> lap = sparse_laplacian(f)
    >>> lap.prepare(np.ones(6))
    SparseLaplacian(6x6, nnz=16, passes=2)
    >>> x = np.linspace(0.0, 1.0, 6)
    >>> bool(np.isclose(lap(x), np.trace(dualad.hessian(f)(x)), rtol=1e-13))
    True
    """
    prepared = _ByShape(lambda args, kwargs, detected: SparseLaplacian(
        fun, args, argnums, local=local, replay=replay, kwargs=kwargs, detected=detected),
        argnums)

    def lap(*args: Any, **kwargs: Any) -> Any:
        scalar_input(args, argnums, "laplacian")
        return prepared.call(args, kwargs)

    lap.prepare = lambda *args, **kwargs: prepared.get(args, kwargs)  # type: ignore[attr-defined]
    lap.__doc__ = f"The sparse Laplacian of {getattr(fun, '__name__', 'fun')}."
    return lap
