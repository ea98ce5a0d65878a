"""dualad_gpu with complex numbers and the FFT: compiled, against dualad's NumPy path
and JAX's own transforms."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

jax = pytest.importorskip("jax")
import dualad  # noqa: E402
import dualad_gpu  # noqa: E402

jnp = jax.numpy
X = np.array([0.4, 1.3, -0.7, 0.2])
Z = np.array([0.7 + 0.4j, -1.3 + 0.9j, 0.2 - 1.1j])


def spectrum(x, xp):
    """A real function of real x through complex values and the FFT."""
    waves = xp.exp(1j * x) * (x + 2j)
    return xp.sum(xp.abs(xp.fft.rfft(waves.real * x)) ** 2) + xp.sum(xp.angle(waves) ** 2)


def test_gradient_and_hessian_through_complex_values_and_the_fft():
    f, fj = (lambda x: spectrum(x, np)), (lambda x: spectrum(x, jnp))
    assert_allclose(dualad_gpu.grad(f)(X), dualad.grad(f)(X), rtol=1e-12)
    with jax.enable_x64(True):
        assert_allclose(dualad_gpu.grad(f)(X), jax.grad(fj)(X), rtol=1e-12)
        for mode in ("hyperdual", "fwd-rev"):
            assert_allclose(dualad_gpu.hessian(f, mode=mode)(X), jax.hessian(fj)(X),
                            rtol=1e-11, atol=1e-12)


@jax.enable_x64(True)
def test_complex_inputs_compiled():
    loss = lambda z, xp: xp.sum(xp.abs(xp.sin(z)) ** 2 + xp.real(xp.fft.fft(z) * z))  # noqa: E731
    assert_allclose(dualad_gpu.grad(lambda z: loss(z, np))(Z),
                    jax.grad(lambda z: loss(z, jnp))(Z), rtol=1e-12)
    holomorphic = lambda z, xp: xp.exp(z) * xp.fft.ifft(z ** 2)  # noqa: E731
    expected = jax.jacfwd(lambda z: holomorphic(z, jnp), holomorphic=True)(Z)
    for transform in (dualad_gpu.jacfwd, dualad_gpu.jacrev):
        assert_allclose(transform(lambda z: holomorphic(z, np), holomorphic=True)(Z), expected,
                        rtol=1e-12)
    _, t = dualad_gpu.jvp(lambda z: holomorphic(z, np), (Z,), (1j * Z,))
    assert_allclose(t, jax.jvp(lambda z: holomorphic(z, jnp), (Z,), (1j * Z,))[1], rtol=1e-12)
