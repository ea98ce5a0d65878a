"""``scipy.optimize.minimize``'s constraints, for the KKT conditions of an optimum.

SciPy takes constraints as dicts (``{'type': 'eq' | 'ineq', 'fun', 'jac', 'args'}``),
as ``NonlinearConstraint`` (lb ≤ fun(x) ≤ ub) and as ``LinearConstraint``
(lb ≤ A·x ≤ ub), one or a list. Each becomes a function g(x) with bounds
lower ≤ g(x) ≤ upper; the transform's values may be in g (closed over, in ``args``,
in ``A``) and in the bounds. SciPy is given the same constraints on primal values.

At SciPy's optimum x*, a component of g is *active* where it binds. Where the solver
returns its Lagrange multipliers (trust-constr's ``v``, one array per constraint and the
bounds last; SLSQP's ``multipliers``, equalities then inequalities as SciPy splits the
constraints, none for the bounds), they decide (:meth:`Constraints.solver_multipliers`):
a component binds where its multiplier is clearly nonzero, carrying more than
:data:`MULTIPLIER_TOLERANCE` of the gradient's scale (|λᵢ|·‖∇gᵢ‖ against 1 + ‖∇f‖) and
more than its distance to the bound (|gᵢ − boundᵢ|/‖∇gᵢ‖: an interior point's inactive
multipliers are about μ/distance, its active ones stop about μ/λ inside), whatever that
distance (SLSQP may stop outside a badly scaled constraint by more than any tolerance).
Elsewhere (the bounds under SLSQP; L-BFGS-B, TNC, Powell, Nelder-Mead, COBYLA, COBYQA,
which return none) a component is active where it sits on a bound (within
:data:`ACTIVE_TOLERANCE`, relative, widened by a solver's slack) and its multiplier, from
∇f(x*) = Σ λᵢ∇gᵢ(x*) over the active components (least squares), is positive at a
lower bound and negative at an upper one. An equality is always active.

Strict complementarity may fail: a component on its bound with a zero multiplier (weakly
active), or one whose multiplier and distance are within a factor 10 of each other (the
solver cannot tell). The optimum then moves differently as the constraint tightens or
loosens; a RuntimeWarning says so and names the side whose derivative is given: the
loosening side's (the component dropped) for a zero multiplier, else the side the
multiplier chose.

The active set's KKT conditions,

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
#: A solver's multiplier λᵢ is clearly nonzero where |λᵢ|·‖∇gᵢ‖ > this × (1 + ‖∇f‖):
#: a smaller share of the gradient is below what SciPy's default tolerances resolve
#: (SLSQP's ftol 1e-6; trust-constr leaves its inactive multipliers at μ/distance).
MULTIPLIER_TOLERANCE = 1e-6


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

    def solver_multipliers(self, result: Any, x: np.ndarray) -> list | None:
        """The Lagrange multipliers SciPy's ``result`` holds, one array per constraint
        (None for one it gave none), signed as ∇f = Σ λᵢ∇gᵢ: positive at a lower bound;
        None if the solver returns none (or not in the layout SciPy 1.17 gives)."""
        sizes = [np.size(primal_value(c.g(x))) if c.g is not None else 0
                 for c in self.items]
        if isinstance(getattr(result, "v", None), list):  # trust-constr: ∇f + Σ Jᵀv = 0
            v = [-np.reshape(np.asarray(vi, float), (-1,)) for vi in result.v]
            fits = len(v) == len(sizes) and all(a.size == m for a, m in zip(v, sizes))
            return v if fits else None
        flat = getattr(result, "multipliers", None)
        if flat is None:
            return None
        return self._slsqp(np.reshape(np.asarray(flat, float), (-1,)), sizes)

    def _slsqp(self, flat: np.ndarray, sizes: list) -> list | None:
        """SLSQP's multipliers (c(x) ≥ 0 or = 0, ∇f = Σ λ∇c) per constraint, as SciPy
        lays them out: a new-style constraint splits into an equality part (lb = ub) in
        its place and an inequality part (g − lb, then ub − g) appended to the list;
        the equalities come first. The bounds get none."""
        placed, appended = [], []
        for k, c in enumerate(self.items):
            if c.for_scipy is None:  # the bounds
                continue
            if isinstance(c.for_scipy, dict):
                kind = str(c.for_scipy.get("type", "")).lower()
                placed.append((kind, k, np.arange(sizes[k]), np.ones(sizes[k])))
                continue
            lower, upper = (np.broadcast_to(primal_value(b), (sizes[k],)) for b in (c.lower,
                                                                                 c.upper))
            eq = lower == upper
            below, above = (lower != -np.inf) ^ eq, (upper != np.inf) ^ eq
            parts = [("eq", k, np.flatnonzero(eq), np.ones(eq.sum()))] if eq.any() else []
            if below.any() or above.any():
                parts.append(("ineq", k, np.concatenate([np.flatnonzero(below),
                                                         np.flatnonzero(above)]),
                              np.concatenate([np.ones(below.sum()), -np.ones(above.sum())])))
            placed.extend(parts[:1])
            appended.extend(parts[1:])
        parts = placed + appended
        parts = [p for p in parts if p[0] == "eq"] + [p for p in parts if p[0] == "ineq"]
        if sum(p[2].size for p in parts) != flat.size:
            return None
        out = [None if c.for_scipy is None else np.zeros(m)
               for c, m in zip(self.items, sizes)]
        start = 0
        for _, k, index, sign in parts:
            np.add.at(out[k], index, sign * flat[start:start + index.size])
            start += index.size
        return out

    def active_at(self, objective: Callable, x: np.ndarray, name: str, slack: float = 0.0,
                  multipliers: list | None = None) -> ActiveSet | None:
        """The constraints binding at the optimum ``x`` (None if none does); ``slack``
        widens what may be on a bound, for solvers that stop short of it by their own
        tolerance (bounded Brent, an interior point method's barrier): the multipliers
        then decide. ``multipliers`` (from :meth:`solver_multipliers`) decide for the
        constraints they cover, the distance and least squares for the others."""
        from ..forward import jacfwd
        from ..reverse import grad

        if not self.items:
            return None
        unknown = sorted(type(c.for_scipy).__name__ for c in self.items if c.g is None)
        if unknown:
            raise TypeError(f"{name}: dualad differentiates constraints given as dicts, "
                            f"NonlinearConstraint and LinearConstraint, not {unknown}")
        gradient = primal_value(grad(objective, replay=False)(x))
        scale = 1e-10 * (1 + np.abs(gradient).max(initial=0.0))
        multipliers = multipliers or [None] * len(self.items)
        # (constraint, component, at its lower bound, an equality, on the bound without
        # the slack, the solver's verdict: None, or (binds, ambiguous))
        rows, weak = [], 0
        for c, lam in zip(self.items, multipliers):
            v = np.reshape(primal_value(c.g(x)), (-1,))
            lower, upper = (np.broadcast_to(primal_value(b), v.shape) for b in (c.lower,
                                                                            c.upper))
            norms = None if lam is None else np.abs(np.reshape(primal_value(
                jacfwd(c.g, replay=False)(x)), (v.size, -1))).max(axis=1, initial=0.0)
            for i in range(v.size):
                # (distance beyond the tolerance, at the lower bound, on it, |g − bound|)
                near = [(abs(v[i] - b) - ACTIVE_TOLERANCE * (1 + abs(b)), is_lower,
                         abs(v[i] - b) <= ACTIVE_TOLERANCE * (1 + abs(b)), abs(v[i] - b))
                        for b, is_lower in ((lower[i], True), (upper[i], False))
                        if np.isfinite(b)]
                if not near:
                    continue
                equality = lower[i] == upper[i]
                if lam is None:
                    rows += [(c, i, is_lower, equality, on, None)
                             for distance, is_lower, on, _ in near if distance <= slack][:1]
                    continue
                binds, ambiguous, is_lower, on = _verdict(
                    lam[i] * norms[i] / (1 + np.abs(gradient).max(initial=0.0)),
                    max(norms[i], np.finfo(float).tiny), near, equality)
                if binds or (ambiguous and on):  # (a weak one kept for the LICQ check)
                    rows.append((c, i, is_lower, equality, on, (binds, ambiguous)))
                weak += ambiguous and not binds
        if weak:
            warnings.warn(f"{name}: a constraint's multiplier and its distance to its "
                          "bound are both about zero at the optimum (strict "
                          "complementarity fails, or the solver cannot tell), so the "
                          "optimum moves differently as it tightens or loosens: the "
                          "derivative given is the loosening side's", RuntimeWarning,
                          stacklevel=4)
        if any(row[5] == (True, True) for row in rows):
            warnings.warn(f"{name}: a constraint's multiplier and its distance to its "
                          "bound are about equal at the optimum (the solver cannot tell "
                          "whether it binds), so the optimum may move differently as it "
                          "tightens or loosens: the derivative given is the tightening "
                          "side's (its multiplier's verdict)", RuntimeWarning, stacklevel=4)
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
            binding = [row[5][0] if row[5] else
                       row[3] or (lam > scale if row[2] else lam < -scale)
                       for row, lam in zip(rows, active.multipliers)]
            if all(binding) and dependent:  # a row within the slack only, the weakest
                weakest = min((k for k, row in enumerate(rows) if not row[4]),
                              key=lambda k: abs(active.multipliers[k]))
                binding[weakest] = False
            elif all(binding):
                return active
            if any(abs(lam) <= scale and row[4] and row[5] is None
                   for row, lam in zip(rows, active.multipliers)):
                warnings.warn(f"{name}: a constraint is active with a zero multiplier at "
                              "the optimum, so the optimum moves differently as it "
                              "tightens or loosens: the derivative given is the "
                              "loosening side's", RuntimeWarning, stacklevel=4)
            rows = [row for row, binds in zip(rows, binding) if binds]
        return None


def _verdict(share: float, norm: float, near: list, equality: bool) -> tuple:
    """(binds, ambiguous, at its lower bound, on it) for a component of g whose solver's
    multiplier carries ``share`` of the gradient's scale (signed: positive at a lower
    bound), ‖∇g‖ being ``norm``; ``near`` lists (distance beyond the tolerance, lower,
    on it, |g − bound|) per finite bound. It binds where the share is clearly nonzero
    and exceeds its distance to that bound in x, |g − bound|/‖∇g‖ (an equality always
    binds); it is ambiguous where the two are within a factor 10 of each other, or
    where it sits on its bound without binding (weakly active)."""
    side = [n for n in near if n[1] == (share > 0)] or near
    if abs(share) <= MULTIPLIER_TOLERANCE or equality:
        side = [min(near)]
    _, is_lower, on, gap = side[0]
    share, apart = abs(share), gap / norm
    if equality:
        return True, False, is_lower, on
    binds = share > MULTIPLIER_TOLERANCE and share > apart
    ambiguous = share <= 10 * apart if binds else (on or apart <= 10 * share)
    return binds, ambiguous, is_lower, on


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
