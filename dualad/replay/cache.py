"""The replay cache in front of a transform's interpreter.

:class:`Replayed` wraps a transform's interpreter, ``body(fun, *args)`` (the
body of ``jacfwd(f)``, ``grad(f)``, ...). For each input signature — the number
of arguments, the names of keyword arguments, and the pytree structure, type,
shape, dtype and strides of each differentiated leaf — it goes through three
stages:

1. the first :data:`RECORD_AFTER` calls run the interpreter (a transform called a
   few times, as in a short SciPy fit, never pays for a recording); the first
   counts how often the transform calls the function: several times (chunks of
   seeds) keeps the interpreter;
2. the next call runs it on traced arrays and records, while the user's
   function runs on :class:`~dualad.replay.live.Live` values, the NumPy calls of
   each of its operations (:class:`~dualad.replay.recording.Recording`); the same
   recording is made a second time from the operations alone, with the traced
   arrays' memory holding other numbers, and the two must be the same (a rule
   that reads a value where the recording cannot see it keeps the interpreter);
3. later calls run the user's function on Live values, operation by operation
   against the recording (see :mod:`dualad.replay.live`); at the first difference
   the call continues in the interpreter (:mod:`dualad.replay.coroutine`). The
   first :data:`COMPILE_AFTER` replays run the recorded NumPy calls directly
   (:mod:`dualad.replay.direct`), the later ones the recording's compiled code.

Nothing but the signature is keyed: whatever the function reads (globals,
attributes, closures, arrays written in place, its other arguments) is checked
where it meets an operation, bit for bit, on every call; the transform's other
float scalar arguments (an ODE's ``t``) are registers, whatever their values. A
call that leaves its recording makes the next one record the new path;
:data:`MAX_MISSES` in a row keep the interpreter. A cache is found from the function
and the transform's options (:func:`~dualad.replay.transformed.replayed`), bounded.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from .. import progress
from ..dual import Dual
from ..fillable import resolved_tree
from ..pytrees import tree_flatten, tree_leaves, tree_structure
from .live import INTERPRETING, RECORDING, REPLAYING, Live, Session
from .rerun import duals_of, replay_log
from .program import GuardFailed
from .recording import Recording, Unreplayable, output_template
from .scalars import underflow_ignored
from .templates import Bits, LiveRef, Objects, Opaque
from .tracing import Recorder, Traced, Unrecordable, same_recording

__all__ = ["Replayed", "REPLAY_BY_DEFAULT", "CACHE_SIZE", "RECORD_AFTER", "COMPILE_AFTER",
           "Interpreted", "with_keywords"]

#: Whether transforms replay unless told ``replay=False``; the environment
#: variable ``DUALAD_REPLAY=0`` turns it off for the process.
REPLAY_BY_DEFAULT = os.environ.get("DUALAD_REPLAY", "1") not in ("0", "false", "no", "off")

#: Input signatures remembered per transformed function.
CACHE_SIZE = 8

#: Interpreted calls of an input signature before the next one records it. A
#: recording costs as much as 10 to 40 interpreted calls (the traced run, its twin,
#: compiling), and makes later calls 2 to 8 times faster: a transform called a few
#: times (a short SciPy fit) is better off never recording, one called many times
#: loses little by waiting. ``DUALAD_RECORD_AFTER`` sets it for the process.
RECORD_AFTER = int(os.environ.get("DUALAD_RECORD_AFTER", "8"))

#: Calls a recording replays by running its NumPy calls directly before its code is
#: generated and compiled (see dualad.replay.direct): compiling costs 10 to 20
#: interpreted calls and makes each replay up to twice as fast, so a transform
#: called a few dozen times never pays for it. ``DUALAD_COMPILE_AFTER`` sets it.
COMPILE_AFTER = int(os.environ.get("DUALAD_COMPILE_AFTER", "32"))

#: Calls that left their recording (each followed by a new recording; less the
#: replays between them, see REPLAYS_PER_MISS) after which a signature keeps the
#: interpreter. A call that only found floats that change (see Session.variable) is
#: progress, not a miss.
MAX_MISSES = 4

#: Replays that make up for one call that left its recording: a new recording
#: costs some 30 interpreted calls, which a replay pays back by about 3/4 of one,
#: so a signature whose calls leave it more often than this keeps the interpreter.
REPLAYS_PER_MISS = 32

#: Argument types taken as they are, with no pytree flattening.
_FLAT = frozenset({np.ndarray, float, int})


class _Seen:
    """A signature interpreted ``calls`` times (or whose recording the last call left:
    then ``calls`` is :data:`RECORD_AFTER`): the call after the
    :data:`RECORD_AFTER`-th records it."""

    __slots__ = ("misses", "calls", "variable", "previous")

    def __init__(self, misses: int = 0, calls: int = 1, variable: dict | None = None,
                 previous: list | None = None) -> None:
        self.misses, self.calls = misses, calls
        #: Step -> the float arguments that changed between calls, and the steps of
        #: the recording the last call left because they did (see Session).
        self.variable, self.previous = variable or {}, previous or []


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
    argument if None). The user's function is given at each :meth:`run` (the cache
    may serve every transform of it with these options: it must not keep it
    alive); keyword arguments go to it as they are, undifferentiated. It keeps at
    most ``maxsize`` signatures, and records one after ``record_after`` interpreted
    calls (:data:`RECORD_AFTER` if None).
    """

    def __init__(self, body: Callable, argnums: int | Sequence[int] | None,
                 maxsize: int = CACHE_SIZE, record_after: int | None = None) -> None:
        self.body = body
        self.argnums = (argnums,) if isinstance(argnums, (int, np.integer)) else argnums
        self.maxsize = maxsize
        #: Interpreted calls before a signature records: :data:`RECORD_AFTER` if None
        #: (read at each call); fewer where an unreplayed call costs more than usual.
        self.record_after = record_after
        self.entries: OrderedDict = OrderedDict()
        #: ``(accepts, key, recording)`` of the signature replayed last: ``accepts(args)``
        #: gives a call's differentiated leaves if it has that signature, else None.
        self.last: tuple | None = None
        self.lock = threading.Lock()
        self._by_count: dict[int, Any] = {}
        #: How its calls went (diagnostics): run by the interpreter, recorded,
        #: replayed to the end, or continued in the interpreter after a difference.
        self.counts = {"interpreted": 0, "recorded": 0, "replayed": 0, "continued": 0}

    def __reduce__(self) -> tuple:
        """Pickled (sent to a worker process with its transform), an empty cache."""
        return (type(self), (self.body, self.argnums, self.maxsize, self.record_after))

    def run(self, fun: Callable, args: tuple, kwargs: dict, replayed: list | None = None
            ) -> Any:
        """``body(fun, *args)`` with ``kwargs`` to ``fun``; a call that followed its
        recording to the end appends True to ``replayed`` (its operations were the
        recorded ones: the sparse transforms' proof that the pattern holds)."""
        if kwargs:
            fun = with_keywords(fun, kwargs)
        else:
            last = self.last  # the signature of the last call, checked by its own code
            if last is not None:
                leaves = last[0](args)
                if leaves is not None:
                    return self._replay(last[1], last[2], fun, args, leaves, replayed)
        key, leaves = self._signature(args, kwargs)
        entry = self.entries.get(key) if key is not None else None
        if type(entry) is Recording:
            if not kwargs:
                positions, others = self._split(len(args))
                accepts = _accepting(key, tuple(positions), tuple(others))
                if accepts is not None:
                    self.last = (accepts, key, entry)
            return self._replay(key, entry, fun, args, leaves, replayed)
        if type(entry) is _Seen:
            if entry.calls >= (RECORD_AFTER if self.record_after is None
                               else self.record_after):
                with progress.recording(fun):
                    return self._record(key, fun, args, leaves, entry.misses, entry.variable,
                                        entry.previous)
            entry.calls += 1
        self.counts["interpreted"] += 1
        if entry is not None or key is None:
            return self.body(fun, *args)
        calls = []  # a transform that calls the function once per call can replay

        def counted(*fargs: Any) -> Any:
            calls.append(None)
            return fun(*fargs)

        result = self.body(counted, *args)
        self._remember(key, _Seen() if len(calls) == 1 else Interpreted(
            f"the transform calls the function {len(calls)} times per call (chunks)"))
        return result

    # -- signatures --------------------------------------------------------------------

    def _positions(self, args: tuple) -> Sequence[int] | None:
        """The positions of the differentiated arguments (None if ``argnums`` is out of
        range: the interpreter says what is wrong), remembered by number of arguments."""
        return self._split(len(args))[0]

    def _split(self, count: int) -> tuple:
        """``(differentiated positions, other positions)`` of a call with ``count``
        arguments."""
        split = self._by_count.get(count)
        if split is None:
            if self.argnums is None:
                split = (range(count), ())
            elif all(-count <= i < count for i in self.argnums):
                chosen = [i % count for i in self.argnums]
                split = (chosen, tuple(i for i in range(count) if i not in chosen))
            else:
                split = (None, ())
            self._by_count[count] = split
        return split

    def _signature(self, args: tuple, kwargs: dict) -> tuple[tuple | None, list]:
        """The cache key of a call and its differentiated leaves; no key when it cannot
        be replayed (an array subclass, another library's array, an object array)."""
        positions, others = self._split(len(args))
        if positions is None:
            return None, []
        parts: list = [len(args), tuple(kwargs) if kwargs else None]
        for i in others:  # traced too where they are floats: an ODE's t, a matrix
            parts.append(_argument_signature(args[i]))
        leaves: list = []
        for i in positions:
            arg = args[i]
            kind = type(arg)
            if kind is np.ndarray and not arg.dtype.hasobject:
                parts.append((arg.shape, arg.dtype, arg.strides))
                leaves.append(arg)
            elif kind is float or kind is int:
                parts.append(kind)
                leaves.append(arg)
            else:
                found, tree = tree_flatten(arg)
                part = [tree] + [_leaf_signature(leaf) for leaf in found]
                if None in part:
                    return None, []
                parts.append(tuple(part))
                leaves += found
        return tuple(parts), leaves

    def clear(self) -> None:
        """Forget every signature."""
        with self.lock:
            self.last = None
            self.entries.clear()

    def _remember(self, key: tuple, value: Any) -> None:
        with self.lock:
            self.last = None
            self.entries[key] = value
            self.entries.move_to_end(key)
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)

    def _putting(self, args: tuple) -> Callable[[list], tuple]:
        """A function putting new leaves in the places of the differentiated ones
        (the other arguments stay the same objects)."""
        positions = list(self._positions(args))
        trees = [None if type(args[i]) in _FLAT else tree_structure(args[i])
                 for i in positions]

        def put(new: list) -> tuple:
            out, at = list(args), 0
            for i, tree in zip(positions, trees):
                if tree is None:
                    out[i], at = new[at], at + 1
                else:
                    out[i] = tree.unflatten(new[at:at + tree.num_leaves])
                    at += tree.num_leaves
            return tuple(out)

        return put

    # -- recording -----------------------------------------------------------------------

    def _record(self, key: tuple, fun: Callable, args: tuple, leaves: list,
                misses: int = 0, variable: dict | None = None,
                previous: list | None = None) -> Any:
        self.counts["recorded"] += 1
        put = self._putting(args)
        recorder = Recorder()
        traced = [recorder.input(np.asarray(leaf)) for leaf in leaves]
        traced_args = put(traced)
        session = Session(RECORDING, recorder)
        session.arguments = args
        session.variable, session.previous = dict(variable or {}), previous or []
        others = [i for i in self._split(len(args))[1]
                  if _argument_signature(args[i]) is not None]
        for i in others:
            register = _argument_register(recorder, args[i])
            session.argument_ids[id(args[i])] = (args[i], register, i)
            traced.append(register)
        seen: dict = {}
        session.start(self.body, args)

        def hook(*fargs: Any) -> Any:
            if seen:  # the transform calls the function again (chunks): no replay
                session.broken = "the transform calls the function more than once"
                return fun(*fargs)
            seen["called"] = len(recorder.operations)
            live_args, seen["arguments"] = _live_arguments(fargs, traced_args, session)
            session.arguments_spec = seen["arguments"]
            out = seen["out"] = resolved_tree(fun(*live_args))
            if session.mode == INTERPRETING:  # an operation could not be recorded
                raise _Continued(session.finish_interpreting(out))
            try:
                seen["output"] = output_template(out, session)
            except Opaque as why:
                session.broken = session.broken or f"the function's result: {why}"
                seen["output"] = None
            seen["returned"] = len(recorder.operations)
            seen["log"] = list(session.log)
            return session.unwrapped(out)

        try:
            result = self.body(hook, *traced_args)
        except _Continued as continued:
            self._remember(key, Interpreted(f"recording failed: {session.broken}"))
            return continued.result
        except (Unrecordable, Exception) as error:
            if "called" not in seen:  # before the function: the interpreter says
                self._remember(key, Interpreted(f"recording failed: {error!r}"))
                return self.body(fun, *args)
            if "returned" not in seen:
                session.cancel()
                if not isinstance(error, Unrecordable):
                    raise  # the function's own exception
                # A traced value reached NumPy unseen, in no operation: the function
                # cannot go on, and runs again in the interpreter (no known path left).
                self._remember(key, Interpreted(f"recording failed: {error!r}"))
                return self.body(fun, *args)
            # After the function: the interpreter finishes the transform.
            self._remember(key, Interpreted(f"recording failed: {error!r}"))
            session.mode = RECORDING
            session.materialize()
            return session.finish_interpreting(seen["out"])
        finally:
            session.finish()
        result_leaves, result_tree = tree_flatten(result)
        plain = result_tree.unflatten([_plain(leaf) for leaf in result_leaves])
        try:
            if not seen:
                raise Unreplayable("the transform did not call the function")
            recording = Recording(session, recorder, traced, seen["arguments"], seen["output"],
                                  (seen["called"], seen["returned"]), result_leaves,
                                  result_tree, others)
            self._check_twin(recorder, result_leaves, args, leaves, put, seen, recording)
        except (Unreplayable, Opaque) as why:
            self._remember(key, Interpreted(str(why)))
        else:
            recording.misses = misses
            recording.variable = session.variable
            self._remember(key, recording)
        return plain

    def _check_twin(self, recorder: Recorder, result_leaves: list, args: tuple,
                    leaves: list, put: Callable, seen: dict, recording: Recording) -> None:
        """Record the call again from its operations alone, with the traced arrays'
        memory holding other numbers: a value read where the recording cannot see it
        (NumPy's ``np.asarray``, C code) shows up as a difference."""
        twin = Recorder(poisoned=True)
        with np.errstate(all="ignore"):
            traced = [twin.input(np.asarray(leaf)) for leaf in leaves]
            substitute = {id(args[i]): (args[i], _argument_register(twin, args[i]))
                          for i in recording.other_arguments}

        def hook(*fargs: Any) -> Any:
            duals = duals_of(fargs, recording.arguments)
            replay_log(seen["log"], duals, substitute, twin.input_number)
            tree, expected = recording.output
            return tree.unflatten([_from_template(e, duals) for e in expected])

        try:
            with np.errstate(all="ignore"):
                out = self.body(hook, *put(traced))
        except Exception as error:
            raise Unreplayable(f"the recording's twin raised {error!r}") from None
        if not same_recording(recorder, result_leaves, twin, tree_leaves(out)):
            raise Unreplayable("a recorded value was read where the recording cannot see")

    # -- replaying -------------------------------------------------------------------------

    def _replay(self, key: tuple, recording: Recording, fun: Callable, args: tuple,
                leaves: list, replayed: list | None) -> Any:
        code = recording.code  # one code for the whole call (compile may swap it)
        session = Session.replaying(recording, code, self.body, args)
        try:
            arguments = code.enter(session, leaves, args)
        except GuardFailed:  # the transform's seeding took another branch
            return self.body(fun, *args)
        try:
            out = fun(*arguments)
            if type(out) is not Live:
                out = resolved_tree(out)
            if session.mode == REPLAYING:
                single = recording.single_output
                if session.position == len(recording.steps) and (
                        recording.output_matches(out, session) if single is None
                        else type(out) is Live and out._index == single
                        and out._session is session):
                    try:
                        result = code.complete(session.registers)
                    except GuardFailed:
                        pass
                    else:
                        self.counts["replayed"] += 1
                        if recording.source is None:
                            recording.replays += 1
                            if recording.replays >= COMPILE_AFTER:
                                recording.compile()
                        if recording.misses:  # a miss is forgiven after REPLAYS_PER_MISS
                            recording.misses = max(0.0, recording.misses - 1 / REPLAYS_PER_MISS)
                        if replayed is not None:
                            replayed.append(True)
                        return result
                session.materialize()
            self.counts["continued"] += 1
            if code.unrolled and not underflow_ignored():
                # Python floats cannot stand for NumPy under this error state: the
                # interpreter computes the call, and the recording stays for later ones.
                return session.finish_interpreting(out)
            variable, misses = _with_changed(recording.variable,
                                             getattr(session, "changed", None))
            misses += recording.misses  # record the new path, unless it keeps changing
            self._remember(key, _Seen(misses, RECORD_AFTER, variable,
                                      recording.steps if variable is not recording.variable
                                      else None) if misses < MAX_MISSES
                           else Interpreted("its operations differ from the recording's "
                                            "call after call"))
            return session.finish_interpreting(out)
        except BaseException:
            session.cancel()
            raise
        finally:
            session.finish()


class _Continued(BaseException):
    """The recording call went on in the interpreter: its result (raised through the
    traced transform, which is abandoned)."""

    def __init__(self, result: Any) -> None:
        self.result = result


def _with_changed(variable: dict, changed: tuple | None) -> tuple[dict, int]:
    """The floats to take as inputs at the next recording: ``variable`` and those a
    call found ``changed`` (step, positions); and 0 misses if that added one (the
    recording learns which values vary, which is progress), else 1."""
    if changed is None:
        return variable, 1
    step, positions = changed
    known = variable.get(step, set())
    if known.issuperset(positions):
        return variable, 1
    return {**variable, step: known | set(positions)}, 0


def with_keywords(fun: Callable, kwargs: dict) -> Callable:
    return lambda *args: fun(*args, **kwargs)


def _argument_signature(arg: Any) -> Any:
    """For an argument not differentiated: its kind if the recording traces it (a
    float scalar, such as an ODE's ``t``: a register, whatever its value), else None:
    a constant, compared bit for bit where an operation meets it (an array of data
    stays a constant, so that what is computed from it alone is computed once)."""
    kind = type(arg)
    if kind is float:
        return kind
    return kind if isinstance(arg, (np.floating, np.complexfloating)) else None


@functools.lru_cache(maxsize=256)
def _accepting(key: tuple, positions: Sequence[int], others: Sequence[int]
               ) -> Callable[[tuple], list | None] | None:
    """The code of :meth:`Replayed._signature` for one key: ``accepts(args)``, the
    differentiated leaves of a call whose key is ``key``, else None (and None for a
    key with pytrees other than tuples of leaves, which this does not check)."""
    lines = ["def accepts(args):", f"    if len(args) != {key[0]}: return None"]
    namespace = {"_ndarray": np.ndarray, "_generic": (np.floating, np.complexfloating)}
    for i, part in zip(others, key[2:]):
        lines.append(f"    a = args[{i}]")
        if part is None:
            lines.append("    if type(a) is float or isinstance(a, _generic): return None")
        else:
            namespace[f"k{i}"] = part
            lines.append(f"    if type(a) is not k{i}: return None")
    names = []
    for i, part in zip(positions, key[2 + len(others):]):
        lines.append(f"    a{i} = args[{i}]")
        if _leaf_check(f"a{i}", part, namespace, lines):
            names.append(f"a{i}")
        elif (type(part) is tuple and part and type(part[0]) is optree.PyTreeSpec
              and part[0] == tree_structure((0,) * (len(part) - 1))):
            # a tuple of leaves (jvp's primals and tangents)
            lines.append(f"    if type(a{i}) is not tuple or len(a{i}) != {len(part) - 1}: "
                         "return None")
            for j, leaf in enumerate(part[1:]):
                lines.append(f"    a{i}_{j} = a{i}[{j}]")
                if not _leaf_check(f"a{i}_{j}", leaf, namespace, lines):
                    return None
                names.append(f"a{i}_{j}")
        else:
            return None
    lines.append(f"    return [{', '.join(names)}]")
    exec(compile("\n".join(lines), "<dualad signature>", "exec"), namespace)
    return namespace["accepts"]


def _argument_register(recorder: Recorder, arg: Any) -> Any:
    """A traced stand-in for an argument: a Python float stays a float (NumPy's
    promotion treats it as one), the rest is a traced array."""
    return recorder.input_float(arg) if type(arg) is float else recorder.input(np.asarray(arg))


def _leaf_check(name: str, part: Any, namespace: dict, lines: list) -> bool:
    """Append to ``lines`` the check that the leaf ``name`` has the signature ``part``
    (False where ``part`` is not a leaf's signature)."""
    if type(part) is type:
        namespace[f"k_{name}"] = part
        lines.append(f"    if type({name}) is not k_{name}: return None")
        return True
    if type(part) is tuple and len(part) == 3 and isinstance(part[1], np.dtype):
        namespace[f"d_{name}"] = part[1]
        lines.append(f"    if type({name}) is not _ndarray or {name}.shape != {part[0]!r} "
                     f"or {name}.dtype is not d_{name} or {name}.strides != {part[2]!r}: "
                     "return None")
        return True
    return False


def _leaf_signature(leaf: Any) -> Any:
    kind = type(leaf)
    if kind is np.ndarray:
        return None if leaf.dtype.hasobject else (leaf.shape, leaf.dtype, leaf.strides)
    if kind is float or kind is int or kind is complex:
        return kind
    if issubclass(kind, np.generic) and kind is not np.object_:  # (no Dual's __class__)
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
        leaves, tree = tree_flatten(a)
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
        spec.append(("tree", tree, len(leaves), optree.treespec_is_leaf(tree)))
    return live_args, spec


def _from_template(expected: Any, duals: dict) -> Any:
    """The value a template stands for, with the Duals of the Live values."""
    kind = type(expected)
    if kind is LiveRef:
        return duals[expected.index]
    if kind is Bits:
        return expected.value
    if kind is Objects:
        out = np.empty(expected.shape, object)
        for i, item in enumerate(expected.items):
            out.flat[i] = _from_template(item, duals)
        return out
    return expected


def _plain(x: Any) -> Any:
    """A result of the recording call as the interpreter gives it (no traced array)."""
    if isinstance(x, Traced):
        value = x._value
        return value.copy(order="K") if isinstance(value, np.ndarray) else value
    return x
