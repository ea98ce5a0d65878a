"""What a long derivative says while it runs: a progress bar, and lines at ``logging.INFO``.

A derivative made of many units of work — the passes of a chunked
:func:`~dualad.jacfwd`, :func:`~dualad.jacrev` or :func:`~dualad.hessian`, the
colours of a sparse one, the points of an :func:`~dualad.ensemble` — reports them
through a :class:`Progress`. With ``progress=None`` (every transform's default) it
says nothing until the first unit is done, and then shows a bar only if the whole
is expected to take more than :data:`PROGRESS_SECONDS`; ``progress=True`` shows one
from the start, ``False`` never. The bar is tqdm's where tqdm is installed and Dask's
own for a Dask cluster; either way the ``"dualad"`` logger gets a line at
``logging.INFO`` when a long derivative starts and when it ends (and one per phase
of a sparse preparation, see :func:`logged`).

>>> import numpy as np, dualad
>>> J = dualad.jacfwd(np.cumsum, chunk_size=2, progress=False)(np.ones(6))  # never a bar
>>> with Progress("demo", 3, progress=None) as report:   # a bar only if it would be long
...     for _ in range(3):
...         report.update()
>>> report.done
3
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["PROGRESS_SECONDS", "Progress", "check_progress", "logged", "logger", "recording",
           "tracked"]

#: The logger of dualad's progress lines.
logger = logging.getLogger("dualad")

#: With ``progress=None``, work expected to take longer than this (seconds) shows a bar.
PROGRESS_SECONDS = 2.0


def check_progress(progress: Any) -> None:
    """Refuse a ``progress=`` that is not None, True or False."""
    if progress is not None and progress is not True and progress is not False:
        raise TypeError(f"progress must be None (a bar for work expected to take more than "
                        f"{PROGRESS_SECONDS:g} s), True or False, got {progress!r}")


class Progress:
    """The progress of one derivative's ``total`` units of work, reported as they finish.

    Parameters
    ----------
    what:
        The transform's name, the bar's label.
    total:
        How many units of work there are.
    progress:
        ``None``: a bar once the work is expected to take more than
        :data:`PROGRESS_SECONDS`; ``True``: a bar from the start; ``False``: nothing.
    unit:
        What a unit is called ("pass", "point").
    workers:
        How many units run at once: the expected time is the time so far plus the
        remaining units at the pace so far, shared between the workers.
    started:
        When the work started (``time.perf_counter()``; now if None).
    bar:
        ``bar(total, initial, label, unit)`` makes the bar (an object with ``update``
        and ``close``); ``None`` takes tqdm's.
    """

    def __init__(self, what: str, total: int, progress: bool | None, unit: str = "pass",
                 workers: int = 1, started: float | None = None,
                 bar: Callable | None = None) -> None:
        self.what, self.total, self.progress, self.unit = what, total, progress, unit
        self.workers, self.make_bar = max(1, workers), bar or _tqdm_bar
        self.started = time.perf_counter() if started is None else started
        self.done, self.shown, self.bar = 0, False, None
        if progress is True and total > 1:
            self._show(None)

    def update(self, count: int = 1) -> None:
        """``count`` more units are done."""
        self.done += count
        if self.bar is not None:
            self.bar.update(count)
        elif self.progress is None and not self.shown and 0 < self.done < self.total:
            elapsed = time.perf_counter() - self.started
            expected = elapsed + elapsed / self.done * (self.total - self.done) / self.workers
            if expected > PROGRESS_SECONDS:
                self._show(expected)

    def close(self) -> None:
        """The work is over (or abandoned): the bar closes and the end is logged."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self.shown:
            self.shown = False
            logger.info("%s: %d of %d %s in %.3g s", self.what, self.done, self.total,
                        _plural(self.unit, self.total), time.perf_counter() - self.started)

    def _show(self, expected: float | None) -> None:
        self.shown = True
        about = "" if expected is None else f", about {expected:.2g} s"
        logger.info("%s: %d %s%s", self.what, self.total, _plural(self.unit, self.total), about)
        self.bar = self.make_bar(self.total, self.done, self.what, self.unit)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tracked(units: Sequence, what: str, progress: bool | None, unit: str = "pass"
            ) -> Iterator:
    """The ``units``, one at a time, each counted done when the next is asked for: a
    serial loop's progress (``for chunk in tracked(chunks, "jacfwd", progress)``)."""
    if progress is False or len(units) < 2:
        yield from units
        return
    with Progress(what, len(units), progress, unit) as report:
        for item in units:
            yield item
            report.update()


@contextlib.contextmanager
def logged(what: str, longer_than: float = 0.0) -> Iterator[None]:
    """A phase of work (a sparsity pattern, a colouring, a recording), logged at
    ``logging.INFO`` with the seconds it took, if it took at least ``longer_than``."""
    if not logger.isEnabledFor(logging.INFO):
        yield
        return
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    if seconds >= longer_than:
        logger.info("%s in %.3g s", what, seconds)


def recording(fun: Callable) -> contextlib.AbstractContextManager:
    """A replay's recording of a call of ``fun``, logged if it takes a long time."""
    return logged(f"recorded a call of {getattr(fun, '__name__', 'a function')} (the next "
                  "calls replay it)", PROGRESS_SECONDS)


def _plural(unit: str, count: int) -> str:
    return unit if count == 1 else unit + ("es" if unit.endswith(("s", "ch", "sh", "x")) else "s")


def _tqdm_bar(total: int, initial: int, label: str, unit: str) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        warnings.warn("progress bars need tqdm (pip install tqdm); the progress of "
                      f"{label} goes to the 'dualad' logger at logging.INFO only",
                      RuntimeWarning, stacklevel=2)
        return _NoBar()
    return tqdm(total=total, initial=initial, desc=label, unit=unit, leave=False)


class _NoBar:
    def update(self, count: int) -> None:
        pass

    def close(self) -> None:
        pass

