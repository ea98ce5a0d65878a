"""Dual and HyperDual as JAX pytrees: their array parts are the leaves.

So a Dual can cross ``jax.jit``, ``jax.vmap`` or ``jax.tree_util`` functions
like any container of arrays; its tag (and a HyperDual's seed counts) travel
as static data.
"""

from __future__ import annotations

import jax

from dualad import Dual, HyperDual, pytrees


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
    """Register both types with ``jax.tree_util`` (once), and the classes registered
    with dualad (:mod:`dualad.pytrees`), now and from now on."""
    for cls, flatten, unflatten in ((Dual, _flatten_dual, _unflatten_dual),
                                    (HyperDual, _flatten_hyperdual, _unflatten_hyperdual),
                                    *((c, *f) for c, f in list(pytrees.REGISTERED.items()))):
        _with_jax(cls, flatten, unflatten)
    if _with_jax not in pytrees.LISTENERS:
        pytrees.LISTENERS.append(_with_jax)


def _with_jax(cls: type, flatten, unflatten) -> None:
    try:
        jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    except ValueError:  # already registered, e.g. by an earlier import
        pass


def registers_new_classes(args: tuple) -> bool:
    """Whether flattening ``args`` as dualad does registered a class (a dataclass met
    for the first time): then JAX knows it too, and a call it refused can be retried."""
    before = len(pytrees.REGISTERED)
    pytrees.tree_flatten(args)
    return len(pytrees.REGISTERED) > before
