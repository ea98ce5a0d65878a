"""Selecting, writing in place, set operations, counts and the NumPy 2 array functions
(dualad/rules/indexing.py, building.py, selection.py): what the spec rows of
specs_arrays.py cannot express — values-only functions, in-place semantics, integer
outputs, dtypes, refusals, and dualad_gpu."""

import numpy as np
import pytest
import specs  # noqa: F401  (first: it imports specs_arrays)
from numpy.testing import assert_allclose, assert_array_equal
from specs_arrays import ROWS, VALUE_SHAPED

import dualad
from dualad import Dual, primal_value

RNG = np.random.default_rng(5)
X = RNG.uniform(-2.0, 2.0, (3, 4))


def seeded(x):
    """A Dual of ``x`` with a tangent that tells its elements apart."""
    return Dual(x, np.arange(1.0, x.size + 1).reshape(x.shape))


# ---------------------------------------------------------------------------
# Functions with integer or boolean results: NumPy's values, no derivative
# ---------------------------------------------------------------------------

VALUES_ONLY = {
    "digitize": lambda x: np.digitize(x, [-1.0, 0.0, 1.5]),
    "digitize right": lambda x: np.digitize(x, np.array([-1.0, 0.0, 1.5]), right=True),
    "isin": lambda x: np.isin(x, x[0]),
    "isin invert": lambda x: np.isin(x, [x[1, 1], 7.0], invert=True),
    "isneginf": lambda x: np.isneginf(np.log(x + 2.0)),
    "isposinf": lambda x: np.isposinf(1.0 / (x - x[0, 0])),
    "isreal": np.isreal,
    "iscomplex": np.iscomplex,
    "lexsort": lambda x: np.lexsort((x[0], np.round(x[1]))),
    "lexsort of an array": lambda x: np.lexsort(x[:2]),
}


@pytest.mark.parametrize("name", list(VALUES_ONLY))
def test_values_only_functions_give_numpy_s_values(name):
    f = VALUES_ONLY[name]
    x = X.copy()
    x[0, 0] = -2.0  # isneginf: log(0) = -inf
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = f(x)
        got = f(seeded(x))
    assert not isinstance(got, Dual)
    assert got.dtype == expected.dtype
    assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["digitize", "isin", "lexsort", "isposinf"])
def test_values_only_functions_have_derivative_zero(name):
    f = VALUES_ONLY[name]
    with np.errstate(divide="ignore", invalid="ignore"):
        jac = dualad.jacfwd(lambda x: f(x) * x[0, 1])(X)
        grad = dualad.grad(lambda x: np.sum(f(x) * x[0, 1]))(X)
        expected = f(X)
    column = np.zeros_like(X)
    column[0, 1] = 1.0
    assert_allclose(jac, np.multiply.outer(expected, column))
    assert_allclose(grad, np.sum(expected) * column)


def test_values_only_functions_run_under_dualad_gpu():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    with jax.enable_x64(True):
        for name in ("digitize", "isin", "lexsort", "isposinf", "isreal"):
            f = VALUES_ONLY[name]
            with np.errstate(divide="ignore", invalid="ignore"):
                value, tangent = dualad_gpu.jvp(lambda x, f=f: f(x) * 1.0, (X,),
                                                (np.ones_like(X),))
                assert_array_equal(np.asarray(value), f(X) * 1.0, err_msg=name)
            assert_array_equal(np.asarray(tangent), 0.0, err_msg=name)


# ---------------------------------------------------------------------------
# Writing in place
# ---------------------------------------------------------------------------


def test_writers_leave_the_caller_s_arrays_alone():
    x = seeded(X)
    before_primal, before_tangent = x.primal.copy(), x.tangent.copy()
    y = x.copy()
    np.put(y, [0, 3], x[1, :2])
    np.place(y, X > 0, x[2])
    np.put_along_axis(y, np.array([[1], [0], [2]]), x[:, :1], axis=1)
    np.fill_diagonal(y, x[0, 3])
    assert_array_equal(x.primal, before_primal)
    assert_array_equal(x.tangent, before_tangent)
    assert_array_equal(X, before_primal)
    # and y is what NumPy computes
    z = X.copy()
    np.put(z, [0, 3], X[1, :2])
    np.place(z, X > 0, X[2])
    np.put_along_axis(z, np.array([[1], [0], [2]]), X[:, :1], axis=1)
    np.fill_diagonal(z, X[0, 3])
    assert_array_equal(y.primal, z)


def test_a_position_written_twice_keeps_the_last_value_as_in_numpy():
    def f(x):
        y = np.zeros_like(x)
        np.put(y, [1, 1, 2, 1], x)
        return y

    x = np.array([2.0, 3.0, 5.0, 7.0])
    expected = np.zeros(4)
    np.put(expected, [1, 1, 2, 1], x)
    assert_array_equal(f(x), expected)
    jac = dualad.jacfwd(f)(x)
    assert_array_equal(jac[1], [0.0, 0.0, 0.0, 1.0])  # x[3], the last one written at 1
    assert_array_equal(jac[2], [0.0, 0.0, 1.0, 0.0])
    assert_array_equal(dualad.jacrev(f)(x), jac)


def test_a_write_into_a_view_reaches_its_base():
    def f(x):
        y = x.copy()
        row = y[1]
        np.put(row, [0, 2], x[0, :2] * 10.0)
        np.fill_diagonal(y[:, 1:], 0.5 * x[2, 0])
        return y

    expected = X.copy()
    expected[1, [0, 2]] = X[0, :2] * 10.0
    np.fill_diagonal(expected[:, 1:], 0.5 * X[2, 0])
    assert_array_equal(primal_value(f(seeded(X))), expected)
    assert_allclose(dualad.jacrev(f)(X), dualad.jacfwd(f)(X))
    assert dualad.jacfwd(f)(X)[1, 0, 0, 0] == 10.0


def test_put_modes_and_place_cycle_values_as_numpy():
    v = np.array([1.5, -2.5])

    def put(x, v, mode):
        y = x.copy()
        np.put(y, [-13, 15, 4], v, mode=mode)
        return y

    def place(x, v):
        y = x.copy()
        np.place(y, X > 0, v)
        return y

    for mode in ("wrap", "clip"):
        value, tangent = dualad.jvp(lambda x, v, mode=mode: put(x, v, mode), (X, v),
                                    (np.zeros_like(X), np.ones(2)))
        assert_array_equal(value, put(X, v, mode))
        assert_array_equal(tangent, put(np.zeros_like(X), np.ones(2), mode))
    with pytest.raises(IndexError):
        np.put(seeded(X).copy(), [12], 1.0)
    value, tangent = dualad.jvp(place, (X, v), (np.zeros_like(X), np.array([1.0, 2.0])))
    assert_array_equal(value, place(X, v))
    assert_array_equal(tangent, place(np.zeros_like(X), np.array([1.0, 2.0])))


def test_writing_duals_into_a_plain_array_is_refused():
    for write in (lambda a, d: np.put(a, [0], d), lambda a, d: np.place(a, a > 0, d),
                  lambda a, d: np.put_along_axis(a, np.zeros((3, 1), int), d, axis=1)):
        with pytest.raises(TypeError, match="plain NumPy array"):
            dualad.jacfwd(lambda x, write=write: write(X.copy(), x[0, 0]))(X)
    # NumPy hands np.fill_diagonal to dualad only when `a` is a Dual: its own
    # conversion of the value refuses
    with pytest.raises(TypeError, match="derivative"):
        dualad.jacfwd(lambda x: np.fill_diagonal(X.copy(), x[0, 0]))(X)


# ---------------------------------------------------------------------------
# Counts, histograms, set operations, unique
# ---------------------------------------------------------------------------


def test_bincount_weights_and_plain_counts():
    ids = np.array([0, 3, 3, 1])
    w = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    out, tangent = dualad.jvp(lambda w: np.bincount(ids, w, minlength=6), (w,), (np.ones(4,
                                                                                    np.float32),))
    assert out.dtype == np.bincount(ids, w).dtype == np.float64  # as NumPy: float64 sums
    assert_array_equal(out, np.bincount(ids, w, minlength=6))
    assert_array_equal(tangent, [1.0, 1.0, 0.0, 2.0, 0.0, 0.0])
    assert_array_equal(np.bincount(ids, minlength=5), np.bincount(ids, Dual(w, None) * 0 + 1,
                                                                  minlength=5))
    with pytest.raises(ValueError, match="same length"):
        np.bincount(ids, seeded(np.ones(3)))


def test_histogramdd_counts_have_no_derivative_and_equal_numpy_s():
    sample = RNG.uniform(-1.0, 1.0, (20, 2))
    counts, edges = np.histogramdd(seeded(sample), (3, 4))
    expected, expected_edges = np.histogramdd(sample, (3, 4))
    assert not isinstance(counts, Dual)
    assert_array_equal(counts, expected)
    for e, f in zip(edges, expected_edges):
        assert_array_equal(primal_value(e), f)
    # the edges follow the extremes of their column
    jac = dualad.jacfwd(lambda s: np.histogramdd(s, 2)[1][0])(sample)
    lo, hi = np.argmin(sample[:, 0]), np.argmax(sample[:, 0])
    assert_allclose(jac[:, lo, 0], [1.0, 0.5, 0.0])
    assert_allclose(jac[:, hi, 0], [0.0, 0.5, 1.0])
    assert_array_equal(jac[:, :, 1], 0.0)


def test_histogram2d_values_and_weights():
    x, y, w = RNG.uniform(-1, 1, 15), RNG.uniform(-1, 1, 15), RNG.uniform(0, 1, 15)
    ours = np.histogram2d(seeded(x), y, bins=[np.linspace(-1, 1, 4), 3], weights=seeded(w))
    expected = np.histogram2d(x, y, bins=[np.linspace(-1, 1, 4), 3], weights=w)
    for a, b in zip(ours, expected):
        assert_array_equal(primal_value(a), b)
    grad = dualad.grad(lambda w: np.histogram2d(x, y, 3, weights=w)[0][1, 1])(w)
    counts = np.histogram2d(x, y, 3, weights=(np.arange(15) + 1.0))[0][1, 1]
    assert_allclose(np.sum(grad * (np.arange(15) + 1.0)), counts)
    with pytest.raises(TypeError, match="bins"):
        np.histogramdd(seeded(np.c_[x, y]), "auto")
    with pytest.raises(TypeError, match="estimator"):
        np.histogram_bin_edges(seeded(x), "auto")


def test_intersect1d_return_indices_and_unique_all_integers_are_numpy_s():
    a = np.array([3.0, 1.0, 2.0, 3.0, 5.0])
    b = np.array([5.0, 2.0, 7.0, 2.0])
    values, i1, i2 = np.intersect1d(seeded(a), b, return_indices=True)
    expected = np.intersect1d(a, b, return_indices=True)
    assert_array_equal(values.primal, expected[0])
    assert_array_equal(i1, expected[1])
    assert_array_equal(i2, expected[2])
    assert_array_equal(values.tangent[0], a[i1] * 0 + i1 + 1)  # from ar1's elements
    ours, theirs = np.unique_all(seeded(a)), np.unique_all(a)
    assert type(ours) is type(theirs)
    for field in ("indices", "inverse_indices", "counts"):
        assert_array_equal(getattr(ours, field), getattr(theirs, field))
    # each distinct value carries the derivative of its first occurrence
    assert_array_equal(ours.values.tangent[0], theirs.indices + 1.0)
    assert_array_equal(np.unique_inverse(seeded(a)).inverse_indices,
                       np.unique_inverse(a).inverse_indices)
    assert_array_equal(np.unique_counts(seeded(a)).counts, np.unique_counts(a).counts)


def test_set_functions_on_duals_do_not_compile_under_dualad_gpu():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    with jax.enable_x64(True):
        for f in (lambda x: np.union1d(x[0], x[1]), lambda x: np.unique_values(x),
                  lambda x: np.trim_zeros(x[0]), lambda x: np.extract(x > 0, x),
                  lambda x: np.choose((x > 0).astype(int), [x, 2 * x])):
            with pytest.raises(TypeError, match="dualad_gpu"):
                dualad_gpu.jacfwd(f)(X)


@pytest.mark.parametrize("spec", [s for s in ROWS if s.name in VALUE_SHAPED], ids=lambda s: s.id)
def test_value_shaped_rows_are_refused_under_dualad_gpu(spec):
    jax = pytest.importorskip("jax")
    import dualad_gpu

    args = spec.draw(np.random.default_rng(0), spec.shapes[0])
    with jax.enable_x64(True), pytest.raises(TypeError, match="dualad_gpu"):
        dualad_gpu.jacrev(spec.fun, argnums=tuple(range(len(args))))(*args)


def test_histograms_compile_under_dualad_gpu_with_numpy_s_numbers():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    sample, w = RNG.uniform(-1.0, 1.0, (12, 2)), RNG.uniform(0.5, 1.5, 12)
    sample[3, 0] = sample[:, 0].max() + 0.25  # exactly on the last edge: the last bin

    def f(s, w):
        counts, edges = np.histogramdd(s, (3, 2), weights=w, density=True)
        plain, xe, _ = np.histogram2d(s[:, 0], s[:, 1], [2, np.array([-1.0, 0.0, 1.0])],
                                       range=[(-1.0, 1.5), None])
        return counts, edges, plain * xe[1:, None], np.histogram_bin_edges(s[:, 1], 4)

    with jax.enable_x64(True):
        values = dualad_gpu.jvp(f, (sample, w), (np.ones_like(sample), np.ones_like(w)))
        expected = dualad.jvp(f, (sample, w), (np.ones_like(sample), np.ones_like(w)))
        for a, b in zip(jax.tree_util.tree_leaves(values), jax.tree_util.tree_leaves(expected)):
            assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-12)
        g = lambda s: np.sum(np.histogramdd(s, 3, density=True)[0] ** 2)
        assert_allclose(dualad_gpu.hessian(g)(sample), dualad.hessian(g)(sample), rtol=1e-10,
                        atol=1e-10)


# ---------------------------------------------------------------------------
# NumPy 2 functions, dtypes, apply_along_axis
# ---------------------------------------------------------------------------


def test_astype_keeps_float_dtypes_and_gives_values_for_integers():
    x = seeded(X)
    y = np.astype(x, np.float32)
    assert y.dtype == np.float32 and y.tangent.dtype == np.float32
    assert_array_equal(y.primal, X.astype(np.float32))
    for dtype in (np.int64, bool, "int32"):
        z = np.astype(x, dtype)
        assert not isinstance(z, Dual)
        assert_array_equal(z, X.astype(dtype))
    z = np.astype(x, np.complex128)
    assert z.dtype == np.complex128 and z.tangent.dtype == np.complex128


def test_float32_stays_float32():
    x = X.astype(np.float32)
    for f in (lambda x: np.cumulative_sum(x, axis=1, include_initial=True),
              lambda x: np.block([[x], [x]]), lambda x: np.choose([0, 1, 0, 1], [x, 2 * x]),
              lambda x: np.apply_along_axis(np.sum, 1, x), lambda x: np.diagflat(x[0])):
        value, tangent = dualad.jvp(f, (x,), (np.ones_like(x),))
        assert value.dtype == np.float32 and tangent.dtype == np.float32
        assert_array_equal(value, f(x))


def test_cumulative_functions_need_an_axis_beyond_one_dimension():
    with pytest.raises(ValueError, match="axis"):
        np.cumulative_sum(seeded(X))
    assert_array_equal(primal_value(np.cumulative_prod(seeded(X[0]), include_initial=True)),
                       np.cumulative_prod(X[0], include_initial=True))


def test_apply_along_axis_matches_numpy_layout_and_derivatives():
    def f(x):
        return np.apply_along_axis(lambda r: np.stack([r * r[0], np.ones_like(r)]), 1, x)

    assert_array_equal(primal_value(f(seeded(X))), f(X))
    jac = dualad.jacfwd(f)(X)
    assert jac.shape == f(X).shape + X.shape
    assert_allclose(dualad.jacrev(f)(X), jac)
    assert_array_equal(jac[:, 1], 0.0)  # the constant rows
    with pytest.raises(ValueError, match="iteration dimensions"):
        np.apply_along_axis(np.sum, 0, seeded(np.zeros((2, 0))))


def test_trim_zeros_and_extract_follow_the_values():
    x = np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0])
    got = np.trim_zeros(seeded(x))
    assert_array_equal(got.primal, np.trim_zeros(x))
    assert_array_equal(got.tangent[0], [3.0, 4.0, 5.0])
    assert_array_equal(primal_value(np.trim_zeros(seeded(x), "f")), np.trim_zeros(x, "f"))
    jac = dualad.jacrev(lambda x: np.extract(x > 0, x))(X)
    assert_array_equal(jac, dualad.jacfwd(lambda x: np.extract(x > 0, x))(X))
    assert jac.shape == (int(np.sum(X > 0)),) + X.shape


def test_block_choose_and_resize_values_are_numpy_s():
    a, b = seeded(X[:2, :2]), X[:2, 2:]
    assert_array_equal(primal_value(np.block([[a, b], [b, 1.0 + a]])),
                       np.block([[X[:2, :2], b], [b, 1.0 + X[:2, :2]]]))
    assert_array_equal(primal_value(np.choose([[2, 0], [1, 3]], [a, b, 3.0, a], mode="clip")),
                       np.choose([[2, 0], [1, 3]], [X[:2, :2], b, 3.0, X[:2, :2]],
                                 mode="clip"))
    assert_array_equal(primal_value(np.resize(seeded(X), (5, 5))), np.resize(X, (5, 5)))
    assert_array_equal(np.resize(seeded(np.zeros(0)), 3), np.resize(np.zeros(0), 3))
