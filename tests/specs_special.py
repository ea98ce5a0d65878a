"""Spec rows: scipy.special beyond specs.py and specs_scipy.py.

Rows as in ``specs.py`` (which adds them to ``SPECS``), each with its ``jax=``
counterpart (``jax.scipy.special`` has every function here). gammainc/gammaincc are
differentiated in both arguments, on both sides of x = a + 1 (series below, continued
fraction above). The hypergeometric functions are differentiated in x (their
parameters raise), ``zeta`` in x and q, and ``comb``/``factorial`` (exact=False) in every
argument; ``loggamma`` and ``entr``, ``kl_div``, ``rel_entr`` on positive inputs.
"""

from __future__ import annotations

import numpy as np
from specs import BINARY, UNARY, LazyModule, Spec, jnp

try:
    import scipy.special as sc
except ImportError:  # scipy is optional
    sc = None

jsp = LazyModule("jax.scipy.special")
_ALTERNATING = np.array([1.0, -1.0, 1.0, -1.0])




def _jax_expn(x):
    """(E_0, E_1, E_3) written with jax.numpy and expi."""
    e0 = jnp.exp(-x) / x
    e1 = -jsp.expi(-x)
    e2 = jnp.exp(-x) - x * e1
    return e0, e1, (jnp.exp(-x) - x * e2) / 2.0


ROWS: list[Spec] = []

if sc is not None:
    ROWS += [
        # -- incomplete gamma functions in a (and x) -----------------------------
        # (JAX's derivative in a has no derivative: test_coverage_special.py checks
        # the first against JAX's; these rows check both orders against differences.)
        Spec("scipy.special.gammainc", sc.gammainc, BINARY, ((0.3, 5.0), (0.1, 9.0)),
             variant="a and x"),
        Spec("scipy.special.gammaincc", sc.gammaincc, BINARY, ((0.3, 5.0), (0.1, 9.0)),
             variant="a and x"),
        Spec("scipy.special.gammainc", lambda a: (sc.gammainc(a, 0.05), sc.gammainc(a, 60.0)),
             UNARY, (0.5, 8.0), variant="x << a, x >> a"),
        Spec("scipy.special.gammainc", sc.gammainc, BINARY, ((30.0, 60.0), (25.0, 70.0)),
             variant="large a"),
        # -- exponential, Dawson, Fresnel and sine/cosine integrals ---------------
        # JAX's exp1 and expn have no second derivative: their counterparts are written
        # with expi and the recurrence E_{n+1} = (e^-x - x·E_n)/n.
        Spec("scipy.special.exp1", sc.exp1, UNARY, (0.2, 4.0), jax=lambda x: -jsp.expi(-x)),
        Spec("scipy.special.expi", sc.expi, UNARY, (0.2, 4.0), jax=jsp.expi),
        Spec("scipy.special.expn", lambda x: (sc.expn(0, x), sc.expn(1, x), sc.expn(3, x)),
             UNARY, (0.2, 4.0),
             jax=_jax_expn),
        Spec("scipy.special.dawsn", sc.dawsn, UNARY, (-4.0, 4.0), jax=jsp.dawsn),
        Spec("scipy.special.exp10", sc.exp10, UNARY, (-3.0, 3.0), jax=lambda x: 10.0 ** x),
        Spec("scipy.special.exp2", sc.exp2, UNARY, (-3.0, 3.0), jax=jnp.exp2),
        # The Faddeeva function of a real x (a Voigt profile's kernel): complex values.
        Spec("scipy.special.wofz", lambda x: (np.real(sc.wofz(x)), np.imag(sc.wofz(x))),
             UNARY, (-4.0, 4.0),
             jax=lambda x: (jnp.real(jsp.wofz(x + 0j)), jnp.imag(jsp.wofz(x + 0j)))),
        # through |x| = 20, where the partial turns to its asymptotic series
        Spec("scipy.special.wofz", lambda x: (np.real(sc.wofz(x)), np.imag(sc.wofz(x))),
             UNARY, (12.0, 40.0), variant="large x",
             jax=lambda x: (jnp.real(jsp.wofz(x + 0j)), jnp.imag(jsp.wofz(x + 0j)))),
        Spec("scipy.special.fresnel", sc.fresnel, UNARY, (-3.0, 3.0), jax=jsp.fresnel),
        Spec("scipy.special.sici", sc.sici, UNARY, (0.2, 6.0), jax=jsp.sici),
        # -- entropies --------------------------------------------------------------
        Spec("scipy.special.entr", sc.entr, UNARY, (0.1, 3.0), jax=jsp.entr),
        Spec("scipy.special.kl_div", sc.kl_div, BINARY, (0.1, 3.0), jax=jsp.kl_div),
        Spec("scipy.special.rel_entr", sc.rel_entr, BINARY, (0.1, 3.0), jax=jsp.rel_entr),
        # -- Box-Cox, in x and lmbda (lmbda through 0: its derivative's series) -----
        Spec("scipy.special.boxcox", sc.boxcox, BINARY, ((0.2, 4.0), (-1.5, 2.0)),
             jax=jsp.boxcox),
        Spec("scipy.special.boxcox1p", sc.boxcox1p, BINARY, ((-0.7, 4.0), (-1.5, 2.0)),
             jax=jsp.boxcox1p),
        Spec("scipy.special.boxcox", sc.boxcox, BINARY, ((0.2, 4.0), (-0.05, 0.05)),
             variant="lmbda near 0"),
        # -- gamma family -------------------------------------------------------------
        Spec("scipy.special.loggamma", sc.loggamma, UNARY, (0.3, 6.0), jax=jsp.loggamma),
        Spec("scipy.special.poch", sc.poch, BINARY, ((0.5, 3.0), (-0.4, 2.5)), jax=jsp.poch),
        Spec("scipy.special.comb", sc.comb, BINARY, ((4.0, 9.0), (0.5, 3.5)),
             jax=jsp.comb),
        Spec("scipy.special.comb", lambda n, k: sc.comb(n, k, repetition=True), BINARY,
             ((1.5, 6.0), (0.5, 3.0)), variant="repetition",
             jax=lambda n, k: jsp.comb(n, k, repetition=True)),
        Spec("scipy.special.binom", sc.binom, BINARY, ((4.0, 9.0), (0.5, 3.5))),
        Spec("scipy.special.factorial", sc.factorial, UNARY, (0.2, 5.0), jax=jsp.factorial),
        # -- spence, Owen's T, hypergeometric, Hurwitz zeta --------------------------
        # (JAX's spence has a nan derivative for 1 < z < 2.)
        Spec("scipy.special.spence", sc.spence, UNARY, (0.1, 0.9), jax=jsp.spence),
        Spec("scipy.special.spence", sc.spence, UNARY, (1.1, 4.0), variant="z > 1"),
        # its derivative -log1p(u)/u, u = z - 1, by a series for |u| < 0.1
        Spec("scipy.special.spence", sc.spence, UNARY, (0.85, 1.15), variant="near 1"),
        Spec("scipy.special.owens_t", sc.owens_t, BINARY, ((-2.5, 2.5), (-2.0, 2.0)),
             jax=jsp.owens_t),
        Spec("scipy.special.hyp1f1",
             lambda x: (sc.hyp1f1(0.5, 1.5, x), sc.hyp1f1(2.0, 0.7, x)), UNARY, (-2.0, 2.0),
             jax=lambda x: (jsp.hyp1f1(0.5, 1.5, x), jsp.hyp1f1(2.0, 0.7, x))),
        Spec("scipy.special.hyp2f1",
             lambda x: (sc.hyp2f1(0.5, 1.5, 2.5, x), sc.hyp2f1(1.0, 2.0, 1.5, x)), UNARY,
             (-0.8, 0.8),
             jax=lambda x: (jsp.hyp2f1(0.5, 1.5, 2.5, x), jsp.hyp2f1(1.0, 2.0, 1.5, x))),
        Spec("scipy.special.zeta", lambda q: (sc.zeta(2.5, q), sc.zeta(4.0, q)), UNARY,
             (0.3, 4.0), variant="in q", jax=lambda q: (jsp.zeta(2.5, q), jsp.zeta(4.0, q))),
        Spec("scipy.special.zeta", sc.zeta, BINARY, ((1.3, 6.0), (0.3, 4.0)),
             variant="x and q", jax=jsp.zeta),
        # Riemann's ζ(x) = ζ(x, 1) for JAX (which has only Hurwitz's), and below x = 1
        Spec("scipy.special.zeta", sc.zeta, UNARY, (1.3, 6.0), variant="Riemann",
             jax=lambda x: jsp.zeta(x, 1.0)),
        Spec("scipy.special.zeta", sc.zeta, UNARY, (-3.0, 0.8), variant="Riemann, x < 1"),
        # through x = -1/2, where ζ' turns from Euler-Maclaurin to the reflection
        Spec("scipy.special.zeta", sc.zeta, UNARY, (-0.7, -0.3), variant="Riemann, x ≈ -1/2"),
    ]

if sc is not None:
    # logsumexp with weights b (differentiable; b > 0 here, and b < 0 in one row with
    # the sign returned) — at b = 0 JAX masks a out and gives d/db = 0, where the
    # derivative is exp(a)/Σ (central differences agree with dualad's).
    ROWS += [
        Spec("scipy.special.logsumexp",
             lambda x, b: (sc.logsumexp(x, b=b), sc.logsumexp(x, axis=-1, b=b),
                           sc.logsumexp(x, axis=0, b=b, keepdims=True)),
             (((4,), (4,)), ((2, 3), (2, 3)), ((2, 3), (3,))), ((-5.0, 5.0), (0.1, 2.0)),
             variant="b",
             jax=lambda x, b: (jsp.logsumexp(x, b=b), jsp.logsumexp(x, axis=-1, b=b),
                               jsp.logsumexp(x, axis=0, b=b, keepdims=True))),
        Spec("scipy.special.logsumexp",
             lambda x, b: sc.logsumexp(x, axis=-1, b=b * _ALTERNATING, return_sign=True)[0],
             (((2, 4), (4,)),), ((-1.0, 1.0), (0.5, 2.0)), variant="b, return_sign",
             jax=lambda x, b: jsp.logsumexp(x, axis=-1, b=b * _ALTERNATING,
                                            return_sign=True)[0]),
    ]

if sc is not None:
    # Bessel functions of the second kind in x (autograd has yn; JAX has neither).
    ROWS += [
        Spec("scipy.special.yn", lambda x: (sc.yn(1, x), sc.yn(3, x), sc.yn(0, x)), UNARY,
             (0.5, 6.0)),
        Spec("scipy.special.yv", lambda x: (sc.yv(1.5, x), sc.yv(0.0, x)), UNARY, (0.5, 6.0)),
    ]
