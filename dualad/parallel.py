"""Derivatives on several cores or a cluster: the units of work and the engine that runs them.

A chunked transform is a loop over independent passes: the chunks of seeds of
:func:`~dualad.jacfwd`, :func:`~dualad.jacrev` and :func:`~dualad.hessian`, the
colours of :func:`~dualad.sparse_jacobian` and :func:`~dualad.sparse_hessian`, the
points of an :func:`~dualad.ensemble`. Given ``executor=``, those passes are *units of work*
for an existing engine — a :class:`concurrent.futures.ThreadPoolExecutor` (NumPy's
kernels release the GIL), a :class:`~concurrent.futures.ProcessPoolExecutor`, or a
``dask.distributed.Client`` — and this module is the one place that talks to it:

* each unit runs the serial transform's own pass (the interpreter) on its chunk and
  returns plain NumPy arrays: a Dual never crosses a thread or process boundary;
* for process pools and Dask the function and its closure travel with cloudpickle,
  once per call; a thread runs each unit in a copy of the caller's context;
* results come back in order; the first failure cancels the outstanding units and is
  re-raised in the caller, with the worker's traceback as its ``__cause__``;
  Ctrl-C cancels the outstanding units too;
* a problem too small to gain (one unit, one worker, or a first unit quicker than
  :data:`DISPATCH_SECONDS`) runs serially, and says so once with a
  :class:`RuntimeWarning` naming the reason and how to force the parallel run; so
  does a transform called from a unit of work on its own thread pool (sent to the
  pool, its units would wait for the workers that wait for them);
* such a choice is not final: a signature kept serial is looked at again after
  :data:`RECHECK_AFTER` calls, then twice as late each time the choice holds, and
  every call sent to threads is timed, a call that did not gain making the next
  one look again.

>>> import numpy as np, dualad
>>> from concurrent.futures import ThreadPoolExecutor
>>> f = lambda x: np.tanh(np.cumsum(x) ** 2)
>>> with ThreadPoolExecutor(2) as pool:
...     jac = dualad.jacfwd(f, chunk_size=3, executor=pool, min_seconds=0)
...     J = jac(np.linspace(0.0, 1.0, 8))
>>> bool(np.array_equal(J, dualad.jacfwd(f, chunk_size=3)(np.linspace(0.0, 1.0, 8))))
True
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import functools
import hashlib
import importlib.util
import io
import os
import pickle
import sys
import threading
import time
import traceback
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .pytrees import tree_leaves
from .primitive import Boxed
from .progress import Progress, check_progress, tracked

__all__ = ["Dispatch", "Spread", "WorkerTraceback", "DISPATCH_SECONDS",
           "dispatch_of", "kind_of", "passes_stay_here", "run_units", "signature", "spread",
           "too_few", "workers_of"]

#: A first unit of work quicker than this (seconds, by kind of executor) runs the
#: problem serially: sending it out would cost more than it gains. ``min_seconds=``
#: on a transform overrides it (``0``: always parallel).
DISPATCH_SECONDS = {"thread": 1e-3, "process": 5e-3, "dask": 1e-2}

#: Units on threads that take more than this fraction of their serial time (measured
#: on a first call) keep later calls serial: their work holds the GIL.
THREADS_GAIN = 0.9

#: Input signatures whose choice (serial or parallel) a transform remembers.
_REMEMBERED = 32

#: A choice to stay serial is tried again after this many calls of its signature, then
#: after twice as many each time it holds (up to :data:`RECHECK_MAX`): one sample (a
#: first call on a busy machine, work that grows) does not decide every later call.
RECHECK_AFTER = 16
RECHECK_MAX = 1024


class _Choice:
    """A choice for one input signature: ``parallel``, or serial for ``left`` more calls
    (then looked at again, ``interval`` doubled); ``unit_seconds``, a unit's time here."""

    __slots__ = ("parallel", "left", "interval", "unit_seconds")

    def __init__(self, parallel: bool, interval: int, unit_seconds: float) -> None:
        self.parallel, self.unit_seconds = parallel, unit_seconds
        self.left = self.interval = interval


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker, as text: the ``__cause__`` of
    the exception re-raised in the caller."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


def _callers_level() -> int:
    """The ``stacklevel`` of the first frame outside dualad: a warning points at the
    user's call."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def kind_of(executor: Any) -> str:
    """``"thread"``, ``"process"`` or ``"dask"``: how units reach ``executor``'s workers
    (any other :class:`concurrent.futures.Executor` is taken to need pickling).

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> kind_of(ThreadPoolExecutor(1))
    'thread'
    """
    if isinstance(executor, concurrent.futures.ThreadPoolExecutor):
        return "thread"
    if type(executor).__module__.partition(".")[0] == "distributed":
        return "dask"
    if isinstance(executor, concurrent.futures.Executor):
        return "process"
    raise TypeError(f"executor must be a concurrent.futures.Executor (ThreadPoolExecutor, "
                    f"ProcessPoolExecutor) or a dask.distributed.Client, got "
                    f"{type(executor).__name__}")


def workers_of(executor: Any) -> int:
    """How many units ``executor`` runs at once (its workers, or Dask's threads).

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> workers_of(ThreadPoolExecutor(3))
    3
    """
    if kind_of(executor) == "dask":
        return max(1, sum(executor.nthreads().values()))
    return int(getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


class Dispatch:
    """An executor as one transformed function uses it: whether a problem is worth
    sending out (remembered per input signature), and the running of its units.

    Parameters
    ----------
    executor:
        A :class:`concurrent.futures.Executor` or a ``dask.distributed.Client``.
    transform:
        The transform's name, for messages.
    min_seconds:
        A first unit quicker than this runs the problem serially; ``None`` takes
        :data:`DISPATCH_SECONDS` for the executor's kind.
    progress:
        A bar over the units (see :mod:`dualad.progress`): ``None`` when they are
        expected to take more than :data:`~dualad.progress.PROGRESS_SECONDS`.
    """

    def __init__(self, executor: Any, transform: str, min_seconds: float | None = None,
                 progress: bool | None = None, unit: str = "pass") -> None:
        check_progress(progress)
        self.executor, self.transform, self.progress = executor, transform, progress
        self.unit = unit  # what the progress bar counts
        self.kind = kind_of(executor)
        self.workers = workers_of(executor)
        self.min_seconds = DISPATCH_SECONDS[self.kind] if min_seconds is None else min_seconds
        self.decided: OrderedDict = OrderedDict()  # key -> its _Choice
        self.warned = False
        self.lock = threading.Lock()

    def serial(self, key: Any) -> bool:
        """Whether problems of ``key`` run here: found too small to send out, or holding
        the GIL, at an earlier call. Such a choice is tried again now and then (see
        :data:`RECHECK_AFTER`): then this call is undecided, and :meth:`map` looks."""
        choice = self.decided.get(key)
        if choice is None or choice.parallel is not False:
            return False
        with self.lock:
            choice.left -= 1
            if choice.left > 0:
                return True
            choice.interval = min(2 * choice.interval, RECHECK_MAX)
            choice.left = choice.interval
            choice.parallel = None  # (undecided for this call: map times it again)
            return False

    def decline(self, key: Any, reason: str) -> None:
        """Run problems of ``key`` serially from now on, and say why (once)."""
        self._decide(key, False)
        if not self.warned:
            self.warned = True
            warnings.warn(f"{self.transform} with executor= runs serially: {reason}",
                          RuntimeWarning, stacklevel=_callers_level())

    def _decide(self, key: Any, parallel: bool, unit_seconds: float = 0.0) -> None:
        with self.lock:
            choice = self.decided.get(key)
            if choice is None:  # (a choice looked at again keeps its interval)
                choice = self.decided[key] = _Choice(parallel, RECHECK_AFTER, unit_seconds)
            choice.parallel, choice.unit_seconds = parallel, unit_seconds
            self.decided.move_to_end(key)
            while len(self.decided) > _REMEMBERED:
                self.decided.popitem(last=False)

    def _choice(self, key: Any) -> bool | None:
        """True (parallel), False (serial) or None (to be decided by this call)."""
        choice = self.decided.get(key)
        return None if choice is None else choice.parallel

    def map(self, work: Callable, fun: Callable, payload: Any, units: Sequence, key: Any,
            first: tuple[Any, float] | None = None) -> list:
        """``[work(fun, payload, unit) for unit in units]``, the units run by the executor.

        On the first call for ``key`` the first unit runs here and is timed (``first``:
        its result and seconds, computed by the caller); quicker than
        ``min_seconds``, the rest runs here too, and later calls of ``key`` are
        meant to take the serial path (:meth:`serial`). ``work`` must be a function
        of a module (pickled by name); ``fun`` and ``payload`` travel once per call.
        The caller asks :meth:`serial` first (once per call: it counts the calls).
        """
        units = list(units)
        nested = self.kind == "thread" and id(self.executor) in _UNITS_OF.get()
        if nested:
            warnings.warn(f"{self.transform} with executor= runs serially: it was called "
                          "from a unit of work on the same thread pool, whose workers "
                          "would wait for themselves; give the inner transform another "
                          "executor, or none", RuntimeWarning, stacklevel=_callers_level())
        if nested or self._choice(key) is False:  # too small, or holding the GIL
            done = [] if first is None else [first[0]]
            return done + [work(fun, payload, unit) for unit in
                           tracked(units[len(done):], self.transform, self.progress,
                                   self.unit)]
        started = time.perf_counter() - (0.0 if first is None else first[1])
        with Progress(self.transform, len(units), self.progress, self.unit, self.workers,
                      started=started, bar=_DaskBar if self.kind == "dask" else None
                      ) as report:
            return self._map(work, fun, payload, units, key, first, report)

    def _map(self, work: Callable, fun: Callable, payload: Any, units: list, key: Any,
             first: tuple[Any, float] | None, report: Progress) -> list:
        results: list = []
        if first is None and self._choice(key) is None and units:
            start = time.perf_counter()
            first = (work(fun, payload, units[0]), time.perf_counter() - start)
        if first is not None:
            results.append(first[0])
            report.update()
            units = units[1:]
            if self._choice(key) is None:
                if first[1] < self.min_seconds:
                    self.decline(key, f"a unit of work takes {first[1] * 1e3:.2g} ms, less "
                                 f"than sending it to a worker costs (min_seconds="
                                 f"{self.min_seconds:.2g}); pass min_seconds=0 to send it "
                                 "anyway")
                    for unit in units:
                        results.append(work(fun, payload, unit))
                        report.update()
                    return results
                self._decide(key, True, first[1])
                if self.kind == "thread" and self.min_seconds > 0 and len(units) >= 2:
                    return results + self._checked_threads(work, fun, payload, units, key,
                                                           first[1], report)
        choice, start = self.decided.get(key), time.perf_counter()
        results += run_units(self.executor, self.kind, work, fun, payload, units, report)
        if (self.kind == "thread" and self.min_seconds > 0 and len(units) >= 2
                and choice is not None and choice.unit_seconds and time.perf_counter() - start
                > THREADS_GAIN * choice.unit_seconds * len(units)):
            choice.parallel = None  # (no gain this time: the next call looks again)
        return results

    def _checked_threads(self, work: Callable, fun: Callable, payload: Any, units: list,
                         key: Any, seconds: float, report: Progress) -> list:
        """The units on threads, timed: where they took nearly as long as they would
        have here one after the other (work that holds the GIL: Python more than
        NumPy), problems of ``key`` run serially from now on (not with
        ``min_seconds=0``, which always sends them out)."""
        start = time.perf_counter()
        results = run_units(self.executor, self.kind, work, fun, payload, units, report)
        took, alone = time.perf_counter() - start, seconds * len(units)
        if took > THREADS_GAIN * alone:
            self.decline(key, f"{self.workers} threads took {took:.2g} s for work that "
                         f"takes about {alone:.2g} s in one: it holds the GIL (Python "
                         "rather than NumPy: a ProcessPoolExecutor runs it in parallel), "
                         "or NumPy's BLAS already runs on every core "
                         "(OPENBLAS_NUM_THREADS=1 gives each worker one)")
        return results


def too_few(dispatch: Dispatch, units: int, how: str, key: Any = None) -> bool:
    """Whether ``units`` units are too few to gain on ``dispatch``'s executor (one unit,
    or one worker): then problems of ``key`` run serially, and the warning says so
    (``how``: how to split the problem)."""
    if units >= 2 and dispatch.workers >= 2:
        return False
    dispatch.decline(key, how if units < 2 else "the executor has one worker")
    return True


def passes_stay_here(dispatch: Dispatch, units: int, seeds: int, key: Any) -> bool:
    """Whether a chunked transform's ``units`` passes over ``seeds`` seeds run here:
    problems of ``key`` found serial before, or too few passes (see :func:`too_few`)."""
    return dispatch.serial(key) or too_few(
        dispatch, units, f"all {seeds} seeds fit in one pass; give a smaller chunk_size "
        "to split them", key)


def run_units(executor: Any, kind: str, work: Callable, fun: Callable, payload: Any,
              units: Sequence, report: Progress | None = None) -> list:
    """``work(fun, payload, unit)`` for each unit on ``executor``, the results in order;
    a worker's exception re-raised here, the outstanding units cancelled; each unit
    done counted on ``report``."""
    if not units:
        return []
    if kind == "thread":
        futures = [executor.submit(contextvars.copy_context().run, _thread_unit,
                                   id(executor), work, fun, payload, unit) for unit in units]
    else:
        blob = _dumps((fun, payload))
        submit = executor.submit
        if kind == "dask":  # sent to each worker once, not with every unit
            blob = executor.scatter(blob, hash=False, broadcast=len(units) > 1)
            submit = functools.partial(executor.submit, pure=False)
        futures = [submit(_pickled_unit, work, blob, unit) for unit in units]
    return _gather(executor, kind, futures, report)


def _gather(executor: Any, kind: str, futures: list, report: Progress | None) -> list:
    if kind == "dask":
        from distributed import as_completed
    else:
        as_completed = concurrent.futures.as_completed
    position = {id(f): i for i, f in enumerate(futures)}
    results: list = [None] * len(futures)
    try:
        _DaskBar.start(report, futures)
        for future in as_completed(futures):
            out = future.result()
            if isinstance(out, _Failure):
                out.raise_in_caller(position[id(future)], len(futures))
            results[position[id(future)]] = out
            if report is not None:
                report.update()
                _DaskBar.start(report, futures)
    except BaseException:  # a failure, or Ctrl-C: nothing more to compute
        for future in futures:
            future.cancel()
        raise
    return results


class _DaskBar:
    """Dask's own progress bar (``distributed.progress``), drawn for a cluster's units
    once the report shows a bar: in a console it draws until they are done, in a
    notebook it leaves a widget."""

    def __init__(self, total: int, initial: int, label: str, unit: str) -> None:
        self.drawn = False

    @staticmethod
    def start(report: Progress | None, futures: list) -> None:
        bar = None if report is None else report.bar
        if isinstance(bar, _DaskBar) and not bar.drawn:
            from distributed import progress

            bar.drawn = True
            # Its notebook widget needs ipywidgets; without, the text bar (in a notebook too).
            widgets = importlib.util.find_spec("ipywidgets") is not None
            try:
                progress(futures, notebook=None if widgets else False)
            except Exception as error:  # noqa: BLE001  (a bar never fails a derivative)
                warnings.warn(f"Dask's progress bar failed ({error!r}); the derivative goes "
                              "on without it", RuntimeWarning, stacklevel=_callers_level())

    def update(self, count: int) -> None:
        pass

    def close(self) -> None:
        pass


def _dumps(value: Any) -> bytes:
    """``value`` pickled with cloudpickle (closures, lambdas), or plain pickle without it;
    a Dual in it (of an enclosing transform) is refused."""
    try:
        import cloudpickle
    except ImportError:
        try:
            return _pickled(pickle.Pickler, value)
        except _DualRefused:
            raise TypeError(_NESTED) from None
        except Exception as error:
            raise TypeError(f"the function cannot be pickled for the executor's worker "
                            f"processes ({error}); install cloudpickle "
                            "(pip install 'dualad[dask]') to send closures and lambdas"
                            ) from error
    try:
        return _pickled(cloudpickle.CloudPickler, value)
    except _DualRefused:
        raise TypeError(_NESTED) from None


class _DualRefused(TypeError):
    pass


_NESTED = ("executor=: the function or its arguments hold a Dual of an enclosing "
           "transform (a derivative taken inside another), which cannot be sent to a "
           "worker; take the inner derivative without executor=, and give the executor "
           "to the outer transform")


def _pickled(pickler: type, value: Any) -> bytes:
    class Refusing(pickler):  # type: ignore[misc,valid-type]
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, Boxed):
                raise _DualRefused(_NESTED)
            parent = getattr(super(), "reducer_override", None)
            return NotImplemented if parent is None else parent(obj)

    buffer = io.BytesIO()
    Refusing(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


#: In a worker process: the last few ``(fun, payload)`` unpickled, by their pickle's
#: digest. The units of one call share them, and an ensemble's transformed function
#: keeps its replay cache from one unit (and one call) to the next.
_UNPICKLED: OrderedDict = OrderedDict()
_UNPICKLED_SIZE = 4
_UNPICKLED_LOCK = threading.Lock()


def _pickled_unit(work: Callable, blob: bytes, unit: Any) -> Any:
    key = hashlib.blake2b(blob, digest_size=16).digest()
    with _UNPICKLED_LOCK:
        found = _UNPICKLED.get(key)
        if found is not None:
            _UNPICKLED.move_to_end(key)
    if found is None:
        try:
            found = pickle.loads(blob)
        except Exception as error:
            return _Failure(error, traceback.format_exc(), True)
        with _UNPICKLED_LOCK:
            _UNPICKLED[key] = found
            while len(_UNPICKLED) > _UNPICKLED_SIZE:
                _UNPICKLED.popitem(last=False)
    return _unit(work, found[0], found[1], unit, True)


#: The thread pools (ids) whose units the current context runs: a transform called in
#: one with the same pool runs its units there (sent out, they would wait for the
#: workers that wait for them).
_UNITS_OF: contextvars.ContextVar[tuple] = contextvars.ContextVar("dualad_units_of",
                                                                  default=())


def _thread_unit(executor: int, work: Callable, fun: Callable, payload: Any, unit: Any
                 ) -> Any:
    _UNITS_OF.set((*_UNITS_OF.get(), executor))  # (the unit's own copy of the context)
    return _unit(work, fun, payload, unit, False)


def _unit(work: Callable, fun: Callable, payload: Any, unit: Any, pickled: bool) -> Any:
    """One unit in a worker: its result, or the exception it raised (a _Failure)."""
    try:
        result = work(fun, payload, unit)
        if any(isinstance(leaf, Boxed) for leaf in tree_leaves(result)):
            raise TypeError(_NESTED)
        return result
    except Exception as error:
        return _Failure(error, traceback.format_exc(), pickled)


class _Failure:
    """An exception raised by a unit, and the traceback it had in the worker."""

    def __init__(self, error: Exception, text: str, pickled: bool) -> None:
        if pickled:
            try:
                pickle.loads(pickle.dumps(error))
            except Exception:  # an exception that cannot travel: its type and message
                error = RuntimeError(f"{type(error).__name__}: {error}")
            error.__traceback__ = None
        self.error, self.text = error, text

    def raise_in_caller(self, index: int, count: int) -> None:
        error = self.error
        error.add_note(f"(raised in a worker, unit {index + 1} of {count}; the worker's "
                       "traceback is the cause above)")
        raise error from WorkerTraceback(self.text)


class Spread:
    """A transformed function whose units of work go to an executor:
    ``call(self, *args, **kwargs)`` computes it with :attr:`dispatch`, :attr:`serial`
    being the same transform without the executor (what a problem too small to gain
    runs). Pickled (to be
    sent to a worker, as by :func:`ensemble`), it is its serial transform."""

    __slots__ = ("serial", "call", "dispatch", "quick")

    def __init__(self, serial: Callable, call: Callable, dispatch: Dispatch) -> None:
        self.serial, self.call, self.dispatch = serial, call, dispatch
        #: The types and shapes of plain arguments (:func:`_quick_key`) that ran
        #: serially, and their input signature: such a call goes to the serial
        #: transform at once, while :meth:`Dispatch.serial` keeps the choice.
        self.quick: dict = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.quick and not kwargs:
            if len(args) == 1 and type(args[0]) is np.ndarray:  # (the common case, at once)
                key: tuple | None = ((args[0].shape, args[0].dtype),)
            else:
                key = _quick_key(args)
            signature = self.quick.get(key)
            if signature is not None:  # (plain arguments: only the result can hold a Dual)
                if self.dispatch.serial(signature):
                    return _refused_if_nested(self.serial(*args))
                del self.quick[key]  # (looked at again: the call takes the long way)
        given: Any = (args, kwargs)
        if any(isinstance(leaf, Boxed) for leaf in tree_leaves(given)):
            raise TypeError(_NESTED)  # (at once, whether the passes would go out or not)
        return _refused_if_nested(self.call(self, *args, **kwargs))

    def serially(self, signature: Any, *args: Any, **kwargs: Any) -> Any:
        """The serial transform at ``args``, whose input ``signature`` was found too small
        to send out (or holding the GIL), remembered."""
        key = None if kwargs else _quick_key(args)
        if key is not None:
            if len(self.quick) >= _REMEMBERED:
                self.quick.clear()
            self.quick[key] = signature
        return self.serial(*args, **kwargs)

    def __reduce__(self) -> tuple:
        return (_itself, (self.serial,))

    def __repr__(self) -> str:
        return f"<{self.dispatch.transform} on {type(self.dispatch.executor).__name__}>"


def _refused_if_nested(result: Any) -> Any:
    """``result``, unless it holds a Dual of an enclosing transform: then the function
    closes over one, and its passes could not have been sent out. Refused whether they
    ran here or not, so that whether a call raises never depends on timing (a serial
    fallback) or on what earlier calls found."""
    if any(isinstance(leaf, Boxed) for leaf in tree_leaves(result)):
        raise TypeError(_NESTED)
    return result


def _quick_key(args: tuple) -> tuple | None:
    """The types, shapes and dtypes of ``args`` if all are arrays or Python numbers (they
    fix a problem's units of work), else None."""
    key = []
    for a in args:
        kind = type(a)
        if kind is np.ndarray:
            key.append((a.shape, a.dtype))
        elif kind is float or kind is int:
            key.append(kind)
        else:
            return None
    return tuple(key)


def _itself(value: Any) -> Any:
    return value


def spread(serial: Callable, call: Callable, executor: Any, transform: str,
           min_seconds: float | None, seed_placement: Callable | None = None,
           progress: bool | None = None) -> Callable:
    """``serial`` as it is without an executor, else a :class:`Spread` of it."""
    if executor is None:
        return serial
    if seed_placement is not None:
        raise ValueError(f"{transform}: seed_placement (dualad_gpu's devices) and executor= "
                         "cannot be combined; give one of them")
    return Spread(serial, call, dispatch_of(executor, transform, min_seconds, progress))


def dispatch_of(executor: Any, transform: str, min_seconds: float | None,
                progress: bool | None = None) -> Dispatch | None:
    """A :class:`Dispatch` of ``executor`` (itself if it is one; None for None)."""
    if executor is None or isinstance(executor, Dispatch):
        return executor
    return Dispatch(executor, transform, min_seconds, progress)


def signature(leaves: Sequence, tree: Any) -> tuple:
    """What decides a problem's units of work: its differentiated leaves' structure,
    shapes and dtypes."""
    return (tree, tuple((np.shape(x), np.result_type(x).str) for x in leaves))
