"""Spec rows: the complex rules and the FFT, as real functions of real arguments.

Each row takes the real and imaginary parts of a complex input as two real arrays
(``z = x + 1j·y``) and returns the real and imaginary parts of the result, so that
every check of the table (central differences, every first- and second-order mode,
``check_grads``, JAX's ``jacfwd``/``hessian`` of the same function, dualad_gpu)
runs through the complex rule in between. Rows as in ``specs.py``.

The domain keeps z in the first quadrant, away from every branch cut (the real axis
for log, sqrt, arcsin, arccos, arccosh and arctanh; the imaginary axis for arctan and
arcsinh), where central differences would straddle the cut.
"""

from __future__ import annotations

import numpy as np
from specs import LazyModule, Spec, jnp

try:
    import scipy.special as _sc
except ImportError:  # scipy is optional
    _sc = None

_jsp = LazyModule("jax.scipy.special")

QUADRANT = ((0.2, 1.5), (0.2, 1.2))  # the real parts, the imaginary parts
PAIRS = (((3,), (3,)), ((2, 3), (2, 3)))


def _parts(xp, f):
    """``(x, y) ↦ (Re f(x + iy), Im f(x + iy))``, written once for NumPy and JAX."""
    def parts(x, y):
        out = f(x + 1j * y)
        return xp.real(out), xp.imag(out)
    return parts


def _row(name: str, f_np, f_jax, variant: str = "complex", shapes=PAIRS, domain=QUADRANT,
         **options) -> Spec:
    return Spec(name, _parts(np, f_np), shapes, domain, variant=variant,
                jax=_parts(jnp, f_jax), **options)


def _unary(name: str, jax_name: str | None = None) -> Spec:
    f = getattr(np, name)
    return _row(name, f, lambda z: getattr(jnp, jax_name or name)(z))


ELEMENTWISE = [
    *map(_unary, ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square",
                  "reciprocal", "negative", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
                  "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "conjugate"]),
    _row("absolute", np.abs, lambda z: jnp.abs(z)),
    _row("angle", np.angle, lambda z: jnp.angle(z)),
    _row("real", np.real, lambda z: jnp.real(z)),
    _row("imag", np.imag, lambda z: jnp.imag(z)),
    # JAX differentiates sign(z) = z/|z| as a step (0); it is not one.
    _row("sign", np.sign, lambda z: z / jnp.abs(z)),
    _row("power", lambda z: z ** (1.5 - 0.5j), lambda z: z ** (1.5 - 0.5j)),
    _row("power", lambda z: z ** z[..., ::-1], lambda z: z ** z[..., ::-1], "complex both"),
    _row("multiply", lambda z: z * z[..., ::-1] * (2 - 1j), lambda z: z * z[..., ::-1] * (2 - 1j)),
    _row("divide", lambda z: (1 + z) / (2 - z[..., ::-1]), lambda z: (1 + z) / (2 - z[..., ::-1])),
    _row("add", lambda z: z + 1j * z[..., ::-1] - 3j, lambda z: z + 1j * z[..., ::-1] - 3j),
    *([_row("scipy.special.wofz", _sc.wofz, lambda z: _jsp.wofz(z))] if _sc else []),
    # JAX has no complex digamma: central differences and tests/test_complex.py's
    # mpmath check stand for it.
    *([_row("scipy.special.loggamma", _sc.loggamma, lambda z: _jsp.loggamma(z)),
       Spec("scipy.special.digamma", _parts(np, _sc.digamma), PAIRS, QUADRANT,
            variant="complex")] if _sc else []),
]


def _fft_row(name: str, call, shapes, variant: str, real_input: bool = False) -> Spec:
    """A row of ``np.fft.<name>``; ``call(fft_function, z)`` applies it with options."""
    f_np, f_jax = getattr(np.fft, name), getattr(jnp.fft, name)
    if real_input:  # rfft, ihfft: one real argument
        return Spec(f"fft.{name}", lambda x: _split(np, call(f_np, x)), shapes, (-1.0, 1.0),
                    variant=variant, jax=lambda x: _split(jnp, call(f_jax, x)))
    return Spec(f"fft.{name}", _parts(np, lambda z: call(f_np, z)), shapes, (-1.0, 1.0),
                variant=variant, jax=_parts(jnp, lambda z: call(f_jax, z)))


def _split(xp, out):
    return xp.real(out), xp.imag(out)


ONE_D, TWO_D = ((8,), (8,)), ((3, 4), (3, 4))
FFT = [
    _fft_row("fft", lambda f, z: f(z), (ONE_D, TWO_D), ""),
    _fft_row("fft", lambda f, z: f(z, n=6, axis=0, norm="ortho"), (TWO_D,), "n, axis, ortho"),
    _fft_row("fft", lambda f, z: f(z, n=11, norm="forward"), (ONE_D,), "padded, forward"),
    _fft_row("ifft", lambda f, z: f(z), (ONE_D, TWO_D), ""),
    _fft_row("ifft", lambda f, z: f(z, n=5, axis=-2, norm="ortho"), (TWO_D,), "n, axis, ortho"),
    _fft_row("rfft", lambda f, x: f(x), (((8,),), ((3, 5),)), "", real_input=True),
    _fft_row("rfft", lambda f, x: f(x, n=10, axis=0, norm="ortho"), (((3, 4),),),
             "padded, axis, ortho", real_input=True),
    _fft_row("irfft", lambda f, z: f(z), (((5,), (5,)), TWO_D), ""),
    _fft_row("irfft", lambda f, z: f(z, n=7, axis=0, norm="forward"), (TWO_D,),
             "odd n, axis, forward"),
    _fft_row("hfft", lambda f, z: f(z), (((5,), (5,)),), ""),
    _fft_row("hfft", lambda f, z: f(z, n=9, norm="ortho"), (((5,), (5,)),), "odd n, ortho"),
    _fft_row("ihfft", lambda f, x: f(x), (((8,),), ((2, 7),)), "", real_input=True),
    _fft_row("fft2", lambda f, z: f(z), (TWO_D,), ""),
    _fft_row("ifft2", lambda f, z: f(z, s=(2, 6)), (TWO_D,), "s"),
    _fft_row("fftn", lambda f, z: f(z, axes=(0,)), (TWO_D,), "axes"),
    _fft_row("ifftn", lambda f, z: f(z, norm="ortho"), (TWO_D,), "ortho"),
    _fft_row("rfft2", lambda f, x: f(x), (((3, 4),),), "", real_input=True),
    _fft_row("rfftn", lambda f, x: f(x, s=(4, 6), axes=(0, 1)), (((3, 4),),), "s",
             real_input=True),
    _fft_row("irfft2", lambda f, z: f(z), (((3, 3), (3, 3)),), ""),
    _fft_row("irfftn", lambda f, z: f(z, s=(3, 6), axes=(0, 1), norm="ortho"),
             (((3, 4), (3, 4)),), "s, ortho"),
    _fft_row("fftshift", lambda f, z: f(z), (ONE_D, TWO_D), ""),
    _fft_row("ifftshift", lambda f, z: f(z, axes=0), (TWO_D,), "axes"),
]

ROWS = ELEMENTWISE + FFT
