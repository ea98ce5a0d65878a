"""Second-order transforms: hessian, hvp, second_derivative.

Two strategies, both exact:

* hyper-duals — seeding x + ε1·u + ε2·v gives uᵀ∇²f v in the ε1ε2 part. With u
  and v running over unit vectors one pass yields a whole block of the
  Hessian: all n×n pairs for small n, or K1×K2 blocks when chunked (only the
  blocks on and above the diagonal: the Hessian is symmetric). Cost grows as
  n² times the function; the fastest for small n.
* forward-over-reverse — ``jacfwd(jacrev(f))``: the reverse pass of a gradient
  carried out on Duals. Cost grows as n times the function; the fastest for
  large n, and the way ``hvp`` works (one pass, whatever n).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import functools

import numpy as np

from .pytrees import tree_flatten, tree_map, tree_structure
from .constructors import scope, scoped
from . import ops, parallel
from .dual import Dual, as_float_array
from .forward import forward_pass, jacfwd, joined_jacobian, jvp
from .inputs import (Inputs, auto_chunk, check_argnums, check_chunk_size, check_complex,
                     check_output, only_row, seed_block,
                     zeros_like_output)
from .hyperdual import SeededHyperDual
from .operands import output_of
from .primitive import Tag
from .progress import check_progress, tracked
from .replay import REPLAY_BY_DEFAULT, made_before, replayed, replayed_call

__all__ = ["hessian", "hvp", "second_derivative"]


#: ``hessian(..., mode="auto")`` uses hyper-duals up to this many inputs and
#: forward-over-reverse beyond (the crossover measured on Rosenbrock).
HYPERDUAL_MAX_N = 24

MODES = ("auto", "hyperdual", "fwd-rev")


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, *,
            chunk_size: int | None = None, mode: str = "auto", holomorphic: bool = False,
            seed_placement: Callable | None = None,
            replay: bool = REPLAY_BY_DEFAULT, executor: Any = None,
            min_seconds: float | None = None, progress: bool | None = None) -> Callable:
    """The exact Hessian of ``fun``, by hyper-duals or forward-over-reverse.

    Parameters
    ----------
    fun:
        Function to differentiate; arguments and result may be pytrees.
    argnums:
        Which positional argument(s) to differentiate with respect to.
    chunk_size:
        At most this many seeds per perturbation and pass, so the ε1ε2 parts
        hold at most ``chunk_size²`` second derivatives per element. ``None``
        picks the largest chunk whose ε1ε2 block fits
        :data:`~dualad.DEFAULT_CHUNK_BYTES`: one pass for small inputs. With
        ``mode="fwd-rev"``, the seeds per forward pass over the gradient.
    mode:
        ``"hyperdual"``, ``"fwd-rev"`` (``jacfwd(jacrev(fun))``), or ``"auto"``:
        hyper-duals for at most :data:`HYPERDUAL_MAX_N` inputs, else
        forward-over-reverse.
    holomorphic:
        ``fun`` is a holomorphic function of complex inputs with a complex output:
        the result is its second complex derivative, by
        ``jacfwd(jacrev(fun, holomorphic=True), holomorphic=True)`` (as JAX's).
        Without it, as in JAX, the inputs must be real.
    seed_placement:
        For array backends: applied to every block of ε1 seeds (of the forward
        pass with fwd-rev) before a pass
        (``dualad_gpu`` uses it to shard the seed axis across devices).
    replay:
        Replay the NumPy calls recorded at an earlier call with the same signature,
        as :func:`~dualad.jacfwd` does; ``False`` runs the interpreter every time.
    executor:
        As for :func:`~dualad.jacfwd`: the units of work are the forward passes over
        the gradient (fwd-rev), or the blocks of hyper-dual passes (``chunk_size``
        seeds by ``chunk_size``, on and above the diagonal).
    min_seconds:
        As for :func:`~dualad.jacfwd`.
    progress:
        As for :func:`~dualad.jacfwd`: a bar over the passes.

    Returns
    -------
    Callable
        A function with ``fun``'s signature returning the Hessian. For an output
        leaf of shape ``S_out`` and input leaves of shapes ``S_i``, ``S_j`` it
        holds a block of shape ``S_out + S_i + S_j``, arranged like
        ``jax.hessian``. The result is exactly symmetric.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: x[0] ** 2 * x[1] + np.sin(x[1])
    >>> dualad.hessian(f)(np.array([1.0, 0.0]))
    array([[0., 2.],
           [2., 0.]])
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> g = lambda x: np.sum(np.sin(x) * np.cumsum(x))
    >>> with ThreadPoolExecutor(2) as pool:
    ...     H = dualad.hessian(g, chunk_size=2, executor=pool, min_seconds=0)(np.ones(6))
    >>> bool(np.array_equal(H, dualad.hessian(g, chunk_size=2)(np.ones(6))))
    True
    """
    check_chunk_size(chunk_size)
    check_argnums(argnums)
    check_progress(progress)
    options = (argnums, chunk_size, mode, holomorphic, seed_placement, replay, progress)
    if executor is None and (made := made_before(hessian, fun, options)) is not None:
        return made
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if holomorphic:
        from .reverse import jacrev

        return jacfwd(jacrev(fun, argnums, holomorphic=True, replay=False), argnums,
                      chunk_size=chunk_size, holomorphic=True, seed_placement=seed_placement,
                      replay=replay, executor=executor, min_seconds=min_seconds,
                      progress=progress)

    def hessfun(fun, *args):
        inputs = Inputs(args, argnums, "hessian")
        if mode == "fwd-rev" or (mode == "auto" and inputs.n > HYPERDUAL_MAX_N):
            return _hessian_fwd_rev(fun, inputs, chunk_size, seed_placement, progress)
        chunks = inputs.chunks(chunk_size or auto_chunk(inputs.n, inputs.itemsize, 2))
        blocks: dict[tuple[int, int], list] = {}
        pairs = [(i, j) for i in range(len(chunks)) for j in range(i, len(chunks))]
        for i, j in tracked(pairs, "hessian", progress):
            out_leaves, out_tree = _hyperdual_pass(fun, inputs, chunks[i], chunks[j],
                                                   seed_placement)
            blocks[i, j] = out_leaves
        return _hyperdual_hessian(inputs, len(chunks), blocks, out_tree)

    serial = replayed(hessfun, fun, argnums, replay and seed_placement is None,
                      (hessian, options))

    def spread_call(spread: Any, *args: Any, **kwargs: Any) -> Any:
        # The units: the chunks of the forward pass over the gradient (fwd-rev), or the
        # blocks (i, j ≥ i) of hyper-dual passes.
        inputs = Inputs(args, argnums, "hessian")
        fwd_rev = mode == "fwd-rev" or (mode == "auto" and inputs.n > HYPERDUAL_MAX_N)
        chunks = inputs.chunks(chunk_size or auto_chunk(inputs.n, inputs.itemsize,
                                                        1 if fwd_rev else 2))
        units = chunks if fwd_rev else [(chunks[i], chunks[j]) for i in range(len(chunks))
                                        for j in range(i, len(chunks))]
        key = parallel.signature(inputs.leaves, inputs.tree)
        if parallel.passes_stay_here(spread.dispatch, len(units), inputs.n, key):
            return spread.serially(key, *args, **kwargs)
        f = functools.partial(fun, **kwargs) if kwargs else fun
        results = spread.dispatch.map(hessian_unit, f, (args, argnums, fwd_rev), units, key)
        if fwd_rev:
            every = tuple(range(len(inputs.leaves)))
            leaf_inputs = Inputs(tuple(inputs.leaves), every, "jacfwd")
            nested = joined_jacobian(leaf_inputs, chunks, [r[:2] + (None,) for r in results],
                                     False)
            return _symmetrized(inputs, nested, results[0][2])
        pairs = [(i, j) for i in range(len(chunks)) for j in range(i, len(chunks))]
        blocks = {pair: leaves for pair, (leaves, _) in zip(pairs, results)}
        return _hyperdual_hessian(inputs, len(chunks), blocks, results[0][1])

    return parallel.spread(serial, spread_call, executor, "hessian", min_seconds,
                           seed_placement, progress)


def hessian_unit(fun: Callable, payload: tuple, unit: tuple) -> tuple:
    """A pass of :func:`hessian` as a unit of work (:mod:`dualad.parallel`): with
    fwd-rev the forward pass over the gradient along the seeds ``unit`` (its tangents,
    their structure and ``fun``'s output structure), else the hyper-dual pass of the
    block ``unit`` (its ε1ε2 parts and ``fun``'s output structure)."""
    args, argnums, fwd_rev = payload
    with scope():
        inputs = Inputs(args, argnums, "hessian")
        if not fwd_rev:
            return _hyperdual_pass(fun, inputs, *unit)
        gradient, structures = _gradient_of_leaves(fun, inputs)
        every = tuple(range(len(inputs.leaves)))
        leaves, tree, _ = forward_pass(gradient, Inputs(tuple(inputs.leaves), every,
                                                        "jacfwd"), *unit, False, False)
        return leaves, tree, structures[0]


def _hyperdual_hessian(inputs: Inputs, count: int, blocks: dict, out_tree: Any) -> Any:
    """The Hessian from the ε1ε2 blocks ``(i, j ≥ i)`` of ``count`` chunks of seeds."""
    per_output = []
    for leaf in range(len(blocks[0, 0])):
        rows = [[_block(blocks, i, j, leaf) for j in range(count)] for i in range(count)]
        per_output.append(_join(rows))
    return out_tree.unflatten([
        inputs.unflatten([inputs.unflatten(inputs.split(col, axis=0))
                          for col in inputs.split(h, axis=1)])
        for h in per_output])


@scoped
def hvp(fun: Callable, primals: Sequence, tangents: Sequence, *,
        mode: str = "fwd-rev", chunk_size: int | None = None,
        replay: bool = REPLAY_BY_DEFAULT) -> Any:
    """The Hessian-vector product ∇²f(x)·v of a scalar function, exactly.

    By default forward-over-reverse, ``jvp(grad(fun), primals, tangents)``: one
    pass, whatever the size. ``mode="hyperdual"`` evaluates hyper-duals instead
    (ε1 carries ``v``, ε2 the unit vectors, so the ε1ε2 part is vᵀ∇²f), one
    pass per chunk of unit vectors: only worth it for a handful of inputs.

    Parameters
    ----------
    fun:
        A function returning a scalar.
    primals, tangents:
        Tuples (or lists) of the arguments and of directions of the same
        structure and shapes, as for :func:`~dualad.jvp`.
    mode:
        ``"fwd-rev"`` or ``"hyperdual"``.
    chunk_size:
        With ``mode="hyperdual"``: unit vectors per pass (bounded memory).
    replay:
        As for :func:`~dualad.jvp` (the cache lives as long as ``fun``).

    Returns
    -------
    tuple
        ∇²f·v, with the structure of ``primals``.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.sum(x ** 3)
    >>> dualad.hvp(f, (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    (array([ 6., 12.]),)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("hvp expects primals and tangents as tuples or lists of arguments")
    check_chunk_size(chunk_size)
    if mode not in ("fwd-rev", "hyperdual"):
        raise ValueError(f"mode must be 'fwd-rev' or 'hyperdual', got {mode!r}")
    if replay:
        return replayed_call(fun, ("hvp", mode, chunk_size), _hvp_with(mode, chunk_size),
                             (tuple(primals), tuple(tangents)))
    return _hvp(fun, primals, tangents, mode, chunk_size)


def _hvp_with(mode: str, chunk_size: int | None) -> Callable:
    return lambda fun, primals, tangents: _hvp(fun, primals, tangents, mode, chunk_size)


def _hvp(fun: Callable, primals: Sequence, tangents: Sequence, mode: str,
         chunk_size: int | None) -> Any:
    if mode == "fwd-rev":
        from .reverse import grad

        every = tuple(range(len(primals)))
        return jvp(grad(fun, argnums=every, replay=False), tuple(primals), tuple(tangents),
                   replay=False)[1]
    inputs = Inputs(tuple(primals), tuple(range(len(primals))), "hvp", None)
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if t_tree != inputs.tree:
        raise ValueError(f"primals and tangents must have the same structure, got "
                         f"{inputs.tree} and {t_tree}")
    directions = []
    for x, t in zip(inputs.leaves, t_leaves):
        t = as_float_array(t, x.dtype)
        if t.shape != x.shape:
            raise ValueError(f"tangent shape {t.shape} does not match the primal shape "
                             f"{x.shape}")
        directions.append(t.reshape((1,) + x.shape))
    pieces = []
    for start, stop in inputs.chunks(chunk_size or auto_chunk(inputs.n, inputs.itemsize)):
        tag1, tag2 = Tag(), Tag()
        seeded = [SeededHyperDual._assemble(x, u, seed_block(x, lo, hi, start, stop), None,
                                      tag1, tag2, (1, stop - start))
                  for (x, lo, hi), u in zip(inputs.spans(), directions)]
        try:
            out = output_of(inputs.call(fun, seeded))
            check_output(out, "hvp", floats_only=True)
            check_complex([np.result_type(_real(out))], "hvp", "outputs", None, False)
            if np.ndim(_real(out)) != 0:
                raise ValueError(f"hvp needs a function with a scalar output, got shape "
                                 f"{np.shape(_real(out))}")
            pieces.append(_second_part(out, tag1, tag2, (1, stop - start))[0])
        finally:
            tag1.live = tag2.live = False
    flat = pieces[0] if len(pieces) == 1 else ops.concatenate(*pieces, axis=0)
    return inputs.unflatten(inputs.split(flat))


def second_derivative(fun: Callable, argnums: int = 0, *,
                      replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """``f''(x)`` of a function of one scalar (any output shape), in one pass
    (``replay`` as in :func:`~dualad.jacfwd`). Outputs may be complex, and at a
    complex ``x`` it is the second derivative along the real direction:
    ``f''(x)`` for a holomorphic ``f``.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.second_derivative(lambda t: t ** 3)(2.0)
    array(12.)
    >>> complex(dualad.second_derivative(lambda z: z ** 3)(1j))
    6j
    """
    check_argnums(argnums, single=True)
    if (made := made_before(second_derivative, fun, (argnums, replay))) is not None:
        return made

    def deriv2(fun, *args):
        x = as_float_array(args[argnums], complex_ok=True)
        if np.shape(x) != ():
            raise ValueError(f"second_derivative() is for functions of one scalar, but "
                             f"argument {argnums} has shape {np.shape(x)}; use hessian")
        one = np.ones((1,), x.dtype)
        tag1, tag2 = Tag(), Tag()
        seeded = SeededHyperDual._assemble(x, one, one, None, tag1, tag2, (1, 1))
        try:
            out = fun(*args[:argnums], seeded, *args[argnums + 1:])
            return tree_map(
                lambda o: only_row(_second_part(o, tag1, tag2, (1, 1), complex_ok=True), 2), out)
        finally:
            tag1.live = tag2.live = False

    return replayed(deriv2, fun, argnums, replay, (second_derivative, (argnums, replay)))


# -- passes and assembly ------------------------------------------------------------


def _hessian_fwd_rev(fun: Callable, inputs: Inputs, chunk_size: int | None,
                     seed_placement: Callable | None = None,
                     progress: bool | None = False) -> Any:
    """``jacfwd(jacrev(fun))`` over the differentiated leaves, symmetrized blockwise."""
    every = tuple(range(len(inputs.leaves)))
    gradient, structures = _gradient_of_leaves(fun, inputs)
    nested = jacfwd(gradient, argnums=every, chunk_size=chunk_size,
                    seed_placement=seed_placement, replay=False,
                    progress=progress)(*inputs.leaves)
    return _symmetrized(inputs, nested, structures[0])


def _gradient_of_leaves(fun: Callable, inputs: Inputs) -> tuple[Callable, list]:
    """``jacrev`` of ``fun`` as a function of the differentiated leaves, and the list
    that receives the output's structure, read as ``fun`` returns."""
    from .reverse import jacrev

    structures: list = []

    def of_leaves(*leaves):
        out = inputs.call(fun, list(leaves))
        structures.append(tree_structure(out))
        return out

    every = tuple(range(len(inputs.leaves)))
    return jacrev(of_leaves, argnums=every, replay=False), structures


def _symmetrized(inputs: Inputs, nested: Any, out_tree: Any) -> Any:
    """The Hessian from ``jacfwd(jacrev(fun))`` over the leaves, symmetrized blockwise."""
    result = []
    for blocks in out_tree.flatten_up_to(nested):  # blocks[i][j]: S_out + S_i + S_j
        out_ndim = blocks[0][0].ndim - 2 * inputs.leaves[0].ndim
        rows = []
        for i, xi in enumerate(inputs.leaves):
            row = []
            for j, xj in enumerate(inputs.leaves):
                mirror = ops.transpose(blocks[j][i], axes=_swap_last(out_ndim, xj.ndim, xi.ndim))
                row.append(0.5 * blocks[i][j] + 0.5 * mirror)  # exactly symmetric, no overflow
            rows.append(inputs.unflatten(row))
        result.append(inputs.unflatten(rows))
    return out_tree.unflatten(result)


def _swap_last(lead: int, a: int, b: int) -> tuple[int, ...]:
    """Axes turning ``lead + a + b`` dimensions into ``lead + b + a``."""
    return (tuple(range(lead)) + tuple(range(lead + a, lead + a + b))
            + tuple(range(lead, lead + a)))


def _hyperdual_pass(fun, inputs: Inputs, rows1, rows2, place=None):
    """Evaluate ``fun`` with ε1 on seeds ``rows1`` and ε2 on ``rows2``; the ε1ε2 blocks."""
    (s1, e1), (s2, e2) = rows1, rows2
    tag1, tag2 = Tag(), Tag()
    seeded = [SeededHyperDual._assemble(x, seed_block(x, lo, hi, s1, e1, place),
                                  seed_block(x, lo, hi, s2, e2), None,
                                  tag1, tag2, (e1 - s1, e2 - s2))
              for x, lo, hi in inputs.spans()]
    seeds = (e1 - s1, e2 - s2)
    try:
        out_leaves, out_tree = tree_flatten(inputs.call(fun, seeded))
        return [_second_part(o, tag1, tag2, seeds) for o in out_leaves], out_tree
    finally:
        tag1.live = tag2.live = False


def _real(out: Any) -> Any:
    while isinstance(out, Dual):
        out = out.primal
    return out


def _second_part(o: Any, tag1: Tag, tag2: Tag, seeds: tuple[int, int],
                 complex_ok: bool = False) -> Any:
    """The ε1ε2 part of an output, shape ``(K1, K2, *S)`` (zeros where absent); a
    complex output only if ``complex_ok`` (not for ``hessian``, as in JAX)."""
    o = output_of(o)
    check_output(o, "hessian", floats_only=True)
    check_complex([np.result_type(_real(o))], "hessian", "outputs", None, complex_ok)
    t = o.tangent if isinstance(o, Dual) and o._tag is tag2 else None
    part = t.tangent if isinstance(t, Dual) and t._tag is tag1 else None
    if part is None:
        value = o.primal if isinstance(o, Dual) and o._tag is tag2 else o
        if isinstance(value, Dual) and value._tag is tag1:
            value = value.primal
        return zeros_like_output(value, seeds)
    if isinstance(part, np.ndarray) and not part.flags.writeable:
        part = part.copy()
    return part


def _block(blocks: dict, i: int, j: int, leaf: int) -> Any:
    """Block (i, j) of the Hessian: computed for i ≤ j, mirrored below the diagonal."""
    if i <= j:
        block = blocks[i, j][leaf]
        if i == j:  # average with the mirror image: exactly symmetric
            block = 0.5 * block + 0.5 * _swap_seed_axes(block)  # (no overflow near the max)
        return block
    return _swap_seed_axes(blocks[j, i][leaf])


def _swap_seed_axes(block):
    axes = (1, 0) + tuple(range(2, block.ndim))
    return ops.transpose(block, axes=axes)


def _join(rows: list[list]) -> Any:
    if len(rows) == 1:
        return rows[0][0]
    return ops.concatenate(*(ops.concatenate(*row, axis=1) for row in rows), axis=0)
