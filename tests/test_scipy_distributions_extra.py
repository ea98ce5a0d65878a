"""The distributions of dualad/rules/scipy_distributions_extra.py beyond their spec rows:
maximum-likelihood gradients and Hessians against central differences of SciPy's own
logpdf sums (genextreme and genpareto at c = 0 and next to it), values against SciPy's
across the support, the cdf in a shape parameter that is gammainc's order."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

st = pytest.importorskip("scipy.stats")

DATA = np.random.default_rng(0).gamma(2.0, 1.5, size=200)


def central_gradient(f, p, h=1e-6):
    """Central differences of f (SciPy's own numbers) at p, relative steps."""
    g = np.zeros_like(p)
    for i in range(p.size):
        e = np.zeros_like(p)
        e[i] = h * max(1.0, abs(p[i]))
        g[i] = (f(p + e) - f(p - e)) / (2 * e[i])
    return g


def central_hessian(f, p, h=1e-4):
    """Central differences of the central-difference gradient."""
    cols = []
    for i in range(p.size):
        e = np.zeros_like(p)
        e[i] = h * max(1.0, abs(p[i]))
        cols.append((central_gradient(f, p + e) - central_gradient(f, p - e)) / (2 * e[i]))
    return 0.5 * (np.array(cols) + np.array(cols).T)


# (negative log-likelihood of the data, parameters): shapes, loc and scale as users fit them
FITS = {
    "weibull_min": (lambda p: -np.sum(st.weibull_min.logpdf(DATA, p[0], scale=p[1])),
                    np.array([1.5, 3.0])),
    "weibull_min, loc": (lambda p: -np.sum(st.weibull_min.logpdf(DATA, p[0], p[1], p[2])),
                         np.array([1.5, -0.2, 3.0])),
    "lognorm": (lambda p: -np.sum(st.lognorm.logpdf(DATA, p[0], scale=p[1])),
                np.array([0.7, 2.5])),
    "genextreme": (lambda p: -np.sum(st.genextreme.logpdf(DATA, p[0], p[1], p[2])),
                   np.array([-0.1, 2.0, 1.5])),
    "genextreme, c = 0": (lambda p: -np.sum(st.genextreme.logpdf(DATA, p[0], p[1], p[2])),
                          np.array([0.0, 2.0, 1.5])),
    "genextreme, c = 1e-9": (lambda p: -np.sum(st.genextreme.logpdf(DATA, p[0], p[1], p[2])),
                             np.array([1e-9, 2.0, 1.5])),
    "genextreme, c = -1e-12": (lambda p: -np.sum(st.genextreme.logpdf(DATA, p[0], p[1],
                                                                      p[2])),
                               np.array([-1e-12, 2.0, 1.5])),
    "genpareto": (lambda p: -np.sum(st.genpareto.logpdf(DATA, p[0], scale=p[1])),
                  np.array([0.2, 2.5])),
    "genpareto, c = 0": (lambda p: -np.sum(st.genpareto.logpdf(DATA, p[0], scale=p[1])),
                         np.array([0.0, 2.5])),
    "genpareto, c = -1e-10": (lambda p: -np.sum(st.genpareto.logpdf(DATA, p[0], scale=p[1])),
                              np.array([-1e-10, 2.5])),
    "skewnorm": (lambda p: -np.sum(st.skewnorm.logpdf(DATA, p[0], p[1], p[2])),
                 np.array([2.0, 1.0, 2.0])),
    "gompertz": (lambda p: -np.sum(st.gompertz.logpdf(DATA, p[0], scale=p[1])),
                 np.array([0.5, 4.0])),
    "invgauss": (lambda p: -np.sum(st.invgauss.logpdf(DATA, p[0], scale=p[1])),
                 np.array([0.8, 3.0])),
}


@pytest.mark.parametrize("name", sorted(FITS))
def test_likelihood_gradients_and_hessians_match_central_differences(name):
    nll, p = FITS[name]
    assert_allclose(dualad.grad(nll)(p), central_gradient(nll, p), rtol=1e-6, atol=1e-6)
    assert_allclose(dualad.jacrev(nll)(p), dualad.grad(nll)(p), rtol=1e-12)
    h = dualad.hessian(nll)(p)
    assert_allclose(h, central_hessian(nll, p), rtol=1e-4, atol=1e-3)
    assert_allclose(h, h.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["genextreme", "genpareto"])
def test_c_near_0_is_continuous_through_the_limit(name):
    # The derivatives in c at c = 0 (the Gumbel / exponential limit) are the limits of
    # those beside it, to the series' accuracy: no cancellation as c → 0.
    dist = getattr(st, name)
    x = np.linspace(0.1, 3.0, 7)
    d2 = lambda c: dualad.hessian(lambda c: np.sum(dist.logpdf(x, c)))(c)  # noqa: E731
    d1 = lambda c: dualad.grad(lambda c: np.sum(dist.logpdf(x, c)))(c)  # noqa: E731
    for c, rtol in ((1e-12, 1e-10), (-1e-12, 1e-10), (1e-8, 1e-6), (-1e-8, 1e-6)):
        assert_allclose(d1(c), d1(0.0), rtol=rtol)
        assert_allclose(d2(c), d2(0.0), rtol=rtol)
    # and the value at c = 0 is SciPy's Gumbel / exponential one
    assert_allclose(dualad.jvp(lambda c: dist.logpdf(x, c), (0.0,), (1.0,))[0],
                    dist.logpdf(x, 0.0), rtol=1e-15)


# SciPy's values to 1e-12 in the bulk; in the tails, where x = loc + scale·z rounds z and
# several of SciPy's forms cancel (1 - cdf, q^(1/a) - 1, differences of logs), to the
# conditioning there (ours are the more accurate ones: checked against mpmath)
BULK = np.linspace(0.02, 0.98, 9)
TAILS = np.concatenate([np.logspace(-12, -3, 4), 1 - np.logspace(-3, -8, 3)])
VALUES = [("weibull_min", (1.7,)), ("weibull_max", (0.8,)), ("lognorm", (0.6,)),
          ("genextreme", (0.3,)), ("genextreme", (-0.4,)), ("genextreme", (0.0,)),
          ("genpareto", (0.3,)), ("genpareto", (-0.4,)), ("genpareto", (0.0,)),
          ("skewnorm", (3.0,)), ("invgamma", (2.5,)), ("halfnorm", ()), ("halfcauchy", ()),
          ("rayleigh", ()), ("maxwell", ()), ("lomax", (2.0,)), ("fisk", (3.0,)),
          ("gompertz", (0.7,)), ("exponweib", (2.0, 1.5)), ("invgauss", (0.6,)),
          ("nakagami", (1.3,)), ("loguniform", (0.5, 8.0)), ("reciprocal", (0.01, 1.0)),
          ("foldnorm", (1.2,)), ("powerlaw", (2.5,)), ("triang", (0.3,))]


@pytest.mark.parametrize("name, shape", VALUES, ids=[f"{n}{s}" for n, s in VALUES])
def test_values_are_scipys_across_the_support(name, shape):
    dist = getattr(st, name)
    for quantiles, rtol in ((BULK, 1e-12), (TAILS, 1e-3)):
        x = dist.ppf(quantiles, *shape, 0.3, 1.7)
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"):
            arg = quantiles if method in ("ppf", "isf") else x
            f = lambda a, m=method: getattr(dist, m)(a, *shape, 0.3, 1.7)  # noqa: E731
            try:
                value, t = dualad.jvp(f, (arg,), (np.ones_like(arg),))
            except TypeError as error:  # a method without a closed form
                assert method in ("ppf", "isf") and "has no dualad rule" in str(error)
                continue
            assert_allclose(value, f(arg), rtol=rtol, atol=1e-300, err_msg=method)
            assert np.all(np.isfinite(t)), method


@pytest.mark.parametrize("dist, shape", [("invgamma", 2.5), ("nakagami", 1.7)])
def test_cdf_in_the_order_of_gammainc(dist, shape):
    dist = getattr(st, dist)
    x = np.array([0.4, 1.1, 2.3])
    for method in ("cdf", "sf", "logcdf", "logsf"):
        f = lambda a, m=method: getattr(dist, m)(x, a)  # noqa: E731
        assert_allclose(dualad.jacfwd(f)(shape), (f(shape + 1e-6) - f(shape - 1e-6)) / 2e-6,
                        rtol=2e-5)


def test_the_issues_fit_runs():
    data = np.random.default_rng(0).gamma(2.0, 1.5, size=200)
    g = dualad.grad(lambda p: -np.sum(st.weibull_min.logpdf(data, p[0], scale=p[1])))(
        np.array([1.5, 3.0]))
    assert g.shape == (2,) and np.all(np.isfinite(g))


def test_skewnorm_cdf_is_scipys_with_exact_derivatives():
    x = np.array([-6.0, -2.0, 0.3, 1.5, 4.0])
    for a in (-2.0, 0.5, 4.0):
        value, dx = dualad.jvp(lambda x: st.skewnorm.cdf(x, a), (x,), (np.ones_like(x),))
        assert_allclose(value, st.skewnorm.cdf(x, a), rtol=1e-15)
        assert_allclose(dx, st.skewnorm.pdf(x, a), rtol=1e-13)
        da = dualad.jacfwd(lambda a: st.skewnorm.cdf(x, a))(a)
        assert_allclose(da, (st.skewnorm.cdf(x, a + 1e-6) - st.skewnorm.cdf(x, a - 1e-6))
                        / 2e-6, rtol=1e-5, atol=1e-9)
