"""Templates: what the arguments of a recorded operation must be in a later call.

Each argument of an operation is noted as it was met: a Live value of the call
(:class:`LiveRef`), the transform's own float argument (:class:`ArgRef`, a
register whatever its value), a constant compared by type and bits
(:class:`Bits`), a value compared by identity (:class:`Static`: a dtype, one of
NumPy's functions, a primitive of dualad's own), or a container of those. What
none of these can describe (a callback, an unknown object) is :class:`Opaque`:
the operation is not recorded. :func:`matches` is the check, and the generated
code of :mod:`.recording` does the same inline.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ..pytrees import tree_flatten
from ..primitive import (ENTRY_POINTS, FUNCTION_HANDLERS, STATIC_OBJECTS, USER_FUNCTIONS,
                         Primitive)
from .operations import argument_leaves

__all__ = ["Opaque", "LiveRef", "Bits", "ArgRef", "FloatIn", "Static", "Objects", "template",
           "matches", "bits", "sparse_parts", "identical", "float_leaves", "changed_floats",
           "made_anew", "PLAIN", "NewLive", "Own", "Slot", "Named"]


class Opaque(Exception):
    """An operation the replay cannot record or compare (a callback, an unknown object)."""


class LiveRef:
    """The Live value number ``index`` of the call."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class Bits:
    """A constant, compared by type and bits (arrays also by shape and strides);
    ``value`` is a copy the recording uses (the caller's array may change later)."""

    __slots__ = ("kind", "value", "data")

    def __init__(self, value: Any, copy: Any = None) -> None:
        self.kind = type(value)
        self.value = value if copy is None else copy
        self.data = bits(value)


class ArgRef:
    """The transform's argument number ``position`` itself (a float scalar, such as an
    ODE's ``t``): a register of the recording, whatever its value."""

    __slots__ = ("position",)

    def __init__(self, position: int) -> None:
        self.position = position


class FloatIn:
    """A float (or NumPy scalar) of type ``kind`` whatever its value, loaded into
    register ``slot``: one that changed between calls (``np.sin(0.6 * t)`` with ``t``
    an ODE's time), recorded as an input of its operation."""

    __slots__ = ("slot", "kind")

    def __init__(self, slot: int, kind: type) -> None:
        self.slot, self.kind = slot, kind


class Static:
    """A value compared by identity (a dtype, a NumPy function or ufunc, a primitive)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Objects:
    """An object array, compared element by element."""

    __slots__ = ("shape", "items")

    def __init__(self, shape: tuple, items: list) -> None:
        self.shape, self.items = shape, items


_DOUBLE = struct.Struct("d").pack
#: Types compared by equality (``x == 2``, ``method == "__call__"``).
PLAIN = (bool, int, str, bytes, type(None), type(Ellipsis), type(NotImplemented))


def bits(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return _DOUBLE(value)
    if kind is complex:
        return _DOUBLE(value.real) + _DOUBLE(value.imag)
    if kind is np.ndarray:
        return (value.dtype, value.shape, value.strides, value.tobytes())
    parts = sparse_parts(value)
    if parts is not None:  # a scipy.sparse matrix: its shape and the arrays it holds
        return (value.shape, value.dtype) + tuple(
            (a.dtype, a.shape, a.tobytes()) for a in parts)
    return (value.dtype, value.tobytes())  # a NumPy scalar


#: The arrays that hold a scipy.sparse matrix of each format compared by its bits
#: (lil and dok hold Python lists and dicts: compared by nothing, never recorded).
_SPARSE_ARRAYS = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
                  "bsr": ("data", "indices", "indptr"), "coo": ("data",), "dia": ("data",
                                                                               "offsets")}


def sparse_parts(value: Any) -> tuple | None:
    """The arrays a scipy.sparse matrix holds (its coordinates too), or None."""
    if not type(value).__module__.startswith("scipy.sparse"):
        return None
    names = _SPARSE_ARRAYS.get(getattr(value, "format", None))
    if names is None:
        return None
    return tuple(getattr(value, n) for n in names) + tuple(getattr(value, "coords", ()))


def _is_static(value: Any) -> bool:
    """A value compared by identity: dtypes, scalar types, the NumPy functions and
    primitives whose rules are dualad's own (a user's rule is the user's code, which
    must run on every call)."""
    if isinstance(value, np.dtype):
        return True
    if isinstance(value, type):
        return issubclass(value, (np.generic, float, int, complex, bool))
    if isinstance(value, Primitive):
        return value.builtin
    if any(value is known for known in STATIC_OBJECTS):
        return True
    if isinstance(value, np.ufunc):
        return value.__name__ is not None and not value.__name__.endswith("(vectorized)") \
            and value not in USER_FUNCTIONS
    try:
        return value in ENTRY_POINTS or (value in FUNCTION_HANDLERS
                                         and value not in USER_FUNCTIONS)
    except TypeError:
        return False


def template(value: Any, session: Any) -> Any:
    """What an argument of an operation must be in a later call (raises Opaque)."""
    kind = type(value)
    if kind in PLAIN:
        return value
    argument = session.argument_ids.get(id(value))
    if argument is not None and argument[0] is value:
        return ArgRef(argument[2])
    variable = session.variable_ids.get(id(value))
    if variable is not None and variable[0] is value:
        return FloatIn(variable[1]._slot, kind)
    if kind is float or kind is complex:
        return Bits(value)
    if getattr(kind, "_replayed", False):  # a Live value
        if value._session is not session:
            raise Opaque("a value of another call")
        return LiveRef(value._index)
    if kind is tuple or kind is list:
        return kind(template(v, session) for v in value)
    if kind is dict:
        return {key: template(v, session) for key, v in value.items()}
    if kind is slice:
        return slice(template(value.start, session), template(value.stop, session),
                     template(value.step, session))
    if kind is np.ndarray:
        if value.dtype.hasobject:
            return Objects(value.shape, [template(v, session) for v in value.flat])
        return Bits(value, session.freeze(value))
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return Bits(value)
    if _is_static(value):
        return Static(value)
    if sparse_parts(value) is not None:
        return Bits(value, session.freeze(value))
    raise Opaque(f"an argument of type {kind.__name__}")


def matches(expected: Any, value: Any, session: Any) -> bool:
    """Whether an argument of this call is what the recording's template says."""
    kind = type(expected)
    if kind is LiveRef:
        return getattr(type(value), "_replayed", False) and value._index == expected.index \
            and value._session is session
    if kind is Bits:
        return type(value) is expected.kind and bits(value) == expected.data
    if kind is tuple or kind is list:
        return type(value) is kind and len(value) == len(expected) and all(
            matches(e, v, session) for e, v in zip(expected, value))
    if kind is dict:
        return type(value) is dict and value.keys() == expected.keys() and all(
            matches(expected[key], value[key], session) for key in expected)
    if kind is slice:
        return type(value) is slice and matches(expected.start, value.start, session) \
            and matches(expected.stop, value.stop, session) \
            and matches(expected.step, value.step, session)
    if kind is Static:
        return value is expected.value
    if kind is ArgRef:
        return value is session.arguments[expected.position]
    if kind is FloatIn:
        return type(value) is expected.kind
    if kind is Objects:
        return type(value) is np.ndarray and value.dtype.hasobject \
            and value.shape == expected.shape and all(
                matches(e, v, session) for e, v in zip(expected.items, value.flat))
    return type(value) is kind and value == expected


def float_leaves(x: Any) -> list:
    """The floats and float64 scalars in an operation's arguments, in the order the
    templates and the replay walk them (their positions name them across calls)."""
    return [v for v in argument_leaves(x) if type(v) is float or type(v) is np.float64]


def made_anew(expected: Any, value: Any) -> set[int]:
    """The positions (as :func:`float_leaves` counts) of the floats of ``value`` that
    are other objects than those an earlier recording's template ``expected`` holds,
    at the same places: computed at every call (a literal of the function's code is
    the same object every time)."""
    earlier = [e for e in argument_leaves(expected) if type(e) is FloatIn or type(e) is ArgRef
               or (type(e) is Bits and (e.kind is float or e.kind is np.float64))]
    return {i for i, (e, v) in enumerate(zip(earlier, float_leaves(value)))
            if type(e) is Bits and e.kind is type(v) and e.value is not v}


def changed_floats(expected: Any, value: Any, session: Any) -> list[int] | None:
    """The positions (as :func:`float_leaves` counts) of the floats that differ from
    the template ``expected`` when everything else matches; None if anything else
    differs."""
    changed: list[int] = []
    count = 0

    def walk(e: Any, v: Any) -> bool:
        nonlocal count
        kind = type(v)
        if kind is float or kind is np.float64:
            count += 1
            if not matches(e, v, session):
                if type(e) is not Bits or e.kind is not kind:
                    return False
                changed.append(count - 1)
            return True
        e_kind = type(e)
        if e_kind is tuple or e_kind is list:
            return kind is e_kind and len(v) == len(e) and all(map(walk, e, v))
        if e_kind is dict:
            return kind is dict and v.keys() == e.keys() and all(walk(e[k], v[k]) for k in e)
        if e_kind is slice:
            return kind is slice and walk((e.start, e.stop, e.step), (v.start, v.stop, v.step))
        return matches(e, v, session)

    return changed if walk(expected, value) and changed else None


def identical(a: Any, b: Any) -> bool:
    """Whether two pytrees of results are the same bit for bit (types, dtypes, shapes)."""
    a_leaves, a_tree = tree_flatten(a)
    b_leaves, b_tree = tree_flatten(b)
    if a_tree != b_tree:
        return False
    for x, y in zip(a_leaves, b_leaves):
        if type(x) is not type(y):
            return False
        if isinstance(x, (np.ndarray, np.generic)):
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
        elif not (x == y or (x != x and y != y)):
            return False
    return True


# -- results: how an operation's result is built from the registers ------------------

class NewLive:
    """A result: a new Live value (number ``index``) holding register ``slot``."""

    __slots__ = ("index", "slot")

    def __init__(self, index: int, slot: int) -> None:
        self.index, self.slot = index, slot


class Own:
    """A result: the Live value whose operation it is (``x += 1`` gives ``x``)."""


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
