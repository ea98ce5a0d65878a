"""scipy.signal called unchanged: correlate, convolve2d, correlate2d, fftconvolve, detrend.

All are compositions. The convolutions reuse the bilinear ``convolve`` primitive of
:mod:`dualad.rules.scipy_functions` (``scipy.signal.convolve``): a correlation is a
convolution with the second input reversed, ``convolve2d``'s 'wrap'/'symm' boundaries
and nonzero ``fillvalue`` pad the first input as SciPy extends it and take the 'valid'
part, ``fftconvolve`` is ``convolve(method='fft')`` (convolved over ``axes`` only: one
convolution per index of the other, broadcast, axes). ``detrend`` subtracts SciPy's
least-squares fit, a projection by a constant matrix per segment: linear in the data.
Routed by the dispatchers of :func:`dualad.rules.scipy_functions.scipy_rule`.
"""

from __future__ import annotations

import numpy as np

from ..dual import as_operand, primal_value
from .scipy_functions import _convolve, scipy_rule
from .shape import shape_of

_SIGNAL = "scipy.signal"
_BOUNDARY = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
             "symm": "symmetric", "symmetric": "symmetric"}


def _reverse(x):
    return x[(slice(None, None, -1),) * len(shape_of(x))]


def _swap_needed(mode: str, s1: tuple, s2: tuple) -> bool:
    """SciPy's 'valid' mode convolves the larger input with the smaller."""
    return mode == "valid" and all(a <= b for a, b in zip(s1, s2)) and s1 != s2


@scipy_rule(_SIGNAL, "correlate")
def correlate(in1, in2, mode: str = "full", method: str = "auto"):
    """``scipy.signal.correlate`` (real inputs): ``convolve(in1, in2[::-1, ...])``."""
    in1, in2 = as_operand(in1), as_operand(in2)
    if np.iscomplexobj(primal_value(in1)) or np.iscomplexobj(primal_value(in2)):
        raise TypeError("scipy.signal.correlate of complex Duals is not supported")
    if len(shape_of(in1)) != len(shape_of(in2)):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if _swap_needed(mode, tuple(shape_of(in1)), tuple(shape_of(in2))):
        return _reverse(_convolve(in2, _reverse(in1), mode, method))
    return _convolve(in1, _reverse(in2), mode, method)


def _check_2d(name: str, in1, in2, mode: str) -> None:
    if len(shape_of(in1)) != 2 or len(shape_of(in2)) != 2:
        raise ValueError(f"{name} inputs must both be 2-D arrays")
    if mode not in ("full", "same", "valid"):
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")


def _extended(in1, in2, mode: str, boundary: str, fillvalue) -> tuple:
    """in1 extended as SciPy's boundary rule does by kernel size - 1 on each side, the
    mode to convolve it in ('valid' gives 'full'), and the crop for 'same'."""
    if boundary not in _BOUNDARY:
        raise ValueError("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), "
                         "and 'symmetric' (or 'symm').")
    if isinstance(fillvalue, complex) or np.iscomplexobj(primal_value(as_operand(fillvalue))):
        raise TypeError("a complex fillvalue is not supported on Duals")
    if np.size(primal_value(as_operand(fillvalue))) != 1:
        raise ValueError("fillvalue must be scalar or an array with one element.")
    fill = as_operand(fillvalue)
    plain = (_BOUNDARY[boundary] == "constant" and fill is primal_value(fill)
             and float(np.reshape(primal_value(fill), ())) == 0.0)
    if mode == "valid" or plain:
        return in1, mode, None
    pad = [(n - 1, n - 1) for n in shape_of(in2)]
    if _BOUNDARY[boundary] == "constant":
        fill = np.reshape(fill, ())
        grown = np.pad(in1 - fill, pad) + fill  # a Dual fillvalue keeps its tangent
    else:
        grown = np.pad(in1, pad, mode=_BOUNDARY[boundary])
    crop = None
    if mode == "same":  # SciPy's centre of the 'full' output
        crop = tuple(slice((b - 1) // 2, (b - 1) // 2 + a)
                     for a, b in zip(shape_of(in1), shape_of(in2)))
    return grown, "valid", crop


@scipy_rule(_SIGNAL, "convolve2d")
def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0):
    """``scipy.signal.convolve2d``: every boundary rule, fillvalue differentiable too."""
    in1, in2 = as_operand(in1), as_operand(in2)
    _check_2d("convolve2d", in1, in2, mode)
    if _swap_needed(mode, tuple(shape_of(in1)), tuple(shape_of(in2))):
        in1, in2 = in2, in1
    grown, run, crop = _extended(in1, in2, mode, boundary, fillvalue)
    out = _convolve(grown, in2, run, "direct")
    return out if crop is None else out[crop]


@scipy_rule(_SIGNAL, "correlate2d")
def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0):
    """``scipy.signal.correlate2d``: convolve2d with in2 reversed in both axes."""
    in1, in2 = as_operand(in1), as_operand(in2)
    _check_2d("correlate2d", in1, in2, mode)
    if _swap_needed(mode, tuple(shape_of(in1)), tuple(shape_of(in2))):
        return _reverse(convolve2d(in2, _reverse(in1), mode, boundary, fillvalue))
    if mode == "same":  # SciPy centres a correlation at in2's size // 2 of 'full'
        full = convolve2d(in1, _reverse(in2), "full", boundary, fillvalue)
        return full[tuple(slice(b // 2, b // 2 + a)
                          for a, b in zip(shape_of(in1), shape_of(in2)))]
    return convolve2d(in1, _reverse(in2), mode, boundary, fillvalue)


@scipy_rule(_SIGNAL, "fftconvolve")
def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """``scipy.signal.fftconvolve``: ``convolve(method='fft')`` over ``axes``; the
    other axes broadcast (one convolution per index of them)."""
    in1, in2 = as_operand(in1), as_operand(in2)
    s1, s2 = tuple(shape_of(in1)), tuple(shape_of(in2))
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    ndim = len(s1)
    conv = tuple(range(ndim)) if axes is None else tuple(
        sorted({a % ndim for a in np.atleast_1d(axes).tolist()}))
    batch = [a for a in range(ndim) if a not in conv]
    for a in batch:
        if s1[a] != s2[a] and 1 not in (s1[a], s2[a]):
            raise ValueError("incompatible shapes for in1 and in2: "
                             f"{s1} and {s2}")
    if mode == "valid" and not (all(s1[a] >= s2[a] for a in conv)
                                or all(s1[a] <= s2[a] for a in conv)):
        raise ValueError("For 'valid' mode, one must be at least as large as the other "
                         "in every dimension")
    if not batch:
        return _convolve(in1, in2, mode, "fft")
    order = batch + list(conv)
    a1, a2 = np.transpose(in1, order), np.transpose(in2, order)
    lead = np.broadcast_shapes(tuple(s1[a] for a in batch), tuple(s2[a] for a in batch))
    a1 = np.broadcast_to(a1, lead + tuple(s1[a] for a in conv))
    a2 = np.broadcast_to(a2, lead + tuple(s2[a] for a in conv))
    pieces = [_convolve(a1[i], a2[i], mode, "fft") for i in np.ndindex(*lead)]
    out = np.reshape(np.stack(pieces), lead + tuple(shape_of(pieces[0])))
    return np.transpose(out, np.argsort(order))


@scipy_rule(_SIGNAL, "detrend")
def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data: bool = False):
    """``scipy.signal.detrend``: the data minus its mean or its least-squares line (one
    per segment between breakpoints ``bp``)."""
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data = as_operand(data)
    value = primal_value(data)
    if np.iscomplexobj(value):
        raise TypeError("scipy.signal.detrend of complex Duals is not supported")
    if not np.issubdtype(value.dtype, np.floating):
        data = data + 0.0
    if type in ("constant", "c"):
        return data - np.mean(data, axis, keepdims=True)
    shape = tuple(shape_of(data))
    axis = axis % len(shape)
    n = shape[axis]
    bp = np.sort(np.unique(np.concatenate(np.atleast_1d(0, np.asarray(bp), n))))
    if np.any(bp > n):
        raise ValueError("Breakpoints must be less than length of data along given axis.")
    moved = np.moveaxis(data, axis, 0)
    flat = np.reshape(moved, (n, -1))
    dtype = primal_value(flat).dtype
    pieces = []
    for lo, hi in zip(bp[:-1].tolist(), bp[1:].tolist()):
        count = hi - lo
        design = np.ones((count, 2))
        design[:, 0] = np.arange(1, count + 1) / count
        fit = (design @ np.linalg.pinv(design)).astype(dtype)  # projection on the lines
        segment = flat[lo:hi]
        pieces.append(segment - fit @ segment)
    out = np.concatenate(pieces, axis=0) if len(pieces) > 1 else pieces[0]
    return np.moveaxis(np.reshape(out, moved.shape), 0, axis)
