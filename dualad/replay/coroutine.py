"""A transform's interpreter, started in the middle of a replayed call.

A replayed call runs the user's function itself; when it meets an operation the
recording does not hold, the rest of the call belongs to the interpreter. The
interpreter (``jacfun``, ``value_and_grad_fun``, ...) is ordinary Python that
*calls* the user's function somewhere inside, possibly several transforms deep:
it cannot be entered halfway. So it runs from its start as a coroutine beside the
user's function: in a helper thread whose only work is dualad's own code. It
runs until it calls the function — it hands over the Duals it would pass and
waits —, the user's function goes on in the caller's thread on those Duals, and
when it returns, its result goes back to the interpreter, which finishes the
transform (tangents read, reverse sweep, Jacobian assembled) and hands back the
result. At no time do the two threads run at once, and the user's code only
ever runs in the caller's thread, once.

The helper runs in a copy of the caller's context (``contextvars``): NumPy's
``errstate`` and dualad's own context variables are the caller's.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any

from ..primitive import Tag

__all__ = ["Coroutine"]


class _Cancelled(BaseException):
    """The caller gave up (its function raised): unwind the interpreter."""


class Coroutine:
    """``body(hook, *args, **kwargs)`` run up to its call of ``hook`` (the user's
    function): :meth:`arguments` gives what it passes, :meth:`finish` the result of
    the whole call once the function's output is known."""

    def __init__(self, body: Callable, args: tuple, kwargs: dict,
                 context: contextvars.Context, level: int) -> None:
        self._turn = threading.Condition()
        self._state = "running"    # running, called (hook waiting), returned, raised
        self._passed: Any = None   # what the hook received, then the value it returns
        self._outcome: Any = None
        self._level = level
        self._thread = threading.Thread(
            target=context.run, args=(self._main, body, args, kwargs),
            name="dualad-interpreter", daemon=True)
        self._thread.start()

    def _main(self, body: Callable, args: tuple, kwargs: dict) -> None:
        Tag.within(self._level)  # its tags: below those made in the function so far
        try:
            outcome, state = body(self._hook, *args, **kwargs), "returned"
        except _Cancelled:
            outcome, state = None, "cancelled"
        except BaseException as error:  # handed to the caller's thread
            outcome, state = error, "raised"
        with self._turn:
            self._outcome, self._state = outcome, state
            self._turn.notify_all()

    def _hook(self, *args: Any, **kwargs: Any) -> Any:
        with self._turn:
            if self._state != "running":
                raise RuntimeError("the replayed function was called twice by its transform")
            self._passed, self._state = (args, kwargs), "called"
            self._turn.notify_all()
            while self._state == "called":
                self._turn.wait()
            if self._state == "cancel":
                raise _Cancelled
            self._state = "running"
            return self._passed

    def _wait(self, *states: str) -> None:
        with self._turn:
            while self._state not in states:
                self._turn.wait(0.1)  # a timeout, so that Ctrl-C reaches the caller

    def arguments(self) -> tuple[tuple, dict]:
        """The positional and keyword arguments the interpreter calls the function
        with (its Duals). Raises what the interpreter raised before calling it."""
        self._wait("called", "returned", "raised")
        if self._state == "raised":
            raise self._outcome
        if self._state == "returned":
            raise RuntimeError("the transform returned without calling the function")
        return self._passed

    def finish(self, output: Any) -> Any:
        """Give the interpreter the function's output; the transform's result."""
        with self._turn:
            self._passed, self._state = output, "resumed"
            self._turn.notify_all()
        self._wait("returned", "raised")
        self._thread.join()
        if self._state == "raised":
            raise self._outcome
        return self._outcome

    def cancel(self) -> None:
        """The function raised: unwind the interpreter (its ``finally`` blocks run)."""
        with self._turn:
            if self._state != "called":
                return
            self._state = "cancel"
            self._turn.notify_all()
        self._wait("cancelled", "returned", "raised")
        self._thread.join()
