"""Recording the NumPy calls of one transform call.

:class:`Traced` is an ndarray subclass that stands for one *register* of a
program being recorded. Every NumPy call that meets a Traced array (a ufunc,
a function with ``__array_function__``, an ndarray method or operator) runs on
the plain values and is appended to its :class:`Recorder` as one operation;
its results are Traced again. Values that never meet a Traced array are
constants of the program: the seeds of a Jacobian, a rule's literals, an
array the function builds from shapes. That is constant folding for free.

Whatever turns a Traced value into Python (``bool``, ``float``, ``int``,
``.item()``, a function returning a Python number) becomes a *guard*: the
replay checks it still has the recorded value, so a replay never follows a
branch that the recording did not take. What cannot be recorded (a view taken
by a NumPy internal, a buffer handed to C code) raises :class:`Unrecordable`,
and the call is left to the interpreter.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .operations import Operation, Register, errstate_object
from .poison import poisoned
from .templates import bits, sparse_parts

__all__ = ["Traced", "Recorder", "Unrecordable"]


class Unrecordable(BaseException):
    """This call cannot be recorded; the transform runs the interpreter.

    A BaseException, so that a function's own ``except Exception`` does not
    swallow it and go on with a recording that is already wrong.
    """


#: NumPy functions whose result depends only on shapes and dtypes, fixed by
#: the recording's signature: their values are constants, with no guard.
STATIC_FUNCTIONS = frozenset({
    np.shape, np.ndim, np.size, np.result_type, np.can_cast, np.iscomplexobj,
    np.isrealobj, np.min_scalar_type, np.broadcast_shapes,
})

#: ndarray methods recorded as operations; the others are static attributes
#: (shape, dtype, ...) or leave the recording (see ``_UNRECORDABLE``).
RECORDED_METHODS = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "byteswap",
    "choose", "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum",
    "diagonal", "dot", "fill", "flatten", "getfield", "item", "max", "mean", "min",
    "nonzero", "partition", "prod", "put", "ravel", "repeat", "reshape", "resize", "round",
    "searchsorted", "setfield", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "tobytes", "tolist", "trace", "transpose", "var", "__getitem__", "__setitem__",
    "__copy__", "__deepcopy__", "__contains__", "__array__",
)
#: Methods that write into their array: the operation is never dropped.
MUTATING_METHODS = frozenset({"fill", "put", "resize", "sort", "partition", "setfield",
                              "__setitem__", "byteswap"})
#: Methods whose result shape depends on the values: the replay checks it.
VALUE_SHAPED_METHODS = frozenset({"nonzero", "compress", "__getitem__"})
_UNRECORDABLE = ("base", "data", "ctypes", "flat", "__array_interface__",
                 "__array_struct__", "dump", "dumps", "tofile", "__reduce__",
                 "__reduce_ex__", "__dlpack__", "setflags", "to_device")


class Traced(np.ndarray):
    """A register of a program being recorded (see the module docstring)."""

    def __array_finalize__(self, obj: Any) -> None:
        # A view NumPy made itself (not through a recorded call): no register.
        self._recorder = getattr(obj, "_recorder", None)
        self._slot = None
        self._value = None

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
        if not _only_arrays(inputs) or not _only_arrays(kwargs.get("out", ())):
            return NotImplemented  # a Dual (or another box) among them interprets the call
        if any(type(x) is np.ndarray and x.dtype.hasobject for x in inputs):
            # np.array([d1, d2]) * t: NumPy's object loop applies the elements' own
            # operators (recorded there) to t itself, held in an object array.
            held = tuple(_held(x) if type(x) is TracedFloat else x for x in inputs)
            return getattr(ufunc, method)(*held, **kwargs)
        recorder = _recorder_of(inputs, kwargs)
        call = ufunc if method == "__call__" else getattr(ufunc, method)
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        by_operator, recorder.operator_call = recorder.operator_call, None
        return recorder.call(call, inputs, kwargs, name=name,
                             mutates=_writes_out(kwargs) or method == "at",
                             operator=by_operator is not None and by_operator[0] is ufunc
                             and len(by_operator[1]) == len(inputs)
                             and all(a is b for a, b in zip(by_operator[1], inputs)))

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict):
        if not all(issubclass(t, (np.ndarray, TracedFloat)) for t in types):
            return NotImplemented
        recorder = _recorder_of(args, kwargs)
        if func in STATIC_FUNCTIONS or (func is np.may_share_memory
                                        and recorder.overlap_is_fixed(args, kwargs)):
            return func(*_values(args), **_values(kwargs))
        return recorder.call(func, args, kwargs, name=getattr(func, "__name__", "f"),
                             mutates=func in MUTATING_FUNCTIONS or _writes_out(kwargs),
                             value_shaped=func not in SHAPE_STATIC_FUNCTIONS)

    # Python's operators: NumPy calls the ufunc, recorded as called by an operator.
    def __add__(self, other: Any) -> Any: return _by_operator(np.add, self, other)
    def __radd__(self, other: Any) -> Any: return _by_operator(np.add, other, self)
    def __sub__(self, other: Any) -> Any: return _by_operator(np.subtract, self, other)
    def __rsub__(self, other: Any) -> Any: return _by_operator(np.subtract, other, self)
    def __mul__(self, other: Any) -> Any: return _by_operator(np.multiply, self, other)
    def __rmul__(self, other: Any) -> Any: return _by_operator(np.multiply, other, self)
    def __truediv__(self, other: Any) -> Any:
        return _by_operator(np.true_divide, self, other)
    def __rtruediv__(self, other: Any) -> Any:
        return _by_operator(np.true_divide, other, self)
    def __neg__(self) -> Any: return _by_operator(np.negative, self)

    # Conversions to Python: the value is guarded.
    def __bool__(self) -> bool: return self._recorder.call(bool, (self,), {}, name="bool")
    def __float__(self) -> float: return self._recorder.call(float, (self,), {}, name="float")
    def __int__(self) -> int: return self._recorder.call(int, (self,), {}, name="int")
    def __complex__(self) -> complex:
        return self._recorder.call(complex, (self,), {}, name="complex")
    def __index__(self) -> int:
        return self._recorder.call(operator.index, (self,), {}, name="index")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    @property
    def T(self) -> Any:
        return self._recorder.call(np.transpose, (self,), {}, name="T")

    @property
    def mT(self) -> Any:
        return self._recorder.call(np.matrix_transpose, (self,), {}, name="mT")

    @property
    def real(self) -> Any:
        return self._recorder.call(np.real, (self,), {}, name="real")

    @property
    def imag(self) -> Any:
        return self._recorder.call(np.imag, (self,), {}, name="imag")

    def view(self, *args: Any, **kwargs: Any) -> Any:
        return self._recorder.call(np.ndarray.view, (self,) + args, kwargs, name="view",
                                   method=True)

    __hash__ = None  # type: ignore[assignment]


def _by_operator(ufunc: np.ufunc, *inputs: Any) -> Any:
    """``ufunc(*inputs)`` as ndarray's operator calls it, noted for the recorder (an
    operand with its own operator, a Dual, answers it through NumPy's protocol)."""
    if all(type(x) in _OPERANDS or isinstance(x, np.generic) for x in inputs) and not any(
            isinstance(x, np.ndarray) and x.dtype.hasobject for x in inputs):
        # What the operator's call of the ufunc comes to (Traced.__array_ufunc__), at once.
        return _recorder_of(inputs, {}).call(ufunc, inputs, {}, name=ufunc.__name__,
                                             operator=True)
    recorder = next(x._recorder for x in inputs if type(x) is Traced)
    recorder.operator_call = (ufunc, inputs)
    try:
        if len(inputs) == 1:
            return np.ndarray.__neg__(inputs[0])
        if type(inputs[0]) is Traced:
            return _BINARY[ufunc](*inputs)
        return _REFLECTED[ufunc](inputs[1], inputs[0])
    finally:
        recorder.operator_call = None


#: Operand types whose operators defer to nothing: ndarray's operator calls the ufunc.
_OPERANDS = frozenset({np.ndarray, float, int, bool, complex})

_BINARY = {np.add: np.ndarray.__add__, np.subtract: np.ndarray.__sub__,
           np.multiply: np.ndarray.__mul__, np.true_divide: np.ndarray.__truediv__}
_REFLECTED = {np.add: np.ndarray.__radd__, np.subtract: np.ndarray.__rsub__,
              np.multiply: np.ndarray.__rmul__, np.true_divide: np.ndarray.__rtruediv__}


def _method(name: str) -> Callable:
    def unbound(value: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(value, name)(*args, **kwargs)  # an array's, or a NumPy scalar's

    unbound.__name__ = name

    def method(self, *args: Any, **kwargs: Any) -> Any:
        value_shaped = name in VALUE_SHAPED_METHODS and (
            name != "__getitem__" or _masks(args[0]))
        return self._recorder.call(unbound, (self,) + args, kwargs, name=name, method=True,
                                   mutates=name in MUTATING_METHODS,
                                   value_shaped=value_shaped)

    method.__name__ = name
    return method


def _basic(index: Any) -> bool:
    """Whether an index is NumPy's basic indexing (ints, slices of ints, None and
    Ellipsis): its result is always a view, in the same place of its array."""
    for item in index if type(index) is tuple else (index,):
        kind = type(item)
        if kind is slice:
            if not all(v is None or type(v) is int for v in (item.start, item.stop, item.step)):
                return False
        elif not (kind is int or item is None or item is Ellipsis):
            return False
    return True


def _masks(index: Any) -> bool:
    """Whether an index holds a boolean mask (its result's shape depends on values)."""
    items = index if type(index) is tuple else (index,)
    for item in items:
        if isinstance(item, np.ndarray) and item.dtype.kind == "b":
            return True
        if type(item) is list and any(type(v) is bool or isinstance(v, (list, np.ndarray))
                                      for v in item):
            return True
    return False


def _refuse(name: str) -> Any:
    def refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise Unrecordable(f"ndarray.{name} of a recorded value")

    # Attributes (base, data, flat, ...) are refused on reading, methods on calling.
    return refuse if callable(getattr(np.ndarray, name)) else property(refuse)


for _name in RECORDED_METHODS:
    setattr(Traced, _name, _method(_name))
for _name in _UNRECORDABLE:
    setattr(Traced, _name, _refuse(_name))
del _name

class TracedFloat(float):
    """A Python float argument being recorded (an ODE right-hand side's ``t``).

    To the function it is a float; its arithmetic, comparisons and NumPy calls are
    recorded (comparisons and conversions as guards), and its results are
    TracedFloats again. What reads the float without asking (``math.sin(t)``,
    ``np.float64(t)``) reads its own value: in the poisoned twin recording that is
    another number, so such a read shows up and the call keeps the interpreter.
    """

    __slots__ = ("_recorder", "_slot", "_value")

    def __new__(cls, shown: float, recorder: Recorder, slot: int, value: float) -> TracedFloat:
        self = float.__new__(cls, shown)
        self._recorder, self._slot, self._value = recorder, slot, value
        return self

    __array_ufunc__ = Traced.__array_ufunc__
    __array_function__ = Traced.__array_function__

    def __float__(self) -> float:
        return self._recorder.call(float, (self,), {}, name="float")

    def __int__(self) -> int:
        return self._recorder.call(int, (self,), {}, name="int")

    def __bool__(self) -> bool:
        return self._recorder.call(bool, (self,), {}, name="bool")

    def __round__(self, ndigits: int | None = None) -> Any:
        return self._recorder.call(round, (self, ndigits), {}, name="round")

    __hash__ = float.__hash__


def _float_method(name: str, unary: bool = False) -> Callable:
    operation = getattr(operator, name.strip("_").removeprefix("r"), None) \
        if name.startswith("__r") and name not in ("__round__",) else None
    forward = getattr(operator, name.strip("_"), None)
    reflected = name.startswith("__r")

    def method(self, other: Any = None) -> Any:
        if unary:
            return self._recorder.call(forward, (self,), {}, name=name, float_result=True)
        if type(other) not in (float, int, TracedFloat):
            return NotImplemented  # an array, a NumPy scalar, a Dual: theirs to say
        args = (other, self) if reflected else (self, other)
        comparison = name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
        return self._recorder.call(operation if reflected else forward, args, {}, name=name,
                                   float_result=not comparison)

    method.__name__ = name
    return method


for _name in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
              "__pow__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__",
              "__rmod__", "__rpow__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
              "__ge__"):
    setattr(TracedFloat, _name, _float_method(_name))
for _name in ("__neg__", "__pos__", "__abs__"):
    setattr(TracedFloat, _name, _float_method(_name, unary=True))
del _name

_OPERANDS = _OPERANDS | {Traced, TracedFloat}

#: NumPy functions that write into an argument: never dropped from a program.
MUTATING_FUNCTIONS = frozenset({np.copyto, np.put, np.place, np.put_along_axis,
                                np.fill_diagonal, np.putmask})

#: NumPy functions (with ``__array_function__``) whose result shape follows from
#: the shapes of their arguments; for the others the replay checks the shape.
SHAPE_STATIC_FUNCTIONS = frozenset({
    np.sum, np.prod, np.mean, np.std, np.var, np.max, np.min, np.amax, np.amin,
    np.cumsum, np.cumprod, np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.einsum,
    np.matmul, np.kron, np.trace, np.diagonal, np.diag, np.reshape, np.ravel,
    np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims, np.broadcast_to,
    np.broadcast_arrays, np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack,
    np.atleast_1d, np.atleast_2d, np.atleast_3d, np.take, np.take_along_axis,
    np.where, np.clip, np.copy, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
    np.tril, np.triu, np.flip, np.roll, np.tile, np.repeat, np.split, np.array_split,
    np.linalg.solve, np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
    np.linalg.eigh, np.linalg.eigvalsh, np.linalg.qr, np.linalg.svd, np.linalg.norm,
    np.linalg.lstsq, np.linalg.pinv, np.linalg.matrix_power, np.linalg.multi_dot,
    np.copyto, np.put_along_axis, np.fill_diagonal, np.argsort, np.argmax, np.argmin,
    np.sort, np.abs, np.all, np.any, np.isnan, np.isfinite, np.real, np.imag,
    np.matrix_transpose, np.cross, np.convolve, np.diff, np.gradient, np.interp,
    np.polyval, np.average, np.cov, np.corrcoef, np.linalg.matrix_rank, np.nan_to_num,
})


def _held(x: Any) -> np.ndarray:
    """``x`` itself in a 0-d object array."""
    held = np.empty((), object)
    held[()] = x
    return held


def _writes_out(kwargs: dict) -> bool:
    out = kwargs.get("out")
    return out is not None and (type(out) is not tuple or any(o is not None for o in out))


def _only_arrays(values: Any) -> bool:
    for v in values:
        if hasattr(v, "__array_ufunc__") and not isinstance(v, (np.ndarray, np.generic,
                                                                 TracedFloat)):
            return False
    return True


def _recorder_of(args: Any, kwargs: dict) -> Recorder:
    found = None
    for value in _leaves(args, kwargs):
        if isinstance(value, (Traced, TracedFloat)):
            if value._recorder is None or value._slot is None:
                raise Unrecordable("a view made inside NumPy, not by a recorded call")
            if found is not None and value._recorder is not found:
                raise Unrecordable("values of two recordings meet")
            found = value._recorder
    if found is None:
        raise Unrecordable("no recorded value among the arguments")
    return found


def _leaves(args: Any, kwargs: dict):
    stack = [args, tuple(kwargs.values())]
    while stack:
        item = stack.pop()
        if type(item) in (tuple, list):
            stack.extend(item)
        elif isinstance(item, slice):
            stack.extend((item.start, item.stop, item.step))
        else:
            yield item


def _values(x: Any) -> Any:
    """``x`` with every Traced array (and TracedFloat) replaced by its plain value."""
    if type(x) is TracedFloat:
        return x._value
    if isinstance(x, Traced):
        if x._slot is None:
            raise Unrecordable("a view made inside NumPy, not by a recorded call")
        return x._value
    t = type(x)
    if t is tuple or t is list:
        return t(_values(v) for v in x)
    if t is dict:
        return {k: _values(v) for k, v in x.items()}
    if t is slice:
        return slice(_values(x.start), _values(x.stop), _values(x.step))
    return x


class Recorder:
    """The :class:`Operation` s of one recording, in the order they ran."""

    def __init__(self, poisoned: bool = False) -> None:
        self.operations: list[Operation] = []
        self.registers = 0
        self.failed: str | None = None
        self._state: tuple = (None, None)  # NumPy's error state: (its object, geterr())
        self.errstate = self.geterr()  # what a call under np.errstate(...) differs from
        #: Whether the Traced arrays' own memory holds other numbers than their
        #: values: what reads it without a recorded call reads them (see cache.py).
        self.poisoned = poisoned
        #: Registers holding Python floats (TracedFloat), not NumPy values.
        self.float_slots: set[int] = set()
        #: Registers of arrays a ufunc made (new memory): their layouts.
        self.made_by_ufunc: dict[int, tuple] = {}
        #: ``(ufunc, inputs)`` of the call a Python operator is making (see Traced).
        self.operator_call: tuple | None = None
        #: Register -> the register it is a basic-indexing view of (``x[1:]``).
        self.views: dict[int, int] = {}
        #: Register -> (type, shape, dtype) of its recorded value.
        self.kinds: dict[int, tuple] = {}

    def input(self, value: np.ndarray) -> Traced:
        return self._register(np.asarray(value))

    def input_float(self, value: float) -> TracedFloat:
        """A Python float argument, recorded as a register holding a Python float."""
        shown = value * -1.5 + 0.25 if self.poisoned else value
        traced = TracedFloat(shown, self, self.registers, value)
        self.kinds[self.registers] = (float, (), np.dtype(np.float64))
        self.registers += 1
        self.float_slots.add(traced._slot)
        return traced

    def input_number(self, value: float | np.floating) -> Any:
        """A float or NumPy scalar an operation takes as an input (see FloatIn)."""
        return self.input_float(value) if type(value) is float else self._register(value)

    def _register(self, value: Any) -> Traced:
        # A NumPy scalar is traced as a 0-d array, and stays a scalar for the calls.
        array = np.asarray(value) if isinstance(value, np.generic) else value
        traced = (poisoned(array) if self.poisoned else array).view(Traced)
        traced._recorder, traced._slot, traced._value = self, self.registers, value
        self.kinds[self.registers] = (type(value), array.shape, array.dtype)
        self.registers += 1
        return traced

    def call(self, func: Callable, args: tuple, kwargs: dict, *, name: str,
             mutates: bool = False, value_shaped: bool = False, method: bool = False,
             float_result: bool = False, operator: bool = False) -> Any:
        if self.failed:
            raise Unrecordable(self.failed)
        out = kwargs.get("out")
        out = None if out is None else out if type(out) is tuple else (out,)
        if out is not None and all(o is None for o in out):
            out = None
        if mutates:
            target = out if out is not None else args[:1]
            if not all(type(t) is Traced for t in target):
                self.failed = f"{name} writes into an array that is not recorded"
                raise Unrecordable(self.failed)
        result = func(*_values(args), **_values(kwargs))
        operation = Operation(func, _template(args), _template(kwargs), name, mutates, method)
        operation.operator = operator
        errstate = self.geterr()
        if errstate != self.errstate:  # a rule's np.errstate(...): the replay's too
            operation.errstate = errstate
        self.operations.append(operation)
        if out is not None and len(out) == 1 and result is out[0]._value:
            out[0]._slot = operation.outputs = self.registers  # np.add(a, b, out=a) is a
            self.registers += 1
            return out[0]
        if isinstance(result, (np.ndarray, np.generic)):
            wrapped = self._register(result)
            operation.outputs = wrapped._slot
            if type(func) is np.ufunc and out is None and type(result) is np.ndarray:
                self.made_by_ufunc[wrapped._slot] = (
                    result.shape, result.dtype, result.strides, result.nbytes,
                    result.flags.c_contiguous)
            if value_shaped:
                operation.checks.append(("shape", wrapped._slot, np.shape(result)))
            elif name == "__getitem__" and type(args[0]) is Traced and _basic(args[1]):
                self.views[wrapped._slot] = args[0]._slot
        elif type(result) is tuple or (isinstance(result, tuple) and hasattr(result, "_make")):
            items, slots = [], []
            for item in result:
                if isinstance(item, (np.ndarray, np.generic)):
                    item = self._register(item)
                    slots.append(item._slot)
                    if value_shaped:
                        operation.checks.append(("shape", item._slot, np.shape(item._value)))
                else:
                    slots.append(self._guard(item, operation, name))
                items.append(item)
            operation.outputs = tuple(slots)
            wrapped = result._make(items) if hasattr(result, "_make") else tuple(items)
        elif result is None:
            operation.mutates = True  # called for its effect: an in-place method, a setitem
            wrapped = None
        elif float_result and type(result) is float:  # TracedFloat arithmetic: no guard
            wrapped = self.input_float(result)
            operation.outputs = wrapped._slot
        else:
            operation.outputs = self._guard(result, operation, name)
            wrapped = result
        return wrapped

    def geterr(self) -> dict:
        """``np.geterr()``, asked again only when NumPy's error state is another object
        (np.errstate makes one; asking costs a microsecond, a recorded call less)."""
        state = errstate_object()
        if state is not self._state[0]:
            self._state = (state, np.geterr())
        return self._state[1]

    def overlap_is_fixed(self, args: tuple, kwargs: dict) -> bool:
        """Whether ``np.may_share_memory(*args)`` is the same at every replay, and so
        a constant rather than a guard: one side is a NumPy scalar (its own memory),
        or a view the recording took of the other by basic indexing (they overlap
        exactly when the view is not empty, which the recorded shapes fix)."""
        if kwargs or len(args) != 2 or not all(type(a) is Traced for a in args):
            return False
        a, b = args
        return (isinstance(a._value, np.generic) or isinstance(b._value, np.generic)
                or self.views.get(a._slot) == b._slot or self.views.get(b._slot) == a._slot)

    def _guard(self, value: Any, operation: Operation, name: str) -> int:
        """A register for a Python value the replay must find again."""
        if not isinstance(value, (bool, int, float, complex, str, bytes, list, type(None))):
            self.failed = f"{name} returned a {type(value).__name__}"
            raise Unrecordable(self.failed)
        slot = self.registers
        self.registers += 1
        operation.checks.append(("equal", slot, value))
        return slot


def same_recording(a: Recorder, a_outputs: list, b: Recorder, b_outputs: list) -> bool:
    """Whether two recordings made the same calls with the same constants (the
    second one poisoned): registers in the same places, constants equal."""
    if len(a.operations) != len(b.operations) or len(a_outputs) != len(b_outputs):
        return False
    for x, y in zip(a.operations, b.operations):
        if (x.func != y.func or x.name != y.name or x.outputs != y.outputs
                or x.mutates != y.mutates or not _same(x.args, y.args)
                or not _same(x.kwargs, y.kwargs) or not _same(x.checks, y.checks)):
            return False
    return _same([_template(o) for o in a_outputs], [_template(o) for o in b_outputs])


def _same(x: Any, y: Any) -> bool:
    if type(x) is not type(y):
        return False
    if isinstance(x, Register):
        return x.slot == y.slot
    if type(x) in (tuple, list):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y))
    if type(x) is dict:
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    if isinstance(x, slice):
        return _same((x.start, x.stop, x.step), (y.start, y.stop, y.step))
    if sparse_parts(x) is not None:  # a scipy.sparse matrix: its arrays' bits
        return bits(x) == bits(y)
    try:
        return bool(x is y or x == y or (x != x and y != y))
    except Exception:
        return False


def _template(x: Any) -> Any:
    if isinstance(x, Traced) or type(x) is TracedFloat:
        return Register(x._slot)
    t = type(x)
    if t is tuple or t is list:
        return t(_template(v) for v in x)
    if t is dict:
        return {k: _template(v) for k, v in x.items()}
    if t is slice and any(isinstance(v, (Traced, TracedFloat))
                          for v in (x.start, x.stop, x.step)):
        raise Unrecordable("a slice bound computed from a recorded value")
    return x
