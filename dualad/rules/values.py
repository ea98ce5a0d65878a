"""Helpers on argument values that the statistics, selection and indexing rules share:
dtypes, NumPy-or-JAX tests, casts, and primitives of values only (no derivative).

Below those three modules (each imports this one; none imports another's helpers).
"""

from __future__ import annotations

import numpy as np

from ..dual import Dual, primal_value
from ..primitive import Primitive, backend_of, register_function
from .elementwise import convert

__all__ = ["as_array", "astype", "dtype_of", "numpy_only", "on_numpy", "stand_in", "values_only"]


def dtype_of(x) -> np.dtype:
    value = primal_value(x)
    return value.dtype if hasattr(value, "dtype") else np.result_type(value)


def stand_in(x):
    """What ``np.result_type`` should see for ``x``: Python scalars stay weak."""
    if type(x) in (bool, int, float):
        return x
    return np.empty(0, dtype_of(x))


def on_numpy(*xs) -> bool:
    """Whether the values are NumPy's (not traced by JAX): only then are they inspected."""
    return backend_of(tuple(primal_value(x) for x in xs)) == "numpy"


def astype(x, dtype):
    if dtype_of(x) == dtype:
        return x
    return convert(x, dtype=dtype) if isinstance(x, Dual) else x.astype(dtype)


def as_array(x):
    """Array arguments that are not Duals (nor another backend's arrays) as ndarrays."""
    return x if hasattr(x, "shape") else np.asarray(x)


def values_only(func, jax_name: str) -> Primitive:
    """``func`` as a primitive without derivative (integer or boolean results), its
    arguments' values used; array-like arguments given as lists become arrays for JAX."""

    def jax_kernel(*args, kind=None, **params):
        import jax.numpy as jnp
        return getattr(jnp, jax_name)(*(a if hasattr(a, "shape") else jnp.asarray(a)
                                        for a in args), **params)

    prim = Primitive(func.__name__, func)
    prim.kernels["jax"] = jax_kernel
    register_function(func, prim)
    return prim


def numpy_only(name: str, *xs) -> None:
    if not on_numpy(*xs):
        raise TypeError(
            f"np.{name} on Duals is computed on NumPy values and does not compile under "
            f"dualad_gpu (jax.jit); call it outside the transform, or on "
            f"dualad.primal_value(x) where its derivative is not needed")
