"""``jax.numpy``, made to accept Duals: ``import dualad_gpu.numpy as jnp``.

JAX's functions check their arguments and offer no protocol through which a
Dual could take part, so a function written with ``jax.numpy`` cannot be
differentiated by dualad as it stands. This module is the one-line change
that makes it possible: every name is ``jax.numpy``'s, except that a call
with a Dual among its arguments goes to the implementation dualad registered
for the NumPy function of the same name (the same rule table). Without Duals
it is ``jax.numpy`` itself.

Examples
--------
>>> import numpy as np, dualad_gpu
>>> import dualad_gpu.numpy as jnp
>>> dualad_gpu.grad(lambda x: jnp.sum(jnp.sin(x) * x))(np.array([0.0, 1.0]))
Array([0.        , 1.38177329], dtype=float64)
"""

from __future__ import annotations

import functools
import types
from typing import Any

import jax.numpy as _jnp
import numpy as _np

from dualad import Dual
from dualad.primitive import FUNCTION_HANDLERS, UFUNC_HANDLERS


def _holds_dual(args: tuple) -> bool:
    for a in args:
        if isinstance(a, Dual) or (isinstance(a, (list, tuple)) and _holds_dual(tuple(a))):
            return True
    return False


def _dual_aware(name: str, jax_function: Any, handler: Any) -> Any:
    @functools.wraps(jax_function)
    def function(*args, **kwargs):
        if _holds_dual(args):
            return handler(*args, **kwargs)
        return jax_function(*args, **kwargs)

    function.__module__ = __name__
    return function


def _resolve(name: str, jax_namespace: Any, numpy_namespace: Any) -> Any:
    jax_function = getattr(jax_namespace, name)
    numpy_function = getattr(numpy_namespace, name, None)
    if isinstance(numpy_function, _np.ufunc):
        handler = UFUNC_HANDLERS.get(numpy_function)
    else:
        handler = FUNCTION_HANDLERS.get(numpy_function) if callable(numpy_function) else None
    if handler is None or not callable(jax_function):
        return jax_function
    return _dual_aware(name, jax_function, handler)


class _Linalg(types.ModuleType):
    """``jax.numpy.linalg``, made to accept Duals in the same way."""

    def __getattr__(self, name: str) -> Any:
        value = _resolve(name, _jnp.linalg, _np.linalg)
        setattr(self, name, value)
        return value


linalg = _Linalg(__name__ + ".linalg")


def __getattr__(name: str) -> Any:
    function = _resolve(name, _jnp, _np)
    globals()[name] = function  # built once per name
    return function
