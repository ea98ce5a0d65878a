"""SciPy's solvers with dualad's derivatives filled in (``dualad.with_derivatives``):
every ``minimize`` method that takes derivatives, ``least_squares`` (dense and on a
sparsity pattern), ``root``, ``curve_fit`` and ``solve_ivp``; one evaluation of ``f``
per point where SciPy allows sharing; derivatives the caller gives kept; results as
with SciPy's own exact derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import sparse
from scipy.integrate import solve_ivp
from scipy.optimize import (curve_fit, least_squares, minimize, root, rosen, rosen_der,
                            rosen_hess)

import dualad

X0 = np.array([-1.2, 1.0, -0.5, 0.8])
GRADIENT_METHODS = ["CG", "BFGS", "L-BFGS-B", "TNC", "SLSQP", None]
HESSIAN_METHODS = ["Newton-CG", "dogleg", "trust-ncg", "trust-krylov", "trust-exact",
                   "trust-constr"]


def counted(f):
    calls = []

    def g(*args, **kwargs):
        calls.append(1)
        return f(*args, **kwargs)

    return g, calls


@pytest.mark.parametrize("method", GRADIENT_METHODS + HESSIAN_METHODS)
def test_minimize_every_method_that_takes_derivatives(method):
    """The same optimum as SciPy's with the exact derivatives (trust-exact and
    trust-constr reach the local minimum of the 4-D Rosenbrock function near
    (-0.78, 0.61, 0.38, 0.15) with them too; dogleg starts where the Hessian is PSD)."""
    f, calls = counted(rosen)
    x0 = np.array([1.2, 1.3, 1.5, 2.0]) if method == "dogleg" else X0
    options = {"maxfun": 1000} if method == "TNC" else {}
    res = dualad.with_derivatives(minimize)(f, x0, method=method, options=options)
    theirs = minimize(rosen, x0, method=method, jac=rosen_der, options=options,
                      **({"hess": rosen_hess} if method in HESSIAN_METHODS else {}))
    assert res.success and theirs.success
    assert_allclose(res.x, theirs.x, atol=1e-4)
    if method in HESSIAN_METHODS:
        assert res.nhev > 0
    else:  # value and gradient of one reverse pass: f once per point
        assert len(calls) == res.nfev


def test_minimize_with_args_and_derivatives_given():
    def f(x, scale):
        return scale * rosen(x)

    res = dualad.with_derivatives(minimize)(f, np.full(4, 2.0), args=(2.0,),
                                            method="trust-exact")
    assert_allclose(res.x, 1.0, atol=1e-6)
    jac, jac_calls = counted(lambda x, scale: scale * rosen_der(x))
    res = dualad.with_derivatives(minimize)(f, X0, args=(2.0,), method="BFGS", jac=jac)
    assert len(jac_calls) == res.njev > 0  # the caller's gradient, not dualad's
    assert_allclose(res.x, 1.0, atol=1e-4)


@pytest.mark.parametrize("solver, kwargs", [(minimize, {"method": "BFGS"}),
                                             (least_squares, {})])
def test_finite_differences_asked_for_are_kept(solver, kwargs):
    seen = []

    def f(x):
        seen.append(type(x))
        return rosen(x) if solver is minimize else residual(x)

    dualad.with_derivatives(solver)(f, np.ones(3) * 0.9, jac="3-point", **kwargs)
    assert set(seen) == {np.ndarray}  # never dualad's values: SciPy's differences


def test_derivative_free_methods_get_the_function_as_it_is():
    f, calls = counted(rosen)
    res = dualad.with_derivatives(minimize)(f, X0[:2], method="Nelder-Mead")
    assert len(calls) == res.nfev and "njev" not in res
    assert_allclose(res.x, 1.0, atol=1e-3)


T = np.linspace(0.0, 2.0, 30)
Y = 2.0 * np.exp(-1.3 * T) + 0.5 * np.sin(3.0 * T)


def residual(p, t=T, y=Y):
    return p[0] * np.exp(-p[1] * t) + p[2] * np.sin(3.0 * t) - y


def test_least_squares():
    jac_calls = []

    def analytic(p, t=T, y=Y):
        jac_calls.append(1)
        return np.stack([np.exp(-p[1] * t), -p[0] * t * np.exp(-p[1] * t), np.sin(3.0 * t)],
                        axis=1)

    fit = dualad.with_derivatives(least_squares)(residual, np.ones(3))
    theirs = least_squares(residual, np.ones(3), jac=analytic)
    assert_allclose(fit.x, [2.0, 1.3, 0.5], rtol=1e-8)
    assert_allclose(fit.x, theirs.x, rtol=1e-10)
    assert (fit.nfev, fit.njev) == (theirs.nfev, theirs.njev)
    assert not jac_calls[theirs.njev:]
    assert_allclose(fit.jac, dualad.jacfwd(residual)(fit.x), rtol=1e-12)
    kwargs = dualad.with_derivatives(least_squares)(residual, np.ones(3),
                                                    kwargs={"y": 2 * Y}, method="lm")
    assert_allclose(kwargs.x, [4.0, 1.3, 1.0], rtol=1e-8)


def test_least_squares_on_a_sparsity_pattern():
    n = 40

    def broyden(x):
        padded = np.concatenate(([0.0], x, [0.0]))
        return (3 - 2 * x) * x - padded[:-2] - 2 * padded[2:] + 1

    pattern = sparse.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    fit = dualad.with_derivatives(least_squares)(broyden, -np.ones(n), jac_sparsity=pattern)
    dense = dualad.with_derivatives(least_squares)(broyden, -np.ones(n))
    assert sparse.issparse(fit.jac)
    assert_allclose(fit.x, dense.x, atol=1e-10)
    assert_allclose(broyden(fit.x), 0.0, atol=1e-9)


@pytest.mark.parametrize("method", ["hybr", "lm", "broyden1"])
def test_root(method):
    def f(x, a):
        return np.array([x[0] + 0.5 * (x[0] - x[1]) ** 3 - a, 0.5 * (x[1] - x[0]) ** 3 + x[1]])

    sol = dualad.with_derivatives(root)(f, np.zeros(2), args=(1.0,), method=method)
    assert sol.success
    assert_allclose(f(sol.x, 1.0), 0.0, atol=1e-8 if method != "broyden1" else 1e-5)
    if method == "hybr":
        assert sol.njev < sol.nfev or sol.njev == 1


def test_curve_fit_gets_the_jacobian_in_the_parameters():
    def model(t, a, k, c):
        return a * np.exp(-k * t) + c * np.sin(3.0 * t)

    jac_calls = []
    params, cov = dualad.with_derivatives(curve_fit)(model, T, Y, p0=[1.0, 1.0, 1.0])
    assert_allclose(params, [2.0, 1.3, 0.5], rtol=1e-8)

    def analytic(t, a, k, c):
        jac_calls.append(1)
        return np.stack([np.exp(-k * t), -a * t * np.exp(-k * t), np.sin(3.0 * t)], axis=1)

    theirs, their_cov = curve_fit(model, T, Y, p0=[1.0, 1.0, 1.0], jac=analytic)
    assert jac_calls
    assert_allclose(params, theirs, rtol=1e-10)
    assert_allclose(cov, their_cov, rtol=1e-6, atol=1e-20)


def robertson(t, y):
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2])


def robertson_jacobian(t, y):
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA", "RK45"])
def test_solve_ivp_gets_a_jacobian_where_its_method_uses_one(method):
    span, y0 = (0.0, 40.0 if method == "RK45" else 1e4), [1.0, 0.0, 0.0]
    sol = dualad.with_derivatives(solve_ivp)(robertson, span, y0, method=method, rtol=1e-7,
                                             atol=1e-10)
    theirs = solve_ivp(robertson, span, y0, method=method, rtol=1e-7, atol=1e-10,
                       **({} if method == "RK45" else {"jac": robertson_jacobian}))
    assert sol.success
    assert_allclose(sol.y[:, -1], theirs.y[:, -1], rtol=1e-5, atol=1e-9)
    assert (sol.njev == 0) == (method == "RK45")


def test_solve_ivp_with_args_and_a_sparsity_pattern():
    n = 30

    def heat(t, u, kappa):
        padded = np.concatenate(([0.0], u, [0.0]))
        return kappa * (padded[:-2] - 2 * u + padded[2:]) * (n + 1) ** 2

    u0 = np.sin(np.pi * np.linspace(0, 1, n + 2)[1:-1])
    pattern = sparse.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    sol = dualad.with_derivatives(solve_ivp)(heat, (0.0, 0.1), u0, method="BDF",
                                             args=(0.5,), jac_sparsity=pattern, rtol=1e-8)
    dense = dualad.with_derivatives(solve_ivp)(heat, (0.0, 0.1), u0, method="BDF",
                                               args=(0.5,), rtol=1e-8)
    assert_allclose(sol.y[:, -1], dense.y[:, -1], rtol=1e-8, atol=1e-12)


def test_only_scipy_s_solvers():
    with pytest.raises(TypeError, match="curve_fit, least_squares, minimize, root, solve_ivp"):
        dualad.with_derivatives(np.linalg.solve)
