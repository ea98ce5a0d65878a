"""scipy.optimize's root finders, differentiated by the implicit function theorem;
and ``rosen`` with its derivatives, plain NumPy behind SciPy's ``np.asarray``.

A root x* of F(x, p) = 0 moves with the parameters as dx*/dp = −(∂F/∂x)⁻¹ ∂F/∂p. The
parameters reach F however the user passes them — through ``args=``, or closed over
by the callback (a lambda reading ``p``) — so none is asked for:

1. SciPy's own solver runs on F's primal values: the primal root is SciPy's, bit for
   bit (F made again with the primal values it closes over, by
   :func:`dualad.rules.closures.lifted`; what that does not reach runs on the
   transform's values, its perturbations dropped).
2. ∂F/∂x at x* comes from :func:`dualad.jacfwd` (a derivative for a scalar root, a
   diagonal for ``newton`` of an array), its primal part. From :data:`SPARSE_FROM`
   (200) unknowns on, it is sparse: F's pattern at x* (``local=True`` in
   :func:`dualad.jacobian_sparsity`: what is zero at x* adds nothing), a colouring of
   its columns, one forward pass per colour (a few for a discretised PDE, where the
   dense Jacobian takes n), a ``scipy.sparse`` array factorised once by SuperLU
   (``scipy.sparse.linalg.splu``). ``minimize``'s stationary points take the same
   path with the Hessian. A pattern fuller than a tenth of the matrix,
   or one the detection cannot find, goes back to the dense Jacobian up to
   :data:`DENSE_UP_TO` (4000) unknowns; beyond, the first is still solved sparse and
   the second raises a TypeError.
3. Chord Newton steps on F evaluated with the transform's values, x ← x − (∂F/∂x)⁻¹ F(x)
   with the primal part of each step dropped, give x*'s perturbations: each step makes
   one more order exact (one for a Dual or reverse mode, two for a hyper-dual's second
   order, one more per nested transform). No formula per mode: F's own rules do it.
   The solve is ``np.linalg.solve``'s rule, or for a sparse ∂F/∂x the primitive
   :data:`sparse_lu_solve` (SuperLU's solve, transposed in reverse mode), reusing the
   one factorisation in every step and for every seed.

The derivative is that of the exact root at SciPy's x* (as exact as the solver's
tolerance). A root where ∂F/∂x is singular has no derivative: a TypeError says so
(dense: a condition number past 1/ε; sparse: SuperLU's exactly zero pivot, or U's
smallest pivot below ε times its largest; either: a non-finite entry). A solver that
did not converge gives the derivative at its last iterate, with a warning.
The dispatchers take every call: a callback's values show whether anything is
differentiated, and where nothing is, SciPy's own result is returned untouched (the
cost: one type test per callback call).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..pytrees import tree_leaves, tree_map
from ..dual import Dual, as_operand, primal_value
from ..fillable import resolved_tree
from ..hyperdual import HyperDual
from ..operands import holds_box
from ..primitive import Boxed, NeedsHost, Primitive, backend_of
from ..rules.closures import lifted
from ..rules.scipy_functions import original, scipy_rule

_MODULE = "scipy.optimize"


def _holds_box(tree: Any) -> bool:
    return holds_box(tree_leaves(tree))  # (dicts too: least_squares' kwargs)


def _primal_tree(tree: Any) -> Any:
    """``tree`` with every perturbation dropped (arrays filled with Duals included): the
    NumPy values SciPy's solver runs on (:class:`NeedsHost` for another backend's)."""
    tree = resolved_tree(tree)
    if not _holds_box(tree):
        return tree
    tree = tree_map(primal_value, tree)
    _on_the_host(tree_leaves(tree))
    return tree


class _Watched:
    """A callback for SciPy's solver: the user's on the primal values, noting whether
    it reads perturbations (closed-over parameters).

    The values it closes over (:func:`dualad.rules.closures.lifted`) are replaced by
    their primal values once, so SciPy's iterations run at NumPy's speed; what that
    does not reach (a global, a value in a list, a dict or an object, which would be
    copied: the callback's writes land where they always do) runs on the transform's
    values, perturbations dropped.
    """

    def __init__(self, fun: Callable) -> None:
        self.given = fun
        rebuild, leaves = lifted(fun, mutable=False)
        self.boxed = bool(leaves)
        if leaves:
            plain = [primal_value(v) for v in leaves]
            _on_the_host(plain)
            fun = rebuild(plain)
        self.fun = fun

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.given)  # (curve_fit counts the parameters of f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = self.fun(*args, **kwargs)  # (least_squares passes its kwargs= as keywords)
        if type(out) is np.ndarray or type(out) is float:
            return out  # (the common case, at once)
        out = resolved_tree(out)
        if _holds_box(out):
            self.boxed = True
            out = _primal_tree(out)
            _on_the_host(tree_leaves(out))
        return out


def _on_the_host(values: list) -> None:
    if backend_of(values) != "numpy":
        raise NeedsHost("SciPy's solvers run on NumPy values, on the host: they met JAX "
                        "values (jax.jit)")


def _vector(out: Any) -> Any:
    """A callback's result (an array, a scalar, or a list of them) as a 1-D array."""
    out = resolved_tree(out)
    if isinstance(out, (list, tuple)):
        out = np.stack([np.reshape(v, ()) if isinstance(v, Boxed) else np.asarray(v, float)
                        for v in out])
    return np.reshape(out, (-1,))


def _order(value: Any) -> int:
    """The highest order of perturbation ``value`` carries (1 for a Dual, 2 for a
    hyper-dual, K for a jet of order K, the sum of the levels for nested transforms)."""
    order = 0
    while isinstance(value, Dual):
        order += 2 if isinstance(value, HyperDual) else value._tag.order
        value = value.primal
    return order


#: From this many unknowns on, ∂F/∂x is computed sparse (see the module docstring).
SPARSE_FROM = 200
#: Up to this many unknowns, ∂F/∂x is computed dense where its pattern cannot be found
#: or fills more than :data:`DENSE_FRACTION` of the matrix; beyond, a full pattern is
#: still computed sparse, and one that cannot be found raises a TypeError.
DENSE_UP_TO = 4000
DENSE_FRACTION = 0.1
#: The colours of one forward pass carry at most this many bytes of tangent.
_PASS_BYTES = 8 * 2**20


def _implicit(residual: Callable, x_star: Any, name: str, diagonal: bool = False) -> Any:
    """``x_star`` (a root of ``residual``'s primal) with the perturbations of the exact
    root of ``residual`` (see the module docstring); ``diagonal``: each output depends
    on its own input only (``newton`` of an array)."""
    from ..forward import jacfwd, jvp

    shape = np.shape(x_star)
    x0 = np.reshape(np.asarray(x_star, dtype=np.result_type(x_star, float)), (-1,))

    def flat(x: Any) -> Any:
        return _vector(residual(np.reshape(x, shape) if shape else np.reshape(x, ())))

    # ∂F/∂x first: a replayed call's values are then the interpreter's Duals.
    slope = None
    if diagonal:
        slope = primal_value(jvp(flat, (x0,), (np.ones_like(x0),), replay=False)[1])
    elif x0.size >= SPARSE_FROM:
        slope = _sparse_slope(flat, x0, name)
    if slope is None:
        slope = _square(primal_value(jacfwd(flat, replay=False)(x0)), name)
    r = flat(x0)
    if not isinstance(r, Boxed):
        return x_star  # the root does not depend on what the transform differentiates
    r = r._interpreted()
    solve = _check_regular(slope, name, diagonal)
    x = x0
    for step in range(_order(r)):
        if step:
            r = flat(x)
        d = solve(r)
        x = x - (d - primal_value(d))  # (the primal stays SciPy's root, bit for bit)
    return np.reshape(x, shape)


def _sparse_slope(flat: Callable, x0: np.ndarray, name: str) -> Any:
    """∂F/∂x at ``x0`` as a CSR array: the pattern at this point (``local``: what is
    zero here adds nothing), a colouring of its columns, one forward seed per colour.
    None where the dense Jacobian is the better (or only) way."""
    from scipy import sparse

    from ..forward import jvp
    from ..sparse import column_coloring, jacobian_sparsity
    from ..sparse.coloring import column_values

    n = x0.size
    try:
        pattern = jacobian_sparsity(flat, x0, local=True)
    except Exception as error:  # noqa: BLE001 - an operation the detection cannot follow
        if n <= DENSE_UP_TO:
            return None
        raise TypeError(f"{name}: ∂F/∂x of {n} unknowns is computed sparse, and the "
                        f"residual's sparsity pattern could not be found ({error!r}). "
                        f"Up to {DENSE_UP_TO} unknowns it is computed dense instead "
                        "(scipy_optimize.DENSE_UP_TO)") from error
    if _square(pattern, name).nnz > DENSE_FRACTION * n * n and n <= DENSE_UP_TO:
        return None
    colors = column_coloring(pattern)
    passes = int(colors.max(initial=-1)) + 1
    per_pass = max(1, _PASS_BYTES // (n * x0.dtype.itemsize))
    blocks = [np.zeros((0, n), x0.dtype)]
    for start in range(0, passes, per_pass):
        chunk = np.arange(start, min(start + per_pass, passes))
        seeds = (colors == chunk[:, None]).astype(x0.dtype)
        _, t = jvp(flat, (x0,), (seeds,), batched=True, replay=False)
        blocks.append(np.reshape(primal_value(t), (len(chunk), n)))
    values = column_values(pattern, colors, np.concatenate(blocks).T)
    return sparse.csr_array((values, pattern.indices, pattern.indptr), shape=(n, n))


def _square(slope: Any, name: str) -> Any:
    n = slope.shape[1]
    if slope.shape != (n, n):
        raise TypeError(f"{name}: the residual has {slope.shape[0]} components for {n} "
                        "unknowns; dualad differentiates square systems")
    return slope


#: The solvers whose ∂F/∂x is a Hessian (of the objective, or of a KKT system).
_MINIMISERS = ("scipy.optimize.minimize", "scipy.optimize.minimize_scalar",
               "scipy.optimize.least_squares", "scipy.optimize.curve_fit")


def _singular(name: str) -> TypeError:
    if name in _MINIMISERS:
        return TypeError(f"{name}: the Hessian (of the KKT system, with constraints) is "
                         "singular at the optimum, so the minimum is not strict: it does "
                         "not move smoothly with the parameters and has no derivative (a "
                         "direction in which the objective is flat, or parameters the fit "
                         "cannot tell apart)")
    return TypeError(f"{name}: ∂F/∂x is singular at the root, so the root does not move "
                     "smoothly with the parameters and has no derivative (the equations "
                     "do not determine x there: a repeated equation, a double root)")


def _check_regular(slope: Any, name: str, diagonal: bool) -> Callable:
    """The solve with ∂F/∂x of a chord step; a TypeError where ∂F/∂x is singular at the
    root (no derivative exists). A sparse one is factorised once (SuperLU), and judged
    singular where SuperLU finds an exactly zero pivot or the smallest of U's diagonal
    is below ε times its largest (a lower bound of the condition number)."""
    from scipy import sparse
    from scipy.sparse.linalg import splu

    if sparse.issparse(slope):
        if not np.all(np.isfinite(slope.data)):
            raise _singular(name)
        try:
            lu = splu(sparse.csc_array(slope))
        except RuntimeError as error:  # "Factor is exactly singular"
            raise _singular(name) from error
        pivots = np.abs(lu.U.diagonal())
        if not pivots.min(initial=np.inf) > np.finfo(float).eps * pivots.max(initial=0.0):
            raise _singular(name)
        return lambda r: sparse_lu_solve(r, lu=lu, trans="N")
    if diagonal or slope.ndim == 0:
        singular = not np.all((slope != 0) & np.isfinite(slope))
    else:
        singular = (not np.all(np.isfinite(slope))
                    or np.linalg.cond(slope) * np.finfo(float).eps >= 1)
    if singular:
        raise _singular(name)
    if diagonal:
        return lambda r: r / slope
    return lambda r: np.linalg.solve(slope, r)


def _lu_kernel(b: np.ndarray, lu: Any, trans: str) -> np.ndarray:
    n = b.shape[-1]  # (a leading axis of seeds: the columns of one solve)
    columns = np.ascontiguousarray(np.reshape(b, (-1, n)).T)
    return np.reshape(lu.solve(columns, trans=trans).T, b.shape)


def _lu_jvp(primals: tuple, tangents: tuple, ans: Any, lu: Any, trans: str) -> Any:
    return None if tangents[0] is None else sparse_lu_solve(tangents[0], lu=lu, trans=trans)


def _lu_transpose(ct: Any, args: tuple, linear: Any, lu: Any, trans: str) -> tuple:
    return (sparse_lu_solve(ct, lu=lu, trans="T" if trans == "N" else "N"),)


#: A solve with a SuperLU factor (``scipy.sparse.linalg.splu``), linear in the
#: right-hand side (of shape ``(..., n)``): the chord steps of a sparse ∂F/∂x.
sparse_lu_solve = Primitive(
    "sparse_lu_solve", _lu_kernel, jvp=_lu_jvp, linear=(0,), transpose=_lu_transpose,
    shape_rule=lambda b, lu, trans: (tuple(b.shape), np.result_type(b.dtype, float)),
    pattern="dense")


def _warn_unconverged(name: str, converged: bool, message: Any = "") -> None:
    if not converged:
        warnings.warn(f"{name} did not converge ({message}): the derivative given is that "
                      "of the exact solution at its last iterate", RuntimeWarning, stacklevel=4)


def _bound(fun: Callable, args: Any) -> Callable:
    args = args if isinstance(args, tuple) else (args,)
    return lambda x: fun(x, *args)


# -- systems: root, fsolve ---------------------------------------------------------------

@scipy_rule(_MODULE, "root", callbacks=True)
def root(fun: Callable, x0: Any, args: Any = (), method: str = "hybr", jac: Any = None,
         **options: Any) -> Any:
    """``scipy.optimize.root``, its ``x`` differentiated in ``args`` and in what ``fun``
    closes over (every method: the derivative is the exact root's)."""
    watched = _Watched(fun)
    plain_jac = _Watched(jac) if callable(jac) else jac
    result = original(_MODULE, "root")(watched, _primal_tree(x0), args=_primal_tree(args),
                                       method=method, jac=plain_jac, **options)
    if not (watched.boxed or _holds_box(args)):
        return result
    _warn_unconverged("scipy.optimize.root", result.success, result.message)
    values = fun if jac is not True else (lambda *a: fun(*a)[0])
    result.x = _implicit(_bound(values, args), result.x, "scipy.optimize.root")
    return result


@scipy_rule(_MODULE, "fsolve", callbacks=True)
def fsolve(func: Callable, x0: Any, args: Any = (), fprime: Callable | None = None,
           full_output: bool = False, **options: Any) -> Any:
    """``scipy.optimize.fsolve``, its root differentiated as :func:`root`'s."""
    watched = _Watched(func)
    found = original(_MODULE, "fsolve")(
        watched, _primal_tree(x0), args=_primal_tree(args),
        fprime=_Watched(fprime) if fprime is not None else None,
        full_output=True, **options)
    x, info, status, message = found
    if watched.boxed or _holds_box(args):
        _warn_unconverged("scipy.optimize.fsolve", status == 1, message)
        x = _implicit(_bound(func, args), x, "scipy.optimize.fsolve")
    return (x, info, status, message) if full_output else x


def _large_scale(name: str) -> Callable:
    def solve(F: Callable, xin: Any, *rest: Any, **options: Any) -> Any:
        watched = _Watched(F)
        x = original(_MODULE, name)(watched, _primal_tree(xin), *rest, **options)
        return _implicit(F, x, f"scipy.optimize.{name}") if watched.boxed else x

    return _named(solve, name, "in what ``F`` closes over")


def _named(solve: Callable, name: str, differentiated: str) -> Callable:
    solve.__name__ = solve.__qualname__ = name
    solve.__doc__ = f"``scipy.optimize.{name}``, its root differentiated {differentiated}."
    return solve


for _name in ("anderson", "broyden1", "broyden2", "diagbroyden", "newton_krylov"):
    scipy_rule(_MODULE, _name, callbacks=True)(_large_scale(_name))


# -- scalar roots: brackets, newton, root_scalar -----------------------------------------

def _bracketing(name: str) -> Callable:
    def solve(f: Callable, a: Any, b: Any, args: Any = (), *rest: Any, **options: Any) -> Any:
        watched = _Watched(f)
        found = original(_MODULE, name)(watched, _primal_tree(a), _primal_tree(b),
                                        _primal_tree(args), *rest, **options)
        if not (watched.boxed or _holds_box(args)):
            return found
        full = isinstance(found, tuple)
        x, info = found if full else (found, None)
        converged = info.converged if info is not None else True
        _warn_unconverged(f"scipy.optimize.{name}", converged,
                          getattr(info, "flag", ""))
        x = _implicit(_bound(f, args), x, f"scipy.optimize.{name}")
        if full:
            info.root = x
            return x, info
        return x

    return _named(solve, name, "in ``args`` and in what ``f`` closes over (not in the "
                  "bracket)")


for _name in ("brentq", "brenth", "ridder", "bisect", "toms748"):
    scipy_rule(_MODULE, _name, callbacks=True)(_bracketing(_name))


@scipy_rule(_MODULE, "newton", callbacks=True)
def newton(func: Callable, x0: Any, fprime: Callable | None = None, args: Any = (),
           *rest: Any, full_output: bool = False, **options: Any) -> Any:
    """``scipy.optimize.newton`` (secant, Newton, Halley; a scalar or an array of
    independent roots), its root differentiated in ``args`` and what ``func`` closes
    over."""
    watched = _Watched(func)
    plain = [_Watched(g) if callable(g) else g for g in (fprime, options.pop("fprime2", None))]
    found = original(_MODULE, "newton")(watched, _primal_tree(x0), plain[0],
                                        _primal_tree(args), *rest, fprime2=plain[1],
                                        full_output=full_output, **options)
    if not (watched.boxed or _holds_box(args)):
        return found
    x = found[0] if full_output else found
    if full_output and np.ndim(x) == 0:
        _warn_unconverged("scipy.optimize.newton", found[1].converged, found[1].flag)
    elif full_output:
        _warn_unconverged("scipy.optimize.newton", bool(np.all(found[1])), "some elements")
    # (newton unpacks its args as they come: pvlib passes a list)
    x = _implicit(_bound(func, tuple(args)), x, "scipy.optimize.newton",
                  diagonal=np.ndim(x) > 0)
    if not full_output:
        return x
    if hasattr(found, "_replace"):  # an array's (root, converged, zero_der)
        return found._replace(root=x)
    found[1].root = x
    return (x, *found[1:])


@scipy_rule(_MODULE, "root_scalar", callbacks=True)
def root_scalar(f: Callable, args: Any = (), method: str | None = None, bracket: Any = None,
                fprime: Any = None, fprime2: Any = None, x0: Any = None, x1: Any = None,
                **options: Any) -> Any:
    """``scipy.optimize.root_scalar`` (every method), its ``root`` differentiated in
    ``args`` and what ``f`` closes over."""
    watched = _Watched(f)
    plain = [_Watched(g) if callable(g) else g for g in (fprime, fprime2)]
    values = (lambda *a: f(*a)[0]) if fprime is True else f
    result = original(_MODULE, "root_scalar")(
        watched, args=_primal_tree(args), method=method,
        bracket=_primal_tree(bracket),
        fprime=plain[0], fprime2=plain[1], x0=_primal_tree(x0), x1=_primal_tree(x1),
        **options)
    if watched.boxed or _holds_box(args):
        _warn_unconverged("scipy.optimize.root_scalar", result.converged, result.flag)
        result.root = _implicit(_bound(values, args), result.root,
                                "scipy.optimize.root_scalar")
    return result


@scipy_rule(_MODULE, "fixed_point", callbacks=True)
def fixed_point(func: Callable, x0: Any, args: Any = (), **options: Any) -> Any:
    """``scipy.optimize.fixed_point``, x* = func(x*) differentiated in ``args`` and what
    ``func`` closes over (the root of ``func(x) − x``)."""
    watched = _Watched(func)
    x = original(_MODULE, "fixed_point")(watched, _primal_tree(x0), args=_primal_tree(args),
                                         **options)
    if not (watched.boxed or _holds_box(args)):
        return x
    bound = _bound(func, args)
    return _implicit(lambda y: bound(y) - y, x, "scipy.optimize.fixed_point")


# -- the Rosenbrock function and its derivatives (plain NumPy behind SciPy's asarray) ----

@scipy_rule(_MODULE, "rosen")
def rosen(x: Any) -> Any:
    """``scipy.optimize.rosen`` (along the first axis, as SciPy's broadcasts)."""
    x = as_operand(x)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def _rosen_diagonal(x: Any) -> Any:
    ends = [np.reshape(1200 * x[0] ** 2 - 400 * x[1] + 2, (1,)),
            np.full(1, 200.0, np.result_type(primal_value(x)))]
    return np.concatenate([ends[0], 202 + 1200 * x[1:-1] ** 2 - 400 * x[2:], ends[1]])


@scipy_rule(_MODULE, "rosen_der")
def rosen_der(x: Any) -> Any:
    """``scipy.optimize.rosen_der``, its gradient."""
    x = as_operand(x)
    inner, before, after = x[1:-1], x[:-2], x[2:]
    first = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    middle = (200 * (inner - before ** 2) - 400 * (after - inner ** 2) * inner
              - 2 * (1 - inner))
    last = 200 * (x[-1] - x[-2] ** 2)
    return np.concatenate([np.reshape(first, (1,)), middle, np.reshape(last, (1,))])


@scipy_rule(_MODULE, "rosen_hess")
def rosen_hess(x: Any) -> Any:
    """``scipy.optimize.rosen_hess``, its Hessian (a dense matrix)."""
    x = np.reshape(as_operand(x), (-1,))
    off = -400 * x[:-1]
    return np.diag(off, 1) + np.diag(off, -1) + np.diag(_rosen_diagonal(x))


@scipy_rule(_MODULE, "rosen_hess_prod")
def rosen_hess_prod(x: Any, p: Any) -> Any:
    """``scipy.optimize.rosen_hess_prod``, the Hessian times ``p``."""
    x, p = np.reshape(as_operand(x), (-1,)), as_operand(p)
    off = -400 * x[:-1]
    zero = np.zeros(1, np.result_type(primal_value(x), primal_value(p)))
    below = np.concatenate([zero, off * p[:-1]])
    above = np.concatenate([off * p[1:], zero])
    return _rosen_diagonal(x) * p + below + above
