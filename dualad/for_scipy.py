"""SciPy's solvers with dualad's exact derivatives: ``with_derivatives(minimize)(f, x0)``.

SciPy's solvers take derivatives as callables — ``jac``, ``hess``, ``hessp`` — with
their own conventions for each solver and method. :func:`with_derivatives` wraps a
solver so that a call fills in what that solver and method use, from one set of
transforms made for the call (replayed from the second iteration on), and leaves
alone what the caller gave:

* ``minimize``: ``jac=True`` with the value and the gradient of one reverse pass
  (:func:`~dualad.value_and_grad`: ``f`` is evaluated once per point); ``hess`` for
  ``dogleg`` and ``trust-exact`` (the dense Hessian), ``hessp`` for ``Newton-CG``,
  ``trust-ncg``, ``trust-krylov`` and ``trust-constr`` (Hessian-vector products by
  forward-over-reverse, :func:`~dualad.hvp`); nothing for the derivative-free methods.
* ``least_squares``: ``jac`` (:func:`~dualad.jacfwd`, or
  :func:`~dualad.sparse_jacobian` on the pattern given as ``jac_sparsity``). SciPy
  evaluates the residual at each trial point before it asks for the Jacobian at an
  accepted one, so the two cannot share a pass.
* ``root``: ``jac=True``, the value and the Jacobian of one forward pass (methods
  ``hybr`` and ``lm``; the quasi-Newton methods use no Jacobian).
* ``curve_fit``: ``jac``, the Jacobian with respect to the parameters.
* ``solve_ivp``: ``jac`` for the implicit methods (``Radau``, ``BDF``, ``LSODA``):
  :func:`~dualad.jacfwd` in ``y``, or :func:`~dualad.sparse_jacobian` on a given
  ``jac_sparsity``.

>>> import numpy as np, dualad
>>> from scipy.optimize import minimize, rosen
>>> res = dualad.with_derivatives(minimize)(rosen, np.zeros(5), method="trust-exact")
>>> res.success, bool(np.allclose(res.x, 1.0))
(True, True)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .forward import jacfwd
from .reverse import value_and_grad
from .second_order import hessian, hvp

__all__ = ["with_derivatives"]

#: minimize's methods by what they take besides the gradient.
HESS_METHODS = frozenset({"dogleg", "trust-exact"})
HESSP_METHODS = frozenset({"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"})
DERIVATIVE_FREE = frozenset({"nelder-mead", "powell", "cobyla", "cobyqa"})
ROOT_JACOBIAN_METHODS = frozenset({"hybr", "lm"})
IVP_JACOBIAN_METHODS = frozenset({"radau", "bdf", "lsoda"})


def with_derivatives(solver: Callable[..., Any]) -> Callable[..., Any]:
    """``solver`` — SciPy's ``minimize``, ``least_squares``, ``root``, ``curve_fit`` or
    ``solve_ivp`` — with the exact derivatives its method uses filled in by dualad.

    Call the result exactly as the solver: the same arguments, the same result.
    Derivatives the caller passes (``jac=``, ``hess=``, ...) are kept as given.

    Parameters
    ----------
    solver:
        One of the five SciPy functions above.

    Returns
    -------
    Callable
        The solver, giving it ``jac``/``hess``/``hessp`` as described in
        :mod:`dualad.for_scipy`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> from scipy.optimize import least_squares
    >>> t = np.linspace(0.0, 1.0, 20)
    >>> y = 2.0 * np.exp(-1.3 * t)
    >>> fit = dualad.with_derivatives(least_squares)(
    ...     lambda p: p[0] * np.exp(-p[1] * t) - y, np.ones(2))
    >>> np.round(fit.x, 6)
    array([2. , 1.3])
    >>> from scipy.integrate import solve_ivp
    >>> robertson = lambda t, y: np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
    ...                                    0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
    ...                                    3e7 * y[1] ** 2])
    >>> sol = dualad.with_derivatives(solve_ivp)(robertson, (0.0, 1e3), [1.0, 0.0, 0.0],
    ...                                          method="BDF", rtol=1e-6)
    >>> sol.success, sol.njev < 20
    (True, True)
    """
    name = getattr(solver, "__name__", None)
    fill = _FILLERS.get(name) if str(getattr(solver, "__module__", "")).startswith(
        "scipy.") else None
    if fill is None:
        raise TypeError(f"with_derivatives takes one of SciPy's {', '.join(sorted(_FILLERS))}, "
                        f"got {solver!r}")
    signature = inspect.signature(solver)

    @functools.wraps(solver)
    def solve(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        fill(bound.arguments, signature)
        return solver(*bound.args, **bound.kwargs)

    return solve


def _given(arguments: dict, name: str) -> bool:
    """Whether the caller gave a derivative ``name`` (``arguments`` holds only what the
    caller passed: ``jac="3-point"`` or ``jac=True`` is kept as asked)."""
    return arguments.get(name) is not None


def _method(arguments: dict, default: str | None) -> str | None:
    method = arguments.get("method", default)
    return method.lower() if isinstance(method, str) else method


def _minimize(arguments: dict, signature: inspect.Signature) -> None:
    method, fun = _method(arguments, None), arguments["fun"]
    if method in DERIVATIVE_FREE or callable(method):
        return
    if not _given(arguments, "jac"):
        arguments["fun"], arguments["jac"] = value_and_grad(fun), True
    if method in HESS_METHODS and not _given(arguments, "hess"):
        arguments["hess"] = hessian(fun)
    elif method in HESSP_METHODS and not (_given(arguments, "hess") or
                                           _given(arguments, "hessp")):
        arguments["hessp"] = _hessp(fun)


def _hessp(fun: Callable) -> Callable:
    def hessp(x: Any, p: Any, *args: Any) -> Any:
        return hvp(lambda x: fun(x, *args), (x,), (p,))[0]
    return hessp


def _least_squares(arguments: dict, signature: inspect.Signature) -> None:
    if _given(arguments, "jac"):
        return
    fun, pattern = arguments["fun"], arguments.pop("jac_sparsity", None)
    if pattern is None:
        arguments["jac"] = jacfwd(fun)
    else:
        from .sparse import sparse_jacobian

        arguments["jac"] = sparse_jacobian(fun, sparsity=pattern)


def _root(arguments: dict, signature: inspect.Signature) -> None:
    if _given(arguments, "jac") or _method(arguments, "hybr") not in ROOT_JACOBIAN_METHODS:
        return
    fun = arguments["fun"]
    pair = jacfwd(lambda x, *a: (fun(x, *a),) * 2, has_aux=True)  # (J, value): one pass
    arguments["fun"], arguments["jac"] = (lambda x, *a: pair(x, *a)[::-1]), True


def _curve_fit(arguments: dict, signature: inspect.Signature) -> None:
    if _given(arguments, "jac"):
        return
    f = arguments["f"]
    wrt = jacfwd(lambda params, x: f(x, *params))
    arguments["jac"] = lambda x, *params: wrt(np.asarray(params, dtype=float), x)


def _solve_ivp(arguments: dict, signature: inspect.Signature) -> None:
    options = arguments.setdefault("options", {})
    if _given(options, "jac") or _method(arguments, "RK45") not in IVP_JACOBIAN_METHODS:
        return
    fun, pattern = arguments["fun"], options.pop("jac_sparsity", None)
    if pattern is None:
        options["jac"] = jacfwd(fun, argnums=1)
    else:
        from .sparse import sparse_jacobian

        options["jac"] = sparse_jacobian(fun, argnums=1, sparsity=pattern)


_FILLERS: dict[str, Callable[[dict, inspect.Signature], None]] = {
    "minimize": _minimize, "least_squares": _least_squares, "root": _root,
    "curve_fit": _curve_fit, "solve_ivp": _solve_ivp}
