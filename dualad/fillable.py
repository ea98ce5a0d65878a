"""Arrays made to be filled: ``out = np.zeros(n); out[0] = x[0] * 2`` while a transform runs.

NumPy's ``ndarray.__setitem__`` takes no protocol: writing a Dual into a float array
asks the Dual for a plain number, which would drop its derivative. So while a
transform runs in a thread, the float (and complex) arrays that the code it runs
makes with ``np.zeros``, ``empty``, ``ones``, ``full``, their ``*_like`` versions,
``eye`` and ``identity`` are :class:`Fillable`: a plain NumPy array until a Dual is
written into it, then that Dual. Where a Dual is written in (an item, a slice, an
in-place operator, a ufunc's ``out=``), the array becomes a Dual of the written
value's transform holding the array's numbers (``np.full_like`` of that value, an
ordinary operation every mode and the replay see), and the write is the Dual's
own. Before that, reading it, indexing it and calling NumPy on it give what NumPy
gives on the array; ``np.asarray(out)`` is the array itself. After it, ``out``
stands for the Dual everywhere: in arithmetic, NumPy's functions, as the
transform's result; converting it to a plain array raises, as a Dual's conversion
does.

A slice of a Fillable taken by basic indexing (``out[1:]``, ``out[0]`` of a
matrix) is a Fillable too, a view: a Dual written into it fills the array it was
taken from. Other views (``out.T``, ``out.reshape(...)``) and the results of
arithmetic on an unfilled Fillable are plain arrays. ``np.empty`` gives zeros
(any content is NumPy's contract; zeros make a replay's recorded constant the same
at every call).

>>> import numpy as np, dualad
>>> def rhs(y):
...     dy = np.zeros(2)
...     dy[0] = y[1]
...     dy[1] = np.sin(y[0]) - y[1]
...     return dy
>>> dualad.jacfwd(rhs)(np.array([0.0, 1.0]))
array([[ 0.,  1.],
       [ 1., -1.]])
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .primitive import TRANSFORMS_RUNNING, Boxed

__all__ = ["Fillable", "resolved", "resolved_tree"]

_ndarray = np.ndarray


class Fillable:
    """A float array made in a transform's code: plain until a Dual is written into it.

    ``value()`` is what it stands for now: the NumPy array, or the Dual it became.
    A view (``out[1:]``) has a ``_root``, the Fillable it was taken from, and
    ``_make``, the function taking that one's value to its own.
    """

    __slots__ = ("_array", "_dual", "_fill", "_root", "_make", "__weakref__")
    __array_priority__ = 1001

    def __init__(self, array: np.ndarray, fill: Any = None) -> None:
        self._array = array
        self._dual = None
        self._fill = fill  # the scalar it was made of (np.full's fill_value), if any
        self._root = None
        self._make = None

    def _view(self, array: np.ndarray, make: Callable[[Any], Any]) -> Fillable:
        view = Fillable(array)
        root = self._root
        if root is None:
            view._root, view._make = self, make
        else:
            outer = self._make
            view._root, view._make = root, lambda value: make(outer(value))
        return view

    def _apparent_class(self) -> type:  # (as a Dual's: see Boxed)
        return Fillable

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return self._apparent_class() if TRANSFORMS_RUNNING else Fillable

    def value(self) -> Any:
        """The NumPy array, or the Dual it became."""
        root = self._root
        if root is None:
            dual = self._dual
            return self._array if dual is None else dual
        dual = root._dual
        return self._array if dual is None else self._make(dual)

    @property
    def filled(self) -> bool:
        """Whether a Dual was written into it (or into the array it views)."""
        return (self if self._root is None else self._root)._dual is not None

    # -- writing ---------------------------------------------------------------------

    def _become(self, like: Boxed) -> None:
        """This array (the root) as a Dual of ``like``'s transform, or of a transform
        nested in that of the Dual it is (writes of an inner transform's Dual)."""
        root = self if self._root is None else self._root
        dual = root._dual
        if dual is None:
            array = root._array
            fill = root._fill
            # the number it was made of while it still holds only that (a float an ODE's
            # t makes is an input of a replay), else its numbers
            constant = fill if fill is not None and array.tobytes() == np.array(
                fill, array.dtype).tobytes() * array.size else array.copy()
            root._dual = np.full_like(like, constant, shape=array.shape, dtype=array.dtype)
        elif like._tag.level > dual._tag.level:
            lifted = np.full_like(like, 0.0, shape=dual.shape, dtype=dual.dtype)
            lifted[...] = dual
            root._dual = lifted

    def __setitem__(self, index: Any, value: Any) -> None:
        if not isinstance(value, Boxed):
            value = _operand(value)
            if not isinstance(value, Boxed):
                root = self if self._root is None else self._root
                (self._array if root._dual is None else self.value())[index] = value
                return
        root = self if self._root is None else self._root
        if root._dual is None or value._tag.level > root._dual._tag.level:
            self._become(value)
        target = self.value()
        if value.dtype != target.dtype:
            value = value.astype(target.dtype)  # as NumPy casts what it writes
        target[index] = value

    def _in_place(self, op: Callable, in_place: Callable, other: Any) -> Fillable:
        other = _operand(other)
        if not isinstance(other, Boxed) and not self.filled:
            in_place(self._array, other)
        else:
            self[...] = op(self.value(), other)
        return self

    def __iadd__(self, other): return self._in_place(operator.add, operator.iadd, other)
    def __isub__(self, other): return self._in_place(operator.sub, operator.isub, other)
    def __imul__(self, other): return self._in_place(operator.mul, operator.imul, other)
    def __itruediv__(self, other):
        return self._in_place(operator.truediv, operator.itruediv, other)
    def __ipow__(self, other): return self._in_place(operator.pow, operator.ipow, other)
    def __imatmul__(self, other):
        return self._in_place(operator.matmul, operator.imatmul, other)
    def __ifloordiv__(self, other):
        return self._in_place(operator.floordiv, operator.ifloordiv, other)
    def __imod__(self, other): return self._in_place(operator.mod, operator.imod, other)

    # -- reading ---------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Any:
        value = self.value()
        item = value[index]
        if value is self._array and type(item) is _ndarray:
            if item.base is not None and np.may_share_memory(item, value):
                return self._view(item, lambda v: v[index])  # out[1:]: a view
            return Fillable(item)  # out[mask]: a copy, as fillable as the array
        return item

    def __getattr__(self, name: str) -> Any:
        return getattr(self.value(), name)

    def copy(self, order: str = "C") -> Any:
        value = self.value()
        return Fillable(value.copy(order)) if value is self._array else value.copy()

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> Any:
        return self.copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.value()
        if value is not self._array:
            return value.__array__(dtype, copy)  # a Dual's conversion: its error
        if dtype is None and not copy:
            return value
        return value.astype(dtype if dtype is not None else value.dtype, copy=bool(copy))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
        from .operands import into_outputs, ufunc_at

        if method == "at" and not kwargs:  # a write into inputs[0]: it may become a Dual
            return ufunc_at(ufunc, *inputs)
        inputs = tuple(resolved(x) for x in inputs)
        out = kwargs.pop("out", None)
        if out is None:
            return getattr(ufunc, method)(*inputs, **kwargs)
        return into_outputs(ufunc, method, inputs, out, kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict):
        first = args[0] if args else None
        args, kwargs = resolved_tree(args), resolved_tree(kwargs)
        result = func(*args, **kwargs)
        if type(first) is Fillable and first.value() is first._array \
                and type(result) is _ndarray and np.may_share_memory(result, first._array):
            rest = args[1:]
            return first._view(result, lambda v: func(v, *rest, **kwargs))
        return result

    def __len__(self) -> int:
        return len(self.value())

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return repr(self.value())

    def __str__(self) -> str:
        return str(self.value())

    def __format__(self, spec: str) -> str:
        return format(self.value(), spec)

    def __bool__(self) -> bool:
        return bool(self.value())

    def __float__(self) -> float:
        return float(self.value())

    def __int__(self) -> int:
        return int(self.value())

    def __complex__(self) -> complex:
        return complex(self.value())

    def __contains__(self, item: Any) -> bool:
        return item in self.value()

    def __reduce__(self) -> tuple:
        return self.value().__reduce__()

    __hash__ = None  # type: ignore[assignment]


def _binary(op: Callable, reflected: bool) -> Callable:
    if reflected:
        return lambda self, other: op(_operand(other), self.value())
    return lambda self, other: op(self.value(), _operand(other))


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "divmod",
              "and", "or", "xor", "lshift", "rshift"):
    _op = divmod if _name == "divmod" else getattr(operator, _name + "_" if _name in (
        "and", "or") else _name)
    setattr(Fillable, f"__{_name}__", _binary(_op, False))
    setattr(Fillable, f"__r{_name}__", _binary(_op, True))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Fillable, f"__{_name}__", _binary(getattr(operator, _name), False))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(Fillable, f"__{_name}__",
            (lambda op: lambda self: op(self.value()))(getattr(operator, _name)))
del _name, _op


def resolved(x: Any) -> Any:
    """``x``, or what it stands for if it is a :class:`Fillable`."""
    return x.value() if type(x) is Fillable else x


def resolved_tree(x: Any) -> Any:
    """``x`` with every :class:`Fillable` in its lists, tuples and dicts resolved."""
    kind = type(x)
    if kind is Fillable:
        return x.value()
    if kind is list or kind is tuple:
        return kind(resolved_tree(item) for item in x)
    if kind is dict:
        return {key: resolved_tree(item) for key, item in x.items()}
    return x


def holds_fillable(x: Any) -> bool:
    kind = type(x)
    if kind is Fillable:
        return True
    if kind is list or kind is tuple:
        return any(holds_fillable(item) for item in x)
    if kind is dict:
        return any(holds_fillable(item) for item in x.values())
    return False


def _operand(value: Any) -> Any:
    """A value written or combined, as NumPy reads it: a Fillable as its value, a list
    holding a Dual as one Dual."""
    from .operands import written_value  # (operands imports this module)

    return written_value(value)
