"""Recorded NumPy calls as Python code, and which of them a replay needs.

The operations a :class:`~dualad.replay.tracing.Recorder` collected become lines
of generated functions (:class:`Emitter`; :mod:`~dualad.replay.recording` puts
them together): one line per call, registers as local variables, constants bound
by name. Operations whose results nothing needs are dropped (never those that
write into an array, nor guards). The replay makes no Dual, runs no rule and
dispatches nothing.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from . import scalars
from .operations import Operation, Register, registers_in
from .scalars import ScalarCode

__all__ = ["Emitter", "GuardFailed", "common_subexpressions", "live_operations",
           "reuse_memory"]

#: The size from which a ufunc writes into a dead operand rather than new memory:
#: below it, NumPy's allocation costs less than ``out=``'s keyword handling.
REUSE_MIN_BYTES = 1 << 16

_DOUBLE = struct.Struct("d").pack


#: Ufuncs replayed as Python operators (see ``Program._lines``).
OPERATORS = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/",
             np.negative: "-"}


class GuardFailed(Exception):
    """A value the recording branched on differs in this call."""


def _copy(value: Any) -> Any:
    """A copy, in the same layout, of an array the caller may write into (a NumPy
    scalar is immutable: itself, as the interpreter returns it): ``np.copy``'s, by
    the array's own method (a third of the time; order "C" is "K" up to one axis)."""
    if type(value) is not np.ndarray:
        return value
    return value.copy() if value.ndim <= 1 else value.copy(order="K")


class Emitter:
    """Python source for recorded operations: one line per call, registers as
    local variables ``r<slot>``, constants bound by name in ``namespace``."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self.namespace: dict[str, Any] = {"_GuardFailed": GuardFailed, "_copy": _copy,
                                          "_errstate": np.errstate, **scalars.NAMESPACE}
        self.elements = scalars.Elements()
        #: Registers holding Python values (a guarded float(), int(), ...) rather
        #: than NumPy arrays or scalars.
        self.python_values: set[int] = set()
        #: Register -> (type, shape, dtype) of its recorded value (Recorder.kinds).
        self.kinds: dict[int, tuple] = {}

    def constant(self, value: Any) -> str:
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"c{len(self._names)}"
            self.namespace[name] = value
        return name

    def expr(self, x: Any) -> str:
        if isinstance(x, Register):
            return f"r{x.slot}"
        t = type(x)
        if t is tuple:
            return "(" + "".join(self.expr(v) + ", " for v in x) + ")"
        if t is list:
            return "[" + ", ".join(self.expr(v) for v in x) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}" for k, v in x.items()) + "}"
        if x is None or t is bool or t is int or t is str or (t is float and np.isfinite(x)):
            return repr(x)
        return self.constant(x)

    def lines(self, op: Operation) -> list[str]:
        if type(op.func) is ScalarCode:  # on Python floats (see dualad.replay.scalars)
            return scalars.lines(op, self.elements, self.expr)
        args = [self.expr(a) for a in op.args]
        arguments = "".join(a + ", " for a in args[op.method:]) + \
            "".join(f"{k}={self.expr(v)}, " for k, v in op.kwargs.items())
        if op.into is not None:  # a ufunc writing into a dead operand (see reuse_memory)
            slot, shape = op.into
            out = f"r{slot}" if shape is None else f"r{slot}.reshape({shape!r})"
            call = f"{self.constant(op.func)}({arguments}out={out})"
        elif op.name == "__getitem__":
            call = f"{args[0]}[{args[1]}]"
        elif op.name == "__setitem__":
            call = f"{args[0]}[{args[1]}] = {args[2]}"
        elif op.method:
            call = f"{args[0]}.{op.name}({arguments})"
        elif op.operator and op.func in OPERATORS and not op.kwargs \
                and len(op.args) == op.func.nin:
            # As the interpreter called it: on NumPy scalars, their own arithmetic.
            symbol = OPERATORS[op.func]
            call = f"{symbol}{args[0]}" if len(args) == 1 else f"{args[0]} {symbol} {args[1]}"
        elif self._on_scalar(op):
            # NumPy's unary ufuncs take a real NumPy scalar in half the time of a 0-d
            # array, and give the same result (its type, bits and errors).
            call = f"{self.constant(op.func)}({args[0]}[()])"
        else:
            call = f"{self.constant(op.func)}({arguments})"
        if op.outputs is None:
            lines = [call]
        elif type(op.outputs) is tuple:
            lines = ["".join(f"r{s}, " for s in op.outputs) + f"= {call}"]
        else:
            lines = [f"r{op.outputs} = {call}"]
        for kind, slot, value in op.checks:
            if kind == "shape":
                lines.append(f"if r{slot}.shape != {value!r}: raise _GuardFailed")
            else:
                lines.append(f"if type(r{slot}) is not {self.constant(type(value))} or "
                             f"r{slot} != {self.constant(value)}: raise _GuardFailed")
        return lines

    def _on_scalar(self, op: Operation) -> bool:
        """Whether ``op`` is a unary ufunc on a real 0-d array register, whose result
        has that array's dtype (where the scalar is faster: not ``isfinite``)."""
        func = op.func
        if type(func) is not np.ufunc or func.nin != 1 or func.nout != 1 or op.kwargs \
                or len(op.args) != 1 or not isinstance(op.args[0], Register) \
                or type(op.outputs) is not int:
            return False
        found, made = self.kinds.get(op.args[0].slot), self.kinds.get(op.outputs)
        return found is not None and made is not None and found[0] is np.ndarray \
            and found[1] == () and found[2].kind == "f" and made[2] == found[2]

    def block(self, operations: list[Operation], indent: str = "    ") -> list[str]:
        """The lines of ``operations``, each run of calls made under a rule's own
        ``np.errstate(...)`` inside one ``with`` block."""
        lines, errstate = [], None
        self.elements = scalars.Elements()
        if any(type(op.func) is ScalarCode and op.func.kind == "arithmetic"
               for op in operations):  # before any NumPy call (which may warn)
            lines.append(indent + scalars.CHECK_ERRSTATE)
        for op in operations:
            if op.errstate != errstate:
                errstate = op.errstate
                if errstate is not None:
                    lines.append(f"{indent}with _errstate(**{errstate!r}):")
            inner = indent + ("    " if errstate is not None else "")
            lines += [inner + line for line in self.lines(op)]
        return lines


#: Operations whose result is new memory, which nothing else sees until it is used.
FRESH = frozenset({"zeros_like", "empty_like", "ones_like", "full_like", "copy", "array"})


#: Calls that only select or move elements: they set no floating-point flag, so a
#: repeat gives no warning to lose (``2 * x`` computed twice may warn twice).
MERGEABLE = frozenset({"__getitem__", "reshape", "transpose", "ravel", "squeeze", "swapaxes",
                       "diagonal", "flatten", "T", "mT", "real", "imag"})


def common_subexpressions(operations: list[Operation], exposed: set) -> tuple[list, dict]:
    """The operations, in their places, with the repeats of a call that only moves
    elements dropped (as None: ``x[1:]`` taken for two rules; see :data:`MERGEABLE`)
    and their results' readers renamed to the first; and the map from each dropped
    result to the one kept. Only in programs that write into no array (two equal
    results may be distinct memory), and never a value the function sees
    (``exposed``): each is an array of its own, as in the interpreter."""
    if any(op.mutates for op in operations):
        return list(operations), {}
    alias: dict[int, int] = {}
    seen: dict = {}
    kept: list = []
    for op in operations:
        if alias:
            op = _renamed(op, alias)
        key = _call_key(op) if type(op.outputs) is int and not op.checks \
            and op.errstate is None and op.name in MERGEABLE else None
        if key is not None and key in seen and op.outputs not in exposed:
            alias[op.outputs] = seen[key]
            kept.append(None)
            continue
        if key is not None and key not in seen:
            seen[key] = op.outputs
        kept.append(op)
    return kept, alias


def _renamed(op: Operation, alias: dict) -> Operation:
    copy = Operation(op.func, _rename(op.args, alias), _rename(op.kwargs, alias), op.name,
                     op.mutates, op.method)
    copy.outputs, copy.checks, copy.errstate = op.outputs, op.checks, op.errstate
    copy.operator = op.operator
    return copy


def _rename(x: Any, alias: dict) -> Any:
    if isinstance(x, Register):
        return Register(alias.get(x.slot, x.slot))
    if type(x) in (tuple, list):
        return type(x)(_rename(v, alias) for v in x)
    if type(x) is dict:
        return {k: _rename(v, alias) for k, v in x.items()}
    return x


def _call_key(op: Operation) -> Any:
    """A hashable description of a call: equal keys, equal results."""
    owner = getattr(op.func, "__self__", None)
    func = op.name if op.method else (id(owner), op.func.__name__) \
        if owner is not None and hasattr(op.func, "__name__") else id(op.func)

    def key(x: Any) -> Any:
        if isinstance(x, Register):
            return ("r", x.slot)
        t = type(x)
        if t in (tuple, list):
            return (t.__name__,) + tuple(key(v) for v in x)
        if t is dict:
            return ("dict",) + tuple((k, key(v)) for k, v in x.items())
        if t is slice:
            return ("slice", key(x.start), key(x.stop), key(x.step))
        if t is float:  # by its bits (0.0 == -0.0)
            return ("float", _DOUBLE(x))
        if x is None or t in (bool, int, str):
            return (t.__name__, x)
        return ("constant", id(x))

    return (func, key(op.args), key(op.kwargs))



def live_operations(operations: list[Operation], out_slots: set) -> list[Operation]:
    """The operations an output, a guard or a write needs, in their order.

    A write into fresh memory that no later operation reads is dropped too (the
    primal part of a reverse sweep that only its tangent needs), when that memory
    is only written and read by ufuncs, which take no views of it."""
    droppable = _written_and_read_by_ufuncs(operations) - out_slots
    needed = set(out_slots)
    kept = []
    for op in reversed(operations):
        target = _write_target(op)
        if target in droppable and target not in needed:
            continue
        outputs = op.outputs if type(op.outputs) is tuple else (op.outputs,)
        if op.mutates or op.checks or needed.intersection(outputs):
            kept.append(op)
            needed.update(op.registers())
    kept.reverse()
    return kept


def reuse_memory(operations: list[Operation], made_by_ufunc: dict[int, tuple],
                 kept_whole: set) -> None:
    """Let a ufunc write its result into an operand it reads last (``out=``), where
    that operand is memory an earlier ufunc made, of the result's dtype and size and
    laid out as the result (the same strides, or both C-contiguous: then seen in the
    result's shape), so that every later call sees what the interpreter's would, bit
    for bit. The operand must only ever be read by ufuncs (which keep no view of
    it), be at least :data:`REUSE_MIN_BYTES` large, and not be in ``kept_whole`` (the
    values the function or the result holds; a result seen in another shape is a
    view, which is never one of them). ``operations``: the program's, in order."""
    last_reader: dict[int, Operation] = {}
    viewed: set[int] = set()
    for op in operations:
        plain_ufunc = type(op.func) is np.ufunc and not op.kwargs
        for slot in op.registers():
            last_reader[slot] = op
            if not plain_ufunc:
                viewed.add(slot)
    for op in operations:
        made = made_by_ufunc.get(op.outputs) if type(op.outputs) is int else None
        if made is None or op.kwargs or op.func.nout != 1 or made[3] < REUSE_MIN_BYTES:
            continue
        shape, dtype, _, nbytes, contiguous = made
        for arg in op.args:
            slot = arg.slot if isinstance(arg, Register) else None
            if slot is None or last_reader[slot] is not op or slot in viewed \
                    or slot in kept_whole or slot not in made_by_ufunc:
                continue
            other = made_by_ufunc[slot]
            if other[:3] == made[:3]:
                op.into = (slot, None)
                break
            if other[1:] == (dtype, other[2], nbytes, True) and contiguous \
                    and op.outputs not in kept_whole:  # (a view: its base is not None)
                op.into = (slot, shape)
                break


def _write_target(op: Operation) -> int | None:
    """The register a method writes into (``x[i] = v``, ``x.fill(v)``), if any."""
    if op.mutates and op.method and op.args and isinstance(op.args[0], Register):
        return op.args[0].slot
    return None


def _written_and_read_by_ufuncs(operations: list[Operation]) -> set:
    """Registers of fresh memory whose every use is a write into them or a ufunc."""
    fresh = {op.outputs for op in operations if op.name in FRESH and type(op.outputs) is int}
    for op in operations:
        target = _write_target(op)
        ufunc = isinstance(op.func, np.ufunc) or isinstance(getattr(op.func, "__self__", None),
                                                            np.ufunc)
        if target is not None:
            fresh.difference_update(registers_in((op.args[1:], op.kwargs)))
        elif not ufunc or op.mutates:
            fresh.difference_update(op.registers())
    return fresh
