"""Forward-mode transforms: jvp, jacfwd (jacobian), derivative.

Each call makes a fresh :class:`~dualad.primitive.Tag`, seeds its inputs as
Duals of that tag, runs the user's function once per chunk of seeds, and reads
the tangents of that tag off the outputs. Inputs and outputs may be pytrees
(tuples, lists, dicts, namedtuples of arrays), as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import functools

import numpy as np

from .pytrees import tree_flatten, tree_map, tree_structure
from .constructors import scope, scoped
from . import ops, parallel
from .dual import Dual, as_float_array, from_objects, primal_value, without_tag
from .tangents import check_tangent_shape
from .inputs import (DEFAULT_CHUNK_BYTES, Inputs, JoinedChunks, auto_chunk, check_argnums,
                     check_chunk_size, check_complex, only_row, read_leaf, seed_columns)
from .primitive import Boxed, EscapedDualError, Tag
from .progress import check_progress, tracked
from .replay import REPLAY_BY_DEFAULT, made_before, replayed, replayed_call

__all__ = ["jvp", "jacfwd", "jacobian", "derivative", "DEFAULT_CHUNK_BYTES"]



@scoped
def jvp(fun: Callable, primals: Sequence, tangents: Sequence, *, batched: bool = False,
        has_aux: bool = False, replay: bool = REPLAY_BY_DEFAULT
        ) -> tuple[Any, ...]:  # (primal, tangent) or (primal, tangent, aux)
    """Evaluate ``fun(*primals)`` and its directional derivative along ``tangents``.

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy (``np.sin``, ``@``,
        ``np.linalg.solve``, ...). Its arguments and result may be pytrees.
    primals:
        A tuple or list of the arguments, each a pytree of arrays.
    tangents:
        Same structure and shapes as ``primals``. With ``batched=True`` every
        tangent leaf has an extra leading axis of K seeds.
    batched:
        Carry K tangent directions in one evaluation of ``fun``.
    has_aux:
        ``fun`` returns ``(output, aux)``; ``aux`` is returned last, as values
        (without this transform's perturbation).
    replay:
        Replay the NumPy calls recorded at an earlier call of ``fun`` with the same
        signature, as :func:`jacfwd` does (the cache lives as long as ``fun``).

    Returns
    -------
    (primal_out, tangent_out), or (primal_out, tangent_out, aux) with has_aux
        ``tangent_out`` has the structure and shapes of ``primal_out``, with a
        leading K axis if batched.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.jvp(np.sin, (0.0,), (2.0,))
    (np.float64(0.0), array(2.))
    >>> f = lambda x: x ** 2
    >>> y, ts = dualad.jvp(f, (np.array([1.0, 3.0]),), (np.eye(2),), batched=True)
    >>> ts
    array([[2., 0.],
           [0., 6.]])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp expects primals and tangents as tuples or lists of arguments, "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    if replay:
        return replayed_call(fun, ("jvp", batched, has_aux), _jvp_with(batched, has_aux),
                             (tuple(primals), tuple(tangents)))
    return _jvp(fun, primals, tangents, batched, has_aux)


def _jvp_with(batched: bool, has_aux: bool) -> Callable:
    return lambda fun, primals, tangents: _jvp(fun, primals, tangents, batched, has_aux)


def _jvp(fun: Callable, primals: Sequence, tangents: Sequence, batched: bool,
         has_aux: bool) -> tuple:
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"primals and tangents must have the same structure, got "
                         f"{p_tree} and {t_tree}")
    tag = Tag()
    seeds = None
    duals = []
    for p, t in zip(p_leaves, t_leaves):
        p = as_float_array(p, complex_ok=True)
        if np.iscomplexobj(t) and p.dtype.kind != "c":
            raise TypeError(f"a complex tangent ({np.result_type(t)}) for a real primal "
                            f"({p.dtype}): give a real tangent, or a complex primal")
        t = as_float_array(t, p.dtype, complex_ok=True)
        if batched:
            check_tangent_shape(p.shape, t.shape[1:], seeds=True)
            if seeds is not None and t.shape[0] != seeds:
                raise ValueError(f"batched tangents must all have the same number of seeds "
                                 f"(leading axis), got {seeds} and {t.shape[0]}")
            seeds = t.shape[0]
        else:
            check_tangent_shape(p.shape, t.shape)
            t = ops.reshape(t, shape=(1,) + p.shape)
        duals.append(Dual._new(p, t, tag))
    try:
        out = fun(*p_tree.unflatten(duals))
        out, aux = split_aux(out, has_aux, tag)
        primal_out, tangent_out = _read_output(out, tag, seeds if batched else 1)
    finally:
        tag.live = False
    if not batched:
        tangent_out = tree_map(only_row, tangent_out)
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, *, chunk_size: int | None = None,
           has_aux: bool = False, holomorphic: bool = False,
           seed_placement: Callable | None = None,
           replay: bool = REPLAY_BY_DEFAULT, executor: Any = None,
           min_seconds: float | None = None, progress: bool | None = None) -> Callable:
    """The Jacobian of ``fun`` by forward mode, all seeds batched.

    Parameters
    ----------
    fun:
        Function to differentiate; arguments and result may be pytrees.
    argnums:
        Which positional argument(s) to differentiate with respect to.
    chunk_size:
        At most this many seeds (columns of the Jacobian) per evaluation of
        ``fun``; the tangents never hold more. ``None`` picks the largest chunk
        within :data:`DEFAULT_CHUNK_BYTES` of seeds: one pass for small inputs.
    has_aux:
        ``fun`` returns ``(output, aux)``; the Jacobian function then returns
        ``(jacobian, aux)``.
    holomorphic:
        ``fun`` is a holomorphic function of complex inputs with complex outputs:
        the Jacobian is then its complex derivative. Without it, as in JAX, the
        inputs must be real (the outputs may be complex).
    seed_placement:
        For array backends: applied to every block of seeds before a pass
        (``dualad_gpu`` uses it to shard the seed axis across devices).
    replay:
        Record the NumPy calls of a call and replay them on later calls with the
        same signature (see ``docs/performance.md``). ``fun`` itself runs at every
        call, and each of its operations is checked against the recording, so the
        result is the interpreter's bit for bit whatever ``fun`` reads. ``False``
        runs the interpreter every time.
    executor:
        A :class:`concurrent.futures.Executor` (``ThreadPoolExecutor``,
        ``ProcessPoolExecutor``) or a ``dask.distributed.Client``: the passes (chunks
        of ``chunk_size`` seeds) run on its workers, each returning plain arrays, and
        the Jacobian is assembled here, equal to the serial one bit for bit (see
        :mod:`dualad.parallel` and ``docs/scaling.md``). One pass, or passes quicker
        than ``min_seconds``, run serially with a ``RuntimeWarning``. Process pools
        and Dask receive ``fun`` by cloudpickle.
    min_seconds:
        With ``executor``: a first pass quicker than this many seconds keeps the
        problem serial; ``None`` takes :data:`dualad.parallel.DISPATCH_SECONDS` for
        the executor's kind, ``0`` always sends the passes out.
    progress:
        A progress bar over the passes (tqdm's, or Dask's own with a Dask cluster) and
        lines at ``logging.INFO`` on the ``"dualad"`` logger: ``None`` shows them when
        the passes are expected to take more than a few seconds
        (:data:`dualad.progress.PROGRESS_SECONDS`), ``True`` always, ``False`` never.

    Returns
    -------
    Callable
        A function with ``fun``'s signature returning the Jacobian. For an
        output leaf of shape ``S_out`` and an input leaf of shape ``S_in`` it
        holds a block of shape ``S_out + S_in``, arranged like JAX's (output
        structure outside, input structure inside; a tuple over ``argnums``
        when it is a tuple).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.stack([x[0] * x[1], np.sin(x[0])])
    >>> dualad.jacfwd(f)(np.array([0.0, 2.0]))
    array([[2., 0.],
           [1., 0.]])
    >>> g = lambda x, y: x * y
    >>> dualad.jacfwd(g, argnums=(0, 1))(3.0, 4.0)
    (array(4.), array(3.))

    The passes on two threads (eight seeds, two per pass):

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> h = lambda x: np.sin(np.cumsum(x)) * x
    >>> with ThreadPoolExecutor(2) as pool:
    ...     J = dualad.jacfwd(h, chunk_size=2, executor=pool, min_seconds=0)(np.ones(8))
    >>> bool(np.array_equal(J, dualad.jacfwd(h, chunk_size=2)(np.ones(8))))
    True
    """
    check_chunk_size(chunk_size)
    check_argnums(argnums)
    check_progress(progress)
    options = (argnums, chunk_size, has_aux, holomorphic, seed_placement, replay, progress)
    if executor is None and (made := made_before(jacfwd, fun, options)) is not None:
        return made  # (a transform written inline in a loop)

    def jacfun(fun, *args):
        inputs = Inputs(args, argnums, "jacfwd", holomorphic)
        joined = JoinedChunks(inputs)
        chunks = inputs.chunks(chunk_size or auto_chunk(inputs.n, inputs.itemsize))
        for start, stop in tracked(chunks, "jacfwd", progress):
            leaves, out_tree, aux = forward_pass(fun, inputs, start, stop, has_aux,
                                                 holomorphic, seed_placement)
            joined.add(start, leaves)
        return _jacobian(inputs, joined, out_tree, aux, has_aux)

    serial = replayed(jacfun, fun, argnums, replay and seed_placement is None,
                      (jacfwd, options))

    def spread_call(spread: Any, *args: Any, **kwargs: Any) -> Any:
        inputs = Inputs(args, argnums, "jacfwd", holomorphic)
        chunks = inputs.chunks(chunk_size or auto_chunk(inputs.n, inputs.itemsize))
        key = parallel.signature(inputs.leaves, inputs.tree)
        if parallel.passes_stay_here(spread.dispatch, len(chunks), inputs.n, key):
            return spread.serially(key, *args, **kwargs)
        f = functools.partial(fun, **kwargs) if kwargs else fun
        results = spread.dispatch.map(forward_unit, f, (args, argnums, has_aux, holomorphic),
                                      chunks, key)
        return joined_jacobian(inputs, chunks, results, has_aux)

    return parallel.spread(serial, spread_call, executor, "jacfwd", min_seconds,
                           seed_placement, progress)


def forward_pass(fun: Callable, inputs: Inputs, start: int, stop: int, has_aux: bool,
                 holomorphic: bool, seed_placement: Callable | None = None
                 ) -> tuple[list, Any, Any]:
    """One pass of :func:`jacfwd`: the tangents of ``fun``'s output leaves along the
    seeds ``start:stop`` (``(stop - start, *S_out)`` each), its output structure, and
    its aux (None without ``has_aux``)."""
    tag = Tag()  # a tag per pass: nothing of one pass can leak into the next
    try:
        out = inputs.call(fun, [seed_columns(x, lo, hi, start, stop, tag, seed_placement)
                                for x, lo, hi in inputs.spans()])
        out, aux = split_aux(out, has_aux, tag)
        out_leaves, out_tree = tree_flatten(out)
        if holomorphic:
            check_complex([np.result_type(primal_value(o)) for o in out_leaves],
                          "jacfwd", "outputs", True, True)
        return [read_leaf(o, tag, stop - start)[1] for o in out_leaves], out_tree, aux
    finally:
        tag.live = False


def forward_unit(fun: Callable, payload: tuple, chunk: tuple[int, int]) -> tuple[list, Any, Any]:
    """A pass of :func:`jacfwd` as a unit of work (:mod:`dualad.parallel`): the arguments,
    ``argnums``, ``has_aux`` and ``holomorphic`` in ``payload``."""
    args, argnums, has_aux, holomorphic = payload
    with scope():
        inputs = Inputs(args, argnums, "jacfwd", holomorphic)
        return forward_pass(fun, inputs, *chunk, has_aux, holomorphic)


def joined_jacobian(inputs: Inputs, chunks: list, results: list, has_aux: bool) -> Any:
    """The Jacobian from the results of :func:`forward_unit` on ``chunks``, in order."""
    joined = JoinedChunks(inputs)
    for (start, _), (leaves, out_tree, aux) in zip(chunks, results):
        joined.add(start, leaves)
    return _jacobian(inputs, joined, out_tree, aux, has_aux)


def _jacobian(inputs: Inputs, joined: JoinedChunks, out_tree: Any, aux: Any,
              has_aux: bool) -> Any:
    per_output = joined.result()
    jac = out_tree.unflatten([inputs.unflatten(inputs.split(t)) for t in per_output])
    return (jac, aux) if has_aux else jac


jacobian = jacfwd


def derivative(fun: Callable, argnums: int = 0, *, order: int = 1,
               replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """The derivative of a function of one scalar: ``derivative(f)(x) = f'(x)``.

    The result has the shape (and pytree structure) of ``f``'s output; ``replay``
    as in :func:`jacfwd`. At a complex ``x`` it is the derivative along the real
    direction, ``d/dt f(x + t)``: ``f'(x)`` for a holomorphic ``f``. ``order=k``
    gives the k-th derivative, from one Taylor-mode pass (:func:`dualad.jet`, which
    gives every order up to k at once; the replay is for ``order=1``).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.derivative(np.sin)(0.0)
    array(1.)
    >>> dualad.derivative(lambda t: np.stack([t, t ** 2]))(3.0)
    array([1., 6.])
    >>> complex(dualad.derivative(lambda z: z ** 3)(1j))
    (-3+0j)
    >>> float(dualad.derivative(lambda x: np.exp(np.sin(x)), order=7)(0.0))
    56.0
    """
    check_argnums(argnums, single=True)
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    if order > 1:
        return _derivative_of_order(fun, argnums, int(order))
    if (made := made_before(derivative, fun, (argnums, replay))) is not None:
        return made

    def deriv(fun, *args):
        x = Inputs(args, argnums, "derivative", complex_ok=True).leaves[0]
        if x.shape != ():
            raise ValueError(f"derivative() is for functions of one scalar, but argument "
                             f"{argnums} has shape {x.shape}; use jacfwd for arrays")

        def along(x_):
            return fun(*args[:argnums], x_, *args[argnums + 1:])

        return _jvp(along, (x,), (np.ones((), x.dtype),), False, False)[1]

    return replayed(deriv, fun, argnums, replay, (derivative, (argnums, replay)))


def _derivative_of_order(fun: Callable, argnums: int, order: int) -> Callable:
    """``derivative(fun, argnums, order=order)`` for ``order > 1``: a jet's last term."""
    from .taylor import jet

    @functools.wraps(fun)
    def deriv(*args: Any, **kwargs: Any) -> Any:
        x = Inputs(args, argnums, "derivative", complex_ok=True).leaves[0]
        if x.shape != ():
            raise ValueError(f"derivative() is for functions of one scalar, but argument "
                             f"{argnums} has shape {x.shape}; use jet for arrays")

        def along(x_):
            return fun(*args[:argnums], x_, *args[argnums + 1:], **kwargs)

        out, terms = jet(along, (x,), ([np.ones((), x.dtype)] + [np.zeros((), x.dtype)]
                                       * (order - 1),))
        return tree_structure(out).unflatten(
            [t[-1] for t in tree_structure(out).flatten_up_to(terms)])

    return deriv


# -- reading the outputs -------------------------------------------------------


def split_aux(out: Any, has_aux: bool, tag: Tag) -> tuple[Any, Any]:
    """``(output, aux)`` of ``fun``'s result; ``aux`` loses the perturbation of
    ``tag``, so it comes back as plain values (as in JAX)."""
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"has_aux=True needs a function returning a pair (output, aux), "
                        f"got {type(out).__name__}")
    out, aux = out
    return out, tree_map(lambda o: without_tag(_live(from_objects(o)), tag), aux)


def _live(o: Any) -> Any:
    if isinstance(o, Boxed) and not o._tag.live:
        raise EscapedDualError(o._tag)
    return o


def _read_output(out: Any, tag: Tag, seeds: int) -> tuple[Any, Any]:
    """Split a pytree of outputs into primals and tangents of ``tag``."""
    leaves, tree = tree_flatten(out)
    pairs = [read_leaf(o, tag, seeds, "jvp") for o in leaves]
    return tree.unflatten([p for p, _ in pairs]), tree.unflatten([t for _, t in pairs])


