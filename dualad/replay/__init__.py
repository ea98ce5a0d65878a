"""Trace once, replay many: the NumPy calls of a transform, without the interpreter.

A transform call spends most of its time, on small and medium arrays, in Python:
boxing values in Duals, dispatching each NumPy call to the rule table, evaluating
rules. The replay records, once per input signature, the NumPy calls the
interpreter makes (primal kernels, partials, tangent products, the reverse
sweep's transposes) and runs them again directly, as one generated Python
function. The interpreter stays the reference: a recording is checked bit for
bit against it before it is trusted, and anything it cannot see (a branch on a
value, a buffer handed to C code) keeps the interpreter.
"""

from .cache import (CACHE_SIZE, REPLAY_BY_DEFAULT, Replayed, identical, replayed,
                    replayed_call)
from .program import GuardFailed, Program
from .tracing import Recorder, Traced, Unrecordable

__all__ = ["CACHE_SIZE", "REPLAY_BY_DEFAULT", "Replayed", "identical", "replayed",
           "replayed_call", "GuardFailed", "Program", "Recorder", "Traced", "Unrecordable"]
