"""scipy.integrate's quadratures differentiated: ``quad`` (and through it SciPy's own
``dblquad``, ``tplquad``, ``nquad``), ``quad_vec``, ``fixed_quad``, ``simpson``,
``romb`` and ``cumulative_trapezoid``.

``quad`` runs SciPy's QUADPACK on the integrand's primal values (its result is
SciPy's, bit for bit), then integrates again on the partition QUADPACK settled on,
with 21-point Gauss–Legendre on each piece, the integrand evaluated on the
transform's values. The pieces are mapped affinely from the limits themselves,
x = a + (b − a)·s, so limits that depend on the parameters give Leibniz's terms
without a formula, and every mode (reverse, hyper-dual, nested) comes from the
integrand's own rules. The derivative is the integral of the derivative to the
accuracy of that rule on QUADPACK's partition (which QUADPACK refined for the
value, not for the derivative). Infinite limits use QUADPACK's own map,
x = a + (1 − t)/t. ``complex_func=True``: the real and imaginary parts, two real
integrals.

``quad_vec`` is done the same way on the intervals SciPy's own ``quad_vec`` ends
with (``full_output``'s ``info.intervals``), in the variable SciPy integrated in:
x itself on a finite range, t of its maps x = a ± (1 − t)/t and x = (1 − |t|)/t on
infinite ones.

A weighted integrand (``weight=``) is integrated by SciPy's weighted QUADPACK
itself, the primitive :data:`weighted_quad`: the integral is linear in the
integrand, so its JVP is the same weighted integral of the integrand's JVP (one per
seed, or one per parameter and a product with the tangents: reverse mode), which
that primitive differentiates again in every order. A weight's own parameter
(``wvar``) is differentiated exactly: d/dω cos(ωx) = −x·sin(ωx) (the integrand
times x under the other weight); d/dα of the ``alg`` weights adds log(x − a) to the
weight, and a power of a log that no QUADPACK weight has is integrated on each half
of [a, b] in y, x − a = h·e^(−y) (:func:`_more_logs`); a ``cauchy`` integral is taken
in u = x − c, where c moves the limits. Moving limits add ∫ from b₀ to b of f·w,
which is b − b₀ (a pure perturbation) times a 4-point Gauss–Legendre mean on
[b₀, b]: exact in every order below eight. The ``alg`` weights depend on the limits
themselves: they are integrated in s = (x − a)/(b − a), where (b − a)^(1+α+β) and
log(b − a) factor out.

``fixed_quad`` is Gauss–Legendre arithmetic: SciPy's own function on Duals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import Boxed, Primitive
from ..rules.closures import lifted
from ..rules.scipy_functions import original, scipy_rule, with_primal
from .scipy_integrate import refusing_duals
from .scipy_optimize import _holds_box, _on_the_host, _primal_tree, _Watched

_MODULE = "scipy.integrate"
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(21)
#: quad's parameters after ``full_output``, in SciPy's order.
_QUAD_OPTIONS = ("epsabs", "epsrel", "limit", "points", "weight", "wvar", "wopts", "maxp1",
                 "limlst", "complex_func")


def _quad(func: Callable, a: Any, b: Any, args: Any = (), full_output: int = 0, *rest: Any,
          **options: Any) -> Any:
    """``scipy.integrate.quad``, differentiated in ``args``, the limits, what ``func``
    closes over and ``wvar``."""
    options.update(zip(_QUAD_OPTIONS, rest))
    watched = _Watched(func)
    args = args if isinstance(args, tuple) else (args,)
    found = original(_MODULE, "quad")(watched, _primal_tree(a), _primal_tree(b),
                                      _primal_tree(args), 1, **_primal_tree(options))
    if not (watched.boxed or _holds_box((a, b, args, options))):
        return found if full_output else _as_called(found)
    if options.get("complex_func"):
        value = _complex(func, a, b, args, options)
    elif options.get("weight") is not None:
        value = _weighted(func, a, b, args, options)
    else:
        value = _on_partition(func, a, b, args, found[2])
    out = (with_primal(value, found[0]), *found[1:])
    return out if full_output else _as_called(out)


def _as_called(found: tuple) -> tuple:
    """What quad returns without ``full_output``: (value, error), warning as it does."""
    if len(found) > 3:
        import warnings

        from scipy.integrate import IntegrationWarning
        warnings.warn(found[3], IntegrationWarning, stacklevel=4)
    return found[:2]


def _complex(func: Callable, a: Any, b: Any, args: tuple, options: dict) -> Any:
    """The integral of a complex ``func``: its real and imaginary parts, as SciPy."""
    options = {**options, "complex_func": False}

    def part(take: Callable) -> Any:
        def taken(x: Any, *values: Any) -> Any:
            return take(func(x, *values))
        return _quad(taken, a, b, args, 1, **options)[0]

    return part(np.real) + 1j * part(np.imag)


def _on_partition(func: Callable, a: Any, b: Any, args: tuple, info: dict) -> Any:
    """∫ₐᵇ func on QUADPACK's partition (``info``'s alist, blist), Gauss–Legendre on
    each piece, with the limits as they are (Duals move the nodes)."""
    last = info["last"]
    lo, hi = info["alist"][:last], info["blist"][:last]
    a0, b0 = primal_value(a), primal_value(b)
    sign = -1.0 if b0 < a0 else 1.0
    start, stop = (b, a) if b0 < a0 else (a, b)
    low, high = min(a0, b0), max(a0, b0)
    terms = []
    for left, right in zip(lo, hi):
        half = (right - left) / 2
        for t, w in zip(left + half * (_NODES + 1), _WEIGHTS):
            if np.isinf(low) or np.isinf(high):
                terms.append(half * w * _infinite(func, start, stop, low, high, t, args))
            else:  # x = start + (stop − start)·s, s = (x − low)/(high − low)
                s = (t - low) / (high - low)
                terms.append(half * w / (high - low) * (stop - start)
                             * func(start + (stop - start) * s, *args))
    return sign * _total(terms)


def _infinite(func: Callable, start: Any, stop: Any, low: float, high: float, t: float,
              args: tuple) -> Any:
    """QUADPACK's integrand on (0, 1] for an infinite range at t."""
    u = (1 - t) / t
    if np.isinf(low) and np.isinf(high):
        return (func(u, *args) + func(-u, *args)) / t ** 2
    if np.isinf(high):
        return func(start + u, *args) / t ** 2
    return func(stop - u, *args) / t ** 2


def _total(terms: list) -> Any:
    """The sum of ``terms`` (scalars, or arrays of one shape)."""
    return np.sum(np.stack([as_operand(term) for term in terms]), axis=0)


for _where in (_MODULE, "scipy.integrate._quadpack_py"):  # (dblquad and nquad call it there)
    scipy_rule(_where, "quad", callbacks=True)(_quad)


# -- quad_vec: SciPy's intervals, in SciPy's variable ------------------------------------

@scipy_rule(_MODULE, "quad_vec", callbacks=True)
def quad_vec(f: Callable, a: Any, b: Any, epsabs: float = 1e-200, epsrel: float = 1e-8,
             norm: Any = "2", cache_size: float = 100e6, limit: int = 10000, workers: Any = 1,
             points: Any = None, quadrature: str | None = None, full_output: bool = False,
             *, args: Any = ()) -> Any:
    """``scipy.integrate.quad_vec``, differentiated in ``args``, the limits and what ``f``
    closes over (``info`` stays SciPy's, on the values)."""
    watched = _Watched(f)
    args = args if isinstance(args, tuple) else (args,)
    found = original(_MODULE, "quad_vec")(
        watched, _primal_tree(a), _primal_tree(b), epsabs, epsrel, norm, cache_size, limit,
        workers, _primal_tree(points), quadrature, True, args=_primal_tree(args))
    if watched.boxed or _holds_box((a, b, args)):
        value = _on_intervals(_in_scipy_variable(f, a, b, args), found[2].intervals, a, b)
        found = (with_primal(value, found[0]), *found[1:])
    return found if full_output else found[:2]


def _in_scipy_variable(f: Callable, a: Any, b: Any, args: tuple) -> Callable:
    """The integrand in the variable quad_vec integrates in, with the limits as they are:
    s = (x − a)/(b − a) on a finite range; on an infinite one, t of SciPy's
    ``SemiInfiniteFunc`` and ``DoubleInfiniteFunc`` (the finite limit moves x)."""
    a0, b0 = float(primal_value(a)), float(primal_value(b))
    if np.isfinite(a0) and np.isfinite(b0):
        return lambda s: (b - a) * _array(f(a + (b - a) * s, *args))
    if np.isfinite(a0):  # (a, ±∞): x = a ± (1 − t)/t
        sign = -1.0 if b0 < 0 else 1.0
        return lambda t: sign * _array(f(a + sign * (1 - t) / t, *args)) / t ** 2
    if np.isfinite(b0):  # (±∞, b): SciPy integrates (b, ±∞), then changes the sign
        sign = -1.0 if a0 < 0 else 1.0
        return lambda t: -sign * _array(f(b + sign * (1 - t) / t, *args)) / t ** 2
    sign = -1.0 if b0 < a0 else 1.0
    return lambda t: sign * _array(f((1 - abs(t)) / t, *args)) / t ** 2


def _on_intervals(integrand: Callable, intervals: np.ndarray, a: Any, b: Any) -> Any:
    """∫ integrand on SciPy's intervals (in s ∈ [0, 1] on a finite range), 21-point
    Gauss–Legendre on each."""
    a0, b0 = float(primal_value(a)), float(primal_value(b))
    if np.isfinite(a0) and np.isfinite(b0):
        intervals = ([(0.0, 1.0)] if a0 == b0
                     else (np.asarray(intervals, dtype=float) - a0) / (b0 - a0))
    terms = []
    for left, right in intervals:
        half = (right - left) / 2
        nodes = left + half * (_NODES + 1)
        terms.extend(half * w * integrand(t) for t, w in zip(nodes, _WEIGHTS))
    return _total(terms)


def _array(out: Any) -> Any:
    """An integrand's value (an array, a Dual, or a list of them) as one operand."""
    return as_operand(out) if isinstance(out, (Boxed, list, tuple)) else np.asarray(out)


# -- weighted integrands: SciPy's weighted QUADPACK on the perturbations -----------------

#: SciPy's options that the weighted integrals of the perturbations keep.
_WEIGHTED_OPTIONS = ("epsabs", "epsrel", "limit", "maxp1", "limlst")
#: Gauss–Legendre on [0, 1] for the integral between a limit and its moved place.
_END_NODES, _END_WEIGHTS = np.polynomial.legendre.leggauss(4)
_END_NODES, _END_WEIGHTS = (_END_NODES + 1) / 2, _END_WEIGHTS / 2


def _weighted_kernel(*values: Any, func: Callable, a: float, b: float, weight: str,
                     options: tuple, logs: tuple = (0, 0)) -> np.ndarray:
    """∫ₐᵇ func(x, *params)·w(x) dx by SciPy's weighted quad, on values: ``values`` are
    the weight's parameters (``wvar``: α and β for the ``alg`` weights), then params;
    ``logs``: the powers of log(x − a) and log(b − x) the ``alg`` weight is multiplied by
    (its derivatives in α and β)."""
    count = _wvar_count(weight)
    wvar = tuple(float(v) for v in values[:count]) if count == 2 else float(values[0])
    params = values[count:]

    plain = refusing_duals(lambda x: func(x, *params), "scipy.integrate.quad: func")

    if logs != (0, 0):
        return np.asarray(_more_logs(plain, a, b, weight, wvar, logs, dict(options)))
    found = original(_MODULE, "quad")(plain, a, b, weight=weight, wvar=wvar, **dict(options))
    return np.asarray(found[0], dtype=float)


def _more_logs(f: Callable, a: float, b: float, weight: str, wvar: tuple, logs: tuple,
               options: dict) -> float:
    """∫ₐᵇ f·(x − a)^α (b − x)^β log^p(x − a) log^q(b − x) dx for powers of the logs that no
    QUADPACK weight has: on each half, x − a (or b − x) = h·e^(−y), y from 0 to ∞."""
    p = logs[0] + (weight in ("alg-loga", "alg-log"))
    q = logs[1] + (weight in ("alg-logb", "alg-log"))
    (alpha, beta), h = wvar, (b - a) / 2
    kept = {k: v for k, v in options.items() if k in ("epsabs", "epsrel", "limit")}

    def near_a(y: float) -> Any:
        u = h * np.exp(-y)
        return f(a + u) * (b - a - u) ** beta * np.log(b - a - u) ** q * u ** (alpha + 1) * (
            np.log(h) - y) ** p

    def near_b(y: float) -> Any:
        u = h * np.exp(-y)
        return f(b - u) * (b - a - u) ** alpha * np.log(b - a - u) ** p * u ** (beta + 1) * (
            np.log(h) - y) ** q

    quad = original(_MODULE, "quad")
    return quad(near_a, 0.0, np.inf, **kept)[0] + quad(near_b, 0.0, np.inf, **kept)[0]


def _wvar_count(weight: str) -> int:
    return 2 if weight.startswith("alg") else 1


def _weighted_jvp(primals: tuple, tangents: tuple, ans: Any, func: Callable, a: float,
                  b: float, weight: str, options: tuple, logs: tuple = (0, 0)) -> Any:
    count = _wvar_count(weight)
    wvar, params, t_params = primals[:count], primals[count:], tangents[count:]

    def integral(integrand: Callable, values: list, to: str = weight,
                 more: tuple = logs) -> Any:
        return weighted_quad(*wvar, *values, func=integrand, a=a, b=b, weight=to,
                             options=options, logs=more)

    out = 0.0
    present = tuple(i for i, t in enumerate(t_params) if t is not None)
    if present:
        seeds = t_params[present[0]].shape[0]
        sizes = [int(np.size(primal_value(params[i]))) for i in present]
        if seeds < sum(sizes) and not any(getattr(t_params[i], "records_linear", False)
                                          for i in present):  # a weighted integral a seed
            along = _Directional(func, len(params), present)
            out = np.stack([integral(along, [*params, *[t_params[i][k] for i in present]])
                            for k in range(seeds)])
        else:  # the gradient, a weighted integral a component, times the tangents
            for i, size in zip(present, sizes):
                shape = np.shape(primal_value(params[i]))
                along, basis = _Directional(func, len(params), (i,)), np.eye(size)
                gradient = np.stack([integral(along, [*params, np.reshape(e, shape)])
                                     for e in basis])
                out = out + np.reshape(t_params[i], (seeds, size)) @ gradient
    for side, t_wvar in enumerate(tangents[:count]):
        if t_wvar is not None:
            out = out + t_wvar * _in_wvar(integral, list(params), func, weight, logs, side)
    return out


def _in_wvar(integral: Callable, params: list, func: Callable, weight: str, logs: tuple,
             side: int) -> Any:
    """The derivative in the weight's parameter (α: side 0, β: side 1), another weighted
    integral."""
    if weight == "cos":  # d/dω cos(ωx) = −x·sin(ωx)
        return integral(_Times(func, -1.0), params, "sin")
    if weight == "sin":
        return integral(_Times(func, 1.0), params, "cos")
    if weight == "cauchy":  # (unreached: _weighted integrates in x − c)
        raise TypeError("scipy.integrate.quad: the Cauchy weight's c is differentiated by "
                        "a shift of x, not here")
    log = ("loga", "logb")[side]  # d/dα (x − a)^α = (x − a)^α·log(x − a)
    if log in weight or weight == "alg-log":  # a power of that log no weight has
        return integral(func, params, weight, (logs[0] + 1 - side, logs[1] + side))
    return integral(func, params, "alg-log" if weight != "alg" else f"alg-{log}")


weighted_quad = Primitive("weighted_quad", _weighted_kernel, jvp=_weighted_jvp)


class _Directional:
    """(x, *params, *directions) -> the derivative of func(x, *params) in direction
    ``directions`` of the params at ``present``."""

    def __init__(self, func: Callable, count: int, present: tuple) -> None:
        self.func, self.count, self.present = func, count, present

    def __call__(self, x: Any, *values: Any) -> Any:
        from ..forward import jvp
        params, directions = list(values[:self.count]), values[self.count:]

        def moved(*chosen: Any) -> Any:
            for i, v in zip(self.present, chosen):
                params[i] = v
            return self.func(x, *params)

        chosen = tuple(params[i] for i in self.present)
        return jvp(moved, chosen, tuple(directions), replay=False)[1]


class _Times:
    """(x, *params) -> sign·x·func(x, *params)."""

    def __init__(self, func: Callable, sign: float) -> None:
        self.func, self.sign = func, sign

    def __call__(self, x: Any, *values: Any) -> Any:
        return self.sign * x * self.func(x, *values)


class _Lifted:
    """(x, *values) -> func(x, *args) with ``values`` in the places of the Boxed values
    that func's closure and ``args`` hold (:func:`dualad.rules.closures.lifted`)."""

    def __init__(self, rebuild: Callable) -> None:
        self.rebuild = rebuild

    def __call__(self, x: Any, *values: Any) -> Any:
        func, args = self.rebuild(values)
        return func(x, *args)


class _Shifted:
    """(u, *params, c) -> func(c + u, *params)."""

    def __init__(self, func: Callable) -> None:
        self.func = func

    def __call__(self, u: Any, *values: Any) -> Any:
        return self.func(values[-1] + u, *values[:-1])


class _Affine:
    """(s, *params, a, length) -> func(a + length·s, *params)."""

    def __init__(self, func: Callable) -> None:
        self.func = func

    def __call__(self, s: Any, *values: Any) -> Any:
        *params, a, length = values
        return self.func(a + length * s, *params)


def _weighted(func: Callable, a: Any, b: Any, args: tuple, options: dict) -> Any:
    """∫ₐᵇ func(x, *args)·w(x) dx with its perturbations (the value recomputed)."""
    weight, wvar = options["weight"], options.get("wvar")
    kept = tuple((k, options[k]) for k in _WEIGHTED_OPTIONS if k in options)
    rebuild, params = lifted((func, args))
    f = _Lifted(rebuild)
    sign = 1.0
    if primal_value(b) < primal_value(a):  # (SciPy integrates from min(a, b) too)
        a, b, sign = b, a, -1.0
    if weight == "cauchy":  # u = x − c: c moves the limits, not the weight's pole
        f, params, wvar = _Shifted(f), [*params, wvar], 0.0
        a, b = a - params[-1], b - params[-1]
    wvar = _as_wvar(wvar, weight)
    if weight.startswith("alg") and _holds_box((a, b)):
        return sign * _alg_moving(f, a, b, params, weight, wvar, kept)
    a0, b0 = float(primal_value(a)), float(primal_value(b))
    value = weighted_quad(*wvar, *params, func=f, a=a0, b=b0, weight=weight, options=kept)
    for end, primal, side in ((b, b0, 1.0), (a, a0, -1.0)):
        if isinstance(end, Boxed):
            value = value + side * _moved_end(f, params, weight, wvar, end, primal)
    return sign * value


def _as_wvar(wvar: Any, weight: str) -> list:
    """The weight's parameters, each a 0-d array or a Dual (α and β of the ``alg``
    weights: two)."""
    values = list(wvar) if _wvar_count(weight) == 2 else [wvar]
    return [as_operand(v) if isinstance(v, Boxed) else np.asarray(float(v)) for v in values]


def _moved_end(f: Callable, params: list, weight: str, wvar: list, end: Any,
               primal: float) -> Any:
    """∫ from ``primal`` to ``end`` of f·w: end − primal is a pure perturbation, and
    Gauss–Legendre on it is exact to the order of the transforms."""
    if not np.isfinite(primal):
        raise TypeError("scipy.integrate.quad: an infinite limit cannot move")
    step = end - primal
    terms = []
    for s, w in zip(_END_NODES, _END_WEIGHTS):
        x = primal + step * s
        at = 1.0 / x if weight == "cauchy" else (np.cos if weight == "cos" else np.sin)(
            wvar[0] * x)
        terms.append(w * f(x, *params) * at)
    return step * _total(terms)


def _alg_moving(f: Callable, a: Any, b: Any, params: list, weight: str, wvar: list,
                options: tuple) -> Any:
    """An ``alg`` weight between moving limits, in s = (x − a)/(b − a):
    (x − a)^α (b − x)^β = L^(α+β) s^α (1 − s)^β with L = b − a, log(x − a) = log L + log s."""
    length = b - a
    inner = [*params, a, length]

    def integral(to: str) -> Any:
        return weighted_quad(*wvar, *inner, func=_Affine(f), a=0.0, b=1.0, weight=to,
                             options=options)

    plain, log = integral("alg"), np.log(length)
    total = {"alg": lambda: plain,
             "alg-loga": lambda: log * plain + integral("alg-loga"),
             "alg-logb": lambda: log * plain + integral("alg-logb"),
             "alg-log": lambda: (log * log * plain + integral("alg-log")
                                 + log * (integral("alg-loga") + integral("alg-logb")))}
    return length ** (1 + wvar[0] + wvar[1]) * total[weight]()


# -- rules on samples ------------------------------------------------------------------

def _sample_weights(rule: Callable, n: int, **options: Any) -> np.ndarray:
    """The weights of SciPy's linear ``rule`` on n samples: the rule of the identity."""
    return rule(np.eye(n), axis=-1, **options)


def _linear_in_samples(name: str, y: Any, axis: int, **options: Any) -> Any:
    y = as_operand(y)
    _on_the_host([primal_value(y)])
    value = original(_MODULE, name)(primal_value(y), axis=axis, **options)
    if not isinstance(y, Boxed):
        return value
    moved = np.moveaxis(y, axis, -1)
    weights = _sample_weights(original(_MODULE, name), np.shape(primal_value(moved))[-1],
                              **options).astype(np.result_type(value))
    return with_primal(np.tensordot(moved, weights, axes=([-1], [0])), value)


@scipy_rule(_MODULE, "simpson")
def simpson(y: Any, x: Any = None, *, dx: float = 1.0, axis: int = -1) -> Any:
    """``scipy.integrate.simpson``, differentiated in ``y`` (not in ``x``)."""
    if isinstance(x, Boxed) or isinstance(dx, Boxed):
        raise TypeError("scipy.integrate.simpson: dualad differentiates Simpson's rule in "
                        "the samples y, not in their positions x or dx")
    return _linear_in_samples("simpson", y, axis, x=x, dx=dx)


@scipy_rule(_MODULE, "romb")
def romb(y: Any, dx: Any = 1.0, axis: int = -1, show: bool = False) -> Any:
    """``scipy.integrate.romb``, differentiated in ``y`` and ``dx`` (it scales the rule)."""
    if isinstance(dx, Boxed):
        return romb(y, 1.0, axis) * dx
    return _linear_in_samples("romb", y, axis, dx=dx)


@scipy_rule(_MODULE, "cumulative_trapezoid")
def cumulative_trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1,
                         initial: Any = None) -> Any:
    """``scipy.integrate.cumulative_trapezoid``: SciPy's arithmetic on Duals."""
    y = np.moveaxis(as_operand(y), axis, -1)
    if x is None:
        steps = dx
    else:
        x = as_operand(x)
        steps = np.diff(np.moveaxis(x, axis, -1) if np.ndim(primal_value(x)) > 1 else x)
    out = np.cumsum(steps * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        if not np.isscalar(initial):
            raise ValueError("`initial` must be `None` or a scalar.")
        start = np.full(np.shape(primal_value(out))[:-1] + (1,), initial,
                        np.result_type(primal_value(out)))
        out = np.concatenate([start, out], axis=-1)
    return np.moveaxis(out, -1, axis)


@scipy_rule(_MODULE, "fixed_quad")
def fixed_quad(func: Callable, a: Any, b: Any, args: tuple = (), n: int = 5) -> Any:
    """``scipy.integrate.fixed_quad``: SciPy's Gauss–Legendre arithmetic, on Duals."""
    import scipy
    from scipy.integrate._quadrature import _cached_roots_legendre

    limits = [primal_value(a), primal_value(b)]
    _on_the_host(limits)
    if np.any(np.isinf(limits[0])) or np.any(np.isinf(limits[1])):
        raise ValueError("Gaussian quadrature is only available for finite limits.")
    x, w = _cached_roots_legendre(n)
    x = np.real(x)
    if np.lib.NumpyVersion(scipy.__version__) >= "1.18.0":  # nodes in the limits' dtype
        dtype = np.result_type(*limits)
        dtype = dtype if dtype.kind in "fc" else np.dtype(np.float64)
        x, w = np.real(x.astype(dtype)), w.astype(dtype)
    y = (b - a) * (x + 1) / 2.0 + a
    return (b - a) / 2.0 * np.sum(w * func(y, *args), axis=-1), None


def _through_quad(name: str) -> Callable:
    def nested(*args: Any, **kwargs: Any) -> Any:
        return original(_MODULE, name)(*args, **kwargs)

    nested.__name__ = name
    nested.__doc__ = (f"``scipy.integrate.{name}``: SciPy's own nesting of ``quad``, "
                      "which is differentiated (the limits may be functions that close "
                      "over the parameters).")
    return nested


for _name in ("dblquad", "tplquad", "nquad"):
    scipy_rule(_MODULE, _name, callbacks=True)(_through_quad(_name))
