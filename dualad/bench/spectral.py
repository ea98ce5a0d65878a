"""Complex numbers and the FFT: the JVP of ``np.fft.fft`` at n = 2²⁰ (target: about
twice the primal, one transform of the tangent beside the primal's), and the gradient
of a power spectrum ``sum |rfft(x)|²`` through complex values (reported)."""

from __future__ import annotations

import functools

import numpy as np

import dualad

from .core import Problem, checked, import_jax, require

#: The length of the transforms: 2²⁰, a power of two (pocketfft's fastest case).
FFT_SIZE = 2**20

#: The JVP of a linear map costs one more transform: ≤ 2.5× the primal.
FFT_JVP_TARGET = 2.5


@functools.lru_cache(maxsize=2)
def fft_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A complex point and tangent of length n."""
    rng = np.random.default_rng(20261124)
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    t = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    return z, t


def _as_real(*arrays) -> np.ndarray:
    """Complex results as one real vector (real parts, then imaginary parts)."""
    flat = np.concatenate([np.ravel(np.asarray(a)) for a in arrays])
    return np.concatenate([flat.real, flat.imag])


def jvp_fft(n: int = FFT_SIZE) -> Problem:
    """``dualad.jvp(np.fft.fft, (z,), (t,))`` on complex128 of length n, whose exact
    result is ``(fft(z), fft(t))``; peers ``jax.jvp`` of ``jnp.fft.fft`` eager and
    under ``jax.jit``."""
    z, t = fft_inputs(n)
    expected = _as_real(np.fft.fft(z), np.fft.fft(t))

    def primal():
        return functools.partial(np.fft.fft, z)

    def dual():
        return checked(functools.partial(dualad.jvp, np.fft.fft, (z,), (t,)), expected,
                       read=lambda r: _as_real(*r), what="dualad.jvp of np.fft.fft",
                       scaled=True)

    def jax_jvp(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            jvp = lambda z, t: jax.jvp(jnp.fft.fft, (z,), (t,))  # noqa: E731
            jvp = jax.jit(jvp) if jit else jvp
            zj, tj = jax.device_put(z), jax.device_put(t)
            return checked(lambda: jax.block_until_ready(jvp(zj, tj)), expected,
                           read=lambda r: _as_real(*r), scaled=True,
                           what="jax.jit(jax.jvp)" if jit else "jax.jvp")
        return factory

    return Problem(name="jvp_fft",
                   title=f"JVP of np.fft.fft, complex128, n=2^{n.bit_length() - 1}",
                   target=FFT_JVP_TARGET, group="spectral",
                   factories={"primal": primal, "dualad": dual, "jax.jit": jax_jvp(True),
                              "jax": jax_jvp(False)})


@functools.lru_cache(maxsize=2)
def power_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A real point of even length n and the gradient of :func:`power_spectrum` there,
    by Parseval: the half spectrum holds half of ``n·Σx²`` plus half of the DC and
    Nyquist terms, ``(Σx)²`` and ``(Σ(-1)ʲxⱼ)²``."""
    x = fft_inputs(n)[0].real.copy()
    alternating = (-1.0) ** np.arange(n)
    return x, n * x + np.sum(x) + np.dot(alternating, x) * alternating


def power_spectrum(x, xp=np):
    """``sum |rfft(x)|²``: a real function of real input through complex values."""
    return xp.sum(xp.abs(xp.fft.rfft(x)) ** 2)


def grad_power_spectrum(n: int = FFT_SIZE) -> Problem:
    """``dualad.grad(power_spectrum)`` at n = 2²⁰ float64 (reported, no target);
    peers ``jax.grad`` (jit), ``autograd.grad`` and ``torch.func.grad``, all checked
    against dualad's to 1e-9 of the largest entry."""
    def primal():
        return functools.partial(power_spectrum, power_inputs(n)[0])

    def dual():
        x, reference = power_inputs(n)
        return checked(functools.partial(dualad.grad(power_spectrum), x), reference,
                       what="dualad.grad", scaled=True)

    def jax_grad():
        jax = import_jax()
        import jax.numpy as jnp

        x, reference = power_inputs(n)
        g = jax.jit(jax.grad(functools.partial(power_spectrum, xp=jnp)))
        xj = jax.device_put(x)
        return checked(lambda: jax.block_until_ready(g(xj)), reference, scaled=True,
                       what="jax.jit(jax.grad)")

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        x, reference = power_inputs(n)
        g = ag.grad(functools.partial(power_spectrum, xp=anp))
        return checked(lambda: g(x), reference, scaled=True, what="autograd.grad")

    def torch_grad():
        torch = require("torch")
        from torch.func import grad

        x, reference = power_inputs(n)
        g = grad(functools.partial(power_spectrum, xp=torch))
        xt = torch.from_numpy(x)
        return checked(lambda: g(xt), reference, scaled=True, what="torch.func.grad",
                       read=lambda r: r.numpy())

    return Problem(name="grad_power_spectrum",
                   title=f"grad of sum |rfft(x)|^2, float64, n=2^{n.bit_length() - 1}",
                   target=None, group="spectral",
                   factories={"primal": primal, "dualad": dual, "jax.jit": jax_grad,
                              "autograd": autograd, "torch": torch_grad})
