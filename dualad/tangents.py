"""Tangent arithmetic the number types and the rules share: shapes, seed axes, and the
elementwise chain rule.

A tangent carries a leading axis of K seeds ahead of its primal's shape; broadcasting
may leave it with fewer axes (:func:`align_tangent`) or a smaller shape
(:func:`fit_tangent`). :func:`elementwise_jvp` is the chain rule of every elementwise
primitive, Σᵢ ∂ᵢ·tᵢ, from the primitive's row of partial derivatives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .primitive import MINUS_ONE, ONE, Over, Primitive

__all__ = ["align_tangent", "check_tangent_shape", "elementwise_jvp", "fit_tangent"]


def check_tangent_shape(primal_shape: tuple, tangent_shape: tuple, seeds: bool = False) -> None:
    """Raise a ValueError naming both shapes when they differ."""
    if tuple(primal_shape) != tuple(tangent_shape):
        what = "tangent shape after the seed axis" if seeds else "tangent shape"
        raise ValueError(f"{what} {tuple(tangent_shape)} does not match the primal shape "
                         f"{tuple(primal_shape)}")


def align_tangent(t: Any, ndim: int) -> Any:
    """Insert unit axes after the seed axis so ``t`` has ``ndim + 1`` axes."""
    missing = ndim + 1 - t.ndim
    if missing <= 0:
        return t
    return _ops.reshape(t, shape=(t.shape[0],) + (1,) * missing + t.shape[1:])


def fit_tangent(t: Any, shape: tuple) -> Any:
    """Broadcast a tangent to ``(K, *shape)`` when broadcasting left it smaller."""
    full = (t.shape[0],) + tuple(shape)
    if t.shape == full:
        return t
    return _ops.broadcast_to(align_tangent(t, len(shape)), shape=full)


def elementwise_jvp(prim: Primitive, primals: list, tangents: list, ans: Any) -> Any:
    """Σᵢ ∂ᵢ·tᵢ over the arguments that carry a tangent (the Dual consumer of a row).

    Operators rather than primitive calls: on plain arrays they go straight to
    NumPy, on boxed values they are the primitives. Tangents that are only
    recorded (reverse mode) get the whole sum as one node of their tape.
    """
    nonfinite = prim.nonfinite_partials
    weights, terms = [], []
    for partial_fn, t in zip(prim.partials, tangents):
        if t is None or partial_fn is None:
            continue
        if partial_fn is ONE or partial_fn is MINUS_ONE:
            weights.append(partial_fn)
        elif nonfinite:  # inf at a finite point: no warning, and 0·∞ = 0 below
            with np.errstate(divide="ignore", invalid="ignore"):
                weights.append(partial_fn(ans, *primals))
        else:
            weights.append(partial_fn(ans, *primals))
        terms.append(t)
    if not terms:
        return None
    if getattr(terms[0], "records_linear", False):
        return terms[0].record_combination(weights, terms, ans, nonfinite)
    total = None
    owned = False  # whether ``total`` is a temporary of ours that may be overwritten
    ndim = ans.ndim + 1
    for weight, t in zip(weights, terms):
        if t.ndim < ndim:
            t = align_tangent(t, ndim - 1)
        if weight is ONE:
            term = t
        elif weight is MINUS_ONE:
            term = -t
        elif type(weight) is Over:
            term = _ops.scale(weight.reciprocal(), t) if nonfinite else t / weight.denominator
        elif nonfinite:
            term = _ops.scale(weight, t)
        else:
            term = weight * t
        if total is None:
            total, owned = term, term is not t
        elif owned and total.size >= _IN_PLACE_MIN_SIZE and _can_add_in_place(total, term):
            np.add(total, term, out=total)  # large arrays: spare an allocation
        else:
            total, owned = total + term, True
    if total.shape[1:] == ans.shape:
        return total
    return fit_tangent(total, ans.shape)


_IN_PLACE_MIN_SIZE = 1 << 16


def _can_add_in_place(total: Any, term: Any) -> bool:
    return (type(total) is np.ndarray and type(term) is np.ndarray and total.shape == term.shape
            and total.dtype == np.result_type(total, term) and total.flags.writeable)


# The rule table's namespace, filled when dualad.rules loads.
from . import ops as _ops  # noqa: E402,I001
