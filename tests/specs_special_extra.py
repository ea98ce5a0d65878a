"""Spec rows: the scipy.special ufuncs of ``dualad.rules.scipy_special_extra``.

Rows as in ``specs.py`` (which adds them to ``SPECS``), with a ``jax=`` counterpart
written with ``jax.numpy``/``jax.scipy.special`` where JAX has the function or a
closed form of it (JAX has no erfi, no Bessel functions K and no distribution
functions of these). Orders, degrees of freedom and counts are constants (their
derivatives raise); exprel, inv_boxcox and the scaled K functions get rows through
the points where their partials turn to a series (0, λ = 0, x = 50).
"""

from __future__ import annotations

import math

import numpy as np
from specs import BINARY, GAP, TERNARY, UNARY, LazyModule, Spec, jnp, nonzero

try:
    import scipy.special as sc
except ImportError:  # scipy is optional
    sc = None

jsp = LazyModule("jax.scipy.special")


def _jax_huber(delta, r):
    return jnp.where(jnp.abs(r) <= delta, 0.5 * r * r, delta * (jnp.abs(r) - 0.5 * delta))


def _jax_inv_boxcox(y, lmbda):
    return jnp.exp(jnp.log1p(lmbda * y) / lmbda)


ROWS: list[Spec] = []

if sc is not None:
    ROWS += [
        # -- elementary functions ---------------------------------------------------------
        Spec("scipy.special.expm1", sc.expm1, UNARY, (-3.0, 3.0), jax=jnp.expm1),
        Spec("scipy.special.log1p", sc.log1p, UNARY, (-0.7, 3.0), jax=jnp.log1p),
        Spec("scipy.special.cbrt", sc.cbrt, UNARY, nonzero(0.2, 3.0), jax=jnp.cbrt),
        Spec("scipy.special.exprel", sc.exprel, UNARY, nonzero(1.0, 5.0),
             jax=lambda x: jnp.expm1(x) / x),
        # its derivative's series for |x| < 1
        Spec("scipy.special.exprel", sc.exprel, UNARY, (-1.2, 1.2), variant="near 0"),
        Spec("scipy.special.cosm1", sc.cosm1, UNARY, (-3.0, 3.0),
             jax=lambda x: jnp.cos(x) - 1.0),
        Spec("scipy.special.powm1", sc.powm1, BINARY, ((0.2, 3.0), (-2.0, 2.0)),
             jax=lambda x, y: x ** y - 1.0),
        Spec("scipy.special.sindg", sc.sindg, UNARY, (-200.0, 200.0),
             jax=lambda x: jnp.sin(jnp.deg2rad(x))),
        Spec("scipy.special.cosdg", sc.cosdg, UNARY, (-200.0, 200.0),
             jax=lambda x: jnp.cos(jnp.deg2rad(x))),
        Spec("scipy.special.tandg", sc.tandg, UNARY, (-80.0, 80.0),
             jax=lambda x: jnp.tan(jnp.deg2rad(x))),
        Spec("scipy.special.cotdg", sc.cotdg, UNARY, (10.0, 170.0),
             jax=lambda x: 1.0 / jnp.tan(jnp.deg2rad(x))),
        Spec("scipy.special.radian", sc.radian, TERNARY, (-10.0, 10.0),
             jax=lambda d, m, s: (d + m / 60.0 + s / 3600.0) * (math.pi / 180.0)),
        Spec("scipy.special.zetac", sc.zetac, UNARY, (1.3, 6.0),
             jax=lambda x: jsp.zeta(x, 1.0) - 1.0),
        Spec("scipy.special.zetac", sc.zetac, UNARY, (-3.0, 0.8), variant="x < 1"),
        Spec("scipy.special.erfi", sc.erfi, UNARY, (-2.0, 2.0)),
        Spec("scipy.special.inv_boxcox", sc.inv_boxcox, BINARY, ((-1.0, 2.0), (-0.3, 0.9)),
             jax=_jax_inv_boxcox),
        Spec("scipy.special.inv_boxcox", sc.inv_boxcox, BINARY, ((-1.0, 2.0), (-0.05, 0.05)),
             variant="lmbda near 0"),
        Spec("scipy.special.inv_boxcox1p", sc.inv_boxcox1p, BINARY,
             ((-1.0, 2.0), (-0.3, 0.9)),
             jax=lambda y, lmbda: _jax_inv_boxcox(y, lmbda) - 1.0),
        # C¹, not C² at |r| = δ: central differences of the first derivative keep off it
        Spec("scipy.special.huber", sc.huber, BINARY, ((0.5, 2.0), (-3.0, 3.0)),
             avoid=lambda delta, r: bool(np.any(np.abs(np.abs(r) - delta) < 10 * GAP)),
             jax=_jax_huber),
        Spec("scipy.special.pseudo_huber", sc.pseudo_huber, BINARY,
             ((0.3, 2.0), (-3.0, 3.0)),
             jax=lambda delta, r: delta * delta * (jnp.sqrt(1.0 + (r / delta) ** 2) - 1.0)),
        # its partial in r turns from r/hypot(1, r/δ) to δ·sign(r)/hypot(1, δ/r) at |r| = δ
        Spec("scipy.special.pseudo_huber", sc.pseudo_huber, BINARY,
             ((0.5, 1.0), (-1.5, 1.5)), variant="|r| ≈ δ"),
        # -- Bessel functions, in x ---------------------------------------------------
        Spec("scipy.special.k0", sc.k0, UNARY, (0.2, 6.0)),
        Spec("scipy.special.k1", sc.k1, UNARY, (0.2, 6.0)),
        Spec("scipy.special.k0e", sc.k0e, UNARY, (0.2, 6.0)),
        Spec("scipy.special.k1e", sc.k1e, UNARY, (0.2, 6.0)),
        # through x = 50, where their partials turn to the asymptotic series
        Spec("scipy.special.k0e", lambda x: (sc.k0e(x), sc.k1e(x)), UNARY, (40.0, 80.0),
             variant="large x"),
        Spec("scipy.special.kn", lambda x: (sc.kn(0, x), sc.kn(2, x), sc.kn(3, x)), UNARY,
             (0.3, 5.0)),
        Spec("scipy.special.jve", lambda x: (sc.jve(1.5, x), sc.jve(0.0, x)), UNARY,
             (0.2, 6.0)),
        Spec("scipy.special.yve", lambda x: (sc.yve(1.5, x), sc.yve(0.0, x)), UNARY,
             (0.5, 6.0)),
        Spec("scipy.special.kve", lambda x: (sc.kve(1.5, x), sc.kve(0.0, x)), UNARY,
             (0.2, 6.0)),
        # through x = max(50, 4v²)
        Spec("scipy.special.kve", lambda x: (sc.kve(1.5, x), sc.kve(4.0, x)), UNARY,
             (40.0, 80.0), variant="large x"),
        # -- distribution functions, in x (and gdtr's rate a) ------------------------------
        Spec("scipy.special.chdtr", lambda x: (sc.chdtr(3.0, x), sc.chdtr(1.0, x)), UNARY,
             (0.1, 8.0)),
        Spec("scipy.special.chdtrc", lambda x: sc.chdtrc(2.5, x), UNARY, (0.1, 8.0)),
        Spec("scipy.special.gdtr", lambda a, x: sc.gdtr(a, 2.5, x), BINARY,
             ((0.3, 3.0), (0.1, 5.0))),
        Spec("scipy.special.gdtrc", lambda a, x: sc.gdtrc(a, 0.7, x), BINARY,
             ((0.3, 3.0), (0.1, 5.0))),
        Spec("scipy.special.bdtr", lambda p: (sc.bdtr(2, 6, p), sc.bdtr(0, 3, p)), UNARY,
             (0.05, 0.95)),
        Spec("scipy.special.nbdtr", lambda p: (sc.nbdtr(2, 6, p), sc.nbdtr(0, 1, p)), UNARY,
             (0.05, 0.95)),
    ]
