"""scipy.optimize's minimisers and fits, differentiated at their optimum.

A minimum x* of f(x, p) solves ∇ₓf(x*, p) = 0: the implicit function theorem of
:mod:`dualad.solvers.scipy_optimize` applies to the gradient, whose Jacobian is the
Hessian (forward over reverse, from the same rule table). Components held at an
active bound follow the bound (their derivative is the bound's: 0 for a constant
bound); the others satisfy the gradient equation with those held (``least_squares``
holds what its ``active_mask`` says; the others take their bounds as constraints,
see below). As for the root finders, parameters reach the objective through
``args=`` or closed over, SciPy's own optimum is the primal, bit for bit, and a run
that did not succeed warns.

- ``minimize`` (every method, ``bounds`` and ``constraints`` included): ``x``, and
  ``fun`` (its derivative is ∂f/∂p at x*, the envelope theorem). A constrained
  optimum solves the KKT conditions of its active set, ∇f(x) = Σ λᵢ∇cᵢ(x) and
  cᵢ(x) = 0, whose Jacobian in (x, λ) is the KKT matrix; the constraints (dicts,
  ``NonlinearConstraint``, ``LinearConstraint``, and the bounds, each a constraint
  on its component) may hold the parameters in their functions, their matrices and
  their bounds (see :mod:`.scipy_constraints`). The active set is the solver's where
  it returns multipliers (trust-constr's ``v``, SLSQP's ``multipliers``, not for its
  bounds): a clearly nonzero multiplier binds; elsewhere a constraint on its bound
  (within a relative 1e-6) with a least-squares multiplier of the binding sign. A
  weakly active constraint warns.
- ``minimize_scalar``: ``x`` and ``fun``; a minimum on a bound (``bounded``,
  which stops within its ``xatol`` of it) follows the bound.
- ``least_squares`` (SciPy's robust losses and a callable ``loss``, bounds through
  its ``active_mask``): ``x``, ``cost`` and ``fun`` (the residuals at x*).
- ``curve_fit``: ``popt`` and ``pcov`` in ``ydata``, ``sigma``, ``xdata``, the
  bounds (a parameter on one follows it) and what the model closes over — the
  error propagation people do by hand. ``pcov`` is differentiated as (JᵀJ)⁻¹ s²
  with the exact Jacobian J of the weighted residuals (its primal stays SciPy's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..dual import primal_value
from ..operands import as_operand
from .scipy_constraints import Constraints
from ..rules.scipy_functions import original, scipy_rule, with_primal
from .scipy_optimize import (_MODULE, _Watched, _bound, _holds_box, _implicit,
                             _primal_tree, _warn_unconverged)


def _gradient_of(objective: Callable) -> Callable:
    from ..reverse import grad
    return lambda x: grad(objective, replay=False)(x)


def _at_optimum(objective: Callable, x_star: np.ndarray, active: np.ndarray | None,
                held: Any, name: str, constrained: Any = None) -> Any:
    """x* with its perturbations: the free components by the implicit function
    theorem on the gradient (on the KKT conditions of ``constrained``'s active set,
    an :class:`~.scipy_constraints.ActiveSet`), the ``active`` ones equal to
    ``held`` (their bounds)."""
    free = np.ones(x_star.shape, bool) if active is None else ~active
    fixed = x_star[~free] if held is None else held[~free]

    def at(x_free: Any) -> Any:
        return x_free if free.all() else _assembled(x_free, fixed, free)

    if constrained is not None:
        z = _implicit(constrained.conditions(objective, at, free.sum()),
                      np.concatenate([x_star[free], constrained.multipliers]), name)
        return at(z[:free.sum()])
    if not np.any(free):
        return at(x_star[free])
    return at(_implicit(_gradient_of(lambda x_free: objective(at(x_free))), x_star[free],
                        name))


def _assembled(x_free: Any, fixed: Any, free: np.ndarray) -> Any:
    """The vector with ``x_free`` where ``free``, ``fixed`` elsewhere."""
    order = np.argsort(np.concatenate([np.flatnonzero(free), np.flatnonzero(~free)]),
                       kind="stable")
    return np.concatenate([np.reshape(x_free, (-1,)), np.reshape(fixed, (-1,))])[order]


class _Limits(NamedTuple):
    """A ``Bounds``' limits as operands (an object array holding Duals as one Dual)."""

    lb: Any
    ub: Any
    given: Any  # the user's Bounds


def _limits(bounds: Any) -> Any:
    """``bounds``, a ``Bounds`` as :class:`_Limits` (what the derivative reads)."""
    if hasattr(bounds, "lb") and hasattr(bounds, "keep_feasible"):
        return _Limits(as_operand(bounds.lb), as_operand(bounds.ub), bounds)
    return bounds


def _for_scipy(bounds: Any) -> Any:
    """``bounds`` on primal values, as SciPy takes them."""
    if type(bounds) is not _Limits:
        return _primal_tree(bounds)
    if not _holds_box((bounds.lb, bounds.ub)):
        return bounds.given
    from scipy.optimize import Bounds
    return Bounds(primal_value(bounds.lb), primal_value(bounds.ub),
                  bounds.given.keep_feasible)


def _bound_arrays(bounds: Any, n: int, pairs: bool) -> tuple[Any, Any]:
    """(lower, upper) of ``bounds``, n values each (Duals where the bounds are): a
    ``Bounds`` (:class:`_Limits`), a sequence of ``(min, max)`` pairs with None for no bound if
    ``pairs`` (``minimize``), else ``(lower, upper)`` (``least_squares``)."""
    if hasattr(bounds, "lb"):
        bounds, pairs = (bounds.lb, bounds.ub), False
    if not pairs:
        return tuple(np.zeros(n) + b for b in bounds)
    lower = np.stack([-np.inf if b[0] is None else b[0] for b in bounds])
    upper = np.stack([np.inf if b[1] is None else b[1] for b in bounds])
    return lower, upper


# -- minimize, minimize_scalar ----------------------------------------------------------

@scipy_rule(_MODULE, "minimize", callbacks=True)
def minimize(fun: Callable, x0: Any, args: Any = (), method: Any = None, jac: Any = None,
             hess: Any = None, hessp: Any = None, bounds: Any = None, constraints: Any = (),
             **options: Any) -> Any:
    """``scipy.optimize.minimize``, its ``x`` and ``fun`` differentiated in ``args``,
    the bounds, the constraints and what ``fun`` closes over."""
    watched = _Watched(fun)
    plain = [_Watched(g) if callable(g) else g for g in (jac, hess, hessp)]
    given, bounds = Constraints(constraints), _limits(bounds)
    result = original(_MODULE, "minimize")(
        watched, _primal_tree(x0), args=_primal_tree(args), method=method, jac=plain[0],
        hess=plain[1], hessp=plain[2], bounds=_for_scipy(bounds),
        constraints=given.for_scipy, **options)
    if not (watched.boxed or _holds_box(args) or _holds_box(bounds) or given.boxed):
        return result
    _warn_unconverged("scipy.optimize.minimize", result.success, result.message)
    value = (lambda *a: fun(*a)[0]) if jac is True else fun
    objective = _bound(value, args)
    x = np.reshape(result.x, (-1,))
    if bounds is not None:
        given.bound(*_bound_arrays(bounds, x.size, pairs=True))
    # (trust-constr's interior point stops about μ/λ inside a binding inequality: its
    # multipliers decide, the slack serves only if SciPy laid them out otherwise)
    slack = 100 * getattr(result, "barrier_parameter", 0.0)
    constrained = given.active_at(objective, x, "scipy.optimize.minimize", slack,
                                  given.solver_multipliers(result, x))
    x = np.reshape(_at_optimum(objective, x, None, None, "scipy.optimize.minimize",
                               constrained), np.shape(result.x))
    result.x = x
    result.fun = with_primal(objective(x), result.fun)
    return result


@scipy_rule(_MODULE, "minimize_scalar", callbacks=True)
def minimize_scalar(fun: Callable, bracket: Any = None, bounds: Any = None, args: Any = (),
                    method: Any = None, tol: Any = None, options: Any = None) -> Any:
    """``scipy.optimize.minimize_scalar``, its ``x`` and ``fun`` differentiated in
    ``args``, the bounds and what ``fun`` closes over (a minimum on a bound follows
    the bound)."""
    from ..forward import derivative

    name = "scipy.optimize.minimize_scalar"
    watched, bounds = _Watched(fun), _limits(bounds)
    result = original(_MODULE, "minimize_scalar")(
        watched, bracket=_primal_tree(bracket), bounds=_for_scipy(bounds),
        args=_primal_tree(args), method=method, tol=tol, options=options)
    if not (watched.boxed or _holds_box((args, bounds))):
        return result
    _warn_unconverged(name, result.success, getattr(result, "message", ""))
    objective = _bound(fun, args)
    constrained = None
    if bounds is not None:  # bounded Brent stops within its xatol of a bound
        given = Constraints(())
        given.bound(*_bound_arrays(bounds, 1, pairs=False))
        xatol = (options or {}).get("xatol", 1e-5 if tol is None else tol)
        constrained = given.active_at(lambda v: objective(v[0]), np.array([result.x]),
                                      name, slack=2 * xatol)
    if constrained is not None:
        result.x = _at_optimum(lambda v: objective(v[0]), np.array([result.x]), None, None,
                               name, constrained)[0]
    else:
        result.x = _implicit(lambda x: derivative(objective, replay=False)(x), result.x,
                             name)
    result.fun = with_primal(objective(result.x), result.fun)
    return result


# -- least_squares, curve_fit -------------------------------------------------------------

def _robust_cost(loss: Any, f_scale: Any) -> Callable:
    """½ f_scale² Σ ρ((r/f_scale)²), SciPy's cost for ``loss``: one of its names, or a
    callable returning (ρ, ρ′, ρ″) of which the cost takes ρ."""
    if callable(loss):
        return lambda r: 0.5 * f_scale ** 2 * np.sum(loss((r / f_scale) ** 2)[0])
    rho = {
        "linear": lambda z: z,
        "soft_l1": lambda z: 2 * ((1 + z) ** 0.5 - 1),
        "huber": lambda z: np.where(z <= 1, z, 2 * np.sqrt(np.maximum(z, 1)) - 1),
        "cauchy": lambda z: np.log1p(z),
        "arctan": lambda z: np.arctan(z),
    }.get(loss)
    if rho is None:
        raise ValueError(f"scipy.optimize.least_squares: `loss` must be one of "
                         "'linear', 'soft_l1', 'huber', 'cauchy', 'arctan' or a callable, "
                         f"got {loss!r}")
    return lambda r: 0.5 * f_scale ** 2 * np.sum(rho((r / f_scale) ** 2))


@scipy_rule(_MODULE, "least_squares", callbacks=True)
def least_squares(fun: Callable, x0: Any, jac: Any = "2-point", bounds: Any = (-np.inf, np.inf),
                  *rest: Any, loss: Any = "linear", f_scale: Any = 1.0, args: Any = (),
                  kwargs: Any = None, **options: Any) -> Any:
    """``scipy.optimize.least_squares``, its ``x``, ``cost`` and ``fun`` differentiated in
    ``args``, ``kwargs``, the bounds, ``f_scale`` and what ``fun`` and a callable
    ``loss`` close over."""
    watched, bounds = _Watched(fun), _limits(bounds)
    rho = _Watched(loss) if callable(loss) else None
    result = original(_MODULE, "least_squares")(
        watched, _primal_tree(x0), _Watched(jac) if callable(jac) else jac,
        _for_scipy(bounds), *rest, loss=loss if rho is None else rho,
        f_scale=primal_value(f_scale), args=_primal_tree(args),
        kwargs=_primal_tree(kwargs or {}), **options)
    if not (watched.boxed or (rho is not None and rho.boxed)
            or _holds_box((args, kwargs, bounds, f_scale))):
        return result
    _warn_unconverged("scipy.optimize.least_squares", result.success, result.message)
    residuals = lambda x: np.reshape(fun(x, *_tuple(args), **(kwargs or {})), (-1,))
    cost = _robust_cost(loss, f_scale)
    objective = lambda x: cost(residuals(x))
    x = result.x
    active = result.active_mask != 0
    lower, upper = _bound_arrays(bounds, x.size, pairs=False)
    held = np.where(result.active_mask < 0, lower, upper) if np.any(active) else None
    x = _at_optimum(objective, x, active, held, "scipy.optimize.least_squares")
    result.x = x
    result.fun = with_primal(residuals(x), result.fun)
    result.cost = with_primal(objective(x), result.cost)
    return result


def _tuple(args: Any) -> tuple:
    return args if isinstance(args, tuple) else (args,)


#: curve_fit's positional parameters after ``absolute_sigma``.
_CURVE_FIT_OPTIONS = ("check_finite", "bounds", "method", "jac")


@scipy_rule(_MODULE, "curve_fit", callbacks=True)
def curve_fit(f: Callable, xdata: Any, ydata: Any, p0: Any = None, sigma: Any = None,
              absolute_sigma: bool = False, *rest: Any, full_output: bool = False,
              **options: Any) -> Any:
    """``scipy.optimize.curve_fit``, ``popt`` and ``pcov`` differentiated in ``ydata``,
    ``sigma``, ``xdata``, the bounds and what ``f`` closes over (a parameter on a
    bound follows the bound)."""
    name = "scipy.optimize.curve_fit"
    options.update(zip(_CURVE_FIT_OPTIONS, rest))
    watched = _Watched(f)
    plain = dict(options)
    if callable(options.get("jac")):
        plain["jac"] = _Watched(options["jac"])
    if "bounds" in options:
        options["bounds"] = _limits(options["bounds"])
        plain["bounds"] = _for_scipy(options["bounds"])
    found = original(_MODULE, "curve_fit")(
        watched, _primal_tree(xdata), _primal_tree(ydata), _primal_tree(p0),
        _primal_tree(sigma), absolute_sigma, full_output=full_output, **plain)
    if not (watched.boxed or _holds_box((xdata, ydata, sigma, options.get("bounds")))):
        return found
    popt, pcov = found[:2]
    weighted = _weighted_residuals(f, xdata, ydata, sigma)
    objective = lambda p: 0.5 * np.sum(weighted(p) ** 2)
    given = Constraints(())
    given.bound(*_bound_arrays(options.get("bounds", (-np.inf, np.inf)), popt.size,
                               pairs=False))
    params = _at_optimum(objective, popt, None, None, name,
                         given.active_at(objective, popt, name))
    covariance = _covariance(weighted, params, absolute_sigma)
    out = (params, with_primal(covariance, pcov))
    return (*out, *found[2:]) if full_output else out


def _weighted_residuals(f: Callable, xdata: Any, ydata: Any, sigma: Any) -> Callable:
    """p -> the residuals curve_fit minimises: (f(xdata, *p) − ydata) weighted by
    ``sigma`` (standard deviations, or a covariance matrix by its Cholesky factor)."""
    ydata = np.reshape(ydata, (-1,))

    def residuals(p: Any) -> Any:
        r = np.reshape(f(xdata, *[p[i] for i in range(np.shape(p)[0])]), (-1,)) - ydata
        if sigma is None:
            return r
        if np.ndim(primal_value(sigma)) == 1:
            return r / sigma
        return np.linalg.solve(np.linalg.cholesky(sigma), r)

    return residuals


def _covariance(weighted: Callable, params: Any, absolute_sigma: bool) -> Any:
    """(JᵀJ)⁻¹, scaled by the residual variance unless ``absolute_sigma``."""
    from ..forward import jacfwd

    J = jacfwd(weighted, replay=False)(params)
    covariance = np.linalg.inv(J.T @ J)
    if absolute_sigma:
        return covariance
    r = weighted(params)
    dof = np.shape(primal_value(r))[0] - np.shape(primal_value(params))[0]
    return covariance * (np.sum(r ** 2) / dof)
