"""The linear tape of reverse mode: tangents that record instead of computing.

A :class:`LinearVar` stands for a tangent while :func:`~dualad.vjp` runs the user's
function on Duals: each linear primitive a tangent rule applies to it is recorded
on the call's :class:`Tape` (and checked to be linear there, :func:`check_linear`),
with its shape and dtype found without computing (:func:`abstract_eval`).
:func:`backward` then walks the tape from the end, applying each primitive's
transpose rule: the vector-Jacobian product.
"""

from __future__ import annotations

import weakref
import zlib
from typing import Any

import numpy as np

from . import ops
from .dual import Dual, is_sparse_matrix, primal_value
from .primitive import Boxed, EscapedDualError, Primitive, Tag, same_layout_copy

__all__ = ["LinearVar", "Tape", "TangentOperators", "abstract_eval", "backward",
           "check_linear", "forward", "COPIED_UP_TO"]


class Tape:
    """The linear primitives recorded by one ``vjp`` call, in order.

    ``nan_safe`` makes every product of a cotangent with a partial derivative
    give 0 where the cotangent is 0, even if the partial is infinite or NaN
    (the ``where(x > 0, sqrt(x), 0)`` trap).
    """

    __slots__ = ("nodes", "count", "nan_safe", "ref", "watched", "__weakref__")

    def __init__(self, nan_safe: bool = False) -> None:
        self.nodes: list[tuple] = []
        self.count = 0
        self.nan_safe = nan_safe
        self.ref = weakref.ref(self)  # what its vars hold
        self.watched: list[tuple] = []  # (large array, its CRC-32), checked when walked

    def new_var(self, shape: tuple, dtype: np.dtype, tag: Tag) -> LinearVar:
        var = LinearVar(shape, dtype, tag, self, self.count)
        self.count += 1
        return var

    def held(self, value: Any) -> Any:
        """What the tape keeps of a constant it reads again when it is walked: a copy of
        an array anyone may write into (a buffer the function refills after using it
        would otherwise change the derivative), laid out as the original; an array
        larger than :data:`COPIED_UP_TO` is kept itself and checked instead (a copy
        would double the memory of a large operand), a change raising."""
        kind = type(value)
        if kind is np.ndarray:
            if not value.flags.writeable:
                return value
            if value.nbytes <= COPIED_UP_TO:
                return same_layout_copy(value)
            self.watched.append((value, _crc(value)))
            return value
        if kind is tuple:
            return tuple(map(self.held, value))
        if is_sparse_matrix(value):
            return value.copy()
        return value

    def check(self) -> None:
        """Raise if a large constant the tape holds was written into since it was held."""
        for value, crc in self.watched:
            if _crc(value) != crc:
                raise ValueError(
                    "the function wrote into an array after an operation used it, and "
                    "reverse mode (grad, jacrev, vjp, linearize) reads that operation's "
                    "constants again when it walks back: copy the array before writing "
                    "into it (np.copy), or use forward mode (jacfwd, jvp).")


#: Constant arrays up to this many bytes are copied onto a reverse-mode tape; larger ones
#: are checked for writes (a CRC-32) when the tape is walked.
COPIED_UP_TO = 1 << 16


def _crc(value: np.ndarray) -> int:
    """The CRC-32 of ``value``'s elements, a strided view's read in small pieces (no copy
    of the whole: the operand may be large)."""
    if value.flags.c_contiguous:
        return zlib.crc32(value.reshape(-1).view(np.uint8))
    crc = 0
    for piece in np.nditer(value, flags=["external_loop", "buffered", "zerosize_ok"],
                           buffersize=1 << 13, order="C"):
        crc = zlib.crc32(piece.tobytes(), crc)
    return crc


class TangentOperators:
    """Operators and NumPy protocols for tangents that are not arrays (a recorded
    :class:`LinearVar`, a sparsity pattern): rules write tangent arithmetic with
    operators and NumPy calls, and each one is a primitive of the rule table."""

    __slots__ = ()
    shape: tuple

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __add__(self, other): return ops.add(self, other)
    def __radd__(self, other): return ops.add(other, self)
    def __sub__(self, other): return ops.subtract(self, other)
    def __rsub__(self, other): return ops.subtract(other, self)
    def __mul__(self, other): return ops.multiply(self, other)
    def __rmul__(self, other): return ops.multiply(other, self)
    def __truediv__(self, other): return ops.divide(self, other)
    def __neg__(self): return ops.negative(self)

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, index):
        return ops.getitem(self, index=index if isinstance(index, tuple) else (index,))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return ops.reshape(self, shape=tuple(shape))

    def transpose(self, *axes):
        return ops.transpose(self, axes=axes[0] if len(axes) == 1 else axes)

    # NumPy calls in tangent rules (np.sum(t, axis=-1), ...) reach the rule table
    # exactly as they do for a Dual.
    __array_ufunc__ = Dual.__array_ufunc__
    __array_function__ = Dual.__array_function__


class LinearVar(TangentOperators, Boxed):
    """A tangent whose value is unknown: primitives applied to it are recorded.

    It stands in for a Dual's tangent during a ``vjp``; its ``shape`` includes
    the seed axis (of length 1). Only primitives linear in it may touch it.
    """

    # The tape holds its vars and they refer to it weakly: no reference cycle, so a
    # tape is freed as soon as its transform is done with it.
    __slots__ = ("shape", "dtype", "_tag", "_tape", "index")
    records_linear = True

    def __init__(self, shape: tuple, dtype: np.dtype, tag: Tag, tape: Tape, index: int) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._tag = tag
        self._tape = tape.ref
        self.index = index

    @property
    def tape(self) -> Tape:
        tape = self._tape()
        if tape is None:
            raise EscapedDualError(self._tag)
        return tape

    def _process(self, prim: Primitive, args: tuple, params: dict) -> LinearVar:
        tag = self._tag
        linear = tuple(isinstance(a, LinearVar) and a._tag is tag for a in args)
        check_linear(prim, linear)
        shape, dtype = abstract_eval(prim, args, params)
        tape = self.tape
        out = tape.new_var(shape, dtype, tag)
        args = tuple(a if flag else tape.held(a) for a, flag in zip(args, linear))
        tape.nodes.append((prim, args, {k: tape.held(v) for k, v in params.items()}, linear,
                           out))
        return out

    def record_combination(self, weights: list, terms: list, ans: Any,
                           nonfinite: bool) -> LinearVar:
        """Record Σ wᵢ·tᵢ — an elementwise rule's tangent — as one node."""
        tape = self.tape
        out = tape.new_var((1,) + tuple(ans.shape), ans.dtype, self._tag)
        params = {"weights": tuple(map(tape.held, weights)),
                  "safe": nonfinite or tape.nan_safe}
        tape.nodes.append((ops.combine, tuple(terms), params, None, out))
        return out

    def __repr__(self) -> str:
        return f"LinearVar(shape={self.shape}, dtype={self.dtype})"

    def __eq__(self, other):  # type: ignore[override]
        raise TypeError("the value of a tangent is unknown in reverse mode; a rule must not "
                        "compare tangents (use a primitive such as dualad.ops.scale)")

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a tangent has no value in reverse mode (it is only recorded); a "
                        "rule must not convert it with np.asarray")


def check_linear(prim: Primitive, linear: tuple[bool, ...]) -> None:
    """Refuse a primitive applied to tangents where it is not linear in them."""
    positions = prim.linear
    if positions is None:
        raise TypeError(f"{prim.name} is not linear, but a tangent rule applied it to a "
                        "tangent; the rule must be linear in the tangents")
    hits = [i for i, flag in enumerate(linear) if flag]
    if positions == "one":
        ok = len(hits) == 1
    elif positions == "all":
        ok = True
    else:
        ok = all(i in positions for i in hits)
    if not ok:
        raise TypeError(f"{prim.name} applied to tangents in arguments {hits} is not linear "
                        "in them")


def abstract_eval(prim: Primitive, args: tuple, params: dict) -> tuple[tuple, np.dtype]:
    """The shape and dtype of ``prim(*args)`` without computing it (tangents that are
    not arrays, recorded or sparsity patterns, stand in as zero-strided zeros)."""
    if prim.shape_rule is not None:
        shape, dtype = prim.shape_rule(*args, **params)
        return tuple(shape), dtype
    dummies = [np.broadcast_to(np.zeros((), a.dtype), a.shape)
               if isinstance(a, TangentOperators) else primal_value(a) for a in args]
    out = prim.impl(*dummies, **params)
    return np.shape(out), out.dtype


# -- the tape run forward (linearize) ---------------------------------------------


def forward(tape: Tape, seeds: dict[int, Any]) -> dict[int, Any]:
    """Run ``tape`` forward from tangents ``{var index: t}`` of its input vars: every
    var's tangent (``(1, *shape)``), each recorded linear primitive applied to the
    values of its vars (what :func:`~dualad.linearize`'s function computes)."""
    tape.check()
    values = dict(seeds)
    for prim, args, params, linear, out in tape.nodes:
        flags = linear if linear is not None else (True,) * len(args)
        value = prim(*(values[a.index] if flag else a for a, flag in zip(args, flags)),
                     **params)
        if np.shape(value) != out.shape:  # broadcasting left it smaller
            value = np.broadcast_to(value, out.shape)
        values[out.index] = value
    return values


# -- the transpose interpreter ----------------------------------------------------


def backward(tape: Tape, seeds: dict[int, Any]) -> dict[int, Any]:
    """Pull cotangents ``{var index: ct}`` back through ``tape``; all var cotangents.

    Each cotangent has a leading axis of B seeds followed by its var's shape.
    """
    tape.check()
    cts = dict(seeds)
    for prim, args, params, linear, out in reversed(tape.nodes):
        ct = cts.pop(out.index, None)
        if ct is None:
            continue
        rule = prim.transpose_rule
        if tape.nan_safe and prim is ops.multiply:
            rule = ops.scale.transpose_rule  # 0 · ∞ = 0 for every product
        for arg, arg_ct in zip(args, rule(ct, args, linear, **params)):
            if arg_ct is None or not isinstance(arg, LinearVar):
                continue
            if arg_ct.dtype != arg.dtype:  # a float64 partial must not promote float32
                arg_ct = ops.convert(arg_ct, dtype=arg.dtype)
            previous = cts.get(arg.index)
            cts[arg.index] = arg_ct if previous is None else previous + arg_ct
    return cts
