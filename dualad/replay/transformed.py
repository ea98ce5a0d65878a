"""Transformed functions, and the replay cache each finds from its function.

``jacfwd(f)`` returns a :class:`Transformed`: ``f``'s transform behind the
:class:`~dualad.replay.cache.Replayed` cache of ``f`` and the transform's options
(its body's code and the values it closes over). The cache is found from ``f``
under a weak reference, so ``jacfwd(f)(x)`` written inline in a loop finds the
recording of the last iteration, and the cache dies with ``f`` (a bound method's
with its object). A transform made again with the same options finds its cache at
once (:func:`made_before`), so writing it inline costs a look-up. Each call also
lets NumPy's array constructors take Duals while it runs (:mod:`dualad.constructors`).
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from types import MethodType
from typing import Any

from ..constructors import enter as enter_constructors, exit as exit_constructors, scoped
from .cache import Replayed, with_keywords

__all__ = ["Transformed", "made_before", "replayed", "replayed_call"]


def made_before(factory: Callable, fun: Callable, options: tuple) -> Transformed | None:
    """``factory(fun, *options)`` as made before, if it was (else None): the replay
    cache that transform found, behind a new :class:`Transformed` of ``fun``. The
    factory checks its options first: options equal but of another type
    (``argnums=False`` and ``0``) share a key."""
    if type(fun) is MethodType:
        owner, key = fun.__self__, (factory, options, fun.__func__)
    else:
        owner, key = fun, (factory, options)
    found = _BY_FUNCTION.get(id(owner))
    if found is None or found[0]() is not owner:
        return None
    try:
        cache = found[1].get(key)
    except TypeError:  # an unhashable option
        return None
    return None if cache is None else Transformed(cache, fun)


def replayed(body: Callable, fun: Callable, argnums: int | Sequence[int] | None,
             enabled: bool, made_as: tuple | None = None) -> Callable:
    """``body(fun, *args)`` behind a replay cache tracing the leaves of the arguments
    ``argnums`` (every argument if None), or called as it is when not ``enabled``;
    keyword arguments go to ``fun``.

    The cache is found from ``fun`` (weakly; a bound method's from its object) and
    the transform — ``body``'s code and the options it closes over —, so
    ``jacfwd(f)(x)`` written inline in a loop finds the recording of the last
    iteration. ``made_as``, ``(factory, options)``, lets :func:`made_before` find the
    cache from the factory's own arguments. A function that cannot be weakly
    referenced has a cache of its own."""
    if not enabled:
        @scoped
        def interpreted(*args: Any, **kwargs: Any) -> Any:
            return body(with_keywords(fun, kwargs) if kwargs else fun, *args)
        return interpreted
    owner, extra = _owner(fun)
    try:
        # The code by identity (hashing a code object reads all of it): the cache's
        # body holds that code, so no other code can take its id while the cache lives.
        variant = (id(body.__code__), *map(_CONTENTS, body.__closure__ or ()), *extra)
        if isinstance(body, MethodType):
            raise TypeError("a bound method")
        cache = _cache_of(owner, variant, body, argnums)  # (TypeError if unhashable)
        if made_as is not None:
            _caches_of(owner)[(*made_as, *extra)] = cache  # (made_before's key)
    except (TypeError, ValueError, AttributeError):
        cache = Replayed(body, argnums)
    return Transformed(cache, fun)


_CONTENTS = operator.attrgetter("cell_contents")


def _owner(fun: Callable) -> tuple[Any, tuple]:
    """What ``fun``'s caches are kept on, and what tells them from its neighbours':
    a bound method is made anew at each attribute access, so its caches live on its
    object, told apart by the function."""
    if type(fun) is MethodType:
        return fun.__self__, (fun.__func__,)
    return fun, ()


class Transformed:
    """A transformed function: ``fun``'s transform, behind its replay cache (shared by
    every transform of ``fun`` with the same options)."""

    __slots__ = ("cache", "fun", "__weakref__")

    def __init__(self, cache: Replayed, fun: Callable) -> None:
        self.cache, self.fun = cache, fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        cache = self.cache
        enter_constructors()
        try:
            last = cache.last  # Replayed.run's first lines, one call sooner
            if last is not None and not kwargs:
                leaves = last[0](args)
                if leaves is not None:
                    return cache._replay(last[1], last[2], self.fun, args, leaves, None)
            return cache.run(self.fun, args, kwargs)
        finally:
            exit_constructors()

    @property
    def entries(self) -> OrderedDict:
        """The cache's signatures (diagnostics): a Recording or why not."""
        return self.cache.entries

    @property
    def counts(self) -> dict:
        """How the cache's calls went (diagnostics): see :class:`Replayed`."""
        return self.cache.counts

    def __repr__(self) -> str:
        return f"<replayed transform of {self.fun!r}>"


#: id(function) -> (a weak reference to it, its caches by variant); an entry goes
#: when its function dies (a dict by id: WeakKeyDictionary's lookup costs a
#: microsecond, which a transform made inline pays at every call).
_BY_FUNCTION: dict[int, tuple[weakref.ref, dict]] = {}
_BY_FUNCTION_LOCK = threading.RLock()  # reentrant: `forget` may run in a GC inside it


def _caches_of(fun: Callable) -> dict:
    """The replay caches of ``fun`` by variant (a TypeError if ``fun`` cannot be
    weakly referenced)."""
    key = id(fun)
    found = _BY_FUNCTION.get(key)
    if found is not None and found[0]() is fun:
        return found[1]
    with _BY_FUNCTION_LOCK:
        found = _BY_FUNCTION.get(key)
        if found is not None and found[0]() is fun:
            return found[1]

        def forget(ref: weakref.ref) -> None:
            with _BY_FUNCTION_LOCK:
                if _BY_FUNCTION.get(key, (None,))[0] is ref:
                    del _BY_FUNCTION[key]

        caches: dict = {}
        _BY_FUNCTION[key] = (weakref.ref(fun, forget), caches)
        return caches


def _cache_of(fun: Callable, variant: tuple, body: Callable,
              argnums: int | Sequence[int] | None) -> Replayed:
    """The replay cache of ``fun`` for ``variant`` (made from ``body`` and ``argnums``
    if need be); it lives as long as ``fun`` does (a TypeError if ``fun`` cannot be
    weakly referenced)."""
    caches = _caches_of(fun)
    cache = caches.get(variant)
    if cache is None:
        with _BY_FUNCTION_LOCK:
            cache = caches.get(variant)
            if cache is None:
                cache = caches[variant] = Replayed(body, argnums)
    return cache


def replayed_call(fun: Callable, variant: tuple, body: Callable, args: tuple) -> Any:
    """``body(fun, *args)`` behind the replay cache of ``fun`` and ``variant`` (for the
    transforms called with the function, ``jvp`` and ``hvp``), tracing every leaf of
    ``args``. A function that cannot be weakly referenced is interpreted."""
    try:
        cache = _cache_of(fun, variant, body, None)
    except TypeError:
        return body(fun, *args)
    return cache.run(fun, args, {})

