"""A recorded program: the NumPy calls of one transform call, as Python code.

The operations a :class:`~dualad.replay.tracing.Recorder` collected become the
body of one generated function, ``replay(r0, r1, ...)``: one line per call,
registers as local variables, constants bound by name. Operations whose results
no output needs are dropped (never those that write into an array, nor
guards). The replay makes no Dual, runs no rule and dispatches nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .tracing import Operation, Recorder, Register, Traced

__all__ = ["GuardFailed", "Program"]


#: Ufuncs replayed as Python operators (see ``Program._lines``).
OPERATORS = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/",
             np.negative: "-"}


class GuardFailed(Exception):
    """A value the recording branched on differs in this call."""


class Program:
    """A compiled replay: ``program(*inputs)`` gives the output leaves.

    ``outputs`` lists, per output leaf, a Traced register or a constant. A
    constant array is copied at each call, so that a caller who writes into a
    result never changes the next one.
    """

    def __init__(self, recorder: Recorder, inputs: list[Traced], outputs: list) -> None:
        self._names: dict[int, str] = {}
        self._namespace: dict[str, Any] = {"_GuardFailed": GuardFailed, "_copy": np.copy}
        out_slots, results = set(), []
        for o in outputs:
            if isinstance(o, Traced):
                out_slots.add(o._slot)
                results.append(f"r{o._slot}")
            elif isinstance(o, np.ndarray):
                results.append(f"_copy({self._constant(o)})")
            else:
                results.append(self._expr(o))
        kept = live_operations(recorder.operations, out_slots)
        # Registers holding Python values (a guarded float(), int(), ...) rather
        # than NumPy arrays or scalars.
        self._python_values = {slot for op in kept for kind, slot, _ in op.checks
                               if kind == "equal"}
        lines = [line for op in kept for line in self._lines(op)]
        params = ", ".join(f"r{t._slot}" for t in inputs)
        body = "\n    ".join(lines + [f"return [{', '.join(results)}]"])
        self.source = f"def replay({params}):\n    {body}\n"
        exec(compile(self.source, "<dualad replay>", "exec"), self._namespace)
        self.run: Callable = self._namespace["replay"]
        self.operations = len(kept)

    def __call__(self, *inputs: Any) -> list:
        return self.run(*inputs)

    def _constant(self, value: Any) -> str:
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"c{len(self._names)}"
            self._namespace[name] = value
        return name

    def _expr(self, x: Any) -> str:
        if isinstance(x, Register):
            return f"r{x.slot}"
        t = type(x)
        if t is tuple:
            return "(" + "".join(self._expr(v) + ", " for v in x) + ")"
        if t is list:
            return "[" + ", ".join(self._expr(v) for v in x) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {self._expr(v)}" for k, v in x.items()) + "}"
        if x is None or t is bool or t is int or t is str or (t is float and np.isfinite(x)):
            return repr(x)
        return self._constant(x)

    def _on_arrays(self, args: tuple) -> bool:
        """Whether a NumPy array or scalar is among the operands, as the operator
        form needs (Python floats alone would stay Python floats)."""
        return any(isinstance(a, Register) and a.slot not in self._python_values
                   or isinstance(a, (np.ndarray, np.generic)) for a in args)

    def _lines(self, op: Operation) -> list[str]:
        args = [self._expr(a) for a in op.args]
        arguments = "".join(a + ", " for a in args[op.method:]) + \
            "".join(f"{k}={self._expr(v)}, " for k, v in op.kwargs.items())
        if op.name == "__getitem__":
            call = f"{args[0]}[{args[1]}]"
        elif op.name == "__setitem__":
            call = f"{args[0]}[{args[1]}] = {args[2]}"
        elif op.method:
            call = f"{args[0]}.{op.name}({arguments})"
        elif (op.func in OPERATORS and not op.kwargs and len(op.args) == op.func.nin
              and self._on_arrays(op.args)):
            # x * y is np.multiply(x, y) for arrays, bit for bit, and on the NumPy
            # scalars of 0-d work it skips the ufunc machinery (about 10x faster).
            symbol = OPERATORS[op.func]
            call = f"{symbol}{args[0]}" if len(args) == 1 else f"{args[0]} {symbol} {args[1]}"
        else:
            call = f"{self._constant(op.func)}({arguments})"
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
                lines.append(f"if type(r{slot}) is not {self._constant(type(value))} or "
                             f"r{slot} != {self._constant(value)}: raise _GuardFailed")
        return lines


def live_operations(operations: list[Operation], out_slots: set) -> list[Operation]:
    """The operations an output, a guard or a write needs, in their order."""
    needed = set(out_slots)
    kept = []
    for op in reversed(operations):
        outputs = op.outputs if type(op.outputs) is tuple else (op.outputs,)
        if op.mutates or op.checks or needed.intersection(outputs):
            kept.append(op)
            needed.update(_registers(op.args))
            needed.update(_registers(op.kwargs))
    kept.reverse()
    return kept


def _registers(x: Any):
    if isinstance(x, Register):
        yield x.slot
    elif type(x) in (tuple, list):
        for v in x:
            yield from _registers(v)
    elif type(x) is dict:
        for v in x.values():
            yield from _registers(v)
