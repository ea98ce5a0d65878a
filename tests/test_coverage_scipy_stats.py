"""scipy.stats distributions and scipy.signal beyond tests/specs_scipy.py: dualad_gpu on
every row of tests/specs_scipy_stats.py, values at the edges (off the support, refused
parameters, q = 0 and 1), the values-only functions (discrete ppf/isf, mode, rankdata),
frozen distributions, keyword variants and the calls that raise."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad

st = pytest.importorskip("scipy.stats")
import scipy.signal as sg
from specs import SPECS  # noqa: F401  (first: it imports specs_scipy_stats)
from specs_scipy_stats import ROWS


def tangent(f, x, t=None):
    """The value and directional derivative of f at x (along ones by default)."""
    x = np.asarray(x)
    x = x if np.issubdtype(x.dtype, np.floating) else x.astype(float)
    return dualad.jvp(f, (x,), (np.ones_like(x) if t is None else t,))


# ---------------------------------------------------------------------------
# dualad_gpu: every spec row's Jacobian on JAX equals the NumPy one
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.id)
def test_rows_under_dualad_gpu(spec):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    import optree
    jax.config.update("jax_enable_x64", True)
    args = spec.draw(np.random.default_rng(0), spec.shapes[0])
    every = tuple(range(len(args)))
    ours = dualad.jacfwd(spec.fun, argnums=every)(*args)
    theirs = dualad_gpu.jacfwd(spec.fun, argnums=every)(*args)
    for a, b in zip(optree.tree_leaves(ours), optree.tree_leaves(theirs)):
        assert_allclose(np.asarray(b), a, rtol=1e-8, atol=1e-10, err_msg=spec.id)


def test_cdf_in_the_order_matches_jax_to_first_order():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jst = jax.scipy.stats
    x = np.array([-1.3, 0.4, 2.1])
    for ours, theirs, at in [
            (lambda df: st.chi2.cdf(1.7, df), lambda df: jst.chi2.cdf(1.7, df), 2.5),
            (lambda df: st.chi2.sf(0.4, df, 0.0, 0.5), lambda df: jst.chi2.sf(0.4, df, 0.0, 0.5),
             4.0),
            (lambda b: st.gennorm.cdf(x, b), lambda b: jst.gennorm.cdf(x, b), 1.7)]:
        assert_allclose(dualad.jacfwd(ours)(at), jax.jacfwd(theirs)(at), rtol=1e-9)
        assert_allclose(dualad.jacrev(ours)(at), jax.jacfwd(theirs)(at), rtol=1e-9)


# ---------------------------------------------------------------------------
# Values at the edges are SciPy's, derivatives there 0
# ---------------------------------------------------------------------------

EDGES = {  # distribution, shape parameters, points, which are off the support
    "expon": ((), [-1.0, 0.5, 3.0], [True, False, False]),
    "pareto": ((2.0,), [0.5, 1.5, 4.0], [True, False, False]),
    "uniform": ((), [-0.5, 0.5, 1.5], [True, False, True]),
    "truncnorm": ((-1.0, 1.5), [-2.0, 0.3, 2.0], [True, False, True]),
    "chi2": ((3.0,), [-1.0, 2.0], [True, False]),
    "geom": ((0.3,), [0.0, 2.0, -1.0], [True, False, True]),
}
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")


@pytest.mark.parametrize("name", sorted(EDGES))
@pytest.mark.parametrize("method", METHODS)
def test_values_off_the_support_are_scipys(name, method):
    shape, x, outside = EDGES[name]
    dist = getattr(st, name)
    if name == "geom":  # in p: k is a lattice point
        method = method.replace("pdf", "pmf")
        k = x
        f = lambda p: getattr(dist, method)(k, p)
        x, shape = np.full(3, shape[0]), ()
    else:
        f = lambda x: getattr(dist, method)(x, *shape)
    with np.errstate(all="ignore"):
        value, t = tangent(f, x)
        expected = f(np.asarray(x, float))
    assert_allclose(value, expected, rtol=1e-12)
    assert np.all(t[np.array(outside)] == 0.0)
    if not (name == "uniform" and method in ("logpdf", "pdf")):  # constant inside
        assert np.all(t[~np.array(outside)] != 0.0)


@pytest.mark.parametrize("call", [
    lambda x: st.cauchy.logpdf(x, 0.0, -1.0),
    lambda x: st.truncnorm.logpdf(x, 1.0, 0.5),
    lambda x: st.vonmises.logpdf(x, -1.0),
    lambda x: st.wrapcauchy.logpdf(x, 1.5),
    lambda x: st.pareto.cdf(x + 2.0, -1.0),
    lambda x: st.geom.logpmf(2, x / 10.0 + 1.0),
    lambda x: st.binom.pmf(2, 4.5, x / 10),
    lambda x: st.nbinom.logpmf(2, 0.0, x / 10),
], ids=range(8))
def test_refused_parameters_give_nan_as_scipy(call):
    x = np.array([0.5, 1.5])
    value, _ = tangent(call, x)
    assert_array_equal(value, call(x))
    assert np.all(np.isnan(value))


@pytest.mark.parametrize("name, shape", [("cauchy", ()), ("expon", ()), ("logistic", ()),
                                         ("gumbel_r", ()), ("pareto", (2.0,)),
                                         ("laplace", ()), ("norm", ()), ("uniform", ())])
@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_quantiles_at_0_and_1_and_outside(name, shape, method):
    dist = getattr(st, name)
    q = np.array([-0.5, 0.0, 0.3, 1.0, 1.5])
    value, t = tangent(lambda q: getattr(dist, method)(q, *shape, 0.2, 1.5), q)
    assert_allclose(value, getattr(dist, method)(q, *shape, 0.2, 1.5), rtol=1e-12)
    assert t[2] != 0.0 and np.all(np.isnan(t[[0, 4]]) | (t[[0, 4]] == 0.0))


# ---------------------------------------------------------------------------
# Values only: discrete quantiles, mode, rankdata
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_discrete_quantiles_are_values(method):
    q = np.array([0.0, 0.3, 0.69, 0.71, 1.0, 1.2])
    value, t = dualad.jvp(lambda p: getattr(st.bernoulli, method)(q, p), (0.3,), (1.0,))
    assert_array_equal(value, getattr(st.bernoulli, method)(q, 0.3))
    assert_array_equal(t, 0.0)


def test_mode_and_rankdata_are_values():
    x = np.array([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 0.0]])
    out, t = tangent(lambda x: st.mode(x, axis=1), x)
    expected = st.mode(x, axis=1)
    assert_array_equal(out.mode, expected.mode)
    assert_array_equal(out.count, expected.count)
    assert_array_equal(t.mode, 0.0)
    for kw in ({}, {"method": "min"}, {"axis": 1, "method": "dense"}):
        out, t = tangent(lambda x, kw=kw: st.rankdata(x, **kw), x)
        assert_array_equal(out, st.rankdata(x, **kw))
        assert_array_equal(t, 0.0)


def test_values_only_functions_under_dualad_gpu():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    x = np.array([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 0.0]])
    # the values enter as constant factors: the Jacobian is diag(values) in x
    jac = dualad_gpu.jacfwd(lambda x: st.rankdata(x, axis=1) * x)(x)
    assert_allclose(np.asarray(jac), dualad.jacfwd(lambda x: st.rankdata(x, axis=1) * x)(x))
    assert_allclose(np.einsum("ijij->ij", np.asarray(jac)), st.rankdata(x, axis=1))
    jac = dualad_gpu.jacfwd(lambda x: st.mode(x, axis=1).mode * x[:, 0])(x)
    assert_allclose(np.asarray(jac)[:, :, 0].diagonal(), st.mode(x, axis=1).mode)


# ---------------------------------------------------------------------------
# Keyword variants, frozen distributions, multivariate conventions
# ---------------------------------------------------------------------------


def test_keyword_and_frozen_calls_agree():
    x = np.array([0.4, 1.1, 2.5])
    calls = [lambda x: st.expon.logpdf(x, scale=2.0), lambda x: st.expon(scale=2.0).logpdf(x),
             lambda x: st.expon.logpdf(x, 0.0, 2.0)]
    results = [tangent(f, x) for f in calls]
    for value, t in results:
        assert_allclose(value, results[0][0], rtol=1e-15)
        assert_allclose(t, results[0][1], rtol=1e-15)
    # a Dual parameter of a frozen univariate distribution
    value, t = dualad.jvp(lambda s: st.gumbel_r(loc=0.3, scale=s).cdf(1.0), (1.5,), (1.0,))
    h = 1e-6
    assert_allclose(t, (st.gumbel_r.cdf(1.0, 0.3, 1.5 + h) - st.gumbel_r.cdf(1.0, 0.3, 1.5 - h))
                    / (2 * h), rtol=1e-6)


def test_sem_nan_policy_and_errors():
    x = np.array([[0.3, np.nan, 1.2], [0.5, 2.0, -1.0], [1.0, 0.1, 0.4]])
    value, t = tangent(lambda x: st.sem(x, nan_policy="omit"), x, np.nan_to_num(x))
    assert_allclose(value, st.sem(x, nan_policy="omit"), rtol=1e-12)
    h = 1e-6
    d = np.nan_to_num(x)
    assert_allclose(t, (st.sem(x + h * d, nan_policy="omit")
                        - st.sem(x - h * d, nan_policy="omit")) / (2 * h), rtol=1e-6)
    with pytest.raises(ValueError, match="nan"):
        tangent(lambda x: st.sem(x, nan_policy="raise"), x)


def test_dirichlet_conventions():
    x = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
    alpha = np.array([1.5, 2.0, 3.0])
    # x given without its last row (K - 1 entries): SciPy completes it to sum to 1
    value, t = tangent(lambda a: st.dirichlet.logpdf(x[:2], a), alpha)
    assert_allclose(value, st.dirichlet.logpdf(x, alpha), rtol=1e-12)
    assert_allclose(t, tangent(lambda a: st.dirichlet.logpdf(x, a), alpha)[1], rtol=1e-12)
    # frozen with a constant alpha, x a Dual moving along the simplex
    value, t = tangent(lambda x: st.dirichlet(alpha).logpdf(x), x[:, 0],
                       np.array([1.0, -1.0, 0.0]))
    h = 1e-6
    step = np.array([h, -h, 0.0])
    assert_allclose(t, (st.dirichlet.logpdf(x[:, 0] + step, alpha)
                        - st.dirichlet.logpdf(x[:, 0] - step, alpha)) / (2 * h), rtol=1e-6)
    with pytest.raises(ValueError, match="simplex"):
        tangent(lambda a: st.dirichlet.logpdf(x * 2.0, a), alpha)
    with pytest.raises(TypeError, match="np.asarray"):
        tangent(lambda a: st.dirichlet(a).logpdf(x), alpha)  # SciPy's constructor converts


def test_multinomial_values_and_the_last_probability_as_scipy():
    """Before SciPy 1.18 p[-1] is replaced by 1 - the others (its derivative is 0); from
    1.18 on it counts, and a p off the simplex gives nan."""
    from dualad.rules.scipy_distributions import _multinomial_completes_the_last_probability
    counts = np.array([[1.0, 2.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 4.0, 0.0]])
    p = np.array([0.2, 0.5, 0.3])
    value, t = tangent(lambda p: st.multinomial.logpmf(counts, 3, p), p,
                       np.array([0.0, 0.0, 1.0]))
    assert_allclose(value, st.multinomial.logpmf(counts, 3, p), rtol=1e-12)
    assert value[1] == -np.inf and value[2] == -np.inf  # sum != n; negative count
    if _multinomial_completes_the_last_probability():
        assert_array_equal(t, 0.0)  # SciPy ignores p[-1]
    else:
        assert_allclose(t[0], 0.0)  # (x[-1] = 0: log p[-1] weighs nothing)
        assert_allclose(tangent(lambda p: st.multinomial.logpmf([1, 1, 1], 3, p), p,
                                np.array([0.0, 0.0, 1.0]))[1], 1 / 0.3, rtol=1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            off = np.array([0.2, 0.5, 0.4])
            assert np.isnan(tangent(lambda p: st.multinomial.logpmf(counts[0], 3, p), off)[0])
            assert np.isnan(st.multinomial.logpmf(counts[0], 3, off))
    value, t = tangent(lambda p: st.multinomial.pmf(counts[0], 3, p), p)
    assert_allclose(value, st.multinomial.pmf(counts[0], 3, p), rtol=1e-12)


# ---------------------------------------------------------------------------
# What raises
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, match", [
    (lambda x: st.betabinom.cdf(2, 5, x, 2.0), "betabinom.cdf has no dualad rule"),
    (lambda x: st.vonmises.cdf(x, 2.0), "vonmises.cdf has no dualad rule"),
    (lambda x: st.chi2.ppf(x / 3, 2.0), "chi2.ppf has no dualad rule"),
    (lambda x: st.johnsonsu.logpdf(x, 1.0, 2.0), "johnsonsu.logpdf has no dualad rule"),
    (lambda x: st.skewnorm.ppf(x / 3, 2.0), "skewnorm.ppf has no dualad rule"),
], ids=["betabinom.cdf", "vonmises.cdf", "chi2.ppf", "johnsonsu", "skewnorm.ppf"])
def test_methods_without_a_formula_raise(call, match):
    with pytest.raises(TypeError, match=match):
        tangent(call, np.array([0.5, 1.5]))


@pytest.mark.parametrize("call, error", [
    (lambda a: sg.convolve2d(a, np.ones((2, 2)), boundary="reflect"), ValueError),
    (lambda a: sg.convolve2d(a, np.ones(2)), ValueError),
    (lambda a: sg.correlate(a, np.ones((2, 2)) * 1j), TypeError),
    (lambda a: sg.detrend(a, type="quadratic"), ValueError),
    (lambda a: sg.detrend(a, bp=[9]), ValueError),
    (lambda a: sg.fftconvolve(a, np.ones((2, 3)), axes=1), ValueError),
], ids=["boundary", "dimensions", "complex", "detrend type", "breakpoint", "fft shapes"])
def test_signal_errors(call, error):
    with pytest.raises(error):
        tangent(call, np.ones((3, 4)))


def test_signal_float32_and_fillvalue_derivative():
    a = np.arange(12.0).reshape(3, 4).astype(np.float32)
    value, t = tangent(lambda a: sg.detrend(a, bp=2), a)
    assert value.dtype == np.float32 and t.dtype == np.float32
    assert_allclose(value, sg.detrend(a, bp=2), atol=1e-5)
    # d/dfill of convolve2d(a, v, 'same', fillvalue=fill): v's sum over the outside taps
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.random.default_rng(0).normal(size=(3, 4))
    value, t = dualad.jvp(lambda f: sg.convolve2d(b, v, "same", fillvalue=f), (0.5,), (1.0,))
    h = 1e-6
    assert_allclose(value, sg.convolve2d(b, v, "same", fillvalue=0.5), rtol=1e-12)
    assert_allclose(t, (sg.convolve2d(b, v, "same", fillvalue=0.5 + h)
                        - sg.convolve2d(b, v, "same", fillvalue=0.5 - h)) / (2 * h), atol=1e-8)
    assert np.any(t != 0.0)


# -- multivariate_normal with a singular covariance (autograd's test_mvn_sing_cov) --

def test_multivariate_normal_with_a_singular_covariance():
    mvn = st.multivariate_normal
    cov = np.diag([1.0, 1.0, 0.0, 0.0])
    x, mean = np.array([0.3, -0.4, 0.0, 0.0]), np.array([0.1, 0.2, 0.0, 0.0])
    f = lambda x, mean, cov: mvn.logpdf(x, mean, cov, allow_singular=True)  # noqa: E731
    assert dualad.jvp(f, (x, mean, cov), (x, mean, cov))[0] == f(x, mean, cov)
    gx, gm, gc = dualad.grad(f, argnums=(0, 1, 2))(x, mean, cov)
    np.testing.assert_allclose(gx, -(x - mean), atol=1e-15)  # Σ⁺ = diag(1, 1, 0, 0)
    np.testing.assert_allclose(gm, x - mean, atol=1e-15)
    h = 1e-6
    for i, j in [(0, 0), (1, 0), (1, 1)]:  # the lower triangle SciPy reads
        e = np.zeros((4, 4))
        e[i, j] = h
        numeric = (f(x, mean, cov + e) - f(x, mean, cov - e)) / (2 * h)
        np.testing.assert_allclose(gc[i, j], numeric, rtol=1e-7, atol=1e-9)
    hessians = [dualad.hessian(lambda c: f(x, mean, c), mode=m)(cov) for m in
                ("hyperdual", "fwd-rev")]
    np.testing.assert_allclose(hessians[0], hessians[1], atol=1e-12)
    assert np.all(np.isfinite(hessians[0]))
    # off the covariance's range: -inf, as SciPy, with derivative 0
    off = x + np.array([0.0, 0.0, 1.0, 0.0])
    value, tangent = dualad.jvp(lambda x: f(x, mean, cov), (off,), (np.ones(4),))
    assert value == -np.inf == f(off, mean, cov) and tangent == 0.0
    with pytest.raises(np.linalg.LinAlgError, match="allow_singular is False"):
        dualad.grad(lambda x: mvn.logpdf(x, mean, cov))(x)


def test_multivariate_normal_entropy():
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
    g = dualad.grad(lambda c: st.multivariate_normal.entropy(cov=c))(a)
    inverse = np.linalg.inv(a)  # d ½ log det Σ = ½ tr(Σ⁻¹ dΣ), dΣ from the lower triangle
    np.testing.assert_allclose(g, np.tril(inverse) - 0.5 * np.diag(np.diag(inverse)),
                               rtol=1e-12, atol=1e-15)
