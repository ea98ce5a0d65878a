"""scipy.linalg called unchanged: triangular, banded and Sylvester solves are
primitives linear in the right-hand side; expm's derivative is the Fréchet
derivative L(A, E), a primitive linear in E; cho_* and lu_* are built on the
triangular solve. The dispatchers that route SciPy's functions here are those of
:mod:`dualad.rules.scipy_functions`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..dual import as_operand, primal_value
from ..tangents import align_tangent
from ..primitive import Primitive
from .elementwise import where
from .linalg import matmul
from .scipy_functions import _scipy, scipy_rule
from .scipy_matrices import scipy_values
from .shape import _swapaxes, getitem, reshape, shape_of, transpose, unbroadcast


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
    solve = lambda a, b: jax.scipy.linalg.solve_triangular(
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


@functools.cache
def _cho_factor_keeps_the_other_triangle() -> bool:
    """Whether SciPy's cho_factor leaves a's entries in the other triangle (before SciPy
    1.18), rather than zeros (1.18): asked of SciPy itself, once."""
    from scipy.linalg import cho_factor
    return bool(cho_factor(np.array([[2.0, 1.0], [1.0, 2.0]]), lower=True)[0][0, 1])


@scipy_rule("scipy.linalg", "cho_factor")
def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    # LAPACK's factor in one triangle, in the other a's own entries or zeros, as SciPy
    a = as_operand(a)
    factor = np.linalg.cholesky(a, upper=not lower)
    if not _cho_factor_keeps_the_other_triangle():
        return factor, lower
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


@scipy_rule("scipy.linalg", "lu")
def _lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    # L and U from lu_packed (JAX's lu_jvp); P as SciPy's call gives it (A = P L U).
    a = as_operand(a)
    shape = tuple(shape_of(a))
    if len(shape) > 2:
        parts = [_lu(a[i], permute_l=permute_l, p_indices=p_indices) for i in range(shape[0])]
        return tuple(np.stack([p[k] for p in parts]) for k in range(len(parts[0])))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise TypeError("scipy.linalg.lu of a non-square matrix is not supported on Duals; "
                        "lu_factor's rule (JAX's lu_jvp) is for square matrices")
    n = shape[0]
    packed = lu_packed(a)
    below = _triangle(n, True, True)
    lower = where(below, packed, 0.0) + np.eye(n, dtype=primal_value(packed).dtype)
    upper = where(below, 0.0, packed)
    plain = isinstance(primal_value(a), np.ndarray)
    if plain:
        theirs = _scipy("scipy.linalg").lu(primal_value(a), permute_l=permute_l,
                                            p_indices=p_indices)
    if permute_l:
        pl = getitem(lower, index=(pivots_to_permutation(lu_pivots(a), inverse=True),))  # P L
        return (scipy_values(pl, theirs[0]), scipy_values(upper, theirs[1])) if plain else \
            (pl, upper)
    if plain:
        return theirs[0], scipy_values(lower, theirs[1]), scipy_values(upper, theirs[2])
    inverse = pivots_to_permutation(lu_pivots(a), inverse=True)  # A = L[inverse] U
    if p_indices:
        return inverse, lower, upper
    return getitem(np.eye(n, dtype=primal_value(lower).dtype), index=(inverse,)), lower, upper


# polar: A = U P from the reduced SVD A = W S Vᵀ: U = W Vᵀ, P = V S Vᵀ (right) or
# W S Wᵀ (left), as SciPy computes it.


@scipy_rule("scipy.linalg", "polar")
def _polar(a, side="right"):
    if side not in ("right", "left"):
        raise ValueError("`side` must be either 'right' or 'left'")
    a = as_operand(a)
    if len(shape_of(a)) != 2:
        raise ValueError("`a` must be a 2-D array.")
    w, s, vh = np.linalg.svd(a, full_matrices=False)
    u = matmul(w, vh)
    p = matmul(_mT(vh) * s, vh) if side == "right" else matmul(w * s, _mT(w))
    if not isinstance(primal_value(a), np.ndarray):
        return u, p
    theirs = _scipy("scipy.linalg").polar(primal_value(a), side=side)
    return scipy_values(u, theirs[0]), scipy_values(p, theirs[1])


# expm: d expm(A)[E] = L(A, E), the upper-right block of expm([[A, E], [0, A]]).
# L is linear in E, with transpose L(Aᵀ, ·); its own derivative is the same block
# formula one level up, so every order is a call of this one primitive.


def _blocks(a, e):
    """[[A, E], [0, A]] (any leading axes), built with products by constant 0/1 matrices:
    concatenating a Dual of a Dual with plain zeros lost rows of the inner tangent."""
    n = shape_of(a)[-1]
    dtype = np.result_type(primal_value(a).dtype, primal_value(e).dtype)
    eye = np.eye(n, dtype=dtype)
    zero = np.zeros((n, n), dtype)
    top, bottom = np.concatenate([eye, zero]), np.concatenate([zero, eye])  # (2n, n)
    return (matmul(matmul(top, a), top.T) + matmul(matmul(top, e), bottom.T)
            + matmul(matmul(bottom, a), bottom.T))


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


@scipy_rule("scipy.linalg", "expm_frechet")
def _expm_frechet_rule(A, E, method=None, compute_expm=True, check_finite=True):
    A, E = as_operand(A), as_operand(E)
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method}")
    sa, se = tuple(shape_of(A)), tuple(shape_of(E))
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError("expected A to be a square matrix")
    if sa != se:
        raise ValueError("expected A and E to be the same shape")
    frechet = expm_frechet(A, E)
    out = (expm(A), frechet) if compute_expm else frechet
    if not (isinstance(primal_value(A), np.ndarray) and isinstance(primal_value(E), np.ndarray)):
        return out
    theirs = _scipy("scipy.linalg").expm_frechet(primal_value(A), primal_value(E), method=method,
                                                 compute_expm=compute_expm)
    if compute_expm:
        return scipy_values(out[0], theirs[0]), scipy_values(out[1], theirs[1])
    return scipy_values(out, theirs)


# solve_sylvester: X with AX + XB = Q, linear in Q; its transpose solves with Aᵀ, Bᵀ.


def _sylvester_jax(a, b, q):
    import jax
    return jax.numpy.vectorize(jax.scipy.linalg.solve_sylvester,
                               signature="(n,n),(m,m),(n,m)->(n,m)")(a, b, q)


def _sylvester_jvp(primals, tangents, ans):
    a, b, _q = primals
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
