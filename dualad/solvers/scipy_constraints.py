"""``scipy.optimize.minimize``'s constraints, for the KKT conditions of an optimum.

SciPy takes constraints as dicts (``{'type': 'eq' | 'ineq', 'fun', 'jac', 'args'}``),
as ``NonlinearConstraint`` (lb ≤ fun(x) ≤ ub) and as ``LinearConstraint``
(lb ≤ A·x ≤ ub), one or a list. Each becomes a function g(x) with bounds
lower ≤ g(x) ≤ upper; the transform's values may be in g (closed over, in ``args``,
in ``A``) and in the bounds. SciPy is given the same constraints on primal values.

At SciPy's optimum x*, a component of g is *active* where it sits on a bound (within
:data:`ACTIVE_TOLERANCE`, relative) and binds: its Lagrange multiplier, from
∇f(x*) = Σ λᵢ∇gᵢ(x*) over the active components (least squares), is positive at a
lower bound and negative at an upper one (an equality's has either sign). The active
set's KKT conditions,

    ∇f(x) − Σ λᵢ∇gᵢ(x) = 0,    gᵢ(x) − boundᵢ = 0,

are a square system in (x, λ): the implicit function theorem of
:mod:`dualad.solvers.scipy_optimize` moves the optimum with the parameters, its
Jacobian in (x, λ) being the KKT matrix [[∇²L, −Jᵀ], [J, 0]]. It is regular where
the active gradients are independent (LICQ) and the minimum is strict on their
tangent space; elsewhere the derivative does not exist, and a TypeError says why.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import primal_value
from ..operands import as_operand
from .scipy_optimize import _holds_box, _primal_tree, _vector, _Watched

#: A component of g is on a bound where |g − bound| ≤ this × (1 + |bound|).
ACTIVE_TOLERANCE = 1e-6


class _Constraint:
    """lower ≤ g(x) ≤ upper, and the constraint SciPy is given (primal values)."""

    def __init__(self, g: Callable | None, lower: Any, upper: Any, for_scipy: Any,
                 watched: list, values: Any = ()) -> None:
        self.g, self.lower, self.upper, self.for_scipy = g, lower, upper, for_scipy
        self.watched, self.values = watched, values

    @property
    def boxed(self) -> bool:
        return any(w.boxed for w in self.watched) or _holds_box(
            (self.lower, self.upper, self.values))


def _watched(f: Any) -> Any:
    return _Watched(f) if callable(f) else f


def _constraint(given: Any) -> _Constraint:
    from scipy.optimize import LinearConstraint, NonlinearConstraint

    if isinstance(given, dict):
        fun, args = given["fun"], given.get("args", ())
        args = args if isinstance(args, tuple) else (args,)
        watched = [_Watched(fun), _watched(given.get("jac"))]
        for_scipy = {**given, "fun": watched[0], "args": _primal_tree(args)}
        if "jac" in given:
            for_scipy["jac"] = watched[1]
        upper = 0.0 if given.get("type") == "eq" else np.inf
        return _Constraint(lambda x: _vector(fun(x, *args)), 0.0, upper, for_scipy,
                           [w for w in watched if isinstance(w, _Watched)], args)
    if isinstance(given, NonlinearConstraint):
        for_scipy = copy.copy(given)
        for_scipy.fun, for_scipy.jac, for_scipy.hess = (
            _watched(given.fun), _watched(given.jac), _watched(given.hess))
        for_scipy.lb, for_scipy.ub = _primal_tree(given.lb), _primal_tree(given.ub)
        watched = [w for w in (for_scipy.fun, for_scipy.jac, for_scipy.hess)
                   if isinstance(w, _Watched)]
        return _Constraint(lambda x: _vector(given.fun(x)), as_operand(given.lb),
                           as_operand(given.ub), for_scipy, watched)
    if isinstance(given, LinearConstraint):
        from scipy import sparse

        for_scipy = LinearConstraint(_primal_tree(given.A), _primal_tree(given.lb),
                                     _primal_tree(given.ub), given.keep_feasible)
        # (a scipy.sparse A cannot multiply Duals: the derivative takes it dense)
        A = given.A.toarray() if sparse.issparse(given.A) else given.A
        return _Constraint(lambda x: A @ x, given.lb, given.ub, for_scipy, [], given.A)
    return _Constraint(None, None, None, given, [])


class Constraints:
    """``minimize``'s ``constraints``: SciPy's form on primal values
    (:attr:`for_scipy`), whether they hold the transform's values (:attr:`boxed`),
    and the active set at an optimum (:meth:`active_at`)."""

    def __init__(self, given: Any) -> None:
        many = isinstance(given, (list, tuple)) or given is None
        self.items = [_constraint(c) for c in ((given or ()) if many else [given])]
        self.for_scipy = [c.for_scipy for c in self.items] if many \
            else self.items[0].for_scipy

    @property
    def boxed(self) -> bool:
        return any(c.boxed for c in self.items)

    def bound(self, lower: Any, upper: Any) -> None:
        """Take the bounds lower ≤ x ≤ upper as one more constraint (after the solve:
        SciPy is given them as bounds)."""
        self.items.append(_Constraint(lambda x: x, lower, upper, None, [], (lower, upper)))

    def active_at(self, objective: Callable, x: np.ndarray, name: str, slack: float = 0.0
                  ) -> ActiveSet | None:
        """The constraints binding at the optimum ``x`` (None if none does); ``slack``
        widens what may be on a bound, for solvers that stop short of it by their own
        tolerance (bounded Brent, an interior point method's barrier): the multipliers
        then decide."""
        from ..forward import jacfwd
        from ..reverse import grad

        if not self.items:
            return None
        unknown = sorted(type(c.for_scipy).__name__ for c in self.items if c.g is None)
        if unknown:
            raise TypeError(f"{name}: dualad differentiates constraints given as dicts, "
                            f"NonlinearConstraint and LinearConstraint, not {unknown}")
        # (constraint, component, at its lower bound, an equality, on the bound without
        # the slack): the components that may be on a bound
        rows = []
        for c in self.items:
            v = np.reshape(primal_value(c.g(x)), (-1,))
            lower, upper = (np.broadcast_to(primal_value(b), v.shape) for b in (c.lower,
                                                                            c.upper))
            for i in range(v.size):
                for bound, is_lower in ((lower[i], True), (upper[i], False)):
                    if not np.isfinite(bound):
                        continue
                    distance = abs(v[i] - bound) - ACTIVE_TOLERANCE * (1 + abs(bound))
                    if distance <= slack:
                        rows.append((c, i, is_lower, lower[i] == upper[i], distance <= 0))
                        break
        gradient = primal_value(grad(objective, replay=False)(x))
        scale = 1e-10 * (1 + np.abs(gradient).max(initial=0.0))
        while rows:
            active = ActiveSet(rows)
            J = np.reshape(primal_value(jacfwd(active.values, replay=False)(x)),
                           (len(rows), -1))
            dependent = np.linalg.matrix_rank(J) < len(rows)
            if dependent and all(row[4] for row in rows):
                raise TypeError(f"{name}: the gradients of the {len(rows)} active "
                                "constraints are linearly dependent at the optimum (LICQ "
                                "fails): the multipliers, and the derivative, are not unique")
            active.multipliers = np.linalg.lstsq(J.T, gradient, rcond=None)[0]
            binding = [equality or (lam > scale if is_lower else lam < -scale)
                       for (_, _, is_lower, equality, _), lam in zip(rows, active.multipliers)]
            if all(binding) and dependent:  # a row within the slack only, the weakest
                weakest = min((k for k, row in enumerate(rows) if not row[4]),
                              key=lambda k: abs(active.multipliers[k]))
                binding[weakest] = False
            elif all(binding):
                return active
            if any(abs(lam) <= scale and row[4]
                   for row, lam in zip(rows, active.multipliers)):
                warnings.warn(f"{name}: a constraint is active with a zero multiplier at "
                              "the optimum, so the optimum moves differently as it "
                              "tightens or loosens: the derivative given is the "
                              "loosening side's", RuntimeWarning, stacklevel=4)
            rows = [row for row, binds in zip(rows, binding) if binds]
        return None


class ActiveSet:
    """The active components gᵢ(x) − boundᵢ, and the KKT conditions they give."""

    def __init__(self, rows: list) -> None:
        self.rows = rows
        self.multipliers = np.zeros(len(rows))

    def values(self, x: Any) -> Any:
        """gᵢ(x) − boundᵢ over the active components (zero at the optimum)."""
        parts, computed = [], {}
        for c, i, is_lower, *_ in self.rows:
            if id(c) not in computed:
                g = np.reshape(c.g(x), (-1,))
                zeros = np.zeros(np.shape(primal_value(g)))  # (bounds broadcast to g)
                computed[id(c)] = g, zeros + c.lower, zeros + c.upper
            g, lower, upper = computed[id(c)]
            parts.append(g[i] - (lower if is_lower else upper)[i])
        return np.stack(parts)

    def conditions(self, objective: Callable, at: Callable, free: int) -> Callable:
        """z = (x_free, λ) -> the KKT residual of ``objective`` at x = ``at(x_free)``."""
        from ..reverse import grad

        def residual(z: Any) -> Any:
            x_free, lam = z[:free], z[free:]
            lagrangian = lambda xf: objective(at(xf)) - lam @ self.values(at(xf))
            return np.concatenate([grad(lagrangian, replay=False)(x_free),
                                   self.values(at(x_free))])
        return residual
