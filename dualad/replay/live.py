"""The user's function on every call: :class:`Live` values and the :class:`Session` of a call.

A replayed call runs the user's function again, on ``Live`` values: Duals to
the function (same operators, same NumPy protocols, same methods), which carry
only their primal value. Every NumPy call, operator or method the function
applies to a Live value is one *operation* of the call. The session compares
each one with the recorded call's operation at the same position — the same
entry point, the same Live values in the same places, constants identical bit
for bit — and, when it is the same, runs that operation's recorded NumPy code
(primal and tangent together, on the registers of this call). Whatever the
function does between operations (reading globals, attributes, arrays written
in place, branching, printing) runs as it is; what it passes to an operation is
checked there.

At the first difference the session *materializes*: it starts the transform's
interpreter (see :mod:`dualad.replay.coroutine`), replays the operations so far
on the interpreter's Duals, and from then on every Live value hands its
operations to its Dual. The call goes on in the interpreter, exactly as if the
replay had never been there.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import numpy as np

from ..pytrees import tree_flatten
from ..dual import Dual, is_sparse_matrix
from ..fillable import holds_fillable, resolved_tree
from ..hyperdual import HyperDual, SeededHyperDual
from ..primitive import EscapedDualError, Tag
from .coroutine import Coroutine
from .rerun import (PROPERTIES, call_operation, duals_of, rebuild, replay_log, replay_steps,
                    same_layout_copy)
from .templates import (PLAIN, LiveRef, Opaque, bits, changed_floats, float_leaves,
                        made_anew, sparse_parts, template)
from .tracing import Traced, Unrecordable

__all__ = ["Live", "Session", "Opaque"]

RECORDING, REPLAYING, INTERPRETING, FINISHED = range(4)


class Live(Dual):
    """A Dual of a replayed call: the primal value, and a place in the session's trace.

    Operators, NumPy protocols and methods are operations of the session; reading
    the value (``shape``, ``bool(x)``, ``dualad.primal_value(x)``) reads the primal
    value; anything else (``x.tangent``, ``x.tag``, a nested transform) materializes
    the call and is answered by the interpreter's Dual.
    """

    __slots__ = ("_session", "_index", "_value")
    _replayed = True

    def __init__(self, session: Session, index: int, value: Any) -> None:  # noqa: D107
        self._session, self._index, self._value = session, index, value

    @property
    def primal(self) -> Any:  # type: ignore[override]
        session = self._session
        if session.mode <= REPLAYING and not session.nested:  # recording or replaying
            return self._value
        return session.dual_of(self).primal

    @property
    def tangent(self) -> Any:  # type: ignore[override]
        return self._session.dual_of(self).tangent

    @property
    def _tag(self) -> Any:  # type: ignore[override]
        session = self._session
        if session.mode == REPLAYING:
            # A tag made as the call began: a primitive meeting this value hands it
            # the call (``_process``), nested transforms stay above it.
            return session.tag
        dual = session.duals.get(self._index)
        return session.dual_of(self)._tag if dual is None else dual._tag

    @property
    def tag(self) -> Any:  # type: ignore[override]
        return self._session.dual_of(self)._tag

    def _interpreted(self) -> Any:
        session = self._session
        return session.dual_of(self) if session.mode == INTERPRETING else self

    # Reads of the value, as Dual's own (they read the primal only).
    @property
    def shape(self) -> tuple:  # type: ignore[override]
        return np.shape(self._session.value_of(self))

    @property
    def ndim(self) -> int:  # type: ignore[override]
        return np.ndim(self._session.value_of(self))

    @property
    def size(self) -> int:  # type: ignore[override]
        return np.size(self._session.value_of(self))

    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return self._session.value_of(self).dtype

    def __len__(self) -> int:
        return len(self._session.value_of(self))

    def __bool__(self) -> bool:
        return bool(self._session.value_of(self))

    def __int__(self) -> int:
        return int(self._session.value_of(self))

    def __repr__(self) -> str:
        return repr(self._session.dual_of(self))


#: Dual's members that are operations (each a call of the session).
OPERATIONS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__",
    "__rdivmod__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__pow__",
    "__rpow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__getitem__",
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__",
    "__imatmul__", "__ifloordiv__", "__imod__", "__array_ufunc__", "__array_function__",
    "reshape", "transpose", "flatten", "copy", "__copy__", "__deepcopy__", "astype", "conj",
    "conjugate", "__round__", "_process", "_entry",
)
#: Operations that write into a Live value (and, through NumPy's aliasing, its views).
WRITES = frozenset({"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                    "__ipow__", "__imatmul__", "__ifloordiv__", "__imod__"})


#: Operations called as ``method(self, other)`` and ``method(self)``: their code takes
#: the operand itself (no tuple of arguments, no dict of keywords to make).
BINARY = frozenset({
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__matmul__",
    "__rmatmul__", "__pow__", "__rpow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
    "__ne__", "__getitem__"})
UNARY = frozenset({"__neg__", "__pos__", "__abs__"})


class _Miss:
    """What a step's code returns when the call is not the recorded one."""


MISS = _Miss()


def _operation(name: str) -> Callable:
    def method(self, *args: Any, **kwargs: Any) -> Any:
        session = self._session
        if session.mode == REPLAYING:  # the hot path: the next step's own code
            step = session.upcoming[session.position]  # (ends with a step of no name)
            if step.name is name:
                result = step.run(session, self, args, kwargs)
                if result is not MISS:
                    return result
        return session.operate(name, self, args, kwargs)

    method.__name__ = name
    return method


def _binary(name: str) -> Callable:
    def method(self, other: Any) -> Any:
        session = self._session
        if session.mode == REPLAYING:  # as in _operation, with the operand itself
            step = session.upcoming[session.position]
            if step.name is name:
                result = step.run(session, self, other)
                if result is not MISS:
                    return result
        return session.operate(name, self, (other,), {})

    method.__name__ = name
    return method


def _unary(name: str) -> Callable:
    def method(self) -> Any:
        session = self._session
        if session.mode == REPLAYING:
            step = session.upcoming[session.position]
            if step.name is name:
                result = step.run(session, self)
                if result is not MISS:
                    return result
        return session.operate(name, self, (), {})

    method.__name__ = name
    return method


def _property(name: str) -> property:
    operation = _operation(name)
    return property(lambda self: operation(self))


_DUAL_METHODS = [name for name, value in vars(Dual).items()
                 if callable(value) and not name.startswith("_") and name not in OPERATIONS
                 and name not in ("item", "tolist")]
for _name in OPERATIONS + tuple(_DUAL_METHODS):
    setattr(Live, _name, _binary(_name) if _name in BINARY else _unary(_name)
            if _name in UNARY else _operation(_name))
for _name in PROPERTIES:
    setattr(Live, _name, _property(_name))
_recorded_matmul = Live.__matmul__


def _matmul(self: Live, other: Any) -> Any:
    if is_sparse_matrix(other):
        return NotImplemented  # x @ A: the sparse matrix's __rmatmul__, an operation itself
    return _recorded_matmul(self, other)


Live.__matmul__ = _matmul


def _forwarded(name: str) -> property:
    return property(lambda self: getattr(self._session.dual_of(self), name))


# What the interpreter's Duals have and a Live value does not (HyperDual's parts, Dual's
# own slots) is read from its Dual. Properties, not ``__getattr__``: a class with
# ``__getattr__`` makes every attribute read slow (CPython does not specialize it).
for _name in {n for cls in (Dual, HyperDual, SeededHyperDual) for k in cls.__mro__
              for n in vars(k) if n != "__weakref__"
              if not hasattr(Live, n) or n in Dual.__slots__ and n not in vars(Live)}:
    setattr(Live, _name, _forwarded(_name))
del _name


class Step:
    """One recorded operation: its entry point, its arguments' template, its code."""

    __slots__ = ("name", "template", "errstate", "run", "result", "scalars", "rebinds", "first",
                 "last")

    def __init__(self, name: str, template: Any, errstate: dict | None) -> None:
        self.name, self.template, self.errstate = name, template, errstate
        self.run: Callable | None = None   # the compiled NumPy code, run on the registers
        self.result: Any = None            # how its result is built from the registers
        self.scalars: dict = {}            # place in the result -> the slot of a NumPy scalar
        self.rebinds: list = []            # (Live number, slot) whose value a write changed
        self.first = self.last = 0         # its span in the recorder's operations


#: The Duals of a replayed call, until it materializes (never written into).
_NO_DUALS: dict[int, Any] = {}


class Session:
    """The state of one call of a replayed transform (see the module docstring).

    ``mode`` is RECORDING (the interpreter runs on traced Duals and each operation
    is noted), REPLAYING (each operation is checked and run from the recording),
    INTERPRETING (materialized: every Live value hands its operations to its Dual)
    or FINISHED (the call has returned: its values raise, as a finished Dual's do).
    """

    # Slots: the generated code reads and writes a few of them at every operation.
    __slots__ = ("mode", "recording", "nested", "count", "position", "arguments", "steps",
                 "upcoming", "arguments_spec", "duals", "log", "targets", "registers",
                 "handed", "lives", "wrapped", "broken", "value_slots", "scalar_slots",
                 "frozen", "argument_ids", "variable", "variable_ids", "previous", "body",
                 "context", "level", "coroutine", "changed", "_tag")

    @classmethod
    def replaying(cls, recording: Any, code: Any, body: Callable, arguments: tuple) -> Session:
        """The session of a call of ``recording`` replayed by ``code`` (its
        :class:`~dualad.replay.direct.Code`), made in one step (the hot path)."""
        session = object.__new__(cls)  # (attributes set one by one keep a shared-key dict)
        session.mode, session.recording, session.nested = REPLAYING, recording, recording.nested
        session.count = session.position = 0
        session.steps, session.upcoming = recording.steps, code.upcoming
        session.arguments_spec = recording.arguments
        session.body, session.arguments = body, arguments
        session.context, session.level = contextvars.copy_context(), Tag.reserve()
        session.duals = _NO_DUALS
        return session

    def __init__(self, mode: int, recording: Any = None, nested: bool = False) -> None:
        self.mode = mode
        self.recording = recording
        self.nested = nested            # whether the interpreter's primals are Duals
        self.count = 0                  # Live values made so far
        self.position = 0               # operations done so far
        self.arguments: tuple = ()     # the transform's arguments (replayed: see replaying)
        self.arguments_spec: list = []  # how the function's arguments were made
        self.duals = {}
        #: (name, self, args, kwargs, result, floats taken as inputs) per operation
        self.log: list[tuple] = []
        self.targets: dict[int, Live] = {}     # Live values a later step gives back
        self.steps = []                        # the operations noted
        self.registers: list = []
        self.handed: dict[int, tuple] = {}     # id(plain) -> (plain, Traced)
        self.lives: list[Live] = []            # every Live value
        self.wrapped: dict[int, Live] = {}     # id(Dual) -> its Live value
        self.broken: str | None = None         # why it cannot be replayed
        self.value_slots: dict[int, int] = {}  # Live number -> its value's slot
        self.scalar_slots: dict[tuple, int] = {}  # of a step's result: place -> slot
        self.frozen: dict[int, tuple] = {}     # id(array) -> (array, copy recorded)
        self.argument_ids: dict[int, tuple] = {}  # id(argument) -> (it, register, position)
        #: Step position -> the float arguments (by float_leaves' count) that changed
        #: at an earlier call: recorded as inputs (FloatIn), not as constants.
        self.variable: dict[int, set[int]] = {}
        self.variable_ids: dict[int, tuple] = {}  # of the operation: id -> (it, register)
        self.previous: list[Step] = []  # the steps of the recording such a call left

    @property
    def tag(self) -> Tag:
        """A tag made the first time a primitive meets a Live value of a replayed call:
        later than the tags of the transforms around the call, earlier than those of
        any transform nested in the function."""
        tag = getattr(self, "_tag", None)
        if tag is None:
            tag = self._tag = Tag()
            tag.level = self.level  # the interpreter's, should it take over
        return tag

    # -- values ----------------------------------------------------------------------

    def new_live(self, value: Any) -> Live:
        live = Live(self, self.count, value)
        self.count += 1
        return live

    def adopt(self, dual: Any, value: Any, slot: int | None) -> Live:
        """A new Live value standing for the recording's ``dual``."""
        live = self.new_live(value)
        self.duals[live._index] = dual
        self.wrapped[id(dual)] = live
        self.lives.append(live)
        if slot is not None:
            self.value_slots[live._index] = slot
        return live

    def value_of(self, live: Live) -> Any:
        """The primal value of a Live value, of any mode (as ``primal_value`` reads it)."""
        if self.mode == REPLAYING:
            return live._value
        dual = self.duals.get(live._index)
        if self.mode == RECORDING or dual is None:
            return live._value
        while isinstance(dual, Dual):
            dual = dual.primal
        return dual

    def dual_of(self, live: Live) -> Any:
        """The Dual standing behind a Live value (materializing the call if need be)."""
        if self.mode <= REPLAYING:  # recording: no traced value may reach the function
            if self.mode == RECORDING:
                self.broken = self.broken or "a value was read past the operations"
            self.materialize()
        dual = self.duals.get(live._index)
        if dual is None:  # a finished call that never needed its Duals
            raise EscapedDualError(Tag())
        return dual

    # -- operations --------------------------------------------------------------------

    def operate(self, name: str, live: Live, args: tuple, kwargs: dict) -> Any:
        if holds_fillable(args) or kwargs and holds_fillable(kwargs):
            if name == "__array_ufunc__" and holds_fillable(kwargs.get("out")):
                return NotImplemented  # the Fillable's own: it writes the result
            args, kwargs = resolved_tree(args), resolved_tree(kwargs)
            if self.mode == REPLAYING:  # the step's code met the Fillable, not its value
                step = self.upcoming[self.position]
                if step.name is name:
                    result = (step.run(self, live, args[0]) if name in BINARY else
                              step.run(self, live) if name in UNARY else
                              step.run(self, live, args, kwargs))
                    if result is not MISS:
                        return result
        mode = self.mode
        if name == "__array_function__":  # (func, types, args, kwargs): types follow
            args = (args[0], None, args[2], args[3])
        if mode == REPLAYING:  # the step's code found a difference (see _operation)
            self.changed = self._changed_floats(name, live, args, kwargs)
            self.materialize()
            mode = self.mode
        if mode == INTERPRETING:
            return call_operation(name, self._unwrap(live), self._unwrap(args),
                                  self._unwrap(kwargs))
        if mode == RECORDING:
            return self._record(name, live, args, kwargs)
        raise EscapedDualError(Tag())

    def _changed_floats(self, name: str, live: Live, args: tuple, kwargs: dict
                        ) -> tuple[int, list[int]] | None:
        """``(step, positions)`` when this operation is the recorded one but for
        floats that changed (an ODE's forcing ``np.sin(0.6 * t)``), else None."""
        if self.position >= len(self.steps):
            return None
        step = self.steps[self.position]
        own, expected, expected_kwargs = step.template
        if step.name != name or own.index != live._index:
            return None
        if expected_kwargs is None:
            found = None if kwargs else changed_floats(expected, args, self)
        else:
            found = changed_floats((expected, expected_kwargs), (args, kwargs), self)
        return None if found is None else (self.position, found)

    def _record(self, name: str, live: Live, args: tuple, kwargs: dict) -> Any:
        recorder = self.recording
        if live._session is not self:
            raise EscapedDualError(Tag())
        position = len(self.steps)
        marked = self.variable.get(position, set())
        if position < len(self.previous) and self.previous[position].name == name:
            # After a call that found floats changed, those made anew at every call
            # are taken as inputs too, here and in the later operations.
            expected = self.previous[position].template
            anew = made_anew(expected[1] if expected[2] is None else expected[1:],
                             (args, kwargs) if kwargs else args)
            if not anew <= marked:
                marked = self.variable[position] = marked | anew
        substituted = None
        if marked:  # floats that changed between calls: inputs of this operation
            floats = float_leaves((args, kwargs) if kwargs else args)
            substituted = [floats[i] for i in sorted(marked) if i < len(floats)]
            self.variable_ids = {id(v): (v, recorder.input_number(v)) for v in substituted}
        try:
            return self._record_step(name, live, args, kwargs, substituted)
        finally:
            self.variable_ids = {}

    def _record_step(self, name: str, live: Live, args: tuple, kwargs: dict,
                     substituted: list | None) -> Any:
        recorder = self.recording
        try:
            shape = (LiveRef(live._index), template(args, self),
                     template(kwargs, self) if kwargs else None)
        except Opaque as why:
            # Another transform's values, a callback, an unknown object: this call
            # cannot be recorded, and goes on in the interpreter from here.
            self.broken = self.broken or str(why)
            self.materialize()
            return self.operate(name, live, args, kwargs)
        # the constant arrays as this operation reads them (the function may write into
        # them later in the call), for the log's replays
        logged = rebuild((args, kwargs), self._as_read)
        errstate = recorder.geterr()
        recorder.errstate = errstate
        step = Step(name, shape, None)
        step.first = len(recorder.operations)
        try:
            result = call_operation(name, self._unwrap(live), self._unwrap(args),
                                    self._unwrap(kwargs))
        except (Unrecordable, Exception) as error:
            # Not recordable (or raising only when traced): the interpreter takes the
            # call over, and says whether the operation raises.
            self.broken = self.broken or f"{name} could not be recorded: {error!r}"
            self.materialize()
            return self.operate(name, live, args, kwargs)
        step.last = len(recorder.operations)
        if any(op.errstate is not None for op in recorder.operations[step.first:step.last]):
            step.errstate = errstate
        self.scalar_slots = {}
        wrapped = self._wrap(result)
        step.result, step.scalars = wrapped, self.scalar_slots
        if name in WRITES or (name == "__array_function__" and args[0] in _WRITING) or (
                name == "__array_ufunc__" and (kwargs.get("out") is not None
                                              or args[1] == "at")):
            for other in self.lives:
                value = _innermost(self.duals[other._index])
                if not isinstance(value, Traced):
                    self.broken = self.broken or "a write left a value the recording lost"
                elif value._value is not other._value:
                    other._value = value._value
                    step.rebinds.append((other._index, value._slot))
        self.steps.append(step)
        self.position += 1
        self.log.append((name, live, *logged, wrapped, substituted))
        return wrapped

    def _wrap(self, result: Any, path: tuple = ()) -> Any:
        """A recorded result as the user sees it: Duals as Live values, traced plain
        arrays as their values (handed out, and known again when they come back)."""
        kind = type(result)
        if isinstance(result, Dual):
            known = self.wrapped.get(id(result))
            if known is not None:
                return known
            value = _innermost(result)
            if isinstance(value, Traced):
                slot, value = value._slot, value._value
            elif isinstance(value, (np.ndarray, np.generic)):
                slot = None  # computed from no recorded value: a constant
            else:
                slot = None
                self.broken = self.broken or "a value computed outside the recording"
            return self.adopt(result, value, slot)
        if isinstance(result, Traced):
            value = result._value
            if isinstance(value, np.ndarray):
                self.handed[id(value)] = (value, result)
            else:
                # By its place in the result: NumPy scalars may be one object (np.True_)
                self.scalar_slots[path] = result._slot
            return value
        if kind is tuple or kind is list:
            return kind(self._wrap(r, path + (i,)) for i, r in enumerate(result))
        if isinstance(result, tuple):  # a named tuple (SlogdetResult, ...)
            return kind(*(self._wrap(r, path + (i,)) for i, r in enumerate(result)))
        if kind is np.ndarray and result.dtype.hasobject:
            out = np.empty(result.shape, object)
            for i, item in enumerate(result.flat):
                out.flat[i] = self._wrap(item, path + (i,))
            return out
        if not (kind in PLAIN or kind is float or kind is complex or kind is np.ndarray
                or isinstance(result, np.generic)):
            self.broken = self.broken or f"a result of type {kind.__name__}"
        return result

    def _unwrap(self, x: Any) -> Any:
        """``x`` with the Duals of its Live values (recording: the registers of the
        transform's traced arguments, and copies of constant arrays)."""
        return rebuild(x, self._unwrap_value)

    def _unwrap_value(self, x: Any) -> Any:
        kind = type(x)
        if kind is Live:
            if x._session is not self:
                raise EscapedDualError(Tag())
            return self.duals[x._index]
        if self.mode == RECORDING and (kind is float or kind is np.ndarray
                                       or isinstance(x, np.generic)):
            variable = self.variable_ids.get(id(x))
            if variable is not None and variable[0] is x:
                return variable[1]  # a float that changes between calls: a register
            argument = self.argument_ids.get(id(x))
            if argument is not None and argument[0] is x:
                return argument[1]  # the transform's argument: a register
            if kind is np.ndarray:
                return self.freeze(x)
        elif self.mode == RECORDING and sparse_parts(x) is not None:
            return self.freeze(x)
        return x

    def _as_read(self, x: Any) -> Any:
        """A constant array (or sparse matrix) as an operation reads it: its frozen copy;
        the transform's arguments stay themselves (the log's replays substitute them)."""
        if type(x) is np.ndarray or sparse_parts(x) is not None:
            argument = self.argument_ids.get(id(x))
            if argument is None or argument[0] is not x:
                return self.freeze(x)
        return x

    def freeze(self, array: Any) -> Any:
        """The copy of a constant array (or scipy.sparse matrix) the recording uses, laid
        out as the caller's (a layout may change the bits of a sum): the caller may
        write into theirs, between calls or within this one (a buffer refilled after
        its use: a new copy, which the operations from here on read)."""
        frozen = self.frozen.get(id(array))
        if frozen is None or frozen[0] is not array or bits(frozen[1]) != bits(array):
            copy = same_layout_copy(array) if type(array) is np.ndarray else array.copy()
            frozen = self.frozen[id(array)] = (array, copy)
        return frozen[1]

    # -- the interpreter taking over (see dualad.replay.coroutine) ---------------------

    def start(self, body: Callable, arguments: tuple) -> None:
        """The transform's interpreter ``body(fun, *arguments)``, should it take over,
        in a copy of the caller's context as the call begins."""
        self.body, self.arguments, self.context = body, arguments, contextvars.copy_context()
        self.level = Tag.reserve()

    def materialize(self) -> None:
        """Start the interpreter, run the operations so far again on its Duals, and
        go on in the interpreter: every Live value hands its operations to its Dual."""
        if self.mode == INTERPRETING:
            return
        self.coroutine = Coroutine(self.body, self.arguments, {}, self.context, self.level)
        fargs, _ = self.coroutine.arguments()
        duals = duals_of(fargs, self.arguments_spec)
        if self.mode == REPLAYING:  # from the recording: no log of a replayed call
            replay_steps(self.steps[:self.position], duals, self.arguments, self.registers)
        else:
            replay_log(self.log, duals)
        self.duals = duals
        self.mode = INTERPRETING

    def finish_interpreting(self, out: Any) -> Any:
        """The transform's result, from the function's output, by the interpreter."""
        return self.coroutine.finish(self.unwrapped(out))

    def cancel(self) -> None:
        """The function raised: unwind the interpreter, if it had taken over."""
        coroutine = getattr(self, "coroutine", None)
        if coroutine is not None:
            coroutine.cancel()

    def unwrapped(self, out: Any) -> Any:
        """The function's output with the interpreter's Duals for the Live values."""
        leaves, tree = tree_flatten(out, none_is_leaf=True)
        return tree.unflatten([self._unwrap(leaf) for leaf in leaves])

    def finish(self) -> None:
        """The call has returned: its values raise when used, as a finished Dual's do
        (their Duals, if any, stay: reading a value still works)."""
        self.mode = FINISHED
        self.registers = self.targets = None


_WRITING = frozenset({np.copyto, np.put, np.place, np.put_along_axis, np.fill_diagonal,
                      np.putmask})


def _innermost(x: Any) -> Any:
    while isinstance(x, Dual):
        x = x.primal
    return x
