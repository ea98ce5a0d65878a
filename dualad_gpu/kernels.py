"""JAX kernels for the primitives of dualad's rule table.

Only kernels are registered here: every derivative rule stays the one in
``dualad.rules``, evaluated on Duals whose parts are JAX arrays (or tracers
inside ``jax.jit``). A ufunc's kernel is the ``jax.numpy`` function of the same
name; the other primitives are listed by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np

from dualad import ops
from dualad.inputs import unit_vectors
from dualad.primitive import PRIMITIVES, Primitive, register_backend
from dualad.rules import complex_numbers, elementwise, special
from dualad.rules.shape import ON_PRIMAL


def _scale(p, t):
    return jnp.where(t == 0, 0, p * t)


def _sech_squared(x, tanh_x):
    t = jnp.exp(-2.0 * jnp.abs(x))
    return 4.0 * t / jnp.square(1.0 + t)


def _index_add(values, index, shape):
    if all(i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer))
           and not isinstance(i, (bool, np.bool_)) for i in index):
        return _basic_index_add(values, index, tuple(shape))
    return jnp.zeros(shape, values.dtype).at[index].add(values)


def _basic_index_add(values, index, shape):
    """Zeros of ``shape`` with ``values`` at a basic index (integers, slices, None,
    ``...``), as one reverse and one pad: the transpose of slicing, as JAX writes it.

    A scatter-add would do the same, but XLA's CPU compiler aborts the process on
    some chains of them (two scatter-adds of which one reverses an axis, as in
    the gradient of ``np.sum(np.sin(a[::-1][:]))``).
    """
    index = tuple(index)
    if not any(i is Ellipsis for i in index):
        index += (Ellipsis,)
    at = next(k for k, i in enumerate(index) if i is Ellipsis)
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    index = index[:at] + (slice(None),) * (len(shape) - used) + index[at + 1:]
    values = jnp.asarray(values)
    dtype = values.dtype
    kept, reverse, config = [], [], []  # the values' axes kept, those reversed
    value_axis = 0
    for item in index:
        if item is None:  # a unit axis of the values, not of the result
            value_axis += 1
            continue
        n = shape[len(config)]
        if isinstance(item, slice):
            start, _, step = item.indices(n)
            count = len(range(*item.indices(n)))
            if count == 0:
                return jnp.zeros(shape, dtype)
            if step < 0:
                reverse.append(len(kept))
                start, step = start + (count - 1) * step, -step
            config.append((start, n - start - (count - 1) * step - 1, step - 1))
            kept.append(value_axis)
            value_axis += 1
        else:  # an integer: an axis of the result that the values lack
            position = int(item) + n if item < 0 else int(item)
            config.append((position, n - position - 1, 0))
            kept.append(None)
    # Drop the values' unit axes of None, give integer positions a unit axis.
    values = jnp.reshape(values, tuple(values.shape[a] if a is not None else 1 for a in kept))
    if reverse:
        values = jax.lax.rev(values, tuple(reverse))
    return jax.lax.pad(values, jnp.zeros((), dtype), config)


def _unit_vectors(x, lo, hi, start, stop):
    seeds = jnp.arange(start, stop)[:, None] == jnp.arange(lo, hi)[None, :]
    return seeds.astype(x.dtype).reshape((stop - start,) + tuple(x.shape))


def _sort_order(a, axis=-1, kind=None, order=None, *, stable=None):
    return jnp.argsort(a, axis=axis, stable=True if stable is None else stable)


BY_HAND: dict[Primitive, Callable] = {
    ops.scale: _scale,
    ops.where: jnp.where,
    ops.getitem: lambda x, index: jnp.asarray(x)[index],
    ops.broadcast_to: lambda x, shape: jnp.broadcast_to(x, shape),
    ops.index_add: _index_add,
    ops.concatenate: lambda *xs, axis: jnp.concatenate(xs, axis=axis),
    ops.sum_: lambda x, axis, keepdims: jnp.sum(x, axis=axis, keepdims=keepdims),
    ops.amax: lambda x, axis, keepdims: jnp.max(x, axis=axis, keepdims=keepdims),
    ops.amin: lambda x, axis, keepdims: jnp.min(x, axis=axis, keepdims=keepdims),
    ops.prod: lambda x, axis, keepdims: jnp.prod(x, axis=axis, keepdims=keepdims),
    ops.l2_norm: lambda x, axis, keepdims: jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims)),
    ops.cumsum: lambda x, axis: jnp.cumsum(x, axis=axis),
    ops.cumprod: lambda x, axis: jnp.cumprod(x, axis=axis),
    ops.einsum: lambda *operands, subscripts: jnp.einsum(subscripts, *operands),
    ops.solve: jnp.linalg.solve,
    ops.inv: jnp.linalg.inv,
    ops.det: jnp.linalg.det,
    ops.log_abs_det: lambda a: jnp.linalg.slogdet(a)[1],
    ops.sign_of_det: lambda a: jnp.linalg.slogdet(a)[0],
    ops.eigvalsh: lambda a, UPLO="L": jnp.linalg.eigh(a, UPLO=UPLO, symmetrize_input=False)[0],
    ops.eigh_vectors: lambda a, UPLO="L": jnp.linalg.eigh(a, UPLO=UPLO,
                                                        symmetrize_input=False)[1],
    ON_PRIMAL["argsort"]: _sort_order,
    # of the dtypes only; JAX's arrays never share memory (each operation makes its own)
    ON_PRIMAL["common_type"]: lambda *arrays: np.common_type(
        *(np.empty(0, np.dtype(a.dtype)) for a in arrays)),
    ON_PRIMAL["may_share_memory"]: lambda a, b, max_work=None: False,
    ON_PRIMAL["shares_memory"]: lambda a, b, max_work=None: False,
    unit_vectors: _unit_vectors,
    ops.sinc: jnp.sinc,
    elementwise.sech_squared: _sech_squared,
    complex_numbers.real: jnp.real,
    complex_numbers.imag: jnp.imag,
}


def _complex_on_the_host(jax_kernel: Callable, numpy_kernel: Callable) -> Callable:
    """``jax_kernel``, or dualad's NumPy kernel called on the host (jax.pure_callback)
    where an argument is complex: JAX's digamma and polygamma take real numbers only,
    and complex loggamma's derivatives are theirs."""
    from dualad.rules.special import _host_kernel

    on_the_host = _host_kernel(numpy_kernel)

    def kernel(*args: Any) -> Any:
        if any(jnp.iscomplexobj(a) for a in args):
            return on_the_host(*args)
        return jax_kernel(*args)

    return kernel



# scipy.special ufuncs whose JAX counterpart has another name or form (JAX has
# no y0/y1: those raise a clear error under dualad_gpu).
SPECIAL_BY_NAME: dict[str, Callable] = {
    "psi": jax.scipy.special.digamma,
    "exp10": lambda x: jnp.power(10.0, x),
    "log_expit": jax.nn.log_sigmoid,
    "j0": lambda x: jax.scipy.special.bessel_jn(x, v=0)[0],
    "j1": lambda x: jax.scipy.special.bessel_jn(x, v=1)[1],
}


def jax_kernel(prim: Primitive) -> Callable | None:
    """The JAX implementation of ``prim``, or None where JAX has none (string ufuncs)."""
    if "jax" in prim.kernels:  # given at registration (dualad.defprimitive)
        return prim.kernels["jax"]
    if prim in BY_HAND:
        return BY_HAND[prim]
    if prim is vars(special).get("polygamma"):  # declared once scipy.special is imported
        return _complex_on_the_host(jax.scipy.special.polygamma, prim.kernels["numpy"])
    numpy_kernel = prim.kernels["numpy"]
    if isinstance(numpy_kernel, np.ufunc):
        name = "clip" if numpy_kernel is np._core.umath.clip else numpy_kernel.__name__
        kernel = (getattr(jnp, name, None) or getattr(jax.scipy.special, name, None)
                  or SPECIAL_BY_NAME.get(name))
        return _complex_on_the_host(kernel, numpy_kernel) if name == "psi" else kernel
    if prim.name in ON_PRIMAL:
        return getattr(jnp, prim.name, None)
    # The rest (reshape, transpose, getitem, convert, combine) are written with
    # array methods and operators, which JAX arrays share with NumPy's.
    return numpy_kernel


def register() -> None:
    """Give every primitive its JAX kernel (idempotent; run again by dualad when it
    declares scipy.special's primitives, on that module's import)."""
    kernels = {}
    for prim in PRIMITIVES:
        kernel = jax_kernel(prim)
        if kernel is not None:
            kernels[prim] = kernel
    register_backend("jax", jax.Array, kernels, refresh=register)

