"""A recording's first replays: its NumPy calls run as recorded, with no generated code.

Generating and compiling a recording's Python code (:mod:`.program`,
:mod:`.scalars`, :mod:`.recording`) costs more than the recording itself: ten to
twenty interpreted calls. A recording therefore starts with the code of this
module, which runs each recorded call as the interpreter made it (the same
function on the same values, under the same error state), checks each operation
of the user's function as the generated code does, and frees each register after
its last use. It is about half as fast as the generated code and several times
faster than the interpreter; a recording replayed often enough is compiled (see
:meth:`~dualad.replay.recording.Recording.compile`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..primitive import NUMPY
from .live import BINARY, MISS, UNARY, Live, Session, Step
from .operations import Operation, Register, registers_in
from .program import GuardFailed, _copy
from .templates import ArgRef, FloatIn, LiveRef, Named, NewLive, Own, Slot, Static, matches

__all__ = ["Code", "direct_code"]


class Code:
    """How a recording's calls are replayed: ``enter(S, leaves, args)`` (the registers
    and the function's arguments), the steps the Live values follow (``upcoming``,
    with their ``run``), ``complete(R)`` (the transform's result), and whether it
    computes with Python floats (``unrolled``). One object, swapped whole, so that
    a call runs one code from its start to its end."""

    __slots__ = ("enter", "upcoming", "complete", "unrolled")

    def __init__(self, enter: Callable, upcoming: list[Step], complete: Callable,
                 unrolled: bool) -> None:
        self.enter, self.upcoming, self.complete = enter, upcoming, complete
        self.unrolled = unrolled


_asarray = NUMPY["asarray"]  # NumPy's own (not a transform's wrapper)

#: Ufuncs a Python operator called: replayed by the operator (a NumPy scalar's own
#: arithmetic, whose warnings say so, as in the interpreter).
_OPERATORS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
              np.true_divide: operator.truediv, np.negative: operator.neg}


def direct_code(recording: Any, parts: list[list[Operation]], frees: list[list[int]],
                results: list) -> Code:
    """The :class:`Code` running ``parts`` (the transform's seeding, one per step of
    the function, the transform's end) as recorded; ``frees[i]``: the registers part
    ``i`` releases, ``results``: the result's leaves (see ``Recording``)."""
    calls = [[_call(op) for op in part] for part in parts]
    upcoming = []
    for step, part, free in zip(recording.steps, calls[1:-1], frees[1:-1]):
        copy = Step(step.name, step.template, step.errstate)
        copy.result, copy.rebinds = step.result, step.rebinds
        copy.run = _step_code(step, part, free, recording.held)
        upcoming.append(copy)
    upcoming.append(Step(None, None, None))
    seeding, seeding_free = calls[0], frees[0]
    end = calls[-1]  # (the call's end: nothing to free)
    tree = recording.result_tree

    def enter(S: Session, leaves: list, args: tuple) -> list:
        R = S.registers = [None] * recording.registers
        if recording.held:
            S.targets = {}
        count = len(recording.inputs) - len(recording.other_arguments)
        for slot, leaf in zip(recording.inputs, leaves[:count]):
            R[slot] = leaf if type(leaf) is np.ndarray else _asarray(leaf)
        for slot, i in zip(recording.inputs[count:], recording.other_arguments):
            R[slot] = args[i]
        _run(seeding, R, seeding_free)
        made, at = [], 0
        for item in recording.arguments:
            if item[0] == "arg":
                made.append(args[item[1]])
                continue
            lives = []
            for _ in range(item[2]):
                lives.append(_new_live(S, at, R[recording.argument_slots[at]],
                                       at in recording.held))
                at += 1
            made.append(lives[0] if item[3] else item[1].unflatten(lives))
        S.count = at
        return made

    def complete(R: list) -> Any:
        _run(end, R, ())
        leaves = []
        for spec in results:
            if isinstance(spec, Slot):
                leaves.append(_copy(R[spec.slot]) if spec.array else R[spec.slot])
            else:
                leaves.append(_copy(spec) if isinstance(spec, np.ndarray) else spec)
        return tree.unflatten(leaves)

    return Code(enter, upcoming, complete, False)


def _run(calls: list[Callable], R: list, free: Any) -> None:
    for call in calls:
        call(R)
    for slot in free:
        R[slot] = None


def _call(op: Operation) -> Callable[[list], None]:
    """``op`` as a function of the registers: its call, its results stored, its
    guards checked (GuardFailed)."""
    func, name, outputs = op.func, op.name, op.outputs
    args, kwargs = _filler(op.args), _filler(op.kwargs)
    if op.method:
        if name == "__getitem__":
            def call(R: list) -> Any:
                a = args(R)
                return a[0][a[1]]
        elif name == "__setitem__":
            def call(R: list) -> Any:
                a = args(R)
                a[0][a[1]] = a[2]
        else:
            def call(R: list) -> Any:
                a = args(R)
                return getattr(a[0], name)(*a[1:], **kwargs(R))
    elif op.operator and func in _OPERATORS and not op.kwargs and len(op.args) == func.nin:
        symbol = _OPERATORS[func]

        def call(R: list) -> Any:
            return symbol(*args(R))
    elif not op.kwargs:
        def call(R: list) -> Any:
            return func(*args(R))
    else:
        def call(R: list) -> Any:
            return func(*args(R), **kwargs(R))

    errstate, checks = op.errstate, op.checks
    if errstate is None and not checks and type(outputs) is int:
        def run(R: list) -> None:
            R[outputs] = call(R)
        return run

    def run(R: list) -> None:
        if errstate is None:
            out = call(R)
        else:
            with np.errstate(**errstate):
                out = call(R)
        if type(outputs) is int:
            R[outputs] = out
        elif type(outputs) is tuple:
            for slot, item in zip(outputs, out):
                R[slot] = item
        for kind, slot, value in checks:
            found = R[slot]
            if kind == "shape":
                if found.shape != value:
                    raise GuardFailed
            elif type(found) is not type(value) or found != value:
                raise GuardFailed

    return run


def _filler(template: Any) -> Callable[[list], Any]:
    """A function giving an operation's arguments (a tuple or a dict), with each
    register's value in its place, from the registers."""
    if not registers_in(template):
        return lambda R: template
    if type(template) is tuple and not any(type(item) is not Register
                                           and registers_in(item)
                                           for item in template):
        places = [(i, item.slot) for i, item in enumerate(template) if type(item) is Register]
        if len(places) == len(template) == 1:
            (_, a), = places
            return lambda R: (R[a],)
        if len(places) == len(template) == 2:
            (_, a), (_, b) = places
            return lambda R: (R[a], R[b])
        items = list(template)

        def filled(R: list) -> list:
            out = items.copy()
            for i, slot in places:
                out[i] = R[slot]
            return out
        return filled
    return lambda R: _filled(template, R)


def _filled(x: Any, R: list) -> Any:
    """``x`` with each register's value in its place."""
    kind = type(x)
    if kind is Register:
        return R[x.slot]
    if kind is tuple or kind is list:
        return kind(_filled(item, R) for item in x)
    if kind is dict:
        return {key: _filled(item, R) for key, item in x.items()}
    return x


def _step_code(step: Step, calls: list[Callable], free: list[int], held: set) -> Callable:
    """The ``run`` of one operation of the function (see ``Live``): the check of
    its arguments, its NumPy calls, its result, or MISS."""
    own_ref, expected_args, expected_kwargs = step.template
    own, name, errstate = own_ref.index, step.name, step.errstate

    def go(S: Session, live: Live, loads: list) -> Any:
        if errstate is not None and np.geterr() != errstate:
            return MISS
        R = S.registers
        for value, slot in loads:
            R[slot] = value
        try:
            _run(calls, R, free)
        except GuardFailed:
            return MISS
        result = _result(step.result, S, live, R, held)
        for index, slot in step.rebinds:
            S.targets[index]._value = R[slot]
        S.position += 1
        return result

    if name in UNARY:
        def run(S: Session, live: Live) -> Any:
            return go(S, live, []) if live._index == own else MISS
    elif name in BINARY:
        def run(S: Session, live: Live, other: Any) -> Any:
            loads: list = []
            if live._index != own or not _conforms(expected_args[0], other, S, live, own,
                                                   loads):
                return MISS
            return go(S, live, loads)
    else:
        function = name == "__array_function__"  # (func, types, args, kwargs): not types

        def run(S: Session, live: Live, args: tuple, kwargs: dict) -> Any:
            loads: list = []
            if live._index != own or len(args) != len(expected_args):
                return MISS
            for i, (expected, value) in enumerate(zip(expected_args, args)):
                if not (function and i == 1) and not _conforms(expected, value, S, live, own,
                                                               loads):
                    return MISS
            if expected_kwargs is None:
                if kwargs:
                    return MISS
            elif not _conforms(expected_kwargs, kwargs, S, live, own, loads):
                return MISS
            return go(S, live, loads)

    return run


def _conforms(expected: Any, value: Any, S: Session, live: Live, own: int, loads: list
              ) -> bool:
    """Whether an argument is what the step's template holds, as the generated code
    checks it (``loads`` gains ``(value, register)`` of each float taken as input)."""
    kind = type(expected)
    if kind is FloatIn:
        if type(value) is not expected.kind:
            return False
        loads.append((value, expected.slot))
        return True
    if kind is LiveRef:
        if expected.index == own:
            return value is live
        return type(value) is Live and value._index == expected.index and value._session is S
    if kind is Static:
        return value is expected.value
    if kind is ArgRef:
        return value is S.arguments[expected.position]
    if expected is None or kind is bool:
        return value is expected
    if kind is int:
        return type(value) is int and value == expected
    if kind is tuple or kind is list:
        return type(value) is kind and len(value) == len(expected) and all(
            _conforms(e, v, S, live, own, loads) for e, v in zip(expected, value))
    if kind is dict:
        return type(value) is dict and value.keys() == expected.keys() and all(
            _conforms(expected[key], value[key], S, live, own, loads) for key in expected)
    if kind is slice:
        return type(value) is slice and all(
            _conforms(getattr(expected, part), getattr(value, part), S, live, own, loads)
            for part in ("start", "stop", "step"))
    return matches(expected, value, S)  # a constant (Bits), a string, an object array


def _result(spec: Any, S: Session, live: Live, R: list, held: set) -> Any:
    """An operation's result for the function, built as the recording says."""
    kind = type(spec)
    if kind is NewLive:
        return _new_live(S, spec.index, R[spec.slot], spec.index in held)
    if kind is Slot:
        return R[spec.slot]
    if kind is Own:
        return live
    if kind is LiveRef:
        return S.targets[spec.index]
    if kind is tuple or kind is list:
        return kind([_result(item, S, live, R, held) for item in spec])
    if kind is Named:
        return spec.kind(*[_result(item, S, live, R, held) for item in spec.items])
    return spec


def _new_live(S: Session, index: int, value: Any, held: bool) -> Live:
    live = object.__new__(Live)
    live._session, live._index, live._value = S, index, value
    if held:
        S.targets[index] = live
    return live
