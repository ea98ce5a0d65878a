"""scipy.integrate: odeint, differentiated in ``y0``, in the arrays of ``args`` and in
the times ``t``; the primitive solve_ivp's rule (:mod:`dualad.solvers.scipy_ivp`) shares;
and trapezoid (np.trapezoid's rule).

``odeint(func, y0, t, args=(...))`` is the primitive :data:`odeint_p`, whose kernel is
SciPy's own solver (odeint, or solve_ivp's ``method``): the primal output is exactly
SciPy's. What ``func`` closes over (found by :func:`dualad.rules.closures.lifted`)
becomes arguments of the primitive after ``args``. A moving time (``t``'s entries)
is reached by :func:`moved`.

- Forward mode: the JVP in direction (ty0, targs) is the *same primitive* on the
  augmented system z = (y, s), z' = (f(y, t, a), ∂f/∂y·s + ∂f/∂a·ta), s(t0) = ty0,
  with the K seeds of a batched tangent carried in one augmented solve; the
  Jacobian-vector products of ``func`` come from running it on Duals
  (:func:`dualad.jvp`). Applied to Duals again, that solve is differentiated again:
  hyper-duals and nested derivatives need no second formula.
- Reverse mode: the tangent is the linear primitive :data:`odeint_tangent`, whose
  transpose is the adjoint method: from t[-1] back to t[0], λ' = −(∂f/∂y)ᵀλ,
  μ' = −(∂f/∂a)ᵀλ, the output cotangent added to λ at each t[i]; Λ·∂f/∂(y, a) comes
  from one replayed batched :func:`dualad.jacfwd` of ``func`` per step (or
  :func:`dualad.vjp`s where ∂f/∂(y, a) has many columns). On plain values
  (first-order reverse mode: grad, jacrev, vjp), y is read from the primal solved
  once more with dense output, a hundred times more tightly (y's error is what
  bounds the adjoint's), and (λ, μ) alone is solved back over intervals that end
  only where a nonzero cotangent enters: one backward solve for a loss at the final
  time. odeint, which has no dense output, is solved both ways there by
  solve_ivp's LSODA, the solver it wraps, its options mapped (:func:`_as_lsoda`:
  rtol, atol, h0, hmax, hmin; mxstep and the orders have no counterpart). Where
  the values are Duals (forward-over-reverse, which runs the forward rule on this
  solve; dualad_gpu's traced values) y is solved back with them instead, as
  :data:`odeint_p`, restarted at the primal's value at each t[i].

The augmented solves use the user's rtol/atol/step options (``Dfun`` and the band
widths serve the primal solve only): derivatives are as accurate as the solver, not
exact. ``full_output=True`` returns SciPy's info dict of the primal solve alongside.
Under dualad_gpu (jax.jit) both primitives run SciPy's solver on the host through
``jax.pure_callback``: the same numbers, at the cost of a device-host round trip per
solve (and, reverse mode, the restarted solve, one per interval of ``t``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..pytrees import tree_leaves
from ..dual import primal_value
from ..fillable import resolved_tree
from ..operands import holds_box
from ..primitive import Boxed, Primitive
from ..rules.closures import lifted
from ..rules.scipy_functions import original, scipy_rule, with_primal
from ..rules.shape import concatenate, reshape, transpose

#: Options of SciPy's odeint and solve_ivp that the augmented (sensitivity, adjoint)
#: solves keep.
_SHARED_OPTIONS = ("rtol", "atol", "h0", "hmax", "hmin", "ixpr", "mxstep", "mxhnil",
                   "mxordn", "mxords", "printmessg", "max_step", "first_step", "min_step")
#: solve_ivp's methods that solve linear systems with the Jacobian of the right-hand side.
_IMPLICIT = ("Radau", "BDF", "LSODA")


def _original_odeint() -> Callable:
    from scipy import integrate
    return getattr(integrate.odeint, "__wrapped__", integrate.odeint)


def _vector(out: Any) -> Any:
    """``func``'s result (an array or a list of scalars) as a 1-D array."""
    if not isinstance(out, Boxed) and isinstance(out, (list, tuple)):
        out = np.stack([v if isinstance(v, Boxed) else np.asarray(v, dtype=float)
                        for v in out])
    return np.reshape(out, (-1,))


def refusing_duals(func: Callable, name: str) -> Callable:
    """``func``, raising a TypeError where it returns a Dual for plain values (it reads
    a differentiated value that no argument shows); ``name``: the callback's, as
    "scipy.integrate.odeint: func"."""
    def checked(*xs: Any) -> Any:
        out = func(*xs)
        if isinstance(out, Boxed) or (isinstance(out, (list, tuple))
                                      and any(isinstance(v, Boxed) for v in out)):
            raise TypeError(f"{name} returned a Dual for plain inputs: it reads a "
                            "differentiated value dualad did not find in its closure, its "
                            "defaults or its object (a global, say): pass that value "
                            "through args=(...)")
        return out
    return checked


def _solve(y0: Any, *args: Any, func: Callable, t: np.ndarray, options: tuple,
           method: Any = None) -> np.ndarray:
    """y at the times ``t`` (a row each) of y' = func(y, t, *args), y(t[0]) = y0, by
    odeint (``method`` None) or by solve_ivp's ``method``."""
    checked = refusing_duals(func, "scipy.integrate.odeint: func" if method is None
                             else "scipy.integrate.solve_ivp: fun")
    if method is None:
        return _original_odeint()(checked, y0, t, args=tuple(args), **dict(options))
    options = dict(options)
    if method in _IMPLICIT and isinstance(func, (_Sensitivity, _Adjoint, _Along)):
        options.setdefault("jac", _jacobian_of(func, args))
    return _solve_ivp(checked, y0, args, t, options, method)


def _solve_ivp(func: Callable, y0: Any, args: tuple, t: np.ndarray, options: dict,
               method: Any) -> np.ndarray:
    solved = original("scipy.integrate", "solve_ivp")(
        lambda s, z: func(z, s, *args), (t[0], t[-1]), y0, method=method, t_eval=t,
        **options)
    if solved.status < 0:
        warnings.warn(f"scipy.integrate.solve_ivp: a solve for the derivative failed "
                      f"({solved.message}): the derivative is not reliable",
                      RuntimeWarning, stacklevel=2)
    return solved.y.T


def _jacobian_of(func: Callable, args: tuple) -> Callable:
    """The exact Jacobian of an augmented system, for solve_ivp's implicit methods."""
    from ..forward import jacfwd
    return lambda s, z: primal_value(jacfwd(lambda w: _vector(func(w, s, *args)),
                                            replay=False)(z))


def _augmented_options(options: tuple, length: int | None = None) -> tuple:
    """The solver options for a state of ``length``: per-component tolerances are tiled
    when ``length`` is a multiple of theirs, else their smallest value serves all."""
    kept = []
    for key, value in options:
        if key not in _SHARED_OPTIONS or value is None:
            continue
        if key in ("rtol", "atol") and np.ndim(value) > 0 and length is not None:
            value = np.ravel(value)
            value = (np.tile(value, length // value.size) if length % value.size == 0
                     else np.min(value))
        kept.append((key, value))
    return tuple(kept)


class _AtTime:
    """A right-hand side at the time and arguments of the current call: ``restricted``
    is (y, *a[present]) -> f(y, t, *a) as a 1-D array, one function for every call
    (one replay cache)."""

    def __init__(self, rhs: Callable, present: tuple) -> None:
        self.rhs, self.present = rhs, present
        self.t, self.a = 0.0, []
        self.restricted = self._restricted

    def _restricted(self, y: Any, *chosen: Any) -> Any:
        full = list(self.a)
        for i, v in zip(self.present, chosen):
            full[i] = v
        return _vector(self.rhs(y, self.t, *full))


class _Sensitivity(_AtTime):
    """The augmented right-hand side (y, S) -> (f, ∂f/∂y·S + ∂f/∂a·ta), K seeds."""

    def __init__(self, rhs: Callable, n: int, k: int, m: int, present: tuple) -> None:
        super().__init__(rhs, present)
        self.n, self.k, self.m = n, k, m

    def __call__(self, z: Any, t: Any, *vals: Any) -> Any:
        from ..forward import jvp
        n, k = self.n, self.k
        self.t, self.a, ta = t, list(vals[:self.m]), vals[self.m:]
        y, s = z[:n], np.reshape(z[n:], (k, n))
        # (replayed: the same right-hand side at every step)
        f, jv = jvp(self.restricted, (y, *[self.a[i] for i in self.present]), (s, *ta),
                    batched=True)
        return np.concatenate([f, np.reshape(jv, (k * n,))])


#: Up to this many columns of ∂f/∂(y, a), the adjoint takes them all in one forward pass.
_FORWARD_UP_TO = 64


class _Adjoint(_AtTime):
    """The backward right-hand side (y, Λ, M) -> (f, −Λ·∂f/∂y, −Λ·∂f/∂a), R cotangents.

    Λ·J by J itself from one batched forward pass (:func:`dualad.jacfwd`, replayed:
    the same right-hand side at every step) and a matrix product where J has few
    columns (:data:`_FORWARD_UP_TO`) or R exceeds them (``jacrev`` pulls back many
    outputs at once); else by R vector-Jacobian products (:func:`dualad.vjp`).
    """

    def __init__(self, rhs: Callable, n: int, r: int, present: tuple, sizes: tuple) -> None:
        super().__init__(rhs, present)
        self.n, self.r, self.sizes = n, r, sizes
        self.jacobian: Callable | None = None

    def _with_value(self, y: Any, *chosen: Any) -> tuple[Any, Any]:
        out = self._restricted(y, *chosen)
        return out, out  # (the value as jacfwd's aux: its primal)

    def __call__(self, z: Any, t: Any, *a: Any) -> Any:
        n, r = self.n, self.r
        y, lam = z[:n], np.reshape(z[n:n + r * n], (r, n))
        self.t, self.a = t, list(a)
        chosen = [a[i] for i in self.present]
        columns = n + sum(self.sizes)
        if columns <= _FORWARD_UP_TO or r > columns:
            from ..forward import jacfwd
            if self.jacobian is None:
                self.jacobian = jacfwd(self._with_value, has_aux=True,
                                       argnums=tuple(range(1 + len(chosen))))
            jacs, f = self.jacobian(y, *chosen)
            return np.concatenate([f] + [-np.reshape(lam @ np.reshape(j, (n, -1)), (-1,))
                                         for j in jacs])
        from ..reverse import vjp
        f, pull = vjp(self._restricted, y, *chosen)
        rows = [pull(lam[i]) for i in range(r)]
        parts = [f]
        for j in range(1 + len(chosen)):
            parts.append(-np.reshape(np.stack([row[j] for row in rows]), (-1,)))
        return np.concatenate(parts)


def augmented_start(y0: Any, ty0: Any, ta: list) -> tuple[int, int, tuple, Any]:
    """The sensitivity system's size n, its K seeds, the arguments with a tangent, and
    its start z0 = (y0, S0) (S0 = ty0, zero where y0 has no tangent)."""
    n = int(np.shape(y0)[0])
    k = next(int(np.shape(x)[0]) for x in (ty0, *ta) if x is not None)
    present = tuple(i for i, x in enumerate(ta) if x is not None)
    if ty0 is None:
        ty0 = np.zeros((k, n))
    return n, k, present, concatenate(y0, reshape(ty0, shape=(k * n,)), axis=0)


def _forward_sensitivity(rhs: Callable, t: np.ndarray, options: tuple, y0: Any, a: list,
                         ty0: Any, ta: list, method: Any = None) -> Any:
    """The tangent (K, T, n) of odeint in direction (ty0, ta) by one augmented solve."""
    n, k, present, z0 = augmented_start(y0, ty0, ta)
    sol = odeint_p(z0, *a, *[ta[i] for i in present], func=_Sensitivity(rhs, n, k, len(a), present),
                   t=t, options=_augmented_options(options, n * (1 + k)), method=method)
    return transpose(reshape(sol[:, n:], shape=(len(t), k, n)), axes=(1, 0, 2))


class _Moved:
    """dy/dτ = h·f(y, t₀ + hτ, *a): the solution carried from t₀ to t₀ + h as τ goes 0 → 1."""

    def __init__(self, rhs: Callable) -> None:
        self.rhs = rhs

    def __call__(self, y: Any, tau: Any, *values: Any) -> Any:
        *values, start, h = values
        return h * _vector(self.rhs(y, start + h * tau, *values))


def moved(rhs: Callable, y: Any, args: Sequence, start: Any, h: Any, options: tuple,
          method: Any = None) -> Any:
    """y(start + h) from y = y(start) for y' = rhs(y, t, *args), where h carries
    perturbations only (a primal length of zero): the solve over τ ∈ [0, 1] of
    :class:`_Moved` is, primal, y itself, and its derivatives are exact in every
    order (y + f·h to first)."""
    if not isinstance(h, Boxed):
        return y
    kept = tuple((k, v) for k, v in options if k in ("rtol", "atol"))
    return odeint_p(y, *args, start, h, func=_Moved(rhs), t=np.array([0.0, 1.0]),
                    options=kept, method=method)[1]


def _rhs_of(func: Callable, options: tuple) -> Callable:
    """``func`` as f(y, t, *args) whatever ``tfirst`` says."""
    if dict(options).get("tfirst"):
        return lambda y, t, *a: func(t, y, *a)
    return func


def _odeint_jvp(primals, tangents, ans, func, t, options, method=None):
    y0, *a = primals
    ty0, *ta = tangents
    rhs = _rhs_of(func, options) if method is None else func
    shared = _augmented_options(options)
    if any(getattr(x, "records_linear", False) for x in tangents):
        present = tuple(i for i, x in enumerate(ta) if x is not None)
        linear = ([ty0] if ty0 is not None else []) + [ta[i] for i in present]
        return odeint_tangent(*linear, y0, *a, ans, rhs=rhs, t=t, options=shared,
                              has_ty0=ty0 is not None, present=present, method=method)
    return _forward_sensitivity(rhs, t, shared, y0, list(a), ty0, list(ta), method)


odeint_p = Primitive("odeint", _solve, jvp=_odeint_jvp)


def _on_host(kernel: Callable, shape: Callable) -> Callable:
    """``kernel`` under jax.jit: SciPy's solver run on the host by jax.pure_callback."""
    def run(*args: Any, **params: Any) -> Any:
        import jax
        import jax.numpy as jnp
        dtype = jnp.result_type(float)  # float64 with x64, else float32

        def host(*values: Any) -> np.ndarray:
            values = [np.asarray(v) for v in values]
            return np.asarray(kernel(*values, **params), dtype=dtype)
        out = jax.ShapeDtypeStruct(shape(*args, **params), dtype)
        return jax.pure_callback(host, out, *args)
    return run


odeint_p.kernels["jax"] = _on_host(
    _solve, lambda y0, *args, func, t, options, method=None: (len(t), int(y0.shape[0])))


# ---------------------------------------------------------------------------
# The tangent as a linear primitive (reverse mode) and its transpose, the adjoint
# ---------------------------------------------------------------------------


def _split_tangent_args(args: tuple, has_ty0: bool, present: tuple):
    nt = int(has_ty0) + len(present)
    linear, rest = args[:nt], args[nt:]
    y0, a, ans = rest[0], list(rest[1:-1]), rest[-1]
    ty0 = linear[0] if has_ty0 else None
    ta: list = [None] * len(a)
    for i, x in zip(present, linear[int(has_ty0):]):
        ta[i] = x
    return ty0, ta, y0, a, ans


def _tangent_kernel(*args, rhs, t, options, has_ty0, present, method):
    ty0, ta, y0, a, _ = _split_tangent_args(args, has_ty0, present)
    return _forward_sensitivity(rhs, t, options, y0, a, ty0, ta, method)


def _tangent_shape(*args, rhs, t, options, has_ty0, present, method):
    k = args[0].shape[0]
    n = int(np.shape(primal_value(args[int(has_ty0) + len(present)]))[0])
    return (k, len(t), n), np.dtype(np.float64)


def _tangent_transpose(ct, args, linear, rhs, t, options, has_ty0, present, method):
    _, _, _, a, ans = _split_tangent_args(args, has_ty0, present)
    n, nt = int(np.shape(ans)[1]), len(t)
    lead = tuple(np.shape(ct)[:2])  # (cotangent seeds, tangent seeds)
    r = lead[0] * lead[1]
    cts = reshape(ct, shape=(r, nt, n))
    sizes = tuple(int(np.size(primal_value(a[i]))) for i in present)
    adjoint = _Adjoint(rhs, n, r, present, sizes)
    if all(isinstance(x, (np.ndarray, np.generic, float, int)) for x in (cts, ans, *a)):
        lam, mus = _along_the_interpolant(adjoint, t, options, method, a, ans, cts, sizes)
    else:
        lam, mus = _with_the_state(adjoint, t, options, method, a, ans, cts, sizes)
    out: list = []
    if has_ty0:
        out.append(reshape(lam, shape=lead + (n,)))
    for i, mu in zip(present, mus):
        out.append(reshape(mu, shape=lead + tuple(np.shape(primal_value(a[i])))))
    return tuple(out) + (None,) * (len(args) - len(out))


def _with_the_state(adjoint: _Adjoint, t: np.ndarray, options: tuple, method: Any, a: list,
                    ans: Any, cts: Any, sizes: tuple) -> tuple[Any, list]:
    """λ and μ at t[0]: (y, λ, μ) solved back over each interval of ``t``, y restarted
    at the primal's value at each t[i] (what nested transforms differentiate)."""
    r, n = adjoint.r, adjoint.n
    lam = cts[:, len(t) - 1]
    mus = [np.zeros((r, s)) for s in sizes]
    for i in range(len(t) - 1, 0, -1):
        z = concatenate(ans[i], reshape(lam, shape=(r * n,)),
                        *[reshape(mu, shape=(r * s,)) for mu, s in zip(mus, sizes)], axis=0)
        sol = odeint_p(z, *a, func=adjoint, t=np.array([t[i], t[i - 1]]),
                       options=_augmented_options(options, int(np.shape(z)[0])),
                       method=method)
        end = sol[1]
        lam = reshape(end[n:n + r * n], shape=(r, n)) + cts[:, i - 1]
        start = n + r * n
        mus = []
        for s in sizes:
            mus.append(reshape(end[start:start + r * s], shape=(r, s)))
            start += r * s
    return lam, mus


#: The adjoint reads y from a primal solved this many times more tightly than asked:
#: as accurate as forward mode then (docs/ode-fitting.md), for about 2.5 times the
#: steps of that one solve (RK45).
DENSE_TIGHTER = 100


class _Along:
    """The adjoint's right-hand side for (λ, μ) alone, y read from the primal's dense
    output."""

    def __init__(self, adjoint: _Adjoint, dense: Any) -> None:
        self.adjoint, self.dense = adjoint, dense

    def __call__(self, w: Any, t: Any, *a: Any) -> Any:
        return self.adjoint(np.concatenate([self.dense(t), w]), t, *a)[self.adjoint.n:]


#: odeint's tolerances where none are given (SciPy's odeint: rtol = atol = 1.49012e-8).
_ODEINT_TOL = 1.49012e-8


def _as_lsoda(options: tuple) -> tuple:
    """odeint's options as solve_ivp(method="LSODA")'s, the solver odeint wraps: rtol,
    atol (odeint's defaults where not given), and h0, hmax, hmin as first_step,
    max_step, min_step (their 0, "the solver decides", dropped). mxstep, the orders
    and the messages have no counterpart there (one step a call, no step limit)."""
    given = dict(options)
    kept = {"rtol": given.get("rtol", _ODEINT_TOL), "atol": given.get("atol", _ODEINT_TOL)}
    for name, ivp in (("h0", "first_step"), ("hmax", "max_step"), ("hmin", "min_step")):
        if given.get(name):
            kept[ivp] = abs(given[name])
    return tuple(kept.items())


def _within(options: dict, span: float) -> dict:
    """``options`` for a solve over ``span``: solve_ivp refuses a first step beyond it."""
    if "first_step" in options and not 0 < options["first_step"] <= abs(span):
        options = {k: v for k, v in options.items() if k != "first_step"}
    return options


def _along_the_interpolant(adjoint: _Adjoint, t: np.ndarray, options: tuple, method: Any,
                           a: list, ans: np.ndarray, cts: np.ndarray, sizes: tuple
                           ) -> tuple[Any, list]:
    """λ and μ at t[0] for plain values (first-order reverse mode): the primal solved
    once more with dense output (:data:`DENSE_TIGHTER`), then (λ, μ) alone solved
    back with y read from it (no unstable backward solve of y), over intervals that
    end only where a nonzero cotangent enters. odeint (``method`` None), which has no
    dense output, is solved both ways by solve_ivp's LSODA (:func:`_as_lsoda`)."""
    r, n = adjoint.r, adjoint.n
    rhs = adjoint.rhs
    if method is None:
        method, options = "LSODA", _as_lsoda(options)
    tight = dict(options)  # (y's error, not λ's, bounds the adjoint's accuracy)
    tight["rtol"] = np.maximum(np.asarray(tight.get("rtol", 1e-3)) / DENSE_TIGHTER,
                               100 * np.finfo(float).eps)
    tight["atol"] = np.asarray(tight.get("atol", 1e-6)) / DENSE_TIGHTER
    solved = original("scipy.integrate", "solve_ivp")(
        lambda s, y: _vector(rhs(y, s, *a)), (t[0], t[-1]), ans[0], method=method,
        dense_output=True, **_within(tight, t[-1] - t[0]))
    if solved.status < 0:
        warnings.warn(f"scipy.integrate: the primal solve with dense output for the "
                      f"adjoint failed ({solved.message}): the derivative is not reliable",
                      RuntimeWarning, stacklevel=2)
    along = _Along(adjoint, solved.sol)
    stops = [len(t) - 1] + [i for i in range(len(t) - 2, 0, -1) if np.any(cts[:, i])]
    stops += [0] if len(t) > 1 else []
    w = np.concatenate([cts[:, -1].ravel()] + [np.zeros(r * s) for s in sizes])
    for start, stop in zip(stops, stops[1:]):
        if t[stop] != t[start]:  # (odeint allows repeated times)
            kept = _within(dict(_augmented_options(options, w.size)), t[stop] - t[start])
            w = _solve(w, *a, func=along, t=np.array([t[start], t[stop]]),
                       options=tuple(kept.items()), method=method)[-1]
        w[:r * n] += cts[:, stop].ravel()
    at = np.cumsum([r * n, *[r * s for s in sizes]])
    lam, *mus = np.split(w, at[:-1])
    return lam.reshape(r, n), [mu.reshape(r, s) for mu, s in zip(mus, sizes)]


def _tangent_jvp(primals, tangents, ans, **params):
    # Unreachable by the transforms: the tangent is only recorded, never evaluated on
    # Duals of a newer transform; refuse rather than drop a derivative.
    raise TypeError("scipy.integrate.odeint: its reverse-mode tangent was differentiated "
                    "by a transform nested inside the reverse one; use forward mode there")


odeint_tangent = Primitive("odeint_tangent", _tangent_kernel, jvp=_tangent_jvp,
                           linear="all", transpose=_tangent_transpose,
                           shape_rule=_tangent_shape)
odeint_tangent.kernels["jax"] = _on_host(
    _tangent_kernel, lambda *args, **params: _tangent_shape(*args, **params)[0])


# ---------------------------------------------------------------------------
# The SciPy function
# ---------------------------------------------------------------------------


class _Closed:
    """``func`` with the values it closes over passed after its ``args`` (``count``
    of them): func(a, b, *args, *closed)."""

    def __init__(self, rebuild: Callable, count: int) -> None:
        self.rebuild, self.count = rebuild, count

    def __call__(self, a: Any, b: Any, *values: Any) -> Any:
        return self.rebuild(values[self.count:])(a, b, *values[:self.count])


class _Dropping:
    """``Dfun`` (for the primal solve only) ignoring the closed-over values after its
    ``count`` args, and reading its own closure's primal values."""

    def __init__(self, dfun: Callable, count: int) -> None:
        rebuild, leaves = lifted(dfun)
        self.dfun = rebuild([primal_value(v) for v in leaves]) if leaves else dfun
        self.count = count

    def __call__(self, a: Any, b: Any, *values: Any) -> Any:
        return self.dfun(a, b, *values[:self.count])


@scipy_rule("scipy.integrate", "odeint", callbacks=True)
def odeint(func: Callable, y0: Any, t: Any, args: tuple = (), Dfun: Callable | None = None,
           col_deriv: int = 0, full_output: int = 0, **options: Any) -> Any:
    """``scipy.integrate.odeint`` differentiated in ``y0``, the arrays of ``args``, what
    ``func`` closes over and the times ``t`` (a moving time by :func:`moved`)."""
    if not isinstance(args, tuple):
        args = (args,)
    y0, t, args = resolved_tree((y0, t, args))
    rebuild, closed = lifted(func)
    if not (closed or holds_box(tree_leaves((y0, t, args)))):
        return _original_odeint()(refusing_duals(func, "scipy.integrate.odeint: func"), y0,
                                  t, args=args, Dfun=Dfun,
                                  col_deriv=col_deriv, full_output=full_output, **options)
    if closed:  # the values func closes over: arguments of the primitive, after args
        func = _Closed(rebuild, len(args))
        Dfun = _Dropping(Dfun, len(args)) if Dfun is not None else None
        args = (*args, *closed)
    if isinstance(y0, (list, tuple)):
        y0 = np.stack([v if isinstance(v, Boxed) else np.asarray(v, dtype=float) for v in y0])
    if np.ndim(y0) == 0:
        y0 = np.reshape(y0, (1,))  # as SciPy; any other shape but 1-D SciPy refuses
    times = t if isinstance(t, Boxed) else list(t) if isinstance(t, (list, tuple)) else None
    t = np.array(primal_value(t) if times is None or isinstance(t, Boxed)
                 else [primal_value(v) for v in times], dtype=float)
    if Dfun is not None:
        options.update(Dfun=Dfun, col_deriv=col_deriv)
    options = tuple(options.items())
    given = y0
    if times is not None and isinstance(times[0], Boxed):  # y0 is y at the moving t[0]
        y0 = moved(_rhs_of(func, options), y0, args, times[0], t[0] - times[0], options)
    out = odeint_p(y0, *args, func=func, t=t, options=options)
    if times is not None and any(isinstance(v, Boxed) for v in times):
        rows = [given] + [moved(_rhs_of(func, options), out[i], args, t[i], times[i] - t[i],
                                options) for i in range(1, len(t))]
        out = with_primal(np.stack(rows), primal_value(out))
    if full_output:
        if not isinstance(primal_value(out), np.ndarray):
            raise TypeError("scipy.integrate.odeint: full_output=True is not supported under "
                            "dualad_gpu (the info dict is SciPy's, on host values)")
        values = [primal_value(x) for x in (y0, *args)]
        _, info = _original_odeint()(func, values[0], t, args=tuple(values[1:]),
                                     full_output=True, **dict(options))
        return out, info
    return out


@scipy_rule("scipy.integrate", "trapezoid")
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    """scipy.integrate.trapezoid is NumPy's trapezoidal rule: np.trapezoid's rule."""
    return np.trapezoid(y, x=x, dx=dx, axis=axis)
