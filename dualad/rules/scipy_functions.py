"""SciPy functions called unchanged: scipy.special's Python functions, scipy.linalg,
scipy.signal.convolve and scipy.stats distributions.

These SciPy functions convert their arguments with ``np.asarray`` before any NumPy
protocol runs, so a Dual never reaches a rule through ``__array_function__``. The
route (measured against SciPy's array-API dispatch, see docs/scipy-functions.md):
each function of :data:`SCIPY_RULES` is replaced, in the SciPy module users call
it from, by a thin dispatcher that runs the dualad implementation when an argument
holds a Dual and SciPy's own function otherwise (one type test per argument).
Distribution methods are replaced on their classes (``rv_continuous.logpdf``, ...),
so ``norm.logpdf`` works however ``norm`` was imported. Modules not yet imported
are patched when they are (an import hook, removed once all are done): importing
dualad does not import scipy.stats.

The condition: a SciPy *function* bound by name before ``import dualad``
(``from scipy.linalg import expm`` first) is SciPy's own and refuses Duals; call it
through its module (``scipy.linalg.expm``) or import dualad first.

scipy is optional: nothing here imports it at module level.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import align_tangent, as_operand, primal_value
from ..operands import holds_box as _holds_box
from ..primitive import Boxed, Primitive, register_function
from .elementwise import where
from .linalg import matmul
from .shape import _swapaxes, concatenate, getitem, reshape, shape_of, transpose, unbroadcast

# ---------------------------------------------------------------------------
# The route: dispatchers installed into SciPy's modules and classes
# ---------------------------------------------------------------------------

#: module -> {attribute: dualad implementation}. A dotted attribute
#: (``rv_continuous.logpdf``) names a method of a class of that module; the
#: attribute "" a function called with the module once it is imported.
SCIPY_RULES: dict[str, dict[str, Callable]] = {}
#: Each installed dispatcher -> SciPy's original function.
ORIGINALS: dict[Callable, Callable] = {}


def scipy_rule(module: str, *names: str) -> Callable[[Callable], Callable]:
    """Declare ``implementation`` as dualad's ``module.name`` for Duals (decorator)."""

    def decorate(implementation: Callable) -> Callable:
        for name in names:
            SCIPY_RULES.setdefault(module, {})[name] = implementation
        return implementation

    return decorate


def _holds_dual(args: tuple, kwargs: dict) -> bool:
    for a in args:
        if isinstance(a, Boxed) or ((type(a) is tuple or type(a) is list) and _holds_box(a)):
            return True
    return bool(kwargs) and _holds_box(tuple(kwargs.values()))


def _dispatcher(original: Callable, implementation: Callable, method: bool) -> Callable:
    if method:  # a method: ``self`` is the distribution, never a Dual
        def dispatch(self, *args, **kwargs):
            if _holds_dual(args, kwargs):
                return implementation(self, *args, **kwargs)
            return original(self, *args, **kwargs)
    else:
        def dispatch(*args, **kwargs):
            if _holds_dual(args, kwargs):
                return implementation(*args, **kwargs)
            return original(*args, **kwargs)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(dispatch, attr, getattr(original, attr, None))
    dispatch.__dict__.update(getattr(original, "__dict__", {}))
    dispatch.__wrapped__ = original
    return dispatch


def _install(module_name: str, module: Any) -> None:
    """Replace the functions of ``SCIPY_RULES[module_name]`` in ``module``."""
    for name, implementation in SCIPY_RULES.get(module_name, {}).items():
        if not name:  # not a function: a callback once the module is imported
            implementation(module)
            continue
        owner, _, attr = name.rpartition(".")
        target = getattr(module, owner) if owner else module
        original = vars(target)[attr]
        if original in ORIGINALS:  # installed already (a reload keeps ours)
            continue
        dispatch = _dispatcher(original, implementation, method=bool(owner))
        ORIGINALS[dispatch] = original
        setattr(target, attr, dispatch)
        if not owner:
            register_function(dispatch, implementation)


class _InstallOnImport:
    """A ``sys.meta_path`` finder that patches a SciPy module right after it runs."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _PENDING:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_and_install(module):
            exec_module(module)
            _done(fullname, module)

        spec.loader.exec_module = exec_and_install
        return spec


_PENDING: set[str] = set()
_HOOK = _InstallOnImport()


def _done(module_name: str, module: Any) -> None:
    _install(module_name, module)
    _PENDING.discard(module_name)
    if not _PENDING and _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def install_all() -> None:
    """Install the dispatchers in the SciPy modules imported so far, and on import
    for the others. Called once, when the rule table is loaded."""
    try:
        import scipy  # noqa: F401  (cheap: its submodules load lazily)
    except ImportError:  # scipy is optional
        return
    for module_name in SCIPY_RULES:
        if module_name in sys.modules:
            _install(module_name, sys.modules[module_name])
        else:
            _PENDING.add(module_name)
    if _PENDING and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def _scipy(module: str) -> Any:
    return importlib.import_module(module)


class _ArrayNamespace(types.ModuleType):
    """What ``Dual.__array_namespace__`` returns, for SciPy's array-API dispatch
    (``SCIPY_ARRAY_API=1``): NumPy's namespace (NumPy 2 has the array API's names; its
    functions reach the rule table through ``__array_function__``), an ``asarray``
    that keeps Duals, and ``special``, the scipy.special ufuncs, where SciPy looks
    for a backend's own special functions."""

    def __getattr__(self, name: str) -> Any:
        if name == "special":
            from .special import sc
            return sc
        return getattr(np, name)

    @staticmethod
    def asarray(obj: Any, dtype: Any = None, copy: Any = None, device: Any = None) -> Any:
        """A Dual stays a Dual (cast to ``dtype`` if given); anything else: np.asarray."""
        if isinstance(obj, Boxed):
            return obj if dtype is None else np.astype(obj, dtype)
        return np.asarray(obj, dtype=dtype, copy=copy)


_NAMESPACE = _ArrayNamespace("dualad.array_namespace")


def array_namespace() -> Any:
    """The array namespace of Duals (``Dual.__array_namespace__``)."""
    return _NAMESPACE


# ---------------------------------------------------------------------------
# scipy.special: logsumexp, softmax, log_softmax, polygamma (dualad.rules.special), multigammaln
# ---------------------------------------------------------------------------

def _special_rules() -> None:
    from . import special
    scipy_rule("scipy.special", "logsumexp")(special.logsumexp)
    scipy_rule("scipy.special", "softmax")(special.softmax)
    scipy_rule("scipy.special", "log_softmax")(special.log_softmax)
    if hasattr(special, "polygamma"):
        scipy_rule("scipy.special", "polygamma")(special.polygamma)


_special_rules()


@scipy_rule("scipy.special", "multigammaln")
def multigammaln(a, d):
    """log of the multivariate gamma function, ``scipy.special.multigammaln``."""
    from .special import gammaln
    if not np.isscalar(d) or math.floor(d) != d:
        raise ValueError("d should be a positive integer (dimension)")
    a = as_operand(a)
    value = primal_value(a)
    if isinstance(value, (np.ndarray, np.generic)) and np.any(value <= 0.5 * (d - 1)):
        # (checked on NumPy values; a JAX value under dualad_gpu is not known yet)
        raise ValueError(f"condition a ({value}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    terms = np.stack([gammaln(a - 0.5 * j) for j in range(int(d))])
    return d * (d - 1) * 0.25 * np.log(np.pi) + np.sum(terms, axis=0)  # float64, as SciPy


# ---------------------------------------------------------------------------
# scipy.linalg: triangular, banded and Sylvester solves are primitives linear in
# the right-hand side; expm's derivative is the Fréchet derivative L(A, E), a
# primitive linear in E; cho_* and lu_* are built on the triangular solve.
# ---------------------------------------------------------------------------


def _mT(x):
    return _swapaxes(x, -1, -2)


def _move(x, source: int, destination: int):
    ndim = len(shape_of(x))
    order = [i for i in range(ndim) if i != source % ndim]
    order.insert(destination % ndim, source % ndim)
    return transpose(x, axes=tuple(order))


def _seeded_solve(solve: Callable, a, rhs, vector: bool):
    """``solve(a, ·)`` of every seed of ``rhs`` (K, ..., n[, m]); for a single matrix
    ``a`` the seeds become columns of one call."""
    row_axis = -1 if vector else -2
    if len(shape_of(a)) == 2 and shape_of(a)[0] == shape_of(rhs)[row_axis]:
        moved = _move(rhs, row_axis, 0)
        shape = shape_of(moved)
        columns = solve(a, reshape(moved, shape=(shape[0], int(np.prod(shape[1:], dtype=int)))))
        return _move(reshape(columns, shape=shape), 0, row_axis)
    if vector:
        out = solve(a, reshape(rhs, shape=shape_of(rhs) + (1,)))
        return getitem(out, index=(Ellipsis, 0))
    return solve(a, rhs)


def _solve_shape(a, b, **params):
    if b.ndim == 1:
        return tuple(b.shape), np.result_type(a.dtype, b.dtype, np.float32)
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return batch + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype, np.float32)


def _triangle(n: int, lower: bool, unit: bool) -> np.ndarray:
    mask = np.tri(n, n, -1 if unit else 0, dtype=bool)
    return mask if lower else mask.T


def _solve_triangular_kernel(a, b, trans, lower, unit_diagonal):
    return _scipy("scipy.linalg").solve_triangular(a, b, trans=trans, lower=lower,
                                                    unit_diagonal=unit_diagonal)


def _solve_triangular_jax(a, b, trans, lower, unit_diagonal):
    import jax
    solve = lambda a, b: jax.scipy.linalg.solve_triangular(  # noqa: E731
        a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    if a.ndim == 2:
        return solve(a, b)
    return jax.numpy.vectorize(solve, signature="(n,n),(n,m)->(n,m)")(a, b)


def _triangular_solver(trans: int, lower: bool, unit: bool) -> Callable:
    return lambda a, rhs: solve_triangular(a, rhs, trans=trans, lower=lower,
                                           unit_diagonal=unit)


def _solve_triangular_jvp(primals, tangents, ans, trans, lower, unit_diagonal):
    a, b = primals
    ta, tb = tangents
    vector = b.ndim == 1
    rhs = None if tb is None else tb
    if ta is not None:
        # d(op(A)⁻¹b) = op(A)⁻¹(db − op(dA)·x), dA restricted to the triangle LAPACK reads.
        da = where(_triangle(shape_of(a)[-1], lower, unit_diagonal), ta, 0.0)
        da = _mT(da) if trans else da
        x = reshape(ans, shape=ans.shape + (1,)) if vector else ans
        dax = matmul(align_tangent(da, x.ndim), x)
        dax = getitem(dax, index=(Ellipsis, 0)) if vector else dax
        rhs = -dax if rhs is None else rhs - dax
    return _seeded_solve(_triangular_solver(trans, lower, unit_diagonal), a, rhs, vector)


def _solve_triangular_transpose(ct, args, linear, trans, lower, unit_diagonal):
    a, b = args
    solver = _triangular_solver(1 - trans, lower, unit_diagonal)
    return None, unbroadcast(_seeded_solve(solver, a, ct, b.ndim == 1), tuple(b.shape))


solve_triangular = Primitive("solve_triangular", _solve_triangular_kernel,
                             jvp=_solve_triangular_jvp, linear=(1,),
                             transpose=_solve_triangular_transpose, shape_rule=_solve_shape)
solve_triangular.kernels["jax"] = _solve_triangular_jax

_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}


@scipy_rule("scipy.linalg", "solve_triangular")
def _solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                      check_finite=True):
    if trans not in _TRANS:
        raise ValueError("Invalid trans argument")
    return solve_triangular(as_operand(a), as_operand(b), trans=_TRANS[trans],
                            lower=bool(lower), unit_diagonal=bool(unit_diagonal))


@scipy_rule("scipy.linalg", "cho_factor")
def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    # LAPACK's factor in one triangle, a's own entries in the other (as SciPy returns).
    a = as_operand(a)
    factor = np.linalg.cholesky(a, upper=not lower)
    return where(_triangle(shape_of(a)[-1], lower, False), factor, a), lower


@scipy_rule("scipy.linalg", "cho_solve")
def _cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    c, b, lower = as_operand(c), as_operand(b), bool(lower)
    y = solve_triangular(c, b, trans=0 if lower else 1, lower=lower, unit_diagonal=False)
    return solve_triangular(c, y, trans=1 if lower else 0, lower=lower, unit_diagonal=False)


# lu_factor: the packed factors (L below the unit diagonal, U on and above it), the
# pivots of LAPACK's row swaps, and the permutation they make (A[perm] = L U).


def _pivots_to_permutation_kernel(piv, inverse):
    perm = np.arange(piv.shape[-1])
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return np.argsort(perm) if inverse else perm


def _pivots_to_permutation_jax(piv, inverse):
    import jax
    perm = jax.lax.linalg.lu_pivots_to_permutation(piv, piv.shape[-1])
    return jax.numpy.argsort(perm) if inverse else perm


pivots_to_permutation = Primitive("pivots_to_permutation", _pivots_to_permutation_kernel)
pivots_to_permutation.kernels["jax"] = _pivots_to_permutation_jax
lu_pivots = Primitive("lu_pivots", lambda a: _scipy("scipy.linalg").lu_factor(a)[1])
lu_pivots.kernels["jax"] = lambda a: __import__("jax").scipy.linalg.lu_factor(a)[1]


def _lu_jvp(primals, tangents, ans):
    # A[perm] = L U: F = L⁻¹ dA[perm] U⁻¹, dL = L·(F below the diagonal), dU = (F on and
    # above it)·U.
    (a,), (ta,) = primals, tangents
    n = shape_of(ans)[-1]
    perm = pivots_to_permutation(lu_pivots(a), inverse=False)
    below = _triangle(n, True, True)
    x = _seeded_solve(_triangular_solver(0, True, True), ans,
                      getitem(ta, index=(Ellipsis, perm, slice(None))), vector=False)
    f = _mT(_seeded_solve(_triangular_solver(1, False, False), ans, _mT(x), vector=False))
    lower = where(below, ans, 0.0) + np.eye(n, dtype=ans.dtype)
    return matmul(lower, where(below, f, 0.0)) + matmul(where(below, 0.0, f),
                                                       where(below, 0.0, ans))


lu_packed = Primitive("lu_packed", lambda a: _scipy("scipy.linalg").lu_factor(a)[0],
                      jvp=_lu_jvp)
lu_packed.kernels["jax"] = lambda a: __import__("jax").scipy.linalg.lu_factor(a)[0]


def _one_matrix(name: str, a) -> None:
    if len(shape_of(a)) != 2:
        raise TypeError(f"scipy.linalg.{name} of a stack of matrices is not supported on "
                        "Duals; call it on each matrix")


@scipy_rule("scipy.linalg", "lu_factor")
def _lu_factor(a, overwrite_a=False, check_finite=True):
    a = as_operand(a)
    _one_matrix("lu_factor", a)
    return lu_packed(a), lu_pivots(a)


@scipy_rule("scipy.linalg", "lu_solve")
def _lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    lu, b = as_operand(lu), as_operand(b)
    _one_matrix("lu_solve", lu)
    piv = primal_value(piv)
    if trans not in _TRANS:
        raise ValueError("Invalid trans argument")
    if _TRANS[trans] == 0:
        pb = getitem(b, index=(pivots_to_permutation(piv, inverse=False),))
        y = solve_triangular(lu, pb, trans=0, lower=True, unit_diagonal=True)
        return solve_triangular(lu, y, trans=0, lower=False, unit_diagonal=False)
    # Aᵀ = Uᵀ Lᵀ P: solve with Uᵀ, then Lᵀ, then undo the permutation.
    y = solve_triangular(lu, b, trans=1, lower=False, unit_diagonal=False)
    z = solve_triangular(lu, y, trans=1, lower=True, unit_diagonal=True)
    return getitem(z, index=(pivots_to_permutation(piv, inverse=True),))


# expm: d expm(A)[E] = L(A, E), the upper-right block of expm([[A, E], [0, A]]).
# L is linear in E, with transpose L(Aᵀ, ·); its own derivative is the same block
# formula one level up, so every order is a call of this one primitive.


def _blocks(a, e):
    zeros = np.zeros(shape_of(e), dtype=primal_value(e).dtype)
    a = a + zeros  # a broadcast to e's shape (e may have leading seed or batch axes)
    return concatenate(concatenate(a, e, axis=-1), concatenate(zeros, a, axis=-1), axis=-2)


def _expm_frechet_kernel(a, e, expm=None):
    expm = expm or _scipy("scipy.linalg").expm
    n = a.shape[-1]
    big = np.max(np.abs(e)) if e.size else 0.0
    scale = (np.max(np.abs(a)) or 1.0) / big if big else 1.0  # L(A, E) = L(A, sE)/s
    zeros = np.zeros(np.broadcast_shapes(a.shape, e.shape), dtype=np.result_type(a, e))
    a, e = a + zeros, e * scale + zeros
    block = np.concatenate([np.concatenate([a, e], -1), np.concatenate([zeros, a], -1)], -2)
    return expm(block)[..., :n, n:] / scale


def _expm_frechet_jax(a, e):
    import jax.numpy as jnp
    from jax.scipy.linalg import expm
    n = a.shape[-1]
    zeros = jnp.zeros(jnp.broadcast_shapes(a.shape, e.shape), jnp.result_type(a, e))
    a, e = a + zeros, e + zeros
    block = jnp.concatenate([jnp.concatenate([a, e], -1), jnp.concatenate([zeros, a], -1)], -2)
    return expm(block)[..., :n, n:]


def _expm_frechet_jvp(primals, tangents, ans):
    a, e = primals
    ta, te = tangents
    n = shape_of(a)[-1]
    seeded = ta if te is None else te
    zero = np.zeros((shape_of(seeded)[0],) + tuple(shape_of(ans)), dtype=ans.dtype)
    ta = zero if ta is None else align_tangent(ta, ans.ndim) + zero
    te = zero if te is None else align_tangent(te, ans.ndim) + zero
    big = expm_frechet(_blocks(a, e), _blocks(ta, te))
    return getitem(big, index=(Ellipsis, slice(None, n), slice(n, None)))


def _expm_frechet_transpose(ct, args, linear):
    a, e = args
    return None, unbroadcast(expm_frechet(_mT(a), ct), tuple(e.shape))


expm_frechet = Primitive("expm_frechet", _expm_frechet_kernel, jvp=_expm_frechet_jvp,
                         linear=(1,), transpose=_expm_frechet_transpose)
expm_frechet.kernels["jax"] = _expm_frechet_jax
expm = Primitive("expm", lambda a: _scipy("scipy.linalg").expm(a),
                 jvp=lambda primals, tangents, ans: expm_frechet(primals[0], tangents[0]))
expm.kernels["jax"] = lambda a: __import__("jax").scipy.linalg.expm(a)


@scipy_rule("scipy.linalg", "expm")
def _expm(A):
    return expm(as_operand(A))


# solve_sylvester: X with AX + XB = Q, linear in Q; its transpose solves with Aᵀ, Bᵀ.


def _sylvester_jax(a, b, q):
    import jax
    return jax.numpy.vectorize(jax.scipy.linalg.solve_sylvester,
                               signature="(n,n),(m,m),(n,m)->(n,m)")(a, b, q)


def _sylvester_jvp(primals, tangents, ans):
    a, b, q = primals
    ta, tb, tq = tangents
    rhs = tq
    if ta is not None:  # dX = S⁻¹(dQ − dA X − X dB)
        term = matmul(align_tangent(ta, ans.ndim), ans)
        rhs = -term if rhs is None else rhs - term
    if tb is not None:
        term = matmul(ans, align_tangent(tb, ans.ndim))
        rhs = -term if rhs is None else rhs - term
    return solve_sylvester(a, b, rhs)


solve_sylvester = Primitive(
    "solve_sylvester", lambda a, b, q: _scipy("scipy.linalg").solve_sylvester(a, b, q),
    jvp=_sylvester_jvp, linear=(2,),
    transpose=lambda ct, args, linear: (None, None, unbroadcast(
        solve_sylvester(_mT(args[0]), _mT(args[1]), ct), tuple(args[2].shape))),
    shape_rule=lambda a, b, q: (
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2]) + tuple(q.shape[-2:]),
        np.result_type(a.dtype, b.dtype, q.dtype, np.float32)))
solve_sylvester.kernels["jax"] = _sylvester_jax


@scipy_rule("scipy.linalg", "solve_sylvester")
def _solve_sylvester(a, b, q):
    return solve_sylvester(as_operand(a), as_operand(b), as_operand(q))


# sqrtm: X² = A, so X dX + dX X = dA, a Sylvester equation.


def _sqrtm_jax(a):
    import jax
    return jax.numpy.real(jax.scipy.linalg.sqrtm(a)).astype(a.dtype)


sqrtm = Primitive("sqrtm", lambda a: _scipy("scipy.linalg").sqrtm(a),
                  jvp=lambda primals, tangents, ans: solve_sylvester(ans, ans, tangents[0]))
sqrtm.kernels["jax"] = _sqrtm_jax


@scipy_rule("scipy.linalg", "sqrtm")
def _sqrtm(A, disp=None, blocksize=None):
    if disp is False:
        raise TypeError("scipy.linalg.sqrtm(..., disp=False) is not supported on Duals "
                        "(the argument is deprecated); call sqrtm(A)")
    return sqrtm(as_operand(A))


# solve_banded: A in LAPACK's band storage, ab[u + i - j, j] = A[i, j].


def _band_to_dense(ab, lower: int, upper: int):
    """The dense matrix of band storage ``ab`` (any leading axes)."""
    n = shape_of(ab)[-1]
    i, j = np.indices((n, n))
    row = upper + i - j
    inside = (row >= 0) & (row <= lower + upper)
    return where(inside, getitem(ab, index=(Ellipsis, np.clip(row, 0, lower + upper), j)), 0.0)


def _band_transpose(ab, lower: int, upper: int):
    """Band storage of Aᵀ (lower and upper bandwidths swapped)."""
    n = shape_of(ab)[-1]
    r, j = np.indices((lower + upper + 1, n))
    col = j + r - lower
    inside = (col >= 0) & (col < n)
    return where(inside, getitem(ab, index=(Ellipsis, lower + upper - r, np.clip(col, 0, n - 1))),
                 0.0)


def _banded_solver(lower: int, upper: int) -> Callable:
    return lambda ab, rhs: solve_banded(ab, rhs, lower=lower, upper=upper)


def _solve_banded_jvp(primals, tangents, ans, lower, upper):
    ab, b = primals
    tab, tb = tangents
    rhs = tb
    if tab is not None:
        vector = b.ndim == 1
        x = reshape(ans, shape=ans.shape + (1,)) if vector else ans
        dax = matmul(align_tangent(_band_to_dense(tab, lower, upper), x.ndim), x)
        dax = getitem(dax, index=(Ellipsis, 0)) if vector else dax
        rhs = -dax if rhs is None else rhs - dax
    return _seeded_solve(_banded_solver(lower, upper), ab, rhs, b.ndim == 1)


def _solve_banded_transpose(ct, args, linear, lower, upper):
    ab, b = args
    return None, _seeded_solve(_banded_solver(upper, lower), _band_transpose(ab, lower, upper),
                               ct, b.ndim == 1)


def _solve_banded_jax(ab, b, lower, upper):
    import jax.numpy as jnp
    dense = _band_to_dense(ab, lower, upper)
    return jnp.linalg.solve(dense, b[:, None])[:, 0] if b.ndim == 1 else jnp.linalg.solve(dense, b)


solve_banded = Primitive(
    "solve_banded",
    lambda ab, b, lower, upper: _scipy("scipy.linalg").solve_banded((lower, upper), ab, b),
    jvp=_solve_banded_jvp, linear=(1,), transpose=_solve_banded_transpose,
    shape_rule=lambda ab, b, lower, upper: (tuple(b.shape),
                                            np.result_type(ab.dtype, b.dtype, np.float32)))
solve_banded.kernels["jax"] = _solve_banded_jax


@scipy_rule("scipy.linalg", "solve_banded")
def _solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    lower, upper = (int(k) for k in l_and_u)
    return solve_banded(as_operand(ab), as_operand(b), lower=lower, upper=upper)


# ---------------------------------------------------------------------------
# scipy.signal.convolve: bilinear. Tangents are convolved in 'full' mode (a seed
# axis of extent K against one of extent 1 keeps K) and cropped as SciPy crops;
# the transposes are 'valid' convolutions with the other input reversed.
# ---------------------------------------------------------------------------


def _crop_start(full: tuple, s1: tuple, s2: tuple, mode: str) -> tuple[tuple, tuple]:
    """(start, size) per axis of SciPy's mode output within the 'full' output."""
    if mode == "full":
        return (0,) * len(full), full
    size = s1 if mode == "same" else tuple(max(a, b) - min(a, b) + 1 for a, b in zip(s1, s2))
    return tuple((f - s) // 2 for f, s in zip(full, size)), size


def _full_seeded(t, other, method: str, t_first: bool):
    other = reshape(other, shape=(1,) + tuple(shape_of(other)))
    args = (t, other) if t_first else (other, t)
    return convolve(*args, mode="full", method=method)


def _convolve_jvp(primals, tangents, ans, mode, method):
    in1, in2 = primals
    t1, t2 = tangents
    full = None
    if t1 is not None:
        full = _full_seeded(t1, in2, method, True)
    if t2 is not None:
        term = _full_seeded(t2, in1, method, False)
        full = term if full is None else full + term
    start, size = _crop_start(shape_of(full)[1:], in1.shape, in2.shape, mode)
    return getitem(full, index=(slice(None),) + tuple(
        slice(s, s + n) for s, n in zip(start, size)))


def _convolve_transpose(ct, args, linear, mode, method):
    in1, in2 = args
    s1, s2 = tuple(shape_of(in1)), tuple(shape_of(in2))
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    start, size = _crop_start(full, s1, s2, mode)
    if mode != "full":  # the transpose of the crop: zeros around ct
        from .shape import index_add
        ct = index_add(ct, index=(slice(None),) + tuple(
            slice(s, s + n) for s, n in zip(start, size)), shape=(shape_of(ct)[0],) + full)
    flip = (Ellipsis,) + (slice(None, None, -1),) * len(s1)
    ct1 = ct2 = None
    if 0 in linear:
        ct1 = convolve(ct, reshape(getitem(in2, index=flip), shape=(1,) + s2), mode="valid",
                       method=method)
    if 1 in linear:
        ct2 = convolve(ct, reshape(getitem(in1, index=flip), shape=(1,) + s1), mode="valid",
                       method=method)
    return ct1, ct2


convolve = Primitive(
    "convolve",
    lambda in1, in2, mode, method: _scipy("scipy.signal").convolve(in1, in2, mode, method),
    jvp=_convolve_jvp, linear="one", transpose=_convolve_transpose)


def _convolve_jax(in1, in2, mode, method):
    import jax.numpy as jnp
    from jax.scipy.signal import convolve as jax_convolve
    s1, s2 = in1.shape, in2.shape
    if all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2)):
        return jax_convolve(in1, in2, mode=mode, method=method)
    if mode == "valid":
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    # JAX wants one input smaller in every axis (a seed axis against one of extent 1 is
    # not): zeros after in1 where it is the smaller add only zeros after the 'full' result.
    padded = jnp.pad(in1, [(0, max(b - a, 0)) for a, b in zip(s1, s2)])
    full_shape = tuple(a + b - 1 for a, b in zip(s1, s2))
    full = jax_convolve(padded, in2, mode="full", method=method)
    start, size = _crop_start(full_shape, s1, s2, mode)
    return full[tuple(slice(i, i + n) for i, n in zip(start, size))]


convolve.kernels["jax"] = _convolve_jax


@scipy_rule("scipy.signal", "convolve")
def _convolve(in1, in2, mode="full", method="auto"):
    in1, in2 = as_operand(in1), as_operand(in2)
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode == "valid" and all(a <= b for a, b in zip(s1, s2)) and s1 != s2:
        in1, in2 = in2, in1  # SciPy swaps them too: 'valid' is symmetric
    return convolve(in1, in2, mode=mode, method=method)


from . import scipy_stats  # noqa: E402,F401  (scipy.stats: declares its rules here)

install_all()
