"""dualad's transforms compiled with ``jax.jit``.

Each transform is dualad's own (the same rule table, the same Duals) traced
once per input signature: the Duals' parts are JAX tracers, every primitive
runs its JAX kernel, and XLA compiles the result for the CPU or GPU at hand.
Later calls with the same shapes and dtypes reuse the compiled program.

Float64 is enabled for the duration of each call only (``jax.enable_x64``),
so float64 inputs give float64 results without changing JAX's default for
other code; float32 stays float32.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import jax

import dualad

from .sharding import default_mesh, seed_placement

__all__ = ["jvp", "jacfwd", "jacobian", "hessian", "hvp", "grad", "value_and_grad", "vjp",
           "jacrev"]


def compile_transform(transformed: Callable) -> Callable:
    """``jax.jit`` of a dualad-transformed function, run with float64 enabled."""
    jitted = jax.jit(transformed)

    @functools.wraps(transformed)
    def compiled(*args):
        with jax.enable_x64(True):
            return jitted(*args)

    def lower(*args):  # for inspection: compiled.lower(*args).as_text()
        with jax.enable_x64(True):
            return jitted.lower(*args)

    compiled.lower = lower
    return compiled


# Compiled forms of the transforms, one per user function and options, so that
# dualad_gpu.grad(f)(x) in a loop compiles once; entries go when the function
# does (functions that cannot be weakly referenced, such as ufuncs, live as long
# as the process anyway).
_CALL_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PERMANENT_CACHE: dict = {}


def _cached(fun: Callable, key: tuple, build: Callable[[], Callable]) -> Callable:
    try:
        per_fun = _CALL_CACHE.setdefault(fun, {})
    except TypeError:
        per_fun = _PERMANENT_CACHE.setdefault(fun, {})
    if key not in per_fun:
        per_fun[key] = build()
    return per_fun[key]


def _argnums_key(argnums: int | Sequence[int]) -> int | tuple:
    return argnums if isinstance(argnums, int) else tuple(argnums)


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, *, batched: bool = False,
        has_aux: bool = False) -> Any:
    """Compiled :func:`dualad.jvp`: ``(fun(*primals), J·tangents)``.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> dualad_gpu.jvp(np.sin, (np.zeros(2),), (np.ones(2),))[1]
    Array([1., 1.], dtype=float64)
    """
    compiled = _cached(fun, ("jvp", batched, has_aux), lambda: compile_transform(
        lambda p, t: dualad.jvp(fun, p, t, batched=batched, has_aux=has_aux)))
    return compiled(tuple(primals), tuple(tangents))


_DEFAULT = object()


def _placement(mesh):
    return seed_placement(default_mesh() if mesh is _DEFAULT else mesh)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, *,
           chunk_size: int | None = None, has_aux: bool = False, mesh=_DEFAULT) -> Callable:
    """Compiled :func:`dualad.jacfwd`, its seed axis sharded over ``mesh``.

    ``mesh`` is a :class:`jax.sharding.Mesh` whose first axis splits the seeds;
    by default all local devices when there are several, ``None`` for none.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> W = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> dualad_gpu.jacfwd(lambda x: np.tanh(W @ x))(np.zeros(2))
    Array([[1., 2.],
           [3., 4.]], dtype=float64)
    """
    key = ("jacfwd", _argnums_key(argnums), chunk_size, has_aux, mesh)
    return _cached(fun, key, lambda: compile_transform(dualad.jacfwd(
        fun, argnums, chunk_size=chunk_size, has_aux=has_aux, seed_placement=_placement(mesh))))


jacobian = jacfwd


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, *,
           chunk_size: int | None = None, has_aux: bool = False,
           nan_safe: bool = False, mesh=_DEFAULT) -> Callable:
    """Compiled :func:`dualad.jacrev`, its cotangent seeds sharded over ``mesh``
    (as in :func:`jacfwd`)."""
    key = ("jacrev", _argnums_key(argnums), chunk_size, has_aux, nan_safe, mesh)
    return _cached(fun, key, lambda: compile_transform(dualad.jacrev(
        fun, argnums, chunk_size=chunk_size, has_aux=has_aux, nan_safe=nan_safe,
        seed_placement=_placement(mesh))))


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
         nan_safe: bool = False) -> Callable:
    """Compiled :func:`dualad.grad`.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> [float(g) for g in dualad_gpu.grad(f, argnums=(0, 1))(2.0, 5.0)]
    [5.5, 1.7163378145367738]
    """
    key = ("grad", _argnums_key(argnums), has_aux, nan_safe)
    return _cached(fun, key, lambda: compile_transform(
        dualad.grad(fun, argnums, has_aux, nan_safe=nan_safe)))


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   *, nan_safe: bool = False) -> Callable:
    """Compiled :func:`dualad.value_and_grad`."""
    key = ("value_and_grad", _argnums_key(argnums), has_aux, nan_safe)
    return _cached(fun, key, lambda: compile_transform(
        dualad.value_and_grad(fun, argnums, has_aux, nan_safe=nan_safe)))


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, *,
            chunk_size: int | None = None, mode: str = "auto", mesh=_DEFAULT) -> Callable:
    """Compiled :func:`dualad.hessian` (hyper-duals or forward-over-reverse by size),
    its ε1 seeds sharded over ``mesh`` (as in :func:`jacfwd`)."""
    key = ("hessian", _argnums_key(argnums), chunk_size, mode, mesh)
    return _cached(fun, key, lambda: compile_transform(dualad.hessian(
        fun, argnums, chunk_size=chunk_size, mode=mode, seed_placement=_placement(mesh))))


def hvp(fun: Callable, primals: Sequence, tangents: Sequence, *, mode: str = "fwd-rev",
        chunk_size: int | None = None) -> Any:
    """Compiled :func:`dualad.hvp`: ∇²f(x)·v."""
    compiled = _cached(fun, ("hvp", mode, chunk_size), lambda: compile_transform(
        lambda p, t: dualad.hvp(fun, p, t, mode=mode, chunk_size=chunk_size)))
    return compiled(tuple(primals), tuple(tangents))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False, nan_safe: bool = False) -> Any:
    """Compiled :func:`dualad.vjp`: ``(out, vjp_fn)`` with a compiled ``vjp_fn``.

    The forward pass and the pullback are each one compiled program; the
    pullback recomputes the forward pass inside its program (XLA keeps what it
    needs).
    """
    def primal_out(*p):  # through dualad, so NumPy calls on tracers dispatch to JAX
        result = dualad.vjp(fun, *p, has_aux=has_aux)
        return (result[0], result[2]) if has_aux else result[0]

    forward = _cached(fun, ("vjp-forward", has_aux), lambda: compile_transform(primal_out))
    pullback = _cached(fun, ("vjp-pullback", has_aux, nan_safe), lambda: compile_transform(
        lambda p, ct: dualad.vjp(fun, *p, has_aux=has_aux, nan_safe=nan_safe)[1](ct)))
    out = forward(*primals)
    out, aux = out if has_aux else (out, None)

    def vjp_fn(ct):
        return pullback(primals, ct)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
