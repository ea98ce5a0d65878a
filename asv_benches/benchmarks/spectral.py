"""Complex numbers and the FFT: the JVP of ``np.fft.fft`` on 2²⁰ complex128 (target
≤ 2.5× the primal: one more transform, of the tangent) beside ``jax.jvp``, and the
gradient of the power spectrum ``sum |rfft(x)|²`` on 2²⁰ float64 (reported) beside
``jax.grad``, autograd and ``torch.func.grad``.

The problems and their checks are defined once in :mod:`dualad.bench.spectral`.
"""

from .common import benchmark_classes

JVPFFT, JVPFFTPeers, JVPFFTRatio = benchmark_classes(__name__, "JVPFFT", "jvp_fft")

GradPowerSpectrum, GradPowerSpectrumPeers, GradPowerSpectrumRatio = benchmark_classes(
    __name__, "GradPowerSpectrum", "grad_power_spectrum")
