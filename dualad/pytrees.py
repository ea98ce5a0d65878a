"""Pytrees: the containers of arrays a transform takes and returns, and your own classes.

Arguments and results may be nested tuples, lists, dicts, namedtuples and ``None`` of
arrays (optree's pytrees, as in JAX); an instance of a ``@dataclasses.dataclass`` is a
container of its fields, as if registered with JAX's ``register_dataclass``. A class of
your own becomes a container with :func:`register_pytree_node` (or
:func:`register_dataclass`). Registrations live in dualad's own optree namespace,
:data:`NAMESPACE`: they change nothing for other libraries that use optree.

>>> import dataclasses, numpy as np, dualad
>>> @dataclasses.dataclass
... class Params:
...     w: np.ndarray
...     b: float
>>> g = dualad.grad(lambda p: np.sum(p.w ** 2) + 3.0 * p.b)(Params(np.ones(2), 1.0))
>>> g
Params(w=array([2., 2.]), b=array(3.))
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import optree

__all__ = ["LISTENERS", "NAMESPACE", "REGISTERED", "register_dataclass", "register_pytree_node",
           "tree_flatten", "tree_leaves", "tree_map", "tree_structure"]

#: The optree namespace of the classes registered with dualad.
NAMESPACE = "dualad"

#: The classes registered with dualad, ``cls -> (flatten_func, unflatten_func)``, and the
#: functions told of each registration (``dualad_gpu`` registers them with JAX too).
REGISTERED: dict[type, tuple[Callable, Callable]] = {}
LISTENERS: list[Callable] = []

tree_leaves = functools.partial(optree.tree_leaves, namespace=NAMESPACE)
tree_map = functools.partial(optree.tree_map, namespace=NAMESPACE)


def tree_flatten(tree: Any, is_leaf: Callable | None = None, none_is_leaf: bool = False
                 ) -> tuple[list, Any]:
    """``optree.tree_flatten`` in dualad's namespace, a dataclass instance among the
    leaves registered (its class, once) and flattened as a container of its fields."""
    leaves, spec = optree.tree_flatten(tree, is_leaf, none_is_leaf=none_is_leaf,
                                       namespace=NAMESPACE)
    if any(_is_dataclass_instance(leaf) for leaf in leaves):
        for leaf in leaves:
            if _is_dataclass_instance(leaf):
                _register_found(type(leaf))
        leaves, spec = optree.tree_flatten(tree, is_leaf, none_is_leaf=none_is_leaf,
                                           namespace=NAMESPACE)
    return leaves, spec


def tree_structure(tree: Any, none_is_leaf: bool = False) -> Any:
    """``optree.tree_structure`` in dualad's namespace (dataclasses as containers)."""
    return tree_flatten(tree, none_is_leaf=none_is_leaf)[1]


def register_pytree_node(cls: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> type:
    """Make instances of ``cls`` containers for every transform, as JAX's
    ``jax.tree_util.register_pytree_node`` does.

    Parameters
    ----------
    cls:
        The class.
    flatten_func:
        ``flatten_func(obj) -> (children, aux_data)``: the children (arrays, or
        containers of them) in a fixed order, and hashable data that is not
        differentiated (the same for objects of the same structure).
    unflatten_func:
        ``unflatten_func(aux_data, children) -> obj``: the object from new children.

    Returns
    -------
    ``cls`` (so it works as a decorator's helper).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> class Segment:
    ...     def __init__(self, start, end, label="s"):
    ...         self.start, self.end, self.label = start, end, label
    >>> _ = dualad.register_pytree_node(
    ...     Segment, lambda s: ((s.start, s.end), s.label),
    ...     lambda label, children: Segment(*children, label))
    >>> length = lambda s: np.linalg.norm(s.end - s.start)
    >>> g = dualad.grad(length)(Segment(np.zeros(2), np.array([3.0, 4.0])))
    >>> g.start, g.end
    (array([-0.6, -0.8]), array([0.6, 0.8]))
    """
    optree.register_pytree_node(cls, flatten_func, unflatten_func, namespace=NAMESPACE)
    _registered(cls, flatten_func, unflatten_func)
    return cls


def register_dataclass(cls: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] = ()) -> type:
    """Make a dataclass a container of its fields, as JAX's
    ``jax.tree_util.register_dataclass`` does (an unregistered dataclass is registered
    with every field as data the first time a transform meets one).

    Parameters
    ----------
    cls:
        A class made with ``@dataclasses.dataclass``.
    data_fields:
        The fields that are children (arrays, or containers of them): all fields
        not in ``meta_fields`` if None.
    meta_fields:
        The fields that are not differentiated (hashable: part of the structure).

    Returns
    -------
    ``cls``, so it can be used as a decorator.

    Examples
    --------
    >>> import dataclasses, numpy as np, dualad
    >>> @dualad.register_dataclass
    ... @dataclasses.dataclass
    ... class Spring:
    ...     k: float
    ...     x: np.ndarray
    >>> dualad.grad(lambda s: 0.5 * s.k * np.sum(s.x ** 2))(Spring(2.0, np.array([1.0, 3.0])))
    Spring(k=array(5.), x=array([2., 6.]))
    """
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise TypeError(f"register_dataclass takes a class made with @dataclasses.dataclass, "
                        f"got {cls!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    meta = tuple(meta_fields)
    data = tuple(n for n in names if n not in meta) if data_fields is None else \
        tuple(data_fields)
    if sorted(data + meta) != sorted(names):
        raise ValueError(f"register_dataclass: every field of {cls.__name__} must be in "
                         f"data_fields or meta_fields once; fields {names}, data {list(data)}, "
                         f"meta {list(meta)}")

    def flatten(obj: Any) -> tuple[tuple, tuple]:
        return tuple(getattr(obj, n) for n in data), tuple(getattr(obj, n) for n in meta)

    def unflatten(meta_values: tuple, children: Iterable) -> Any:
        obj = object.__new__(cls)  # (no __init__ or __post_init__: they may convert)
        for name, value in zip(data + meta, (*children, *meta_values)):
            object.__setattr__(obj, name, value)  # (frozen dataclasses too)
        return obj

    try:
        optree.register_pytree_node(cls, flatten, unflatten, namespace=NAMESPACE)
    except ValueError:  # registered before: this registration replaces that one
        optree.unregister_pytree_node(cls, namespace=NAMESPACE)
        optree.register_pytree_node(cls, flatten, unflatten, namespace=NAMESPACE)
    _registered(cls, flatten, unflatten)
    return cls


def _registered(cls: type, flatten: Callable, unflatten: Callable) -> None:
    REGISTERED[cls] = (flatten, unflatten)
    for listener in LISTENERS:
        listener(cls, flatten, unflatten)


def _is_dataclass_instance(x: Any) -> bool:
    return hasattr(type(x), "__dataclass_fields__") and not isinstance(x, type)


def _register_found(cls: type) -> None:
    """A dataclass met as a leaf: registered with every field as data (unless another
    thread just did)."""
    try:
        register_dataclass(cls)
    except ValueError:
        pass
