"""scipy.optimize's root finders differentiated by the implicit function theorem
(dualad/solvers/scipy_optimize.py).

The spec rows (``specs_scipy_optimize.py``) check every solver against central
differences in first and second order, forward against reverse mode and under the
replay. Here: the reproducers of issue 26 in every mode, the primal being SciPy's own
bit for bit, third order by nesting against the closed form, a callback filling an
array, results' other fields, what SciPy gives when nothing is differentiated, and
the errors and warnings of a root that has no derivative or was not reached; and
large roots, whose ∂F/∂x is sparse (a discretised Bratu problem), against central
differences of the solver and the dense path, singular or not, pattern found or not.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad.solvers import scipy_optimize as rules
from test_in_place import numpy_jacobian as _central

so = pytest.importorskip("scipy.optimize")
sp = pytest.importorskip("scipy.sparse")
spla = pytest.importorskip("scipy.sparse.linalg")

P = np.array([2.0, 0.5])
#: The reproducers of issue 26: parameters closed over, and through args=.
REPRODUCERS = {
    "root": lambda p: so.root(lambda x: x ** 3 - p[0] * x - p[1], [1.0], tol=1e-13).x,
    "root, args": lambda p: so.root(lambda x, a: x ** 3 - a[0] * x - a[1], [1.0], args=(p,),
                                    tol=1e-13).x,
    "brentq": lambda p: np.array([so.brentq(lambda x: x ** 3 - p[0], 0, 5, xtol=1e-15)]),
    "fsolve": lambda p: so.fsolve(lambda x: np.exp(x) - p, np.zeros(2), xtol=1e-13),
    "newton": lambda p: np.array([so.newton(lambda x: np.cos(x) - p[1] * x, 0.5, tol=1e-15)]),
    "root_scalar": lambda p: np.array([so.root_scalar(lambda x: x ** 3 - p[0] * p[1],
                                                      bracket=[0, 5], xtol=1e-15).root]),
}


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_the_reproducers_in_every_mode(name):
    f = REPRODUCERS[name]
    J = dualad.jacfwd(f)(P)
    assert_allclose(J, _central(f, P), rtol=1e-7, atol=1e-8)
    assert_allclose(dualad.jacrev(f)(P), J, rtol=1e-12, atol=1e-14)
    energy = lambda p: np.sum(f(p) ** 2)
    expected = _central(dualad.grad(energy), P, 1e-5)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(energy, mode=mode)(P), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["broyden1", "diagbroyden", "newton_krylov"])
def test_the_large_scale_solvers_without_spec_rows(name):
    """Solvers that stop short of the spec rows' tolerance at some points: checked at
    one point against the closed form, dx/da = 1/(3x² + 1), at their own root."""
    a = np.array([0.3, -0.4, 0.2])
    solve = lambda a: getattr(so, name)(lambda x: x ** 3 + x - a, np.zeros(3), f_tol=1e-10,
                                        maxiter=2000)
    x = solve(a)
    assert_allclose(dualad.jacfwd(solve)(a), np.diag(1 / (3 * x ** 2 + 1)), rtol=1e-12)


def test_the_primal_is_scipy_s_bit_for_bit():
    seen = []
    dualad.jacfwd(lambda p: seen.append(dualad.primal_value(REPRODUCERS["root"](p))) or
                  REPRODUCERS["root"](p))(P)
    assert np.array_equal(seen[0], so.root(lambda x: x ** 3 - P[0] * x - P[1], [1.0],
                                           tol=1e-13).x)


def test_third_order_by_nesting_matches_the_closed_form():
    cube_root = lambda a: so.brentq(lambda x: x ** 3 - a, 0.0, 5.0, xtol=1e-15)
    for a in (2.0, 3.0):
        assert_allclose(dualad.derivative(cube_root)(a), a ** (-2 / 3) / 3, rtol=1e-13)
        assert_allclose(dualad.second_derivative(cube_root)(a), -2 / 9 * a ** (-5 / 3),
                        rtol=1e-12)
        assert_allclose(dualad.derivative(dualad.second_derivative(cube_root))(a),
                        10 / 27 * a ** (-8 / 3), rtol=1e-12)


def test_a_callback_filling_an_array_element_by_element():
    def model(p):
        def residual(x):
            out = np.zeros(2)
            out[0] = x[0] + 0.1 * np.sin(x[1]) - p[0]
            out[1] = x[1] - 0.1 * x[0] ** 2 - p[1]
            return out
        return so.root(residual, np.zeros(2), tol=1e-13).x

    assert_allclose(dualad.jacfwd(model)(P), _central(model, P), rtol=1e-7, atol=1e-9)


def test_results_keep_scipy_s_fields():
    def brackets(p):
        x, info = so.brentq(lambda x: x ** 3 - p[0], 0, 5, xtol=1e-15, full_output=True)
        assert info.converged and info.root is x
        return np.stack([x])

    assert_allclose(dualad.jacfwd(brackets)(P), [[P[0] ** (-2 / 3) / 3, 0.0]], rtol=1e-12)

    def elementwise(p):
        found = so.newton(lambda x: x ** 2 - p, np.ones(2), tol=1e-15, full_output=True)
        assert found.converged.all()
        return found.root

    assert_allclose(dualad.jacfwd(elementwise)(P), np.diag(0.5 / np.sqrt(P)), rtol=1e-12)

    def result(p):
        r = so.root(lambda x: x - p, np.zeros(2))
        assert r.success and isinstance(r.message, str) and r.nfev > 0
        return r.x

    assert_allclose(dualad.jacfwd(result)(P), np.eye(2))


def test_newton_s_args_as_a_list():
    """pvlib's singlediode passes newton args=[current, *params], a list, which SciPy's
    newton unpacks as it is (root and brentq wrap a non-tuple in a tuple)."""
    def elementwise(p):
        return so.newton(lambda x, a, b: x ** 2 - a * b, np.ones(2), args=[p, 2.0], tol=1e-15)

    assert_allclose(dualad.jacfwd(elementwise)(P), np.diag(1.0 / np.sqrt(2.0 * P)),
                    rtol=1e-12)


def test_nothing_differentiated_gives_scipy_s_own_result():
    plain = so.root(lambda x: x ** 3 - 2.0, [1.0])
    assert so.root.__wrapped__ is not so.root  # dualad's dispatcher, SciPy's within
    assert type(plain) is type(so.root.__wrapped__(lambda x: x ** 3 - 2.0, [1.0]))
    # In a transform, a root that does not depend on the differentiated values:
    J = dualad.jacfwd(lambda p: p * so.brentq(lambda x: x ** 3 - 2.0, 0, 5))(P)
    assert_allclose(J, np.eye(2) * 2.0 ** (1 / 3), rtol=1e-12)


def test_a_singular_jacobian_at_the_root_raises():
    # Two copies of one equation: x[1] is not determined, and has no derivative.
    repeated = lambda p: so.root(lambda x: np.array([x[0] + x[1] - p[0]] * 2), np.zeros(2)).x
    with pytest.raises(TypeError, match="singular at the root"):
        dualad.jacfwd(repeated)(P)


def test_a_solver_that_did_not_converge_warns():
    stopped = lambda p: so.root(lambda x: np.exp(x) - p, np.zeros(2),
                                options={"maxfev": 3}).x
    with pytest.warns(RuntimeWarning, match="did not converge"):
        dualad.jacfwd(stopped)(P)


# -- large roots: a sparse ∂F/∂x ------------------------------------------------------

def _bratu(n):
    """A discretised Bratu problem, u'' + p₀eᵘ + p₁sin(πt) = 0 on (0, 1), u = 0 at the
    ends, scaled by h²: its residual for parameters ``p`` (closed over), and a
    preconditioner for SciPy's Krylov solvers (the Laplacian's LU)."""
    h = 1.0 / (n + 1)
    t = np.linspace(h, 1.0 - h, n)
    laplacian = sp.diags([np.ones(n - 1), -2.0 * np.ones(n), np.ones(n - 1)], [-1, 0, 1],
                         format="csc")
    preconditioner = spla.LinearOperator((n, n), matvec=spla.splu(laplacian).solve)

    def residual(p):
        def F(u):
            padded = np.concatenate(([0.0], u, [0.0]))
            return padded[:-2] - 2.0 * u + padded[2:] + h ** 2 * (
                p[0] * np.exp(u) + p[1] * np.sin(np.pi * t))
        return F

    return residual, preconditioner


def _krylov(n, how="newton_krylov"):
    residual, M = _bratu(n)
    if how == "newton_krylov":
        return lambda p: so.newton_krylov(residual(p), np.zeros(n), f_tol=1e-13, inner_M=M)
    return lambda p: so.root(residual(p), np.zeros(n), method="krylov", tol=1e-13,
                             options={"jac_options": {"inner_M": M}}).x


@pytest.fixture
def slopes(monkeypatch):
    """Each ∂F/∂x the implicit derivatives solve with: sparse or dense."""
    seen, check = [], rules._check_regular
    monkeypatch.setattr(rules, "_check_regular",
                        lambda slope, *rest: seen.append(slope) or check(slope, *rest))
    return seen


@pytest.mark.parametrize("how", ["newton_krylov", "root krylov"])
def test_a_large_root_is_differentiated_with_a_sparse_jacobian(how, slopes):
    solve = _krylov(2000, how)
    J = dualad.jacfwd(solve)(P)
    assert sp.issparse(slopes[-1]) and slopes[-1].nnz == 3 * 2000 - 2
    assert_allclose(J, _central(solve, P, 1e-4), rtol=1e-6, atol=1e-9)
    assert_allclose(dualad.jacrev(solve)(P), J, rtol=1e-12, atol=1e-15)


def test_a_large_root_s_primal_is_scipy_s_bit_for_bit():
    solve, seen = _krylov(2000), []
    dualad.jvp(lambda p: seen.append(dualad.primal_value(solve(p))) or solve(p), (P,),
               (np.ones(2),))
    assert np.array_equal(seen[0], solve(P))


def test_hybr_at_n_100_stays_dense(slopes):
    residual, _ = _bratu(100)
    solve = lambda p: so.root(residual(p), np.zeros(100), options={"xtol": 1e-13}).x
    J = dualad.jacfwd(solve)(P)
    assert type(slopes[-1]) is np.ndarray
    assert_allclose(J, _central(solve, P, 1e-4), rtol=1e-6, atol=1e-9)


def test_sparse_and_dense_paths_agree_in_every_mode(monkeypatch):
    solve = _krylov(300)
    energy = lambda p: np.sum(solve(p) ** 2)
    transforms = {"jacfwd": dualad.jacfwd(solve), "jacrev": dualad.jacrev(solve),
                  "grad": dualad.grad(energy),
                  "hyperdual": dualad.hessian(energy, mode="hyperdual"),
                  "fwd-rev": dualad.hessian(energy, mode="fwd-rev")}
    sparse = {name: f(P) for name, f in transforms.items()}
    # A second point, through the transforms already called (replayed where they can):
    moved = {name: f(P + 0.1) for name, f in transforms.items()}
    monkeypatch.setattr(rules, "SPARSE_FROM", 10 ** 9)
    for name, f in transforms.items():
        assert_allclose(sparse[name], f(P), rtol=1e-11, atol=1e-14, err_msg=name)
        assert_allclose(moved[name], f(P + 0.1), rtol=1e-11, atol=1e-14, err_msg=name)


def test_a_singular_sparse_jacobian_raises(slopes):
    # x[-1] appears in no equation (the last repeats the one before): no derivative.
    def repeated(p):
        F = lambda x: np.concatenate([x[:-1] - p[0], x[-2:-1] - p[1]])
        return so.root(F, np.zeros(300)).x

    with pytest.raises(TypeError, match="singular at the root"):
        dualad.jacfwd(repeated)(np.array([2.0, 2.0]))
    assert sp.issparse(slopes[-1])
    near = sp.diags([np.r_[np.ones(299), 1e-20]], [0], format="csr")
    broken = sp.diags([np.r_[np.ones(299), np.inf]], [0], format="csr")
    for slope in (near, broken):
        with pytest.raises(TypeError, match="singular at the root"):
            rules._check_regular(slope, "root", False)


def test_a_pattern_not_found_goes_dense_or_says_so(monkeypatch, slopes):
    def refuse(*args, **kwargs):
        raise TypeError("no pattern here")

    solve = _krylov(300)
    expected = dualad.jacfwd(solve)(P)
    monkeypatch.setattr(dualad.sparse, "jacobian_sparsity", refuse)
    assert_allclose(dualad.jacfwd(solve)(P), expected, rtol=1e-11, atol=1e-14)
    assert type(slopes[-1]) is np.ndarray
    monkeypatch.setattr(rules, "DENSE_UP_TO", 100)
    with pytest.raises(TypeError, match="pattern could not be found.*no pattern here"):
        dualad.jacfwd(solve)(P)


def test_the_callbacks_writes_land_in_the_users_dict():
    state = {}

    def cube_root(a):
        state.update(a=a, calls=0)

        def residual(x):
            state["calls"] += 1
            return x ** 3 - state["a"]
        x, found = so.brentq(residual, 0.0, 5.0, xtol=1e-15, full_output=True)
        state["solver's"] = (state["calls"], found.function_calls)
        return x

    assert_allclose(dualad.derivative(cube_root)(8.0), 1 / 12, rtol=1e-9)
    counted, calls = state["solver's"]  # SciPy's calls (and the derivative's) in the dict
    assert counted >= calls > 0


def test_least_squares_with_keyword_arguments_to_the_residual():
    """``kwargs=`` reaches the residual as keywords (dualad's dispatcher passed only
    positional arguments on), plain and differentiated through."""
    t = np.linspace(0.0, 2.0, 30)
    y = 2.0 * np.exp(-1.3 * t)

    def residual(p, t=t, y=y):
        return p[0] * np.exp(-p[1] * t) - y

    from scipy.optimize import least_squares

    np.testing.assert_allclose(least_squares(residual, np.ones(2), kwargs={"y": 2 * y}).x,
                               [4.0, 1.3], rtol=1e-8)
    d = dualad.jacfwd(lambda s: least_squares(residual, np.ones(2), kwargs={"y": s * y}).x)
    np.testing.assert_allclose(d(2.0), [2.0, 0.0], atol=1e-8)
