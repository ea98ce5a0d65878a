"""The differentiated inputs of a transform call: which arguments, their leaves, chunks
of seeds, and the checks JAX makes of them (``argnums``, ``chunk_size``, dtypes).

A transform flattens the arguments named by ``argnums`` into leaves
(:class:`Inputs`), numbers their elements 0 … n−1, and seeds them chunk by chunk
with unit vectors (:func:`seed_block`, built by the :data:`unit_vectors`
primitive so that each backend makes them its own way); the tangents of the
chunks are joined again by :class:`JoinedChunks`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .pytrees import tree_flatten
from . import ops
from .dual import Dual, as_float_array, primal_value
from .operands import output_of
from .primitive import Boxed, EscapedDualError, Primitive, Tag, backend_of

__all__ = ["DEFAULT_CHUNK_BYTES", "Inputs", "JoinedChunks", "as_array", "auto_chunk",
           "check_argnums", "check_chunk_size", "check_complex", "check_output", "only_row",
           "read_leaf", "seed_block", "seed_columns", "unit_vectors", "zeros_like_output"]

#: Memory budget of the seed block when ``chunk_size`` is not given: a Jacobian
#: with n inputs carries K = DEFAULT_CHUNK_BYTES // (n · itemsize) seeds per pass
#: (all n in one pass up to n ≈ 2900 in float64).
DEFAULT_CHUNK_BYTES = 64 * 2**20


def check_chunk_size(chunk_size: int | None) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, (int, np.integer))
                                   or chunk_size < 1):
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}")


#: Tuples of distinct small positions (argnums=(0, 1) and the like).
_SMALL_ARGNUMS = frozenset(itertools.permutations(range(4), 1)) | frozenset(
    itertools.permutations(range(4), 2)) | frozenset(itertools.permutations(range(4), 3))


def check_argnums(argnums: Any, single: bool = False) -> None:
    """Refuse an ``argnums`` that is not an int or a tuple of distinct ints."""
    kind = type(argnums)
    if kind is int or (kind is tuple and not single and argnums in _SMALL_ARGNUMS
                       and type(argnums[0]) is int and type(argnums[-1]) is int
                       and (len(argnums) < 3 or type(argnums[1]) is int)):  # (True == 1)
        return  # the common cases, at once (a transform made in a loop checks each time)
    allowed = "an int" if single else "an int or a tuple of distinct ints"
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        return
    if (not single and isinstance(argnums, (tuple, list)) and argnums
            and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                    for i in argnums)):
        if len({int(i) for i in argnums}) == len(argnums):
            return
        raise ValueError(f"argnums {tuple(argnums)!r} names an argument twice; give each "
                         "position once")
    raise TypeError(f"argnums must be {allowed} (positions of the arguments to "
                    f"differentiate), got {argnums!r}")


def check_output(o: Any, transform: str, floats_only: bool = False) -> None:
    """Refuse an output leaf that is not a real floating-point value (or a Dual of a
    live transform). Integer and boolean outputs have a zero derivative in forward
    mode, as ``jax.jacfwd`` gives them; reverse mode and Hessians (``floats_only``)
    refuse them, as ``jax.jacrev``, ``jax.grad`` and ``jax.hessian`` do."""
    if isinstance(o, Boxed):
        if not o._tag.live:
            raise EscapedDualError(o._tag)
        return
    dtype = getattr(o, "dtype", None)
    if dtype is None and isinstance(o, (bool, int, float, complex)):
        dtype = np.asarray(o).dtype
    if dtype is None:
        raise TypeError(f"{transform} differentiates functions returning arrays of real "
                        f"floating-point numbers (or pytrees of them), but the function "
                        f"returned a {type(o).__name__}: {o!r:.80}")
    kind = np.dtype(dtype).kind
    if kind in "fc" or (kind in "biu" and not floats_only):
        return  # complex outputs: the transform's own check_complex decides
    forward = " (jacfwd gives it a zero derivative)" if kind in "biu" else ""
    raise TypeError(f"{transform} requires a real floating-point output, but the function "
                    f"returned one of dtype {dtype}, which has no derivative{forward}; "
                    "return a float (y.astype(float)) if it should have one.")


def check_complex(dtypes: Sequence, transform: str, what: str, holomorphic: bool | None,
                  complex_ok: bool) -> None:
    """JAX's rules for complex ``what`` (inputs or outputs) of ``transform``: with
    ``holomorphic=True`` they must be complex; without, complex ones only where
    ``complex_ok`` (a gradient of a real function of complex inputs, a Jacobian of
    complex outputs of real inputs). ``holomorphic=None``: a transform without it."""
    for dtype in dtypes:
        is_complex = np.dtype(dtype).kind == "c"
        if holomorphic and not is_complex:
            raise TypeError(f"{transform} with holomorphic=True requires {what} with a "
                            f"complex dtype, but got {np.dtype(dtype)}.")
        if is_complex and not (holomorphic or complex_ok):
            hint = ("For holomorphic differentiation, pass holomorphic=True; for any other "
                    "function of complex numbers, use jvp and vjp." if holomorphic is not None
                    else "Second derivatives of functions of complex inputs are not "
                    "supported yet: split the input into real and imaginary parts.")
            raise TypeError(f"{transform} requires real-valued {what}, but got "
                            f"{np.dtype(dtype)}. {hint}")


def auto_chunk(n: int, itemsize: int, seed_axes: int = 1) -> int:
    """Seeds per pass so that the seed block (K^seed_axes · n items) fits the budget."""
    budget = DEFAULT_CHUNK_BYTES // max(1, n * itemsize)
    return max(1, min(n, int(budget ** (1.0 / seed_axes))))


class Inputs:
    """The differentiated arguments of one call: their leaves, flat positions, re-insertion.

    Leaf ``j`` covers positions ``offsets[j]:offsets[j+1]`` of the flat input
    vector of length ``n``; a seed k is the unit vector at position k.
    """

    def __init__(self, args: tuple, argnums: int | Sequence[int], transform: str = "",
                 holomorphic: bool | None = False, complex_ok: bool = False) -> None:
        check_argnums(argnums)
        self.single = isinstance(argnums, (int, np.integer))
        self.argnums = (int(argnums),) if self.single else tuple(argnums)
        for i in self.argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"argnums {i} is out of range for a call with {len(args)} "
                                 "positional arguments")
        self.args = args
        diff = args[self.argnums[0]] if self.single else tuple(args[i] for i in self.argnums)
        leaves, self.tree = tree_flatten(diff)
        self.leaves = [as_float_array(x, complex_ok=True) for x in leaves]
        check_complex([x.dtype for x in self.leaves], transform or "this transform", "inputs",
                      holomorphic, complex_ok)
        self.offsets = [0]
        for x in self.leaves:
            self.offsets.append(self.offsets[-1] + x.size)
        self.n = self.offsets[-1]
        self.dtype = self.leaves[0].dtype if self.leaves else np.dtype(np.float64)
        self.itemsize = self.dtype.itemsize

    def chunks(self, size: int) -> list[tuple[int, int]]:
        return [(start, min(self.n, start + size)) for start in range(0, max(self.n, 1), size)]

    def spans(self):
        return zip(self.leaves, self.offsets[:-1], self.offsets[1:])

    def unflatten(self, leaves: list) -> Any:
        return self.tree.unflatten(leaves)

    def call(self, fun: Callable, leaves: list) -> Any:
        """``fun`` called with the differentiated arguments replaced by ``leaves``."""
        args = list(self.args)
        new = self.tree.unflatten(leaves)
        for pos, i in enumerate(self.argnums):
            args[i] = new if self.single else new[pos]
        return fun(*args)

    def split(self, t, axis: int = 0) -> list:
        """Cut an axis of length n of ``t`` into the input leaves' shapes, moved last.

        ``t`` has shape ``(*before, n, *S_out)`` with ``len(before) == axis``;
        each block comes out as ``(*before, *S_out, *S_in)``, JAX's layout.
        """
        before, out_ndim = t.shape[:axis], t.ndim - axis - 1
        blocks = []
        for x, lo, hi in self.spans():
            # (one leaf spanning the axis: no view of a view, a cost in short calls)
            whole = lo == 0 and hi == t.shape[axis]
            block = t if whole else t[(slice(None),) * axis + (slice(lo, hi),)]
            shape = before + x.shape + t.shape[axis + 1:]
            if block.shape != shape:
                block = block.reshape(shape)
            if x.ndim and out_ndim:
                first = tuple(range(axis))
                block = block.transpose(first + tuple(range(axis + x.ndim, block.ndim))
                                        + tuple(range(axis, axis + x.ndim)))
            blocks.append(block)
        return blocks


class JoinedChunks:
    """Per leaf, the arrays ``(K, ...)`` of successive chunks of seeds joined along
    the seed axis into ``(n, ...)``. NumPy results are written into one array per
    leaf as they come, so the peak memory is the result plus one chunk; other
    backends' (JAX traces) and Duals of an enclosing transform (a chunked transform
    nested in another, whose chunks a float array cannot hold) are concatenated at
    the end, with the rule table."""

    def __init__(self, inputs: Inputs) -> None:
        self.n, self.numpy = inputs.n, backend_of(inputs.leaves) == "numpy"
        self.blocks: list[list] = []
        self.arrays: list | None = None

    def add(self, start: int, leaves: list) -> None:
        if self.numpy and any(isinstance(t, Boxed) for t in leaves):
            self.numpy = False  # from now on, blocks joined at the end
            if self.arrays is not None:  # the chunks so far: one block
                self.blocks.append([array[:start] for array in self.arrays])
                self.arrays = None
        if not self.numpy or (start == 0 and all(t.shape[0] == self.n for t in leaves)):
            self.blocks.append(leaves)  # one chunk for all seeds needs no copy
            return
        if self.arrays is None:
            self.arrays = [np.empty((self.n,) + t.shape[1:], t.dtype) for t in leaves]
        for array, t in zip(self.arrays, leaves):
            array[start:start + t.shape[0]] = t

    def result(self) -> list:
        if self.arrays is not None:
            return self.arrays
        if len(self.blocks) == 1:
            return self.blocks[0]
        return [ops.concatenate(*(b[j] for b in self.blocks), axis=0)
                for j in range(len(self.blocks[0]))]


def seed_columns(x, lo: int, hi: int, start: int, stop: int, tag: Tag,
                 place: Callable | None = None):
    """``x`` (flat positions lo:hi) seeded with the unit vectors start:stop: a Dual
    even with no seed in this chunk, so that a write into it copies (a function
    that writes into its argument never changes the caller's array)."""
    return Dual._new(x, seed_block(x, lo, hi, start, stop, place), tag)


def seed_block(x, lo: int, hi: int, start: int, stop: int,
               place: Callable | None = None) -> Any:
    """The tangent ``(stop - start, *x.shape)`` of unit vectors start:stop on ``x``.

    ``x`` covers flat positions lo:hi; None when no unit vector touches it.
    """
    if hi <= start or lo >= stop:
        return None  # a constant for this chunk, at no cost
    seeds = unit_vectors(x, lo=lo, hi=hi, start=start, stop=stop)
    return seeds if place is None else place(seeds)


def _unit_vectors(x, lo: int, hi: int, start: int, stop: int) -> np.ndarray:
    seeds = np.zeros((stop - start, hi - lo), x.dtype)
    first, last = max(lo, start), min(hi, stop)
    if last - first == 1:
        seeds[first - start, first - lo] = 1
    else:
        positions = np.arange(first, last)
        seeds[positions - start, positions - lo] = 1
    return seeds.reshape((stop - start,) + x.shape)


# Rows start:stop of the identity restricted to x's flat positions lo:hi, shaped
# (stop - start, *x.shape); a primitive so that each backend builds them its own
# way (JAX in-graph, not as a constant), with no derivative.
unit_vectors = Primitive("unit_vectors", _unit_vectors)


def only_row(t: Any, axes: int = 1) -> Any:
    """The results of a block of one seed, ``(1, *S)`` (``(1, 1, *S)`` for ``axes=2``),
    as ``S``: an array even where ``S`` is ``()`` (indexing would give a NumPy scalar),
    so that every derivative of every transform is an array, as JAX's are. A reshape,
    which the replay records as the interpreter makes it."""
    return ops.reshape(t, shape=tuple(np.shape(t))[axes:])


def as_array(value: Any) -> Any:
    """``value``, a transform's result, as an array even where NumPy made it a scalar
    (a ufunc or reduction of 0-d arrays): two reshapes, which the replay records."""
    return only_row(ops.reshape(value, shape=(1,) + tuple(np.shape(value))))


def read_leaf(o: Any, tag: Tag, seeds: int, transform: str = "jacfwd") -> tuple[Any, Any]:
    """The primal and the tangent of ``tag`` of one output leaf (zeros if absent)."""
    o = output_of(o)
    check_output(o, transform)
    if isinstance(o, Dual) and o._tag is tag:
        primal, t = o.primal, o.tangent
    else:
        primal, t = o, None
    if t is None:
        t = zeros_like_output(primal, (seeds,))
    elif issubclass(type(t), np.ndarray) and not t.flags.writeable:
        t = t.copy()  # a broadcast view; hand out an ordinary array
    return primal, t


def zeros_like_output(value: Any, seeds: tuple[int, ...]) -> np.ndarray:
    """Zero derivatives for an output that does not depend on the input."""
    value = primal_value(value)
    dtype = getattr(value, "dtype", np.dtype(float))
    return np.zeros(seeds + np.shape(value), dtype if dtype.kind in "fc" else np.float64)
