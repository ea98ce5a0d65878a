"""A callback's differentiated values made explicit: the closure conversion the
SciPy solvers need.

A solver's callback usually reads its parameters from its closure (``lambda t, y:
-p[0] * y``), where no argument shows them. :func:`lifted` finds the Boxed values
(Duals, hyper-duals, reverse-mode tracers) a callable holds — in its closure cells,
its default arguments, a ``functools.partial``'s arguments, a bound method's object
or a callable object's attributes, and the lists, tuples and dicts among them, one
level of functions after another — and gives a function that makes the callable
again with other values in their places. The solver then takes those values as
explicit inputs of a primitive, and every mode differentiates it.

What :func:`lifted` cannot see (a global rebound to a Dual, a value behind an
object it does not copy) stays as it is; the solvers check that the callable made
with plain values returns plain values, and refuse otherwise.

Lists, dicts and objects are made again as copies, so what the callable writes into
them lands in the copy. ``mutable=False`` leaves them as they are (their values
stay Boxed): the solvers' own primal solves use it, so that the user's callback
writes where it always does.
"""

from __future__ import annotations

import copy
import functools
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..fillable import Fillable, resolved
from ..primitive import Boxed

#: How deep into objects (cells holding functions holding cells …) the search goes.
_DEPTH = 6

Rebuild = Callable[[Sequence[Any]], Any]


def lifted(value: Any, mutable: bool = True) -> tuple[Rebuild, list]:
    """``(rebuild, leaves)``: the Boxed values ``value`` holds, and ``rebuild(values)``,
    ``value`` made again with ``values[i]`` in the place of ``leaves[i]`` (``value``
    itself where it holds none); ``mutable=False``: not looking into lists, dicts and
    objects (which rebuilding would copy)."""
    leaves: list = []
    rebuilt = _Search(leaves, mutable).visit(value, _DEPTH)
    if rebuilt is None:
        return (lambda values: value), leaves
    return rebuilt, leaves


class _Search:
    def __init__(self, leaves: list, mutable: bool) -> None:
        self.leaves, self.mutable, self.visiting = leaves, mutable, set()

    def visit(self, value: Any, depth: int) -> Rebuild | None:
        """A rebuild for ``value``, or None where it holds no Boxed value."""
        if type(value) is Fillable:
            value = resolved(value)
        if isinstance(value, Boxed):
            index = len(self.leaves)
            self.leaves.append(value)
            return lambda values: values[index]
        if depth == 0 or id(value) in self.visiting or _opaque(value):
            return None
        self.visiting.add(id(value))
        try:
            return self._visit_inside(value, depth - 1)
        finally:
            self.visiting.discard(id(value))

    def _visit_inside(self, value: Any, depth: int) -> Rebuild | None:
        if type(value) is tuple:
            return self._sequence(value, depth)
        if isinstance(value, types.FunctionType):
            return self._function(value, depth)
        if isinstance(value, functools.partial):  # (its keywords: a dict of its own)
            parts = [self._sequence((value.func, value.args), depth),
                     self._mapping(value.keywords, depth)]
            if parts == [None, None]:
                return None
            return lambda values: _partial(
                *(parts[0](values) if parts[0] else (value.func, value.args)),
                parts[1](values) if parts[1] else value.keywords)
        if not self.mutable:
            return None
        if type(value) is list:
            return self._sequence(value, depth)
        if type(value) is dict:
            return self._mapping(value, depth)
        if isinstance(value, types.MethodType):
            inner = self._sequence((value.__func__, value.__self__), depth)
            return None if inner is None else (
                lambda values: types.MethodType(*inner(values)))
        if hasattr(value, "__dict__") and not isinstance(value, type):
            return self._object(value, depth)
        return None

    def _sequence(self, items: Sequence, depth: int) -> Rebuild | None:
        parts = [self.visit(item, depth) for item in items]
        moving = [(i, part) for i, part in enumerate(parts) if part is not None]
        if not moving:
            return None
        kind, base = type(items), list(items)

        def rebuild(values: Sequence) -> Any:  # (a solver calls it at every step)
            made = base.copy()
            for i, part in moving:
                made[i] = part(values)
            return made if kind is list else kind(made)

        return rebuild

    def _mapping(self, items: dict, depth: int) -> Rebuild | None:
        keys = list(items)
        inner = self._sequence([items[k] for k in keys], depth)
        return None if inner is None else (lambda values: dict(zip(keys, inner(values))))

    def _function(self, fun: types.FunctionType, depth: int) -> Rebuild | None:
        cells = fun.__closure__ or ()
        contents = tuple(_content(cell) for cell in cells)
        inner = self._sequence((contents, fun.__defaults__, fun.__kwdefaults__), depth)
        if inner is None:
            return None

        def rebuild(values: Sequence) -> types.FunctionType:
            new_contents, defaults, kwdefaults = inner(values)
            closure = tuple([cell if new is old else types.CellType(new)
                             for cell, old, new in zip(cells, contents, new_contents)])
            made = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__,
                                      defaults, closure or None)
            if kwdefaults is not None:
                made.__kwdefaults__ = kwdefaults
            if fun.__dict__:
                made.__dict__.update(fun.__dict__)
            return made

        return rebuild

    def _object(self, obj: Any, depth: int) -> Rebuild | None:
        attributes = vars(obj)
        inner = self._mapping(attributes, depth)
        if inner is None:
            return None

        def rebuild(values: Sequence) -> Any:
            made = copy.copy(obj)
            for name, new in inner(values).items():
                if new is not attributes[name]:
                    object.__setattr__(made, name, new)
            return made

        return rebuild


_EMPTY = object()


def _content(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet filled
        return _EMPTY


def _partial(func: Callable, args: tuple, keywords: dict) -> functools.partial:
    return functools.partial(func, *args, **keywords)


def _opaque(value: Any) -> bool:
    """Values the search does not look into: numbers, strings, arrays of numbers,
    modules, classes and builtins."""
    return (value is None or value is _EMPTY
            or isinstance(value, (int, float, complex, str, bytes, np.generic, type,
                                  types.ModuleType, types.BuiltinFunctionType))
            or (isinstance(value, np.ndarray) and value.dtype != object))
