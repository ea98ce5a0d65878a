"""Dual and HyperDual as JAX pytrees: their array parts are the leaves.

So a Dual can cross ``jax.jit``, ``jax.vmap`` or ``jax.tree_util`` functions
like any container of arrays; its tag (and a HyperDual's seed counts) travel
as static data.
"""

from __future__ import annotations

import jax

from dualad import Dual, HyperDual


def _flatten_dual(x: Dual):
    return (x.primal, x.tangent), x.tag


def _unflatten_dual(tag, children) -> Dual:
    primal, tangent = children
    return Dual._new(primal, tangent, tag)


def _flatten_hyperdual(x: HyperDual):
    return (x.primal, x.tangent), (x.tag, x._tag1, x._seeds)


def _unflatten_hyperdual(aux, children) -> HyperDual:
    tag2, tag1, seeds = aux
    out = object.__new__(HyperDual)
    out.primal, out.tangent = children
    out._tag, out._tag1, out._seeds = tag2, tag1, seeds
    return out


def register() -> None:
    """Register both types with ``jax.tree_util`` (once)."""
    for cls, flatten, unflatten in ((Dual, _flatten_dual, _unflatten_dual),
                                    (HyperDual, _flatten_hyperdual, _unflatten_hyperdual)):
        try:
            jax.tree_util.register_pytree_node(cls, flatten, unflatten)
        except ValueError:  # already registered, e.g. by an earlier import
            pass
