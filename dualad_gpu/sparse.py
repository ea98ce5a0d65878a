"""Sparse Jacobians and Hessians compiled with ``jax.jit``.

The pattern and its colouring are dualad's (:mod:`dualad.sparse`), found once
per input shape and dtype with the NumPy path on host copies of the arguments,
outside any trace. What is left is one compiled program of the arguments: the
compressed evaluation (a batched forward pass with one seed per colour, a
reverse pass of the colour-compressed output, or forward-over-reverse for a
Hessian) followed by the decompression, a single gather of the nonzeros out
of the compressed block. Its result is wrapped as a
``jax.experimental.sparse.BCOO`` or, on request, a ``scipy.sparse.csr_array``.

The seeds and the gather's positions reach the compiled program as device
arguments, not as constants baked into it: large patterns add nothing to the
compile, and one program serves every pattern with the same number of colours
and nonzeros.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse
from scipy import sparse

import dualad
from dualad.pytrees import tree_leaves, tree_map, tree_structure
from dualad import Dual
from dualad.sparse.transforms import MODES, SparseHessian, SparseJacobian, _with_arg

from .cache import ArrayState, StateKey
from .sharding import seed_placement
from .transforms import _CACHE, _Entry, compiled_or_on_host

__all__ = ["sparse_jacobian", "sparse_hessian"]

OUTPUTS = ("bcoo", "scipy")
#: Prepared patterns kept, each with its seeds and gather on the device; the
#: least recently used is dropped first.
PREPARED_SIZE = 16


# -- preparation, outside the trace ------------------------------------------------


class _Plan:
    """A prepared pattern (a :class:`~dualad.SparseJacobian` or
    :class:`~dualad.SparseHessian`) with what the compiled program needs.

    ``seeds`` is ``(k, *x.shape)`` (forward, Hessian) or ``(k, m)`` (reverse),
    one seed per colour. The passes give a compressed block ``(k, m)`` (k
    tangents or input cotangents); ``positions[i]`` is where the i-th nonzero
    (CSR order) sits in it, flattened: the prepared pattern's ``positions()``.
    """

    def __init__(self, prepared: SparseJacobian | SparseHessian, kind: str,
                 x_shape: tuple, dtype: np.dtype) -> None:
        self.prepared, self.kind, self.dtype = prepared, kind, np.dtype(dtype)
        colors = np.asarray(prepared.colors)
        self.shape, self.passes = prepared.pattern.shape, prepared.passes
        k = self.passes
        self.cols, self.indptr = prepared.structure  # canonical CSR: sorted
        index = np.int32 if k * max(self.shape) < 2**31 else np.int64
        seeds = (colors == np.arange(k)[:, None]).astype(self.dtype)
        if kind != "rev":
            seeds = seeds.reshape((k,) + tuple(x_shape))
        with jax.enable_x64(True):
            self.seeds = jnp.asarray(seeds)
            self.positions = jnp.asarray(prepared.positions().astype(index))
        self._bcoo_indices = None
        self._lock = threading.Lock()

    def bcoo(self, values: jax.Array) -> jsparse.BCOO:
        with self._lock:
            if self._bcoo_indices is None:
                index = np.int32 if max(self.shape) < 2**31 else np.int64
                rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
                with jax.enable_x64(True):
                    self._bcoo_indices = jnp.asarray(
                        np.stack([rows, self.cols], axis=1).astype(index))
        with jax.enable_x64(True):
            return jsparse.BCOO((values, self._bcoo_indices), shape=self.shape,
                                indices_sorted=True, unique_indices=True)

    def csr(self, values: jax.Array) -> sparse.csr_array:
        return sparse.csr_array((np.asarray(values), self.cols, self.indptr), shape=self.shape)


class _Plans:
    """The prepared patterns, by function state, options and argument shapes and
    dtypes; at most :data:`PREPARED_SIZE`, the least recently used dropped first."""

    def __init__(self) -> None:
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get_or_add(self, key: Any, arrays: list[ArrayState], make: Callable[[], _Plan]) -> _Plan:
        with self._lock:
            plan = self._entries.get(key)
            if plan is not None:
                self._entries.move_to_end(key)
                return plan
        plan = make()
        with self._lock:
            for state in arrays:
                state.freeze()
            self._entries[key] = plan
            while len(self._entries) > PREPARED_SIZE:
                self._entries.popitem(last=False)
        return plan

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_PLANS = _Plans()


def _on_host(args: tuple) -> tuple:
    """The arguments with JAX arrays as NumPy arrays, for the NumPy path's detection."""
    def host(a):
        if isinstance(a, jax.core.Tracer):
            raise TypeError("dualad_gpu.sparse_jacobian/sparse_hessian prepare the pattern "
                            "from concrete arguments, outside any trace: call them outside "
                            "jax.jit, jax.vmap and other JAX transforms (the evaluation "
                            "is compiled already)")
        return np.asarray(a) if isinstance(a, jax.Array) else a

    return tree_map(host, args, none_is_leaf=True)


def _abstract(a: Any) -> Any:
    dtype = getattr(a, "dtype", None)
    return (np.shape(a), np.dtype(dtype)) if dtype is not None else type(a)


def _float_argument(args: tuple, argnum: int) -> tuple[tuple, int]:
    """``args`` with the differentiated one a float array (ints and bools as float64),
    and its position counted from the start."""
    if not isinstance(argnum, int) or isinstance(argnum, bool) or \
            not -len(args) <= argnum < len(args):
        raise TypeError(f"argnums={argnum!r}: give the position of one array argument "
                        f"among the {len(args)} arguments")
    x = args[argnum]
    if not (isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating)):
        x = dualad.dual.as_float_array(np.asarray(x) if isinstance(x, jax.Array) else x)
    argnum %= len(args)
    return _with_arg(args, argnum, x), argnum


# -- the compiled evaluations ------------------------------------------------------
# Each is a function of (seeds, positions, *args) returning the nonzeros' values;
# ``f`` receives the arguments that are not differentiated as value Duals
# (dualad_gpu.transforms), so plain NumPy calls on them compile.


def _gather(block: Any, positions: jax.Array) -> jax.Array:
    """The nonzeros out of the compressed block: one gather."""
    while isinstance(block, Dual) and not block._tag.carries_derivatives:
        block = block.primal  # a value Dual, from arguments not differentiated
    return jnp.reshape(block, (-1,))[positions]


def _forward(argnum: int, place: Callable | None) -> Callable:
    def make(f):
        def evaluate(seeds, positions, *args):
            seeds = place(seeds) if place else seeds
            restricted = lambda x: f(*_with_arg(args, argnum, x))  # noqa: E731
            _, t = dualad.jvp(restricted, (args[argnum],), (seeds,), batched=True,
                              replay=False)
            return _gather(t, positions)

        return evaluate

    return make


def _reverse(argnum: int, place: Callable | None) -> Callable:
    def make(f):
        def evaluate(seeds, positions, *args):
            seeds = place(seeds) if place else seeds

            def compressed(x):  # seed c sums the rows of colour c
                return np.matmul(seeds, np.reshape(f(*_with_arg(args, argnum, x)), (-1,)))

            block = dualad.jacrev(compressed, seed_placement=place, replay=False)(args[argnum])
            return _gather(block, positions)

        return evaluate

    return make


def _hessian(argnum: int, place: Callable | None) -> Callable:
    def make(f):
        def evaluate(seeds, positions, *args):
            seeds = place(seeds) if place else seeds
            gradient = dualad.grad(lambda x: f(*_with_arg(args, argnum, x)), replay=False)
            _, t = dualad.jvp(gradient, (args[argnum],), (seeds,), batched=True, replay=False)
            return _gather(t, positions)

        return evaluate

    return make


_EVALUATIONS = {"fwd": _forward, "rev": _reverse, "hessian": _hessian}


class _Call:
    """One call's keys: the plan's (options, pattern, ``fun``'s state, argument shapes
    and dtypes) and the compiled program's (``fun``'s state)."""

    def __init__(self, name: str, options: tuple, fun: Callable, sparsity: Any,
                 args: tuple) -> None:
        self.name, self.options, self.fun, self.sparsity = name, options, fun, sparsity
        self.signature = (tree_structure(args, none_is_leaf=True),
                          tuple(map(_abstract, tree_leaves(args, none_is_leaf=True))))
        self.walk()

    def walk(self) -> None:
        """Key ``fun`` as it is now: running it may change what it reads (a list it
        appends to), and the state it leaves must find the same plan and program."""
        walk = StateKey()
        self.state = walk.of(self.fun)
        pattern = self.sparsity if isinstance(self.sparsity, str) else walk.of(self.sparsity)
        self.plan_key = (self.name, self.options, pattern, self.state, self.signature)
        self.arrays = walk.arrays


def _plan(name: str, options: tuple, fun: Callable, sparsity: Any,
          prepare: Callable[[tuple, int], Any], argnum: int, args: tuple) -> tuple:
    """The plan for ``args`` (prepared at the first call for their shapes and dtypes
    and ``fun``'s state), the arguments as the compiled program takes them, and the
    call's keys."""
    args, argnum = _float_argument(args, argnum)
    call = _Call(name, options, fun, sparsity, args)
    prepared = []

    def make() -> _Plan:
        prepared.append(_prepared_plan(prepare, args, argnum, name))
        return prepared[0]

    plan = _PLANS.get_or_add(call.plan_key, call.arrays, make)
    if prepared:  # the detection ran ``fun``
        call.walk()
        _PLANS.get_or_add(call.plan_key, call.arrays, lambda: plan)
    return plan, args, argnum, call


def _evaluate(name: str, options: tuple, fun: Callable, sparsity: Any,
              prepare: Callable[[tuple, int], Any], argnum: int, mesh: Any,
              args: tuple) -> tuple[_Plan, jax.Array]:
    """The plan for ``args`` and the nonzeros' values from the compiled program."""
    plan, args, argnum, call = _plan(name, options, fun, sparsity, prepare, argnum, args)
    if plan.passes == 0 or len(plan.cols) == 0:
        with jax.enable_x64(True):
            return plan, jnp.zeros(len(plan.cols), plan.dtype)
    key = (f"sparse-{plan.kind}", (argnum, mesh))
    make = _EVALUATIONS[plan.kind](argnum, seed_placement(mesh))
    entry = _CACHE.get_or_add(key + (call.state,), call.arrays, lambda: _Entry(make))
    entry.fun = fun
    traces = entry.traces
    values = compiled_or_on_host(
        entry, name, fun, (plan.seeds, plan.positions, *args),
        lambda: _values_on_the_host(plan, args), stacklevel=3)
    if entry.traces != traces:  # as dualad_gpu.transforms._run, and the plan too
        call.walk()
        _CACHE.get_or_add(key + (call.state,), call.arrays, lambda: entry)
        _PLANS.get_or_add(call.plan_key, call.arrays, lambda: plan)
    return plan, values


def _values_on_the_host(plan: _Plan, args: tuple) -> jax.Array:
    """The nonzeros' values from the prepared pattern's own NumPy evaluation."""
    values = plan.prepared(*_on_host(args)).data
    with jax.enable_x64(True):
        return jnp.asarray(values)


def _prepared_plan(prepare: Callable[[tuple, int], Any], args: tuple, argnum: int,
                   name: str) -> _Plan:
    x = args[argnum]
    prepared = prepare(_on_host(args), argnum)
    return _Plan(prepared, "hessian" if name == "sparse_hessian" else prepared.mode,
                 np.shape(x), x.dtype)


def _prepare(cls: type, fun: Callable, args: tuple, argnum: int, **options: Any) -> Any:
    """``cls(fun, args, argnum, **options)``: pattern and colouring on the NumPy path (its
    own ``__call__``, which the compiled evaluation replaces, keeps the interpreter)."""
    return cls(fun, args, argnum, replay=False, **options)


def _check(output: str, mode: str = "auto", sparsity: Any = "detect") -> None:
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if isinstance(sparsity, str) and sparsity != "detect":
        raise ValueError(f"sparsity must be 'detect' or a pattern, got {sparsity!r}")


def _transform(name: str, options: tuple, fun: Callable, sparsity: Any,
               prepare: Callable[[tuple, int], Any], argnum: int, output: str,
               mesh: Any) -> Callable:
    def transformed(*args: Any) -> Any:
        plan, values = _evaluate(name, options, fun, sparsity, prepare, argnum, mesh, args)
        return plan.bcoo(values) if output == "bcoo" else plan.csr(values)

    def prepare_for(*args: Any) -> Any:
        return _plan(name, options, fun, sparsity, prepare, argnum, args)[0].prepared

    transformed.prepare = prepare_for  # type: ignore[attr-defined]
    transformed.__name__ = f"{name}_of_{getattr(fun, '__name__', 'fun')}"
    transformed.__doc__ = f"The compiled {name.replace('_', ' ')} of " \
                          f"{getattr(fun, '__name__', 'fun')}."
    return transformed


# -- the transforms ----------------------------------------------------------------


def sparse_jacobian(fun: Callable, argnums: int = 0, *, sparsity: Any = "detect",
                    mode: str = "auto", local: bool = False, output: str = "bcoo",
                    mesh: Any = None) -> Callable:
    """Compiled :func:`dualad.sparse_jacobian`: only the nonzeros, in one XLA program.

    The pattern is detected and coloured by :class:`dualad.SparseJacobian` with
    NumPy at the first call for each input shape and dtype (and each state of
    what ``fun`` reads, as for the other transforms); the compressed passes and
    the decompression gather then run compiled. ``fun`` is written with NumPy
    calls (or :mod:`dualad_gpu.numpy`), as for :func:`dualad_gpu.jacfwd`.

    Parameters
    ----------
    fun, argnums, sparsity, mode, local:
        As for :func:`dualad.sparse_jacobian`.
    output:
        ``"bcoo"`` returns a ``jax.experimental.sparse.BCOO`` (sorted, unique
        indices) holding the compiled values; ``"scipy"`` copies them to the
        host as a ``scipy.sparse.csr_array``. Float64 values stay float64, but
        JAX's sparse operations on them need ``jax.enable_x64`` (they truncate
        to float32 without it).
    mesh:
        A :class:`jax.sharding.Mesh` whose first axis splits the seeds (one
        per colour) across devices, as for :func:`dualad_gpu.jacfwd`; ``None``
        (the default) for none: a colouring leaves few seeds to split.

    Returns
    -------
    Callable
        ``jac(*args)`` returning the ``(fun(...).size, x.size)`` Jacobian;
        ``jac.prepare(*args)`` gives the :class:`dualad.SparseJacobian` it uses.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> def residual(u):
    ...     padded = np.concatenate(([0.0], u, [0.0]))
    ...     return padded[:-2] - 2 * u + padded[2:] + np.exp(u)
    >>> jac = dualad_gpu.sparse_jacobian(residual)
    >>> J = jac(np.zeros(5))
    >>> type(J).__name__, J.nse
    ('BCOO', 13)
    >>> import jax
    >>> with jax.enable_x64(True):  # JAX's sparse functions truncate float64 otherwise
    ...     J.todense()
    Array([[-1.,  1.,  0.,  0.,  0.],
           [ 1., -1.,  1.,  0.,  0.],
           [ 0.,  1., -1.,  1.,  0.],
           [ 0.,  0.,  1., -1.,  1.],
           [ 0.,  0.,  0.,  1., -1.]], dtype=float64)
    >>> jac.prepare(np.zeros(5))
    SparseJacobian(5x5, nnz=13, mode='fwd', passes=3)
    >>> dualad_gpu.sparse_jacobian(residual, output="scipy")(np.zeros(5)).format
    'csr'
    """
    _check(output, mode, sparsity)
    options = (argnums, mode, local)
    return _transform("sparse_jacobian", options, fun, sparsity,
                      lambda args, argnum: _prepare(SparseJacobian, fun, args, argnum,
                                                    sparsity=sparsity, mode=mode,
                                                    local=local),
                      argnums, output, mesh)


def sparse_hessian(fun: Callable, argnums: int = 0, *, sparsity: Any = "detect",
                   local: bool = False, output: str = "bcoo", mesh: Any = None) -> Callable:
    """Compiled :func:`dualad.sparse_hessian`: one forward-over-reverse pass per colour
    of a star colouring, and the gather, in one XLA program.

    Arguments as for :func:`sparse_jacobian`; ``hess.prepare(*args)`` gives the
    :class:`dualad.SparseHessian`.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> rosenbrock = lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> H = dualad_gpu.sparse_hessian(rosenbrock, output="scipy")(np.ones(4))
    >>> H.toarray()
    array([[ 802., -400.,    0.,    0.],
           [-400., 1002., -400.,    0.],
           [   0., -400., 1002., -400.],
           [   0.,    0., -400.,  200.]])
    """
    _check(output, sparsity=sparsity)
    options = (argnums, local)
    return _transform("sparse_hessian", options, fun, sparsity,
                      lambda args, argnum: _prepare(SparseHessian, fun, args, argnum,
                                                    sparsity=sparsity, local=local),
                      argnums, output, mesh)
