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

The replacement modules are a :class:`Backend`; every function here takes one,
:data:`JAX` by default. ``autograd_swap.py`` passes its ``AUTOGRAD`` backend
(``autograd.numpy`` and ``autograd.scipy``) to the same machinery.
"""

from __future__ import annotations

import copy
import types
from typing import NamedTuple

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.special as jss
import jax.scipy.stats as jst
import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats


class Backend(NamedTuple):
    """The modules that stand for NumPy's and SciPy's in a swapped function.

    ``numpy`` must have a ``linalg`` attribute (the replacement of ``numpy.linalg``).
    ``suffix`` ends the names of the classes :func:`swap_class` builds.
    """

    name: str
    numpy: types.ModuleType
    special: types.ModuleType
    linalg: types.ModuleType
    stats: types.ModuleType
    suffix: str

    def module_map(self) -> dict[int, types.ModuleType]:
        return {id(np): self.numpy, id(np.linalg): self.numpy.linalg,
                id(scipy.special): self.special, id(scipy.linalg): self.linalg,
                id(scipy.stats): self.stats}


JAX = Backend("jax", jnp, jss, jsl, jst, "_jax")


def equivalent(value, backend: Backend = JAX):
    """The backend's function that stands for a NumPy or SciPy function, or None."""
    name = getattr(value, "__name__", None)
    if name is None:
        return None
    xnp = backend.numpy
    module = getattr(value, "__module__", "") or ""
    if isinstance(value, np.ufunc) or module.startswith("numpy"):
        if module.startswith("numpy.linalg") and hasattr(xnp.linalg, name):
            return getattr(xnp.linalg, name)
        if hasattr(xnp, name):
            return getattr(xnp, name)
    if isinstance(value, np.ufunc) or module.startswith("scipy.special"):
        if hasattr(backend.special, name):
            return getattr(backend.special, name)
    if module.startswith("scipy.linalg") and hasattr(backend.linalg, name):
        return getattr(backend.linalg, name)
    return None


def swap_func(fn: types.FunctionType, root: str, memo: dict,
              backend: Backend = JAX) -> types.FunctionType:
    """``fn`` with the backend's globals; ``memo`` maps each original to its copy (cycles).

    One ``memo`` serves one backend.
    """
    if fn in memo:
        return memo[fn]
    new_globals: dict = {}
    new = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    memo[fn] = new
    modules = backend.module_map()
    for key, value in fn.__globals__.items():
        if isinstance(value, types.ModuleType):
            new_globals[key] = modules.get(id(value), value)
        elif (isinstance(value, types.FunctionType)
              and (value.__module__ or "").startswith(root)):
            new_globals[key] = swap_func(value, root, memo, backend)
        else:
            replacement = None
            if callable(value) and not isinstance(value, type):
                replacement = equivalent(value, backend)
            new_globals[key] = replacement if replacement is not None else value
    return new


def _swap_if_function(fn, root: str, memo: dict, backend: Backend):
    return swap_func(fn, root, memo, backend) if isinstance(fn, types.FunctionType) else fn


def swap_class(cls: type, root: str, memo: dict, backend: Backend = JAX) -> type:
    """A subclass of ``cls`` whose methods from the package have the backend's globals."""
    key = ("cls", cls)
    if key in memo:
        return memo[key]
    namespace = {}
    for klass in reversed(cls.__mro__):
        if not (klass.__module__ or "").startswith(root):
            continue
        for name, value in vars(klass).items():
            if isinstance(value, types.FunctionType):
                namespace[name] = swap_func(value, root, memo, backend)
            elif isinstance(value, staticmethod):
                namespace[name] = staticmethod(swap_func(value.__func__, root, memo, backend))
            elif isinstance(value, classmethod):
                namespace[name] = classmethod(swap_func(value.__func__, root, memo, backend))
            elif isinstance(value, property):
                namespace[name] = property(_swap_if_function(value.fget, root, memo, backend),
                                           _swap_if_function(value.fset, root, memo, backend))
    new = type(cls.__name__ + backend.suffix, (cls,), namespace)
    memo[key] = new
    return new


def swap_instance(obj, root: str, memo: dict | None = None, backend: Backend = JAX):
    """A shallow copy of ``obj`` whose class is :func:`swap_class` of its class."""
    memo = {} if memo is None else memo
    new = copy.copy(obj)
    new.__class__ = swap_class(type(obj), root, memo, backend)
    return new
