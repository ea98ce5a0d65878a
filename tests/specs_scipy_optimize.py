"""Spec rows: scipy.optimize's root finders, minimisers and fits, and
scipy.integrate's quadratures and ODE solvers (dualad/solvers/scipy_optimize.py,
scipy_minimize.py, scipy_quadrature.py, scipy_integrate.py, scipy_ivp.py).

Each row solves, with SciPy's solver at a tight tolerance, an equation whose
parameters are the row's arguments — closed over by the callback, or passed by
``args=`` — so that central differences of the solver check the implicit
function theorem's derivatives to the row's tolerance. The equations have one
regular root over the whole domain (x³ + x = a, a contraction for
``fixed_point``), the minimisers one minimum. A minimiser stops at a gradient of
about 1e-12, so differences of its optimum are good to about 1e-5: those rows
check to 1e-4 (``tests/test_scipy_minimize.py`` checks closed forms to 1e-12).
The fits are of a line, exact (``curve_fit`` given its Jacobian, whose ``pcov``
SciPy would otherwise compute from differences); ``quad`` (weighted too) and
``quad_vec`` run at their default tolerances (few pieces for these integrands: the
rows stay fast; ``dblquad``, ``tplquad`` and ``nquad``, quad inside quad, are tested
in ``tests/test_scipy_quadrature.py``). The other rows have no JAX twin: JAX has
none of these solvers (nor ``rosen``). The ODE rows
(``solve_ivp``) are ``adaptive``: they agree with themselves (batches, chunks,
forward and reverse) to their tolerance, not to rounding; they are checked against
classical RK4 written in JAX (JAX's own ``odeint`` has reverse mode only). The rows are
``gpu=False`` (no JAX kernel computes them): SciPy's solvers need NumPy values, and
dualad_gpu runs every row on the host (tests/test_gpu_scipy_solvers.py). The Rosenbrock
rows are plain NumPy, on JAX's kernels under dualad_gpu.
"""

from __future__ import annotations

import numpy as np
from specs import Spec

try:
    import scipy.integrate as si
    import scipy.optimize as so
except ImportError:  # scipy is optional
    so = None

TIGHT = 1e-15
SYSTEM_TOL = 1e-13  # (MINPACK stops short of a tighter one: success False)
SCALAR = (((),),)
VECTOR = (((3,),),)


def _cubic(a):
    """The residual of x³ + x = a (one real root, F' ≥ 1)."""
    return lambda x: x ** 3 + x - a


def _separable(x, a):
    """An objective with one minimum, moving with a: Σ (x − a)² + x⁴/10."""
    return np.sum((x - a) ** 2) + 0.1 * np.sum(x ** 4)


LINE = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])


def _on_sphere(r2):
    """|x|² = r2, with its exact derivatives (trust-constr then converges to ~1e-11)."""
    return so.NonlinearConstraint(lambda x: x @ x, r2, r2, jac=lambda x: 2 * x[None, :],
                                  hess=lambda x, v: 2 * v[0] * np.eye(x.size))


def _soft_l1(z):
    """SciPy's soft_l1 loss as a callable: (ρ, ρ′, ρ″) of z."""
    return np.stack([2 * ((1 + z) ** 0.5 - 1), (1 + z) ** -0.5, -0.5 * (1 + z) ** -1.5])


def _coupled(x, a, b):
    """A coupled system of three equations, regular for |b| ≤ 1: x + tanh(b x)/5 = a."""
    return x + 0.2 * np.tanh(b @ x) - a


def _weighted_integrals(a, b):
    """quad's weights (cos, alg, cauchy) on integrands, limits and weights that move with
    a and b (in float64 for float32 a, b: float32 rounding stalls QUADPACK's refinement)."""
    a, b = np.astype(np.stack([a, b]), np.float64)
    return (si.quad(lambda x: np.exp(-a * x), 0.0, b + 2.0, weight="cos", wvar=b)[0],
            si.quad(lambda x, c: np.exp(c * x), b - 1.5, 1.5, args=(a,), weight="alg",
                    wvar=(a / 2, -0.5))[0],
            si.quad(lambda x: np.cos(a * x), -2.0, 2.0 + b / 2, weight="cauchy",
                    wvar=b / 2)[0])


def _vector_integrals(a, b):
    """quad_vec of a closed-over and an args integrand, between moving limits (in float64
    for float32 a, b too: quad_vec would refine float32 rounding to 10000 intervals)."""
    k = np.astype(np.stack([a, b]), np.float64)
    return (si.quad_vec(lambda x: np.exp(-k[0] * x) * np.array([1.0, np.cos(k[1] * x)]),
                        0.0, 2.0)[0],
            si.quad_vec(lambda x, c: np.exp(-x ** 2) * c, k[1], k[0] + 3.0, args=(k,))[0])


VECTOR2 = (((2,),),)
ODE_TIMES = np.array([0.0, 0.5, 1.0])
ODE_TIGHT = {"rtol": 1e-10, "atol": 1e-10}


def _forced(t, y, a):
    """A damped, forced oscillator whose stiffness and forcing move with a."""
    return np.array([y[1], -(1.0 + a[0] ** 2) * y[0] - 0.3 * y[1] + a[1] * np.sin(t)])


def _forced_jax(t, y, a):
    import jax.numpy as jnp
    return jnp.stack([y[1], -(1.0 + a[0] ** 2) * y[0] - 0.3 * y[1] + a[1] * jnp.sin(t)])


def _rk4_jax(rhs, a, steps_per_unit=1000):
    """The solution at ODE_TIMES[1:] by classical RK4 with 1000 steps per unit time
    (error about 1e-13): JAX's own ODE solver has reverse mode only, these rows check
    forward mode and Hessians too."""
    import jax
    import jax.numpy as jnp

    def step(state, _, h):
        t, y = state
        k1 = rhs(t, y, a)
        k2 = rhs(t + h / 2, y + h / 2 * k1, a)
        k3 = rhs(t + h / 2, y + h / 2 * k2, a)
        k4 = rhs(t + h, y + h * k3, a)
        return (t + h, y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)), None

    y, rows = jnp.array([1.0, 0.0]), []
    for t0, t1 in zip(ODE_TIMES[:-1], ODE_TIMES[1:]):
        n = int(round((t1 - t0) * steps_per_unit))
        h = (t1 - t0) / n
        (_, y), _ = jax.lax.scan(lambda c, x, h=h: step(c, x, h), (t0, y), None, length=n)
        rows.append(y)
    return jnp.stack(rows)


ROWS: list[Spec] = []
if so is not None:
    ROWS = [
        Spec("scipy.optimize.root",
             lambda a, b: so.root(_coupled, np.zeros(3), args=(a, b), tol=SYSTEM_TOL).x,
             (((3,), (3, 3)),), (-1.0, 1.0), variant="hybr, args", gpu=False),
        Spec("scipy.optimize.root",
             lambda a: so.root(_cubic(a), np.zeros(3), method="lm", tol=SYSTEM_TOL).x,
             VECTOR, variant="lm, closure", gpu=False),
        Spec("scipy.optimize.fsolve",
             lambda a, b: so.fsolve(lambda x: _coupled(x, a, b), np.zeros(3), xtol=SYSTEM_TOL),
             (((3,), (3, 3)),), (-1.0, 1.0), gpu=False),
        *[Spec(f"scipy.optimize.{name}",
               lambda a, name=name: getattr(so, name)(_cubic(a), np.zeros(3), f_tol=1e-14),
               VECTOR, gpu=False) for name in ("anderson", "broyden2")],
        *[Spec(f"scipy.optimize.{name}",
               lambda a, name=name: getattr(so, name)(_cubic(a), -3.0, 3.0, xtol=TIGHT),
               SCALAR, gpu=False) for name in ("brentq", "brenth", "ridder", "toms748")],
        Spec("scipy.optimize.bisect",
             lambda a: so.bisect(lambda x, c: x ** 3 + x - c, -3.0, 3.0, args=(a,), xtol=TIGHT),
             SCALAR, gpu=False),
        Spec("scipy.optimize.newton",
             lambda a: (so.newton(_cubic(a), 0.5, tol=TIGHT),
                        so.newton(_cubic(a), 0.5, fprime=lambda x: 3 * x ** 2 + 1, tol=TIGHT)),
             SCALAR, variant="secant, newton", gpu=False),
        Spec("scipy.optimize.newton", lambda a: so.newton(_cubic(a), np.zeros(3), tol=TIGHT),
             VECTOR, variant="array", gpu=False),
        Spec("scipy.optimize.root_scalar",
             lambda a: (so.root_scalar(_cubic(a), bracket=[-3.0, 3.0], xtol=TIGHT).root,
                        so.root_scalar(_cubic(a), x0=0.5, fprime=lambda x: 3 * x ** 2 + 1,
                                       xtol=TIGHT).root),
             SCALAR, gpu=False),
        Spec("scipy.optimize.rosen", lambda x: so.rosen(x), (((4,),), ((3, 2),))),
        Spec("scipy.optimize.rosen_der", lambda x: so.rosen_der(x), (((4,),),)),
        Spec("scipy.optimize.rosen_hess", lambda x: so.rosen_hess(x), (((4,),),)),
        Spec("scipy.optimize.rosen_hess_prod", lambda x, p: so.rosen_hess_prod(x, p),
             (((4,), (4,)),)),
        Spec("scipy.optimize.minimize",
             lambda a: so.minimize(_separable, np.zeros(3), args=(a,), method="trust-ncg",
                                   jac=lambda x, a: 2 * (x - a) + 0.4 * x ** 3,
                                   hess=lambda x, a: np.diag(2 + 1.2 * x ** 2), tol=1e-12).x,
             VECTOR, rtol=1e-4, atol=1e-4, variant="trust-ncg, args", gpu=False),
        Spec("scipy.optimize.minimize",
             lambda a: so.minimize(_separable, np.zeros(3), args=(a,), method="trust-constr",
                                   jac=lambda x, a: 2 * (x - a) + 0.4 * x ** 3,
                                   hess=lambda x, a: np.diag(2 + 1.2 * x ** 2),
                                   constraints=_on_sphere(1.0 + 0.1 * a[0]),
                                   options={"gtol": TIGHT, "xtol": TIGHT}).x,
             VECTOR, domain=(1.0, 2.0), rtol=1e-4, atol=1e-4,
             variant="trust-constr, a constraint", gpu=False),
        Spec("scipy.optimize.minimize_scalar",
             lambda a: so.minimize_scalar(lambda x: (x - a) ** 2 + 0.1 * x ** 4, tol=1e-14).x,
             SCALAR, rtol=1e-4, atol=1e-4, gpu=False),
        Spec("scipy.optimize.least_squares",
             lambda y: so.least_squares(lambda c: LINE @ c - y, np.zeros(2), method="lm").x,
             (((4,),),), gpu=False),
        Spec("scipy.optimize.least_squares",
             lambda y: so.least_squares(lambda c: LINE @ c - y, np.zeros(2), loss=_soft_l1,
                                        f_scale=0.5, xtol=TIGHT, ftol=TIGHT, gtol=TIGHT).x,
             (((4,),),), rtol=1e-4, atol=1e-4, variant="callable loss", gpu=False),
        Spec("scipy.optimize.curve_fit",
             lambda y: so.curve_fit(lambda t, a, b: a + b * t, LINE[:, 1], y, p0=[0.0, 0.0],
                                    jac=lambda t, a, b: LINE),
             (((4,),),), variant="popt, pcov", gpu=False),
        # -- scipy.integrate: quad on QUADPACK's partition, rules on samples -----------
        Spec("scipy.integrate.quad",
             lambda a, b: (si.quad(lambda x: np.exp(-a * x) * np.cos(b * x), 0.0, 2.0)[0],
                           si.quad(lambda x, c: np.exp(-x ** 2) * c, b, a + 3.0, args=(a,))[0]),
             (((), ()),), (-1.0, 1.0), variant="closure, args, limits", gpu=False),
        Spec("scipy.integrate.quad", _weighted_integrals, (((), ()),), (-1.0, 1.0),
             variant="weight: cos, alg, cauchy", gpu=False),
        Spec("scipy.integrate.quad_vec", _vector_integrals, (((), ()),), (-1.0, 1.0),
             variant="closure, args, limits", gpu=False),
        Spec("scipy.integrate.fixed_quad",
             lambda a, b: si.fixed_quad(lambda x, c: np.exp(-c * x) * np.sin(x), b, a + 3.0,
                                        args=(a,), n=8)[0],
             (((), ()),), (-1.0, 1.0), gpu=False),
        Spec("scipy.integrate.simpson",
             lambda y: (si.simpson(y), si.simpson(y, x=np.linspace(0.0, 2.0, 6)),
                        si.simpson(y[:5], dx=0.3)),
             (((6,),),), gpu=False),
        Spec("scipy.integrate.romb", lambda y, dx: (si.romb(y), si.romb(y, dx=dx)),
             (((9,), ()),), gpu=False),
        Spec("scipy.integrate.cumulative_trapezoid",
             lambda y, x: (si.cumulative_trapezoid(y, x), si.cumulative_trapezoid(y, dx=0.5,
                                                                              initial=0.0)),
             (((5,), (5,)), ((2, 5), (5,))), gpu=False),
        # -- scipy.integrate: ODE solutions (forward sensitivities, adjoint) ------------
        # (the implicit methods are slower: tests/test_scipy_ivp.py and
        # test_scipy_integrate.py)
        Spec("scipy.integrate.solve_ivp",
             lambda a: si.solve_ivp(_forced, (0.0, 1.0), [1.0, 0.0], t_eval=ODE_TIMES[1:],
                                    args=(a,), **ODE_TIGHT).y,
             VECTOR2, (-1.0, 1.0), variant="RK45, args", gpu=False, adaptive=True,
             jax=lambda a: _rk4_jax(_forced_jax, a).T),
        Spec("scipy.integrate.solve_ivp",
             lambda a: si.solve_ivp(lambda t, y: _forced(t, y, a), (0.0, 1.0), [1.0, 0.0],
                                    method="DOP853", t_eval=ODE_TIMES[1:], **ODE_TIGHT).y,
             VECTOR2, (-1.0, 1.0), variant="DOP853, closure", gpu=False, adaptive=True,
             jax=lambda a: _rk4_jax(_forced_jax, a).T),
        Spec("scipy.integrate.odeint",
             lambda a: si.odeint(lambda y, t: _forced(t, y, a), [1.0, 0.0], ODE_TIMES,
                                 **ODE_TIGHT)[1:],
             VECTOR2, (-1.0, 1.0), variant="closure", gpu=False, adaptive=True,
             jax=lambda a: _rk4_jax(_forced_jax, a)),

        Spec("scipy.optimize.fixed_point",
             lambda a: so.fixed_point(lambda x: 0.5 * np.cos(x) + a, np.zeros(3), xtol=TIGHT),
             VECTOR, gpu=False),
    ]
