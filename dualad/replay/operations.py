"""What a recorded program is made of: :class:`Operation` s on :class:`Register` s.

A recording (:mod:`.tracing`) notes each NumPy call it sees as an Operation, the
recorded values among its arguments as Registers; :mod:`.program` and
:mod:`.scalars` turn them into Python. NumPy's error state, which a call runs
under, is read here too.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

__all__ = ["Operation", "Register", "registers_in", "argument_leaves", "errstate_object",
           "DEFAULT_ERRSTATE"]

try:  # NumPy's error state: one object per np.errstate(...), NumPy's own by default
    from numpy._core._multiarray_umath import _extobj_contextvar as _EXTOBJ
    errstate_object = _EXTOBJ.get
    DEFAULT_ERRSTATE: Any = contextvars.Context().run(_EXTOBJ.get)
except ImportError:  # another NumPy: a new object each time (ask NumPy every time)
    errstate_object = object
    DEFAULT_ERRSTATE = object()


class Operation:
    """One recorded call: ``outputs = func(*args, **kwargs)``.

    ``args``/``kwargs`` hold :class:`Register` markers where a recorded value
    went in; ``outputs`` is a register, a tuple of registers (a tuple result,
    unpacked), or None; ``checks`` are the guards the replay verifies after it:
    ``("shape", slot, shape)`` and ``("equal", slot, value)``. A ``method`` is
    replayed by name on its first argument (``x.reshape(...)``, ``x[i]``), so that
    it applies to the NumPy scalar a replay may hold where the recording held a
    0-d array.
    """

    __slots__ = ("func", "args", "kwargs", "name", "mutates", "method", "outputs", "checks",
                 "errstate", "into", "operator", "_registers")

    def __init__(self, func: Callable, args: Any, kwargs: Any, name: str,
                 mutates: bool, method: bool = False) -> None:
        self.func, self.args, self.kwargs, self.name = func, args, kwargs, name
        self.mutates, self.method = mutates, method
        self.outputs: int | tuple | None = None
        self.checks: list[tuple] = []
        self.errstate: dict | None = None
        #: ``(register, shape)``: the result is written into that dead operand's
        #: memory (seen in ``shape``, or as it is if None; see ``reuse_memory``).
        self.into: tuple | None = None
        #: Whether a ufunc was called through a Python operator (``a * b``): on NumPy
        #: scalars that is their own arithmetic, whose warnings say "scalar".
        self.operator = False
        self._registers: list[int] | None = None

    def registers(self) -> list[int]:
        """The registers its arguments read, in order (its arguments never change)."""
        found = self._registers
        if found is None:
            found = self._registers = registers_in((self.args, self.kwargs))
        return found


def argument_leaves(x: Any) -> list:
    """The values in arguments (or their templates), in the order templates and
    replays walk them: through tuples, lists, dicts' values and slices' bounds."""
    found: list = []
    _walk(x, found.append)
    return found


def _walk(x: Any, visit: Callable[[Any], Any]) -> None:
    kind = type(x)
    if kind is tuple or kind is list:
        for item in x:
            if type(item) in _CONTAINERS:
                _walk(item, visit)
            else:
                visit(item)
    elif kind is dict:
        _walk(tuple(x.values()), visit)
    elif kind is slice:
        _walk((x.start, x.stop, x.step), visit)
    else:
        visit(x)


_CONTAINERS = frozenset({tuple, list, dict, slice})


def registers_in(x: Any) -> list[int]:
    """The register numbers in a template of arguments, in order."""
    return [leaf.slot for leaf in argument_leaves(x) if type(leaf) is Register]


class Register:
    """Where a recorded value enters an operation's arguments."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot

    def __repr__(self) -> str:
        return f"r{self.slot}"
