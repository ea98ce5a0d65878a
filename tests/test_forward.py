"""The forward transforms: jvp, jacfwd, derivative — values, pytrees, chunks, nesting."""

import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad
from dualad import Dual, derivative, jacfwd, jvp
from dualad.__main__ import textbook  # ln(x1) + x1·x2 − sin(x2)


# -- the worked example -----------------------------------------------------


def test_textbook_value_and_gradient():
    y, dy1 = jvp(textbook, (2.0, 5.0), (1.0, 0.0))
    _, dy2 = jvp(textbook, (2.0, 5.0), (0.0, 1.0))
    assert y == 11.652071455223084
    assert dy1 == 5.5
    assert dy2 == 1.7163378145367738


@pytest.mark.parametrize("transform", [jacfwd, dualad.grad], ids=["jacfwd", "grad"])
def test_textbook_gradient_in_one_pass(transform):
    calls = []

    def counted(x1, x2):
        calls.append(1)
        return textbook(x1, x2)

    g1, g2 = transform(counted, argnums=(0, 1))(2.0, 5.0)
    assert (float(g1), float(g2)) == (5.5, 1.7163378145367738)
    assert len(calls) == 1


# -- jvp ----------------------------------------------------------------------


def test_jvp_batched_equals_single_jvps():
    rng = np.random.default_rng(0)
    x = rng.normal(size=5)
    seeds = rng.normal(size=(3, 5))

    def f(x):
        return np.tanh(x) * np.sum(x ** 3)

    y, ts = jvp(f, (x,), (seeds,), batched=True)
    assert ts.shape == (3, 5)
    for k in range(3):
        assert_allclose(ts[k], jvp(f, (x,), (seeds[k],))[1], rtol=1e-13)
    assert_allclose(y, f(x))


def test_jvp_pytrees_in_and_out():
    def f(params, x):
        y = params["w"] * x + params["b"]
        return {"y": y, "stats": (np.sum(y), np.max(y))}

    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    tangents = {"w": np.array([1.0, 0.0]), "b": 0.0}
    out, t = jvp(f, (params, np.array([3.0, 4.0])), (tangents, np.zeros(2)))
    assert_allclose(out["y"], [3.5, 8.5])
    assert_allclose(t["y"], [3.0, 0.0])
    assert_allclose(t["stats"][0], 3.0)
    assert_allclose(t["stats"][1], 0.0)


def test_jvp_has_aux():
    y, t, aux = jvp(lambda x: (x ** 2, "note"), (3.0,), (1.0,), has_aux=True)
    assert (y, t, aux) == (9.0, 6.0, "note")


def test_jvp_of_constant_output_is_zero():
    y, t = jvp(lambda x: np.ones(3), (np.array([1.0]),), (np.array([1.0]),))
    assert_array_equal(t, np.zeros(3))


def test_jvp_structure_mismatch():
    with pytest.raises(ValueError, match="same structure"):
        jvp(lambda a, b: a + b, (1.0, 2.0), (1.0,))


def test_tangent_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        jvp(np.sin, (np.zeros(2),), (np.zeros(3),))
    with pytest.raises(ValueError, match=r"\(2, 2\).*\(3,\)"):
        Dual(np.zeros(3), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="seed"):
        jvp(np.sin, (np.zeros(2),), (np.zeros((4, 3)),), batched=True)


def test_jvp_needs_tuples():
    with pytest.raises(TypeError, match="tuples or lists"):
        jvp(np.sin, np.zeros(2), np.zeros(2))


# -- jacfwd ---------------------------------------------------------------------


def test_jacfwd_shapes_follow_jax():
    x = np.arange(6.0).reshape(2, 3)
    assert jacfwd(lambda x: x * 2.0)(x).shape == (2, 3, 2, 3)
    assert jacfwd(np.sum)(x).shape == (2, 3)
    assert jacfwd(lambda x: x.sum(axis=0))(x).shape == (3, 2, 3)
    assert_allclose(jacfwd(lambda x: x * 2.0)(x).reshape(6, 6), 2 * np.eye(6))


def test_jacfwd_matches_analytic_jacobian():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(4, 3))
    x = rng.normal(size=3)
    expected = (1 - np.tanh(W @ x) ** 2)[:, None] * W
    assert_allclose(jacfwd(lambda x: np.tanh(W @ x))(x), expected, rtol=1e-13)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 100, None])
def test_jacfwd_chunks_agree(chunk_size):
    rng = np.random.default_rng(2)
    x = rng.normal(size=7)

    def f(x):
        return np.cumsum(np.sin(x) * x[::-1])

    full = jacfwd(f)(x)
    assert_allclose(jacfwd(f, chunk_size=chunk_size)(x), full, rtol=1e-14)


def test_jacfwd_chunk_bounds_the_seed_count():
    seen = []

    def f(x):
        seen.append(x.seeds)
        return np.sin(x)

    jacfwd(f, chunk_size=4)(np.ones(10))
    assert seen == [4, 4, 2]


def test_jacfwd_automatic_chunk_from_memory_budget(monkeypatch):
    monkeypatch.setattr(dualad.inputs, "DEFAULT_CHUNK_BYTES", 8 * 10 * 3)
    seen = []

    def f(x):
        seen.append(x.seeds)
        return x ** 2

    jac = jacfwd(f)(np.arange(10.0))
    assert seen == [3, 3, 3, 1]
    assert_allclose(jac, np.diag(2 * np.arange(10.0)))


def test_jacfwd_bad_chunk_size():
    with pytest.raises(ValueError, match="chunk_size"):
        jacfwd(np.sin, chunk_size=0)


def test_jacfwd_pytree_argument_and_argnums():
    def f(p, x):
        return p["a"] * np.sum(x) + p["b"][0] * x

    p = {"a": 2.0, "b": [np.array(3.0)]}
    x = np.array([1.0, 2.0])
    jac_p = jacfwd(f)(p, x)
    assert_allclose(jac_p["a"], [3.0, 3.0])
    assert_allclose(jac_p["b"][0], [1.0, 2.0])
    jac_p2, jac_x = jacfwd(f, argnums=(0, 1))(p, x)
    assert_allclose(jac_x, 2.0 + 3.0 * np.eye(2))
    assert_allclose(jac_p2["a"], jac_p["a"])


def test_jacfwd_pytree_output():
    jac = jacfwd(lambda x: {"s": np.sum(x), "v": (x * 2.0,)})(np.ones(2))
    assert_allclose(jac["s"], [1.0, 1.0])
    assert_allclose(jac["v"][0], 2 * np.eye(2))


def test_jacfwd_has_aux():
    jac, aux = jacfwd(lambda x: (x ** 2, x.shape), has_aux=True)(np.array([1.0, 2.0]))
    assert_allclose(jac, np.diag([2.0, 4.0]))
    assert aux == (2,)


def test_jacobian_is_jacfwd():
    assert dualad.jacobian is jacfwd


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        jacfwd(np.sin, argnums=2)(1.0)


# -- derivative ---------------------------------------------------------------


def test_derivative():
    assert derivative(np.sin)(0.0) == 1.0
    assert_allclose(derivative(lambda t: np.stack([t, t ** 3]))(2.0), [1.0, 12.0])


def test_derivative_needs_a_scalar():
    with pytest.raises(ValueError, match="one scalar"):
        derivative(np.sin)(np.ones(2))


# -- nesting and perturbation confusion ----------------------------------------


def test_perturbation_confusion_classic():
    # d/dx [x · d/dy (x + y)] = 1, not 2
    def inner(x):
        return x * derivative(lambda y: x + y)(1.0)

    assert derivative(inner)(1.0) == 1.0


def test_perturbation_confusion_product():
    # d/dx [x · d/dy (x·y)]|y=2 = 2x
    def inner(x):
        return x * derivative(lambda y: x * y)(2.0)

    assert derivative(inner)(3.0) == 6.0


def test_jacfwd_of_jacfwd_is_the_hessian():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 4))
    A = A + A.T
    x = rng.normal(size=4)

    def f(x):
        return 0.5 * x @ A @ x + np.sum(np.sin(x))

    H = jacfwd(jacfwd(f))(x)
    assert_allclose(H, A - np.diag(np.sin(x)), rtol=1e-12, atol=1e-14)


def test_third_derivative():
    d3 = derivative(derivative(derivative(np.exp)))
    assert_allclose(d3(0.7), np.exp(0.7), rtol=1e-15)
    assert_allclose(derivative(derivative(derivative(np.sin)))(0.3), -np.cos(0.3))


def test_nested_jvp_inside_jacfwd_mixing_tags():
    def f(x):
        # an inner jvp whose tangent direction depends on the outer variable
        return jvp(lambda y: np.sin(x * y), (x,), (x,))[1]

    x = np.array([0.5, 1.5])
    # t = cos(x²)·x², so dt/dx = -sin(x²)·2x·x² + cos(x²)·2x
    expected = np.diag(-np.sin(x ** 2) * 2 * x ** 3 + np.cos(x ** 2) * 2 * x)
    assert_allclose(jacfwd(f)(x), expected, rtol=1e-13)


def test_closure_over_outer_dual_is_constant_for_inner():
    def outer(a):
        return jacfwd(lambda b: a * b ** 2)(np.array([1.0, 2.0]))

    # d/da of diag(2ab) = diag(2b)
    assert_allclose(jacfwd(outer)(3.0), np.diag([2.0, 4.0]))


# A transform run in chunks inside another: the chunks' tangents are the outer
# transform's Duals, joined with the rule table (not into a float array). Every inner
# transform, chunked by 1 and 2 (below n = 3), in every outer one, against unchunked.

def nested_vector(x):
    return np.sin(x) ** 2 * np.cumsum(x) + x[0] * x[-1]


def nested_scalar(x):
    return np.sum(np.sin(x) * np.cumprod(x)) + x[0] ** 2 * x[1]


NESTED_X = np.array([0.3, 0.7, 1.1])
CHUNKED_INNER = {
    "jacfwd": lambda c: dualad.jacfwd(nested_vector, chunk_size=c),
    "jacrev": lambda c: dualad.jacrev(nested_vector, chunk_size=c),
    "hessian": lambda c: dualad.hessian(nested_scalar, chunk_size=c),
    "hessian fwd-rev": lambda c: dualad.hessian(nested_scalar, chunk_size=c, mode="fwd-rev"),
}
OUTER = {
    "jacfwd": lambda h: dualad.jacfwd(h)(NESTED_X),
    "jacfwd chunked": lambda h: dualad.jacfwd(h, chunk_size=2)(NESTED_X),
    "jacrev": lambda h: dualad.jacrev(h)(NESTED_X),
    "jacrev chunked": lambda h: dualad.jacrev(h, chunk_size=1)(NESTED_X),
    "hessian": lambda h: dualad.hessian(lambda x: np.sum(h(x) ** 2))(NESTED_X),
    "jvp": lambda h: jvp(h, (NESTED_X,), (np.array([1.0, -2.0, 0.5]),))[1],
    "vjp": lambda h: pulled_back(*dualad.vjp(h, NESTED_X)),
}


def pulled_back(out, pull):
    return pull(np.cos(out))[0]


@pytest.mark.parametrize("chunk_size", [1, 2])
@pytest.mark.parametrize("inner", list(CHUNKED_INNER))
@pytest.mark.parametrize("outer", list(OUTER))
def test_a_chunked_transform_nested_in_another(outer, inner, chunk_size):
    expected = OUTER[outer](CHUNKED_INNER[inner](None))
    assert_allclose(OUTER[outer](CHUNKED_INNER[inner](chunk_size)), expected, rtol=1e-12,
                    atol=1e-14)


@pytest.mark.parametrize("chunk_size", [1, 2])
def test_chunks_of_an_inner_jacobian_some_constant_some_not(chunk_size):
    # Column 0 of the inner Jacobian is p (the outer Dual), the others are numbers: a
    # chunk's tangent is a Dual in some chunks, a float array in others.
    x = np.array([1.0, 2.0, 3.0])
    weights = np.array([1.0, 2.0, 3.0])

    def g(p):
        def inner(x):
            return p * x[0] + x[1] + x[2] ** 2

        return p * np.sum(dualad.jacfwd(inner, chunk_size=chunk_size)(x) * weights)

    assert_allclose(dualad.grad(g)(0.5), 2 * 0.5 + 2.0 + 2 * 3.0 * 3.0)
    assert_allclose(dualad.hessian(g)(0.5), 2.0)
    def rows(p):
        return dualad.jacrev(lambda x: np.stack([x[0], p * x[1], x[2]]),
                             chunk_size=chunk_size)(x)

    assert_allclose(dualad.jacfwd(rows)(0.5), np.diag([0.0, 1.0, 0.0]))


# -- dtypes -------------------------------------------------------------------


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    y, t = jvp(lambda x: np.exp(np.sin(x) * 2.0) / 3.0 + x ** 2, (x,), (np.ones(2, np.float32),))
    assert y.dtype == np.float32 and t.dtype == np.float32
    assert jacfwd(lambda x: np.tanh(x) @ x)(x).dtype == np.float32


def test_ints_and_bools_promote_to_float64():
    y, t = jvp(lambda x: x * 2, (np.array([1, 2]),), (np.array([1, 0]),))
    assert t.dtype == np.float64
    assert_allclose(t, [2.0, 0.0])
    assert jacfwd(lambda x: x * 1.5)(np.array([True])).dtype == np.float64


def test_complex_input_needs_holomorphic_in_jacfwd():
    with pytest.raises(TypeError, match="real-valued inputs.*holomorphic=True"):
        jacfwd(np.sin)(np.array([1 + 1j]))
    assert Dual(np.array([1j]), np.array([1.0])).tangent.dtype == np.complex128


# -- threads ------------------------------------------------------------------


def test_threads_get_right_answers():
    rng = np.random.default_rng(4)
    xs = [rng.normal(size=20) for _ in range(8)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(20):
            results[i] = jacfwd(lambda x: np.sin(x) * (i + 1), chunk_size=3)(xs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(xs):
        assert_allclose(results[i], np.diag(np.cos(x) * (i + 1)))


_CHUNKED_PEAK = """
import sys, tracemalloc
import numpy as np
import dualad
transform = getattr(dualad, sys.argv[1])
n = 256
W = np.random.default_rng(0).normal(size=(n, n)) / np.sqrt(n)
f = lambda x: np.tanh(W @ x) + x ** 3
x = np.linspace(-1.0, 1.0, n)
transform(np.sin, chunk_size=2, progress=False)(x[:4])  # (modules imported before)
tracemalloc.start()
jac = transform(f, chunk_size=8, progress=False)(x)  # (no bar's memory counted)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
expected = np.diag(1 - np.tanh(W @ x) ** 2) @ W + np.diag(3 * x ** 2)
print(peak / jac.nbytes, np.max(np.abs(jac - expected)))
"""


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_chunks_are_written_into_the_jacobian_not_joined_at_the_end(transform):
    # a fresh interpreter: tracemalloc counts every thread's memory, and a test run's
    # other threads (pools, clusters) would be counted with the Jacobian's
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _CHUNKED_PEAK, transform], capture_output=True,
                         text=True, timeout=120, check=True)
    peak_over_jacobian, error = map(float, run.stdout.split())
    assert peak_over_jacobian < 1.5  # the Jacobian plus one chunk, not twice the Jacobian
    assert error < 1e-12


def test_empty_contractions_in_every_transform():
    f = lambda x: np.tensordot(x, np.ones((0, 2)), 1)  # noqa: E731
    x = np.zeros(0)
    for transform in (dualad.jacfwd, dualad.jacrev):
        assert transform(f)(x).shape == (2, 0)
    assert dualad.grad(lambda x: np.sum(f(x)))(x).shape == (0,)
    assert dualad.hessian(lambda x: np.sum(f(x) ** 2))(x).shape == (0, 0)


def test_stop_gradient_holds_a_value_constant_in_every_mode():
    x = np.array([3.0, 2.0])
    f = lambda x: x * dualad.stop_gradient(x)  # noqa: E731
    for transform in (dualad.jacfwd, dualad.jacrev):
        np.testing.assert_array_equal(transform(f)(x), np.diag(x))
    g = lambda x: np.sum(x ** 2 * dualad.stop_gradient({"a": x})["a"])  # noqa: E731
    np.testing.assert_array_equal(dualad.hessian(g)(x), np.diag(2 * x))
    assert type(dualad.stop_gradient(x)) is np.ndarray
    # a size-1 variance is a constant: std's derivative 0, not 0 · ∞
    assert dualad.grad(lambda x: np.std(x))(np.array([0.3]))[0] == 0.0
