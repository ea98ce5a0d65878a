"""scipy.linalg's versions of NumPy's linear algebra (det, inv, solve, eigh, cholesky,
qr, svd) and its special matrices (block_diag, circulant, toeplitz, hankel, companion,
convolution_matrix, fiedler, fiedler_companion, leslie).

The decompositions differentiate through the numpy.linalg rules (``np.linalg.*`` on
the Duals, after reading the part of ``a`` SciPy's LAPACK driver reads: one triangle
for ``assume_a='sym'/'pos'``, ``cholesky``, ``eigh``), so no derivative formula is
written twice. Their values are SciPy's own: SciPy's drivers (getri, sysv, syevr,
geqp3, ...) differ from NumPy's in the last bits, and eigenvectors or singular vectors
may differ in sign. :func:`scipy_values` runs SciPy on the plain values, flips the
Dual's vectors to SciPy's signs and gives the Dual SciPy's values (the primitive
``scipy_value``, the identity on tangents). Under ``dualad_gpu`` (traced values) the
values are JAX's.

The special matrices are compositions (indexing, concatenation, arithmetic on Duals),
batched over leading axes where SciPy 1.17 batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import NeedsHost, Primitive
from .decompositions import _mirror
from .scipy_functions import _scipy, scipy_rule

# ---------------------------------------------------------------------------
# SciPy's values on the rule table's derivatives
# ---------------------------------------------------------------------------

#: ``scipy_value(x, value)``: ``value`` (SciPy's result), with ``x``'s tangent.
scipy_value = Primitive("scipy_value", lambda x, value: value,
                        jvp=lambda primals, tangents, ans: tangents[0])
scipy_value.kernels["jax"] = lambda x, value: x


def _sl() -> Any:
    return _scipy("scipy.linalg")


def _plain(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, float, int))


def scipy_values(out: Any, value: Any) -> Any:
    """``out`` (a Dual computed by the rule table) with SciPy's ``value``."""
    value = np.asarray(value)
    if np.shape(primal_value(out)) != value.shape:
        raise AssertionError("scipy_values: shapes differ")  # a rule's bug, never the user's
    return scipy_value(out, value)


def _flip_columns(dual: Any, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """±1 per column (..., 1, k) that turns the columns of ``ours`` into ``theirs``."""
    k = theirs.shape[-1]
    dots = np.sum(ours[..., :, :k] * theirs, axis=-2, keepdims=True)
    return np.where(dots < 0, -1.0, 1.0).astype(np.asarray(theirs).dtype)


def _dtype(x: Any) -> np.dtype:
    """The dtype of ``x``'s values (NumPy or JAX arrays, Python numbers)."""
    value = primal_value(x)
    dtype = getattr(value, "dtype", None)
    return np.dtype(np.asarray(value).dtype if dtype is None else dtype)


def _computed(*args: Any) -> bool:
    """Whether SciPy can run on the values (NumPy arrays, not traced JAX values)."""
    return all(_plain(primal_value(a)) for a in args if a is not None)


# ---------------------------------------------------------------------------
# What SciPy's drivers read of a
# ---------------------------------------------------------------------------

_KINDS = {None: "gen", "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym",
          "her": "sym", "hermitian": "sym", "pos": "sym", "positive definite": "sym",
          "diagonal": "diagonal", "upper triangular": "upper", "lower triangular": "lower",
          "tridiagonal": "tridiagonal", "banded": "banded"}


def _band(a: Any, lower: int, upper: int) -> Any:
    n = np.shape(primal_value(a))[-1]
    i, j = np.indices((n, n))
    return np.where((i - j <= lower) & (j - i <= upper), a, 0.0)


def _read(name: str, a: Any, assume_a: Any, lower: bool) -> Any:
    """The matrix SciPy's solver for ``assume_a`` reads from ``a``."""
    if assume_a not in _KINDS:
        raise ValueError(f"{assume_a!r} is not a recognized matrix structure")
    kind = _KINDS[assume_a]
    if kind == "sym":
        return _mirror(a, lower=bool(lower))
    if kind == "diagonal":
        return _band(a, 0, 0)
    if kind in ("upper", "lower"):
        n = np.shape(primal_value(a))[-1]
        return np.where(np.tri(n, dtype=bool) if kind == "lower" else np.tri(n, dtype=bool).T,
                        a, 0.0)
    if kind == "tridiagonal":
        return _band(a, 1, 1)
    if kind == "banded":  # the bandwidths SciPy detects on the values
        if not _computed(a):
            raise NeedsHost(f"scipy.linalg.{name}(..., assume_a='banded') needs NumPy values: "
                            "the bandwidths are detected on them (dualad_gpu runs this on "
                            "the host)")
        value = np.asarray(primal_value(a))
        i, j = np.nonzero(np.any(value != 0, axis=tuple(range(value.ndim - 2))))
        return _band(a, int(np.max(i - j, initial=0)), int(np.max(j - i, initial=0)))
    return a


# ---------------------------------------------------------------------------
# det, inv, solve
# ---------------------------------------------------------------------------


@scipy_rule("scipy.linalg", "det")
def _det(a, overwrite_a=False, check_finite=True):
    a = as_operand(a)
    out = np.linalg.det(a)
    return scipy_values(out, _sl().det(primal_value(a))) if _computed(a) else out


@scipy_rule("scipy.linalg", "inv")
def _inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    a = as_operand(a)
    out = np.linalg.inv(_read("inv", a, assume_a, lower))
    if not _computed(a):
        return out
    return scipy_values(out, _sl().inv(primal_value(a), assume_a=assume_a, lower=lower))


@scipy_rule("scipy.linalg", "solve")
def _solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
           assume_a=None, transposed=False):
    a, b = as_operand(a), as_operand(b)
    matrix = _read("solve", a, assume_a, lower)
    if transposed:
        matrix = np.swapaxes(matrix, -1, -2)
    out = np.linalg.solve(matrix, b)
    if not _computed(a, b):
        return out
    return scipy_values(out, _sl().solve(primal_value(a), primal_value(b), lower=lower,
                                         assume_a=assume_a, transposed=transposed))


# ---------------------------------------------------------------------------
# eigh, cholesky
# ---------------------------------------------------------------------------


def _generalized(a: Any, b: Any, lower: bool) -> Any:
    """A x = w B x as C y = w y: C = L⁻¹ A L⁻ᵀ with B = L Lᵀ, x = L⁻ᵀ y (B-orthonormal)."""
    chol = np.linalg.cholesky(_mirror(b, lower=lower))
    left = np.linalg.solve(chol, _mirror(a, lower=lower))
    c = np.linalg.solve(chol, np.swapaxes(left, -1, -2))
    w, y = np.linalg.eigh(c)
    return w, np.linalg.solve(np.swapaxes(chol, -1, -2), y)


@scipy_rule("scipy.linalg", "eigh")
def _eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
          type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    if subset_by_value is not None:
        raise TypeError("scipy.linalg.eigh(..., subset_by_value=...) is not supported on "
                        "Duals: how many eigenvalues it returns depends on the values; "
                        "use subset_by_index")
    if b is not None and type != 1:
        raise TypeError(f"scipy.linalg.eigh(a, b, type={type}) is not supported on Duals; "
                        "type=1 (A x = w B x) is")
    a = as_operand(a)
    if b is None:
        w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    else:
        w, v = _generalized(a, as_operand(b), bool(lower))
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    if not _computed(a, b):
        return w if eigvals_only else (w, v)
    kwargs = {"lower": lower, "type": type, "subset_by_index": subset_by_index, "driver": driver}
    plain_b = None if b is None else primal_value(b)
    if eigvals_only:
        return scipy_values(w, _sl().eigh(primal_value(a), plain_b, eigvals_only=True,
                                          **kwargs))
    sw, sv = _sl().eigh(primal_value(a), plain_b, **kwargs)
    v = v * _flip_columns(v, np.asarray(primal_value(v)), sv)
    return scipy_values(w, sw), scipy_values(v, sv)


@scipy_rule("scipy.linalg", "eigh_tridiagonal")
def _eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                      check_finite=True, tol=0.0, lapack_driver="auto"):
    if select not in ("a", "i", "all", "index", 0, 1):
        raise TypeError("scipy.linalg.eigh_tridiagonal(..., select='v') is not supported on "
                        "Duals: how many eigenvalues it returns depends on the values; use "
                        "select='i'")
    d, e = as_operand(d), as_operand(e)
    n = np.shape(primal_value(d))[-1]
    if np.ndim(primal_value(d)) != 1 or np.shape(primal_value(e)) != (n - 1,):
        raise ValueError("d must be 1-D and e 1-D of length len(d) - 1")
    i, j = np.indices((n, n))
    band = np.clip(np.minimum(i, j), 0, max(n - 2, 0))
    dense = np.where(i == j, d[..., np.minimum(i, n - 1)], np.where(np.abs(i - j) == 1,
                                                                     e[..., band], 0.0))
    w, v = np.linalg.eigh(dense)
    if select in ("i", "index", 1):
        lo, hi = (int(k) for k in select_range)
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    if not _computed(d, e):
        return w if eigvals_only else (w, v)
    theirs = _sl().eigh_tridiagonal(primal_value(d), primal_value(e), eigvals_only=eigvals_only,
                                    select=select, select_range=select_range, tol=tol,
                                    lapack_driver=lapack_driver)
    if eigvals_only:
        return scipy_values(w, theirs)
    v = v * _flip_columns(v, np.asarray(primal_value(v)), theirs[1])
    return scipy_values(w, theirs[0]), scipy_values(v, theirs[1])


@scipy_rule("scipy.linalg", "cholesky")
def _cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    a = as_operand(a)
    out = np.linalg.cholesky(a, upper=not lower)
    return scipy_values(out, _sl().cholesky(primal_value(a), lower=lower)) if _computed(a) \
        else out


# ---------------------------------------------------------------------------
# qr (modes full, economic, r; pivoting), svd
# ---------------------------------------------------------------------------

_QR_MODES = {"full": "complete", "economic": "reduced", "r": "complete"}


@scipy_rule("scipy.linalg", "qr")
def _qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    if mode not in ("full", "r", "economic", "raw"):
        raise ValueError("Mode argument should be one of ['full', 'r', 'economic', 'raw']")
    if mode == "raw":
        raise TypeError("scipy.linalg.qr(..., mode='raw') is not supported on Duals: it "
                        "returns LAPACK's Householder reflectors, which have no derivative "
                        "rule; use mode='full', 'economic' or 'r'")
    a = as_operand(a)
    n = np.shape(primal_value(a))[-1]
    plain = _computed(a)
    if pivoting:  # the columns' order is decided on the values (geqp3), then kept
        if not plain:
            raise NeedsHost("scipy.linalg.qr(..., pivoting=True) needs NumPy values: the "
                            "pivots are decided on them (dualad_gpu runs this on the host)")
        if np.ndim(primal_value(a)) != 2:
            raise TypeError("scipy.linalg.qr(..., pivoting=True) of a stack of matrices is "
                            "not supported on Duals; call it on each matrix")
    theirs = _sl().qr(primal_value(a), mode=mode, pivoting=pivoting) if plain else None
    perm = theirs[-1] if pivoting else np.arange(n)
    q, r = np.linalg.qr(a[..., perm] if pivoting else a, mode=_QR_MODES[mode])
    if plain:
        k = min(np.shape(primal_value(r))[-2:])
        their_r = theirs[0] if mode == "r" else theirs[1]
        flip = _flip_columns(q, np.asarray(primal_value(q)), theirs[0]) if mode != "r" else \
            np.where(np.diagonal(primal_value(r), axis1=-2, axis2=-1) *
                     np.diagonal(their_r, axis1=-2, axis2=-1) < 0, -1.0, 1.0)[..., None, :]
        flip_rows = np.swapaxes(flip[..., :k], -1, -2)
        r = np.concatenate([r[..., :k, :] * flip_rows, r[..., k:, :]], axis=-2)
        r = scipy_values(r, their_r)
        if mode != "r":
            q = scipy_values(q * flip, theirs[0])
    if mode == "r":
        return (r, perm) if pivoting else (r,)
    return (q, r, perm) if pivoting else (q, r)


@scipy_rule("scipy.linalg", "qr_multiply")
def _qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                 overwrite_c=False):
    # Q of the economic QR (SciPy applies it with ormqr: the same product)
    if mode not in ("left", "right"):
        raise ValueError(f"Mode argument can only be 'left' or 'right' but not '{mode}'")
    a, c = as_operand(a), as_operand(c)
    factors = _qr(a, mode="economic", pivoting=pivoting)
    q = factors[0]
    out = np.matmul(q, c) if mode == "left" else np.matmul(c, q)
    if _computed(a, c):
        theirs = _sl().qr_multiply(primal_value(a), primal_value(c), mode=mode,
                                   pivoting=pivoting)
        out = scipy_values(out, theirs[0])
    return (out,) + tuple(factors[1:])


@scipy_rule("scipy.linalg", "svd")
def _svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
         lapack_driver="gesdd"):
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f'lapack_driver must be "gesdd" or "gesvd", not "{lapack_driver}"')
    a = as_operand(a)
    kwargs = {"full_matrices": full_matrices, "compute_uv": compute_uv,
                  "lapack_driver": lapack_driver}
    if not compute_uv:
        s = np.linalg.svd(a, compute_uv=False)
        return scipy_values(s, _sl().svd(primal_value(a), **kwargs)) if _computed(a) else s
    u, s, vh = np.linalg.svd(a, full_matrices=bool(full_matrices))
    if not _computed(a):
        return u, s, vh
    su, ss, svh = _sl().svd(primal_value(a), **kwargs)
    k = ss.shape[-1]
    flip_u = _flip_columns(u, np.asarray(primal_value(u)), su)
    flip_v = np.swapaxes(_flip_columns(vh, np.swapaxes(np.asarray(primal_value(vh)), -1, -2),
                                       np.swapaxes(svh, -1, -2)), -1, -2)
    # the first k vectors in pairs: u_j v_jᵀ keeps its sign
    flip_v[..., :k, :] = np.swapaxes(flip_u[..., :k], -1, -2)
    return (scipy_values(u * flip_u, su), scipy_values(s, ss), scipy_values(vh * flip_v, svh))


# ---------------------------------------------------------------------------
# Special matrices
# ---------------------------------------------------------------------------


def _operand(x: Any) -> Any:
    x = as_operand(x)
    if _dtype(x).kind in "biu":
        x = np.astype(x, np.float64) if not _plain(x) else np.asarray(x, np.float64)
    return x


def _batched(name: str, *arrays: Any) -> tuple:
    shapes = [np.shape(primal_value(x)) for x in arrays]
    if any(len(s) == 0 for s in shapes):
        raise ValueError(f"Incorrect shape for {name} arguments: they must be at least 1-D")
    return shapes


@scipy_rule("scipy.linalg", "block_diag")
def _block_diag(*arrs):
    if not arrs:
        arrs = ([],)
    blocks = [np.atleast_2d(_operand(a)) for a in arrs]
    shapes = [np.shape(primal_value(b)) for b in blocks]
    if any(len(s) > 2 for s in shapes):
        raise ValueError("arguments in the following positions have dimension greater than "
                         f"2: {[i for i, s in enumerate(shapes) if len(s) > 2]}")
    dtype = np.result_type(*[_dtype(b) for b in blocks])
    cols = sum(s[1] for s in shapes)
    rows, start = [], 0
    for b, (r, c) in zip(blocks, shapes):
        rows.append(np.concatenate([np.zeros((r, start), dtype), b,
                                    np.zeros((r, cols - start - c), dtype)], axis=1))
        start += c
    return np.concatenate(rows, axis=0)


@scipy_rule("scipy.linalg", "circulant")
def _circulant(c):
    c = _operand(c)
    (shape,) = _batched("circulant", c)
    n = shape[-1]
    i, j = np.indices((n, n))
    return c[..., (i - j) % n]


@scipy_rule("scipy.linalg", "toeplitz")
def _toeplitz(c, r=None):
    c = _operand(c)
    r = c if r is None else _operand(r)  # real input: r = c.conjugate()
    sc, sr = _batched("toeplitz", c, r)
    vals = np.concatenate([np.broadcast_to(c[..., ::-1], np.broadcast_shapes(
        sc[:-1], sr[:-1]) + sc[-1:]), np.broadcast_to(r[..., 1:], np.broadcast_shapes(
            sc[:-1], sr[:-1]) + (sr[-1] - 1,))], axis=-1)
    i, j = np.indices((sc[-1], sr[-1]))
    return vals[..., sc[-1] - 1 - i + j]


@scipy_rule("scipy.linalg", "hankel")
def _hankel(c, r=None):
    c = np.ravel(_operand(c))  # SciPy 1.17 ravels (batches from 1.19)
    m = np.shape(primal_value(c))[0]
    r = np.zeros(m, _dtype(c)) if r is None else np.ravel(_operand(r))
    n = np.shape(primal_value(r))[0]
    i, j = np.indices((m, n))
    return np.concatenate([c, r[1:]])[i + j]


@scipy_rule("scipy.linalg", "companion")
def _companion(a):
    a = _operand(a)
    (shape,) = _batched("companion", a)
    n = shape[-1]
    if n < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2.")
    if _computed(a) and np.any(primal_value(a)[..., 0] == 0):
        raise ValueError("The first coefficient(s) of `a` (i.e. elements of `a[..., 0]`) "
                         "must not be zero.")
    index = np.zeros((n - 1, n - 1), dtype=int)  # -a[1:] / a[0] on the first row, 1 below
    index[0] = np.arange(2, n + 1)
    index[range(1, n - 1), range(n - 2)] = 1
    return _layout(-a[..., 1:] / a[..., :1], index)


@scipy_rule("scipy.linalg", "convolution_matrix")
def _convolution_matrix(a, n, mode="full"):
    if n <= 0:
        raise ValueError("n must be a positive integer.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"'mode' argument must be one of ('full', 'valid', 'same'), not "
                         f"{mode!r}")
    a = _operand(a)
    (shape,) = _batched("convolution_matrix", a)
    m = shape[-1]
    if m == 0:
        raise ValueError("len(a) must be at least 1.")
    i, j = np.indices((m + n - 1, n))
    inside = (i - j >= 0) & (i - j < m)
    full = np.where(inside, a[..., np.clip(i - j, 0, m - 1)], 0.0)
    if mode == "full":
        return full
    start = (min(n, m) - 1) // 2 if mode == "same" else min(m, n) - 1
    rows = max(m, n) if mode == "same" else max(m, n) - min(m, n) + 1
    return full[..., start:start + rows, :]


@scipy_rule("scipy.linalg", "fiedler")
def _fiedler(a):
    a = _operand(a)
    _batched("fiedler", a)
    return np.abs(a[..., :, None] - a[..., None, :])


def _layout(vals: Any, index: np.ndarray) -> Any:
    """``vals[..., index]``: a matrix whose entries are 0, 1 or entries of ``vals``,
    gathered from ``[0, 1, *vals]`` (positions 0 and 1 of ``index`` are the constants)."""
    batch = np.shape(primal_value(vals))[:-1]
    dtype = _dtype(vals)
    constants = np.broadcast_to(np.array([0.0, 1.0], dtype), batch + (2,))
    return np.concatenate([constants, vals], axis=-1)[..., index]


@scipy_rule("scipy.linalg", "fiedler_companion")
def _fiedler_companion(a):
    a = _operand(a)
    (shape,) = _batched("fiedler_companion", a)
    if len(shape) > 1:
        return np.stack([_fiedler_companion(row) for row in a])
    if shape[0] <= 2:
        if shape[0] == 2:
            return np.reshape(-a[1] / a[0], (1, 1))
        return np.zeros(0, _dtype(a))
    if _computed(a) and primal_value(a)[0] == 0:
        raise ValueError("Leading coefficient is zero.")
    n = shape[0] - 1
    index = np.zeros((n, n), dtype=int)  # 0 -> 0, 1 -> 1, k + 2 -> -a[k] / a[0]
    index[range(3, n, 2), range(1, n - 2, 2)] = 1
    index[range(2, n, 2), range(1, n - 1, 2)] = np.arange(3, n + 1, 2) + 2
    index[range(0, n - 2, 2), range(2, n, 2)] = 1
    index[range(0, n - 1, 2), range(1, n, 2)] = np.arange(2, n + 1, 2) + 2
    index[[0, 1], 0] = [3, 1]
    return _layout(-a / a[0], index)


@scipy_rule("scipy.linalg", "leslie")
def _leslie(f, s):
    f, s = _operand(f), _operand(s)
    sf, ss = _batched("leslie", f, s)
    if sf[-1] != ss[-1] + 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last "
                         "axis must be one less than the length of f.")
    if ss[-1] == 0:
        raise ValueError("The length of s must be at least 1.")
    n = sf[-1]
    batch = np.broadcast_shapes(sf[:-1], ss[:-1])
    dtype = np.result_type(_dtype(f), _dtype(s))
    f = np.broadcast_to(f, batch + (n,)) + np.zeros((), dtype)
    s = np.broadcast_to(s, batch + (n - 1,)) + np.zeros((), dtype)
    index = np.zeros((n, n), dtype=int)  # f on the first row, s below the diagonal
    index[0] = np.arange(2, n + 2)
    index[range(1, n), range(n - 1)] = np.arange(n + 2, 2 * n + 1)
    return _layout(np.concatenate([f, s], axis=-1), index)


