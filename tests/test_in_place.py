"""Writes into arrays (``x[i] = ...``, ``u[:] = ...``, ``+=``, views): NumPy's semantics,
the right derivative in every mode, and the caller's arrays never changed.

The oracle of each program is the program itself run on plain NumPy arrays: its
values, and central differences of it for the derivatives.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad


def writes_argument(x):
    x[0] = x[0] * 2
    return x * x[0]


def write_after_use(x):
    y = x * 1.0
    z = y * y
    y[0] = 5.0
    return z + y


def loop_overwrite(x):
    u = x * 1.0
    for _ in range(3):
        u_new = u * u[::-1] + 0.5
        u[:] = u_new
    return u


def write_through_view(x):
    out = np.zeros_like(x)
    v = out[:2]
    v[0] = 3 * x[0]
    v[1] = x[1] * x[2]
    return out


def in_place_operator_aliases(x):
    y = x * 1.0
    z = y
    z += x ** 2
    z *= 2.0
    return y


def view_sees_later_write(x):
    a = x[:2]
    x[0] = 5 * x[1] ** 2
    return a * 2


def nested_views(x):
    v = x[1:]
    w = v[1:]
    w[0] = 7 * x[0] ** 2
    v[0] += w[0]
    return x


def reshape_view(x):
    y = x.reshape(2, 2)
    y[0, 1] = x[3] ** 2
    t = y.T
    t[1, 1] *= 3.0
    return x * 1.0


def in_place_on_slice(x):
    v = x[1:]
    v *= x[0]
    return x + 0.0


def recurrence(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] ** 2 + (out[i - 1] if i else 0.0)
    return out


def sum_before_write(x):
    s = np.sum(x * x)
    x[0] = 0.0
    return s + np.sum(x)


def two_d_columns(x):
    m = x.reshape(2, 2) * 1.0
    m[:, 0] = m[:, 1] * m[0, 0]
    return m.ravel()


PROGRAMS = [writes_argument, write_after_use, loop_overwrite, write_through_view,
            in_place_operator_aliases, view_sees_later_write, nested_views, reshape_view,
            in_place_on_slice, recurrence, sum_before_write, two_d_columns]

X = np.array([0.7, -1.3, 0.4, 1.1])


def numpy_jacobian(f, x, h=1e-6):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(columns, axis=-1)


def scalar(f):
    return lambda x: np.sum(f(x) ** 2)


TRANSFORMS = {
    "jacfwd": dualad.jacfwd,
    "jacfwd chunked": lambda f: dualad.jacfwd(f, chunk_size=1),
    "jacrev": dualad.jacrev,
    "jacrev chunked": lambda f: dualad.jacrev(f, chunk_size=1),
}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_jacobian_of_writes_matches_numpy(program, transform):
    x = X.copy()
    jac = TRANSFORMS[transform](program)(x)
    assert_array_equal(x, X)  # the caller's array is never changed
    assert_allclose(jac, numpy_jacobian(program, X.copy()), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_values_of_writes_match_numpy(program):
    value, _ = dualad.jvp(program, (X.copy(),), (np.ones(4),))
    assert_allclose(value, program(X.copy()), rtol=1e-15)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hessian_of_writes_matches_numpy(program, mode):
    f = scalar(program)
    x = X.copy()
    hess = dualad.hessian(f, mode=mode, chunk_size=2)(x)
    assert_array_equal(x, X)
    expected = numpy_jacobian(lambda y: dualad.grad(f)(y), X.copy(), h=1e-5)
    assert_allclose(hess, expected, rtol=1e-6, atol=1e-6)


def test_grad_and_vjp_leave_the_argument_alone():
    x = X.copy()
    g = dualad.grad(scalar(writes_argument))(x)
    _, pullback = dualad.vjp(writes_argument, x)
    pullback(np.ones(4))
    dualad.hvp(scalar(writes_argument), (x,), (np.ones(4),), mode="hyperdual")
    dualad.jvp(writes_argument, (x,), (np.ones(4),))
    assert_array_equal(x, X)
    assert_allclose(g, numpy_jacobian(scalar(writes_argument), X.copy()), rtol=1e-7)


def test_chunked_passes_each_start_from_the_callers_values():
    # Issue reproducer: from n ≈ 2,800 jacfwd chunks automatically.
    x = np.linspace(0.5, 1.5, 3000)
    kept = x.copy()
    jac = dualad.jacfwd(writes_argument, chunk_size=1000)(x)
    assert_array_equal(x, kept)
    assert jac[0, 0] == 8 * kept[0]
    assert_allclose(np.diag(jac)[1:], 2 * kept[0])
    assert_allclose(jac[1:, 0], 2 * kept[1:])


def test_in_place_operators_alias_as_in_numpy():
    def f(x):
        y = x * 1.0
        z = y
        z += 1.0
        assert z is y
        return y

    value, tangent = dualad.jvp(f, (np.ones(2),), (np.ones(2),))
    assert_array_equal(value, [2.0, 2.0])
    assert_array_equal(tangent, [1.0, 1.0])


def test_float32_stays_float32_through_in_place_operators():
    def f(x):
        y = x * 1.0
        y += 2.5 * x
        return y

    jac = dualad.jacfwd(f)(np.ones(3, np.float32))
    assert jac.dtype == np.float32


def test_copy_is_not_a_view():
    def f(x):
        c = x.copy()
        c[0] = 0.0
        d = np.copy(x)
        d[1] = 0.0
        return x * c * d

    assert_allclose(dualad.jacfwd(f)(np.array([2.0, 3.0, 4.0])),
                    numpy_jacobian(f, np.array([2.0, 3.0, 4.0])), rtol=1e-7, atol=1e-8)
