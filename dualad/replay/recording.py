"""A recorded call: the code of each operation, and how to check a new call.

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

Generating and compiling that code costs ten to twenty interpreted calls, so a
recording first replays by running its calls directly (:mod:`.direct`), and is
compiled (:meth:`Recording.compile`) once it has been replayed often enough.
"""

from __future__ import annotations

import functools
import re
import struct
from typing import Any

import numpy as np
import optree

from ..pytrees import tree_flatten
from .direct import Code, direct_code
from .live import BINARY, MISS, UNARY, Live, Session, Step
from .operations import Operation, argument_leaves
from .program import Emitter, _copy, common_subexpressions, live_operations, reuse_memory
from .scalars import unrolled
from .templates import (ArgRef, Bits, FloatIn, LiveRef, Named, NewLive, Own, Slot, Static, bits,
                        matches, template)
from .tracing import Recorder, Traced

__all__ = ["Recording", "Unreplayable"]


class Unreplayable(Exception):
    """The recorded call cannot be replayed (the reason is the message)."""


class Recording:
    """The compiled replay of one signature (see the module docstring).

    ``inputs`` are the registers of the traced inputs; ``arguments`` says how the
    function's arguments are made from the call's (``("arg", i)``: the caller's own
    argument ``i``; ``("tree", treedef, n, is_leaf)``: a pytree of ``n`` new Live
    values); ``output`` is the template the function's result must match.
    """

    def __init__(self, session: Session, recorder: Recorder, inputs: list,
                 arguments: list, out_template: Any, boundaries: tuple[int, int],
                 result_leaves: list, result_tree: Any, other_arguments: list) -> None:
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
        self.other_arguments = other_arguments  # traced arguments not differentiated
        self.arguments = arguments
        self.output = out_template
        self.registers = recorder.registers
        #: The registers of floats the operations take as inputs (loaded by their
        #: steps; kept to the call's end, for the interpreter should it take over).
        self.float_inputs = {item.slot for step in session.steps
                             for item in argument_leaves(step.template)
                             if type(item) is FloatIn}
        self.result_tree = result_tree

        # What must be computed: the result, every value handed to the function,
        # every value a write changes; a guard or a write is never dropped.
        results = [self._result_spec(leaf) for leaf in result_leaves]
        wanted: set[int] = set()  # the values the function sees
        inputs_count = sum(a[2] for a in arguments if a[0] == "tree")
        known = set(range(inputs_count))
        if any(j not in session.value_slots for j in known):
            raise Unreplayable("an argument whose value is not recorded")
        self.argument_slots = [session.value_slots[j] for j in range(inputs_count)]
        tree, expected = out_template
        self.single_output = expected[0].index if optree.treespec_is_leaf(tree) \
            and type(expected[0]) is LiveRef else None
        wanted.update(self.argument_slots)
        self.held: set[int] = set()  # Live values a later step gives back or rebinds
        for step in steps:
            step.result = self._step_result(step.result, known, session, wanted,
                                            step.template[0].index, self.held, step.scalars)
            wanted.update(slot for _, slot in step.rebinds)
            self.held.update(index for index, _ in step.rebinds)
        # Repeats of a pure call dropped (never a value the function sees), then the
        # calls nothing needs.
        operations, alias = common_subexpressions(operations, wanted | set(self.inputs))
        for spec in results:  # a result merged with another is copied (see below)
            if isinstance(spec, Slot):
                spec.slot = alias.get(spec.slot, spec.slot)
        visible = wanted | set(self.inputs)
        wanted |= {spec.slot for spec in results if isinstance(spec, Slot)}
        kept = set(map(id, live_operations([op for op in operations if op is not None],
                                           wanted)))
        parts = [[op for op in operations[a:b] if id(op) in kept] for a, b in spans]
        slots = [spec.slot for spec in results if isinstance(spec, Slot)]
        for spec in results:  # a result shared with the function, or twice in it: a copy
            if isinstance(spec, Slot):
                spec.array = spec.slot in visible or slots.count(spec.slot) > 1
        self.array_registers = self.registers  # those after them hold Python floats
        self.operations = sum(len(part) for part in parts)
        self.replays = 0  # replayed to the end, by the direct code
        #: What :meth:`compile` needs, until it has run.
        self._pending: tuple | None = (parts, results, wanted, recorder.kinds,
                                       recorder.made_by_ufunc, recorder.float_slots)
        last_use, needed_later = _lifetimes(parts, results, wanted)
        kept_whole = wanted | self.float_inputs
        frees = [sorted({slot for op in part for slot in (*op.registers(),
                                                          *_outputs(op))
                         if last_use.get(slot, index) == index and slot not in kept_whole
                         and slot not in needed_later[index]})
                 for index, part in enumerate(parts[:-1])] + [[]]
        #: How calls are replayed: the recorded calls run directly at first, the
        #: generated code once :meth:`compile` has run.
        self.code: Code = direct_code(self, parts, frees, results)
        self.source: str | None = None  # the generated code

    def compile(self) -> None:
        """Generate and compile the recording's code (see the module docstring), and
        replay the calls that start from now on with it. Costs some ten to twenty
        interpreted calls; :class:`~dualad.replay.cache.Replayed` calls it once a
        recording has been replayed :data:`~dualad.replay.cache.COMPILE_AFTER` times."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        parts, results, wanted, kinds, made_by_ufunc, float_slots = pending
        steps = [Step(step.name, step.template, step.errstate) for step in self.steps]
        for copy, step in zip(steps, self.steps):
            copy.result, copy.rebinds = step.result, step.rebinds
        emitter = Emitter()
        emitter.kinds = kinds
        operations = [op for part in parts for op in part]
        emitter.python_values = {slot for op in operations for kind, slot, _ in op.checks
                                 if kind == "equal"} | float_slots
        reuse_memory([op for part in parts for op in part], made_by_ufunc,
                     wanted | set(self.inputs) | emitter.python_values)
        parts, registers = unrolled(parts, kinds, wanted, self.array_registers)
        last_use, needed_later = _lifetimes(parts, results, wanted)
        emitter.namespace.update(_STEP_NAMESPACE)
        source = self._function("part0", parts[0], emitter, needed_later[0], last_use, 0)
        for index, (step, part) in enumerate(zip(steps, parts[1:-1]), start=1):
            source += self._function(f"part{index}", part, emitter, needed_later[index],
                                     last_use, index, step=step)
        source += self._function(f"part{len(parts) - 1}", parts[-1], emitter,
                                 needed_later[-1], last_use, len(parts) - 1, results=results)
        source += self._entry_source(emitter, bool(parts[0]), registers)
        namespace = emitter.namespace
        source = "\n".join(source) + "\n"
        exec(_compiled(source), namespace)
        for index, step in enumerate(steps, start=1):
            step.run = namespace[f"part{index}"]
        self.source = source
        self.code = Code(namespace["enter"], steps + [Step(None, None, None)],
                         namespace[f"part{len(parts) - 1}"], registers > self.array_registers)

    def _function(self, name: str, part: list[Operation], emitter: Emitter, stores: set,
                  last_use: dict, index: int, results: list | None = None,
                  step: Step | None = None) -> list[str]:
        """The source of one part: ``part(R)`` for the transform's own parts (the
        last returns the result's leaves), ``part(S, live, args, kwargs)`` for an
        operation: the check of its arguments, its NumPy calls, its result (or
        ``_MISS`` when the call is not the recorded one)."""
        outputs = {s for op in part for s in _outputs(op)}
        reads = sorted({slot for op in part for slot in op.registers()}
                       - outputs)
        if step is None:
            lines = [f"def {name}(R):"]
        else:
            lines = [f"def {name}(S, live{_PARAMETERS.get(step.name, ', args, kwargs')}):"]
            loads: list[tuple[str, int]] = []
            checks = _conditions(step, emitter, loads)
            lines.append(f"    if not ({' and '.join(checks) or 'True'}): return _MISS")
            if step.errstate is not None:
                lines.append(f"    if _geterr() != {emitter.constant(step.errstate)}: "
                             "return _MISS")
            lines.append("    R = S.registers")
            lines += [f"    R[{slot}] = {expr}" for expr, slot in loads]
        body = [f"    r{slot} = R[{slot}]" for slot in reads]
        body += emitter.block(part)
        body += [f"    R[{slot}] = r{slot}" for slot in sorted(stores & outputs)]
        body += [f"    R[{slot}] = None" for slot in reads  # (Python floats: no need)
                 if last_use.get(slot) == index and slot not in stores
                 and slot < self.array_registers and slot not in self.float_inputs]
        if step is not None and any("_GuardFailed" in line for line in body):
            lines.append("    try:")
            lines += ["    " + line for line in body]
            lines.append("    except _GuardFailed: return _MISS")
        else:
            lines += body
        if step is not None:
            made: list[str] = []
            result = self._result_expr(step.result, emitter, made, outputs | set(reads))
            lines += made
            lines.append(f"    result = {result}")
            for live_index, slot in step.rebinds:
                lines.append(f"    S.targets[{live_index}]._value = R[{slot}]")
            lines.append("    S.position += 1")
            lines.append("    return result")
        if results is not None:
            items = []
            for spec in results:
                if isinstance(spec, Slot):
                    reg = f"r{spec.slot}" if spec.slot in outputs or spec.slot in reads \
                        else f"R[{spec.slot}]"
                    items.append(f"_copy({reg})" if spec.array else reg)
                else:
                    items.append(f"_copy({emitter.constant(spec)})"
                                 if isinstance(spec, np.ndarray) else emitter.constant(spec))
            lines.append(f"    return {_tree_expr(self.result_tree, items, emitter)}")
        lines = _without_unread_tuples(lines)
        return lines if len(lines) > 1 else lines + ["    pass"]

    def _result_expr(self, spec: Any, emitter: Emitter, made: list, local: set) -> str:
        """An expression building an operation's result for the function (``made``:
        the lines making its new Live values; ``local``: the registers the part holds
        in local variables)."""
        kind = type(spec)
        if kind is NewLive:
            name = f"live{spec.index}"
            value = f"r{spec.slot}" if spec.slot in local else f"R[{spec.slot}]"
            made += _new_live_lines(name, spec.index, value,
                                    spec.index in self.held)
            return name
        if kind is Slot:
            return f"R[{spec.slot}]"
        if kind is Own:
            return "live"
        if kind is LiveRef:
            return f"S.targets[{spec.index}]"
        if kind is tuple or kind is list:
            items = "".join(self._result_expr(item, emitter, made, local) + ", "
                            for item in spec)
            return f"({items})" if kind is tuple else f"[{items}]"
        if kind is Named:
            items = ", ".join(self._result_expr(item, emitter, made, local)
                              for item in spec.items)
            return f"{emitter.constant(spec.kind)}({items})"
        return emitter.expr(spec)

    @staticmethod
    def _result_spec(leaf: Any) -> Any:
        """A leaf of the transform's result: a register (copied if an array: a result
        is the caller's to write into) or a constant (an array copied too: the recording
        call returns the leaf itself, which its caller may write into)."""
        if isinstance(leaf, Traced):
            return Slot(leaf._slot, True)
        if isinstance(leaf, (np.ndarray, np.generic)) or type(leaf) in (float, int, bool,
                                                                         complex):
            return _copy(leaf)
        raise Unreplayable(f"a result of type {type(leaf).__name__}")

    @staticmethod
    def _step_result(result: Any, known: set, session: Session, wanted: set, own: int,
                     held: set, scalars: dict, path: tuple = ()) -> Any:
        """How an operation's result is built from the registers (see ``run_step``)."""
        kind = type(result)
        if kind is Live:
            if result._index in known:
                if result._index == own:
                    return Own()
                held.add(result._index)
                return LiveRef(result._index)
            known.add(result._index)
            value = session.value_slots.get(result._index)
            if value is None:  # a constant, or a value read where the recording cannot see
                raise Unreplayable("a value computed outside the recording")
            wanted.add(value)
            return NewLive(result._index, value)
        if isinstance(result, (tuple, list)):
            items = [Recording._step_result(r, known, session, wanted, own, held, scalars,
                                            path + (i,))
                     for i, r in enumerate(result)]
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
            slot = scalars.get(path)
            if slot is not None:
                wanted.add(slot)
                return Slot(slot, False)
            return result
        raise Unreplayable(f"an operation returned a {kind.__name__}")

    # -- a replayed call ---------------------------------------------------------------

    def _entry_source(self, emitter: Emitter, prepare: bool, registers: int) -> list[str]:
        """The source of ``enter``: the inputs into their registers, the transform's
        seeding (``prepare``), then the function's arguments: new Live values where
        the interpreter passes its Duals, the caller's own arguments elsewhere."""
        lines = ["def enter(S, leaves, args):",
                 f"    R = S.registers = [None] * {registers}"]
        if self.held:
            lines.append("    S.targets = {}")
        count = len(self.inputs) - len(self.other_arguments)
        for k, slot in enumerate(self.inputs[:count]):
            lines += [f"    v = leaves[{k}]",
                      f"    R[{slot}] = v if type(v) is _ndarray else _asarray(v)"]
        for slot, i in zip(self.inputs[count:], self.other_arguments):
            lines.append(f"    R[{slot}] = args[{i}]")
        if prepare:
            lines.append("    part0(R)")
        items, at = [], 0
        for item in self.arguments:
            if item[0] == "arg":
                items.append(f"args[{item[1]}]")
                continue
            lives = []
            for _ in range(item[2]):
                lines += _new_live_lines(f"live{at}", at, f"R[{self.argument_slots[at]}]",
                                         at in self.held)
                lives.append(f"live{at}")
                at += 1
            items.append(lives[0] if item[3] else
                         f"{emitter.constant(item[1])}.unflatten([{', '.join(lives)}])")
        lines.append(f"    S.count = {at}")
        lines.append(f"    return [{', '.join(items)}]")
        return lines

    def output_matches(self, out: Any, session: Session) -> bool:
        """Whether the function returned what the recording's function returned."""
        if self.single_output is not None:
            return type(out) is Live and out._index == self.single_output \
                and out._session is session
        leaves, tree = tree_flatten(out, none_is_leaf=True)
        expected_tree, expected = self.output
        return tree == expected_tree and len(leaves) == len(expected) and all(
            matches(e, v, session) for e, v in zip(expected, leaves))


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> Any:
    """The code of a recording's source (the same source again, as a function
    recorded anew after its path changed back, is compiled once: constants are
    bound by name, so the code holds nothing of a call)."""
    return compile(source, "<dualad replay>", "exec")


def _lifetimes(parts: list[list[Operation]], results: list, wanted: set
               ) -> tuple[dict[int, int], list[set]]:
    """For each register, the last part that reads it; for each part, the registers
    it must leave in ``R`` for a later part (or for the function: ``wanted``)."""
    last_use: dict[int, int] = {}
    produced_in: dict[int, int] = {}
    for index, part in enumerate(parts):
        for op in part:
            for slot in op.registers():
                last_use[slot] = index
            for slot in op.outputs if type(op.outputs) is tuple else (op.outputs,):
                if slot is not None:
                    produced_in[slot] = index
    for spec in results:  # the result reads its registers in the last part
        if isinstance(spec, Slot):
            last_use[spec.slot] = len(parts) - 1
    needed_later: list[set] = [set() for _ in parts]
    for slot, last in last_use.items():
        for index in range(max(produced_in.get(slot, 0), 0), last):
            needed_later[index].add(slot)
    for slot in wanted:
        if slot in produced_in:
            needed_later[produced_in[slot]].add(slot)
    return last_use, needed_later


def _outputs(op: Operation) -> tuple:
    """The registers an operation writes its results into."""
    found = op.outputs if type(op.outputs) is tuple else (op.outputs,)
    return tuple(slot for slot in found if slot is not None)


def _tree_expr(tree: Any, items: list[str], emitter: Emitter) -> str:
    """An expression building the pytree ``tree`` of the leaf expressions ``items``."""
    def build(node: Any) -> str:
        kind = type(node)
        if kind is int:
            return items[node]
        if kind is tuple:
            return "(" + "".join(build(child) + ", " for child in node) + ")"
        if kind is list:
            return "[" + ", ".join(build(child) for child in node) + "]"
        if kind is dict:
            return "{" + ", ".join(f"{emitter.constant(key)}: {build(child)}"
                                   for key, child in node.items()) + "}"
        return f"{emitter.constant(tree)}.unflatten([{', '.join(items)}])"

    shape = tree.unflatten(list(range(len(items))))
    expr = build(shape)
    return expr if ".unflatten(" not in expr else \
        f"{emitter.constant(tree)}.unflatten([{', '.join(items)}])"


_TUPLE_MADE = re.compile(r"\s*(r\d+) = \((r\d+_\d+, )+\)$")


def _without_unread_tuples(body: list[str]) -> list[str]:
    """``body`` without the tuples of Python floats that no later line reads (the
    scalar code packs each value it makes; most are read element by element)."""
    kept: list[str] = []
    for i, line in enumerate(body):
        made = _TUPLE_MADE.match(line)
        if made is not None:
            name = re.compile(rf"\b{made.group(1)}\b")
            if not any(name.search(later) for later in body[i + 1:]):
                continue
        kept.append(line)
    return kept


def _new_live_lines(name: str, index: int, value: str, held: bool) -> list[str]:
    """Lines making Live value number ``index`` (kept in ``S.targets`` if ``held``: a
    later operation gives it back or writes into it)."""
    lines = [f"    {name} = _object_new(_Live)", f"    {name}._session = S",
             f"    {name}._index = {index}", f"    {name}._value = {value}"]
    if held:
        lines.append(f"    S.targets[{index}] = {name}")
    return lines


_PACK = struct.Struct("d").pack
_STEP_NAMESPACE = {"_MISS": MISS, "_geterr": np.geterr, "_Live": Live, "_pack": _PACK,
                   "_bits": bits, "_matches": matches, "_ndarray": np.ndarray,
                   "_asarray": np.asarray, "_object_new": object.__new__}


#: The parameters of an operation's code after ``(S, live``: the operators' own.
_PARAMETERS = {**{name: ", other" for name in BINARY}, **{name: "" for name in UNARY}}


def _conditions(step: Step, emitter: Emitter, loads: list) -> list[str]:
    """Python conditions: the call's arguments are those the step's template holds
    (``loads`` gains ``(expression, register)`` of each float taken as an input)."""
    own_ref, args, kwargs = step.template
    own = own_ref.index
    found = [f"live._index == {own}"]
    if step.name in UNARY:
        return found
    if step.name in BINARY:  # called as method(self, other): no tuple, no dict
        return found + _condition("other", args[0], emitter, own, loads)
    if step.name == "__array_function__":  # (func, types, args, kwargs): types follow
        found += _condition("args[0]", args[0], emitter, own, loads)
        found += _condition("args[2]", args[2], emitter, own, loads)
        found += _condition("args[3]", args[3], emitter, own, loads)
        found.insert(1, "len(args) == 4")
    else:  # args is the tuple of a call's positional arguments
        found.append(f"len(args) == {len(args)}")
        for i, item in enumerate(args):
            found += _condition(f"args[{i}]", item, emitter, own, loads)
    found += ["not kwargs"] if kwargs is None else _condition("kwargs", kwargs, emitter, own,
                                                              loads)
    return found


def _condition(expr: str, expected: Any, emitter: Emitter, own: int, loads: list
               ) -> list[str]:
    kind = type(expected)
    if kind is FloatIn:  # any value of its type, an input of the operation's code
        loads.append((expr, expected.slot))
        return [f"type({expr}) is {emitter.constant(expected.kind)}"]
    if kind is LiveRef:
        if expected.index == own:  # the value whose operation it is (np.sin(x): x)
            return [f"{expr} is live"]
        return [f"type({expr}) is _Live", f"{expr}._index == {expected.index}",
                f"{expr}._session is S"]
    if kind is Bits:
        if expected.kind is float:  # the same object first: a literal of the function
            return [f"({expr} is {emitter.constant(expected.value)} or type({expr}) is float "
                    f"and _pack({expr}) == {expected.data!r})"]
        if expected.kind is np.ndarray:  # shape, strides and dtype first: they cost less
            dtype, shape, strides, data = expected.data
            return [f"type({expr}) is _ndarray", f"{expr}.shape == {shape!r}",
                    f"{expr}.strides == {strides!r}",
                    f"{expr}.dtype == {emitter.constant(dtype)}",
                    f"{expr}.tobytes() == {emitter.constant(data)}"]
        return [f"type({expr}) is {emitter.constant(expected.kind)}",
                f"_bits({expr}) == {emitter.constant(expected.data)}"]
    if kind is Static:
        return [f"{expr} is {emitter.constant(expected.value)}"]
    if kind is ArgRef:
        return [f"{expr} is S.arguments[{expected.position}]"]
    if expected is None or kind is bool:
        return [f"{expr} is {expected!r}"]
    if kind is str:
        return [f"{expr} == {expected!r}"]
    if kind is int:
        return [f"type({expr}) is int", f"{expr} == {expected!r}"]
    if kind is tuple or kind is list:
        found = [f"type({expr}) is {kind.__name__}", f"len({expr}) == {len(expected)}"]
        for i, item in enumerate(expected):
            found += _condition(f"{expr}[{i}]", item, emitter, own, loads)
        return found
    if kind is dict:
        found = [f"type({expr}) is dict", f"{expr}.keys() == {emitter.constant(expected.keys())}"]
        for key, item in expected.items():
            found += _condition(f"{expr}[{key!r}]", item, emitter, own, loads)
        return found
    if kind is slice:
        return [f"type({expr}) is slice"] + [
            line for part in ("start", "stop", "step")
            for line in _condition(f"{expr}.{part}", getattr(expected, part), emitter, own,
                                   loads)]
    return [f"_matches({emitter.constant(expected)}, {expr}, S)"]


def output_template(out: Any, session: Session) -> tuple:
    leaves, tree = tree_flatten(out, none_is_leaf=True)
    return tree, [template(leaf, session) for leaf in leaves]

