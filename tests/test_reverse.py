"""Reverse mode: vjp, grad, value_and_grad, jacrev, mixed modes, the where trap."""

import gc
import threading
import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad import derivative, grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp


def test_value_and_grad():
    value, g = value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    assert value == 5.0
    assert_allclose(g, [2.0, 4.0])
    (value, aux), g = value_and_grad(lambda x: (x ** 3, "aux"), has_aux=True)(2.0)
    assert (value, aux, g) == (8.0, "aux", 12.0)


def test_grad_has_aux_and_argnums():
    g, aux = grad(lambda x, y: (x * y, y), argnums=1, has_aux=True)(3.0, 4.0)
    assert (g, aux) == (3.0, 4.0)
    assert not isinstance(aux, dualad.Dual)


AUX_TRANSFORMS = {
    "jvp": lambda f, x: dualad.jvp(f, (x,), (np.ones_like(x),), has_aux=True)[2],
    "jacfwd": lambda f, x: jacfwd(f, has_aux=True, chunk_size=1)(x)[1],
    "vjp": lambda f, x: vjp(f, x, has_aux=True)[2],
    "grad": lambda f, x: grad(f, has_aux=True)(x)[1],
    "value_and_grad": lambda f, x: value_and_grad(f, has_aux=True)(x)[0][1],
    "jacrev": lambda f, x: jacrev(f, has_aux=True)(x)[1],
}


@pytest.mark.parametrize("name", sorted(AUX_TRANSFORMS))
def test_aux_comes_back_as_plain_values(name):
    def f(x):
        return np.sum(x ** 2), {"total": np.sum(x), "scaled": 2.0 * x}

    aux = AUX_TRANSFORMS[name](f, np.array([1.0, 2.0]))
    assert type(aux["total"]) is not dualad.Dual and type(aux["scaled"]) is np.ndarray
    assert_allclose(aux["total"], 3.0)
    assert_allclose(aux["scaled"], [2.0, 4.0])


def test_aux_keeps_the_perturbation_of_an_outer_transform():
    def outer(y):
        _, aux = grad(lambda x: (np.sum(x * y), y * x), has_aux=True)(np.array([1.0, 2.0]))
        return np.sum(aux)  # d/dy Σ y·x = Σ x

    assert_allclose(dualad.derivative(outer)(3.0), 3.0)


def test_grad_needs_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        grad(lambda x: x * 2.0)(np.ones(3))


def test_grad_of_a_one_element_output_as_autograd():
    f = lambda x: np.sum(np.sin(x), axis=1, keepdims=True)  # noqa: E731  shape (1, 1)
    x = np.array([[0.1, 0.2, 0.3]])
    value, gradient = dualad.value_and_grad(f)(x)
    assert value.shape == (1, 1)
    assert_allclose(gradient, np.cos(x), rtol=1e-15)


def test_grad_of_constant_is_zero():
    assert_allclose(grad(lambda x: 3.0)(np.ones(2)), np.zeros(2))


def test_vjp_pytrees():
    def f(p):
        return {"y": p["w"] * p["x"], "s": np.sum(p["w"])}

    p = {"w": np.array([1.0, 2.0]), "x": np.array([3.0, 4.0])}
    out, pullback = vjp(f, p)
    assert_allclose(out["y"], [3.0, 8.0])
    (ct,) = pullback({"y": np.array([1.0, 1.0]), "s": 1.0})
    assert_allclose(ct["w"], [4.0, 5.0])
    assert_allclose(ct["x"], [1.0, 2.0])


def test_vjp_checks_the_cotangent():
    _, pullback = vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        pullback(np.ones(2))
    with pytest.raises(ValueError, match="structure"):
        pullback((np.ones(3),))


def test_vjp_has_aux_and_reuse():
    out, pullback, aux = vjp(lambda x: (np.sin(x), 7), np.array([0.0, 1.0]), has_aux=True)
    assert aux == 7
    assert_allclose(pullback(np.ones(2))[0], np.cos([0.0, 1.0]))
    assert_allclose(pullback(2 * np.ones(2))[0], 2 * np.cos([0.0, 1.0]))  # the tape is reusable


# -- jacrev ---------------------------------------------------------------------


FUNCTIONS = {
    "elementwise": lambda x: np.sin(x) * np.exp(-x ** 2) + np.log1p(x ** 2),
    "matvec": lambda x: np.tanh(np.arange(12.0).reshape(3, 4) / 10 @ x) + x[:3] ** 3,
    "solve": lambda x: np.linalg.solve(np.eye(4) * 3 + np.outer(x, x), x),
    "indexing": lambda x: x[[0, 0, 3]] * x[1:].sum() + np.cumsum(x)[::2].repeat(2)[:3],
    "reductions": lambda x: np.stack([np.max(x), np.prod(x), np.std(x), np.linalg.norm(x)]),
    "einsum": lambda x: np.einsum("i,j->ij", x, x).ravel()[:5] + np.einsum("ii", np.outer(x, x)),
    "sort_where": lambda x: np.where(x > 0.1, np.sort(x), np.sqrt(np.abs(x))),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("chunk_size", [None, 1, 2])
def test_jacrev_equals_jacfwd(name, chunk_size):
    x = np.array([0.3, -0.7, 1.2, 0.5])
    f = FUNCTIONS[name]
    assert_allclose(jacrev(f, chunk_size=chunk_size)(x), jacfwd(f)(x), rtol=1e-12, atol=1e-14)


def test_jacrev_runs_the_function_once():
    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x)

    jacrev(f, chunk_size=2)(np.ones(5))
    assert len(calls) == 1


def test_jacrev_layout_and_pytrees_like_jax():
    x = np.arange(6.0).reshape(2, 3)
    assert jacrev(lambda x: x.sum(axis=0))(x).shape == (3, 2, 3)
    jac = jacrev(lambda p: {"a": p["u"] * 2.0, "b": np.sum(p["v"])})(
        {"u": np.ones(2), "v": np.ones(3)})
    assert_allclose(jac["a"]["u"], 2 * np.eye(2))
    assert_allclose(jac["a"]["v"], np.zeros((2, 3)))
    assert_allclose(jac["b"]["v"], np.ones(3))
    jx, jy = jacrev(lambda x, y: x * y, argnums=(0, 1))(np.array([1.0, 2.0]), 3.0)
    assert_allclose(jx, 3 * np.eye(2))
    assert_allclose(jy, [1.0, 2.0])


def test_reverse_keeps_float32():
    x = np.ones(3, np.float32)
    assert grad(lambda x: np.sum(np.exp(x) * 2.0))(x).dtype == np.float32
    assert jacrev(lambda x: np.sin(x) @ x)(x).dtype == np.float32


# -- broadcasting -----------------------------------------------------------------


BROADCASTING = [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3)),
                ((4, 1, 3), (2, 1))]
MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((4, 2, 3), (3, 5)), ((3,), (4, 3, 5)),
          ((4, 2, 3), (3,)), ((1, 2, 3), (4, 3, 2)), ((2, 3), (4, 3, 2))]
CASES = ([(np.multiply, *s) for s in BROADCASTING] + [(np.hypot, *s) for s in BROADCASTING]
         + [(np.add, *s) for s in BROADCASTING] + [(np.matmul, *s) for s in MATMUL])


@pytest.mark.parametrize("op, x_shape, y_shape", CASES)
def test_cotangents_are_summed_back_to_each_input(op, x_shape, y_shape):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=x_shape), rng.normal(size=y_shape)

    def f(x, y):
        return np.sum(np.sin(op(x, y)))

    gx, gy = grad(f, argnums=(0, 1))(x, y)
    fx, fy = jacfwd(f, argnums=(0, 1))(x, y)
    assert gx.shape == x_shape and gy.shape == y_shape
    assert_allclose(gx, fx, rtol=1e-12, atol=1e-14)
    assert_allclose(gy, fy, rtol=1e-12, atol=1e-14)


# -- mixed modes and nesting ----------------------------------------------------------


def test_forward_over_reverse_and_reverse_over_forward():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 4))
    x, v = rng.normal(size=4), rng.normal(size=4)

    def f(x):
        return np.sum(np.tanh(A @ x)) + 0.5 * x @ x

    H = hessian(f, mode="hyperdual")(x)
    assert_allclose(jvp(grad(f), (x,), (v,))[1], H @ v, rtol=1e-12)
    assert_allclose(grad(lambda x: jvp(f, (x,), (v,))[1])(x), H @ v, rtol=1e-12)
    assert_allclose(jacfwd(grad(f))(x), H, rtol=1e-12)
    assert_allclose(jacrev(jacfwd(f))(x), H, rtol=1e-12)
    assert_allclose(jacrev(grad(f))(x), H, rtol=1e-12)  # reverse over reverse


def test_perturbation_confusion_in_reverse_mode():
    # d/dx [x · d/dy (x + y)] = 1 and d/dx [x · d/dy (x·y)] = 2x, in every mode pairing
    assert grad(lambda x: x * grad(lambda y: x + y)(1.0))(3.0) == 1.0
    assert grad(lambda x: x * derivative(lambda y: x * y)(2.0))(3.0) == 6.0
    assert derivative(lambda x: x * grad(lambda y: x * y)(2.0))(3.0) == 6.0


# -- conventions at singular points (docs/conventions.md) --------------------------------

SINGULAR_POINTS = {
    "abs at 0": (lambda x: np.sum(np.abs(x)), np.zeros(2)),
    "maximum at a tie": (lambda x: np.maximum(x[0], x[1]), np.ones(2)),
    "max at a tie": (np.max, np.ones(3)),
    "clip at its bounds": (lambda x: np.sum(np.clip(x, 0.0, 1.0)), np.array([0.0, 1.0])),
    "hypot at (0, 0)": (lambda x: np.hypot(x[0], x[1]), np.zeros(2)),
    "vector norm at 0": (np.linalg.norm, np.zeros(3)),
    "norm ord=2 along an axis at 0": (lambda x: np.sum(np.linalg.norm(x, 2, axis=1)),
                                      np.zeros((2, 3))),
    "frobenius norm at 0": (lambda x: np.linalg.norm(x, "fro"), np.zeros((2, 2))),
}


@pytest.mark.parametrize("name", sorted(SINGULAR_POINTS))
def test_reverse_mode_follows_the_conventions_at_singular_points(name):
    f, x = SINGULAR_POINTS[name]
    forward = jacfwd(f)(x)
    assert np.all(np.isfinite(forward))
    assert_allclose(grad(f)(x), forward)


# -- the where trap ------------------------------------------------------------------


def test_where_trap_with_sqrt_is_zero_in_both_modes():
    def f(x):
        return np.where(x > 0, np.sqrt(x), 0.0)

    assert derivative(f)(0.0) == 0.0
    assert grad(f)(0.0) == 0.0  # sqrt's infinite slope meets a zero cotangent: 0


def test_where_trap_nan_safe_option():
    def f(x):
        return np.sum(np.where(x > 0, np.log(x), 0.0))

    x = np.array([0.0, 2.0])
    assert_allclose(jacfwd(f)(x), [0.0, 0.5])
    assert np.isnan(grad(f)(x)[0])  # like JAX, autograd and PyTorch
    assert_allclose(grad(f, nan_safe=True)(x), [0.0, 0.5])
    _, pullback = vjp(f, x, nan_safe=True)
    assert_allclose(pullback(1.0)[0], [0.0, 0.5])


# -- ownership of the tape --------------------------------------------------------------


def test_threads_get_right_answers():
    rng = np.random.default_rng(5)
    xs = [rng.normal(size=30) for _ in range(8)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(20):
            results[i] = grad(lambda x: np.sum(np.sin(x) * (i + 1)))(xs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(xs):
        assert_allclose(results[i], np.cos(x) * (i + 1))


def test_repeated_grad_calls_do_not_grow_memory():
    f = grad(lambda x: np.sum(np.sin(x) * x ** 2))
    x = np.ones(50)
    for _ in range(200):
        f(x)
    gc.collect()
    tracemalloc.start()
    # (dualad's own allocations: tracemalloc sees every thread's, and a worker of the
    # suite may hold another test's Dask cluster, still allocating in the background)
    ours = [tracemalloc.Filter(True, "*dualad*"), tracemalloc.Filter(True, __file__)]
    before = tracemalloc.take_snapshot().filter_traces(ours)
    for _ in range(10_000):
        f(x)
    gc.collect()
    after = tracemalloc.take_snapshot().filter_traces(ours)
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 64 * 1024


def test_a_nonlinear_tangent_rule_is_refused():
    rogue = dualad.Primitive("rogue", np.sin, jvp=lambda p, t, ans: t[0] * t[0])
    with pytest.raises(TypeError, match="not linear"):
        grad(lambda x: np.sum(rogue(x)))(np.ones(2))


def test_linearize_with_pytrees_aux_and_many_tangents():
    def f(p):
        return {"y": np.sin(p["a"]) * p["b"][0], "n": np.arange(2)}, np.sum(p["a"])

    p = {"a": np.array([0.5, 1.5]), "b": np.array([2.0, 3.0])}
    out, f_jvp, aux = dualad.linearize(f, p, has_aux=True)
    assert aux == pytest.approx(2.0) and set(out) == {"y", "n"}
    for k in range(3):
        t = {"a": np.array([1.0, -k]), "b": np.array([k, 0.5])}
        expected = dualad.jvp(f, (p,), (t,), has_aux=True)[1]
        got = f_jvp(t)
        np.testing.assert_allclose(got["y"], expected["y"], rtol=1e-14)
        np.testing.assert_array_equal(got["n"], np.zeros(2))  # an integer output: zero
    with pytest.raises(ValueError, match="structure of the primals"):
        f_jvp(np.ones(2))
    with pytest.raises(ValueError, match="does not match"):
        f_jvp({"a": np.ones(3), "b": np.ones(2)})


def test_linearize_does_not_evaluate_the_function_again():
    calls = []

    def f(x):
        calls.append(1)
        return np.exp(x) * x

    _, f_jvp = dualad.linearize(f, np.array([0.5, 2.0]))
    for v in np.eye(2):
        x = np.array([0.5, 2.0])
        np.testing.assert_allclose(f_jvp(v), np.exp(x) * (1 + x) * v, rtol=1e-14)
    assert len(calls) == 1
    assert type(dualad.linearize(np.sin, 1.0)[1](2.0)) is np.ndarray  # array(…), as JAX
