"""Reverse mode on the same rule table: linearize, then transpose.

``vjp`` runs the function once on Duals whose tangents are
:class:`~dualad.linear.LinearVar` placeholders. The primal values are computed at
once; every tangent rule, being linear in the tangents and written with
primitives, records linear primitives on a :class:`~dualad.linear.Tape` instead
of computing. Transposing that tape —
walking it backwards and applying each linear primitive's transpose rule — is
the vector-Jacobian product. No nonlinear primitive has a hand-written VJP:
an elementwise one records its row of partials as one ``combine`` node, whose
transpose is unbroadcast(ct·∂ᵢ) for each argument; everything else is covered
by the transposes of the linear primitives its JVP rule uses.

Cotangents carry a leading axis of B cotangent seeds, so ``jacrev`` pulls back
a chunk of output directions in one backward pass. Each tape belongs to its
call: nothing global, freed with the returned ``vjp_fn``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import functools
import math
import time

import numpy as np
import optree

from .pytrees import tree_flatten
from . import ops, parallel
from .constructors import scope, scoped
from .dual import Dual, as_float_array, primal_value
from .tangents import check_tangent_shape
from .forward import split_aux
from .inputs import (Inputs, JoinedChunks, auto_chunk, check_argnums, check_chunk_size,
                     check_complex, check_output, only_row, seed_block,
                     zeros_like_output)
from .linear import LinearVar, Tape, backward, forward
from .operands import output_of
from .primitive import Tag
from .progress import check_progress, tracked
from .replay import REPLAY_BY_DEFAULT, made_before, replayed

__all__ = ["vjp", "linearize", "grad", "value_and_grad", "jacrev"]


def _linearize(fun: Callable, inputs: Inputs, nan_safe: bool, has_aux: bool,
               transform: str):
    """Run ``fun`` on Duals with LinearVar tangents once.

    Returns the output leaves' primals, their tangent vars, the output tree, aux,
    the tape and the input vars. The call's tag is finished on return: its
    Duals must not be used again.
    """
    tag = Tag()
    tape = Tape(nan_safe)
    in_vars = [tape.new_var((1,) + x.shape, x.dtype, tag) for x in inputs.leaves]
    try:
        out = inputs.call(fun, [Dual._new(x, v, tag) for x, v in zip(inputs.leaves, in_vars)])
        out, aux = split_aux(out, has_aux, tag)
        out_leaves, out_tree = tree_flatten(out)
        primals, out_vars = _read_linear(out_leaves, tag, transform)
    finally:
        tag.live = False
    return primals, out_vars, out_tree, aux, tape, in_vars


def _read_linear(out_leaves: list, tag: Tag, transform: str) -> tuple[list, list]:
    primals, out_vars = [], []
    for o in map(output_of, out_leaves):
        # (JAX's vjp and linearize take integer outputs: a cotangent ignored, a zero tangent)
        check_output(o, transform, floats_only=transform not in ("vjp", "linearize"))
        if isinstance(o, Dual) and o._tag is tag:
            primals.append(o.primal)
            out_vars.append(o.tangent if isinstance(o.tangent, LinearVar) else None)
        else:
            primals.append(o)
            out_vars.append(None)
    return primals, out_vars


def _pull_back(tape: Tape, out_vars: list, out_cts: list, in_vars: list, inputs: Inputs,
               seeds: int) -> list:
    """Input cotangents ``(B, *S_in)`` for output cotangents ``(B, *S_out)``."""
    start = {}
    for var, ct in zip(out_vars, out_cts):
        if var is None or ct is None:
            continue
        ct = ops.reshape(ct, shape=(seeds,) + var.shape)  # the var's seed axis of length 1
        start[var.index] = ct if var.index not in start else start[var.index] + ct
    cts = backward(tape, start)
    result = []
    for x, var in zip(inputs.leaves, in_vars):
        ct = cts.get(var.index)
        if ct is None:
            ct = zeros_like_output(x, (seeds,))
        else:
            ct = ops.reshape(ct, shape=(seeds,) + x.shape)
            if isinstance(ct, np.ndarray) and not ct.flags.writeable:
                ct = ct.copy()
        result.append(ct)
    return result


@scoped
def vjp(fun: Callable, *primals: Any, has_aux: bool = False,
        nan_safe: bool = False) -> tuple[Any, ...]:  # two values, or three with has_aux
    """Evaluate ``fun(*primals)`` and return a function pulling cotangents back.

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy; arguments and result may be
        pytrees.
    primals:
        The arguments.
    has_aux:
        ``fun`` returns ``(output, aux)``; ``aux`` is returned last.
    nan_safe:
        Give a zero cotangent, not ``0·∞ = nan``, wherever a zero cotangent
        meets an infinite partial derivative — e.g. the branch not taken in
        ``np.where(x > 0, np.sqrt(x), 0.0)`` at ``x = 0`` (JAX, autograd and
        PyTorch give nan there). Costs one select per elementwise product.

    Returns
    -------
    (primal_out, vjp_fn), or (primal_out, vjp_fn, aux) with has_aux
        ``vjp_fn(ct)`` takes a cotangent with the structure and shapes of
        ``primal_out`` and returns a tuple with one cotangent per primal, like
        ``jax.vjp``.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> y, pullback = dualad.vjp(lambda x: np.sin(x) * 2.0, np.array([0.0, np.pi]))
    >>> pullback(np.array([1.0, 1.0]))
    (array([ 2., -2.]),)
    """
    inputs = Inputs(primals, tuple(range(len(primals))), "vjp", complex_ok=True)
    primal_leaves, out_vars, out_tree, aux, tape, in_vars = _linearize(
        fun, inputs, nan_safe, has_aux, "vjp")

    def vjp_fn(ct: Any) -> tuple:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"the cotangent must have the structure of the output, "
                             f"{out_tree}, got {ct_tree}")
        out_cts = []
        for value, c in zip(primal_leaves, ct_leaves):
            if np.iscomplexobj(c) and _float_dtype(value).kind != "c":
                raise TypeError(f"a complex cotangent ({np.result_type(c)}) for a real "
                                f"output ({_float_dtype(value)})")
            c = as_float_array(c, _float_dtype(value), complex_ok=True)
            if np.shape(primal_value(c)) != np.shape(primal_value(value)):
                raise ValueError(f"cotangent shape {np.shape(primal_value(c))} does not "
                                 f"match the output shape {np.shape(primal_value(value))}")
            out_cts.append(c)
        in_cts = _pull_back(tape, out_vars, out_cts, in_vars, inputs, 1)
        return inputs.unflatten([only_row(c) for c in in_cts])

    primal_out = out_tree.unflatten(primal_leaves)
    return (primal_out, vjp_fn, aux) if has_aux else (primal_out, vjp_fn)


@scoped
def linearize(fun: Callable, *primals: Any, has_aux: bool = False
              ) -> tuple[Any, ...]:  # two values, or three with has_aux
    """Evaluate ``fun(*primals)`` once and return its linearization there, as
    ``jax.linearize`` does: a function of tangents giving ``J·tangents`` without
    evaluating ``fun`` again.

    The linear primitives of every rule ``fun`` met are recorded on a tape, as for
    :func:`vjp`; the returned function runs that tape forward (where :func:`vjp`
    runs it backward). Worth it when many tangents meet one point (a Newton-Krylov
    solve's Jacobian-vector products); for one tangent, :func:`jvp` is cheaper.

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy; arguments and result may be pytrees.
    primals:
        The point.
    has_aux:
        ``fun`` returns ``(output, aux)``; ``aux`` is returned last.

    Returns
    -------
    (primal_out, f_jvp), or (primal_out, f_jvp, aux) with has_aux
        ``f_jvp(*tangents)`` takes tangents with the structure and shapes of
        ``primals`` and returns the output's tangent, as ``jvp(fun, primals,
        tangents)[1]`` does.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> y, f_jvp = dualad.linearize(lambda x: np.sin(x) * x[0], np.array([1.0, 2.0]))
    >>> f_jvp(np.array([1.0, 0.0]))
    array([1.38177329, 0.90929743])
    >>> f_jvp(np.array([0.0, 1.0])) == dualad.jvp(lambda x: np.sin(x) * x[0],
    ...                                            (np.array([1.0, 2.0]),),
    ...                                            (np.array([0.0, 1.0]),))[1]
    array([ True,  True])
    """
    inputs = Inputs(primals, tuple(range(len(primals))), "linearize", complex_ok=True)
    primal_leaves, out_vars, out_tree, aux, tape, in_vars = _linearize(
        fun, inputs, False, has_aux, "linearize")
    _, in_tree = tree_flatten(tuple(primals))

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise ValueError(f"the tangents must have the structure of the primals, "
                             f"{in_tree}, got {t_tree}")
        seeds = {}
        for x, var, t in zip(inputs.leaves, in_vars, t_leaves):
            if np.iscomplexobj(t) and x.dtype.kind != "c":
                raise TypeError(f"a complex tangent ({np.result_type(t)}) for a real "
                                f"primal ({x.dtype})")
            t = as_float_array(t, x.dtype, complex_ok=True)
            check_tangent_shape(x.shape, np.shape(t))
            seeds[var.index] = ops.reshape(t, shape=(1,) + x.shape)
        values = forward(tape, seeds)
        return out_tree.unflatten([
            only_row(zeros_like_output(value, (1,)) if var is None else values[var.index])
            for value, var in zip(primal_leaves, out_vars)])

    primal_out = out_tree.unflatten(primal_leaves)
    return (primal_out, f_jvp, aux) if has_aux else (primal_out, f_jvp)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   *, holomorphic: bool = False, nan_safe: bool = False,
                   replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """A function returning ``(fun(*args), gradient)`` from one reverse pass.

    ``fun`` must return a real scalar, or an array of one element as autograd
    allows (plus ``aux`` with ``has_aux``, giving ``((value, aux), gradient)`` as in
    JAX). ``argnums``, ``holomorphic``, ``nan_safe`` and ``replay`` as in :func:`grad`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> value, (g1, g2) = dualad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0)
    >>> float(value), float(g1), float(g2)
    (11.652071455223084, 5.5, 1.7163378145367738)
    """
    check_argnums(argnums)
    options = (argnums, has_aux, holomorphic, nan_safe, replay)
    if (made := made_before(value_and_grad, fun, options)) is not None:
        return made

    def value_and_grad_fun(fun, *args):
        inputs = Inputs(args, argnums, "grad", holomorphic, complex_ok=True)
        leaves, out_vars, out_tree, aux, tape, in_vars = _linearize(
            fun, inputs, nan_safe, has_aux, "grad")
        if out_tree.num_leaves != 1 or not optree.treespec_is_leaf(out_tree):
            raise TypeError(f"grad requires a function returning a real scalar, got "
                            f"{out_tree.unflatten(leaves)!r:.80}; use jacrev or vjp for "
                            "other outputs")
        (value,), (var,) = leaves, out_vars
        shape = np.shape(primal_value(value))
        if math.prod(shape) != 1:  # a single element of any shape, as in autograd
            raise ValueError(f"grad requires a function with a scalar output, got shape "
                             f"{shape}; use jacrev or vjp")
        check_complex([_float_dtype(value)], "grad", "outputs", holomorphic, False)
        one = np.ones(shape, _float_dtype(value))
        in_cts = _pull_back(tape, [var], [one], in_vars, inputs, 1)
        gradient = inputs.unflatten([only_row(c) for c in in_cts])
        return ((value, aux) if has_aux else value), gradient

    return replayed(value_and_grad_fun, fun, argnums, replay, (value_and_grad, options))


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
         holomorphic: bool = False, nan_safe: bool = False,
         replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """The gradient of a scalar function by one reverse pass (JAX's ``grad``).

    Parameters
    ----------
    fun:
        Function returning a real scalar (and ``aux`` with ``has_aux``). Its
        inputs may be complex: the gradient is then JAX's, ``g`` with
        ``df = Re(g·dz)`` (for ``|z|²``, ``2·conj(z)``; docs/conventions.md).
    argnums:
        Which positional argument(s) to differentiate; a tuple gives a tuple.
    has_aux:
        Return ``(gradient, aux)``.
    holomorphic:
        ``fun`` is holomorphic, with complex inputs and a complex output: the
        result is its complex derivative ``f'(z)``.
    nan_safe:
        See :func:`vjp`.
    replay:
        Record the NumPy calls of a call (the forward pass and the backward sweep)
        and replay them on later calls with the same signature, as
        :func:`~dualad.jacfwd` does; ``False`` runs the interpreter every time.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.log(x[0]) + x[0] * x[1] - np.sin(x[1])
    >>> dualad.grad(f)(np.array([2.0, 5.0]))
    array([5.5       , 1.71633781])
    """
    check_argnums(argnums)
    options = (argnums, has_aux, holomorphic, nan_safe, replay)
    if (made := made_before(grad, fun, options)) is not None:
        return made

    def grad_fun(fun, *args):
        value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic=holomorphic,
                                            nan_safe=nan_safe, replay=False)
        (value, gradient) = value_and_grad_fun(*args)
        return (gradient, value[1]) if has_aux else gradient

    return replayed(grad_fun, fun, argnums, replay, (grad, options))


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, *, chunk_size: int | None = None,
           has_aux: bool = False, holomorphic: bool = False, nan_safe: bool = False,
           seed_placement: Callable | None = None, replay: bool = REPLAY_BY_DEFAULT,
           executor: Any = None, min_seconds: float | None = None,
           progress: bool | None = None) -> Callable:
    """The Jacobian by reverse mode: one forward pass, output directions batched.

    The function is evaluated once; its tape is then transposed with chunks of
    cotangent seeds (rows of the Jacobian), each chunk in one backward pass.

    Parameters
    ----------
    fun:
        Function to differentiate; arguments and result may be pytrees.
    argnums:
        Which positional argument(s) to differentiate with respect to.
    chunk_size:
        At most this many output directions per backward pass; ``None`` picks
        the largest chunk within :data:`~dualad.DEFAULT_CHUNK_BYTES`.
    has_aux:
        ``fun`` returns ``(output, aux)``; returns ``(jacobian, aux)``.
    holomorphic:
        As for :func:`~dualad.jacfwd`. Without it, as in JAX, the outputs must
        be real (the inputs may be complex: each row is then a :func:`grad`).
    nan_safe:
        See :func:`vjp`.
    seed_placement:
        For array backends: applied to every block of cotangent seeds before a pass
        (``dualad_gpu`` uses it to shard the seed axis across devices).
    replay:
        As for :func:`~dualad.jacfwd`.
    executor:
        As for :func:`~dualad.jacfwd`: the forward pass runs here (it tells the rows)
        and the backward passes go to the executor's workers in one contiguous group
        per worker, each worker making its own tape with one forward pass.
    min_seconds:
        As for :func:`~dualad.jacfwd` (measured on the forward pass and the first
        backward pass).
    progress:
        As for :func:`~dualad.jacfwd`: a bar over the backward passes.

    Returns
    -------
    Callable
        A function with ``fun``'s signature returning the Jacobian, laid out as
        by :func:`~dualad.jacfwd` and ``jax.jacrev``.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.stack([x[0] * x[1], np.sin(x[0])])
    >>> dualad.jacrev(f)(np.array([0.0, 2.0]))
    array([[2., 0.],
           [1., 0.]])
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> g = lambda x: np.cumsum(np.sin(x) * x[0])
    >>> with ThreadPoolExecutor(2) as pool:
    ...     J = dualad.jacrev(g, chunk_size=2, executor=pool, min_seconds=0)(np.ones(6))
    >>> bool(np.array_equal(J, dualad.jacrev(g, chunk_size=2)(np.ones(6))))
    True
    """
    check_chunk_size(chunk_size)
    check_argnums(argnums)
    check_progress(progress)
    options = (argnums, chunk_size, has_aux, holomorphic, nan_safe, seed_placement, replay,
               progress)
    if executor is None and (made := made_before(jacrev, fun, options)) is not None:
        return made

    def jacfun(fun, *args):
        inputs = Inputs(args, argnums, "jacrev", holomorphic, complex_ok=True)
        linear = _Linearized(fun, inputs, nan_safe, has_aux, holomorphic)
        return linear.pulled_back(linear.chunks(chunk_size), has_aux, seed_placement, progress)

    serial = replayed(jacfun, fun, argnums, replay and seed_placement is None,
                      (jacrev, options))

    def spread_call(spread: Any, *args: Any, **kwargs: Any) -> Any:
        inputs = Inputs(args, argnums, "jacrev", holomorphic, complex_ok=True)
        key = parallel.signature(inputs.leaves, inputs.tree)
        if spread.dispatch.serial(key):
            return spread.serially(key, *args, **kwargs)
        f = functools.partial(fun, **kwargs) if kwargs else fun
        begin = time.perf_counter()
        with scope():
            linear = _Linearized(f, inputs, nan_safe, has_aux, holomorphic)
            chunks = linear.chunks(chunk_size)
            if parallel.too_few(spread.dispatch, len(chunks), f"all {linear.outputs.n} rows "
                                "fit in one backward pass; give a smaller chunk_size to "
                                "split them", key):
                return linear.pulled_back(chunks, has_aux)
            first = [(chunks[0][0], linear.rows(*chunks[0]))]
        groups = np.array_split(np.arange(1, len(chunks)),
                                min(spread.dispatch.workers, len(chunks) - 1))
        units = [chunks[:1]] + [[chunks[i] for i in group] for group in groups]
        payload = (args, argnums, has_aux, holomorphic, nan_safe, linear.outputs.n)
        results = spread.dispatch.map(reverse_unit, f, payload, units, key,
                                      first=(first, time.perf_counter() - begin))
        rows = JoinedChunks(linear.outputs)
        for start, leaves in (pair for result in results for pair in result):
            rows.add(start, leaves)
        return linear.jacobian(rows, has_aux)

    return parallel.spread(serial, spread_call, executor, "jacrev", min_seconds,
                           seed_placement, progress)


class _Linearized:
    """``fun`` linearized once at the differentiated arguments ``inputs``: its tape, and
    the flat positions of its outputs (the rows of the Jacobian)."""

    def __init__(self, fun: Callable, inputs: Inputs, nan_safe: bool, has_aux: bool,
                 holomorphic: bool) -> None:
        self.inputs = inputs
        primal_leaves, self.out_vars, self.out_tree, self.aux, self.tape, self.in_vars = \
            _linearize(fun, inputs, nan_safe, has_aux, "jacrev")
        check_complex([_float_dtype(y) for y in primal_leaves], "jacrev", "outputs",
                      holomorphic, False)
        self.outputs = Inputs((self.out_tree.unflatten(primal_leaves),), 0,
                              complex_ok=True)  # flat output positions

    def chunks(self, chunk_size: int | None) -> list[tuple[int, int]]:
        outputs = self.outputs
        return outputs.chunks(chunk_size or auto_chunk(outputs.n, outputs.itemsize))

    def rows(self, start: int, stop: int, seed_placement: Callable | None = None) -> list:
        """Rows ``start:stop`` of the Jacobian, ``(stop - start, *S_in)`` per input leaf,
        from one backward pass."""
        cts = [seed_block(y, lo, hi, start, stop, seed_placement)
               for y, lo, hi in self.outputs.spans()]
        return _pull_back(self.tape, self.out_vars, cts, self.in_vars, self.inputs,
                          stop - start)

    def pulled_back(self, chunks: list, has_aux: bool, seed_placement: Callable | None = None,
                    progress: bool | None = False) -> Any:
        """The Jacobian (and aux), every chunk of rows pulled back here in turn."""
        rows = JoinedChunks(self.outputs)
        for start, stop in tracked(chunks, "jacrev", progress):
            rows.add(start, self.rows(start, stop, seed_placement))
        return self.jacobian(rows, has_aux)

    def jacobian(self, rows: JoinedChunks, has_aux: bool) -> Any:
        per_input = rows.result()
        # per_input[i]: (m, *S_in); cut m into the output leaves.
        blocks = [[_rows_of(per_input[i], lo, hi, y.shape) for i in range(len(self.in_vars))]
                  for y, lo, hi in self.outputs.spans()]
        jac = self.out_tree.unflatten([self.inputs.unflatten(b) for b in blocks])
        return (jac, self.aux) if has_aux else jac


def reverse_unit(fun: Callable, payload: tuple, chunks: list) -> list:
    """Chunks of rows of :func:`jacrev` as a unit of work (:mod:`dualad.parallel`): one
    forward pass, then a backward pass per chunk; ``[(start, rows), ...]``."""
    args, argnums, has_aux, holomorphic, nan_safe, m = payload
    with scope():
        inputs = Inputs(args, argnums, "jacrev", holomorphic, complex_ok=True)
        linear = _Linearized(fun, inputs, nan_safe, has_aux, holomorphic)
        if linear.outputs.n != m:
            raise ValueError(f"jacrev: the function returned {linear.outputs.n} values in a "
                             f"worker and {m} in the caller, at the same arguments")
        return [(start, linear.rows(start, stop)) for start, stop in chunks]


def _rows_of(ct, lo: int, hi: int, out_shape: tuple):
    block = ops.getitem(ct, index=(slice(lo, hi),))
    return ops.reshape(block, shape=tuple(out_shape) + tuple(ct.shape[1:]))


def _float_dtype(value: Any) -> np.dtype:
    dtype = getattr(primal_value(value), "dtype", np.dtype(np.float64))
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)

