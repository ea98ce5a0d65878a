"""Differences, interpolation, polynomials and array building (specs_arrays.py):
every row under dualad_gpu, np.r_/np.c_ on Duals, and the calls refused with a reason."""

import re
import warnings

import numpy as np
import optree
import pytest
import specs  # noqa: F401  (first: it imports specs_arrays)
from numpy.testing import assert_allclose, assert_array_equal
from specs_arrays import ROWS, XP

import dualad
from dualad.rules.calculus import CROSS_OF_2_VECTORS

jax = pytest.importorskip("jax")
import dualad_gpu


def draw(spec, shapes, seed=3):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        args = spec.draw(rng, shapes)
        if spec.avoid is None or not spec.avoid(*args):
            return args
    pytest.fail(f"{spec.id}: no point away from kinks")


def _dtype(value):
    return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype


def close(ours, expected):
    ours, expected = optree.tree_leaves(ours), optree.tree_leaves(expected)
    assert len(ours) == len(expected)
    for a, b in zip(ours, expected):
        assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def total(*args, spec):
    """A weighted sum of every floating output of the row."""
    leaves = [leaf for leaf in optree.tree_leaves(spec.fun(*args))
              if _dtype(dualad.primal_value(leaf)).kind == "f"]
    return sum(np.sum(leaf * np.cos(np.arange(np.size(leaf)).reshape(np.shape(leaf))))
               for leaf in leaves)


# ---------------------------------------------------------------------------
# dualad_gpu: the same rules compiled with jax.jit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [s for s in ROWS if s.gpu], ids=lambda s: s.id)
def test_every_row_compiles_with_dualad_gpu(spec):
    args = draw(spec, spec.shapes[-1])
    every = tuple(range(len(args)))
    f = lambda *a: total(*a, spec=spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # reverse mode runs every row's JVP rules and their transposes
        close(dualad_gpu.jacrev(f, argnums=every)(*args), dualad.jacfwd(f, argnums=every)(*args))


@pytest.mark.parametrize("name", ["interp", "polyfit", "gradient", "linspace"])
def test_second_derivatives_compile_with_dualad_gpu(name):
    spec = next(s for s in ROWS if s.name == name)
    args = draw(spec, spec.shapes[0])
    every = tuple(range(len(args)))
    f = lambda *a: total(*a, spec=spec)
    close(dualad_gpu.hessian(f, argnums=every)(*args), dualad.hessian(f, argnums=every)(*args))


# ---------------------------------------------------------------------------
# np.r_ and np.c_
# ---------------------------------------------------------------------------


def test_r_of_duals_equals_numpy_and_keeps_the_derivative():
    x, y = np.array([1.0, 2.0]), np.array([3.0])

    def f(x, y):
        return np.r_[x, 0.0, y, 1:3]

    assert_array_equal(dualad.jvp(f, (x, y), (np.ones(2), np.ones(1)))[0], f(x, y))
    jac_x, jac_y = dualad.jacfwd(f, argnums=(0, 1))(x, y)
    assert_array_equal(jac_x, np.eye(6, 2))
    assert_array_equal(jac_y, np.eye(6, 1, k=-3))
    assert_array_equal(dualad.grad(lambda x: np.sum(np.c_[x, 2.0 * x] ** 2))(x), 10.0 * x)


def test_r_keeps_numpy_dtype_rules():
    x = np.array([1.0, 2.0], np.float32)
    out = dualad.jvp(lambda x: np.r_[x, 0.5], (x,), (np.ones(2, np.float32),))
    assert out[0].dtype == np.float32 and out[1].dtype == np.float32


def test_r_without_duals_and_ma_mr_are_numpy_s():
    assert_array_equal(np.r_[np.array([1, 2]), 3, 4:6], [1, 2, 3, 4, 5])
    assert_array_equal(np.c_[np.array([1, 2]), np.array([3, 4])], [[1, 3], [2, 4]])
    assert isinstance(np.ma.mr_[np.ma.array([1, 2]), 3], np.ma.MaskedArray)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_r_matrix_directive_is_refused():
    with pytest.raises(TypeError, match="np.matrix"):
        dualad.jacfwd(lambda x: np.r_["r", x, x])(np.ones(2))


# ---------------------------------------------------------------------------
# Values, conventions and refusals
# ---------------------------------------------------------------------------


def test_interp_values_equal_numpy_at_sample_points_and_slopes_follow_jax():
    fp = np.array([0.0, 1.0, 3.0, 2.0, 2.5, 4.0])
    x = XP.copy()
    assert_array_equal(dualad.jvp(lambda x: np.interp(x, XP, fp), (x,), (np.ones(6),))[0],
                       np.interp(x, XP, fp))
    ours = dualad.jacfwd(lambda x: np.interp(x, XP, fp))(x)
    with jax.enable_x64(True):
        theirs = jax.jacfwd(lambda x: jax.numpy.interp(x, jax.numpy.asarray(XP), fp))(x)
    assert_allclose(ours, np.asarray(theirs), rtol=1e-12)


def test_polyfit_values_equal_numpy():
    x, y = np.linspace(0.0, 2.0, 9), np.cos(np.arange(9.0))
    out = dualad.jvp(lambda x, y: np.polyfit(x, y, 3), (x, y), (np.ones(9), np.ones(9)))[0]
    assert_array_equal(out, np.polyfit(x, y, 3))


def test_polyfit_full_is_refused():
    with pytest.raises(TypeError, match="full=True"):
        dualad.jacfwd(lambda y: np.polyfit(np.arange(4.0), y, 1, full=True)[0])(np.ones(4))


def test_insert_into_an_integer_array_is_refused():
    with pytest.raises(TypeError, match="dtype of arr"):
        dualad.jacfwd(lambda v: np.insert(np.arange(3), 1, v))(np.ones(1))


def test_interp_with_a_differentiated_period_is_refused():
    with pytest.raises(TypeError, match="period"):
        dualad.jacfwd(lambda p: np.interp(p * np.ones(2), XP, XP, period=p))(np.array(2.0))


def test_cross_of_2_vectors_and_row_stack_as_numpy():
    """Deprecated in NumPy 2.0 (a warning), removed in 2.5 (an error), in both."""
    a = np.ones((2, 2))
    if CROSS_OF_2_VECTORS:
        with pytest.warns(DeprecationWarning):
            dualad.jacfwd(lambda a: np.cross(a, a))(a)
    else:
        with pytest.raises(ValueError) as numpy_error:
            np.cross(a, a)
        with pytest.raises(ValueError, match=re.escape(str(numpy_error.value))):
            dualad.jacfwd(lambda a: np.cross(a, a))(a)
    if hasattr(np, "row_stack"):
        with pytest.warns(DeprecationWarning, match="row_stack"):
            dualad.jacfwd(lambda a: np.row_stack([a, a]))(a)


def test_linspace_integer_dtype_has_no_derivative():
    out = dualad.jacfwd(lambda b: np.linspace(0.0, b, 4, dtype=int).astype(float))(
        np.array(9.0))
    assert_array_equal(out, np.zeros(4))
