"""scipy.integrate's quadratures differentiated: ``quad`` (and through it
``dblquad``, ``tplquad``, ``nquad``), ``simpson``, ``romb`` and
``cumulative_trapezoid``.

``quad`` runs SciPy's QUADPACK on the integrand's primal values (its result is
SciPy's, bit for bit), then integrates again on the partition QUADPACK settled on,
with 21-point Gauss–Legendre on each piece, the integrand evaluated on the
transform's values. The pieces are mapped affinely from the limits themselves,
x = a + (b − a)·s, so limits that depend on the parameters give Leibniz's terms
without a formula, and every mode (reverse, hyper-dual, nested) comes from the
integrand's own rules. The derivative is the integral of the derivative to the
accuracy of that rule on QUADPACK's partition (which QUADPACK refined for the
value, not for the derivative). Infinite limits use QUADPACK's own map,
x = a + (1 − t)/t. A weighted integrand (``weight=``) is not differentiated yet: a
TypeError says so.

``simpson`` and ``romb`` are linear in the samples: their weights come from SciPy's
own rule applied to the identity, so the derivative in ``y`` is SciPy's rule on the
tangents (sample points ``x`` are not differentiated: a TypeError); a Dual ``dx``
scales ``romb``. ``cumulative_trapezoid`` is NumPy arithmetic in ``y`` and ``x``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import Boxed
from .scipy_functions import original, scipy_rule, with_primal
from .scipy_optimize import _holds_box, _primal_tree, _Watched

_MODULE = "scipy.integrate"
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(21)


def _quad(func: Callable, a: Any, b: Any, args: Any = (), full_output: int = 0,
          **options: Any) -> Any:
    """``scipy.integrate.quad``, differentiated in ``args``, the limits and what
    ``func`` closes over."""
    watched = _Watched(func)
    args = args if isinstance(args, tuple) else (args,)
    found = original(_MODULE, "quad")(watched, _primal_tree(a), _primal_tree(b),
                                      _primal_tree(args), full_output=1, **options)
    if not (watched.boxed or _holds_box((a, b, args))):
        return found if full_output else _as_called(found)
    if options.get("weight") is not None or options.get("complex_func"):
        raise TypeError("scipy.integrate.quad: dualad does not yet differentiate a "
                        "weighted or complex integrand")
    value = with_primal(_on_partition(func, a, b, args, found[2]), found[0])
    out = (value, *found[1:])
    return out if full_output else _as_called(out)


def _as_called(found: tuple) -> tuple:
    """What quad returns without ``full_output``: (value, error), warning as it does."""
    if len(found) > 3:
        import warnings

        from scipy.integrate import IntegrationWarning
        warnings.warn(found[3], IntegrationWarning, stacklevel=4)
    return found[:2]


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
    return np.sum(np.stack([np.reshape(as_operand(term), ()) for term in terms]))


for _where in (_MODULE, "scipy.integrate._quadpack_py"):  # (dblquad and nquad call it there)
    scipy_rule(_where, "quad", callbacks=True)(_quad)


# -- rules on samples ------------------------------------------------------------------

def _sample_weights(rule: Callable, n: int, **options: Any) -> np.ndarray:
    """The weights of SciPy's linear ``rule`` on n samples: the rule of the identity."""
    return rule(np.eye(n), axis=-1, **options)


def _linear_in_samples(name: str, y: Any, axis: int, **options: Any) -> Any:
    y = as_operand(y)
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
