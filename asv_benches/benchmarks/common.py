"""What the benchmark modules share: checked thunks, made once per process."""

import functools

from dualad import bench


@functools.cache
def thunk(problem: str, impl: str) -> bench.Thunk:
    """``bench.PROBLEMS[problem].make(impl)``, made (and checked) once per process.

    The asv_runner installed here re-runs ``setup`` before every timed sample and
    times one call per sample when a class has a ``setup`` (asv#966). Building
    the thunk there each time would time every call just after a fresh build,
    a recompilation for ``jax.jit``, with cold caches; with this cache a repeated
    ``setup`` costs a dictionary look-up and the timed calls are warm. A peer
    that is missing raises ``PeerUnavailable`` (``NotImplementedError``: asv
    skips it) every time, since exceptions are not cached.
    """
    return bench.PROBLEMS[problem].make(impl)
