"""Collapsed Taylor mode: the tag whose values carry D first derivatives and one
weighted sum of second Taylor coefficients, and the forward pass that seeds it.

The forward differential operators (:mod:`dualad.operators`) and the sparse
Laplacian (:mod:`dualad.sparse.laplacian`) both run on it; see
:mod:`dualad.operators` for the recurrences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .pytrees import tree_flatten
from . import ops
from .dual import Dual, as_float_array
from .tangents import align_tangent, fit_tangent
from .inputs import read_leaf
from .primitive import MINUS_ONE, ONE, Primitive, Tag
from .taylor import RowsTag, Series, _Context, _per_coefficient, evaluated, zeros_like

__all__ = ["CollapsedTag", "collapsed", "scalar_input"]


class CollapsedTag(RowsTag):
    """The tag of one collapsed evaluation: its Duals' tangents hold D first derivatives
    and, last, the weighted sum of the second Taylor coefficients."""

    __slots__ = ("weights",)
    order = 2  # (second-order information: a solver's chord-Newton takes two steps)

    def __init__(self, weights: np.ndarray) -> None:
        super().__init__()
        self.weights = weights

    def nonlinear(self, prim: Primitive, primals: list, tangents: list, moving: list,
                  ans: Any, params: dict) -> Any:
        if prim.partials is not None:
            return self._elementwise(prim, primals, tangents, moving, ans)
        rows = _per_coefficient(prim, primals, tangents, ans, params)
        if rows is None:  # the result does not depend on the moving arguments
            return None
        curvature = self._through_series(prim, primals, tangents, ans, params)
        return _added_to_last(fit_tangent(rows, np.shape(ans)), curvature, len(self.weights))

    def _elementwise(self, prim: Primitive, primals: list, tangents: list, moving: list,
                     ans: Any) -> Any:
        """The rows of y = f(x₁, …) by its row of partials pᵢ: Σᵢ pᵢ·(each row of xᵢ),
        plus ½ Σᵢⱼ ∂ⱼpᵢ·cᵢⱼ on the last, cᵢⱼ = Σ_d w_d ∂_d xᵢ ∂_d xⱼ (the directions
        contracted first). Each partial is evaluated once, on xⱼ moving by cᵢⱼ (one
        tag) and y moving by one (a second tag, the outer: where pᵢ does not read y, as
        sech² does not, nothing is computed for it), so that
        ∂ⱼpᵢ·cᵢⱼ = first + second·Σⱼ pⱼcᵢⱼ."""
        D, shape = len(self.weights), tuple(np.shape(ans))
        ndim = len(shape)
        firsts = {i: align_tangent(tangents[i][:D], ndim) for i in moving}
        by_x, weights, pending = Tag(), {}, []
        by_y = Tag()  # made second: the outer of the two
        y = Dual._new(ans, np.ones((1,) + shape, np.result_type(ans)), by_y)
        for i in moving:
            partial = prim.partials[i]
            if partial is None or partial is ONE or partial is MINUS_ONE:
                weights[i] = partial
                continue
            c = {j: self._contracted(firsts[i] * firsts[j]) for j in moving}
            lifted = [a if j not in moving else Dual._new(_shaped(a, shape), _lead(c[j], ans),
                                                         by_x)
                      for j, a in enumerate(primals)]
            p = evaluated(prim, partial, y, lifted)
            second = None
            if isinstance(p, Dual) and p._tag is by_y:
                p, second = p.primal, _of_tag(p.tangent, by_x, primal=True)
            first = _of_tag(p, by_x, primal=False)
            weights[i] = _of_tag(p, by_x, primal=True)
            if first is not None or second is not None:
                pending.append((first, second, c))
        rows = None
        for i, w in weights.items():
            if w is None:
                continue
            t = fit_tangent(align_tangent(tangents[i], ndim), shape)
            term = t if w is ONE else -t if w is MINUS_ONE else \
                ops.scale(w, t) if prim.nonfinite_partials else w * t
            rows = term if rows is None else rows + term
        curvature = None
        for first, second, c in pending:  # (each with a leading axis of one)
            term = None if first is None else fit_tangent(first, shape)
            if second is not None:
                moved = None
                for j, w in weights.items():
                    if w is None:
                        continue
                    part = c[j] if w is ONE else -c[j] if w is MINUS_ONE else w * c[j]
                    moved = part if moved is None else moved + part
                if moved is not None:
                    moved = fit_tangent(second, shape) * moved
                    term = moved if term is None else term + moved
            if term is not None:
                curvature = term if curvature is None else curvature + term
        return rows if curvature is None else _added_to_last(rows, curvature * 0.5, D)

    def _contracted(self, products: Any) -> Any:
        """Σ_d w_d·products[d], as one matrix product (a BLAS call: faster than a sum
        over the first axis, and than einsum's path search)."""
        shape = tuple(np.shape(products))[1:]
        if len(shape) == 1:
            return ops.matmul(self.weights, products)
        flat = ops.reshape(products, shape=(len(self.weights), int(np.prod(shape, dtype=int))))
        return ops.reshape(ops.matmul(self.weights, flat), shape=shape)

    def _through_series(self, prim: Primitive, primals: list, tangents: list, ans: Any,
                        params: dict) -> Any:
        """Σ_d w_d y_d⁽²⁾ from a two-term series along each direction (x⁽²⁾ = 0)."""
        total = zeros_like(ans)
        for d, w in enumerate(self.weights):
            context = _Context()
            args = [a if t is None else Series.known(a, fit_tangent(t, np.shape(a))[d:d + 1],
                                                      context)
                    for a, t in zip(primals, tangents)]
            y = Series.result(prim, args, params, ans, context)
            total = total + y.coefficient(2) * w
        return total


def _shaped(value: Any, shape: tuple) -> Any:
    """``value`` broadcast to ``shape`` (as it is where it has that shape already)."""
    return value if np.shape(value) == shape else ops.broadcast_to(value, shape=shape)


def _lead(value: Any, ans: Any) -> Any:
    """``value`` broadcast to ``ans``'s shape, with a leading axis of one."""
    shape = tuple(np.shape(ans))
    return ops.reshape(_shaped(value, shape), shape=(1,) + shape)


def _of_tag(value: Any, tag: Tag, primal: bool) -> Any:
    """``value``'s primal (``primal``) or its tangent (None where it has none) at
    ``tag``: a value that is not a Dual of ``tag`` is its own primal."""
    if isinstance(value, Dual) and value._tag is tag:
        return value.primal if primal else value.tangent
    return value if primal else None


def _added_to_last(rows: Any, value: Any, D: int) -> Any:
    """``rows`` (D + 1 of them) with ``value`` (one, or a value of each row's shape)
    added to the last: the first D as they are, beside the last plus ``value`` (no
    array of zeros the size of ``rows``)."""
    shape = tuple(np.shape(rows))
    value = _shaped(value, (1,) + shape[1:])
    last = ops.getitem(rows, index=(slice(D, None),)) + value
    return ops.concatenate(ops.getitem(rows, index=(slice(0, D),)), last, axis=0)


def collapsed(fun: Callable, args: tuple, argnum: int, directions: np.ndarray,
               weights: np.ndarray, seed_placement: Callable | None = None
               ) -> tuple[Any, Any]:
    """``fun(*args)`` and, for each output leaf, Σ_d w_d·½u_dᵀ∇²y u_d (``directions``:
    (D, *x.shape); ``seed_placement`` as in :func:`dualad.jacfwd`)."""
    x = as_float_array(args[argnum])
    tag = CollapsedTag(np.asarray(weights, dtype=x.dtype))
    directions = np.asarray(directions, dtype=x.dtype)
    seeds = np.concatenate([directions, np.zeros((1,) + x.shape, x.dtype)], axis=0)
    call = list(args)
    call[argnum] = Dual._new(x, seeds if seed_placement is None else seed_placement(seeds),
                             tag)
    D = len(weights)
    try:
        out = fun(*call)
        leaves, tree = tree_flatten(out)
        pairs = [read_leaf(leaf, tag, D + 1, "laplacian") for leaf in leaves]
    finally:
        tag.live = False
    values = tree.unflatten([p for p, _ in pairs])
    sums = tree.unflatten([fit_tangent(t, np.shape(p))[D] for p, t in pairs])
    return values, sums


def scalar_input(args: tuple, argnum: int, name: str) -> np.ndarray:
    if not -len(args) <= argnum < len(args):
        raise ValueError(f"{name}: argnums {argnum} is out of range for a call with "
                         f"{len(args)} positional arguments")
    x = as_float_array(args[argnum])
    if x.dtype.kind == "c":
        raise TypeError(f"{name} takes real inputs")
    return x
