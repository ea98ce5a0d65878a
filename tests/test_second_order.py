"""Hyper-duals and the second-order transforms: hessian, hvp, second_derivative."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import rosen, rosen_hess

import dualad
from dualad import Dual, HyperDual, derivative, hessian, hvp, jacfwd, second_derivative


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# -- the HyperDual type ---------------------------------------------------------


def test_hyperdual_parts_of_a_scalar_function():
    x = HyperDual(0.5, 1.0, 1.0, 0.0)
    y = np.sin(x) * x
    assert_allclose(y.real, np.sin(0.5) * 0.5)
    assert_allclose(y.eps1, [np.cos(0.5) * 0.5 + np.sin(0.5)])
    assert_allclose(y.eps2, y.eps1)
    assert_allclose(y.eps1eps2, [[-np.sin(0.5) * 0.5 + 2 * np.cos(0.5)]])


def test_hyperdual_batched_parts_give_a_hessian_block():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    x0 = rng.normal(size=3)
    x = HyperDual(x0, np.eye(3)[:2], np.eye(3), batched=True)
    y = 0.5 * x @ A @ x
    assert y.eps1.shape == (2,) and y.eps2.shape == (3,) and y.eps1eps2.shape == (2, 3)
    assert_allclose(y.eps1eps2, 0.5 * (A + A.T)[:2], rtol=1e-14)
    assert_allclose(y.eps2, 0.5 * (A + A.T) @ x0, rtol=1e-14)


def test_hyperdual_missing_parts_are_zero():
    x = HyperDual(np.array([1.0, 2.0]), eps1=np.array([1.0, 0.0]))
    assert_array_equal(x.eps2, np.zeros((1, 2)))
    assert_array_equal(x.eps1eps2, np.zeros((1, 1, 2)))
    y = np.exp(x)
    assert_allclose(y.eps1, [[np.e, 0.0]])
    assert_array_equal(y.eps1eps2, np.zeros((1, 1, 2)))


def test_hyperdual_given_eps1eps2_propagates_linearly():
    x = HyperDual(2.0, 0.0, 0.0, 1.0)
    assert_allclose((x * x).eps1eps2, [[4.0]])  # d(x²) = 2x·d


def test_hyperdual_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        HyperDual(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="seed axes"):
        HyperDual(np.zeros(2), np.zeros((2, 2)), np.zeros((3, 2)), np.zeros((3, 3, 2)),
                  batched=True)


def test_hyperdual_is_an_array_like_dual():
    x = HyperDual(np.arange(4.0).reshape(2, 2), np.ones((2, 2)), np.ones((2, 2)))
    assert isinstance(x, Dual) and x.shape == (2, 2) and x.dtype == np.float64
    y = np.linalg.solve(np.eye(2) * 2.0, x.T)[0]
    assert isinstance(y, HyperDual) and y.shape == (2,)
    assert (x > 1).dtype == bool
    with pytest.raises(TypeError, match="drop"):
        np.asarray(x)
    assert "eps1eps2" in repr(x)


def test_hyperdual_float32():
    x = HyperDual(np.float32(0.5), np.float32(1.0), np.float32(1.0))
    y = np.exp(x * 2.0)
    assert y.real.dtype == np.float32 and y.eps1eps2.dtype == np.float32


# -- hessian ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev", "auto"])
@pytest.mark.parametrize("n", [10, 100, 1000])
def test_rosenbrock_hessian_to_machine_precision(n, mode):
    x = np.random.default_rng(n).uniform(-1.5, 1.5, size=n)
    H = hessian(rosenbrock, mode=mode)(x)
    R = rosen_hess(x)
    assert np.max(np.abs(H - R)) / np.max(np.abs(R)) <= 1e-14
    assert_array_equal(H, H.T)
    assert_allclose(rosenbrock(x), rosen(x))


@pytest.mark.parametrize("chunk_size", [1, 3, 4, None])
def test_chunked_hessian_equals_one_pass(chunk_size):
    x = np.random.default_rng(1).uniform(-1, 1, size=7)

    def f(x):
        return np.sum(np.sin(x) * np.cumsum(x) ** 2) + np.prod(1 + 0.1 * x)

    assert_allclose(hessian(f, chunk_size=chunk_size)(x), hessian(f)(x), rtol=1e-13,
                    atol=1e-15)


def test_hessian_exploits_symmetry_when_chunked():
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(x ** 3)

    hessian(f, chunk_size=2)(np.ones(6))
    assert len(calls) == 6  # 3 chunks: the 6 blocks on and above the diagonal, not 9


def test_hessian_automatic_chunk(monkeypatch):
    monkeypatch.setattr(dualad.inputs, "DEFAULT_CHUNK_BYTES", 8 * 6 * 4)  # K = 2
    seen = []

    def f(x):
        seen.append(x.eps1.shape[0])
        return np.sum(np.exp(x))

    x = np.linspace(0, 1, 6)
    assert_allclose(hessian(f)(x), np.diag(np.exp(x)))
    assert max(seen) == 2


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hessian_shapes_and_pytrees_like_jax(mode):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    assert hessian(lambda x: np.sum(x ** 3), mode=mode)(x).shape == (2, 3, 2, 3)
    assert hessian(lambda x: x[0] ** 3, mode=mode)(x).shape == (3, 2, 3, 2, 3)

    def f(p):
        return p["a"] ** 2 * np.sum(p["b"] ** 3)

    p = {"a": 2.0, "b": np.array([1.0, 2.0])}
    H = hessian(f, mode=mode)(p)
    assert_allclose(H["a"]["a"], 2 * 9.0)
    assert_allclose(H["a"]["b"], 2 * 2.0 * 3 * p["b"] ** 2)
    assert_allclose(H["b"]["b"], np.diag(4.0 * 6 * p["b"]))
    Hx, Hy = hessian(lambda x, y: x ** 2 * y, argnums=(0, 1), mode=mode)(3.0, 5.0)
    assert_allclose([Hx[0], Hx[1], Hy[0], Hy[1]], [10.0, 6.0, 6.0, 0.0])


def test_hessian_of_linear_function_is_zero():
    assert_array_equal(hessian(lambda x: np.sum(2.0 * x))(np.ones(3)), np.zeros((3, 3)))


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hessian_float32(mode):
    H = hessian(lambda x: np.sum(np.exp(x) * x), mode=mode)(np.ones(3, np.float32))
    assert H.dtype == np.float32


def test_hessian_mode_is_chosen_by_size():
    seen = []

    def f(x):
        seen.append(type(x))
        return np.sum(x ** 3)

    hessian(f)(np.ones(dualad.second_order.HYPERDUAL_MAX_N))
    hessian(f)(np.ones(dualad.second_order.HYPERDUAL_MAX_N + 1))
    assert issubclass(seen[0], dualad.HyperDual)
    assert dualad.Dual in seen[1:] and not any(issubclass(t, dualad.HyperDual) for t in seen[1:])
    with pytest.raises(ValueError, match="mode"):
        hessian(f, mode="symbolic")


# -- nesting ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_jacfwd_of_hessian_is_the_third_derivative(mode):
    x = np.array([0.3, -0.2])

    def f(x):
        return np.sum(x ** 4) + x[0] * x[1] ** 2

    T = jacfwd(hessian(f, mode=mode))(x)
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0] = 24 * x[0]
    expected[1, 1, 1] = 24 * x[1]
    expected[0, 1, 1] = expected[1, 0, 1] = expected[1, 1, 0] = 2.0
    assert_allclose(T, expected, rtol=1e-14, atol=1e-15)


def test_hessian_of_function_calling_derivative_inside():
    # g(x) = x · d/dy[x y²]|y=1 = 2x², so g'' = 4
    def g(x):
        return x * derivative(lambda y: x * y ** 2)(1.0)

    assert_allclose(hessian(g)(0.7), 4.0)
    assert_allclose(second_derivative(g)(0.7), 4.0)


def test_hessian_of_hessian_entries():
    f = lambda x: np.sum(x ** 5)  # noqa: E731
    H4 = hessian(lambda x: hessian(f)(x)[0, 0])(np.array([1.0, 2.0]))
    assert_allclose(H4, [[120.0, 0.0], [0.0, 0.0]])  # ∂²(20·x0³)/∂x0² at x0 = 1


# -- hvp and second_derivative --------------------------------------------------------


def test_hvp_equals_hessian_times_vector():
    rng = np.random.default_rng(2)
    x, v = rng.normal(size=6), rng.normal(size=6)
    (hv,) = hvp(rosenbrock, (x,), (v,))
    assert_allclose(hv, rosen_hess(x) @ v, rtol=1e-13)
    (hv_hyper,) = hvp(rosenbrock, (x,), (v,), mode="hyperdual")
    assert_allclose(hv_hyper, hv, rtol=1e-13)
    (hv_chunked,) = hvp(rosenbrock, (x,), (v,), mode="hyperdual", chunk_size=4)
    assert_allclose(hv_chunked, hv, rtol=1e-13)


def test_hvp_at_ten_thousand_inputs():
    x = np.random.default_rng(3).uniform(-1, 1, size=10_000)
    v = np.random.default_rng(4).normal(size=10_000)
    from scipy.optimize import rosen_hess_prod
    (hv,) = hvp(rosenbrock, (x,), (v,))
    assert_allclose(hv, rosen_hess_prod(x, v), rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hvp_with_several_arguments(mode):
    def f(a, b):
        return np.sum(a ** 2 * b)

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    ha, hb = hvp(f, (a, b), (np.array([1.0, 0.0]), np.array([0.0, 1.0])), mode=mode)
    assert_allclose(ha, [2 * 3.0, 2 * 2.0])
    assert_allclose(hb, [2 * 1.0, 0.0])


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hvp_needs_a_scalar_function(mode):
    with pytest.raises(ValueError, match="scalar"):
        hvp(lambda x: x ** 2, (np.ones(2),), (np.ones(2),), mode=mode)


def test_second_derivative():
    assert_allclose(second_derivative(np.exp)(0.3), np.exp(0.3))
    assert_allclose(second_derivative(lambda t: np.stack([t ** 3, np.sin(t)]))(2.0),
                    [12.0, -np.sin(2.0)])
    with pytest.raises(ValueError, match="one scalar"):
        second_derivative(np.sin)(np.ones(2))
