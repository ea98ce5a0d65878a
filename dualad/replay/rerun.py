"""Operations run again on Duals: how the interpreter takes a call over.

When a replayed call leaves its recording (or a recording call meets what it
cannot record), the transform's interpreter starts and hands over the Duals it
would pass the function (:mod:`.coroutine`); the operations done so far run again
on them — from the recording's templates in a replayed call, from the call's own
log in a recording one — and every Live value then stands for its Dual.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..primitive import same_layout_copy  # noqa: F401  (the replay's too)
from ..pytrees import tree_leaves
from .templates import ArgRef, Bits, FloatIn, LiveRef, Named, NewLive, Objects, Static

__all__ = ["PROPERTIES", "call_operation", "duals_of", "replay_steps", "replay_log", "rebuild",
           "same_layout_copy"]

PROPERTIES = ("T", "mT", "real", "imag")


def call_operation(name: str, self: Any, args: tuple, kwargs: dict) -> Any:
    """Operation ``name`` on Duals, through the same entry point as the user's call."""
    if name == "__array_ufunc__":
        ufunc, method, *inputs = args
        return getattr(ufunc, method)(*inputs, **kwargs)
    if name == "__array_function__":
        func, _types, f_args, f_kwargs = args
        return func(*f_args, **f_kwargs)
    if name in PROPERTIES:
        return getattr(self, name)
    if name == "_process":
        prim, prim_args, params = args
        return prim(*prim_args, **params)
    if name == "_entry":
        return args[0](*args[1:], **kwargs)
    return getattr(self, name)(*args, **kwargs)


def duals_of(fargs: tuple, spec: list) -> dict:
    """The interpreter's Duals for the Live values that stood for the arguments (the
    function's arguments ``fargs``, made as ``spec`` says)."""
    duals, at = {}, 0
    for a, item in zip(fargs, spec):
        if item[0] == "tree":
            for leaf in tree_leaves(a):
                duals[at] = leaf
                at += 1
    return duals


def replay_steps(steps: list, duals: dict, arguments: tuple, registers: list) -> None:
    """Run a replayed call's operations so far again on Duals, from the recording's
    templates (constants as recorded, bit for bit the call's; the floats taken as
    inputs from ``registers``): ``duals`` maps each Live number met to its Dual, and
    gains the Live values the operations made."""

    def leaf(expected: Any) -> Any:
        kind = type(expected)
        if kind is LiveRef:
            return duals[expected.index]
        if kind is Bits or kind is Static:
            return expected.value
        if kind is ArgRef:
            return arguments[expected.position]
        if kind is FloatIn:
            return registers[expected.slot]
        if kind is Objects:
            out = np.empty(expected.shape, object)
            for i, item in enumerate(expected.items):
                out.flat[i] = value(item)
            return out
        return expected

    def value(expected: Any) -> Any:
        return rebuild(expected, leaf)

    def note(spec: Any, result: Any) -> None:
        kind = type(spec)
        if kind is NewLive:
            duals[spec.index] = result
        elif kind is tuple or kind is list:
            for s, r in zip(spec, result):
                note(s, r)
        elif kind is Named:
            for s, r in zip(spec.items, result):
                note(s, r)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for step in steps:
            own, args, kwargs = step.template
            note(step.result, call_operation(step.name, duals[own.index], value(args),
                                             value(kwargs) if kwargs is not None else {}))


def replay_log(log: list, duals: dict, substitute: dict | None = None,
               register: Callable[[Any], Any] | None = None) -> None:
    """Run the logged operations again on Duals, quietly (their warnings were given
    once): ``duals`` maps each Live number met to its Dual, and gains the Live values
    the operations made; ``substitute`` maps ``id(value)`` to ``(value, stand-in)``,
    and ``register(value)`` makes the stand-in of a float an operation took as an
    input (the twin recording's), made as the operation runs again."""
    substitute = substitute or {}
    inputs: dict = {}

    def stand_in(x: Any) -> Any:
        if getattr(type(x), "_replayed", False):  # a Live value
            return duals[x._index]
        found = inputs.get(id(x)) or substitute.get(id(x))
        return found[1] if found is not None and found[0] is x else x

    def unwrap(x: Any) -> Any:
        return rebuild(x, stand_in)

    def note(original: Any, result: Any) -> None:
        kind = type(original)
        if getattr(kind, "_replayed", False):  # a Live value
            duals[original._index] = result
        elif isinstance(original, (tuple, list)):
            for o, r in zip(original, result):
                note(o, r)
        elif kind is np.ndarray and original.dtype.hasobject:
            for o, r in zip(original.flat, result.flat):
                note(o, r)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, live, args, kwargs, result, floats in log:
            inputs = {id(v): (v, register(v)) for v in floats} \
                if floats and register is not None else {}
            note(result, call_operation(name, unwrap(live), unwrap(args), unwrap(kwargs)))


def rebuild(x: Any, leaf: Callable[[Any], Any]) -> Any:
    """``x`` with ``leaf`` applied to each value inside its tuples (named ones too),
    lists, dicts, slices and object arrays."""
    kind = type(x)
    if kind is tuple or kind is list:
        return kind(rebuild(v, leaf) for v in x)
    if issubclass(kind, tuple):  # a named tuple
        return kind(*(rebuild(v, leaf) for v in x))
    if kind is dict:
        return {key: rebuild(v, leaf) for key, v in x.items()}
    if kind is slice:
        return slice(rebuild(x.start, leaf), rebuild(x.stop, leaf), rebuild(x.step, leaf))
    if kind is np.ndarray and x.dtype.hasobject:
        out = np.empty(x.shape, object)
        for i, item in enumerate(x.flat):
            out.flat[i] = rebuild(item, leaf)
        return out
    return leaf(x)
