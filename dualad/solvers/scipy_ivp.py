"""scipy.integrate.solve_ivp differentiated: the trajectory, the event times and
the dense solution, in everything the right-hand side reads.

The parameters reach ``fun`` however the user passes them: ``y0``, ``t_span``,
``args=``, or closed over (a lambda reading ``p``, a helper's closure, a bound
method's object, a ``functools.partial``: see :mod:`dualad.rules.closures`).

1. SciPy's own ``solve_ivp`` runs on the primal values: every field of its result
   is SciPy's, bit for bit, and where nothing is differentiated the result is
   returned untouched.
2. The values ``fun`` closes over become explicit inputs of the primitive that
   :mod:`dualad.solvers.scipy_integrate` writes for ``odeint``, run here with
   solve_ivp's ``method``. Its JVP solves the forward sensitivity equations with the
   state, z = (y, S), z' = (f, ∂f/∂y·S + ∂f/∂p·Ṗ), under the same error control on
   every component (as CVODES' full error control), the implicit methods (Radau,
   BDF, LSODA) given the exact Jacobian of that augmented system; reverse mode
   transposes it into the adjoint method; hyper-duals and nested transforms apply
   the JVP to itself. The derivatives are those of the exact solution, as accurate
   as the solver's tolerances. (Those solves call ``fun`` made again: a list, dict
   or object that holds a parameter is a copy there, so writes into it stay there.)
3. A moving time — ``t_span``'s ends in the parameters, ``t_eval`` in the
   parameters, an event time — is reached
   by :func:`dualad.solvers.scipy_integrate.moved`'s solve over a primal length of zero.
   An event time τ solves g(τ, y(τ)) = 0; chord Newton steps on g, each one order
   more exact, give dτ/dp = −(∂g/∂y·∂y/∂p + ∂g/∂p)/(dg/dt).

``sol`` (``dense_output=True``) evaluates to Duals (:class:`DenseSolution`), its
primal values SciPy's interpolant's. The first call that needs a derivative solves
the sensitivity system once over the whole solve, with dense output (in the seed
directions in forward mode, for every input at once in reverse mode); later calls
only interpolate it, as SciPy's ``sol`` does.

SciPy's solver needs NumPy values: under dualad_gpu a function that calls solve_ivp
is differentiated by dualad's NumPy transforms on the host (see
:class:`dualad.primitive.NeedsHost`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import warnings

import numpy as np

from ..pytrees import tree_leaves
from ..dual import primal_value
from ..fillable import resolved_tree
from ..operands import as_operand
from ..primitive import Boxed, NeedsHost, Primitive, backend_of
from ..rules.closures import lifted
from ..rules.linalg import einsum
from ..rules.scipy_functions import original, scipy_rule, with_primal
from ..rules.shape import concatenate, reshape, transpose
from .scipy_integrate import (_IMPLICIT, _Sensitivity, _augmented_options, _jacobian_of,
                              _vector, augmented_start, moved, odeint_p, refusing_duals)
from .scipy_optimize import _holds_box, _order, _primal_tree, _Watched

_MODULE = "scipy.integrate"


class _Lifted:
    """``fun`` as the primitive's right-hand side f(y, t, *values), the values it
    closes over (and ``args``' Boxed values) passed explicitly."""

    def __init__(self, rebuild: Callable) -> None:
        self.rebuild = rebuild

    def __call__(self, y: Any, t: Any, *values: Any) -> Any:
        fun, args = self.rebuild(values)
        return _vector(fun(t, y, *(args or ())))


class _Trajectory:
    """The differentiated solution of one solve_ivp call: the state at primal times
    (one primitive solve), carried to moving times."""

    def __init__(self, rebuild: Callable, leaves: list, y0: Any, t0: Any, method: Any,
                 options: dict) -> None:
        self.rhs, self.leaves = _Lifted(rebuild), leaves
        self.method, self.options = method, tuple(options.items())
        self.t0 = float(primal_value(t0))
        # y at the primal t₀ (y0 carried there when t₀ itself moves)
        self.y0 = self.moved(y0, t0, self.t0 - t0) if isinstance(t0, Boxed) else y0

    def at(self, times: np.ndarray) -> Any:
        """y at the primal ``times`` (sorted in the direction of integration), a row
        each."""
        grid = times if times[0] == self.t0 else np.concatenate([[self.t0], times])
        if grid.size == 1:
            return np.reshape(self.y0, (1, -1))
        rows = odeint_p(self.y0, *self.leaves, func=self.rhs, t=grid, options=self.options,
                        method=self.method)
        return rows if grid is times else rows[1:]

    def moved(self, y: Any, start: Any, h: Any) -> Any:
        """y carried from ``start`` to ``start + h`` (h: perturbations only)."""
        return moved(self.rhs, y, self.leaves, start, h, self.options, "RK45")

    def rate(self, event: Callable, args: tuple, t: float, y: np.ndarray) -> float:
        """dg/dt along the primal trajectory at (t, y)."""
        from ..forward import jvp
        plain = [primal_value(v) for v in self.leaves]
        slope = self.rhs(y, t, *plain)
        plain_args = _primal_tree(args)
        _, rate = jvp(lambda s, w: event(s, w, *plain_args), (np.float64(t), y),
                      (np.float64(1.0), slope), replay=False)
        rate = float(primal_value(rate))
        if rate == 0 or not np.isfinite(rate):
            raise TypeError("scipy.integrate.solve_ivp: an event function crosses zero "
                            "with zero slope, so the event time has no derivative")
        return rate

    def event(self, event: Callable, args: tuple, t: float, y: Any) -> tuple[Any, Any]:
        """The event time near the primal ``t`` (where the state is ``y``) and the
        state there, with their perturbations."""
        residual = event(t, y, *args)
        if not isinstance(residual, Boxed):
            return t, y
        rate = self.rate(event, args, t, primal_value(y))
        tau: Any = t
        for step in range(_order(residual)):
            if step:
                residual = event(tau, self.moved(y, t, tau - t), *args)
            tau = tau - (residual - primal_value(residual)) / rate
        return tau, self.moved(y, t, tau - t)


def _sorted_times(times: Sequence[float], forward: bool) -> np.ndarray:
    unique = np.unique(np.asarray(times, dtype=float))
    return unique if forward else unique[::-1]


def _watched_events(events: list) -> list:
    watched = []
    for event in events:
        plain = _Watched(event)
        for attribute in ("terminal", "direction"):
            if hasattr(event, attribute):
                setattr(plain, attribute, getattr(event, attribute))
        watched.append(plain)
    return watched


@scipy_rule(_MODULE, "solve_ivp", callbacks=True)
def solve_ivp(fun: Callable, t_span: Any, y0: Any, method: Any = "RK45", t_eval: Any = None,
              dense_output: bool = False, events: Any = None, vectorized: bool = False,
              args: Any = None, **options: Any) -> Any:
    """``scipy.integrate.solve_ivp`` (every method), its ``y``, ``t``, ``t_events``,
    ``y_events`` and ``sol`` differentiated in ``y0``, ``t_span``, ``args`` and what
    ``fun`` and the event functions close over."""
    listed = [] if events is None else [events] if callable(events) else list(events)
    if t_eval is not None:
        t_eval = as_operand(resolved_tree(t_eval))
    rebuild, leaves = lifted((fun, args))  # (for the derivative: copies where need be)
    if backend_of(tree_leaves(_primal_tree((leaves, y0, tuple(t_span))))) != "numpy":
        raise NeedsHost("scipy.integrate.solve_ivp runs SciPy's solver on NumPy values, "
                        "on the host: it met JAX values (jax.jit)")
    # SciPy's solve on plain values (see _Watched)
    watched, plain_events = _Watched(fun), _watched_events(listed)
    if callable(options.get("jac")):
        options["jac"] = _Watched(options["jac"])
    result = original(_MODULE, "solve_ivp")(
        watched, _primal_tree(tuple(t_span)), _primal_tree(y0), method=method,
        t_eval=_primal_tree(t_eval), dense_output=dense_output, events=plain_events or None,
        vectorized=vectorized, args=_primal_tree(args), **options)
    if not (leaves or watched.boxed or any(e.boxed for e in plain_events)
            or _holds_box((tuple(t_span), y0, listed, t_eval))):
        return result
    if result.status < 0:
        raise TypeError(f"scipy.integrate.solve_ivp failed ({result.message}): the "
                        "solution it stopped at has no derivative to give")
    t0, t1 = t_span
    y0 = _vector(y0)
    trajectory = _Trajectory(rebuild, leaves, y0, t0, method, options)
    _differentiate(result, trajectory, listed, tuple(args or ()), t0, t1, y0, t_eval)
    return result


def _differentiate(result: Any, trajectory: _Trajectory, events: list, args: tuple,
                   t0: Any, t1: Any, y0: Any, t_eval: Any) -> None:
    """``result``'s fields with their perturbations, primal values kept SciPy's."""
    forward = primal_value(t1) >= primal_value(t0)
    event_times = [float(t) for times in result.t_events or [] for t in times]
    grid = _sorted_times([*result.t, *event_times], forward)
    rows = trajectory.at(grid)
    row_of = {t: i for i, t in enumerate(grid)}
    y = rows[np.array([row_of[float(t)] for t in result.t])]
    t = result.t
    ends: dict[int, tuple[Any, Any]] = {}
    if t_eval is None and t.size:
        if isinstance(t0, Boxed):
            ends[0] = (t0, y0)
        if result.status == 0 and isinstance(t1, Boxed):
            ends[t.size - 1] = (t1, trajectory.moved(y[-1], float(t[-1]), t1 - t[-1]))
    _events(result, trajectory, events, args, rows, row_of, ends, t_eval is None)
    if isinstance(t_eval, Boxed):  # y carried from the primal times to the moving ones
        moving = np.reshape(t_eval, (-1,))[:t.size]
        y = np.stack([trajectory.moved(y[i], float(s), moving[i] - s)
                      for i, s in enumerate(t)]) if t.size else y
        result.t = with_primal(moving, t)
    if ends:
        y = _spliced(y, {i: np.reshape(state, (1, -1)) for i, (_, state) in ends.items()})
        result.t = with_primal(
            _spliced(t, {i: np.reshape(time, (1,)) for i, (time, _) in ends.items()}), t)
    result.y = with_primal(np.transpose(y), result.y)
    if result.sol is not None:
        result.sol = DenseSolution(result.sol, trajectory)


def _spliced(rows: Any, replacing: dict[int, Any]) -> Any:
    """``rows`` with row i replaced by ``replacing[i]`` (a block of one row)."""
    pieces, last = [], 0
    for index in sorted(replacing):
        pieces += [rows[last:index], replacing[index]]
        last = index + 1
    return np.concatenate(pieces + [rows[last:]])


def _events(result: Any, trajectory: _Trajectory, events: list, args: tuple, rows: Any,
            row_of: dict, ends: dict, at_steps: bool) -> None:
    """``t_events`` and ``y_events`` with their perturbations; a terminal event's
    time and state end the trajectory too."""
    if not events:
        return
    t_events, y_events = [], []
    for event, times, states in zip(events, result.t_events, result.y_events):
        moved = [trajectory.event(event, args, float(t), rows[row_of[float(t)]])
                 for t in times]
        if not moved:
            t_events.append(times)
            y_events.append(states)
            continue
        taus = np.stack([np.reshape(tau, ()) if isinstance(tau, Boxed) else np.float64(tau)
                         for tau, _ in moved])
        t_events.append(with_primal(taus, times))
        y_events.append(with_primal(np.stack([y for _, y in moved]), states))
        if at_steps and result.status == 1 and float(times[-1]) == float(result.t[-1]):
            ends[result.t.size - 1] = moved[-1]
    result.t_events, result.y_events = t_events, y_events


class DenseSolution:
    """``solve_ivp``'s ``sol`` (``dense_output=True``) evaluating to Duals.

    The first call that needs a derivative solves the sensitivity system once over
    the whole solve, with dense output (:class:`_DenseSolves`); every later call only
    interpolates, as SciPy's own ``sol`` does. Forward mode solves it in the seed
    directions; reverse mode (and forward-over-reverse) for every input at once,
    the tangent then S(t)·(ẏ₀, ṗ) and its transpose S(t)ᵀ·λ; a hyper-dual or
    nested transform differentiates those solves again, each made once too. Times
    outside the solve are extrapolated, as SciPy's are; a moving time ``t`` carries
    the state there (:meth:`_Trajectory.moved`). Its primal values are SciPy's
    interpolant's; every other attribute is SciPy's ``OdeSolution``'s.
    """

    def __init__(self, plain: Any, trajectory: _Trajectory) -> None:
        self._plain, self._trajectory = plain, trajectory
        self._solves = _DenseSolves(plain, trajectory)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plain, name)

    def __call__(self, t: Any) -> Any:
        times = np.asarray(primal_value(t), dtype=float)
        plain = self._plain(times)  # (SciPy's errors first)
        flat = np.ravel(times)
        trajectory = self._trajectory
        y = dense_p(trajectory.y0, *trajectory.leaves, func=trajectory.rhs, times=flat,
                    solves=self._solves)
        if isinstance(t, Boxed):
            moving = np.reshape(t, (-1,))
            y = np.stack([trajectory.moved(y[i], float(s), moving[i] - s)
                          for i, s in enumerate(flat)])
        y = np.transpose(y) if times.ndim else np.reshape(y, (-1,))
        return with_primal(y, plain)


# ---------------------------------------------------------------------------
# The dense solves behind ``sol``: y, and its sensitivities, interpolated
# ---------------------------------------------------------------------------


class _DenseSolves:
    """The dense solutions one ``sol`` has asked for, each solved once over the
    primal's span: SciPy's own for y, and one per sensitivity system (the right-hand
    side, its initial value and its arguments: found again by their values)."""

    def __init__(self, plain: Any, trajectory: _Trajectory) -> None:
        self.span = (float(plain.ts[0]), float(plain.ts[-1]))
        self.method, self.options = trajectory.method, trajectory.options
        values = [primal_value(v) for v in (trajectory.y0, *trajectory.leaves)]
        self.solved: list[tuple[Callable, list, Any]] = [(trajectory.rhs, values, plain)]

    def solution(self, func: Callable, y0: np.ndarray, args: tuple) -> Any:
        """The dense solution of z' = func(z, t, *args), z(t₀) = y0."""
        values = [y0, *args]
        for known, known_values, solution in self.solved:
            if _same_system(known, func) and len(known_values) == len(values) and all(
                    np.shape(a) == np.shape(b) and np.array_equal(a, b)
                    for a, b in zip(known_values, values)):
                return solution
        options = dict(_augmented_options(self.options, int(np.size(y0))))
        if self.method in _IMPLICIT and isinstance(func, _Sensitivity):
            options["jac"] = _jacobian_of(func, args)
        checked = refusing_duals(func, "scipy.integrate.solve_ivp: fun")
        solved = original(_MODULE, "solve_ivp")(
            lambda s, z: checked(z, s, *args), self.span, y0, method=self.method,
            dense_output=True, **options)
        if solved.status < 0:
            warnings.warn("scipy.integrate.solve_ivp: a solve for the derivative of sol "
                          f"failed ({solved.message}): the derivative is not reliable",
                          RuntimeWarning, stacklevel=2)
        self.solved.append((func, [np.array(v, copy=True) for v in values], solved.sol))
        return solved.sol


def _same_system(a: Callable, b: Callable) -> bool:
    """Whether two right-hand sides are the same system (a sensitivity system is made
    again at each call: the same when its base system and seed counts are)."""
    if a is b:
        return True
    return (type(a) is type(b) is _Sensitivity
            and (a.n, a.k, a.m, a.present) == (b.n, b.k, b.m, b.present)
            and _same_system(a.rhs, b.rhs))


def _dense_kernel(y0: np.ndarray, *args: Any, func: Callable, times: np.ndarray,
                  solves: _DenseSolves) -> np.ndarray:
    return np.transpose(solves.solution(func, y0, args)(times))


def _sensitivities(func: Callable, times: np.ndarray, solves: _DenseSolves, y0: Any,
                   a: list, ty0: Any, ta: list) -> Any:
    """The tangent (K, T, n) of y at ``times`` in the K directions (ty0, ta), from the
    dense solution of the sensitivity system z = (y, S) (:class:`_Sensitivity`)."""
    n, k, present, z0 = augmented_start(y0, ty0, ta)
    z = dense_p(z0, *a, *[ta[i] for i in present], times=times, solves=solves,
                func=_Sensitivity(func, n, k, len(a), present))
    return transpose(reshape(z[:, n:], shape=(times.size, k, n)), axes=(1, 0, 2))


def _dense_jvp(primals, tangents, ans, func, times, solves):
    y0, *a = primals
    ty0, *ta = tangents
    if not any(getattr(x, "records_linear", False) for x in tangents):
        return _sensitivities(func, times, solves, y0, list(a), ty0, list(ta))
    # Reverse mode: S(t) for every input (one solve, the seeds a unit matrix), so
    # that the tangent S(t)·(ẏ₀, ṗ) and its transpose are products with it.
    linear = [(x, int(np.size(primal_value(p)))) for x, p in zip(tangents, primals)
              if x is not None]
    columns = sum(size for _, size in linear)
    unit, seeds, start = np.eye(columns), [], 0
    for x, p in zip(tangents, primals):
        size = int(np.size(primal_value(p)))
        seeds.append(None if x is None else
                     np.reshape(unit[:, start:start + size], (columns, *np.shape(p))))
        start += 0 if x is None else size
    s = _sensitivities(func, times, solves, y0, list(a), seeds[0], seeds[1:])
    k = int(linear[0][0].shape[0])
    v = concatenate(*[reshape(x, shape=(k, size)) for x, size in linear], axis=1)
    return einsum(v, s, subscripts="kc,ctn->ktn")


#: y at ``times`` (a row each) from the dense solution of y' = func(y, t, *args),
#: y(t₀) = y0, solved once per ``sol`` (``solves``) and interpolated at each call.
dense_p = Primitive("solve_ivp_dense", _dense_kernel, jvp=_dense_jvp)
