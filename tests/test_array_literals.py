"""``np.array([...])`` of 0-d Duals — the first line of most ODE right-hand sides —
gives an object array that dualad turns back into one Dual at the first dualad
operation or at the transform's output, in every mode."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad


def van_der_pol(t, y, mu=3.0):
    return np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


def van_der_pol_stacked(t, y, mu=3.0):
    return np.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


Y = np.array([0.8, -0.3])

JACOBIANS = {
    "jacfwd": dualad.jacfwd,
    "jacfwd chunked": lambda f: dualad.jacfwd(f, chunk_size=1),
    "jacrev": dualad.jacrev,
}


@pytest.mark.parametrize("name", list(JACOBIANS))
def test_ode_right_hand_side_jacobian(name):
    jac = JACOBIANS[name](lambda y: van_der_pol(0.0, y))(Y)
    assert_allclose(jac, dualad.jacfwd(lambda y: van_der_pol_stacked(0.0, y))(Y), rtol=1e-15)
    mu = 3.0
    assert_allclose(jac, [[0.0, 1.0], [-2 * mu * Y[0] * Y[1] - 1, mu * (1 - Y[0] ** 2)]])


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_second_order_through_an_array_literal(mode):
    f = lambda y: np.sum(van_der_pol(0.0, y) ** 2)
    g = lambda y: np.sum(van_der_pol_stacked(0.0, y) ** 2)
    assert_allclose(dualad.hessian(f, mode=mode)(Y), dualad.hessian(g)(Y), rtol=1e-14)
    assert_allclose(dualad.hvp(f, (Y,), (np.ones(2),))[0],
                    dualad.hessian(g)(Y) @ np.ones(2), rtol=1e-14)


@pytest.mark.parametrize("f, expected", [
    (lambda y: np.array([[y[0], 1.0], [2.0, y[1]]]) @ y, [[2 * Y[0], 1.0], [2.0, 2 * Y[1]]]),
    (lambda y: np.asarray([y[0], y[1]]) + y, 2 * np.eye(2)),
    (lambda y: np.sin(np.array([y[0], y[1] ** 2])), np.diag([np.cos(Y[0]),
                                                          2 * Y[1] * np.cos(Y[1] ** 2)])),
    (lambda y: np.sum(np.array([y[0], 3.0, y[1]])) * y, None),
    (lambda y: np.concatenate([np.array([y[0] * y[1]]), y]), None),
    (lambda y: np.linalg.solve(np.array([[y[0], 1.0], [2.0, y[1]]]), y), None),
    (lambda y: np.array([y[1], 2.0]) * 3.0, [[0.0, 3.0], [0.0, 0.0]]),
], ids=["matrix literal", "asarray", "ufunc on it", "sum", "concatenate", "solve",
        "constant element"])
@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_array_literals_in_expressions(f, expected, transform):
    jac = transform(f)(Y)
    h = 1e-6
    numeric = np.stack([(f(Y + h * e) - f(Y - h * e)) / (2 * h) for e in np.eye(2)], axis=-1)
    assert_allclose(jac, numeric, rtol=1e-7, atol=1e-9)
    if expected is not None:
        assert_allclose(jac, expected, rtol=1e-14)


def test_numpy_functions_that_cast_an_object_array_to_float_raise_clearly():
    with pytest.raises(TypeError, match=r"numpy.mean was given an object array of Duals"):
        dualad.grad(lambda y: np.mean([y[0], y[1] ** 2]))(Y)
    # np.mean of the stacked array is the way, and gives the derivative:
    assert_allclose(dualad.grad(lambda y: np.mean(np.stack([y[0], y[1] ** 2])))(Y),
                    [0.5, Y[1]])


def test_array_of_vectors_says_to_stack():
    with pytest.raises(TypeError, match=r"np.stack\(\[...\]\)"):
        dualad.jacfwd(lambda y: np.array([y, 2 * y]))(Y)
