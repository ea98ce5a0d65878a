"""A package's function with ``numpy`` swapped for ``jax.numpy``: the JAX reference.

:func:`swap_func` copies a function with new globals: each module among NumPy,
``numpy.linalg``, ``scipy.special``, ``scipy.linalg`` and ``scipy.stats`` becomes
its ``jax`` counterpart, each NumPy or SciPy function imported by name becomes the
JAX function of the same name where there is one, and each function of the
package itself (its module name starts with ``root``) is swapped in turn.
:func:`swap_class` and :func:`swap_instance` do the same for the methods of a
class and its bases from the package. Nothing else changes: code that builds
arrays in place, calls ``float()`` or ``math``, or converts with ``np.array``
fails under JAX as it would for any tracer, and the case gets no JAX reference.
"""

from __future__ import annotations

import copy
import functools
import types

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.special as jss
import jax.scipy.stats as jst
import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats


@functools.cache
def _module_map() -> dict[int, types.ModuleType]:
    return {id(np): jnp, id(np.linalg): jnp.linalg, id(scipy.special): jss,
            id(scipy.linalg): jsl, id(scipy.stats): jst}


def _jax_equivalent(value):
    """The JAX function that stands for a NumPy or SciPy function, or None."""
    name = getattr(value, "__name__", None)
    if name is None:
        return None
    module = getattr(value, "__module__", "") or ""
    if isinstance(value, np.ufunc) or module.startswith("numpy"):
        if module.startswith("numpy.linalg") and hasattr(jnp.linalg, name):
            return getattr(jnp.linalg, name)
        if hasattr(jnp, name):
            return getattr(jnp, name)
    if isinstance(value, np.ufunc) or module.startswith("scipy.special"):
        if hasattr(jss, name):
            return getattr(jss, name)
    if module.startswith("scipy.linalg") and hasattr(jsl, name):
        return getattr(jsl, name)
    return None


def swap_func(fn: types.FunctionType, root: str, memo: dict) -> types.FunctionType:
    """``fn`` with JAX globals; ``memo`` maps each original to its copy (cycles)."""
    if fn in memo:
        return memo[fn]
    new_globals: dict = {}
    new = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    memo[fn] = new
    modules = _module_map()
    for key, value in fn.__globals__.items():
        if isinstance(value, types.ModuleType):
            new_globals[key] = modules.get(id(value), value)
        elif (isinstance(value, types.FunctionType)
              and (value.__module__ or "").startswith(root)):
            new_globals[key] = swap_func(value, root, memo)
        else:
            equivalent = None
            if callable(value) and not isinstance(value, type):
                equivalent = _jax_equivalent(value)
            new_globals[key] = equivalent if equivalent is not None else value
    return new


def _swap_if_function(fn, root: str, memo: dict):
    return swap_func(fn, root, memo) if isinstance(fn, types.FunctionType) else fn


def swap_class(cls: type, root: str, memo: dict) -> type:
    """A subclass of ``cls`` whose methods from the package have JAX globals."""
    key = ("cls", cls)
    if key in memo:
        return memo[key]
    namespace = {}
    for klass in reversed(cls.__mro__):
        if not (klass.__module__ or "").startswith(root):
            continue
        for name, value in vars(klass).items():
            if isinstance(value, types.FunctionType):
                namespace[name] = swap_func(value, root, memo)
            elif isinstance(value, staticmethod):
                namespace[name] = staticmethod(swap_func(value.__func__, root, memo))
            elif isinstance(value, classmethod):
                namespace[name] = classmethod(swap_func(value.__func__, root, memo))
            elif isinstance(value, property):
                namespace[name] = property(_swap_if_function(value.fget, root, memo),
                                           _swap_if_function(value.fset, root, memo))
    new = type(cls.__name__ + "_jax", (cls,), namespace)
    memo[key] = new
    return new


def swap_instance(obj, root: str, memo: dict | None = None):
    """A shallow copy of ``obj`` whose class is :func:`swap_class` of its class."""
    memo = {} if memo is None else memo
    new = copy.copy(obj)
    new.__class__ = swap_class(type(obj), root, memo)
    return new
