"""The replay cache in front of a transform's interpreter.

:class:`Replayed` wraps the function a transform returns (``jacfwd(f)``,
``grad(f)``, ...). For each input signature — the pytree structure, the shape,
dtype and strides of each differentiated array, the type of each Python float,
and the value of every other argument — it goes through three stages:

1. the first call runs the interpreter (a transform used once costs nothing more);
2. the second call records the NumPy calls of the interpreter into a
   :class:`~dualad.replay.program.Program`, twice: the second time the traced
   arrays' memory holds other numbers than their values, so that a value read
   where the recording cannot see (``np.asarray``, C code) shows up as a
   difference between the two; then it returns the program's replay;
3. the replay is checked bit for bit against the interpreter at a point next to
   the recorded one (or, if that cannot tell, at the next call with other values);
   from then on the replay alone runs.

A guard that fails (a branch taken differently) makes that call run the
interpreter and the next one record the new branch (a signature whose branches
keep changing keeps the interpreter after MAX_GUARD_FAILURES); a signature whose
recording fails, or whose replay differs from the interpreter, keeps the
interpreter for good. Python floats among the other arguments (an ODE's ``t``)
are traced too, as :class:`~dualad.replay.tracing.TracedFloat`. The cache is bounded (the
signature changed least recently goes first) and belongs to the transformed
function, so a new closure per call grows nothing.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from .program import GuardFailed, Program
from .tracing import Recorder, Unrecordable, same_recording

__all__ = ["Replayed", "replayed", "replayed_call", "leaves_of_arguments", "identical",
           "REPLAY_BY_DEFAULT", "CACHE_SIZE"]

#: Whether transforms replay unless told ``replay=False``; the environment
#: variable ``DUALAD_REPLAY=0`` turns it off for the process.
REPLAY_BY_DEFAULT = os.environ.get("DUALAD_REPLAY", "1") not in ("0", "false", "no", "off")

#: Input signatures remembered per transformed function.
CACHE_SIZE = 8

#: Guard failures (each followed by a new recording) after which a signature keeps
#: the interpreter.
MAX_GUARD_FAILURES = 8

class _Seen:
    """A signature seen once (or whose branch changed): the next call records it."""

    __slots__ = ("failures",)

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures  # guard failures of its earlier recordings
#: Argument types taken as they are, with no pytree flattening.
_FLAT = frozenset({np.ndarray, float, int})


class Interpreted:
    """A signature that keeps the interpreter, and why (for diagnostics)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Interpreted({self.reason!r})"


class _Entry:
    __slots__ = ("program", "out_tree", "fixed", "recorded", "verified", "failures")

    def __init__(self, program: Program, out_tree: Any, fixed: list, recorded: list) -> None:
        self.program, self.out_tree = program, out_tree
        self.fixed = fixed          # (leaf position, bytes) of the other array arguments
        self.recorded = recorded    # the differentiated inputs' bytes at the recording
        self.verified = False
        self.failures = 0


class Replayed:
    """``interpret`` (a transformed function) with a replay cache in front.

    ``differentiated(tree)`` gives, for the pytree structure of ``args``, the
    positions of the leaves whose values the recording traces (see
    :func:`leaves_of_arguments`); every other leaf is part of the signature by value.
    """

    def __init__(self, interpret: Callable, differentiated: Callable[[Any], Sequence[int]],
                 maxsize: int = CACHE_SIZE, fun: Callable | None = None) -> None:
        self.interpret = interpret
        self.differentiated = differentiated
        self.captured = captured_by(fun)
        self.maxsize = maxsize
        self.entries: OrderedDict = OrderedDict()
        self._positions: dict = {}
        self.lock = threading.Lock()

    def __call__(self, *args: Any) -> Any:
        for a in args:
            if type(a) not in _FLAT:
                leaves, tree = optree.tree_flatten(args)
                break
        else:  # arrays and numbers only, the common case: no pytree to flatten
            leaves, tree = args, len(args)
        positions = self._positions.get(tree)
        if positions is None:
            positions = self._positions_of(tree, args)
        key = self._signature(tree, leaves, positions) if positions else None
        if key is None:
            return self.interpret(*args)
        entry = self.entries.get(key)
        if entry is None:
            self._remember(key, _Seen())
            return self.interpret(*args)
        if type(entry) is Interpreted:
            return self.interpret(*args)
        inputs = [x if type(x) is np.ndarray else np.asarray(x)
                  for x in [leaves[i] for i in positions]]
        # The other Python floats (an ODE's t) are traced too, as TracedFloat.
        floats = [i for i, leaf in enumerate(leaves) if type(leaf) is float
                  and i not in positions]
        inputs += [leaves[i] for i in floats]
        if type(entry) is _Seen:
            return self._record(key, args, leaves, tree, positions, floats, inputs,
                                entry.failures)
        for i, data in entry.fixed:
            if leaves[i].tobytes() != data:
                return self.interpret(*args)  # an argument of the same shape, other values
        if not entry.verified:
            return self._verify(key, entry, args, inputs)
        try:
            return entry.out_tree.unflatten(entry.program.run(*inputs))
        except GuardFailed:  # another branch: record it at the next call
            entry.failures += 1
            self._remember(key, _Seen(entry.failures) if entry.failures < MAX_GUARD_FAILURES
                           else Interpreted("its branches change from call to call"))
        except Exception as error:  # a replay that cannot run these values
            self._remember(key, Interpreted(f"the replay raised {error!r}"))
        return self.interpret(*args)

    def _positions_of(self, tree: Any, args: tuple) -> tuple:
        """The traced leaves' positions for this structure of arguments (remembered);
        empty when the interpreter should say what is wrong with them."""
        spec = optree.tree_structure(args) if type(tree) is int else tree
        positions = tuple(self.differentiated(spec) or ())
        with self.lock:
            if len(self._positions) >= self.maxsize:
                self._positions.clear()
            self._positions[tree] = positions
        return positions

    def _signature(self, tree: Any, leaves: list, positions: tuple) -> tuple | None:
        """The cache key of a call: None when it cannot be replayed (an array
        subclass, another library's array, an unhashable argument)."""
        parts: list = [tree]
        if self.captured:  # a global or closure variable of fun bound anew: record anew
            parts.append(tuple([_identity(where, name) for where, name in self.captured]))
        for i, leaf in enumerate(leaves):
            kind = type(leaf)
            if kind is np.ndarray:
                if leaf.dtype.hasobject:
                    return None
                parts.append((leaf.shape, leaf.dtype, leaf.strides))
            elif i in positions or kind is float:
                if not (kind is float or kind is int or isinstance(leaf, np.generic)):
                    return None
                parts.append(kind)  # the type fixes the dtype
            elif isinstance(leaf, np.ndarray):
                return None
            else:
                try:
                    hash(leaf)
                except TypeError:
                    return None
                parts.append((kind, leaf))
        return tuple(parts)

    def _remember(self, key: tuple, value: Any) -> None:
        with self.lock:
            self.entries[key] = value
            self.entries.move_to_end(key)
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)

    def _record(self, key, args, leaves, tree, positions, floats, inputs,
                failures: int = 0) -> Any:
        # The other arrays are frozen copies: the program may hold them as constants.
        frozen = [(i, np.array(leaf)) for i, leaf in enumerate(leaves)
                  if i not in positions and type(leaf) is np.ndarray]
        try:
            recorder, traced, out_leaves, out_tree = self._trace(
                leaves, tree, positions + tuple(floats), inputs, frozen, poisoned=False)
            # Once more with the arrays' memory poisoned: a value that left the
            # recording unseen (np.asarray, C code) comes out different.
            twin = self._trace(leaves, tree, positions + tuple(floats), inputs, frozen,
                               poisoned=True)
            if not same_recording(recorder, out_leaves, twin[0], twin[2]):
                raise Unrecordable("a recorded value was read where the recording cannot see")
            program = Program(recorder, traced, out_leaves)
        except (Unrecordable, Exception) as why:
            self._remember(key, Interpreted(f"recording failed: {why}"))
            return self.interpret(*args)
        entry = _Entry(program, out_tree, [(i, c.tobytes()) for i, c in frozen],
                       [_bytes(x) for x in inputs])
        entry.failures = failures
        agrees = self._probe(entry, leaves, tree, positions, inputs)
        entry.verified = agrees is True
        self._remember(key, entry if agrees is not False else
                       Interpreted("its replay differs from the interpreter"))
        try:
            return out_tree.unflatten(program.run(*inputs))
        except Exception as error:  # not even on the recorded inputs
            self._remember(key, Interpreted(f"the replay raised {error!r}"))
            return self.interpret(*args)

    def _probe(self, entry: _Entry, leaves, tree, positions, inputs) -> bool | None:
        """Whether the replay agrees bit for bit with the interpreter at a point near
        the recorded one (every input moved by about 10⁻⁶ of itself); None when the
        probe cannot tell (an input that is not float, the interpreter raised, a
        guard failed), which leaves the check to the next call with other values."""
        arrays, floats = inputs[:len(positions)], inputs[len(positions):]
        probe = [x * (1.0 + 1e-6 * np.cos(np.arange(x.size) + 1.0).reshape(x.shape))
                 if x.dtype.kind == "f" else None for x in arrays]
        if any(p is None or p.dtype != x.dtype for p, x in zip(probe, arrays)):
            return None
        moved = list(leaves)
        for i, p in zip(positions, probe):
            moved[i] = p
        probe += floats
        try:
            with np.errstate(all="ignore"):
                expected = self.interpret(*(moved if type(tree) is int
                                            else tree.unflatten(moved)))
                replayed = entry.out_tree.unflatten(entry.program.run(*probe))
        except Exception:
            return None
        return identical(expected, replayed)

    def _trace(self, leaves, tree, positions, inputs, frozen, poisoned: bool) -> tuple:
        recorder = Recorder(poisoned)
        traced = [recorder.input_float(x) if type(x) is float else recorder.input(x)
                  for x in inputs]
        replaced = list(leaves)
        for i, t in zip(positions, traced):
            replaced[i] = t
        for i, copy in frozen:
            replaced[i] = copy
        out = self.interpret(*(replaced if type(tree) is int else tree.unflatten(replaced)))
        out_leaves, out_tree = optree.tree_flatten(out)
        if recorder.failed:
            raise Unrecordable(recorder.failed)
        return recorder, traced, out_leaves, out_tree

    def _verify(self, key, entry: _Entry, args: tuple, inputs: list) -> Any:
        if all(_bytes(x) == data for x, data in zip(inputs, entry.recorded)):
            return entry.out_tree.unflatten(entry.program.run(*inputs))
        expected = self.interpret(*args)
        try:
            replayed = entry.out_tree.unflatten(entry.program.run(*inputs))
        except GuardFailed:
            return expected
        except Exception:
            replayed = None
        if identical(expected, replayed):
            entry.verified = True
        else:
            self._remember(key, Interpreted("its replay differs from the interpreter"))
        return expected


def replayed(interpret: Callable, argnums: int | Sequence[int] | None, enabled: bool,
             fun: Callable | None = None) -> Callable:
    """``interpret`` behind a :class:`Replayed` cache tracing the leaves of the
    arguments ``argnums`` (every argument if None), or itself when not ``enabled``;
    ``fun`` is the user's function, whose global and closure variables are watched."""
    if not enabled:
        return interpret
    return Replayed(interpret, leaves_of_arguments(argnums), fun=fun)


def captured_by(fun: Callable | None) -> list[tuple]:
    """Where ``fun`` reads its closure variables and globals: ``(cell, None)`` or
    ``(globals, name)``. A recording holds the objects found there as constants,
    so the signature includes their identities: a variable bound to a new array
    is seen, a function's own ``W = W + 1`` too. (An array written in place, or an
    attribute of an object, is not: the replay's contract, as ``jax.jit``'s, is a
    function of its arguments.)"""
    fun = getattr(fun, "__func__", fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return []
    cells = [(cell, None) for cell in (fun.__closure__ or ())]
    names = set(code.co_names)
    for const in code.co_consts:  # the names nested lambdas and comprehensions read
        names.update(getattr(const, "co_names", ()))
    watched = fun.__globals__
    return cells + [(watched, name) for name in sorted(names)
                    if name in watched and not callable(watched[name])
                    and type(watched[name]).__name__ != "module"]


_BY_FUNCTION: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_BY_FUNCTION_LOCK = threading.Lock()


def replayed_call(fun: Callable, variant: tuple, interpret: Callable, args: tuple) -> Any:
    """``interpret(fun, *args)`` behind a replay cache kept for ``fun`` and ``variant``
    (for the transforms called with the function, ``jvp`` and ``hvp``), tracing
    every leaf of ``args``. The cache lives as long as ``fun`` does; a function
    that cannot be weakly referenced is interpreted."""
    try:
        caches = _BY_FUNCTION.get(fun)
        if caches is None:
            with _BY_FUNCTION_LOCK:
                caches = _BY_FUNCTION.setdefault(fun, {})
    except TypeError:
        return interpret(fun, *args)
    cache = caches.get(variant)
    if cache is None:
        target = weakref.ref(fun)  # the cache must not keep fun alive
        cache = caches.setdefault(variant, Replayed(
            lambda *a: interpret(target(), *a), leaves_of_arguments(None), fun=fun))
    return cache(*args)


def _identity(where: Any, name: str | None) -> int:
    if name is not None:
        return id(where.get(name))
    try:
        return id(where.cell_contents)
    except ValueError:  # a closure variable not bound yet
        return 0


def leaves_of_arguments(argnums: int | Sequence[int] | None) -> Callable[[Any], list[int]]:
    """For the pytree of a call's positional arguments, the positions of the leaves
    of the arguments ``argnums`` (every argument if None)."""

    def positions(tree: Any) -> list[int]:
        if argnums is None:
            return list(range(tree.num_leaves))
        children = tree.children()
        chosen = (argnums,) if isinstance(argnums, (int, np.integer)) else argnums
        if not all(-len(children) <= i < len(children) for i in chosen):
            return None  # the interpreter says what is wrong
        starts = [0]
        for child in children:
            starts.append(starts[-1] + child.num_leaves)
        return [leaf for i in chosen for leaf in range(starts[i], starts[i + 1])]

    return positions


def _bytes(x: Any) -> bytes:
    """An input's value, bit for bit (an array's memory, a Python float's double)."""
    return np.float64(x).tobytes() if type(x) is float else x.tobytes()


def identical(a: Any, b: Any) -> bool:
    """Whether two pytrees of results are the same bit for bit (types, dtypes, shapes)."""
    a_leaves, a_tree = optree.tree_flatten(a)
    b_leaves, b_tree = optree.tree_flatten(b)
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
