"""Statistics and selection (dualad/rules/statistics.py, selection.py): dualad_gpu,
the NaN conventions, errors, and what the spec rows cannot express."""

import re
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad

RNG = np.random.default_rng(0)
X = RNG.uniform(-2.0, 2.0, (3, 6))
XN = X.copy()
XN[0, 1] = XN[2, 4] = XN[2, 0] = np.nan
W = RNG.uniform(0.5, 2.0, 6)

# One function per code path; NaN-functions get XN (NaN in the input).
FUNCTIONS = {
    "median": lambda x: (np.median(x), np.median(x, axis=1, keepdims=True)),
    "quantile": lambda x: (np.quantile(x, [0.2, 0.9], axis=0), np.quantile(x, 0.35)),
    "quantile methods": lambda x: [np.quantile(x, 0.35, axis=1, method=m)
                                   for m in ("lower", "higher", "nearest", "midpoint")],
    "percentile": lambda x: np.percentile(x, 30, axis=(0, 1)),
    "nanmedian": lambda x: np.nanmedian(x, axis=1),
    "nanquantile": lambda x: np.nanquantile(x, [0.3, 0.6], axis=1),
    "nanpercentile": lambda x: np.nanpercentile(x, 40),
    "nansum": lambda x: np.nansum(x, axis=0),
    "nanprod": lambda x: np.nanprod(x, axis=1),
    "nanmean": np.nanmean,
    "nanmax": lambda x: np.nanmax(x, axis=1),
    "nanmin": lambda x: np.nanmin(x, axis=0),
    "nanvar": lambda x: np.nanvar(x, axis=1, ddof=1),
    "nanstd": lambda x: np.nanstd(x, axis=1),
    "nancumsum": lambda x: np.nancumsum(x, axis=1),
    "nancumprod": np.nancumprod,
    "nan_to_num": lambda x: np.nan_to_num(x, nan=2.0),
    "average": lambda x: np.average(x, axis=1, weights=W, returned=True),
    "ptp": lambda x: np.ptp(x, axis=0),
    "cov": lambda x: (np.cov(x), np.cov(x, aweights=W)),
    "corrcoef": np.corrcoef,
    "partition": lambda x: np.partition(x, 2, axis=1)[:, 2],
    "piecewise": lambda x: np.piecewise(x, [x < 0, x > 1], [np.sin, lambda v: v ** 2, 0.5]),
    "select": lambda x: np.select([x < 0, x > 1], [x ** 2, np.sin(x)], 0.5),
    "real, imag, angle": lambda x: np.angle(x) * x + np.real(x) + np.imag(x),
}


def _input(name):
    return XN if name.startswith("nan") else X


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_dualad_gpu_matches_the_numpy_path(name):
    jax = pytest.importorskip("jax")
    import dualad_gpu

    f, x = FUNCTIONS[name], _input(name)
    with jax.enable_x64(True):
        for transform in ("jacfwd", "jacrev"):
            ours = getattr(dualad_gpu, transform)(f)(x)
            expected = getattr(dualad, transform)(f)(x)
            for a, b in zip(jax.tree_util.tree_leaves(ours),
                            jax.tree_util.tree_leaves(expected)):
                assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-12, err_msg=transform)


def test_dualad_gpu_quantile_in_q_and_hessian():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    def f(x, q):
        return np.sum(np.quantile(x, q, axis=1) ** 2) + np.nanmedian(x) ** 3

    q = np.array([0.3, 0.55])
    with jax.enable_x64(True):
        for argnums in (0, 1):
            assert_allclose(dualad_gpu.grad(f, argnums=argnums)(XN, q),
                            dualad.grad(f, argnums=argnums)(XN, q), rtol=1e-12)
        g = lambda x: f(x, q)  # noqa: E731
        assert_allclose(dualad_gpu.hessian(g)(X), dualad.hessian(g)(X), rtol=1e-12,
                        atol=1e-12)


def test_dualad_gpu_index_functions_on_the_primal():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    def f(x):
        return x * (np.nanargmax(x) + 2 * np.nanargmin(x, axis=0)
                    + np.argpartition(np.nan_to_num(x), 1, axis=1)[:, 1:2])

    x = XN
    with jax.enable_x64(True):
        assert_allclose(dualad_gpu.jacfwd(f)(x), dualad.jacfwd(f)(x), rtol=1e-15)


@pytest.mark.parametrize("call", [lambda x: np.unique(x), lambda x: np.histogram(x, 3)[1]])
def test_dualad_gpu_refuses_value_dependent_shapes(call):
    jax = pytest.importorskip("jax")
    import dualad_gpu

    with jax.enable_x64(True), pytest.raises(TypeError, match="dualad_gpu"):
        dualad_gpu.jacfwd(call)(X[0])


# ---------------------------------------------------------------------------
# NaN: derivative 0 at NaN positions, no NaN elsewhere, in every mode (as JAX)
# ---------------------------------------------------------------------------

NAN_FUNCTIONS = [np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanstd,
                 np.nanvar, np.nanmedian, lambda x: np.nanpercentile(x, 30),
                 lambda x: np.nanquantile(x, 0.7)]


@pytest.mark.parametrize("f", NAN_FUNCTIONS)
def test_nan_functions_give_zero_at_nan_and_finite_elsewhere(f):
    x = np.array([1.0, np.nan, 3.0, 2.5, np.nan])
    for g in (dualad.grad(f)(x), dualad.jacfwd(f)(x), dualad.jacrev(f)(x)):
        assert np.all(np.isfinite(g))
        assert_array_equal(g[[1, 4]], 0.0)
    assert_array_equal(dualad.hessian(f)(x)[[1, 4]], 0.0)


def test_grad_of_nansum_is_one_except_at_nan():
    x = np.array([1.0, np.nan, -3.0, np.nan])
    assert_array_equal(dualad.grad(np.nansum)(x), [1.0, 0.0, 1.0, 0.0])
    assert_array_equal(dualad.grad(lambda x: np.nansum(3 * x - 1))(x), [3.0, 0.0, 3.0, 0.0])
    # as in JAX, a NaN tangent made before the nan-function (x**2 at NaN: 2·NaN) is
    # not cleaned in reverse mode: grad of np.nansum(x ** 2) is NaN there


def test_nanstd_over_one_value_has_derivative_zero():
    # std 0: sqrt'(0) meets the exactly zero derivative of the variance (JAX gives nan)
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    g = dualad.jacfwd(lambda x: np.nanstd(x, axis=1))(x)
    assert_array_equal(g[0], 0.0)
    assert np.all(np.isfinite(g))


def test_all_nan_slices_give_nan_as_numpy():
    x = np.array([[np.nan, np.nan], [1.0, 2.0]])
    for f in (np.nanmax, np.nanmin, np.nanmean, np.nanmedian):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "All-NaN slice"
            expected = f(x, axis=1)
        out, _ = dualad.jvp(lambda x: f(x, axis=1), (x,), (np.ones_like(x),))
        assert_array_equal(out, expected)
        for jac in (dualad.jacfwd, dualad.jacrev):  # derivative 0 on the all-NaN row
            assert_array_equal(jac(lambda x: f(x, axis=1))(x)[0], 0.0)


def test_quantile_of_a_slice_with_nan_is_nan_with_zero_derivative():
    x = np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]])
    out, t = dualad.jvp(lambda x: np.median(x, axis=1), (x,), (np.ones_like(x),))
    assert_array_equal(out, np.median(x, axis=1))
    assert_array_equal(t, [0.0, 1.0])


# ---------------------------------------------------------------------------
# Conventions and NumPy's behaviour that rows cannot express
# ---------------------------------------------------------------------------


def test_median_derivative_picks_the_middle_elements():
    assert_array_equal(dualad.grad(np.median)(np.array([3.0, 1.0, 2.0])), [0.0, 0.0, 1.0])
    assert_array_equal(dualad.grad(np.median)(np.array([3.0, 1.0, 2.0, 5.0])),
                       [0.5, 0.0, 0.5, 0.0])


def test_quantile_derivative_in_q_at_an_integer_position_is_zero_as_jax():
    x = np.array([3.0, 1.0, 2.0, 5.0])
    assert dualad.grad(lambda q: np.quantile(x, q))(1 / 3) == 0.0
    assert dualad.grad(lambda q: np.quantile(x, q))(0.4) == 3.0  # (3 - 2)·(n - 1)


def test_nearest_rounds_half_to_even_as_numpy():
    x = np.array([4.0, 1.0, 3.0, 2.0])  # position 1.5: NumPy takes 3 (JAX would take 2)
    out, t = dualad.jvp(lambda x: np.quantile(x, 0.5, method="nearest"), (x,),
                        (np.eye(4)[2],))
    assert out == np.quantile(x, 0.5, method="nearest") == 3.0 and t == 1.0


def test_float32_stays_float32_and_q_promotes_as_numpy():
    x = X.astype(np.float32)
    d = dualad.Dual(x, np.ones_like(x))
    assert np.median(d).dtype == np.float32
    assert np.quantile(d, 0.3).dtype == np.quantile(x, 0.3).dtype == np.float32
    assert np.quantile(d, np.float64(0.3)).dtype == np.float64
    assert np.nanmean(d).dtype == np.float32
    assert np.average(d, axis=1, weights=W).dtype == np.float64
    assert np.cov(d).dtype == np.float64


def test_piecewise_functions_see_only_their_elements_as_numpy():
    seen = []

    def f(v):
        seen.append(dualad.primal_value(v).copy())
        return np.sqrt(v)  # would warn (nan) on the negative elements

    x = np.array([-1.0, 4.0, -2.0, 9.0])
    with np.errstate(invalid="raise"):
        g = dualad.jacfwd(lambda x: np.piecewise(x, [x > 0], [f, 0.0]))(x)
    assert_array_equal(seen[-1], [4.0, 9.0])
    assert_allclose(np.diag(g), [0.0, 0.25, 0.0, 1 / 6])


@pytest.mark.parametrize("call", [
    lambda x: np.piecewise(x, x > 0, [np.sin, np.cos]),
    lambda x: np.piecewise(x, [x > 0], [np.sin]),
    lambda x: np.piecewise(x, [x > 0, x < -0.5], [np.sin, lambda v: v ** 3, 1.5]),
    lambda x: np.piecewise(x, [list(np.ravel(x > 0))] if np.ndim(x) == 1 else [x > 0],
                           [np.exp]),
])
@pytest.mark.parametrize("x", [X[0], X, X[0, 0]], ids=["1-d", "2-d", "0-d"])
def test_piecewise_values_equal_numpy(call, x):
    try:
        expected = call(x)
    except ValueError as error:  # a 2-d condition array for 2-d x is a list of rows
        with pytest.raises(ValueError, match=re.escape(str(error))):
            dualad.jvp(call, (x,), (np.ones_like(x),))
        return
    out, _ = dualad.jvp(call, (x,), (np.ones_like(x),))
    assert_array_equal(out, expected)


def test_piecewise_on_a_0d_dual_and_select_dtype():
    assert dualad.grad(lambda x: np.piecewise(x, x > 0, [np.sin, np.cos]))(0.5) == np.cos(0.5)
    d = dualad.Dual(np.float32([1.0, -1.0]), np.ones(2, np.float32))
    assert np.select([d > 0], [d]).dtype == np.float32


def test_unique_values_follow_their_first_occurrence():
    x = np.array([2.0, 1.0, 2.0, 3.0])
    j = dualad.jacfwd(lambda x: np.unique(x))(x)
    assert_array_equal(j, [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]])
    values, index, counts = np.unique(dualad.Dual(x, np.ones(4)), return_index=True,
                                      return_counts=True)
    assert_array_equal(index, [1, 0, 3])
    assert_array_equal(counts, [1, 2, 1])


def test_histogram_counts_have_no_derivative_in_the_data():
    x = np.array([0.1, 0.5, 0.3, 0.9, 0.7])
    counts, edges = np.histogram(x, 3)
    out = dualad.jvp(lambda x: np.histogram(x, 3), (x,), (np.ones(5),))
    assert_array_equal(out[0][0], counts)
    assert_allclose(out[0][1], edges, rtol=1e-15)
    assert_allclose(out[1][1], np.ones(4))  # shifting the data shifts the edges
    assert_array_equal(dualad.jacfwd(lambda x: np.histogram(x, [0.0, 0.5, 1.0])[0]
                                     .astype(float))(x), 0.0)


@pytest.mark.parametrize("call, error, match", [
    (lambda d: np.quantile(d, 0.5, method="weibull"), ValueError, "weibull"),
    (lambda d: np.quantile(d, 1.5), ValueError, r"range \[0, 1\]"),
    (lambda d: np.percentile(d, 150), ValueError, r"range \[0, 100\]"),
    (lambda d: np.quantile(d, 0.5, method="inverted_cdf", weights=np.ones(3)), TypeError,
     "weights"),
    (lambda d: np.nansum(d, where=d > 0), TypeError, "where"),
    (lambda d: np.histogram(d, "auto"), TypeError, "estimator"),
    (lambda d: np.average(d, weights=np.zeros(3)), ZeroDivisionError, "sum to zero"),
    (lambda d: np.piecewise(d, [d > 0, d < 0], [np.sin]), ValueError, "functions"),
    (lambda d: np.select([d], [d]), TypeError, "boolean"),
])
def test_unsupported_calls_raise_clearly(call, error, match):
    with pytest.raises(error, match=match):
        call(dualad.Dual(np.array([1.0, 2.0, 3.0]), np.ones(3)))
