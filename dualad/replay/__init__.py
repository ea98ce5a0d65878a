"""Trace once, replay many, with the user's function running on every call.

A transform call spends most of its time, on small and medium arrays, in Python:
boxing values in Duals, dispatching each NumPy call to the rule table,
evaluating rules. The replay records, once per input signature, the NumPy calls
the interpreter makes for each operation of the user's function (primal kernels,
partials, tangent products) and for the transform around it (seeding, the reverse
sweep, assembling the Jacobian). Later calls run the user's function again, on
light values that carry only the primal (:class:`~dualad.replay.live.Live`),
check each operation against the recording — the same operation on the same
values, constants identical bit for bit — and run that operation's recorded
NumPy calls. The first difference hands the rest of the call to the interpreter.
So a replayed call returns what the interpreter would, bit for bit, whatever
the function reads or does between calls. A recording's first replays run its
NumPy calls directly (:mod:`~dualad.replay.direct`); one replayed often enough
is compiled into generated Python code (:mod:`~dualad.replay.program`).
"""

from .cache import (CACHE_SIZE, COMPILE_AFTER, RECORD_AFTER, REPLAY_BY_DEFAULT, Interpreted,
                    Replayed)
from .transformed import Transformed, made_before, replayed, replayed_call
from .live import Live
from .program import GuardFailed
from .recording import Recording
from .templates import identical
from .tracing import Recorder, Traced, Unrecordable

__all__ = ["CACHE_SIZE", "COMPILE_AFTER", "RECORD_AFTER", "REPLAY_BY_DEFAULT", "Interpreted",
           "Replayed", "Transformed", "identical", "made_before", "replayed", "replayed_call",
           "Live", "GuardFailed", "Recording", "Recorder", "Traced", "Unrecordable"]
