"""The arithmetic of tiny arrays on Python floats: the same bits, a tenth of the time.

NumPy spends about 300 ns on a call whatever its size, and ``a * b`` on two
Python floats takes 15. The replay of a small problem (a scalar function's
gradient, the Jacobian of an ODE right-hand side with a few states) is mostly
such calls on values of a few elements. :func:`unrolled` rewrites a recorded
program so that, where it pays, the operations IEEE arithmetic defines element
by element (``+ - * /``, negation, squaring: each correctly rounded, so Python's
floats give NumPy's bits) run on Python floats, and indexing that only moves
elements (``x[0]``, ``reshape``, ``transpose``) moves them at no cost. Values the
rest of the program reads as arrays (a transcendental function's argument, a
reduction's, a value the user's function sees, the result) are made again in
the type, shape and dtype the recording had.

Python floats raise no floating-point flags. Where NumPy would set one that
matters, NumPy computes: a result that is not finite is computed again by the
recorded call itself, on operands of the recorded types (its bits, its warning,
its ``FloatingPointError`` under ``np.errstate``), and a generated function
that computes with Python floats first checks that NumPy's error state ignores
underflow, as it does by default, or the call goes on in the interpreter (a
finite result may have underflowed, which nothing else would report).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .operations import DEFAULT_ERRSTATE, Operation, Register, errstate_object

__all__ = ["unrolled", "lines", "Elements", "ScalarCode", "NAMESPACE", "CHECK_ERRSTATE"]

#: The largest value (in elements) kept as Python floats.
MAX_SIZE = 8

#: Ufuncs computed element by element on Python floats, as the format of one element.
ARITHMETIC = {np.add: "{0} + {1}", np.subtract: "{0} - {1}", np.multiply: "{0} * {1}",
              np.true_divide: "({0} / {1} if {1} else _NAN)", np.negative: "-{0}",
              np.square: "{0} * {0}"}
#: The Python operators the replay calls for ufuncs on NumPy values (see Emitter.lines).
OPERATOR_FUNCTIONS = {np.add: operator.add, np.subtract: operator.sub,
                      np.multiply: operator.mul, np.true_divide: operator.truediv,
                      np.negative: operator.neg}
#: Methods that only move elements (their results are views, or copies, of them).
MOVES = frozenset({"__getitem__", "reshape", "transpose"})

# Costs in ns (measured on NumPy 2.4: a ufunc on a few elements, a NumPy scalar's
# own arithmetic, an index, a reshape; a Python float operation, a tuple, the check
# of the error state in a generated function; making a NumPy scalar, 0-d or small
# array, reading one back).
_UFUNC, _SCALAR_MATH, _INDEX, _RESHAPE = 280, 60, 80, 200
_FLOAT_OP, _TUPLE, _ERRSTATE_CHECK = 15, 30, 50
_PACK = {"float": 0, "scalar": 45, "0d": 145, "array": 300}
_UNPACK_ONE, _UNPACK_MANY = 30, 90

def underflow_ignored() -> bool:
    """Whether NumPy's error state now ignores underflow (which Python floats cannot
    report): true, quickly, in NumPy's default state."""
    return errstate_object() is DEFAULT_ERRSTATE or np.geterr()["under"] == "ignore"


def _numpy(call: Callable, *operands: Any) -> list[float]:
    """The recorded call (a ufunc, or an operator on NumPy values) made as the
    replay's NumPy code makes it, on operands of the recorded types: its bits, its
    warnings and errors; its result as Python floats."""
    return np.ravel(call(*operands)).tolist()


class ScalarCode:
    """What a rewritten operation does (see :func:`lines`): ``kind`` is "unpack",
    "pack", "arithmetic" or "move"; ``sizes`` maps each register of Python floats
    of the program to its number of elements."""

    __slots__ = ("kind", "data", "sizes")

    def __init__(self, kind: str, data: Any, sizes: dict[int, int]) -> None:
        self.kind, self.data, self.sizes = kind, data, sizes


#: Names the generated lines use.
NAMESPACE = {"_NAN": math.nan, "_INF": math.inf, "_ONE": np.float64(1.0), "_array": np.array,
             "_numpy": _numpy, "_extobj": errstate_object, "_DEFAULT_EXTOBJ": DEFAULT_ERRSTATE,
             "_underflow_ignored": underflow_ignored}

#: The line a generated function begins with when it runs arithmetic on Python
#: floats: in an error state that does not ignore underflow, the interpreter.
CHECK_ERRSTATE = "if _extobj() is not _DEFAULT_EXTOBJ and not _underflow_ignored(): " \
                 "raise _GuardFailed"


def _info(kinds: dict, slot: int) -> tuple | None:
    """``(type, shape, size)`` of a register that can be held as Python floats."""
    found = kinds.get(slot)
    if found is None:
        return None
    kind, shape, dtype = found
    size = math.prod(shape)
    if dtype != np.float64 or size > MAX_SIZE or kind not in (np.ndarray, np.float64, float):
        return None
    return kind, shape, size


def _constant(value: Any) -> np.ndarray | None:
    """A constant operand as a float64 array (None if it cannot be one exactly)."""
    kind = type(value)
    if kind is float or kind is np.float64:
        return np.array(float(value))
    if kind is int and abs(value) <= 2 ** 53:
        return np.array(float(value))
    if kind is np.ndarray and value.dtype == np.float64 and value.size <= MAX_SIZE:
        return value
    return None


def _candidate(op: Operation, kinds: dict) -> ScalarCode | None:
    """How ``op`` runs on Python floats, if it can: for arithmetic, ``(ufunc, call,
    operands)``, each operand ``("r", slot, element map, type, shape)`` or ``("c",
    values, the constant)``; for a move, ``(slot, element map)``."""
    if type(op.outputs) is not int or op.checks or op.mutates or op.errstate is not None \
            or op.into is not None or op.kwargs:
        return None
    out = _info(kinds, op.outputs)
    if out is None:
        return None
    shape = out[1]
    if op.func in ARITHMETIC and not op.method and len(op.args) == op.func.nin:
        operands = []
        for arg in op.args:
            if isinstance(arg, Register):
                info = _info(kinds, arg.slot)
                if info is None:
                    return None
                elements = np.arange(info[2]).reshape(info[1])
            else:
                elements = _constant(arg)
                if elements is None:
                    return None
            try:
                spread = np.broadcast_to(elements, shape).ravel().tolist()
            except ValueError:
                return None
            operands.append(("r", arg.slot, spread, info[0], info[1])
                            if isinstance(arg, Register) else ("c", spread, arg))
        # The call as the interpreter made it: an operator (on NumPy scalars, their
        # own arithmetic, whose warnings say "scalar"), or the ufunc.
        call = OPERATOR_FUNCTIONS[op.func] if op.operator else op.func
        return ScalarCode("arithmetic", (op.func, call, operands), {})
    if op.method and op.name in MOVES and op.args and isinstance(op.args[0], Register):
        info = _info(kinds, op.args[0].slot)
        rest = op.args[1:]
        if info is None or not _static(rest):
            return None
        places = np.arange(info[2]).reshape(info[1])
        try:
            moved = places[rest[0]] if op.name == "__getitem__" else \
                getattr(places, op.name)(*rest)
        except (IndexError, ValueError, TypeError):
            return None
        if np.shape(moved) != shape:
            return None
        return ScalarCode("move", (op.args[0].slot, np.ravel(moved).tolist()), {})
    return None


def _static(args: Any) -> bool:
    """Whether arguments hold no register (constant shapes, indices, axes)."""
    kind = type(args)
    if kind is tuple or kind is list:
        return all(_static(a) for a in args)
    if kind is slice:
        return _static((args.start, args.stop, args.step))
    return args is None or args is Ellipsis or kind is int


def _reads(code: ScalarCode) -> list[int]:
    if code.kind == "move":
        return [code.data[0]]
    return [operand[1] for operand in code.data[2] if operand[0] == "r"]


def unrolled(parts: list[list[Operation]], kinds: dict, arrays: set, first_free: int
             ) -> tuple[list[list[Operation]], int]:
    """``parts`` with their small float64 arithmetic on Python floats where that is
    cheaper, counting the arrays made back for ``arrays`` (the values the function
    or the result holds) and for every other reader; and the number of registers.
    A program that writes into an array is left as it is (its views must stay)."""
    operations = [op for part in parts for op in part]
    if any(op.mutates for op in operations):
        return parts, first_free
    codes = {id(op): code for op in operations
             if (code := _candidate(op, kinds)) is not None}
    producer = {op.outputs: op for op in operations if id(op) in codes}
    # Candidates joined through the values they pass: each group is taken or not.
    group = {id(op): id(op) for op in operations if id(op) in codes}

    def root(key: int) -> int:
        while group[key] != key:
            group[key] = group[group[key]]
            key = group[key]
        return key

    for op in operations:
        if id(op) in codes:
            for slot in _reads(codes[id(op)]):
                if slot in producer:
                    group[root(id(producer[slot]))] = root(id(op))
    array_readers: set[int] = set(arrays)
    for op in operations:
        if id(op) not in codes:
            array_readers.update(op.registers())
    gain: dict[int, float] = {}
    parts_of: dict[int, set[int]] = {}  # group -> the parts it runs in
    part_of = {id(op): index for index, part in enumerate(parts) for op in part}
    for op in operations:
        code = codes.get(id(op))
        if code is None:
            continue
        key = root(id(op))
        size = _info(kinds, op.outputs)[2]
        if code.kind == "move":
            saved = (_INDEX if op.name == "__getitem__" else _RESHAPE) - _TUPLE * (size > 1)
        else:
            scalars = all(o[0] == "r" and o[3] is not np.ndarray or o[0] == "c"
                          and not isinstance(o[2], np.ndarray) for o in code.data[2])
            saved = (_SCALAR_MATH if op.operator and scalars else _UFUNC) \
                - _FLOAT_OP * size - _TUPLE * (size > 1)
            parts_of.setdefault(key, set()).add(part_of[id(op)])
        if op.outputs in array_readers:
            saved -= _PACK[_form(kinds, op.outputs)]
        for slot in _reads(code):
            if slot not in producer:
                saved -= _UNPACK_ONE if _info(kinds, slot)[2] == 1 else _UNPACK_MANY
        gain[key] = gain.get(key, 0.0) + saved
    # A generated function checks the error state once, whatever groups it runs:
    # the most profitable groups first, each paying for the parts not yet checked.
    checked: set[int] = set()
    chosen: set[int] = set()
    for key in sorted(gain, key=gain.__getitem__, reverse=True):
        unchecked = parts_of.get(key, set()) - checked
        if gain[key] - _ERRSTATE_CHECK * len(unchecked) > 0:
            chosen.add(key)
            checked |= unchecked
    taken = {key for key in codes if root(key) in chosen}
    if not taken:
        return parts, first_free

    floats: dict[int, int] = {}  # register -> the register of its Python floats
    sizes: dict[int, int] = {}   # register of Python floats -> its elements

    def floats_of(slot: int) -> int:
        nonlocal first_free
        if slot not in floats:
            floats[slot] = first_free
            sizes[first_free] = _info(kinds, slot)[2]
            first_free += 1
        return floats[slot]

    unpacked: set[int] = set()
    out: list[list[Operation]] = []
    for part in parts:
        rewritten: list[Operation] = []
        for op in part:
            if id(op) not in taken:
                rewritten.append(op)
                continue
            code = codes[id(op)]
            for slot in _reads(code):
                if slot not in unpacked and (slot not in producer
                                             or id(producer[slot]) not in taken):
                    unpacked.add(slot)
                    rewritten.append(_operation(
                        ScalarCode("unpack", (_form(kinds, slot), kinds[slot][1]), sizes),
                        [slot], floats_of(slot)))
            renamed = {s: floats_of(s) for s in _reads(code)}
            rewritten.append(_operation(ScalarCode(code.kind, (code.data, renamed), sizes),
                                        list(renamed.values()), floats_of(op.outputs)))
            if op.outputs in array_readers:
                rewritten.append(_operation(
                    ScalarCode("pack", kinds[op.outputs][:2], sizes),
                    [floats_of(op.outputs)], op.outputs))
        out.append(rewritten)
    return out, first_free


def _made(kind: type, shape: tuple, items: list[str]) -> str:
    """An expression making a value of the recorded type and shape from the Python
    expressions of its elements."""
    if kind is float:
        return items[0]
    if kind is np.float64:  # (x times NumPy's 1.0: x's bits as a NumPy scalar, no flag)
        return f"{items[0]} * _ONE"
    if shape == ():
        return f"_array({items[0]})"
    made = f"_array(({''.join(i + ', ' for i in items)}))"
    return made if len(shape) == 1 else f"{made}.reshape({shape!r})"


def _form(kinds: dict, slot: int) -> str:
    """How a register's value is made from Python floats."""
    kind, shape, _ = _info(kinds, slot)
    if kind is float:
        return "float"
    if kind is np.float64:
        return "scalar"
    return "0d" if shape == () else "array"


def _operation(code: ScalarCode, reads: list[int], output: int) -> Operation:
    op = Operation(code, tuple(Register(s) for s in reads), {}, f"scalar {code.kind}", False)
    op.outputs = output
    return op



class Elements:
    """The Python expressions of the elements of the registers of Python floats met
    so far in one generated function (each unpacked once there)."""

    def __init__(self) -> None:
        self.known: dict[int, list[str]] = {}

    def of(self, slot: int, size: int, lines: list[str]) -> list[str]:
        found = self.known.get(slot)
        if found is None:
            if size == 1:
                found = [f"r{slot}"]
            else:
                found = [f"r{slot}_{i}" for i in range(size)]
                lines.append("".join(name + ", " for name in found) + f"= r{slot}")
            self.known[slot] = found
        return found


def lines(op: Operation, elements: Elements, literal: Callable[[float], str]) -> list[str]:
    """The Python lines of a rewritten operation; ``literal(x)`` writes a constant."""
    code, out = op.func, op.outputs
    sizes = code.sizes
    found: list[str] = []
    if code.kind == "unpack":
        form, shape = code.data
        source = f"r{op.args[0].slot}"
        value = source if form == "float" else f"float({source})" if form == "scalar" \
            else f"{source}.item()" if sizes[out] == 1 else \
            f"{source}.tolist()" if len(shape) == 1 else f"{source}.ravel().tolist()"
        return [f"r{out} = {value}"]
    if code.kind == "pack":
        kind, shape = code.data
        slot = op.args[0].slot
        items = elements.of(slot, sizes[slot], found)
        return found + [f"r{out} = {_made(kind, shape, items)}"]
    data, renamed = code.data
    size = sizes[out]
    if code.kind == "move":
        source, places = data
        slot = renamed[source]
        items = elements.of(slot, sizes[slot], found)
        result = [items[p] for p in places]
        if size == 1:
            found.append(f"r{out} = {result[0]}")
            result = [f"r{out}"]
    else:
        ufunc, call, operands = data
        columns, arrays = [], []
        for operand in operands:
            if operand[0] == "r":
                slot = renamed[operand[1]]
                items = elements.of(slot, sizes[slot], found)
                columns.append([items[p] for p in operand[2]])
                arrays.append(_made(operand[3], operand[4], items))
            else:
                columns.append([literal(v) for v in operand[1]])
                arrays.append(literal(operand[2]))
        result = [f"r{out}_{i}" if size > 1 else f"r{out}" for i in range(size)]
        for i, name in enumerate(result):
            items = [column[i] for column in columns]
            if ufunc is np.multiply and "1.0" in items:
                # x * 1.0 is x, bit for bit, where finite (the rest NumPy recomputes)
                items.remove("1.0")
                found.append(f"{name} = {items[0]}")
            else:
                found.append(f"{name} = " + ARITHMETIC[ufunc].format(*items))
        # Not finite (or a sum overflowing: its product with 0.0 is nan, which is
        # true, where a finite one gives a zero): NumPy's own call, bits and flags.
        total = result[0] if size == 1 else f"({' + '.join(result)})"
        found.append(f"if {total} * 0.0: "
                     f"{''.join(r + ', ' for r in result)}= _numpy({literal(call)}, "
                     f"{', '.join(arrays)})")
    elements.known[out] = result
    if size > 1:
        found.append(f"r{out} = ({''.join(r + ', ' for r in result)})")
    return found
