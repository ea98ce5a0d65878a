"""dualad's transforms compiled with ``jax.jit``.

Each transform is dualad's own (the same rule table, the same Duals) traced
once per input signature: the Duals' parts are JAX tracers, every primitive
runs its JAX kernel, and XLA compiles the result for the CPU or GPU at hand.
Later calls with the same shapes and dtypes reuse the compiled program.

Arguments that are not differentiated, and the values of the differentiated
ones, reach the function as Duals of a tag that carries no derivative, so NumPy
calls and item assignment work on them, and on what is computed from them once
a derivative is dropped (``stop_gradient``, a comparison), as on Duals that
carry one; integer results are plain JAX arrays (indices); no such Dual leaves
the transform.

Which compiled program serves a call is decided at each call, from the
function's code and the state it reads (:mod:`dualad_gpu.cache`): a changed
attribute, a replaced or overwritten captured array never gives a stale result.

Float64 is enabled for the duration of each call only (``jax.enable_x64``),
so float64 inputs give float64 results without changing JAX's default for
other code; float32 stays float32.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import dualad
from dualad.pytrees import tree_leaves, tree_map
from dualad import Dual
from dualad.primitive import Boxed, EscapedDualError, NeedsHost, Primitive, Tag

from .cache import LRUCache, state_key
from .pytrees import registers_new_classes
from .sharding import default_mesh, seed_placement

__all__ = ["jvp", "jacfwd", "jacobian", "hessian", "hvp", "grad", "value_and_grad", "vjp",
           "jacrev", "jet", "derivative_tensor", "laplacian", "hessian_trace", "divergence",
           "biharmonic"]


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


# -- values that are not differentiated --------------------------------------------


class ValueTag(Tag):
    """The tag of values in Dual's clothing (one zero seed): the arguments that are
    not differentiated and the values of those that are, so that NumPy calls on them
    reach the rule table and so the JAX kernels. Made before the transform's own tag,
    it is the outermost level: to every transform these Duals are constants."""

    __slots__ = ()
    carries_derivatives = False


class ValueDual(Dual):
    """A value Dual (of a :class:`ValueTag`). Its integer results are plain arrays, as
    integer arguments are: indices JAX takes, which carry no derivative anyway. Its
    boolean results stay ValueDuals (``np.where(x > 0, 1.0, 2.0)`` reaches JAX) and
    take NumPy's bitwise operators, as the comparisons of rules use them."""

    __slots__ = ()

    def _process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        # No rule to run: the kernel on the values, each of its results clothed again
        # (a tuple's items too: scipy.stats.mode's).
        tag = self._tag
        if not tag.live:
            raise EscapedDualError(tag)
        primals = [a.primal if isinstance(a, Boxed) and a._tag is tag else a for a in args]
        if any(isinstance(a, Boxed) for a in primals):
            ans = prim(*primals, **params)
        else:
            ans = prim.impl(*primals, **params)
        return tree_map(self._clothed, ans)

    def _clothed(self, value: Any) -> Any:
        dtype = getattr(value, "dtype", None)
        if dtype is None or jnp.issubdtype(dtype, jnp.integer):
            return value
        return ValueDual._new(value, jnp.zeros((1,) + tuple(jnp.shape(value)), dtype),
                              self._tag)

    def _wrap(self, primal: Any, tangent: Any) -> Any:
        if jnp.issubdtype(getattr(primal, "dtype", np.float64), jnp.integer):
            return primal
        return ValueDual._new(primal, tangent, self._tag)

    def __and__(self, other): return np.bitwise_and(self, other)
    def __rand__(self, other): return np.bitwise_and(other, self)
    def __or__(self, other): return np.bitwise_or(self, other)
    def __ror__(self, other): return np.bitwise_or(other, self)
    def __xor__(self, other): return np.bitwise_xor(self, other)
    def __rxor__(self, other): return np.bitwise_xor(other, self)
    def __invert__(self): return np.invert(self)


def _as_value_dual(a: Any, tag: ValueTag) -> Any:
    """``a`` as the program sees it: a JAX float (or complex) array as a
    :class:`ValueDual`, and so a differentiated argument's value too, which then stays
    one wherever its derivative is dropped (``stop_gradient``, a rule holding it
    constant, a comparison) and reaches NumPy calls after that."""
    if isinstance(a, jax.Array) and jnp.issubdtype(a.dtype, jnp.inexact):
        return ValueDual._new(a, jnp.zeros((1,) + tuple(a.shape), a.dtype), tag)
    if isinstance(a, Dual) and a._tag is not tag:  # (nested ones too: a Hessian's)
        return _rebuilt(a, _as_value_dual(a.primal, tag), a.tangent)
    return a  # integer and boolean arrays, other Python values


def _rebuilt(x: Dual, primal: Any, tangent: Any) -> Dual:
    """``x`` (of its own class: a HyperDual's too) with ``primal`` and ``tangent``."""
    if primal is x.primal and tangent is x.tangent:
        return x
    out = object.__new__(type(x))
    for cls in type(x).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name != "__weakref__" and hasattr(x, name):
                setattr(out, name, getattr(x, name))
    out.primal, out.tangent = primal, tangent
    return out


def _strip(x: Any, tag: ValueTag) -> Any:
    """``x`` without the value Duals of ``tag``, wherever they sit in it."""
    if not isinstance(x, Dual):
        return x
    if x._tag is tag:
        return _strip(x.primal, tag)
    return _rebuilt(x, _strip(x.primal, tag), _strip(x.tangent, tag))


def _strip_tree(tree: Any, tag: ValueTag) -> Any:
    return tree_map(lambda x: _strip(x, tag), tree, none_is_leaf=True)


def _with_values_as_duals(fun: Callable, tag: ValueTag) -> Callable:
    """``fun`` receiving its JAX float and complex arrays as value Duals of ``tag``
    (differentiated ones: their values), returning none."""

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        args, kwargs = tree_map(lambda a: _as_value_dual(a, tag), (args, kwargs))
        return _strip_tree(fun(*args, **kwargs), tag)

    return wrapped


# -- the cache of compiled transforms ----------------------------------------------


class _Entry:
    """One compiled transform: ``make(fun)`` (a dualad transform) under ``jax.jit``.

    ``fun`` is the function of the latest call; any function with the same key
    computes the same thing, so a retrace (a new input shape) may use it.
    ``on_host`` is set when tracing met a rule that needs NumPy values
    (:class:`~dualad.primitive.NeedsHost`): the calls then run ``make(fun,
    on_host=True)``, dualad's NumPy transform, on host copies of the arguments.
    """

    __slots__ = ("fun", "make", "compiled", "traces", "on_host", "__weakref__")

    def __init__(self, make: Callable[..., Callable]) -> None:
        self.fun: Callable | None = None
        self.make = make
        self.traces = 0
        self.on_host = False

        def traced(*args):
            self.traces += 1
            tag = ValueTag()  # before the transform's own tag: the outermost level
            return _strip_tree(make(_with_values_as_duals(self.fun, tag))(*args), tag)

        self.compiled = compile_transform(traced)

    def on_the_host(self, fun: Callable, args: tuple) -> Any:
        """``make(fun, on_host=True)`` on host copies of ``args``, as JAX arrays."""
        out = self.make(fun, on_host=True)(*tree_map(_to_host, args))
        with jax.enable_x64(True):
            return tree_map(_to_device, out)


def _to_host(a: Any) -> Any:
    return np.asarray(a) if isinstance(a, jax.Array) else a


def _traced(args: tuple) -> bool:
    """Whether ``args`` hold JAX tracers (Duals' parts included)."""
    for a in tree_leaves(args):
        while isinstance(a, Dual):
            a = a.primal
        if isinstance(a, jax.core.Tracer):
            return True
    return False


def _to_device(a: Any) -> Any:
    return jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a


def _jitted(on_host: bool, *mesh: Any) -> dict:
    """A dualad transform's options under jax.jit (no replay: it traces once; the
    seeds placed on ``mesh`` where given), or on the host (dualad's defaults)."""
    if on_host:
        return {}
    return {"replay": False, **({"seed_placement": _placement(mesh[0])} if mesh else {})}


_CACHE = LRUCache()


def _entry(kind: str, options: tuple, fun: Callable,
           make: Callable[..., Callable]) -> _Entry:
    """The compiled transform for ``fun`` as it is now (its code and state)."""
    state, arrays = state_key(fun)
    entry = _CACHE.get_or_add((kind, options, state), arrays, lambda: _Entry(make))
    entry.fun = fun
    return entry


def compiled_or_on_host(entry: _Entry, kind: str, fun: Callable, args: tuple,
                        on_host: Callable[[], Any], stacklevel: int) -> Any:
    """``entry.compiled(*args)``, or ``on_host()`` where its trace met a rule that
    needs NumPy values (remembered by ``entry``: the next calls go to the host)."""
    if entry.on_host:
        return on_host()
    try:
        return entry.compiled(*args)
    except NeedsHost as why:
        if _traced(args):  # inside another trace: the outermost runs on the host
            raise
        entry.on_host = True
        warnings.warn(f"dualad_gpu.{kind} of {getattr(fun, '__qualname__', fun)!s}: {why}. "
                      "It runs dualad's NumPy transform on the host instead of jax.jit (the "
                      "same derivatives, as JAX arrays)", RuntimeWarning,
                      stacklevel=stacklevel + 1)
        return on_host()


def _run(entry: _Entry, kind: str, options: tuple, fun: Callable, *args: Any) -> Any:
    traces = entry.traces
    out = compiled_or_on_host(entry, kind, fun, args, lambda: entry.on_the_host(fun, args),
                              stacklevel=4)
    if entry.traces != traces:
        # Tracing may change what ``fun`` reads (a list it appends to): the state
        # it left keys the same program, or every call would trace again.
        state, arrays = state_key(fun)
        _CACHE.get_or_add((kind, options, state), arrays, lambda: entry)
    return out


def _call(kind: str, options: tuple, fun: Callable, make: Callable[..., Callable],
          *args: Any) -> Any:
    try:
        return _run(_entry(kind, options, fun, make), kind, options, fun, *args)
    except TypeError:  # (jax.jit refuses an argument it cannot flatten, before tracing)
        if not registers_new_classes(args):  # a dataclass, as dualad takes it: once more
            raise
        return _run(_entry(kind, options, fun, make), kind, options, fun, *args)


def _transform(kind: str, options: tuple, fun: Callable,
               make: Callable[..., Callable]) -> Callable:
    """A function of ``fun``'s arguments running the compiled ``make(fun)``."""
    make(fun)  # the options are checked now, as dualad's transform checks them

    @functools.wraps(fun)
    def compiled(*args):
        return _call(kind, options, fun, make, *args)

    def lower(*args):  # for inspection: compiled.lower(*args).as_text()
        return _entry(kind, options, fun, make).compiled.lower(*args)

    compiled.lower = lower
    return compiled


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
    return _call("jvp", (batched, has_aux), fun, lambda f, on_host=False: (
        lambda p, t: dualad.jvp(f, p, t, batched=batched, has_aux=has_aux,
                                **_jitted(on_host))),
        tuple(primals), tuple(tangents))


_DEFAULT = object()


def _placement(mesh):
    return seed_placement(default_mesh() if mesh is _DEFAULT else mesh)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, *,
           chunk_size: int | None = None, has_aux: bool = False, holomorphic: bool = False,
           mesh: Any = _DEFAULT) -> Callable:
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
    options = (_argnums_key(argnums), chunk_size, has_aux, holomorphic, mesh)
    return _transform("jacfwd", options, fun, lambda f, on_host=False: dualad.jacfwd(
        f, argnums, chunk_size=chunk_size, has_aux=has_aux, holomorphic=holomorphic,
        **_jitted(on_host, mesh)))


jacobian = jacfwd


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, *,
           chunk_size: int | None = None, has_aux: bool = False, holomorphic: bool = False,
           nan_safe: bool = False, mesh: Any = _DEFAULT) -> Callable:
    """Compiled :func:`dualad.jacrev`, its cotangent seeds sharded over ``mesh``
    (as in :func:`jacfwd`)."""
    options = (_argnums_key(argnums), chunk_size, has_aux, holomorphic, nan_safe, mesh)
    return _transform("jacrev", options, fun, lambda f, on_host=False: dualad.jacrev(
        f, argnums, chunk_size=chunk_size, has_aux=has_aux, holomorphic=holomorphic,
        nan_safe=nan_safe, **_jitted(on_host, mesh)))


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
         holomorphic: bool = False, nan_safe: bool = False) -> Callable:
    """Compiled :func:`dualad.grad`.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> [float(g) for g in dualad_gpu.grad(f, argnums=(0, 1))(2.0, 5.0)]
    [5.5, 1.7163378145367738]
    """
    options = (_argnums_key(argnums), has_aux, holomorphic, nan_safe)
    return _transform("grad", options, fun, lambda f, on_host=False: dualad.grad(
        f, argnums, has_aux, holomorphic=holomorphic, nan_safe=nan_safe,
        **_jitted(on_host)))


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   *, holomorphic: bool = False, nan_safe: bool = False) -> Callable:
    """Compiled :func:`dualad.value_and_grad`."""
    options = (_argnums_key(argnums), has_aux, holomorphic, nan_safe)
    return _transform("value_and_grad", options, fun, lambda f, on_host=False:
                      dualad.value_and_grad(f, argnums, has_aux, holomorphic=holomorphic,
                                            nan_safe=nan_safe, **_jitted(on_host)))


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, *,
            chunk_size: int | None = None, mode: str = "auto", holomorphic: bool = False,
            mesh: Any = _DEFAULT) -> Callable:
    """Compiled :func:`dualad.hessian` (hyper-duals or forward-over-reverse by size),
    its ε1 seeds sharded over ``mesh`` (as in :func:`jacfwd`)."""
    options = (_argnums_key(argnums), chunk_size, mode, holomorphic, mesh)
    return _transform("hessian", options, fun, lambda f, on_host=False: dualad.hessian(
        f, argnums, chunk_size=chunk_size, mode=mode, holomorphic=holomorphic,
        **_jitted(on_host, mesh)))


def hvp(fun: Callable, primals: Sequence, tangents: Sequence, *, mode: str = "fwd-rev",
        chunk_size: int | None = None) -> Any:
    """Compiled :func:`dualad.hvp`: ∇²f(x)·v."""
    return _call("hvp", (mode, chunk_size), fun, lambda f, on_host=False: (
        lambda p, t: dualad.hvp(f, p, t, mode=mode, chunk_size=chunk_size,
                                **_jitted(on_host))),
        tuple(primals), tuple(tangents))


def jet(fun: Callable, primals: Sequence, series: Sequence, factorial_scaled: bool = True,
        *, batched: bool = False, mesh: Any = _DEFAULT) -> tuple[Any, Any]:
    """Compiled :func:`dualad.jet`: Taylor mode to any order. With ``batched=True``
    the jets are split over ``mesh``'s first axis (by default all local devices, as
    :func:`jacfwd`'s seeds; ``None``: one device).

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> _, terms = dualad_gpu.jet(np.exp, (np.zeros(2),), ([np.ones(2)] * 3,))
    >>> [t.tolist() for t in terms]
    [[1.0, 1.0], [2.0, 2.0], [5.0, 5.0]]
    """
    return _call("jet", (factorial_scaled, batched, mesh), fun, lambda f, on_host=False: (
        lambda p, s: dualad.jet(f, p, s, factorial_scaled, batched=batched,
                                **_placed(on_host or not batched, mesh))),
        tuple(primals), tuple(tuple(terms) for terms in series))


def _placed(on_host: bool, mesh: Any) -> dict:
    """A seed placement on ``mesh`` for a transform without a replay, unless on the host."""
    return {} if on_host else {"seed_placement": _placement(mesh)}


def derivative_tensor(fun: Callable, order: int, argnums: int = 0, *,
                      mesh: Any = _DEFAULT) -> Callable:
    """Compiled :func:`dualad.derivative_tensor`, its directions split over ``mesh``
    (as in :func:`jet`).

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> T = dualad_gpu.derivative_tensor(lambda x: x[0] ** 2 * x[1], 3)(np.ones(2))
    >>> round(float(T[0, 0, 1]), 12)
    2.0
    """
    return _transform("derivative_tensor", (order, argnums, mesh), fun,
                      lambda f, on_host=False: dualad.derivative_tensor(
                          f, order, argnums, **_placed(on_host, mesh)))


def laplacian(fun: Callable, argnums: int = 0, *, mesh: Any = _DEFAULT) -> Callable:
    """Compiled :func:`dualad.laplacian` (the exact, collapsed one: random directions
    drawn inside a compiled program would be the same at every call), its directions
    split over ``mesh`` (as :func:`jacfwd`'s seeds).

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> float(dualad_gpu.laplacian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])))
    18.0
    """
    return _transform("laplacian", (argnums, mesh), fun, lambda f, on_host=False:
                      dualad.laplacian(f, argnums, **_jitted(on_host, mesh)))


def hessian_trace(fun: Callable, C: Any, argnums: int = 0, *, mesh: Any = _DEFAULT) -> Callable:
    """Compiled :func:`dualad.hessian_trace`: tr(C ∇²f), its directions split over
    ``mesh``."""
    C = np.asarray(C, dtype=float)
    return _transform("hessian_trace", (argnums, C.shape, C.tobytes(), mesh), fun,
                      lambda f, on_host=False: dualad.hessian_trace(
                          f, C, argnums, **_jitted(on_host, mesh)))


def biharmonic(fun: Callable, argnums: int = 0) -> Callable:
    """Compiled :func:`dualad.biharmonic`: Δ²f."""
    return _transform("biharmonic", (argnums,), fun, lambda f, on_host=False:
                      dualad.biharmonic(f, argnums, **_jitted(on_host)))


def divergence(fun: Callable, argnums: int = 0) -> Callable:
    """Compiled :func:`dualad.divergence`: ∇·F."""
    return _transform("divergence", (argnums,), fun, lambda f, on_host=False:
                      dualad.divergence(f, argnums, **_jitted(on_host)))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False, nan_safe: bool = False) -> Any:
    """Compiled :func:`dualad.vjp`: ``(out, vjp_fn)`` with a compiled ``vjp_fn``.

    The forward pass and the pullback are each one compiled program; the
    pullback recomputes the forward pass inside its program (XLA keeps what it
    needs).
    """
    def primal_out(f, on_host=False):  # through dualad: NumPy calls on tracers go to JAX
        def run(*p):
            result = dualad.vjp(f, *p, has_aux=has_aux)
            return (result[0], result[2]) if has_aux else result[0]

        return run

    out = _call("vjp-forward", (has_aux,), fun, primal_out, *primals)
    out, aux = out if has_aux else (out, None)
    # The pullback of the function as it is at this call.
    options = (has_aux, nan_safe)
    pullback = _entry("vjp-pullback", options, fun, lambda f, on_host=False: (
        lambda p, ct: dualad.vjp(f, *p, has_aux=has_aux, nan_safe=nan_safe)[1](ct)))

    def vjp_fn(ct):
        pullback.fun = fun
        return _run(pullback, "vjp-pullback", options, fun, primals, ct)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
