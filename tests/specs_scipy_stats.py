"""Spec rows: scipy.stats distributions and scipy.signal beyond specs_scipy.py.

Rows as in ``specs.py`` (which adds them to ``SPECS``). Every ``fun`` calls SciPy as
users do (``scipy.stats.cauchy.logpdf(x, loc, scale)``); a row is named after the
distribution object with the methods (or the arguments differentiated) as variant.
Discrete distributions are differentiated in their continuous parameters, the points
``k`` (and the integer ``n``) built inside ``fun``. ``jax=`` is JAX's function, or for
a method JAX lacks, the same quantity from JAX's others (``sf = 1 - cdf``,
``isf(q) = ppf(1 - q)``; gumbel's logpdf, pdf and ppf written out: JAX's raise a
float0 TypeError when differentiated in scale). multinomial: p is normalized first (SciPy
1.18 gives nan where it does not sum to 1; before, it replaced the last probability by one
minus the others); the ``jax=`` counterpart takes one row of counts at a time (JAX
compares the sum of all the counts with n).

Rows whose derivative needs an incomplete gamma function in its order (chi2.cdf in
``df``, gennorm.cdf in ``beta``) are marked "in the order" in their variant; they have
no ``jax=`` (JAX's derivative of gammainc in a has no derivative):
test_coverage_scipy_stats.py checks their first derivative against JAX's.
"""

from __future__ import annotations

import numpy as np
from specs import GAP, LazyModule, Spec, jnp

try:
    import scipy.signal as sg
    import scipy.stats as st
except ImportError:  # scipy is optional
    st = None

jst = LazyModule("jax.scipy.stats")
jsg = LazyModule("jax.scipy.signal")

CONT = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
DENSITY = ("logpdf", "pdf")
TAILS = ("cdf", "logcdf", "sf", "logsf")
# x, loc, scale: one shape set with scalars, one broadcasting
XLS = (((5,), (), ()), ((2, 3), (3,), (2, 1)))
X1 = (((5,), ()), ((2, 3), (3,)))  # x and one shape parameter
ONE = (((5,),), ((2, 3),))


def _each(dist, methods, *args):
    return tuple(getattr(dist, m)(*args) for m in methods)


def _jax_each(name, methods, *args):
    """JAX's methods of distribution ``name``; those it lacks from its others."""
    dist = getattr(jst, name)
    out = []
    for m in methods:
        if hasattr(dist, m):
            out.append(getattr(dist, m)(*args))
        elif m == "sf":
            out.append(1.0 - dist.cdf(*args))
        elif m in ("logcdf", "logsf"):
            base = m.removeprefix("log")
            out.append(jnp.log(getattr(dist, base)(*args)) if hasattr(dist, base)
                       else jnp.log1p(-dist.cdf(*args)))
        elif m == "isf":
            out.append(dist.ppf(1.0 - args[0], *args[1:]))
        else:
            raise AttributeError(f"jax.scipy.stats.{name}.{m}")
    return tuple(out)


def _near_loc(x, loc, scale):
    return bool(np.any(np.abs(np.asarray(x) - np.asarray(loc)) < 10 * GAP))


def _counts(p, modulus):
    """Lattice points k = 0, 1, ... of p's shape, as floats (SciPy takes float k)."""
    return np.arange(np.size(p)).reshape(np.shape(p)) % modulus + 0.0


def _jax_counts(p, modulus):
    return jnp.arange(jnp.size(p)).reshape(jnp.shape(p)) % modulus + 0.0


# dirichlet: x on the simplex, a constant (SciPy refuses points off it); 4 columns
_SIMPLEX = np.array([[0.2, 0.5, 0.3, 0.1], [0.3, 0.1, 0.3, 0.6], [0.5, 0.4, 0.4, 0.3]])
_COUNTS = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [3.0, 0.0, 0.0], [1.0, 1.0, 1.0]])


def _gumbel_density(z, scale):
    """gumbel_l's logpdf and pdf in z (gumbel_r's in -z), for JAX: JAX's own raise a
    float0 TypeError when differentiated in scale (jax 0.10)."""
    logpdf = z - jnp.exp(z) - jnp.log(scale)
    return logpdf, jnp.exp(logpdf)


def _shapes(n: int) -> tuple:
    """Argument shapes of (x, n shape parameters, loc, scale): scalars, then broadcasting."""
    return (((5,),) + ((),) * (n + 2), ((2, 3),) + ((3,),) * n + ((), (2, 1)))


def _family(name, x, shapes=(), methods=CONT, quantiles=True, loc=(-0.2, 0.2),
            scale=(0.8, 2.0), variant="", avoid=None):
    """Rows of a distribution without a JAX counterpart: ``methods`` in x, the shape
    parameters (domains ``shapes``), loc and scale; ppf and isf in q likewise."""
    dist = getattr(st, name)
    rows = [Spec(f"scipy.stats.{name}", lambda x, *a: _each(dist, methods, x, *a),
                 _shapes(len(shapes)), (x,) + tuple(shapes) + (loc, scale), avoid=avoid,
                 variant=variant or "x, shapes, loc, scale")]
    if quantiles:
        rows.append(Spec(f"scipy.stats.{name}",
                         lambda q, *a: _each(dist, ("ppf", "isf"), q, *a),
                         _shapes(len(shapes)), ((0.05, 0.95),) + tuple(shapes) + (loc, scale),
                         variant=(variant + ", " if variant else "") + "ppf, isf"))
    return rows


ROWS: list[Spec] = []

if st is not None:
    ROWS += [
        # -- continuous, no shape parameter --------------------------------------
        Spec("scipy.stats.cauchy", lambda x, loc, scale: _each(st.cauchy, CONT, x, loc, scale),
             XLS, ((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("cauchy", CONT, x, loc, scale)),
        Spec("scipy.stats.cauchy",
             lambda q, loc, scale: _each(st.cauchy, ("ppf", "isf"), q, loc, scale), XLS,
             ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="ppf, isf",
             jax=lambda q, loc, scale: _jax_each("cauchy", ("ppf", "isf"), q, loc, scale)),
        Spec("scipy.stats.expon", lambda x, loc, scale: _each(st.expon, CONT, x, loc, scale),
             XLS, ((1.2, 4.0), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("expon", CONT, x, loc, scale)),
        Spec("scipy.stats.expon", lambda x: _each(st.expon(scale=2.0), CONT, x), ONE,
             (0.2, 4.0), variant="frozen",
             jax=lambda x: _jax_each("expon", CONT, x, 0.0, 2.0)),
        Spec("scipy.stats.expon",
             lambda q, loc, scale: _each(st.expon, ("ppf", "isf"), q, loc, scale), XLS,
             ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="ppf, isf",
             jax=lambda q, loc, scale: _jax_each("expon", ("ppf", "isf"), q, loc, scale)),
        Spec("scipy.stats.gumbel_r",
             lambda x, loc, scale: _each(st.gumbel_r, CONT + ("ppf",), x, loc, scale), XLS,
             ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _gumbel_density(-(x - loc) / scale, scale)
             + _jax_each("gumbel_r", TAILS, x, loc, scale)
             + (loc - scale * jnp.log(-jnp.log(x)),)),
        Spec("scipy.stats.gumbel_l",
             lambda x, loc, scale: _each(st.gumbel_l, CONT + ("ppf",), x, loc, scale), XLS,
             ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _gumbel_density((x - loc) / scale, scale)
             + _jax_each("gumbel_l", TAILS, x, loc, scale)
             + (loc + scale * jnp.log(-jnp.log1p(-x)),)),
        Spec("scipy.stats.laplace",
             lambda x, loc, scale: _each(st.laplace, CONT, x, loc, scale), XLS,
             ((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0)), avoid=_near_loc, variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("laplace", CONT, x, loc, scale)),
        Spec("scipy.stats.laplace", lambda q: _each(st.laplace, ("ppf", "isf"), q, 0.5, 1.5),
             ONE, (0.05, 0.95), avoid=lambda q: bool(np.any(np.abs(q - 0.5) < 10 * GAP)),
             variant="ppf, isf",
             jax=lambda q: (0.5 - 1.5 * jnp.sign(q - 0.5) * jnp.log1p(-2 * jnp.abs(q - 0.5)),
                            0.5 + 1.5 * jnp.sign(q - 0.5) * jnp.log1p(-2 * jnp.abs(q - 0.5)))),
        Spec("scipy.stats.logistic",
             lambda x, loc, scale: _each(st.logistic, CONT + ("ppf", "isf"), x, loc, scale),
             XLS, ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("logistic", CONT + ("ppf", "isf"), x, loc,
                                                 scale)),
        Spec("scipy.stats.uniform",
             lambda x, loc, scale: _each(st.uniform, ("logpdf", "pdf", "cdf", "sf", "ppf"),
                                         x, loc, scale), XLS,
             ((0.1, 0.9), (-0.05, 0.05), (1.0, 1.2)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("uniform", ("logpdf", "pdf", "cdf", "sf",
                                                             "ppf"), x, loc, scale)),
        # -- continuous with shape parameters --------------------------------------
        Spec("scipy.stats.chi2",
             lambda x, df, scale: _each(st.chi2, DENSITY, x, df, 0.0, scale),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((0.3, 5.0), (1.5, 6.0), (0.5, 2.0)),
             variant="density",
             jax=lambda x, df, scale: _jax_each("chi2", DENSITY, x, df, 0.0, scale)),
        Spec("scipy.stats.chi2", lambda x, scale: _each(st.chi2, TAILS, x, 2.5, 0.0, scale),
             X1, ((0.3, 5.0), (0.5, 2.0)), variant="cdf in x",
             jax=lambda x, scale: _jax_each("chi2", TAILS, x, 2.5, 0.0, scale)),
        Spec("scipy.stats.chi2", lambda df: _each(st.chi2, ("cdf", "sf"), 1.7, df), ONE,
             (1.5, 6.0), variant="cdf in the order"),
        Spec("scipy.stats.gamma",
             lambda a, scale: _each(st.gamma, ("cdf", "sf", "logcdf", "logsf"), 1.9, a, 0.0,
                                    scale),
             X1, ((0.6, 5.0), (0.5, 2.0)), variant="cdf in the order"),
        Spec("scipy.stats.gennorm", lambda x, beta: _each(st.gennorm, DENSITY, x, beta), X1,
             ((-2.5, 2.5), (1.2, 3.0)), avoid=lambda x, beta: bool(np.any(np.abs(x) < 0.05)),
             variant="density", jax=lambda x, beta: _jax_each("gennorm", DENSITY, x, beta)),
        Spec("scipy.stats.gennorm", lambda x: st.gennorm.cdf(x, 1.7), ONE, (-2.5, 2.5),
             avoid=lambda x: bool(np.any(np.abs(x) < 0.05)), variant="cdf in x",
             jax=lambda x: jst.gennorm.cdf(x, 1.7)),
        Spec("scipy.stats.gennorm", lambda beta: st.gennorm.cdf(np.array([-1.3, 0.4, 2.1]),
                                                                 beta),
             (((),),), (1.2, 3.0), variant="cdf in the order"),
        Spec("scipy.stats.pareto",
             lambda x, b, scale: _each(st.pareto, CONT, x, b, 0.0, scale),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((1.6, 4.0), (1.0, 3.0), (0.5, 1.4)),
             variant="x, b, scale",
             jax=lambda x, b, scale: _jax_each("pareto", CONT, x, b, 0.0, scale)),
        Spec("scipy.stats.pareto",
             lambda q, b, scale: _each(st.pareto, ("ppf", "isf"), q, b, 0.0, scale),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((0.05, 0.95), (1.0, 3.0), (0.5, 1.4)),
             variant="ppf, isf",
             jax=lambda q, b, scale: _jax_each("pareto", ("ppf", "isf"), q, b, 0.0, scale)),
        Spec("scipy.stats.truncnorm",
             lambda x, a, b: _each(st.truncnorm, CONT, x, a, b),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((-0.4, 0.7), (-1.5, -0.5), (0.8, 2.0)),
             variant="x, a, b", jax=lambda x, a, b: _jax_each("truncnorm", CONT, x, a, b)),
        Spec("scipy.stats.truncnorm",
             lambda x, a, b: _each(st.truncnorm, CONT, x, a, b),
             (((5,), (), ()),), ((1.05, 1.9), (0.5, 1.0), (2.0, 3.0)), variant="right tail",
             jax=lambda x, a, b: _jax_each("truncnorm", CONT, x, a, b)),
        Spec("scipy.stats.truncnorm",
             lambda x, a, b: _each(st.truncnorm, CONT, x, a, b),
             (((5,), (), ()),), ((-1.9, -1.05), (-3.0, -2.0), (-1.0, -0.5)), variant="left tail",
             jax=lambda x, a, b: _jax_each("truncnorm", CONT, x, a, b)),
        Spec("scipy.stats.truncnorm",
             lambda x, loc, scale: _each(st.truncnorm, CONT, x, -1.0, 1.5, loc, scale), XLS,
             ((-0.2, 0.5), (-0.1, 0.1), (0.8, 1.2)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _jax_each("truncnorm", CONT, x, -1.0, 1.5, loc, scale)),
        Spec("scipy.stats.vonmises", lambda x, kappa: _each(st.vonmises, DENSITY, x, kappa), X1,
             ((-2.5, 2.5), (0.5, 4.0)),
             jax=lambda x, kappa: _jax_each("vonmises", DENSITY, x, kappa)),
        Spec("scipy.stats.wrapcauchy", lambda x, c: _each(st.wrapcauchy, DENSITY, x, c), X1,
             ((0.3, 6.0), (0.1, 0.9)),
             jax=lambda x, c: _jax_each("wrapcauchy", DENSITY, x, c)),
        Spec("scipy.stats.norm", lambda q, loc, scale: _each(st.norm, ("ppf", "isf"), q, loc,
                                                             scale),
             XLS, ((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0)), variant="ppf, isf",
             jax=lambda q, loc, scale: _jax_each("norm", ("ppf", "isf"), q, loc, scale)),
        # -- discrete: in the continuous parameters --------------------------------
        Spec("scipy.stats.bernoulli",
             lambda p: _each(st.bernoulli, ("logpmf", "pmf", "cdf", "sf"), _counts(p, 2), p),
             ONE, (0.1, 0.9),
             jax=lambda p: (jst.bernoulli.logpmf(_jax_counts(p, 2), p),
                            jst.bernoulli.pmf(_jax_counts(p, 2), p),
                            jst.bernoulli.cdf(_jax_counts(p, 2), p),
                            1.0 - jst.bernoulli.cdf(_jax_counts(p, 2), p))),
        Spec("scipy.stats.binom",
             lambda p: _each(st.binom, ("logpmf", "pmf"), _counts(p, 6), 5.0, p), ONE,
             (0.1, 0.9), variant="in p",
             jax=lambda p: _jax_each("binom", ("logpmf", "pmf"), _jax_counts(p, 6), 5.0, p)),
        Spec("scipy.stats.binom",
             lambda p: _each(st.binom, ("cdf", "sf"), _counts(p, 6), 5.0, p), ONE,
             (0.1, 0.9), variant="cdf in p"),
        Spec("scipy.stats.betabinom",
             lambda a, b: _each(st.betabinom, ("logpmf", "pmf"), _counts(a, 6), 5.0, a, b),
             (((5,), (5,)), ((2, 3), (3,))), (0.5, 3.0),
             jax=lambda a, b: _jax_each("betabinom", ("logpmf", "pmf"), _jax_counts(a, 6), 5.0,
                                        a, b)),
        Spec("scipy.stats.geom",
             lambda p: _each(st.geom, ("logpmf", "pmf", "cdf", "sf", "logsf"),
                             _counts(p, 4) + 1.0, p),
             ONE, (0.1, 0.9),
             jax=lambda p: (jst.geom.logpmf(_jax_counts(p, 4) + 1.0, p),
                            jst.geom.pmf(_jax_counts(p, 4) + 1.0, p),
                            -jnp.expm1(jnp.log1p(-p) * (_jax_counts(p, 4) + 1.0)),
                            jnp.exp(jnp.log1p(-p) * (_jax_counts(p, 4) + 1.0)),
                            jnp.log1p(-p) * (_jax_counts(p, 4) + 1.0))),
        Spec("scipy.stats.nbinom",
             lambda n, p: _each(st.nbinom, ("logpmf", "pmf"), _counts(p, 5), n, p),
             (((5,), (5,)), ((2, 3), (3,))), ((0.5, 4.0), (0.1, 0.9)), variant="in n, p",
             jax=lambda n, p: _jax_each("nbinom", ("logpmf", "pmf"), _jax_counts(p, 5), n, p)),
        Spec("scipy.stats.nbinom",
             lambda p: _each(st.nbinom, ("cdf", "sf"), _counts(p, 5), 2.5, p), ONE,
             (0.1, 0.9), variant="cdf in p"),
        # -- multivariate ------------------------------------------------------------
        Spec("scipy.stats.dirichlet",
             lambda alpha: (st.dirichlet.logpdf(_SIMPLEX, alpha),
                            st.dirichlet.pdf(_SIMPLEX[:, 0], alpha),
                            st.dirichlet.logpdf(_SIMPLEX[:2], alpha)),
             (((3,),),), (0.5, 3.0),
             jax=lambda alpha: (jst.dirichlet.logpdf(jnp.asarray(_SIMPLEX), alpha),
                                jst.dirichlet.pdf(jnp.asarray(_SIMPLEX[:, 0]), alpha),
                                jst.dirichlet.logpdf(jnp.asarray(_SIMPLEX[:2]), alpha))),
        # (p normalized: SciPy 1.18 gives nan where p does not sum to 1)
        Spec("scipy.stats.multinomial",
             lambda p: (st.multinomial.logpmf(_COUNTS, 3, p / np.sum(p)),
                        st.multinomial.pmf(_COUNTS[0], 3, p / np.sum(p))),
             (((3,),),), (0.1, 0.4),
             jax=lambda p: (jnp.stack([jst.multinomial.logpmf(jnp.asarray(c, int), 3,
                                                              p / jnp.sum(p))
                                       for c in _COUNTS]),
                            jst.multinomial.pmf(jnp.asarray(_COUNTS[0], int), 3,
                                                p / jnp.sum(p)))),
        # -- statistics ---------------------------------------------------------------
        Spec("scipy.stats.sem",
             lambda x: (st.sem(x), st.sem(x, axis=None), st.sem(x, axis=-1, ddof=0),
                        st.sem(x, keepdims=True)),
             (((5,),), ((3, 4),)), (-2.0, 2.0),
             jax=lambda x: (jst.sem(x), jst.sem(x, axis=None), jst.sem(x, axis=-1, ddof=0),
                            jst.sem(x, keepdims=True))),
        # -- scipy.signal ---------------------------------------------------------------
        Spec("scipy.signal.correlate",
             lambda a, v: (sg.correlate(a, v), sg.correlate(a, v, "same"),
                           sg.correlate(a, v, mode="valid"), sg.correlate(v, a, mode="valid"),
                           sg.correlate(a, v, method="fft")),
             (((6,), (3,)), ((4, 5), (2, 3))), (-2.0, 2.0),
             jax=lambda a, v: (jsg.correlate(a, v), jsg.correlate(a, v, "same"),
                               jsg.correlate(a, v, mode="valid"),
                               jsg.correlate(v, a, mode="valid"),
                               jsg.correlate(a, v, method="fft"))),
        Spec("scipy.signal.convolve2d",
             lambda a, v: (sg.convolve2d(a, v), sg.convolve2d(a, v, "same"),
                           sg.convolve2d(a, v, mode="valid"), sg.convolve2d(v, a, "valid")),
             (((4, 5), (2, 3)), ((3, 3), (3, 2))), (-2.0, 2.0),
             jax=lambda a, v: (jsg.convolve2d(a, v), jsg.convolve2d(a, v, "same"),
                               jsg.convolve2d(a, v, mode="valid"),
                               jsg.convolve2d(v, a, "valid"))),
        Spec("scipy.signal.convolve2d",
             lambda a, v, fill: (sg.convolve2d(a, v, boundary="wrap"),
                                 sg.convolve2d(a, v, "same", boundary="symm"),
                                 sg.convolve2d(a, v, "same", fillvalue=fill)),
             (((4, 5), (2, 3), ()), ((3, 3), (3, 2), ())), (-2.0, 2.0),
             variant="boundary, fillvalue"),
        Spec("scipy.signal.correlate2d",
             lambda a, v: (sg.correlate2d(a, v), sg.correlate2d(a, v, "same"),
                           sg.correlate2d(a, v, mode="valid"), sg.correlate2d(v, a, "valid")),
             (((4, 5), (2, 3)), ((3, 3), (3, 2))), (-2.0, 2.0),
             jax=lambda a, v: (jsg.correlate2d(a, v), jsg.correlate2d(a, v, "same"),
                               jsg.correlate2d(a, v, mode="valid"),
                               jsg.correlate2d(v, a, "valid"))),
        Spec("scipy.signal.correlate2d",
             lambda a, v, fill: (sg.correlate2d(a, v, boundary="wrap"),
                                 sg.correlate2d(a, v, "same", boundary="symm"),
                                 sg.correlate2d(a, v, "same", fillvalue=fill)),
             (((4, 5), (2, 3), ()),), (-2.0, 2.0), variant="boundary, fillvalue"),
        Spec("scipy.signal.fftconvolve",
             lambda a, v: (sg.fftconvolve(a, v), sg.fftconvolve(a, v, "same"),
                           sg.fftconvolve(a, v, mode="valid")),
             (((6,), (3,)), ((4, 5), (2, 3))), (-2.0, 2.0),
             jax=lambda a, v: (jsg.fftconvolve(a, v), jsg.fftconvolve(a, v, "same"),
                               jsg.fftconvolve(a, v, mode="valid"))),
        Spec("scipy.signal.fftconvolve",
             lambda a, v: (sg.fftconvolve(a, v, axes=1), sg.fftconvolve(a, v, "same", axes=-1)),
             (((3, 6), (3, 2)), ((3, 6), (1, 4))), (-2.0, 2.0), variant="axes",
             jax=lambda a, v: (jsg.fftconvolve(a, v, axes=[1]),
                               jsg.fftconvolve(a, v, "same", axes=[-1]))),
        Spec("scipy.signal.detrend",
             lambda x: (sg.detrend(x), sg.detrend(x, type="constant"), sg.detrend(x, axis=0),
                        sg.detrend(x, bp=[2, 5])),
             (((3, 8),), ((4, 6),)), (-2.0, 2.0),
             jax=lambda x: (jsg.detrend(x), jsg.detrend(x, type="constant"),
                            jsg.detrend(x, axis=0), jsg.detrend(x, bp=[2, 5]))),
    ]

if st is not None:
    # Distributions JAX lacks (dualad/rules/scipy_distributions_extra.py): no jax= rows.
    # genextreme and genpareto also near c = 0 (series in c), where SciPy's forms cancel.
    ROWS += [
        *_family("weibull_min", (0.5, 3.0), ((0.8, 3.0),)),
        *_family("weibull_max", (-3.0, -0.5), ((0.8, 3.0),)),
        *_family("exponweib", (0.5, 3.0), ((0.5, 3.0), (0.6, 2.5))),
        *_family("rayleigh", (0.5, 3.0)),
        *_family("gompertz", (0.2, 2.5), ((0.3, 2.0),)),
        *_family("genextreme", (-1.5, 1.5), ((-0.4, 0.4),)),
        *_family("genextreme", (-1.5, 1.5), ((-0.01, 0.01),), variant="c near 0"),
        *_family("genpareto", (0.3, 2.5), ((-0.25, 0.4),)),
        *_family("genpareto", (0.3, 2.5), ((-0.01, 0.01),), variant="c near 0"),
        *_family("lognorm", (0.5, 4.0), ((0.4, 2.0),)),
        *_family("fisk", (0.5, 4.0), ((0.6, 4.0),)),
        *_family("lomax", (0.5, 4.0), ((0.5, 3.0),)),
        *_family("loguniform", (1.2, 2.8), ((0.5, 1.0), (3.5, 5.0)), loc=(-0.05, 0.05),
                 scale=(0.9, 1.1)),
        Spec("scipy.stats.reciprocal", lambda x, a, b: _each(st.reciprocal, CONT, x, a, b),
             (((5,), (), ()),), ((1.2, 2.8), (0.5, 1.0), (3.5, 5.0))),
        *_family("powerlaw", (0.2, 0.8), ((0.5, 3.0),), loc=(-0.05, 0.05), scale=(1.0, 1.2)),
        *_family("triang", (0.1, 0.9), ((0.2, 0.8),), loc=(-0.05, 0.05), scale=(1.0, 1.2),
                 avoid=lambda x, c, loc, scale: bool(np.any(
                     np.abs((x - loc) / scale - c) < 10 * GAP))),
        *_family("halfnorm", (0.5, 3.0)),
        *_family("halfcauchy", (0.5, 3.0)),
        *_family("foldnorm", (0.5, 3.0), ((0.2, 2.0),), quantiles=False),
        *_family("skewnorm", (-2.0, 2.0), ((-3.0, 3.0),), quantiles=False),
        *_family("invgauss", (0.3, 3.0), ((0.3, 2.0),), quantiles=False),
        # cdf/sf in the shape parameter: gammainc in a (twice at most): densities here,
        # tails in x and the test of tests/test_scipy_distributions_extra.py
        *_family("maxwell", (0.5, 3.0), quantiles=False),
        *_family("invgamma", (0.3, 3.0), ((0.8, 4.0),), DENSITY, quantiles=False),
        *_family("nakagami", (0.5, 3.0), ((0.6, 3.0),), DENSITY, quantiles=False),
        Spec("scipy.stats.invgamma", lambda x, scale: _each(st.invgamma, TAILS, x, 2.5, 0.0,
                                                            scale),
             X1, ((0.3, 3.0), (0.8, 2.0)), variant="cdf in x"),
        Spec("scipy.stats.nakagami", lambda x, scale: _each(st.nakagami, TAILS, x, 1.7, 0.0,
                                                            scale),
             X1, ((0.5, 3.0), (0.8, 2.0)), variant="cdf in x"),
    ]

try:
    import scipy.integrate as si
except ImportError:  # scipy is optional
    si = None

if si is not None:
    # scipy.integrate.trapezoid, routed to np.trapezoid's rule.
    ROWS += [
        Spec("scipy.integrate.trapezoid",
             lambda y, x: (si.trapezoid(y), si.trapezoid(y, x, axis=-1),
                           si.trapezoid(y, dx=0.3, axis=0)),
             (((5,), (5,)), ((2, 5), (5,))), ((-2.0, 2.0), (-2.0, 2.0)),
             jax=lambda y, x: (LazyModule("jax.scipy.integrate").trapezoid(y),
                               LazyModule("jax.scipy.integrate").trapezoid(y, x, axis=-1),
                               LazyModule("jax.scipy.integrate").trapezoid(y, dx=0.3,
                                                                           axis=0))),
    ]
