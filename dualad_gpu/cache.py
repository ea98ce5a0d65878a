"""The cache of compiled transforms: keyed on a function's code and the state it reads.

``dualad_gpu.grad(f)`` compiles ``f`` by tracing it once: whatever ``f`` reads
besides its arguments (a global array, a closed-over value, ``self.w`` of a
bound method) is baked into the compiled program as a constant. So the cache
key is not the function object but what decides its result:

- its code, defaults, and the values of the closure cells and globals that its
  code names (and, recursively, those of the functions, bound methods,
  ``functools.partial`` objects, containers and object attributes among them);
- NumPy arrays among these by identity *and content*: replacing a captured
  array or writing into it gives another key (a new trace), never a stale
  result; a captured ``jax.Array`` (immutable) by identity;
- Python scalars by value, modules, classes and library functions by identity.

A new lambda per call with the same code and captured values finds the
program already compiled; a changed attribute or array compiles anew. What the
walk does not look into (attributes of modules and classes, objects beyond
:data:`MAX_DEPTH` levels or :data:`MAX_NODES` objects) is compared by identity.

The cache holds at most :data:`CACHE_SIZE` compiled transforms, least recently
used first out; an entry out of it frees its programs.
"""

from __future__ import annotations

import functools
import itertools
import threading
import types
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

#: Compiled transforms kept (each with its programs for every input signature).
CACHE_SIZE = 64
#: How deep the walk of a function's state goes (containers, attributes, functions).
MAX_DEPTH = 6
#: How many objects the walk looks into per call, beyond which identity stands.
MAX_NODES = 1000

# Packages whose functions hold no user state: keyed by identity, not walked.
_LIBRARIES = frozenset({"numpy", "scipy", "jax", "jaxlib", "dualad", "dualad_gpu", "optree",
                        "opt_einsum", "ml_dtypes"})

_PLAIN = (type(None), bool, int, str, bytes, type(Ellipsis), type(NotImplemented), range)


class Identity:
    """Stands for an object compared by identity; holds it, so its id is not reused."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.value is self.value


class ArrayState:
    """A captured NumPy array: equal to another for the same array with the same
    bytes as when the key was stored (:meth:`freeze` keeps a copy of them)."""

    __slots__ = ("array", "snapshot", "_hash")

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.snapshot: bytes | None = None
        self._hash = hash((id(array), array.shape, array.dtype.str))

    def freeze(self) -> None:
        self.snapshot = self.array.tobytes()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayState) or other.array is not self.array:
            return False
        stored = self.snapshot if self.snapshot is not None else other.snapshot
        if stored is None:
            return True
        return (self.array.shape == other.array.shape and self.array.dtype == other.array.dtype
                and self.array.tobytes() == stored)


@functools.lru_cache(maxsize=4096)
def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """The names a code object (and the code nested in it) may read as globals."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_global_names(const))
    return tuple(dict.fromkeys(names))


def _is_library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.partition(".")[0] in _LIBRARIES


class StateKey:
    """Builds the hashable key of a function's state (one walk per call)."""

    def __init__(self) -> None:
        self.arrays: list[ArrayState] = []
        self._seen: dict[int, int] = {}
        self._nodes = 0

    def of(self, value: Any, depth: int = 0) -> Any:
        t = type(value)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            return Identity(value)
        if t in _PLAIN:
            return (t, value)
        if t is float:
            return (t, value.hex())  # -0.0 is not 0.0; nan equals nan
        if t is complex:
            return (t, value.real.hex(), value.imag.hex())
        if isinstance(value, np.ndarray):
            state = ArrayState(value)
            self.arrays.append(state)
            return state
        if isinstance(value, np.generic):
            return (t, value.tobytes())
        if isinstance(value, (jax.Array, types.ModuleType, type, np.ufunc,
                              types.BuiltinFunctionType, types.BuiltinMethodType)):
            return Identity(value)
        seen = self._seen.get(id(value))
        if seen is not None:
            return ("seen", seen)
        if depth > MAX_DEPTH:
            return Identity(value)
        self._seen[id(value)] = len(self._seen)
        deeper = depth + 1
        if t in (tuple, list):
            return (t, tuple(self.of(v, deeper) for v in value))
        if t is dict:
            return (t, tuple((self.of(k, deeper), self.of(v, deeper)) for k, v in value.items()))
        if isinstance(value, types.FunctionType):
            return self._function(value, deeper)
        if isinstance(value, types.MethodType):
            return (t, self.of(value.__func__, deeper), self.of(value.__self__, deeper))
        if isinstance(value, functools.partial):
            return (t, self.of(value.func, deeper), self.of(value.args, deeper),
                    self.of(value.keywords, deeper))
        attributes = getattr(value, "__dict__", None)
        if type(attributes) is dict and not _is_library(t):
            return (Identity(value), tuple((name, self.of(v, deeper))
                                           for name, v in attributes.items()))
        return Identity(value)

    def _function(self, f: types.FunctionType, depth: int) -> Any:
        if _is_library(f):
            return Identity(f)
        cells = ()
        if f.__closure__:
            cells = tuple(self.of(_cell_value(c), depth) for c in f.__closure__)
        scope = f.__globals__
        names = tuple((name, self.of(scope[name], depth))
                      for name in _global_names(f.__code__) if name in scope)
        return (types.FunctionType, f.__code__, Identity(scope), cells, names,
                self.of(f.__defaults__, depth), self.of(f.__kwdefaults__, depth))


_EMPTY_CELL = object()


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return _EMPTY_CELL


def state_key(fun: Callable) -> tuple[Any, list[ArrayState]]:
    """``fun``'s key and the captured NumPy arrays in it (to freeze when stored)."""
    key = StateKey()
    return key.of(fun), key.arrays


class LRUCache:
    """At most ``CACHE_SIZE`` entries, the least recently used dropped first."""

    def __init__(self) -> None:
        self._entries: dict = {}  # key -> [entry, time of last use]
        self._clock = itertools.count()
        self._lock = threading.Lock()

    def get_or_add(self, key: Any, arrays: list[ArrayState], make: Callable[[], Any]) -> Any:
        slot = self._entries.get(key)  # one lookup: comparing keys compares arrays
        if slot is not None:
            slot[1] = next(self._clock)
            return slot[0]
        entry = make()
        with self._lock:
            for state in arrays:
                state.freeze()
            self._entries[key] = [entry, next(self._clock)]
            while len(self._entries) > CACHE_SIZE:
                oldest = min(self._entries, key=lambda k: self._entries[k][1])
                del self._entries[oldest]
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
