"""A sparsity pattern prepared for one input shape, kept per shape and checked at every call.

What the sparse Jacobian, the sparse Hessian (:mod:`dualad.sparse.transforms`) and the
sparse Laplacian (:mod:`dualad.sparse.laplacian`) share: a detected pattern holds
only as long as the function's structure does, so each call that does not replay its
recording to the end proves it again (see :meth:`_Checked._checked`), and a changed
pattern is prepared anew (:class:`_ByShape`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse

from ..constructors import scope
from ..dual import as_float_array
from ..forward import jvp
from ..progress import logged
from ..replay import Replayed, Transformed, replayed
from .patterns import ValueDependentError

__all__ = ["CACHE_SIZE", "PatternChanged"]

#: Prepared patterns kept per transformed function (one per input shape and dtype).
CACHE_SIZE = 8


def _with_arg(args: tuple, argnum: int, x: Any) -> tuple:
    return args[:argnum] + (x,) + args[argnum + 1:]


class PatternChanged(RuntimeError):
    """The pattern of a prepared :class:`SparseJacobian` or :class:`SparseHessian`
    no longer holds: the function reads state that changed (a global, an attribute,
    a keyword argument) and now computes with other dependencies. ``pattern`` is the
    one found at this call. ``jac(*args)`` prepares again and goes on; a prepared
    object called directly raises this rather than decompress with the old one."""

    def __init__(self, message: str, pattern: sparse.csr_array) -> None:
        super().__init__(message)
        self.pattern = pattern


def _same_pattern(a: sparse.csr_array, b: sparse.csr_array) -> bool:
    return a.shape == b.shape and (a != b).nnz == 0


def _within(a: sparse.csr_array, b: sparse.csr_array) -> bool:
    return a.shape == b.shape and a.multiply(b).count_nonzero() == a.count_nonzero()


class _Checked:
    """A detected pattern prepared for one input shape and dtype, and checked at every
    call that its evaluation does not replay to the end: what the sparse Jacobian, the
    sparse Hessian and the sparse Laplacian (:mod:`dualad.sparse.laplacian`) share."""

    pattern: sparse.csr_array

    def _checking(self, fun: Callable, argnum: int, x: np.ndarray, body: Callable,
                  replay: bool, detect: Callable | None, proving: bool) -> None:
        """``body(fun, *args)`` computes from the pattern, replayed if ``replay``;
        ``detect(args, kwargs)`` finds the pattern again (None: a pattern given, or
        local, which the user vouches for); with ``proving``, a call that does not
        replay to the end is first proved by the function alone replayed."""
        self.fun, self.argnum, self._detect = fun, argnum, detect
        self.shape, self.dtype = x.shape, x.dtype
        self._nonzeros = replayed(body, fun, argnum, replay)
        # A call whose passes did not replay to the end is proved by the function
        # alone replayed to the end (about one evaluation of it), else by detecting
        # the pattern again. Its own cache: what it proves is this pattern's; it
        # records at its second call, as a call it does not prove detects again.
        self._prover = Transformed(Replayed(_evaluation(argnum), argnum,
                                               record_after=1), fun) if proving else None

    def _checked(self, args: tuple, kwargs: dict) -> Any:
        """``body``'s result at ``args`` (of the shape prepared for), the pattern proved
        to hold at this call (else :class:`PatternChanged`): see
        :meth:`SparseJacobian.__call__`."""
        x = args[self.argnum]
        if np.shape(x) != self.shape:
            raise ValueError(f"this {type(self).__name__} was prepared for shape "
                             f"{self.shape}, got {np.shape(x)}")
        replayed_to_the_end: list = []
        nonzeros = self._nonzeros
        with scope():
            if type(nonzeros) is Transformed:
                values = nonzeros.cache.run(nonzeros.fun, args, kwargs, replayed_to_the_end)
            else:
                values = nonzeros(*args, **kwargs)
            if self._detect is not None and not replayed_to_the_end:
                self._prove(args, kwargs)
        return values

    def _prove(self, args: tuple, kwargs: dict) -> None:
        """Raise :class:`PatternChanged` unless the pattern holds at this call."""
        prover, proved = self._prover, []
        if prover is not None:
            prover.cache.run(prover.fun, args, kwargs, proved)
        if not proved:
            try:
                pattern = self._detect(args, kwargs)
                holds = _same_pattern(pattern, self.pattern)
            except ValueDependentError:
                # The global pattern cannot be told at this x (as a replayed call
                # needs not): the values are right if the pattern at x is within it.
                pattern = self._detect(args, kwargs, local=True)
                holds = _within(pattern, self.pattern)
            if not holds:
                for cached in (self._nonzeros, prover):  # what they recorded is not
                    if type(cached) is Transformed:  # this pattern's: no replay of it
                        cached.cache.clear()  # may prove anything
                name = getattr(self.fun, "__name__", "the function")
                raise PatternChanged(
                    f"the sparsity pattern of {name} has changed since this "
                    f"{type(self).__name__} was prepared (the function reads state that "
                    "changed); prepare it again (jac.prepare(*args)), or call the "
                    "transformed function, which does", pattern)


def _evaluation(argnum: int) -> Callable:
    """The function evaluated on Duals of a zero tangent (a JVP, the least of the
    transforms): replayed to the end, the proof that its operations are the recorded
    ones (see ``_Checked._prove``)."""
    def evaluate(fun: Callable, *args: Any) -> Any:
        x = as_float_array(args[argnum])
        return jvp(lambda x: fun(*_with_arg(args, argnum, x)), (x,), (np.zeros_like(x),),
                   replay=False)

    return evaluate


def _detector(find: Callable, fun: Callable, argnum: int, local: bool = False,
              symmetric: bool = False) -> Callable:
    """``detect(args, kwargs)``: ``find``'s pattern of ``fun`` in argument ``argnum``
    at this call (made symmetric for a Hessian)."""
    def detect(args: tuple, kwargs: dict, local: bool = local) -> sparse.csr_array:
        rest = args[:argnum] + args[argnum + 1:]
        restricted = lambda x, *rest: fun(*rest[:argnum], x, *rest[argnum:], **kwargs)  # noqa: E731
        x = as_float_array(args[argnum])
        with logged(f"{find.__name__}: the pattern of {getattr(fun, '__name__', 'fun')} "
                    f"at an input of shape {x.shape}"):
            pattern = find(restricted, x, *rest, local=local)
        return (pattern + pattern.T).tocsr() if symmetric else pattern

    return detect


class _ByShape:
    """The prepared patterns of one transformed function, by input shape and dtype."""

    def __init__(self, make: Callable, argnum: int) -> None:
        self.make, self.argnum = make, argnum
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, args: tuple, kwargs: dict) -> Any:
        key = self._key(args)
        with self.lock:
            prepared = self.entries.get(key)
            if prepared is not None:
                self.entries.move_to_end(key)
                return prepared
        return self._keep(key, self.make(args, kwargs, None))

    def call(self, args: tuple, kwargs: dict) -> sparse.csr_array:
        """The matrix at ``args``; prepared again when its pattern changed."""
        try:
            return self.get(args, kwargs)(*args, **kwargs)
        except PatternChanged as changed:
            prepared = self._keep(self._key(args), self.make(args, kwargs, changed.pattern))
            return prepared(*args, **kwargs)

    def _key(self, args: tuple) -> tuple:
        if not isinstance(self.argnum, int) or not -len(args) <= self.argnum < len(args):
            raise TypeError(f"argnums={self.argnum!r}: give the position of one array "
                            f"argument among the {len(args)} arguments")
        x = as_float_array(args[self.argnum])
        return (x.shape, x.dtype)

    def _keep(self, key: tuple, prepared: Any) -> Any:
        with self.lock:
            self.entries[key] = prepared
            self.entries.move_to_end(key)
            while len(self.entries) > CACHE_SIZE:
                self.entries.popitem(last=False)
        return prepared
