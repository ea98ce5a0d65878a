"""Taylor mode (dualad.taylor.jet): every spec row against nested dualad derivatives and,
where JAX's jet has the primitives, against jax.experimental.jet; elementwise functions to
order 8 against mpmath's Taylor coefficients; the transform's conventions."""

import math
import warnings

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose
from specs import SPECS, jet_order

import dualad
from dualad import jet

def _point(spec, rng):
    for _ in range(50):
        args = spec.draw(rng, spec.shapes[0])
        if spec.avoid is None or not spec.avoid(*args):
            break
    return [np.asarray(a, dtype=np.result_type(a, float)) for a in args]


def _along(fun, args, directions, order):
    """The first ``order`` derivatives of t -> fun(args + t·directions) at 0, by nested
    dualad.derivative (2^order evaluations)."""
    def g(t):
        return fun(*[a + d * t for a, d in zip(args, directions)])

    out = []
    for _ in range(order):
        g = dualad.derivative(g, replay=False)
        out.append(g(0.0))
    return out


def _terms(primal_out, series_out):
    """The list of terms of each output leaf."""
    return optree.tree_structure(primal_out).flatten_up_to(series_out)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_every_row_against_nested_derivatives(spec):
    rng = np.random.default_rng(7)
    args = _point(spec, rng)
    directions = [(rng.normal(size=np.shape(a)) * 0.5).astype(a.dtype) for a in args]
    order = jet_order(spec)
    series = tuple([d] + [np.zeros_like(d)] * (order - 1) for d in directions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the rows' own warnings, as in the interpreter)
        out, terms = jet(spec.fun, tuple(args), series)
        want = _along(spec.fun, args, directions, order)
    for k in range(order):
        for got, expected in zip(_terms(out, terms), optree.tree_leaves(want[k])):
            expected = np.asarray(expected)
            scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
            rtol = 1e-4 if spec.adaptive else 1e-7
            assert_allclose(np.asarray(got[k]), expected, rtol=rtol, atol=rtol * 1e-1 * scale,
                            err_msg=f"{spec.id}, order {k + 1}")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_every_row_batched_equals_one_jet_at_a_time(spec):
    """Many jets in one pass (batched=True) give each jet's own terms, bit for bit:
    elementwise primitives on the stacked coefficients, the others jet by jet."""
    rng = np.random.default_rng(11)
    args = _point(spec, rng)
    order, B = min(jet_order(spec), 3), 3
    series = tuple([(rng.normal(size=(B,) + np.shape(a)) * 0.5).astype(a.dtype)
                    for _ in range(order)] for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, terms = jet(spec.fun, tuple(args), series, batched=True)
        for b in range(B):
            one_out, one = jet(spec.fun, tuple(args), tuple([t[b] for t in s] for s in series))
            for got, want in zip(_terms(out, terms), _terms(one_out, one)):
                for k in range(order):
                    assert_allclose(np.asarray(got[k][b]), np.asarray(want[k]), rtol=1e-13,
                                    atol=1e-13, err_msg=f"{spec.id}, jet {b}, order {k + 1}")


@pytest.mark.parametrize("name", ["scipy.special.gammainc", "scipy.special.gammaincc"])
def test_a_missing_third_derivative_is_a_type_error(name):
    sc = pytest.importorskip("scipy.special")
    f = getattr(sc, name.rsplit(".", 1)[1])
    with pytest.raises(TypeError, match="at most twice"):
        jet(lambda a: f(a, 1.5), (2.0,), ([1.0, 0.0, 0.0],))


#: One row per function with a JAX counterpart (JAX compiles each row's jet anew, which
#: is nearly all of this test's time; every row's variants are checked above).
JAX_ROWS = list({s.name: s for s in reversed(SPECS) if s.jax is not None}.values())[::-1]


@pytest.mark.parametrize("spec", JAX_ROWS, ids=lambda s: s.id)
def test_rows_against_jax_jet(spec):
    jax = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet
    rng = np.random.default_rng(11)
    args = _point(spec, rng)
    order = 4
    series = tuple([(rng.normal(size=np.shape(a)) * 0.5).astype(a.dtype) for _ in range(order)]
                   for a in args)
    def theirs_at(a, s):
        return jax_jet(spec.jax, a, s)

    with jax.enable_x64(True):
        try:  # compiled whole: one XLA compilation, not one per operation and shape
            try:
                theirs = jax.jit(theirs_at)(tuple(args), series)
            except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                    jax.errors.TracerIntegerConversionError,
                    jax.errors.TracerBoolConversionError):
                theirs = theirs_at(tuple(args), series)
        except (NotImplementedError, KeyError, TypeError, ValueError):
            pytest.skip("JAX's jet has no rule for a primitive of this row")
        except AttributeError:  # JAX 0.12's jet, on some primitives and custom_jvp
            pytest.skip("JAX's jet fails on this row (an AttributeError inside it)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = jet(spec.fun, tuple(args), series)
    for got, expected in zip(_terms(*ours), _terms(*theirs)):
        for k in range(order):
            # (where JAX's jet gives nan for a finite derivative: its pow rule at x < 0)
            expected_k = np.broadcast_to(np.asarray(expected[k]), np.shape(got[k]))
            finite = np.isfinite(expected_k)
            expected_k = expected_k[finite]
            scale = max(1.0, float(np.max(np.abs(expected_k)))) if expected_k.size else 1.0
            assert_allclose(np.asarray(got[k])[finite], expected_k, rtol=1e-7,
                            atol=1e-8 * scale, err_msg=f"{spec.id}, order {k + 1}")


def _mpmath_functions():
    mp = pytest.importorskip("mpmath")
    sc = pytest.importorskip("scipy.special")
    return mp, {
        np.sin: mp.sin, np.cos: mp.cos, np.tan: mp.tan, np.exp: mp.exp, np.log: mp.log,
        np.sqrt: mp.sqrt, np.tanh: mp.tanh, np.arctan: mp.atan, np.arcsin: mp.asin,
        np.arccos: mp.acos, np.sinh: mp.sinh, np.cosh: mp.cosh, np.arcsinh: mp.asinh,
        np.expm1: mp.expm1, np.log1p: mp.log1p, np.cbrt: mp.cbrt,
        np.reciprocal: lambda x: 1 / x, sc.erf: mp.erf, sc.gammaln: mp.loggamma,
        sc.expit: lambda x: 1 / (1 + mp.exp(-x)), sc.erfc: mp.erfc,
    }


def test_elementwise_functions_to_order_8_against_mpmath():
    mp, functions = _mpmath_functions()
    mp.mp.dps = 40
    order = 8
    for fun, exact in functions.items():
        x = 0.3
        _, terms = jet(fun, (x,), ([1.0] + [0.0] * (order - 1),), factorial_scaled=False)
        want = mp.taylor(exact, x, order)[1:]
        for k, (got, expected) in enumerate(zip(terms, want), start=1):
            assert_allclose(float(got), float(expected), rtol=1e-11, atol=1e-13,
                            err_msg=f"{getattr(fun, '__name__', fun)}, coefficient {k}")


def test_jax_docstring_example_and_factorial_scaling():
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(np.sin, (h0,), ((h1, h2),))
    assert f0 == np.sin(h0)
    assert_allclose(f1, np.cos(h0) * h1, rtol=1e-15)
    assert_allclose(f2, -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2, rtol=1e-15)
    # Taylor coefficients: x(t) = h0 + h1 t + (h2/2) t², f(x(t)) = f0 + f1 t + (f2/2) t²
    _, (c1, c2) = jet(np.sin, (h0,), ((h1, h2 / 2),), factorial_scaled=False)
    assert_allclose([c1, c2], [f1, f2 / 2], rtol=1e-15)


def test_pytree_outputs_constants_and_order_zero():
    x = np.array([0.5, 1.5])
    out, terms = jet(lambda x: {"a": np.exp(x), "b": (x[0] * 2.0, np.ones(3))}, (x,),
                     ([np.ones(2), np.zeros(2)],))
    assert set(out) == {"a", "b"}
    assert_allclose(terms["a"][1], np.exp(x))
    assert_allclose(terms["b"][0], [2.0, 0.0])
    assert_allclose(terms["b"][1], [np.zeros(3), np.zeros(3)])
    value, none = jet(np.sin, (x,), ((),))
    assert_allclose(value, np.sin(x)) and none == []


def test_dtypes():
    x32 = np.array([0.3, 0.7], np.float32)
    out, terms = jet(lambda x: np.tanh(x) * x, (x32,), ([np.ones(2, np.float32)] * 3,))
    assert out.dtype == np.float32 and all(t.dtype == np.float32 for t in terms)
    _, terms = jet(lambda x: x ** 3, (2,), ([1],))  # ints promote to float64
    assert terms[0].dtype == np.float64 and terms[0] == 12.0
    z = np.array([0.3 + 0.2j])
    _, terms = jet(lambda z: np.exp(z) * z ** 2, (z,), ([np.ones(1, complex), 0 * z, 0 * z],))
    e = np.exp(z)
    assert_allclose(terms, [e * (z ** 2 + 2 * z), e * (z ** 2 + 4 * z + 2),
                            e * (z ** 2 + 6 * z + 6)], rtol=1e-14)


def test_code_as_users_write_it():
    def residual(x):
        x = np.asarray(x)
        out = np.zeros(3)
        for i in range(3):
            out[i] = np.sin(x[i]) * x[(i + 1) % 3]
        M = np.array([[x[0], x[1]], [x[2], 1.0]])
        y = out.copy()
        y[1] = np.exp(x[1])
        y[2] += 1.0
        return np.linalg.solve(M, y[:2]).sum() + np.sum(y ** 2)

    x, v = np.array([0.3, 0.7, 1.1]), np.array([1.0, -0.5, 0.25])
    _, terms = jet(residual, (x,), ([v, np.zeros(3), np.zeros(3), np.zeros(3)],))
    assert_allclose(terms, _along(residual, [x], [v], 4), rtol=1e-10)
    assert x.tolist() == [0.3, 0.7, 1.1] and v.tolist() == [1.0, -0.5, 0.25]


def test_nested_with_other_transforms():
    x, v = np.array([0.3, 0.7, 1.1]), np.array([1.0, -0.5, 0.25])
    # a transform inside the function jet runs
    f = lambda x: np.sum(dualad.grad(lambda z: np.sum(np.sin(z) * x))(x) ** 2)  # noqa: E731
    _, terms = jet(f, (x,), ([v, 0 * v, 0 * v],))
    assert_allclose(terms, _along(f, [x], [v], 3), rtol=1e-12)

    # jet inside a transform: d/da of -a² v² sin(a x), the second term along v
    def second(a):
        return jet(lambda x: np.sin(a * x), (x,), ([v, 0 * v],))[1][1]

    assert_allclose(dualad.jacfwd(second)(2.0),
                    -4 * v ** 2 * np.sin(2 * x) - 4 * v ** 2 * x * np.cos(2 * x), rtol=1e-13)


def test_a_value_of_the_jet_does_not_escape():
    kept = []
    jet(lambda x: kept.append(x) or x, (1.0,), ([1.0],))
    with pytest.raises(dualad.primitive.EscapedDualError):
        np.sin(kept[0])


def test_what_is_wrong_is_said():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(np.add, (1.0, 2.0), ([1.0], [1.0, 0.0]))
    with pytest.raises(ValueError, match="one sequence of terms per argument"):
        jet(np.sin, (1.0, 2.0), ([1.0],))
    with pytest.raises(TypeError, match="tuples or lists"):
        jet(np.sin, 1.0, [1.0])
    with pytest.raises(ValueError, match="shape"):
        jet(np.sin, (np.zeros(2),), ([np.zeros(3)],))
    with pytest.raises(ValueError, match="leading axis of the same number of jets"):
        jet(np.add, (np.zeros(2), np.zeros(2)), ([np.zeros((3, 2))], [np.zeros((4, 2))]),
            batched=True)
    with pytest.raises(ValueError, match="leading axis"):
        jet(np.sin, (np.zeros(2),), ([np.zeros(2)],), batched=True)
    with pytest.raises(ValueError, match="after the seed axis"):
        jet(np.sin, (np.zeros(2),), ([np.zeros((3, 4))],), batched=True)


def test_batched_jets_keep_dtypes_pytrees_and_nest():
    x32 = np.array([0.3, 0.7], np.float32)
    out, terms = jet(lambda x: {"a": np.tanh(x) @ np.ones((2, 2), np.float32)}, (x32,),
                     ([np.ones((4, 2), np.float32)] * 2,), batched=True)
    assert terms["a"][1].shape == (4, 2) and terms["a"][1].dtype == np.float32
    # d/dy of the third derivative along v of sin(x·y): a jet inside a gradient
    def third(y):
        _, (_, _, t3) = jet(lambda x: np.sin(x * y), (np.array([0.5]),),
                            ([np.ones((2, 1)), np.zeros((2, 1)), np.zeros((2, 1))],),
                            batched=True)
        return np.sum(t3)
    y = 1.3  # third = 2·(-y³ cos(0.5 y)); its derivative in y by the closed form
    want = 2 * (-3 * y ** 2 * np.cos(0.5 * y) + 0.5 * y ** 3 * np.sin(0.5 * y))
    assert_allclose(dualad.derivative(third)(y), want, rtol=1e-13)


def test_cost_grows_polynomially_with_the_order():
    # sin's partial is cos(x), whose partial -sin(x) is the result itself: the series
    # are shared, so order 16 evaluates a few series per primitive, not 2^16 of them.
    from dualad import taylor
    made = []
    original = taylor.Series._make.__func__

    def counting(cls, *args):
        made.append(1)
        return original(cls, *args)

    taylor.Series._make = classmethod(counting)
    try:
        jet(lambda x: np.sin(np.cos(x)), (0.4,), ([1.0] + [0.0] * 15,))
    finally:
        taylor.Series._make = classmethod(original)
    assert len(made) < 40


def test_the_derivatives_of_a_polynomial_end():
    p = np.polynomial.Polynomial([1.0, -2.0, 0.5, 3.0])
    _, terms = jet(lambda x: 1.0 - 2.0 * x + 0.5 * x ** 2 + 3.0 * x ** 3, (1.5,),
                   ([1.0] + [0.0] * 5,))
    assert_allclose(terms[:3], [p.deriv(k)(1.5) for k in (1, 2, 3)], rtol=1e-14)
    assert terms[3:] == [0.0, 0.0, 0.0]
    assert math.isclose(terms[2], 18.0)


def test_derivative_of_any_order():
    # the Taylor coefficients of tan at 0: 1, 1/3, 2/15, 17/315 (odd orders)
    tan_k = {1: 1.0, 3: 2.0, 5: 16.0, 7: 272.0}
    for k, value in tan_k.items():
        assert_allclose(dualad.derivative(np.tan, order=k)(0.0), value, rtol=1e-13)
    assert dualad.derivative(np.tan, order=2)(0.0) == 0.0
    out = dualad.derivative(lambda a, x: {"p": a * x ** 4, "c": (np.sin(x),)}, argnums=1,
                            order=4)(2.0, 1.0)
    assert out["p"] == 48.0 and out["c"][0] == np.sin(1.0)
    assert dualad.derivative(np.sin, order=1)(0.0) == 1.0
    with pytest.raises(ValueError, match="positive integer"):
        dualad.derivative(np.sin, order=0)
    with pytest.raises(ValueError, match="use jet"):
        dualad.derivative(np.sin, order=2)(np.zeros(2))


@pytest.mark.parametrize("name", ["elementwise", "products", "solve and det", "pytree"])
def test_under_dualad_gpu(name):
    jax = pytest.importorskip("jax")
    import dualad_gpu
    W = np.array([[1.0, 2.0], [3.0, -1.0]])
    fun = {"elementwise": lambda x: np.tanh(np.sin(x)) / (1.0 + x * x),
           "products": lambda x: W @ (x * np.exp(x)) + np.einsum("i,ij,j", x, W, x),
           "solve and det": lambda x: np.linalg.solve(W + np.diag(x), np.exp(x))
           * np.linalg.det(W + np.outer(x, x)),
           "pytree": lambda x: {"a": np.cos(x), "b": (np.sum(x ** 3),)}}[name]
    x = np.array([0.3, 0.7])
    series = ([np.ones(2), np.array([0.5, -1.0]), np.zeros(2), np.ones(2)],)
    want_out, want = jet(fun, (x,), series)
    got_out, got = dualad_gpu.jet(fun, (x,), series)
    for g, w in zip(optree.tree_leaves(got), optree.tree_leaves(want)):
        assert isinstance(g, jax.Array) and g.dtype == np.float64
        assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
    assert optree.tree_structure(got_out) == optree.tree_structure(want_out)
    many = ([np.stack([t, 2 * t, -t]) for t in series[0]],)
    _, want = jet(fun, (x,), many, batched=True)
    _, got = dualad_gpu.jet(fun, (x,), many, batched=True)
    for g, w in zip(optree.tree_leaves(got), optree.tree_leaves(want)):
        assert g.shape == (3, 2) or g.shape == (3,)
        assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
    got = dualad_gpu.derivative_tensor(fun, 3)(x)
    for g, w in zip(optree.tree_leaves(got),
                    optree.tree_leaves(dualad.derivative_tensor(fun, 3)(x))):
        assert_allclose(np.asarray(g), w, rtol=1e-11, atol=1e-11)


SHARDED = r"""
import numpy as np, jax, dualad_gpu
assert len(jax.local_devices()) == 4
W = np.arange(64.0).reshape(8, 8) / 100
f = lambda x: np.sum(np.tanh(W @ x) ** 2) + np.prod(np.sin(x[:3]))
x, V = np.linspace(-1, 1, 8), np.cos(np.arange(64.0)).reshape(8, 8)
_, terms = dualad_gpu.jet(f, (x,), ([V, 0 * V, V],), batched=True)
assert all(len(t.sharding.device_set) == 4 for t in terms), [t.sharding for t in terms]
T = dualad_gpu.derivative_tensor(f, 3)(x)
lap = dualad_gpu.laplacian(f)(x)
np.savez(OUT, *[np.asarray(t) for t in terms], np.asarray(T), np.asarray(lap))
"""


def test_jets_and_directions_split_over_four_devices_equal_one_device(on_four_devices):
    pytest.importorskip("jax")
    sharded = on_four_devices(SHARDED)
    W = np.arange(64.0).reshape(8, 8) / 100
    f = lambda x: np.sum(np.tanh(W @ x) ** 2) + np.prod(np.sin(x[:3]))  # noqa: E731
    x, V = np.linspace(-1, 1, 8), np.cos(np.arange(64.0)).reshape(8, 8)
    _, terms = jet(f, (x,), ([V, 0 * V, V],), batched=True)
    for k, want in enumerate(terms + [dualad.derivative_tensor(f, 3)(x),
                                      dualad.laplacian(f)(x)]):
        assert_allclose(sharded[f"arr_{k}"], want, rtol=1e-12, atol=1e-12)
