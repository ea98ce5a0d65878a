"""The twin recording's arrays: other numbers in the same memory layout.

A recording is made a second time with each traced array's memory holding other
numbers than its value (see :meth:`dualad.replay.cache.Replayed._check_twin`):
what reads that memory without a recorded call reads them, and the twin differs.
"""

from __future__ import annotations

import numpy as np

from ..primitive import NUMPY

__all__ = ["poisoned"]

_empty, _empty_like = NUMPY["empty"], NUMPY["empty_like"]  # NumPy's own, not wrappers


def poisoned(value: np.ndarray) -> np.ndarray:
    """An array of ``value``'s shape, dtype, strides and flags holding other numbers
    (the same layout, so that code looking at strides or flags goes the same way).
    Run under ``np.errstate(all="ignore")`` (the twin recording is)."""
    kind = value.dtype.kind
    if value.flags.c_contiguous or value.flags.f_contiguous:
        out = _empty_like(value)  # (order "K": the same strides)
        if out.strides != value.strides:
            return _strided(value)
        if kind == "b":
            np.logical_not(value, out=out)
        elif kind in "iu":
            np.add(value, value.dtype.type(1), out=out)
        elif kind in "fc":
            np.multiply(value, value.dtype.type(-1.5), out=out)
            np.add(out, value.dtype.type(0.25), out=out)
        else:
            np.copyto(out, value)
    else:
        out = _strided(value)
    out.flags.writeable = value.flags.writeable
    return out


def _strided(value: np.ndarray) -> np.ndarray:
    """:func:`poisoned` of an array in any layout: memory spanning its strides."""
    kind = value.dtype.kind
    if kind == "b":
        other = ~value
    elif kind in "iu":
        other = value + value.dtype.type(1)
    elif kind in "fc":
        other = value * value.dtype.type(-1.5) + value.dtype.type(0.25)
    else:
        other = value
    itemsize = value.dtype.itemsize
    low = sum(min(0, (n - 1) * s) for n, s in zip(value.shape, value.strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(value.shape, value.strides)) + itemsize
    memory = _empty(max(high - low, itemsize) if value.size else itemsize, np.uint8)
    out = np.ndarray(value.shape, value.dtype, buffer=memory, offset=-low,
                     strides=value.strides)
    out[...] = other
    return out
