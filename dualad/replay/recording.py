"""A recorded call, compiled: the code of each operation, and how to check a new call.

A :class:`Recording` is made from one call of a transform run by the
interpreter on traced arrays (see :mod:`dualad.replay.tracing`), during which
the user's function ran on :class:`~dualad.replay.live.Live` values
(:mod:`dualad.replay.live`). The NumPy calls the interpreter made fall in three
parts: before the function was called (the transform's seeding), during each of
the function's operations, and after it returned (tangents read, reverse sweep,
Jacobian assembled). Each part becomes a generated Python function of the
register list ``R``: the operations' own functions run in lockstep with the
user's function, the last one builds the transform's result. Calls whose
results nothing needs are dropped; each register is freed after its last use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optree

from .live import Live, LiveRef, Session, Step, matches, template
from .program import Emitter, _registers, live_operations
from .tracing import Operation, Recorder, Register, Traced

__all__ = ["Recording", "Unreplayable"]


class Unreplayable(Exception):
    """The recorded call cannot be replayed (the reason is the message)."""


class NewLive:
    """A result: a new Live value holding register ``slot`` (or a copy of a constant)."""

    __slots__ = ("slot", "constant")

    def __init__(self, slot: int | None, constant: Any = None) -> None:
        self.slot, self.constant = slot, constant


class Slot:
    """A result: the plain value of register ``slot`` (handed out)."""

    __slots__ = ("slot", "array")

    def __init__(self, slot: int, array: bool) -> None:
        self.slot, self.array = slot, array


class Named:
    """A result: a named tuple of results."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: type, items: list) -> None:
        self.kind, self.items = kind, items


class Fresh:
    """A result: a new copy of a constant array (the caller may write into it)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class Recording:
    """The compiled replay of one signature (see the module docstring).

    ``inputs`` are the registers of the traced inputs; ``arguments`` says how the
    function's arguments are made from the call's (``("arg", i)``: the caller's own
    argument ``i``; ``("tree", treedef, n)``: a pytree of ``n`` new Live values);
    ``output`` is the template the function's result must match.
    """

    def __init__(self, session: Session, recorder: Recorder, inputs: list,
                 arguments: list, out_template: Any, boundaries: tuple[int, int],
                 result_leaves: list, result_tree: Any) -> None:
        if session.broken:
            raise Unreplayable(session.broken)
        operations = recorder.operations
        called, returned = boundaries
        steps: list[Step] = session.steps
        spans = [(0, called)] + [(s.first, s.last) for s in steps] + \
            [(returned, len(operations))]
        for (_, end), (start, _) in zip(spans, spans[1:]):
            if start != end:
                raise Unreplayable("NumPy calls on recorded values outside the operations")
        self.steps = steps
        self.nested = session.nested
        self.inputs = [t._slot for t in inputs]
        self.arguments = arguments
        self.output = out_template
        self.registers = recorder.registers
        self.result_tree = result_tree
        self.lives = session.count

        # What must be computed: the result, every value handed to the function,
        # every value a write changes; a guard or a write is never dropped.
        results = [self._result_spec(leaf) for leaf in result_leaves]
        wanted = {spec.slot for spec in results if isinstance(spec, Slot)}
        inputs_count = sum(a[2] for a in arguments if a[0] == "tree")
        known = set(range(inputs_count))
        if any(j not in session.value_slots for j in known):
            raise Unreplayable("an argument whose value is not recorded")
        self.argument_slots = [session.value_slots[j] for j in range(inputs_count)]
        wanted.update(self.argument_slots)
        self.held: set[int] = set()  # Live values a later step gives back or rebinds
        for step in steps:
            step.result = self._step_result(step.result, known, session, wanted,
                                            step.template[0].index, self.held)
            wanted.update(slot for _, slot in step.rebinds)
            self.held.update(index for index, _ in step.rebinds)
        kept = set(map(id, live_operations(operations, wanted)))
        emitter = Emitter()
        emitter.python_values = {slot for op in operations for kind, slot, _ in op.checks
                                 if kind == "equal"} | recorder.float_slots
        parts = [[op for op in operations[a:b] if id(op) in kept] for a, b in spans]
        last_use: dict[int, int] = {}
        for part_index, part in enumerate(parts):
            for op in part:
                for slot in _registers((op.args, op.kwargs)):
                    last_use[slot] = part_index
        produced_in: dict[int, int] = {}
        for part_index, part in enumerate(parts):
            for op in part:
                outs = op.outputs if type(op.outputs) is tuple else (op.outputs,)
                for slot in outs:
                    if slot is not None:
                        produced_in[slot] = part_index
        needed_later: list[set] = [set() for _ in parts]
        for slot, last in last_use.items():
            first = produced_in.get(slot, -1)
            for part_index in range(max(first, 0), last):
                needed_later[part_index].add(slot)
        for slot in wanted:
            part_index = produced_in.get(slot)
            if part_index is not None:
                needed_later[part_index].add(slot)
        source = []
        for part_index, part in enumerate(parts):
            source += self._function(f"part{part_index}", part, emitter,
                                     needed_later[part_index], last_use, part_index,
                                     results if part_index == len(parts) - 1 else None)
        self.source = "\n".join(source) + "\n"
        namespace = emitter.namespace
        exec(compile(self.source, "<dualad replay>", "exec"), namespace)
        self.prepare: Callable = namespace["part0"]
        for step_index, step in enumerate(steps):
            step.run = namespace[f"part{step_index + 1}"]
        self.complete: Callable = namespace[f"part{len(parts) - 1}"]
        self.operations = sum(len(part) for part in parts)

    @staticmethod
    def _function(name: str, part: list[Operation], emitter: Emitter, stores: set,
                  last_use: dict, index: int, results: list | None) -> list[str]:
        reads = sorted({slot for op in part for slot in _registers((op.args, op.kwargs))}
                       - {s for op in part for s in (op.outputs if type(op.outputs) is tuple
                                                     else (op.outputs,)) if s is not None})
        lines = [f"def {name}(R):"]
        lines += [f"    r{slot} = R[{slot}]" for slot in reads]
        lines += emitter.block(part)
        produced = {s for op in part for s in (op.outputs if type(op.outputs) is tuple
                                               else (op.outputs,)) if s is not None}
        lines += [f"    R[{slot}] = r{slot}" for slot in sorted(stores & produced)]
        lines += [f"    R[{slot}] = None" for slot in reads
                  if last_use.get(slot) == index and slot not in stores]
        if results is not None:
            items = []
            for spec in results:
                if isinstance(spec, Slot):
                    reg = f"r{spec.slot}" if spec.slot in produced or spec.slot in reads \
                        else f"R[{spec.slot}]"
                    items.append(f"_copy({reg})" if spec.array else reg)
                else:
                    items.append(f"_copy({emitter.constant(spec)})"
                                 if isinstance(spec, np.ndarray) else emitter.constant(spec))
            lines.append(f"    return [{', '.join(items)}]")
        return lines if len(lines) > 1 else lines + ["    pass"]

    @staticmethod
    def _result_spec(leaf: Any) -> Any:
        """A leaf of the transform's result: a register (copied if an array: a result
        is the caller's to write into) or a constant."""
        if isinstance(leaf, Traced):
            return Slot(leaf._slot, True)
        if isinstance(leaf, (np.ndarray, np.generic)) or type(leaf) in (float, int, bool,
                                                                         complex):
            return leaf
        raise Unreplayable(f"a result of type {type(leaf).__name__}")

    @staticmethod
    def _step_result(result: Any, known: set, session: Session, wanted: set, own: int,
                     held: set) -> Any:
        """How an operation's result is built from the registers (see ``run_step``)."""
        kind = type(result)
        if kind is Live:
            if result._index in known:
                if result._index != own:
                    held.add(result._index)
                return LiveRef(result._index)
            known.add(result._index)
            value = session.value_slots.get(result._index)
            if value is None:  # a constant, or a value read where the recording cannot see
                raise Unreplayable("a value computed outside the recording")
            wanted.add(value)
            return NewLive(value)
        if isinstance(result, (tuple, list)):
            items = [Recording._step_result(r, known, session, wanted, own, held)
                     for r in result]
            return Named(kind, items) if kind is not tuple and kind is not list \
                else kind(items)
        if kind is np.ndarray and result.dtype.hasobject:
            raise Unreplayable("an operation returned an object array")
        if kind is np.ndarray and id(result) not in session.handed:
            raise Unreplayable("an array computed outside the recording")
        handed = session.handed.get(id(result))
        if handed is not None and handed[0] is result:
            wanted.add(handed[1]._slot)
            return Slot(handed[1]._slot, False)
        if isinstance(result, np.generic) or result is None or kind in (bool, int, float,
                                                                       complex, str):
            slot = session.scalar_slots.get(id(result))
            if slot is not None:
                wanted.add(slot)
                return Slot(slot, False)
            return result
        raise Unreplayable(f"an operation returned a {kind.__name__}")

    # -- a replayed call ---------------------------------------------------------------

    def run_step(self, step: Step, session: Session, live: Live) -> Any:
        """Run an operation's code on this call's registers; its result for the user."""
        registers = session.registers
        step.run(registers)
        result = self._build(step.result, session, registers, live)
        for index, slot in step.rebinds:
            session.targets[index]._value = registers[slot]
        return result

    def _build(self, spec: Any, session: Session, registers: list, own: Live) -> Any:
        kind = type(spec)
        if kind is NewLive:
            live = session.new_live(registers[spec.slot] if spec.slot is not None
                                    else _copied(spec.constant))
            if live._index in self.held:
                session.targets[live._index] = live
            return live
        if kind is Slot:
            value = registers[spec.slot]
            session.handed_out[spec.slot] = value
            return value
        if kind is LiveRef:
            return own if spec.index == own._index else session.targets[spec.index]
        if kind is Fresh:
            return spec.array.copy()
        if kind is Named:
            return spec.kind(*(self._build(s, session, registers, own) for s in spec.items))
        if kind is tuple or kind is list:
            return kind(self._build(s, session, registers, own) for s in spec)
        return spec

    def output_matches(self, out: Any, session: Session) -> bool:
        leaves, tree = optree.tree_flatten(out, none_is_leaf=True)
        expected_tree, expected = self.output
        return tree == expected_tree and len(leaves) == len(expected) and all(
            matches(e, v, session) for e, v in zip(expected, leaves))


def _copied(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def output_template(out: Any, session: Session) -> tuple:
    leaves, tree = optree.tree_flatten(out, none_is_leaf=True)
    return tree, [template(leaf, session) for leaf in leaves]


_ = (Register,)
