"""Sparsity patterns as tangents: which inputs each element depends on.

Pattern detection is forward mode with another kind of tangent. The input
``x`` becomes a Dual whose tangent is a :class:`PatternVar`: instead of
numbers, it holds one row per element listing the input elements that element
depends on (a boolean ``scipy.sparse`` CSR array of shape ``(size, n)``; the
identity for ``x`` itself). The user's function then runs unmodified, and
every rule of the table runs exactly as for numbers: an elementwise row's
tangent Σ ∂ᵢ·tᵢ becomes the union of the rows of the ``tᵢ``, and a jvp rule,
linear in its tangents, applies linear primitives to them, each of which has
a pattern rule here:

* a gather (reshape, transpose, broadcast, indexing, concatenation) runs its
  own NumPy kernel on arrays of row numbers, then picks those rows;
* a reduction (sum, cumsum) and a product (matmul, einsum, a constant
  scipy.sparse operator's) unite the rows that meet in each output element;
* anything else linear (solves, a user primitive declared ``pattern="dense"``)
  makes every output element depend on every input element.

The *global* pattern holds for every ``x``: products ignore the values of
their factors (unless the factor is a :class:`Constant`, which does not
depend on ``x``), ``where`` unites both branches, and values computed from
``x`` (its own, comparisons, ``argmax``) are :class:`Varying` arrays, which
refuse to steer the user's control flow and make an index computed from them
gather from everywhere (:mod:`~dualad.sparse.detection` adds a second opinion
for what the mark cannot follow). The *local* pattern (``local=True``) is the
pattern at ``x``: a product with a zero factor, or the branch ``where`` did
not take, contributes nothing.
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any

import numpy as np

from ..dual import Dual
from ..tangents import elementwise_jvp
from ..primitive import Boxed, Primitive, Tag
from ..linear import TangentOperators, abstract_eval
from ..rules import complex_numbers as _complex
from ..rules import elementwise as _elementwise
from ..rules import linalg as _linalg
from ..rules import reductions as _reductions
from ..rules import scipy_sparse as _scipy_sparse
from ..rules import shape as _shape
from . import rows as _rows

__all__ = ["PatternTag", "PatternVar", "Varying", "ValueDependentError"]


class ValueDependentError(TypeError):
    """Global sparsity detection found a pattern that depends on the values of ``x``."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (
            "the function converts a value computed from x to a Python bool, int or float "
            "(an if, a loop bound, int(...)), so its sparsity pattern may differ from one x "
            "to another. Write the branch with np.where (both branches then count), or "
            "detect the pattern at this x only with local=True."))


class Varying(np.ndarray):
    """A plain array computed from the input during global pattern detection.

    Its values hold at this ``x`` only: converting it to a Python scalar (a
    branch, a loop bound) in the user's code raises
    :class:`ValueDependentError`, and an index made from it gathers from every
    element. A rule of the table may branch on it (to pick a formula).
    """

    __array_priority__ = 2.0  # above Constant's: Constant·Varying is Varying

    def __bool__(self) -> bool:
        return bool(_in_rule(self).item())

    def __int__(self) -> int:
        return int(_in_rule(self).item())

    def __float__(self) -> float:
        return float(_in_rule(self).item())

    def __index__(self) -> int:
        return _in_rule(self).item().__index__()

    def __complex__(self) -> complex:
        return complex(_in_rule(self).item())

    def __array_function__(self, func, types, args, kwargs):
        # np.argmax(v) returns a NumPy scalar, which would shed the mark: keep it
        return _marked(super().__array_function__(func, types, args, kwargs))


def _marked(result: Any) -> Any:
    if isinstance(result, (tuple, list)):
        marked = [_marked(r) for r in result]
        return type(result)(*marked) if hasattr(result, "_fields") else type(result)(marked)
    return varying(result)


#: Modules that only pass a conversion on: the frame that asked for it is further out.
_PASSING = ("numpy", "scipy", "dualad.dual", "dualad.operands", "dualad.primitive",
            "dualad.sparse")


#: The detection running in this thread (or task), to note its doubts.
DETECTING: contextvars.ContextVar[PatternTag | None] = contextvars.ContextVar(
    "dualad_sparse_detecting", default=None)


def doubt() -> None:
    """Note that the pattern being detected may hold at this x only: a plain value
    derived from x by a rule may decide which elements are read (an index, a zero).
    Detection then asks for a second opinion (:mod:`dualad.sparse.detection`)."""
    tag = DETECTING.get()
    if tag is not None:
        tag.doubts = True


def _in_rule(value: Varying) -> np.ndarray:
    """``value`` as a plain array if the conversion comes from a rule of dualad
    (through NumPy or SciPy code); ValueDependentError if from the user's code."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not any(module == p or module.startswith(p + ".") for p in _PASSING):
            if module.split(".")[0] == "dualad":
                doubt()
                return value.view(np.ndarray)
            raise ValueDependentError()
        frame = frame.f_back
    raise ValueDependentError()


class Constant(np.ndarray):
    """A plain array that does not depend on the input, during global detection: its
    zeros are zeros for every x (a product with it, a ``where`` on it, a matrix of
    it). Computed with a :class:`Varying` value, the result is Varying."""

    __array_priority__ = 1.0


def varying(value: Any) -> Any:
    """``value`` as a :class:`Varying` array (numbers and arrays; others unchanged)."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != object:
        return np.asarray(value).view(Varying)
    return value


def constant(value: Any) -> Any:
    """A plain ``value`` (not Varying) as a :class:`Constant` array."""
    if type(value) in (np.ndarray, Constant) or isinstance(value, np.generic):
        return np.asarray(value).view(Constant) if value.dtype != object else value
    return value


def known_zeros(tag: PatternTag, value: Any) -> bool:
    """Whether the zeros of ``value`` (a weight, a factor, a condition) may drop
    dependencies: any array at the local point, a :class:`Constant` globally (a
    rule's plain value could come from x: dropping by it is a doubt)."""
    if tag.local:
        return isinstance(value, (np.ndarray, np.generic))
    if isinstance(value, Constant):
        doubt()
        return True
    return False


def holds_varying(value: Any) -> bool:
    if isinstance(value, Varying):
        return True
    if isinstance(value, (tuple, list)):
        return any(holds_varying(v) for v in value)
    return False


class PatternTag(Tag):
    """The tag of one pattern detection; its Duals carry :class:`PatternVar` tangents."""

    __slots__ = ("local", "n", "opaque_values", "doubts")
    interprets = True

    def __init__(self, n: int, local: bool) -> None:
        super().__init__()
        self.n = n
        self.local = local
        self.opaque_values = not local
        self.doubts = False  # see doubt()

    @staticmethod
    def opaque(value: Any) -> Any:
        return varying(value)

    def process(self, box: Dual, prim: Primitive, primals: list, tangents: list, ans: Any,
                params: dict) -> Any:
        """A Dual of this tag meets ``prim``: its tangent is a pattern, from the rule."""
        if prim.partials is None and prim.jvp_rule is None:  # piecewise constant
            return ans if self.local else varying(ans)
        if prim.pattern == "dense":
            return box._wrap(ans, dense_like(ans, tangents, self))
        value = ans
        if not self.local:  # what the rule computes from x varies; the rest is constant
            primals = [constant(p) if t is None else varying(p)
                       for p, t in zip(primals, tangents)]
            value = varying(ans)
        if prim.partials is not None:
            if self.local or any(isinstance(p, Constant) for p in primals):
                t_out = elementwise_jvp(prim, primals, tangents, value)
            else:  # no weight can drop a dependency: the union, without the partials
                terms = [t for t, partial in zip(tangents, prim.partials)
                         if t is not None and partial is not None]
                t_out = terms[0].record_combination([None] * len(terms), terms, value,
                                                    False) if terms else None
        else:
            try:
                t_out = prim.jvp_rule(primals, tangents, value, **params)
            except ValueDependentError:  # a user's rule branches on x: all outputs on all inputs
                t_out = dense_like(ans, tangents, self)
        if t_out is None:
            return ans
        if isinstance(t_out, PatternVar):
            t_out = PatternVar(t_out.rows, t_out.shape, ans.dtype, self)
        return box._wrap(ans, t_out)


class PatternVar(TangentOperators, Boxed):
    """A tangent that holds, for each element, the set of inputs it depends on.

    ``shape`` includes the leading seed axis (of length 1), as a tangent's
    does; ``rows`` is a boolean CSR array with one row per element (in C
    order) and one column per input element.
    """

    __slots__ = ("rows", "shape", "dtype", "_tag")
    records_linear = True

    def __init__(self, rows: Any, shape: tuple, dtype: Any, tag: PatternTag) -> None:
        self.rows = rows
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._tag = tag

    def __repr__(self) -> str:
        return f"PatternVar(shape={self.shape}, nnz={self.rows.nnz})"

    def _process(self, prim: Primitive, args: tuple, params: dict) -> PatternVar:
        tag = self._tag
        shape, dtype = abstract_eval(prim, args, params)
        rule = PATTERN_RULES.get(prim)
        if rule is not None:
            rows = rule(tag, args, params, shape)
        elif prim.partials is not None:  # elementwise: the union over its arguments
            rows = _elementwise_union(tag, args, [None] * len(args), shape)
        else:  # linear in a way we know nothing more about
            rows = _dense_rows(tag, args, shape)
        return PatternVar(rows, shape, dtype, tag)

    def record_combination(self, weights: list, terms: list, ans: Any,
                           nonfinite: bool) -> PatternVar:
        """Σ wᵢ·tᵢ, an elementwise rule's tangent: the union of the terms' rows."""
        shape = (1,) + tuple(np.shape(ans))
        rows = _elementwise_union(self._tag, terms, weights, shape, tangents=True)
        return PatternVar(rows, shape, ans.dtype, self._tag)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a sparsity pattern has no values; a tangent rule must not convert "
                        "its tangent with np.asarray")


# -- helpers ----------------------------------------------------------------------


def _numbered(args: tuple, tag: PatternTag) -> tuple[list, Any]:
    """Each pattern argument as an array of row numbers of the stacked rows; -1 elsewhere."""
    numbers, stacked, start = [], [], 0
    for a in args:
        if isinstance(a, PatternVar) and a._tag is tag:
            numbers.append(np.arange(start, start + a.size).reshape(a.shape))
            stacked.append(a.rows)
            start += a.size
        else:
            numbers.append(np.broadcast_to(np.int64(-1), np.shape(a)))
    return numbers, _rows.vstack(stacked, tag.n)


def _elementwise_union(tag: PatternTag, args: list, weights: list, shape: tuple,
                       tangents: bool = False) -> Any:
    """Rows of an elementwise result: each element unites its arguments' elements
    (broadcast); locally, an argument whose weight is zero there adds nothing.

    With ``tangents``, the arguments are tangents whose missing axes go after the
    seed axis (the layout of :func:`~dualad.dual.align_tangent`) and the weights
    have the primal's shape; otherwise everything broadcasts as NumPy does.
    """
    parts = []
    for a, weight in zip(args, weights):
        if not isinstance(a, PatternVar) or a._tag is not tag:
            continue
        masked = known_zeros(tag, weight)
        if a.shape == tuple(shape) and not masked:
            parts.append(a.rows)
            continue
        number = np.arange(a.size).reshape(a.shape)
        if tangents:
            number = _aligned(number, len(shape))
        number = np.broadcast_to(number, shape)
        if masked:
            number = np.where(np.broadcast_to(weight != 0, shape[1:] if tangents else shape),
                              number, -1)
        parts.append(_rows.gather(a.rows, number))
    return _rows.union(parts)


def _aligned(a: Any, ndim: int) -> Any:
    """``a`` with unit axes after its first so it has ``ndim`` axes (a tangent's layout)."""
    a = np.asarray(a)
    missing = ndim - a.ndim
    if missing <= 0 or a.ndim == 0:
        return a
    return a.reshape(a.shape[:1] + (1,) * missing + a.shape[1:])


def _dense_rows(tag: PatternTag, args: tuple, shape: tuple) -> Any:
    """Every element of the result depends on every element the arguments depend on."""
    _, stacked = _numbered(args, tag)
    return _rows.broadcast_row(_rows.union_all(stacked), int(np.prod(shape, dtype=np.int64)))


def dense_like(ans: Any, tangents: list, tag: PatternTag) -> PatternVar | None:
    """The tangent of a primitive whose every output depends on every input."""
    live = [t for t in tangents if isinstance(t, PatternVar)]
    if not live:
        return None
    shape = (1,) + tuple(np.shape(ans))
    return PatternVar(_dense_rows(tag, tuple(live), shape), shape, ans.dtype, tag)


# -- the pattern rules of the linear primitives ------------------------------------------


def _kernel_gather(kernel):
    def rule(tag: PatternTag, args: tuple, params: dict, shape: tuple) -> Any:
        if holds_varying(list(params.values())):  # an index computed from x's values
            return _dense_rows(tag, args, shape)
        numbers, stacked = _numbered(args, tag)
        picked = np.asarray(kernel(*numbers, **params))
        return _rows.union_gather(stacked, [picked.reshape(shape)])
    return rule


def _unknown_positions(index: tuple, ndim: int) -> tuple[tuple, tuple] | None:
    """For an index holding integer arrays computed from x's values (a sort's order):
    the axes they index, and the index with them replaced by zeros. None if a mask
    computed from x's values (the output's shape would depend on them) is among them."""
    index = _shape._expand_ellipsis(index, ndim)
    axes, fixed, axis = [], [], 0
    for part in index:
        if part is None:
            fixed.append(None)
            continue
        if isinstance(part, Varying):
            if part.dtype == bool:
                return None
            axes.append(axis)
            part = np.zeros(part.shape, np.intp)
        fixed.append(part)
        axis += part.ndim if isinstance(part, np.ndarray) and part.dtype == bool else 1
    return tuple(axes), tuple(fixed)


def _advanced(index: tuple) -> bool:
    return any(isinstance(part, np.ndarray) for part in index)


def _keep_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _getitem_rule(tag, args, params, shape):
    """Indexing; an index computed from x's values (a sort's order) may pick any element
    along the axes it indexes: each output element unites them (a reduction first)."""
    x, index = args[0], params["index"]
    if not holds_varying(index):
        if _advanced(index):  # plain index arrays: the user's constants, or a rule's
            doubt()
        return _gathers[_shape.getitem](tag, args, params, shape)
    unknown = _unknown_positions(index, x.ndim)
    if unknown is None:
        return _dense_rows(tag, args, shape)
    axes, fixed = unknown
    kept = _keep_shape(x.shape, axes)
    lines = _reduce_axes(x.rows, x.shape, axes)
    picked = np.arange(lines.shape[0]).reshape(kept)[fixed]
    return _rows.gather(lines, np.broadcast_to(picked, shape))


def _reduce_axes(rows, shape: tuple, axes: tuple):
    """Rows of ``x`` united along ``axes`` (kept with length 1)."""
    kept = _keep_shape(shape, axes)
    count = int(np.prod(kept, dtype=np.int64))
    groups = np.broadcast_to(np.arange(count).reshape(kept), shape)
    return _rows.reduce(rows, groups.ravel(), count)


def _product_rule(tag, args, params, shape):
    """x·y linear in one factor: locally, a zero of the other factor drops the element."""
    x, y = args
    weights = [y, None] if isinstance(x, PatternVar) else [None, x]
    return _elementwise_union(tag, args, weights, shape)


def _same_rows(tag, args, params, shape):
    """An elementwise map of one tangent (a dtype conversion, real, imag, conj)."""
    return args[0].rows


def _where_rule(tag, args, params, shape):
    numbers, stacked = _numbered(args, tag)
    x, y = (np.broadcast_to(number, shape) for number in numbers[1:])
    if not known_zeros(tag, args[0]):
        return _rows.union_gather(stacked, [x, y])
    cond = np.broadcast_to(np.asarray(args[0]), shape)
    return _rows.union_gather(stacked, [np.where(cond, x, y)])


def _sum_rule(tag, args, params, shape):
    x, axis = args[0], params["axis"]
    axes = tuple(range(x.ndim)) if axis is None else tuple(
        a % x.ndim for a in np.atleast_1d(axis))
    return _reduce_axes(x.rows, x.shape, axes)  # C order with or without the kept axes


def _cumsum_rule(tag, args, params, shape):
    x = args[0]
    axis = params["axis"] % x.ndim
    before = int(np.prod(x.shape[:axis], dtype=np.int64))
    length, after = x.shape[axis], int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    out_at, in_at = np.tril_indices(length)
    grid = np.arange(x.size).reshape(before, length, after)
    outs = grid[:, out_at, :].ravel()
    ins = grid[:, in_at, :].ravel()
    return _rows.combine(x.rows, outs, ins, x.size)


def _index_add_rule(tag, args, params, shape):
    """A scatter-add (the transpose of indexing). At positions computed from x's values,
    each value may land anywhere along the axes they index."""
    v, index = args[0], params["index"]
    size = int(np.prod(shape, dtype=np.int64))
    if _advanced(index) and not holds_varying(index):
        doubt()
    if holds_varying(index):
        unknown = _unknown_positions(index, len(shape))
        if unknown is None:
            return _dense_rows(tag, args, shape)
        axes, index = unknown
        kept = _keep_shape(shape, axes)
        places = np.arange(int(np.prod(kept, dtype=np.int64))).reshape(kept)[index]
        lines = _rows.combine(v.rows, np.broadcast_to(places, v.shape).ravel(),
                              np.arange(v.size), int(np.prod(kept, dtype=np.int64)))
        spread = np.broadcast_to(np.arange(lines.shape[0]).reshape(kept), shape)
        return _rows.gather(lines, spread)
    if _shape._is_basic(index):  # no element repeats: a gather backwards
        target = np.asarray(_shape.index_add.kernels["numpy"](
            np.arange(1, v.size + 1).reshape(v.shape), **params))
        return _rows.gather(v.rows, target.ravel() - 1)
    places = np.arange(size).reshape(shape)[index]  # advanced: may repeat
    places = np.broadcast_to(places, v.shape).ravel()
    return _rows.combine(v.rows, places, np.arange(v.size), size)


def _einsum_rule(tag, args, params, shape):
    return _contraction(tag, args, *_linalg._parse_subscripts(params["subscripts"], args), shape)


def _matmul_rule(tag, args, params, shape):
    x, y = args
    ex, ey = np.ndim(x) if not isinstance(x, PatternVar) else x.ndim, \
        np.ndim(y) if not isinstance(y, PatternVar) else y.ndim
    batch = "abcdefghijklmnop"
    if ex == 1 and ey == 1:
        terms, out = ["z", "z"], ""
    elif ex == 1:
        b = batch[:ey - 2]
        terms, out = ["z", b + "zk"], b + "k"
    elif ey == 1:
        b = batch[:ex - 2]
        terms, out = [b + "iz", "z"], b + "i"
    else:
        nb = max(ex, ey) - 2
        b = batch[:nb]
        terms, out = [b[nb - (ex - 2):] + "iz", b[nb - (ey - 2):] + "zk"], b + "ik"
    return _contraction(tag, args, terms, out, shape)


def _sparse_product_rule(tag, args, params, shape):
    """A constant scipy.sparse A @ x: output (…, i, …) unites the inputs (…, j, …) of
    A's nonzeros (i, j), the leading and trailing axes carried along."""
    x, matrix, core = args[0], params["matrix"], params["core"]
    entries = matrix.tocoo()
    nonzero = entries.data != 0  # (A is a constant: its zeros hold at every x)
    i, j = entries.row[nonzero][None, :, None], entries.col[nonzero][None, :, None]
    lead = int(np.prod(x.shape[:x.ndim - core], dtype=np.int64))
    rest = int(np.prod(x.shape[x.ndim - core + 1:], dtype=np.int64))
    m, n = matrix.shape
    at = np.arange(lead)[:, None, None]
    trailing = np.arange(rest)[None, None, :]
    return _rows.combine(x.rows, ((at * m + i) * rest + trailing).ravel(),
                         ((at * n + j) * rest + trailing).ravel(), lead * m * rest)


def _contraction(tag, args, terms, output, shape):
    """Rows of an einsum linear in one operand: output element o depends on operand
    element t where they agree on their shared letters (and, locally, where the other
    operands are nonzero for some value of the summed letters)."""
    at = next(i for i, a in enumerate(args) if isinstance(a, PatternVar))
    operand = args[at]
    shapes = [a.shape if isinstance(a, PatternVar) else np.shape(a) for a in args]
    letters = _expand_ellipses(terms, output, shapes)
    terms, output = letters
    sizes = {}
    for term, s in zip(terms, shapes):
        for letter, n in zip(term, s):
            sizes[letter] = max(sizes.get(letter, 1), n)
    grid = sorted(set(terms[at]) | set(output), key=lambda c: (c not in output, c))
    dims = [sizes[c] for c in grid]
    axes = {c: k for k, c in enumerate(grid)}

    def index_on_grid(term, s):
        ids = np.arange(int(np.prod(s, dtype=np.int64))).reshape(s) if s else np.array(0)
        # walk the term's letters: a repeated letter takes the diagonal
        view = _on_grid(ids, term, s, axes, dims)
        return view

    outs = index_on_grid(output, tuple(shape))
    ins = index_on_grid(terms[at], tuple(shapes[at]))
    keep = np.ones(dims, bool)
    others = [(np.asarray(a) != 0).astype(np.float64) for i, a in enumerate(args)
              if i != at and known_zeros(tag, a)]
    other_terms = [t for i, t in enumerate(terms) if i != at and known_zeros(tag, args[i])]
    if others:
        seen = [c for c in grid if any(c in t for t in other_terms)]
        mask = np.einsum(",".join(other_terms) + "->" + "".join(seen), *others) > 0
        keep = mask.reshape([mask.shape[seen.index(c)] if c in seen else 1 for c in grid])
    keep = np.broadcast_to(keep, dims)
    outs, ins = np.broadcast_to(outs, dims)[keep], np.broadcast_to(ins, dims)[keep]
    return _rows.combine(operand.rows, outs, ins, int(np.prod(shape, dtype=np.int64)))


def _on_grid(ids, term, s, axes, dims):
    """``ids`` (an array with one axis per letter of ``term``) laid out on the grid's axes."""
    for letter in set(term):
        spots = [k for k, c in enumerate(term) if c == letter]
        if len(spots) > 1:  # a repeated letter: its diagonal
            ids = np.diagonal(ids, axis1=spots[0], axis2=spots[1])
            term = "".join(c for k, c in enumerate(term) if k not in spots[:2]) + letter
            return _on_grid(ids, term, ids.shape, axes, dims)
    order = sorted(range(len(term)), key=lambda k: axes[term[k]])
    ids = np.transpose(ids, order) if len(term) else ids
    placed = [1] * len(dims)
    for k in order:
        placed[axes[term[k]]] = ids.shape[order.index(k)]
    return ids.reshape(placed)


def _expand_ellipses(terms, output, shapes):
    """Subscripts with '...' replaced by fresh letters, aligned on the right as NumPy does."""
    used = set("".join(terms) + output)
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    width = max([len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t] + [0])
    dots = "".join(fresh[:width])
    new_terms = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - len(t.replace("...", ""))
            t = t.replace("...", dots[width - k:])
        new_terms.append(t)
    return new_terms, output.replace("...", dots)


_gathers = {prim: _kernel_gather(prim.kernels["numpy"]) for prim in (
    _shape.reshape, _shape.transpose, _shape.broadcast_to, _shape.getitem, _shape.concatenate)}

PATTERN_RULES = {
    **_gathers,
    _shape.getitem: _getitem_rule,
    _shape.index_add: _index_add_rule,
    _elementwise.convert: _same_rows,
    _elementwise.conjugate: _same_rows,
    _complex.real: _same_rows,
    _complex.imag: _same_rows,
    _elementwise.multiply: _product_rule,
    _elementwise.scale: _product_rule,
    _elementwise.where: _where_rule,
    _reductions.sum_: _sum_rule,
    _reductions.cumsum: _cumsum_rule,
    _linalg.matmul: _matmul_rule,
    _linalg.einsum: _einsum_rule,
    _scipy_sparse.sparse_matmul: _sparse_product_rule,
}
