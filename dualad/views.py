"""Writes into Duals with NumPy's aliasing.

``x[i] = y`` copies ``x``'s primal before writing into it, so nothing computed
earlier changes (the caller's array, a value a reverse-mode tape holds), and
replaces its tangent by an exact select. Views of a Dual (slices, reshapes,
transposes: whatever NumPy makes a view) record the Dual they view and how they
were made from it, so a write into a view reaches its base and a write into a
base reloads its live views, as in NumPy.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ops
from .dual import Dual, backend_of, primal_value
from .primitive import NeedsHost
from .tangents import fit_tangent


def store(x: Dual, index_tuple: tuple, value: Any) -> None:
    """Replace the primal and tangent by copies with ``value`` at the index."""
    index = index_tuple[0] if len(index_tuple) == 1 else index_tuple
    if isinstance(value, Dual) and value._tag is x._tag:
        v_primal, v_tangent = value.primal, value.tangent
    else:
        v_primal, v_tangent = value, None
    primal = lift(x.primal, v_primal)
    if isinstance(primal, Dual):  # an outer perturbation: a fresh box, written
        primal = primal._wrap(primal.primal, primal.tangent)
        store(primal, index_tuple, v_primal)
    elif isinstance(primal, (np.ndarray, np.generic)):
        # (a 0-d value may be a NumPy scalar, which a replay's recording traces: np.copy
        # makes it an array in both)
        primal = primal.copy() if isinstance(primal, np.ndarray) and primal.ndim \
            else np.copy(primal)
        if isinstance(v_primal, np.ndarray) and type(v_primal) is not type(primal):
            # (see it recorded)
            primal = np.zeros_like(v_primal, primal.dtype, shape=primal.shape) + primal
        primal[index] = v_primal
    else:  # an immutable array (JAX): a functional update
        primal = primal.at[index].set(v_primal)
    x.primal = primal
    if v_tangent is None and x.tangent is None:
        return
    # The tangent is replaced, not written into: a select of the scattered new
    # tangent is exact, linear, and works for tangents that are only recorded.
    picked_shape = np.broadcast_to(np.empty((), bool), x.shape)[index].shape
    hits = ops.batched_index_add(np.ones((1,) + picked_shape, np.int8), index_tuple,
                                  x.shape)
    if hits.max(initial=0) > 1:
        raise ValueError("assigning to a Dual through repeated indices is ambiguous; "
                         "give each position once")
    new = 0
    if v_tangent is not None:
        new = ops.batched_index_add(fit_tangent(v_tangent, picked_shape), index_tuple,
                                     x.shape)
    x.tangent = ops.where(hits > 0, new, 0 if x.tangent is None else x.tangent)


def written(x: Dual, source: Dual | None = None) -> None:
    """After a write: the views of this Dual reload, the Dual it views is written."""
    for view in live_views(x):
        if view is not source:
            reload(view)
    viewed = getattr(x, "_viewed", None)
    if viewed is not None:
        base, make = viewed
        positions = make(np.arange(base.size).reshape(base.shape))
        store(base, np.unravel_index(positions, base.shape), x)
        written(base, source=x)


def reload(x: Dual) -> None:
    """Take the values of the Dual this is a view of again (it was written)."""
    base, make = x._viewed
    fresh = make(base)
    if isinstance(fresh, Dual) and fresh._tag is x._tag:
        x.primal, x.tangent = fresh.primal, fresh.tangent
    else:
        x.primal, x.tangent = fresh, None
    for view in live_views(x):
        reload(view)


def lift(container: Any, value: Any) -> Any:
    """``container``, wrapped in zero-tangent Duals so that ``value``'s
    perturbations (of tags below the writer's) can be stored in it. The
    container itself is left as it is."""
    if not isinstance(value, Dual):
        return container
    if isinstance(container, Dual):
        if container._tag is value._tag:
            return container
        if container._tag.level > value._tag.level:
            tangent = container.tangent
            return container._wrap(lift(container.primal, value),
                                   None if tangent is None else lift(tangent, value))
    return value._wrap(lift(container, value.primal), None)


def check_writable(target: Dual, value: Any) -> None:
    if isinstance(value, Dual) and value._tag.level > target._tag.level:
        raise TypeError(
            "cannot write a Dual of an inner transform into a Dual of an outer one in "
            "place; build the result with np.where/np.concatenate instead")


def getitem_of(index: tuple) -> Callable:
    return lambda base: ops.getitem(base, index=index)


def as_view(base: Dual, result: Any, make: Callable[[Any], Any]) -> Any:
    """``result`` (which is ``make(base)``), marked as a view of ``base`` where
    NumPy's result is a view of its input, so that writes go through."""
    if not is_view(base, primal_value(result), make):
        return result
    if not (isinstance(result, Dual) and result._tag is base._tag):
        result = base._wrap(result, None)  # a view without a tangent stays a Dual
    result._viewed = (base, make)
    views = getattr(base, "_viewers", None)
    if views is None:
        views = base._viewers = []
    elif len(views) >= 16 and len(views) & (len(views) - 1) == 0:  # drop dead ones now and then
        views[:] = [ref for ref in views if ref() is not None]
    views.append(weakref.ref(result))
    return result


def is_view(base: Dual, value: Any, make: Callable[[Any], Any]) -> bool:
    """Whether NumPy's ``make(base)`` shares memory with ``base``: on the arrays
    themselves, or for arrays of another backend (JAX, immutable) on NumPy
    stand-ins of the same shapes, so that writes follow NumPy's rules there too."""
    if type(value) is np.ndarray:
        return value.base is not None and np.may_share_memory(value, primal_value(base))
    if isinstance(value, np.ndarray):  # a replay's recording: traced values share memory
        return np.may_share_memory(value, primal_value(base))
    if backend_of((value,)) == "numpy":
        return False  # a NumPy or Python scalar: a copy
    standing = stand_in(base)
    made = make(standing)
    # (an index of traced integers makes a JAX gather of the stand-in: a copy)
    return isinstance(made, np.ndarray) and np.may_share_memory(made, standing)


def stand_in(x: Dual) -> np.ndarray:
    """An int8 NumPy array aliased as ``x`` is to the Duals it is a view of."""
    viewed = getattr(x, "_viewed", None)
    if viewed is None:
        return np.empty(x.shape, np.int8)
    base, make = viewed
    return make(stand_in(base))


def live_views(x: Dual) -> list:
    refs = getattr(x, "_viewers", None)
    return [v for v in (ref() for ref in refs) if v is not None] if refs else []


#: NumPy functions whose result is a view of their first argument.
VIEW_FUNCTIONS = frozenset({np.reshape, np.ravel, np.transpose, np.permute_dims,
                            np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims})


def static_index(index: Any) -> tuple:
    """An index as a tuple of static parts: lists become arrays, Duals are refused."""
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if isinstance(item, Dual):
            value = primal_value(item)
            if getattr(value, "dtype", None) == np.bool_ and backend_of((value,)) != "numpy":
                # (dualad_gpu: a mask traced by jax.jit, which selects a number of
                # elements known only when it runs)
                raise NeedsHost("it indexes with a boolean mask computed from its inputs "
                                "(x[x > 0], x[x > 0] = 0.0), which selects a number of "
                                "elements that jax.jit cannot know while it traces; "
                                "np.where(mask, new, x) keeps such code in jax.jit")
            raise TypeError("a Dual cannot be used as an index; index with integers "
                            "or with boolean masks from comparisons")
    return tuple(np.asarray(i) if isinstance(i, list) else i for i in items)
