"""``np.fft``: discrete Fourier transforms, linear primitives with JAX's transposes.

Every transform is linear in its input, so its tangent is the same transform
of the tangent (over the axis shifted past the leading seed axis), and reverse
mode needs only a transpose. Four primitives carry the 1-D transforms along
one axis (``fft``, ``ifft``, ``rfft``, ``irfft``), with NumPy's own functions
as kernels (float32 stays complex64/float32, as in NumPy 2; the arrays of
``dualad_gpu`` get ``jax.numpy.fft``'s, of the same signatures), plus
``pad_or_truncate``, the zero padding or truncation that ``n`` applies to the
input. Everything else is a composition, written as NumPy writes it:
``hfft``/``ihfft`` with ``conjugate``, the n-dimensional transforms as one
1-D transform per axis, ``fftshift``/``ifftshift`` with ``np.roll``.

Transposes follow JAX: for a ℂ-linear map the plain, unconjugated transpose;
for an ℝ-linear one between real and complex spaces the ``L^T`` with
``Re Σ c·L(t) = Re Σ L^T(c)·t``. The DFT matrix is symmetric, so ``fft`` and
``ifft`` transpose to themselves with the same ``norm`` (the padding or
truncation of ``n`` transposing to truncation or padding back). ``rfft``
(real to complex) transposes to ``Re fft`` of the cotangent zero-padded to
``n``. ``irfft`` (complex to real, which drops the imaginary parts of the DC
and Nyquist terms and counts every other term twice, for its conjugate)
transposes to ``w·ifft`` of the cotangent, its first ``n//2 + 1`` terms
weighted by ``w = 1`` (DC, Nyquist) or 2 (the others). Both are computed with
real transforms of half the work (``Re fft(c) = irfft(c̄/w)`` and, for a real
``c``, ``ifft(c) = conj(rfft(c))``, each with the swapped norm). The scale factor of
a transpose is the primitive's own: the same on both sides.

``fftfreq``/``rfftfreq`` need nothing here: NumPy computes them with operators
on ``d``, which a Dual ``d`` differentiates.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..primitive import COMPLEX_FUNCTIONS, Primitive, implements
from . import elementwise as _e
from .shape import normalize_axis, shape_of

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------
# ``axis`` is non-negative and counts the axes of the array the primitive is
# applied to; a tangent (or a cotangent of the output) has one axis more in
# front, so rules apply the primitive to it over ``axis + 1``.


def _resized_shape(shape: tuple, axis: int, size: int) -> tuple:
    return tuple(shape[:axis]) + (size,) + tuple(shape[axis + 1:])


def array_namespace(x):
    """``numpy`` for NumPy arrays (a replay's recordings too), else the array's own
    namespace: ``jax.numpy`` for the JAX arrays of ``dualad_gpu``, whose ``fft``
    functions have NumPy's signatures, so the kernels below serve both."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np
    space = getattr(x, "__array_namespace__", None)
    return np if space is None else space()


def _pad_or_truncate_kernel(x, size, axis):
    length = x.shape[axis]
    if size <= length:
        return x[(slice(None),) * axis + (slice(0, size),)]
    xp = array_namespace(x)
    shape = _resized_shape(x.shape, axis, size - length)
    # zeros_like(x): a replay's recording sees the zeros
    zeros = np.zeros_like(x, shape=shape) if xp is np else xp.zeros(shape, dtype=x.dtype)
    return xp.concatenate((x, zeros), axis=axis)


# pad_or_truncate(x, size, axis): the first ``size`` elements along ``axis``,
# zeros past the end. Its transpose is the same map back to the input's length.
pad_or_truncate = Primitive(
    "fft_pad_or_truncate", _pad_or_truncate_kernel,
    jvp=lambda primals, tangents, ans, size, axis: pad_or_truncate(
        tangents[0], size=size, axis=axis + 1),
    linear="all", complex_ok=True,
    shape_rule=lambda x, size, axis: (_resized_shape(x.shape, axis, size), x.dtype),
    transpose=lambda ct, args, linear, size, axis: (
        pad_or_truncate(ct, size=args[0].shape[axis], axis=axis + 1),),
)


def resize(x, size: int, axis: int):
    """``x`` padded with zeros or truncated to ``size`` along ``axis`` (a no-op if it fits)."""
    return x if shape_of(x)[axis] == size else pad_or_truncate(x, size=size, axis=axis)


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, 1j)  # NumPy's own rule: float32 -> complex64


def _real_dtype(dtype) -> np.dtype:
    return np.result_type(np.empty(0, dtype).real.dtype, 1.0)  # NumPy's irfft output


def _c2c_shape(x, n, axis, norm):
    return _resized_shape(x.shape, axis, n), _complex_dtype(x.dtype)


def _kernel(name: str):
    """The kernel calling ``np.fft.<name>`` (or the array namespace's) with NumPy's signature."""
    def kernel(x, n, axis, norm):
        return getattr(array_namespace(x).fft, name)(x, n=n, axis=axis, norm=norm)

    kernel.__name__ = name
    return kernel


def _c2c(name: str) -> Primitive:
    def jvp(primals, tangents, ans, n, axis, norm):
        return prim(tangents[0], n=n, axis=axis + 1, norm=norm)

    # The DFT matrix is symmetric: the transpose is the same transform with the
    # same norm, then the padding/truncation to ``n`` transposed.
    def transpose(ct, args, linear, n, axis, norm):
        return (resize(prim(ct, n=n, axis=axis + 1, norm=norm), args[0].shape[axis], axis + 1),)

    prim = Primitive(name, _kernel(name), jvp=jvp, linear="all", complex_ok=True,
                     transpose=transpose, shape_rule=_c2c_shape)
    return prim


#: fft(x, n, axis, norm) and ifft(...): np.fft.fft/ifft with every argument given.
fft = _c2c("fft")
ifft = _c2c("ifft")


def hermitian_weights(n: int, count: int, dtype, trailing: int) -> np.ndarray:
    """How often irfft counts each of its first ``count`` input terms (1 for DC and
    Nyquist, 2 for the others, also standing for their conjugates), shaped to
    broadcast along an axis followed by ``trailing`` others."""
    weights = np.full(count, 2.0, dtype)
    weights[0] = 1.0
    if n % 2 == 0 and n // 2 < count:
        weights[n // 2] = 1.0
    return weights.reshape((count,) + (1,) * trailing)


def _rfft_transpose(ct, args, linear, n, axis, norm):
    # Lᵀc = Re(s Σₖ cₖ e^{-2πijk/n}) over k ≤ n//2 = Re(s Σₖ c̄ₖ e^{2πijk/n}): irfft of
    # c̄/w (which counts each term but DC and Nyquist twice) with the swapped norm,
    # a real transform of length n rather than a complex one.
    along = axis + 1
    weights = hermitian_weights(n, n // 2 + 1, _real_dtype(ct.dtype), len(ct.shape) - along - 1)
    halved = _e.conjugate(_e.multiply(ct, 1 / weights))
    return (resize(irfft(halved, n=n, axis=along, norm=_SWAPPED[norm]), args[0].shape[axis],
                   along),)


def _irfft_transpose(ct, args, linear, n, axis, norm):
    # y = s·Re Σₖ wₖ Xₖ e^{2πijk/n} over k ≤ n//2, so Lᵀc = w·(s Σⱼ cⱼ e^{2πijk/n}),
    # for a real c the conjugate of its rfft with the swapped norm: weighted, then
    # padded or truncated back to the input's length.
    along = axis + 1
    length = args[0].shape[axis]
    count = min(n // 2 + 1, length)
    spectrum = _e.conjugate(rfft(ct, n=n, axis=along, norm=_SWAPPED[norm]))
    terms = resize(spectrum, count, along)
    weights = hermitian_weights(n, count, _real_dtype(ct.dtype), len(ct.shape) - along - 1)
    return (resize(_e.multiply(terms, weights), length, along),)


rfft = Primitive(
    "rfft", _kernel("rfft"),
    jvp=lambda primals, tangents, ans, n, axis, norm: rfft(
        tangents[0], n=n, axis=axis + 1, norm=norm),
    linear="all", complex_ok=True, transpose=_rfft_transpose,
    shape_rule=lambda x, n, axis, norm: (_resized_shape(x.shape, axis, n // 2 + 1),
                                         _complex_dtype(x.dtype)),
)


irfft = Primitive(
    "irfft", _kernel("irfft"),
    jvp=lambda primals, tangents, ans, n, axis, norm: irfft(
        tangents[0], n=n, axis=axis + 1, norm=norm),
    linear="all", complex_ok=True, transpose=_irfft_transpose,
    shape_rule=lambda x, n, axis, norm: (_resized_shape(x.shape, axis, n),
                                         _real_dtype(x.dtype)),
)


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def _norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _no_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"np.fft.{name}(..., out=...) is not supported on Duals")


def _length_and_axis(a, n, axis, default=None) -> tuple[int, int]:
    """``n`` (``default(length)`` or the length if None) and ``axis``, non-negative."""
    shape = shape_of(a)
    axis = normalize_axis(int(axis), len(shape))
    if n is None:
        n = shape[axis] if default is None else default(shape[axis])
    n = int(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n, axis


def _cook_nd_args(a, s, axes, invreal: bool = False) -> tuple[list, list]:
    """NumPy's reading of ``s`` and ``axes`` (``numpy.fft._pocketfft._cook_nd_args``);
    its warnings point at the user's call (through ``Dual.__array_function__``)."""
    shape = shape_of(a)
    shapeless = s is None
    if shapeless:
        s = list(shape) if axes is None else [shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in "
                          "NumPy 2.0). To retain current behaviour, pass a sequence "
                          "[0, ..., k-1] to `axes` for an array of dimension k.",
                          DeprecationWarning, stacklevel=5)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in "
                      "NumPy 2.0; pass the default of the 1-D transform's `n` instead.",
                      DeprecationWarning, stacklevel=5)
    s = [shape[ax] if size == -1 else size for size, ax in zip(s, axes)]
    return s, axes


# ---------------------------------------------------------------------------
# One-dimensional transforms
# ---------------------------------------------------------------------------


@implements(np.fft.fft)
def fft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.fft``: the DFT along ``axis``, of ``a`` padded or truncated to ``n``.

    ℂ-linear; its tangent is the fft of the tangent and its transpose the fft
    of the cotangent (same norm), truncated or padded back to ``a``'s length.
    """
    _no_out("fft", out)
    n, axis = _length_and_axis(a, n, axis)
    return fft(a, n=n, axis=axis, norm=_norm(norm))


@implements(np.fft.ifft)
def ifft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ifft``: the inverse DFT along ``axis``; like :func:`fft_function`."""
    _no_out("ifft", out)
    n, axis = _length_and_axis(a, n, axis)
    return ifft(a, n=n, axis=axis, norm=_norm(norm))


@implements(np.fft.rfft)
def rfft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.rfft``: the ``n//2 + 1`` non-negative frequency terms of the DFT
    of a real ``a``. ℝ-linear; its transpose is ``Re fft`` of the cotangent."""
    _no_out("rfft", out)
    n, axis = _length_and_axis(a, n, axis)
    return rfft(a, n=n, axis=axis, norm=_norm(norm))


@implements(np.fft.irfft)
def irfft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.irfft``: the real signal of length ``n`` (``2(m - 1)`` by default)
    whose Hermitian spectrum starts with ``a``. ℝ-linear: the imaginary parts of
    the DC and Nyquist terms do not reach the output (nor the derivative)."""
    _no_out("irfft", out)
    n, axis = _length_and_axis(a, n, axis, default=lambda m: 2 * (m - 1))
    return irfft(a, n=n, axis=axis, norm=_norm(norm))


@implements(np.fft.hfft)
def hfft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.hfft``: ``irfft(conj(a), n)`` with the opposite norm, as NumPy defines it."""
    _no_out("hfft", out)
    n, axis = _length_and_axis(a, n, axis, default=lambda m: 2 * (m - 1))
    return irfft(_e.conjugate(a), n=n, axis=axis, norm=_SWAPPED[_norm(norm)])


@implements(np.fft.ihfft)
def ihfft_function(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ihfft``: ``conj(rfft(a, n))`` with the opposite norm, as NumPy defines it."""
    _no_out("ihfft", out)
    n, axis = _length_and_axis(a, n, axis)
    return _e.conjugate(rfft(a, n=n, axis=axis, norm=_SWAPPED[_norm(norm)]))


# ---------------------------------------------------------------------------
# n-dimensional transforms: one 1-D transform per axis, in NumPy's order
# ---------------------------------------------------------------------------


def _c2c_nd(one_d, name: str, a, s, axes, norm, out):
    _no_out(name, out)
    s, axes = _cook_nd_args(a, s, axes)
    for size, axis in reversed(list(zip(s, axes))):
        a = one_d(a, size, axis, norm)
    return a


@implements(np.fft.fftn)
def fftn_function(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.fftn``: :func:`fft_function` over each of ``axes`` (sizes ``s``)."""
    return _c2c_nd(fft_function, "fftn", a, s, axes, norm, out)


@implements(np.fft.ifftn)
def ifftn_function(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.ifftn``: :func:`ifft_function` over each of ``axes`` (sizes ``s``)."""
    return _c2c_nd(ifft_function, "ifftn", a, s, axes, norm, out)


@implements(np.fft.fft2)
def fft2_function(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``np.fft.fft2``: :func:`fftn_function` over the last two axes by default."""
    return _c2c_nd(fft_function, "fft2", a, s, axes, norm, out)


@implements(np.fft.ifft2)
def ifft2_function(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``np.fft.ifft2``: :func:`ifftn_function` over the last two axes by default."""
    return _c2c_nd(ifft_function, "ifft2", a, s, axes, norm, out)


def _r2c_nd(name: str, a, s, axes, norm, out):
    _no_out(name, out)
    s, axes = _cook_nd_args(a, s, axes)
    a = rfft_function(a, s[-1], axes[-1], norm)
    for size, axis in reversed(list(zip(s[:-1], axes[:-1]))):
        a = fft_function(a, size, axis, norm)
    return a


def _c2r_nd(name: str, a, s, axes, norm, out):
    _no_out(name, out)
    s, axes = _cook_nd_args(a, s, axes, invreal=True)
    for size, axis in zip(s[:-1], axes[:-1]):
        a = ifft_function(a, size, axis, norm)
    return irfft_function(a, s[-1], axes[-1], norm)


@implements(np.fft.rfftn)
def rfftn_function(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.rfftn``: :func:`rfft_function` over the last of ``axes``, then
    :func:`fft_function` over the others."""
    return _r2c_nd("rfftn", a, s, axes, norm, out)


@implements(np.fft.irfftn)
def irfftn_function(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.irfftn``: :func:`ifft_function` over all of ``axes`` but the last,
    then :func:`irfft_function` over the last (of length ``s[-1]``)."""
    return _c2r_nd("irfftn", a, s, axes, norm, out)


@implements(np.fft.rfft2)
def rfft2_function(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``np.fft.rfft2``: :func:`rfftn_function` over the last two axes by default."""
    return _r2c_nd("rfft2", a, s, axes, norm, out)


@implements(np.fft.irfft2)
def irfft2_function(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``np.fft.irfft2``: :func:`irfftn_function` over the last two axes by default."""
    return _c2r_nd("irfft2", a, s, axes, norm, out)


# ---------------------------------------------------------------------------
# Shifts
# ---------------------------------------------------------------------------


def _shift(x, axes, sign: int):
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    if isinstance(axes, (int, np.integer)):
        return np.roll(x, sign * (shape[axes] // 2), axes)
    axes = tuple(axes)
    return np.roll(x, [sign * (shape[ax] // 2) for ax in axes], axes)


@implements(np.fft.fftshift)
def fftshift_function(x, axes=None):
    """``np.fft.fftshift``: ``np.roll`` by half of each of ``axes`` (all by default),
    moving the zero frequency to the centre."""
    return _shift(x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift_function(x, axes=None):
    """``np.fft.ifftshift``: the inverse of :func:`fftshift_function`."""
    return _shift(x, axes, -1)


# Every transform here is linear over ℂ or ℝ with its own transpose: complex values are fine.
COMPLEX_FUNCTIONS.update({
    np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
    np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft2, np.fft.irfft2,
    np.fft.rfftn, np.fft.irfftn, np.fft.fftshift, np.fft.ifftshift,
})
