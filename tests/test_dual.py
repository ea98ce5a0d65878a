"""The Dual array: operators, NumPy protocols, methods, and errors that lose nothing."""

import operator

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad
from dualad import Dual, jacfwd, jvp


def d(primal, tangent=None):
    primal = np.asarray(primal, float)
    return Dual(primal, np.ones_like(primal) if tangent is None else tangent)


BINARY_OPERATORS = [
    (operator.add, lambda x, y: (1.0, 1.0)),
    (operator.sub, lambda x, y: (1.0, -1.0)),
    (operator.mul, lambda x, y: (y, x)),
    (operator.truediv, lambda x, y: (1 / y, -x / y ** 2)),
    (operator.pow, lambda x, y: (y * x ** (y - 1), np.log(x) * x ** y)),
    (operator.mod, lambda x, y: (1.0, -np.floor(x / y))),
]


@pytest.mark.parametrize("op, partials", BINARY_OPERATORS)
def test_binary_operators_all_placements(op, partials):
    x, y = 1.7, 0.6
    dx, dy = partials(x, y)
    # Dual op Dual, Dual op float, float op Dual, ndarray op Dual
    assert_allclose(jvp(lambda a, b: op(a, b), (x, y), (1.0, 0.0))[1], dx)
    assert_allclose(jvp(lambda a, b: op(a, b), (x, y), (0.0, 1.0))[1], dy)
    assert_allclose(jvp(lambda a: op(a, y), (x,), (1.0,))[1], dx)
    assert_allclose(jvp(lambda b: op(x, b), (y,), (1.0,))[1], dy)
    assert_allclose(jvp(lambda b: op(np.array([x]), b), (np.array([y]),),
                        (np.array([1.0]),))[1], [dy])


def test_floor_divide_is_piecewise_constant():
    out = d([3.5]) // 2.0
    assert isinstance(out, np.ndarray) and not isinstance(out, Dual)
    assert_array_equal(out, [1.0])
    q, r = divmod(d([3.5]), 2.0)
    assert_array_equal(q, [1.0])
    assert_allclose(r.tangent, [[1.0]])


def test_unary_operators():
    x = d([-2.0, 3.0])
    assert_allclose((-x).tangent, [[-1.0, -1.0]])
    assert (+x) is x
    assert_allclose(abs(x).tangent, [[-1.0, 1.0]])


def test_square_power_shortcut_and_general_power():
    x = d([3.0])
    assert_allclose((x ** 2).tangent, [[6.0]])
    assert_allclose((x ** 3).tangent, [[27.0]])
    assert_allclose((2.0 ** x).tangent, [[8 * np.log(2)]])


def test_matmul_with_ndarray_on_either_side():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 4))
    x = rng.normal(size=4)
    assert_allclose(jacfwd(lambda x: W @ x)(x), W)
    assert_allclose(jacfwd(lambda y: y @ W)(np.ones(3)), W.T)
    assert_allclose(jacfwd(lambda x: 2.0 * x)(x), 2 * np.eye(4))
    assert_allclose(jacfwd(lambda x: np.ones(4) + x)(x), np.eye(4))


def test_comparisons_look_at_primal_only():
    x = Dual(np.array([1.0, 2.0, 3.0]), np.array([5.0, -5.0, 0.0]))
    for result in (x < 2, x <= 2, x > 2, x >= 2, x == 2, x != 2, 2 < x):
        assert type(result) is np.ndarray and result.dtype == bool
    assert_array_equal(x > 1.5, [False, True, True])
    assert_array_equal(x == x, [True, True, True])


def test_branching_does_not_depend_on_tangent_or_chunk():
    def f(x):
        return np.where(x > 0, x ** 2, -x)

    x = np.array([-1.0, 2.0, 0.5])
    assert_allclose(jacfwd(f, chunk_size=1)(x), jacfwd(f)(x))
    assert_allclose(jacfwd(f)(x), np.diag([-1.0, 4.0, 1.0]))


def test_ndarray_attributes_and_methods():
    x = Dual(np.arange(6.0).reshape(2, 3), np.ones((2, 3)))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
    assert len(x) == 2
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.real is x
    assert_array_equal(x.imag, np.zeros((2, 3)))
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert x.transpose().shape == (3, 2) and x.transpose(1, 0).shape == (3, 2)
    assert_allclose(x.sum().tangent, [6.0])
    assert_allclose(x.mean(axis=0).tangent, [[1.0, 1.0, 1.0]])
    assert x.ravel().shape == (6,) and x.flatten().shape == (6,)
    assert x.max().primal == 5.0 and x.min(axis=1).shape == (2,)
    assert x.argmax() == 5
    assert x.cumsum(axis=1).shape == (2, 3)
    assert x.astype(np.float32).tangent.dtype == np.float32
    assert_array_equal(x.astype(int), np.arange(6).reshape(2, 3))
    rows = list(x)
    assert len(rows) == 2 and isinstance(rows[0], Dual) and rows[0].shape == (3,)
    assert x.copy().primal is not x.primal


def test_indexing_and_slicing():
    x = Dual(np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4) * 10)
    assert_allclose(x[1].tangent, [[40.0, 50.0, 60.0, 70.0]])
    assert_allclose(x[:, 1].tangent, [[10.0, 50.0, 90.0]])
    assert_allclose(x[[0, 2], [1, 3]].tangent, [[10.0, 110.0]])
    assert_allclose(x[x > 9].tangent, [[100.0, 110.0]])
    assert x[..., None].shape == (3, 4, 1)


def test_setitem_writes_primal_and_tangent():
    def f(x):
        out = x * 1.0
        out[0] = x[1] * 3.0
        return out

    assert_allclose(jacfwd(f)(np.array([1.0, 2.0])), [[0.0, 3.0], [0.0, 1.0]])


def test_setitem_of_a_constant_clears_the_tangent():
    x = Dual(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    x[0] = 5.0
    assert_allclose(x.primal, [5.0, 2.0])
    assert_allclose(x.tangent, [[0.0, 1.0]])


def test_ufunc_methods():
    x = Dual(np.array([1.0, 2.0, 3.0]), np.ones(3))
    assert_allclose(np.add.reduce(x).tangent, [3.0])
    assert_allclose(np.add.accumulate(x).tangent, [[1.0, 2.0, 3.0]])
    assert_allclose(np.multiply.reduce(x).tangent, [11.0])
    assert np.multiply.outer(x, x).shape == (3, 3)
    np.add.at(x, [0, 0], 1.0)  # (repeated indices accumulate, into the Dual)
    assert_allclose(x.primal, [3.0, 2.0, 3.0])
    assert_allclose(x.tangent, np.ones((1, 3)))
    with pytest.raises(TypeError, match="at is not supported"):
        np.multiply.at(x, [0], 2.0)


# -- nothing is silently lost -------------------------------------------------


def test_asarray_refuses():
    x = d([1.0, 2.0])
    with pytest.raises(TypeError, match="drop its derivative"):
        np.asarray(x)
    with pytest.raises(TypeError, match="np.stack"):
        np.array([x, x])


def test_writing_a_dual_into_an_ndarray_refuses():
    buf = np.zeros(2)
    x = d([1.0, 2.0])
    with pytest.raises(TypeError, match="drop"):
        buf[:] = x
    # NumPy reports a failed scalar store as a ValueError caused by our TypeError.
    with pytest.raises((TypeError, ValueError)) as info:
        buf[0] = x[0]
    assert "drop" in str(info.value) + str(info.value.__cause__)
    with pytest.raises(TypeError, match="drop"):
        float(x[0])
    with pytest.raises(TypeError, match="drop"):
        np.add(x, 1.0, out=buf)
    with pytest.raises(TypeError, match="drop"):
        x.item()


def test_unregistered_function_names_itself_and_the_fix():
    x = d([1.0, 2.0])
    with pytest.raises(TypeError) as info:
        np.emath.log(x)
    message = str(info.value)
    assert "numpy.emath.log" in message and "register_function" in message


def test_unregistered_ufunc_names_itself():
    scipy_special = pytest.importorskip("scipy.special")
    with pytest.raises(TypeError, match="ellipk"):
        scipy_special.ellipk(d([0.1]))


def test_register_function_makes_a_function_work():
    def softsign(x):
        return x / (1 + abs(x))

    unregistered = np.emath.log
    dualad.register_function(unregistered, lambda p, **kw: softsign(p))
    try:
        assert_allclose(jacfwd(np.emath.log)(np.array([0.5])), [[1 / 1.5 ** 2]])
    finally:
        dualad.primitive.FUNCTION_HANDLERS.pop(unregistered)


def test_index_must_not_be_a_dual():
    x = d([1.0, 2.0])
    with pytest.raises(TypeError, match="index"):
        x[Dual(np.array(0.0), np.array(1.0))]


def test_int_of_a_dual_is_allowed():
    assert int(d(2.7)) == 2
    assert bool(d(1.0))


def test_repr_shows_both_parts():
    assert "primal" in repr(d([1.0])) and "tangent" in repr(d([1.0]))


def test_primal_value_strips_every_tag():
    x = Dual(Dual(np.array(1.0), np.array(2.0)), np.array(3.0), batched=False)
    assert dualad.primal_value(x) == 1.0


# -- building arrays element by element ------------------------------------------


def robertson(y):
    """The stiff Robertson kinetics right-hand side, written the usual NumPy way."""
    k1, k2, k3 = 0.04, 3e7, 1e4
    dy = np.zeros_like(y)
    dy[0] = -k1 * y[0] + k3 * y[1] * y[2]
    dy[1] = k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2]
    dy[2] = k2 * y[1] ** 2
    return dy


def test_zeros_like_then_setitem_in_every_mode():
    y = np.array([1.0, 2e-5, 0.1])
    k1, k2, k3 = 0.04, 3e7, 1e4
    expected = np.array([
        [-k1, k3 * y[2], k3 * y[1]],
        [k1, -2 * k2 * y[1] - k3 * y[2], -k3 * y[1]],
        [0.0, 2 * k2 * y[1], 0.0],
    ])
    assert_allclose(jacfwd(robertson)(y), expected, rtol=1e-14)
    assert_allclose(dualad.jacrev(robertson)(y), expected, rtol=1e-14)

    def f(y):
        return np.sum(robertson(y) ** 2)

    hessians = [dualad.hessian(f, mode=m)(y) for m in ("hyperdual", "fwd-rev")]
    assert_allclose(hessians[0], hessians[1], rtol=1e-12)
    assert_allclose(hessians[0], jacfwd(jacfwd(f))(y), rtol=1e-12)


def test_setitem_with_advanced_index_in_every_mode():
    def g(x):
        out = np.zeros_like(x)
        out[[0, 2]] = x[[1, 0]] ** 2
        return out

    x = np.array([1.0, 2.0, 3.0])
    expected = np.array([[0.0, 4.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    assert_allclose(jacfwd(g)(x), expected)
    assert_allclose(dualad.jacrev(g)(x), expected)
    H = dualad.hessian(lambda x: np.sum(g(x) ** 2), mode="hyperdual")(x)
    assert_allclose(H, np.diag([12.0, 48.0, 0.0]))  # ∂²(x₁⁴ + x₀⁴)


def test_setitem_of_an_outer_variable_inside_an_inner_transform():
    def outer(a):
        def inner(x):
            out = np.zeros_like(x)
            out[0] = a * x[0]
            out[1] = x[1]
            return out

        return jacfwd(inner)(np.array([1.0, 2.0]))

    assert_allclose(jacfwd(outer)(3.0), [[1.0, 0.0], [0.0, 0.0]])


def test_setitem_through_repeated_indices_is_refused():
    x = Dual(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="repeated"):
        x[[0, 0]] = x[[1, 2]]


def test_zeros_like_of_a_hyperdual_is_a_hyperdual():
    h = dualad.HyperDual(np.ones(2), np.ones(2), np.ones(2))
    z = np.zeros_like(h)
    assert isinstance(z, dualad.HyperDual)
    z[0] = h[1] * 3.0
    assert_allclose(z.eps1eps2, [[[0.0, 0.0]]])
    assert_allclose(z.eps1, [[3.0, 0.0]])
    assert np.zeros_like(h, dtype=int).dtype == int


JOINS_WITH_CONSTANTS = {
    "concatenate with lists": lambda u: np.concatenate([[0.0], u, [0.0]]),
    "hstack with floats": lambda u: np.hstack([0.0, u, 1.0]),
    "vstack with a list": lambda u: np.vstack([u, [1.0, 2.0, 3.0]]).ravel(),
    "stack of elements and floats": lambda u: np.stack([u[0], 0.0, u[2] * 2.0]),
}


@pytest.mark.parametrize("name", sorted(JOINS_WITH_CONSTANTS))
def test_joining_duals_with_python_constants_in_every_mode(name):
    f = JOINS_WITH_CONSTANTS[name]
    u = np.array([1.0, 2.0, 3.0])
    expected = np.stack([f(u + 1e-6 * e) - f(u - 1e-6 * e) for e in np.eye(3)], axis=-1) / 2e-6
    assert_allclose(dualad.jacfwd(f)(u), expected, atol=1e-8)
    assert_allclose(dualad.jacrev(f)(u), expected, atol=1e-8)


def test_pad_modes_that_are_not_copies_are_refused():
    with pytest.raises(TypeError, match=r"mode='mean'\) is not supported.*edge, reflect"):
        jacfwd(lambda x: np.pad(x, 1, mode="mean"))(np.ones(3))
