"""The replay cache in front of a transform's interpreter.

:class:`Replayed` wraps a transform's interpreter, ``body(fun, *args)`` (the
body of ``jacfwd(f)``, ``grad(f)``, ...). For each input signature — the number
of arguments, the names of keyword arguments, and the pytree structure, type,
shape, dtype and strides of each differentiated leaf — it goes through three
stages:

1. the first call runs the interpreter (a transform used once costs nothing more);
2. the second call runs it on traced arrays and records, while the user's
   function runs on :class:`~dualad.replay.live.Live` values, the NumPy calls of
   each of its operations (:class:`~dualad.replay.recording.Recording`); the same
   recording is made a second time from the operations alone, with the traced
   arrays' memory holding other numbers, and the two must be the same (a rule
   that reads a value where the recording cannot see it keeps the interpreter);
3. later calls run the user's function on Live values, operation by operation
   against the recording (see :mod:`dualad.replay.live`); at the first difference
   the call continues in the interpreter (:mod:`dualad.replay.coroutine`).

Nothing but the signature is keyed: whatever the function reads (globals,
attributes, closures, arrays written in place, its other arguments) is checked
where it meets an operation, bit for bit, on every call. The cache is bounded
(the signature used least recently goes first).
"""

from __future__ import annotations

import contextvars
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ..dual import Dual
from .coroutine import Coroutine
from .live import INTERPRETING, RECORDING, REPLAYING, Opaque, Session, replay_log
from .program import GuardFailed
from .recording import Recording, Unreplayable, output_template
from .tracing import Recorder, Traced, same_recording

__all__ = ["Replayed", "replayed", "replayed_call", "identical", "REPLAY_BY_DEFAULT",
           "CACHE_SIZE", "Interpreted"]

#: Whether transforms replay unless told ``replay=False``; the environment
#: variable ``DUALAD_REPLAY=0`` turns it off for the process.
REPLAY_BY_DEFAULT = os.environ.get("DUALAD_REPLAY", "1") not in ("0", "false", "no", "off")

#: Input signatures remembered per transformed function.
CACHE_SIZE = 8

#: Argument types taken as they are, with no pytree flattening.
_FLAT = frozenset({np.ndarray, float, int})


class _Seen:
    """A signature seen once: the next call records it."""


class Interpreted:
    """A signature that keeps the interpreter, and why (for diagnostics)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Interpreted({self.reason!r})"


class Replayed:
    """A transform's interpreter ``body(fun, *args)`` with a replay cache in front.

    ``argnums`` are the positions of the arguments whose leaves are traced (every
    argument if None); ``fun`` is the user's function (or None, given at each
    :meth:`run`). Keyword arguments go to ``fun`` as they are, undifferentiated.
    """

    def __init__(self, body: Callable, fun: Callable | None,
                 argnums: int | Sequence[int] | None, maxsize: int = CACHE_SIZE) -> None:
        self.body = body
        self.fun = fun
        self.argnums = (argnums,) if isinstance(argnums, (int, np.integer)) else argnums
        self.maxsize = maxsize
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.run(self.fun, args, kwargs)

    def run(self, fun: Callable, args: tuple, kwargs: dict) -> Any:
        if kwargs:
            fun = _with_keywords(fun, kwargs)
        key = self._signature(args, kwargs)
        if key is None:
            return self.body(fun, *args)
        entry = self.entries.get(key)
        if entry is None:
            self._remember(key, _Seen())
            return self.body(fun, *args)
        if type(entry) is Recording:
            return self._replay(entry, fun, args)
        if type(entry) is _Seen:
            return self._record(key, fun, args)
        return self.body(fun, *args)

    # -- signatures --------------------------------------------------------------------

    def _positions(self, args: tuple) -> Sequence[int] | None:
        if self.argnums is None:
            return range(len(args))
        if not all(-len(args) <= i < len(args) for i in self.argnums):
            return None  # the interpreter says what is wrong
        return [i % len(args) for i in self.argnums]

    def _signature(self, args: tuple, kwargs: dict) -> tuple | None:
        """The cache key of a call: None when it cannot be replayed (an array
        subclass, another library's array, an object array)."""
        positions = self._positions(args)
        if positions is None:
            return None
        parts: list = [len(args), tuple(kwargs) if kwargs else None]
        for i in positions:
            arg = args[i]
            if type(arg) in _FLAT:
                part = _leaf_signature(arg)
            else:
                leaves, tree = optree.tree_flatten(arg)
                part = [tree] + [_leaf_signature(leaf) for leaf in leaves]
                if None in part:
                    return None
            if part is None:
                return None
            parts.append(part if type(part) is not list else tuple(part))
        return tuple(parts)

    def _remember(self, key: tuple, value: Any) -> None:
        with self.lock:
            self.entries[key] = value
            self.entries.move_to_end(key)
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)

    def _leaves(self, args: tuple) -> tuple[list, Callable[[list], tuple]]:
        """The differentiated leaves of ``args``, and a function putting others in
        their places (the other arguments stay the same objects)."""
        positions = list(self._positions(args))
        trees, leaves = [], []
        for i in positions:
            if type(args[i]) in _FLAT:
                trees.append(None)
                leaves.append(args[i])
            else:
                found, tree = optree.tree_flatten(args[i])
                trees.append(tree)
                leaves += found

        def put(new: list) -> tuple:
            out, at = list(args), 0
            for i, tree in zip(positions, trees):
                if tree is None:
                    out[i], at = new[at], at + 1
                else:
                    out[i] = tree.unflatten(new[at:at + tree.num_leaves])
                    at += tree.num_leaves
            return tuple(out)

        return leaves, put

    # -- recording -----------------------------------------------------------------------

    def _record(self, key: tuple, fun: Callable, args: tuple) -> Any:
        leaves, put = self._leaves(args)
        recorder = Recorder()
        traced = [recorder.input(np.asarray(leaf)) for leaf in leaves]
        traced_args = put(traced)
        session = Session(RECORDING, recorder)
        seen: dict = {}

        def hook(*fargs: Any) -> Any:
            if seen:  # the transform calls the function again (chunks): no replay
                session.broken = "the transform calls the function more than once"
                return fun(*fargs)
            seen["called"] = len(recorder.operations)
            live_args, seen["arguments"] = _live_arguments(fargs, traced_args, session)
            out = fun(*live_args)
            try:
                seen["output"] = output_template(out, session)
            except Opaque as why:
                session.broken = session.broken or f"the function's result: {why}"
                seen["output"] = None
            seen["returned"] = len(recorder.operations)
            seen["log"] = list(session.log)
            return _unwrapped(out, session)

        try:
            result = self.body(hook, *traced_args)
        finally:
            session.finish()
        result_leaves, result_tree = optree.tree_flatten(result)
        plain = result_tree.unflatten([_plain(leaf) for leaf in result_leaves])
        try:
            if not seen:
                raise Unreplayable("the transform did not call the function")
            recording = Recording(session, recorder, traced, seen["arguments"], seen["output"],
                                  (seen["called"], seen["returned"]), result_leaves,
                                  result_tree)
            self._check_twin(recorder, result_leaves, leaves, put, seen, recording)
        except (Unreplayable, Opaque) as why:
            self._remember(key, Interpreted(str(why)))
        else:
            self._remember(key, recording)
        return plain

    def _check_twin(self, recorder: Recorder, result_leaves: list, leaves: list,
                    put: Callable, seen: dict, recording: Recording) -> None:
        """Record the call again from its operations alone, with the traced arrays'
        memory holding other numbers: a value read where the recording cannot see it
        (NumPy's ``np.asarray``, C code) shows up as a difference."""
        twin = Recorder(poisoned=True)
        traced = [twin.input(np.asarray(leaf)) for leaf in leaves]

        def hook(*fargs: Any) -> Any:
            duals = _duals_of(fargs, recording.arguments)
            replay_log(seen["log"], duals)
            tree, expected = recording.output
            return tree.unflatten([_from_template(e, duals) for e in expected])

        try:
            with np.errstate(all="ignore"):
                out = self.body(hook, *put(traced))
        except Exception as error:
            raise Unreplayable(f"the recording's twin raised {error!r}") from None
        if not same_recording(recorder, result_leaves, twin, optree.tree_leaves(out)):
            raise Unreplayable("a recorded value was read where the recording cannot see")

    # -- replaying -------------------------------------------------------------------------

    def _replay(self, recording: Recording, fun: Callable, args: tuple) -> Any:
        leaves, _ = self._leaves(args)
        session = Session(REPLAYING, recording, recording.nested)
        registers = session.registers = [None] * recording.registers
        for slot, leaf in zip(recording.inputs, leaves):
            registers[slot] = leaf if type(leaf) is np.ndarray else np.asarray(leaf)
        try:
            recording.prepare(registers)
        except GuardFailed:
            return self.body(fun, *args)
        context = contextvars.copy_context()
        interpreter: list[Coroutine] = []

        def materialize() -> None:
            coroutine = Coroutine(self.body, args, {}, context)
            interpreter.append(coroutine)
            fargs, _ = coroutine.arguments()
            duals = _duals_of(fargs, recording.arguments)
            replay_log(session.log, duals)
            session.duals = duals
            session.mode = INTERPRETING

        session.materialize = materialize
        try:
            out = fun(*_replayed_arguments(recording.arguments, args, session))
            if session.mode == REPLAYING:
                if session.position == len(recording.steps) \
                        and recording.output_matches(out, session):
                    try:
                        return recording.result_tree.unflatten(recording.complete(registers))
                    except GuardFailed:
                        pass
                materialize()
            return interpreter[0].finish(_unwrapped(out, session))
        except BaseException:
            if interpreter:
                interpreter[0].cancel()
            raise
        finally:
            session.finish()


def _with_keywords(fun: Callable, kwargs: dict) -> Callable:
    return lambda *args: fun(*args, **kwargs)


def _leaf_signature(leaf: Any) -> Any:
    kind = type(leaf)
    if kind is np.ndarray:
        return None if leaf.dtype.hasobject else (leaf.shape, leaf.dtype, leaf.strides)
    if kind is float or kind is int or kind is complex:
        return kind
    if isinstance(leaf, np.generic) and not isinstance(leaf, np.object_):
        return kind
    return None


def _live_arguments(fargs: tuple, traced_args: tuple, session: Session) -> tuple[list, list]:
    """The function's arguments with the interpreter's Duals as Live values, and how
    a replay makes them (:func:`_replayed_arguments`)."""
    live_args, spec = [], []
    for i, a in enumerate(fargs):
        if i < len(traced_args) and a is traced_args[i] and not isinstance(a, Dual):
            live_args.append(a)
            spec.append(("arg", i))
            continue
        leaves, tree = optree.tree_flatten(a)
        lives = []
        for leaf in leaves:
            if not isinstance(leaf, Dual):
                session.broken = "an argument that is not a Dual"
                lives.append(leaf)
                continue
            value = leaf
            while isinstance(value, Dual):
                value = value.primal
            session.nested = session.nested or isinstance(leaf.primal, Dual)
            traced = isinstance(value, Traced)
            lives.append(session.adopt(leaf, value._value if traced else value,
                                       value._slot if traced else None))
        live_args.append(tree.unflatten(lives))
        spec.append(("tree", tree, len(leaves)))
    return live_args, spec


def _replayed_arguments(spec: list, args: tuple, session: Session) -> list:
    registers, slots = session.registers, session.recording.argument_slots
    out, at = [], 0
    for item in spec:
        if item[0] == "arg":
            out.append(args[item[1]])
        else:
            _, tree, n = item
            lives = [session.new_live(registers[slots[at + j]]) for j in range(n)]
            for live in lives:
                if live._index in session.recording.held:
                    session.targets[live._index] = live
            out.append(tree.unflatten(lives))
            at += n
    return out


def _duals_of(fargs: tuple, spec: list) -> dict:
    """The interpreter's Duals for the Live values that stood for the arguments."""
    duals, at = {}, 0
    for a, item in zip(fargs, spec):
        if item[0] == "tree":
            for leaf in optree.tree_leaves(a):
                duals[at] = leaf
                at += 1
    return duals


def _from_template(expected: Any, duals: dict) -> Any:
    from .live import Bits, LiveRef
    if type(expected) is LiveRef:
        return duals[expected.index]
    if type(expected) is Bits:
        return expected.value
    return expected


def _unwrapped(out: Any, session: Session) -> Any:
    leaves, tree = optree.tree_flatten(out, none_is_leaf=True)
    return tree.unflatten([session._unwrap(leaf) for leaf in leaves])


def _plain(x: Any) -> Any:
    """A result of the recording call as the interpreter gives it (no traced array)."""
    if isinstance(x, Traced):
        value = x._value
        return value.copy() if isinstance(value, np.ndarray) else value
    return x


def replayed(body: Callable, fun: Callable, argnums: int | Sequence[int] | None,
             enabled: bool) -> Callable:
    """``body(fun, *args)`` behind a :class:`Replayed` cache tracing the leaves of the
    arguments ``argnums`` (every argument if None), or called as it is when not
    ``enabled``; keyword arguments go to ``fun``."""
    if not enabled:
        def interpreted(*args: Any, **kwargs: Any) -> Any:
            return body(_with_keywords(fun, kwargs) if kwargs else fun, *args)
        return interpreted
    return Replayed(body, fun, argnums)


_BY_FUNCTION: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_BY_FUNCTION_LOCK = threading.Lock()


def replayed_call(fun: Callable, variant: tuple, body: Callable, args: tuple) -> Any:
    """``body(fun, *args)`` behind a replay cache kept for ``fun`` and ``variant``
    (for the transforms called with the function, ``jvp`` and ``hvp``), tracing
    every leaf of ``args``. The cache lives as long as ``fun`` does; a function
    that cannot be weakly referenced is interpreted."""
    try:
        caches = _BY_FUNCTION.get(fun)
        if caches is None:
            with _BY_FUNCTION_LOCK:
                caches = _BY_FUNCTION.setdefault(fun, {})
    except TypeError:
        return body(fun, *args)
    cache = caches.get(variant)
    if cache is None:
        cache = caches.setdefault(variant, Replayed(body, None, None))
    return cache.run(fun, args, {})


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
