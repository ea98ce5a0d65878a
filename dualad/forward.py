"""Forward-mode transforms: jvp, jacfwd (jacobian), derivative.

Each call makes a fresh :class:`~dualad.primitive.Tag`, seeds its inputs as
Duals of that tag, runs the user's function once per chunk of seeds, and reads
the tangents of that tag off the outputs. Inputs and outputs may be pytrees
(tuples, lists, dicts, namedtuples of arrays), as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from . import ops
from .dual import Dual, as_float_array, check_tangent_shape, primal_value
from .primitive import Tag

__all__ = ["jvp", "jacfwd", "jacobian", "derivative", "DEFAULT_CHUNK_BYTES"]

#: Memory budget of the seed block when ``chunk_size`` is not given: a Jacobian
#: with n inputs carries K = DEFAULT_CHUNK_BYTES // (n · itemsize) seeds per pass
#: (all n in one pass up to n ≈ 2900 in float64).
DEFAULT_CHUNK_BYTES = 64 * 2**20


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, *, batched: bool = False,
        has_aux: bool = False) -> tuple[Any, Any] | tuple[Any, Any, Any]:
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
        ``fun`` returns ``(output, aux)``; ``aux`` is returned as is, last.

    Returns
    -------
    ``(primal_out, tangent_out)`` (plus ``aux``): ``tangent_out`` has the
    structure and shapes of ``primal_out``, with a leading K axis if batched.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.jvp(np.sin, (0.0,), (2.0,))
    (np.float64(0.0), np.float64(2.0))
    >>> f = lambda x: x ** 2
    >>> y, ts = dualad.jvp(f, (np.array([1.0, 3.0]),), (np.eye(2),), batched=True)
    >>> ts
    array([[2., 0.],
           [0., 6.]])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp expects primals and tangents as tuples or lists of arguments, "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    p_leaves, p_tree = optree.tree_flatten(tuple(primals))
    t_leaves, t_tree = optree.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"primals and tangents must have the same structure, got "
                         f"{p_tree} and {t_tree}")
    tag = Tag()
    seeds = None
    duals = []
    for p, t in zip(p_leaves, t_leaves):
        p = as_float_array(p)
        t = t if isinstance(t, Dual) else np.asarray(t, dtype=p.dtype)
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
    out = fun(*p_tree.unflatten(duals))
    out, aux = out if has_aux else (out, None)
    primal_out, tangent_out = _read_output(out, tag, seeds if batched else 1)
    if not batched:
        tangent_out = optree.tree_map(lambda t: t[0], tangent_out)
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, *, chunk_size: int | None = None,
           has_aux: bool = False) -> Callable:
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

    Returns
    -------
    A function with ``fun``'s signature returning the Jacobian: for an output
    leaf of shape ``S_out`` and an input leaf of shape ``S_in`` a block of shape
    ``S_out + S_in``, arranged like JAX's (output structure outside, input
    structure inside; a tuple over ``argnums`` when it is a tuple).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.stack([x[0] * x[1], np.sin(x[0])])
    >>> dualad.jacfwd(f)(np.array([0.0, 2.0]))
    array([[2., 0.],
           [1., 0.]])
    >>> g = lambda x, y: x * y
    >>> dualad.jacfwd(g, argnums=(0, 1))(3.0, 4.0)
    (np.float64(4.0), np.float64(3.0))
    """
    if chunk_size is not None and (not isinstance(chunk_size, (int, np.integer))
                                   or chunk_size < 1):
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}")
    single = isinstance(argnums, (int, np.integer))
    argnums_tuple = (int(argnums),) if single else tuple(argnums)

    def jacfun(*args):
        _check_argnums(argnums_tuple, len(args))
        diff_args = args[argnums_tuple[0]] if single else tuple(args[i] for i in argnums_tuple)
        in_leaves, in_tree = optree.tree_flatten(diff_args)
        in_leaves = [as_float_array(x) for x in in_leaves]
        offsets = [0]
        for x in in_leaves:
            offsets.append(offsets[-1] + x.size)
        n = offsets[-1]
        chunk = chunk_size or _auto_chunk(n, in_leaves)
        tag = Tag()
        blocks: list[list] = []
        for start in range(0, max(n, 1), chunk):
            stop = min(n, start + chunk)
            identity = np.eye(stop - start, n, start, dtype=in_leaves[0].dtype)
            seeded = [_seed_columns(x, identity, off, tag)
                      for x, off in zip(in_leaves, offsets)]
            call_args = list(args)
            new_diff = in_tree.unflatten(seeded)
            for pos, i in enumerate(argnums_tuple):
                call_args[i] = new_diff if single else new_diff[pos]
            out = fun(*call_args)
            out, aux = out if has_aux else (out, None)
            out_leaves, out_tree = optree.tree_flatten(out)
            _, tangents = _read_output(out_leaves, tag, stop - start)
            blocks.append(tangents)
        per_output = [blocks[0][j] if len(blocks) == 1 else
                      ops.concatenate(*(b[j] for b in blocks), axis=0)
                      for j in range(len(blocks[0]))]
        jac_leaves = [in_tree.unflatten(_split_columns(t, in_leaves, offsets))
                      for t in per_output]
        jac = out_tree.unflatten(jac_leaves)
        return (jac, aux) if has_aux else jac

    return jacfun


jacobian = jacfwd


def derivative(fun: Callable, argnums: int = 0) -> Callable:
    """The derivative of a function of one scalar: ``derivative(f)(x) = f'(x)``.

    The result has the shape (and pytree structure) of ``f``'s output.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.derivative(np.sin)(0.0)
    np.float64(1.0)
    >>> dualad.derivative(lambda t: np.array([t, t ** 2]))(3.0)
    array([1., 6.])
    """

    def deriv(*args):
        _check_argnums((argnums,), len(args))
        x = as_float_array(args[argnums])
        if x.shape != ():
            raise ValueError(f"derivative() is for functions of one scalar, but argument "
                             f"{argnums} has shape {x.shape}; use jacfwd for arrays")

        def along(x_):
            return fun(*args[:argnums], x_, *args[argnums + 1:])

        return jvp(along, (x,), (np.ones((), x.dtype),))[1]

    return deriv


# -- seeding and reading -------------------------------------------------------


def _check_argnums(argnums: tuple, nargs: int) -> None:
    for i in argnums:
        if not -nargs <= i < nargs:
            raise ValueError(f"argnums {i} is out of range for a call with {nargs} "
                             "positional arguments")


def _auto_chunk(n: int, leaves: list) -> int:
    itemsize = max((x.dtype.itemsize for x in leaves), default=8)
    return max(1, min(n, DEFAULT_CHUNK_BYTES // max(1, n * itemsize)))


def _seed_columns(x, identity: np.ndarray, offset: int, tag: Tag):
    """``x`` seeded with its columns of this chunk's rows of the identity."""
    seeds = identity[:, offset:offset + x.size]
    if not seeds.any():
        return x  # no seed of this chunk touches x: a constant, at no cost
    return Dual._new(x, seeds.astype(x.dtype, copy=False).reshape((len(seeds),) + x.shape), tag)


def _read_output(out: Any, tag: Tag, seeds: int) -> tuple[Any, Any]:
    """Split a pytree of outputs into primals and tangents of ``tag``."""
    leaves, tree = optree.tree_flatten(out)
    primals, tangents = [], []
    for o in leaves:
        if isinstance(o, Dual) and o._tag is tag:
            primal, t = o.primal, o.tangent
        else:
            primal, t = o, None
        if t is None:
            value = primal_value(primal)
            dtype = value.dtype if getattr(value, "dtype", np.dtype(float)).kind == "f" else float
            t = np.zeros((seeds,) + np.shape(value), dtype)
        elif isinstance(t, np.ndarray) and not t.flags.writeable:
            t = t.copy()  # a broadcast view; hand out an ordinary array
        primals.append(primal)
        tangents.append(t)
    return tree.unflatten(primals), tree.unflatten(tangents)


def _split_columns(t, in_leaves: list, offsets: list) -> list:
    """Cut the (n, *S_out) tangent block into one S_out + S_in block per input leaf."""
    out_ndim = t.ndim - 1
    blocks = []
    for x, lo, hi in zip(in_leaves, offsets[:-1], offsets[1:]):
        block = t[lo:hi].reshape(x.shape + t.shape[1:])
        in_ndim = x.ndim
        if in_ndim and out_ndim:
            block = block.transpose(tuple(range(in_ndim, in_ndim + out_ndim))
                                    + tuple(range(in_ndim)))
        blocks.append(block)
    return blocks
