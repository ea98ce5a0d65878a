"""SciPy's solvers differentiated, each derivative timed against the solve itself.

- ``scipy_ivp``: the Jacobian of ``solve_ivp``'s final state in K parameters
  (closed over by the right-hand side, RK45, ``rtol=1e-8``, ``atol=1e-10``):
  Lotka–Volterra in K = 3 (:func:`lotka_volterra`, t in [0, 10]) and a ring of
  ten species in K = 30 (:func:`ring`, rates ``k.reshape(3, 10)``, t in [0, 5]).
  dualad's columns: ``jacfwd`` (forward sensitivities, solved with the state) and
  ``jacrev`` (the adjoint: the primal solved again with dense output, then one
  backward solve carrying the cotangents of every output); the peer ``fd``:
  SciPy's forward differences (``approx_derivative(..., "2-point")``, K + 1
  solves). Target: ``jacfwd`` ≤ 1 + K/2 primal solves. Checked against central
  differences of solves at ``rtol=1e-12``.
- ``scipy_root``: the implicit derivative of a root, x*(p) of a forced Bratu
  problem (:func:`forced_bratu`), at n = 100 (``root``, hybr: ∂F/∂x dense) and
  n = 10⁴ (``newton_krylov`` preconditioned by the Laplacian: ∂F/∂x sparse,
  3 colours and SuperLU). dualad's columns: ``jvp`` (x*'s tangent along one
  direction of p), ``grad`` (of ½|x*|², reverse mode), ``jacfwd`` (in both
  parameters); the peer ``fd``: a forward difference along the same direction
  (one more solve). Targets: ``jvp`` and ``grad`` ≤ 2 primal solves. Checked
  against dx*/dp = −(∂F/∂x)⁻¹ ∂F/∂p derived by hand.

Every ratio divides by the primal solve, timed in the same process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import dualad

from .core import Factory, Problem, checked

#: K, the parameters of the ODE rows; n, the unknowns of the root rows.
IVP_SIZES = (3, 30)
ROOT_SIZES = (100, 10**4)
#: The goals: forward sensitivities ≤ 1 + K/2 primal solves, implicit derivatives
#: ≤ 2 (the columns of :data:`ROOT_TARGETS`).
IVP_TARGET_PER_PARAMETER = 0.5
ROOT_TARGETS = {"jvp": 2.0, "grad": 2.0}
#: The accuracy asked of each result: the solvers' tolerances bound it.
EXACT_RTOL, DIFFERENCES_RTOL = 1e-5, 1e-3


# -- solve_ivp ------------------------------------------------------------------------------


def lotka_volterra(p):
    """x' = p₀x − p₁xy, y' = p₁xy − p₂y: the right-hand side, the start (10, 5) and
    the span (0, 10)."""
    def rhs(t, y):
        return np.array([p[0] * y[0] - p[1] * y[0] * y[1], p[1] * y[0] * y[1] - p[2] * y[1]])

    return rhs, np.array([10.0, 5.0]), (0.0, 10.0)


def ring(k):
    """Ten species on a ring, y' = −k₀y + k₁·roll(y, 1) − k₂y², ``k`` of 30 rates
    read as ``k.reshape(3, 10)``: the right-hand side, the start and the span (0, 5)."""
    rates = np.reshape(k, (3, 10))

    def rhs(t, y):
        return -rates[0] * y + rates[1] * np.roll(y, 1) - rates[2] * y ** 2

    return rhs, np.linspace(1.0, 2.0, 10), (0.0, 5.0)


def ivp_case(K: int) -> tuple[Callable, np.ndarray]:
    """``(model, p)``: Lotka–Volterra for K = 3, the ring of ten species for K = 30."""
    if K == 3:
        return lotka_volterra, np.array([1.5, 1.0, 3.0])
    rng = np.random.default_rng(20261127)
    return ring, np.concatenate([rng.uniform(0.5, 1.5, 20), rng.uniform(0.05, 0.2, 10)])


def final_state(model: Callable, p, t_end: float | None = None, rtol: float = 1e-8,
                atol: float = 1e-10):
    """The state at the end of ``solve_ivp`` (RK45) of ``model(p)``."""
    from scipy.integrate import solve_ivp

    rhs, y0, span = model(p)
    span = span if t_end is None else (span[0], t_end)
    return solve_ivp(rhs, span, y0, rtol=rtol, atol=atol).y[:, -1]


@functools.cache
def _ivp_reference(K: int, t_end: float | None) -> np.ndarray:
    """Central differences of solves at ``rtol=1e-12``: good to about 1e-8."""
    model, p = ivp_case(K)
    columns = []
    for e in np.eye(p.size) * 1e-5:
        ends = [final_state(model, q, t_end, rtol=1e-12, atol=1e-14) for q in (p + e, p - e)]
        columns.append((ends[0] - ends[1]) / 2e-5)
    return np.stack(columns, axis=1)


def scipy_ivp(K: int, t_end: float | None = None) -> Problem:
    """The Jacobian of the final state of :func:`ivp_case` ``(K)`` in its K
    parameters: ``jacfwd``, ``jacrev`` and SciPy's forward differences; ``t_end``
    shortens the span (the tests' small problems)."""
    model, p = ivp_case(K)
    solve = lambda p: final_state(model, p, t_end)  # noqa: E731

    def made(make: Callable[[], Callable], what: str, rtol: float = EXACT_RTOL) -> Factory:
        return lambda: checked(make(), _ivp_reference(K, t_end), what=what, rtol=rtol,
                               scaled=True)

    def differences():
        from scipy.optimize._numdiff import approx_derivative

        return functools.partial(approx_derivative, solve, p, method="2-point")

    factories = {
        "primal": lambda: functools.partial(solve, p),
        "jacfwd": made(lambda: functools.partial(dualad.jacfwd(solve), p), "jacfwd"),
        "jacrev": made(lambda: functools.partial(dualad.jacrev(solve), p), "jacrev"),
        "fd": made(differences, "approx_derivative", DIFFERENCES_RTOL)}
    name = "Lotka-Volterra" if K == 3 else "ten-species ring"
    return Problem(name=f"scipy_ivp_{K}", title=f"Jacobian of solve_ivp, {name}, K={K}",
                   target={"jacfwd": 1.0 + IVP_TARGET_PER_PARAMETER * K}, factories=factories,
                   own=("jacfwd", "jacrev"), group="scipy_ivp", size=K)


# -- root -----------------------------------------------------------------------------------


def forced_bratu(p, n: int):
    """The residual of u'' + p₀eᵘ + p₁sin(πt) = 0 on (0, 1), u = 0 at both ends, by
    central differences on n points, times h² (``h = 1/(n + 1)``: the residual's
    rounding then stays near ε, within reach of a tight ``f_tol``)."""
    h = 1.0 / (n + 1)
    forcing = np.sin(np.pi * np.linspace(h, 1.0 - h, n))

    def residual(u):
        padded = np.concatenate(([0.0], u, [0.0]))
        return padded[:-2] - 2.0 * u + padded[2:] + h ** 2 * (p[0] * np.exp(u)
                                                               + p[1] * forcing)

    return residual


def _laplacian(n: int):
    from scipy import sparse

    return sparse.diags([np.ones(n - 1), -2.0 * np.ones(n), np.ones(n - 1)], [-1, 0, 1],
                        format="csc")


def root_solver(n: int) -> Callable:
    """x*(p): ``root`` (hybr) below dualad's sparse threshold, ``newton_krylov``
    preconditioned by the Laplacian's LU above it."""
    from scipy import optimize
    from scipy.sparse import linalg

    from ..solvers.scipy_optimize import SPARSE_FROM

    if n < SPARSE_FROM:
        return lambda p: optimize.root(forced_bratu(p, n), np.zeros(n),
                                       options={"xtol": 1e-12}).x
    lu = linalg.splu(_laplacian(n))
    inverse = linalg.LinearOperator((n, n), matvec=lu.solve)
    return lambda p: optimize.newton_krylov(forced_bratu(p, n), np.zeros(n), f_tol=1e-14,
                                            inner_M=inverse)


#: The point and the direction of the root rows.
ROOT_POINT, ROOT_DIRECTION = np.array([1.0, 0.5]), np.array([1.0, -0.5])


@functools.cache
def _root_reference(n: int) -> tuple[np.ndarray, np.ndarray]:
    """x* and dx*/dp = −(∂F/∂x)⁻¹ ∂F/∂p (n × 2), derived by hand."""
    from scipy import sparse
    from scipy.sparse import linalg

    p = ROOT_POINT
    x = root_solver(n)(p)
    h = 1.0 / (n + 1)
    slope = _laplacian(n) + sparse.diags(h ** 2 * p[0] * np.exp(x), format="csc")
    by_p = h ** 2 * np.stack([np.exp(x), np.sin(np.pi * np.linspace(h, 1.0 - h, n))], axis=1)
    return x, -linalg.splu(slope).solve(by_p)


def scipy_root(n: int) -> Problem:
    """The implicit derivative of :func:`root_solver` ``(n)``'s root."""
    solve, p, v = root_solver(n), ROOT_POINT, ROOT_DIRECTION
    energy = lambda p: 0.5 * np.sum(solve(p) ** 2)  # noqa: E731

    def made(make: Callable[[], Callable], expected: Callable, what: str,
             read: Callable = lambda r: r, rtol: float = EXACT_RTOL) -> Factory:
        def factory():
            x, jacobian = _root_reference(n)
            return checked(make(), expected(x, jacobian), read=read, what=what, rtol=rtol,
                           scaled=True)
        return factory

    def difference():
        step = 1e-6
        return lambda: (solve(p + step * v) - solve(p)) / step

    factories = {
        "primal": lambda: functools.partial(solve, p),
        "jvp": made(lambda: functools.partial(dualad.jvp, solve, (p,), (v,)),
                    lambda x, J: J @ v, "jvp", read=lambda r: r[1]),
        "grad": made(lambda: functools.partial(dualad.grad(energy), p),
                     lambda x, J: J.T @ x, "grad"),
        "jacfwd": made(lambda: functools.partial(dualad.jacfwd(solve), p),
                       lambda x, J: J, "jacfwd"),
        "fd": made(difference, lambda x, J: J @ v, "a forward difference",
                   rtol=DIFFERENCES_RTOL)}
    from ..solvers.scipy_optimize import SPARSE_FROM

    how = "root hybr, dense" if n < SPARSE_FROM else "newton_krylov, sparse"
    return Problem(name=f"scipy_root_{n}", title=f"implicit derivative of {how} dF/dx, n={n}",
                   target=dict(ROOT_TARGETS), factories=factories,
                   own=("jvp", "grad", "jacfwd"), group="scipy_root", size=n)


#: Every problem of this module, in registry order.
SCIPY_SOLVER_PROBLEMS = (*map(scipy_ivp, IVP_SIZES), *map(scipy_root, ROOT_SIZES))
