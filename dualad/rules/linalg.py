"""Contractions and linear algebra: matmul, einsum, solve, inv, eigh (det and slogdet:
rules/determinants.py).

``matmul`` and ``einsum`` are bilinear (multilinear) primitives: their tangent
is the sum over operands of the same contraction with one operand replaced by
its tangent, laid out so that a single BLAS call serves all K seeds. ``dot``,
``tensordot``, ``inner``, ``outer`` and ``vdot`` are built on them.

Complex matrices follow JAX: solve, inv and det are holomorphic (their real
rules hold as written); slogdet's sign is ``det/|det|`` and its log is real;
eigh reads a Hermitian matrix (``Aᴴ`` where a real rule has ``Aᵀ``), and its
eigenvectors' tangents have ``Im(vᵢᴴ dvᵢ) = 0``, JAX's choice of phase.
"""

from __future__ import annotations

import string

import numpy as np

from ..tangents import align_tangent
from ..primitive import COMPLEX_FUNCTIONS, Primitive, implements, register_function
from .elementwise import add, multiply, negative, where
from .linalg_complex import conj, hermitian_part, mH, real
from .reductions import _sum, sum_
from .shape import (_ravel, _swapaxes, broadcast_to, getitem, normalize_axis, reshape,
                    shape_of, transpose, unbroadcast)


def _seed_axis_first(x):
    """Move axis -2 (where a seed axis lands after a matrix product) to the front."""
    axes = (x.ndim - 2,) + tuple(i for i in range(x.ndim) if i != x.ndim - 2)
    return transpose(x, axes=axes)


def _matmul_jvp(primals, tangents, ans):
    x, y = primals
    tx, ty = tangents
    total = None
    if tx is not None:
        if x.ndim == 1:  # tx (K, n) acts as a matrix: one GEMM for all seeds
            term = matmul(tx, y)
            term = _seed_axis_first(term) if y.ndim > 2 else term
        else:
            term = matmul(align_tangent(tx, ans.ndim) if y.ndim > 1 else tx, y)
        total = term
    if ty is not None:
        if y.ndim == 1:  # (x @ v)ₖ = vₖ @ xᵀ: again one GEMM
            term = matmul(ty, _swapaxes(x, -1, -2) if x.ndim > 1 else x)
            term = _seed_axis_first(term) if x.ndim > 2 else term
        else:
            term = matmul(x, align_tangent(ty, ans.ndim))
        total = term if total is None else add(total, term)
    return total


def _as_matrices(x, y):
    """NumPy's promotion of 1-D matmul operands to (1, n) and (n, 1) matrices."""
    x2 = reshape(x, shape=(1,) + tuple(x.shape)) if x.ndim == 1 else x
    y2 = reshape(y, shape=tuple(y.shape) + (1,)) if y.ndim == 1 else y
    return x2, y2


def _matmul_transpose(ct, args, linear):
    x, y = args
    # Against a constant matrix, the cotangents of all seeds and rows stack into
    # one matrix: one GEMM (the general path below makes a product per seed).
    if linear[0] and y.ndim == 2:  # (X @ Y): ct_X = ct @ Yᵀ
        rows = reshape(ct, shape=(-1, y.shape[-1]))
        ct_x = matmul(rows, _swapaxes(y, -1, -2))
        return reshape(ct_x, shape=(ct.shape[0],) + tuple(x.shape)), None
    if linear[1] and y.ndim == 1 and x.ndim == 2:  # (X @ v): ct_v = ct @ X
        return None, matmul(ct, x)
    x2, y2 = _as_matrices(x, y)
    out2 = _matmul_shape(x2, y2)[0]
    ct2 = reshape(ct, shape=(ct.shape[0],) + out2)
    if linear[0]:  # ct·yᵀ, summed back over broadcast batch axes
        ct_x = unbroadcast(matmul(ct2, _swapaxes(y2, -1, -2)), x2.shape)
        return reshape(ct_x, shape=(ct.shape[0],) + tuple(x.shape)), None
    ct_y = unbroadcast(matmul(_swapaxes(x2, -1, -2), ct2), y2.shape)
    return None, reshape(ct_y, shape=(ct.shape[0],) + tuple(y.shape))


def _matmul_shape(x, y):
    xs, ys = tuple(x.shape), tuple(y.shape)
    if len(xs) == 1 and len(ys) == 1:
        shape = ()
    elif len(xs) == 1:
        shape = ys[:-2] + ys[-1:]
    elif len(ys) == 1:
        shape = xs[:-1]
    else:
        shape = np.broadcast_shapes(xs[:-2], ys[:-2]) + (xs[-2], ys[-1])
    return shape, np.result_type(x.dtype, y.dtype)


matmul = Primitive("matmul", np.matmul, jvp=_matmul_jvp, linear="one",
                   transpose=_matmul_transpose, shape_rule=_matmul_shape)
register_function(np.matmul, matmul)


def _parse_subscripts(subscripts: str, operands) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if "->" not in subscripts:  # NumPy's implicit output: letters seen once, sorted
        letters = inputs.replace("...", "").replace(",", "")
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(operands)} operands")
    return terms, output


def _einsum_jvp(primals, tangents, ans, subscripts):
    terms, output = _parse_subscripts(subscripts, primals)
    seed = next(c for c in string.ascii_letters if c not in subscripts)
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        spec = ",".join(seed + term if j == i else term for j, term in enumerate(terms))
        operands = [t if j == i else p for j, p in enumerate(primals)]
        term = einsum(*operands, subscripts=f"{spec}->{seed}{output}")
        total = term if total is None else add(total, term)
    return total


def _tokens(term: str) -> list[str]:
    """A subscript term as a list of letters, with '...' as one token."""
    before, dots, after = term.partition("...")
    return list(before) + (["..."] if dots else []) + list(after)


def _split_shape(tokens: list[str], shape: tuple) -> dict:
    """The dimensions of each token (a tuple for '...') of an operand of ``shape``."""
    n_letters = sum(t != "..." for t in tokens)
    dims, k = {}, 0
    for t in tokens:
        if t == "...":
            width = len(shape) - n_letters
            dims[t], k = tuple(shape[k:k + width]), k + width
        else:
            dims[t], k = (shape[k],), k + 1
    return dims


def _einsum_transpose(ct, args, linear, subscripts):
    terms, output = _parse_subscripts(subscripts, args)
    i = linear.index(True)
    tokens, shape = _tokens(terms[i]), tuple(args[i].shape)
    dims = _split_shape(tokens, shape)
    unique = list(dict.fromkeys(tokens))
    fresh = (c for c in string.ascii_letters if c not in subscripts)
    seed = next(fresh)
    others = [j for j in range(len(terms)) if j != i]
    present = set(output).union(*(set(terms[j]) for j in others)) | {"..."}
    kept = [t for t in unique if t in present]
    if "..." in subscripts and "..." not in kept:  # summed away below
        kept.insert(0, "...")
    spec = ",".join([seed + output] + [terms[j] for j in others]) + "->" + seed + "".join(kept)
    g = einsum(ct, *(args[j] for j in others), subscripts=spec)
    if "..." in kept:
        g = _sum_ellipsis_to(g, kept, dims.get("...", ()))
    # A letter summed inside this operand alone comes back by broadcasting.
    g_dims = _split_shape(kept, tuple(g.shape[1:]))
    layout = [g_dims[t] if t in present else (1,) for t in unique]
    g = reshape(g, shape=(ct.shape[0],) + sum(layout, ()))
    target = sum((dims[t] for t in unique), ())
    g = broadcast_to(unbroadcast(g, target), shape=(ct.shape[0],) + target)
    if len(unique) < len(tokens):  # a repeated letter: the cotangent sits on a diagonal
        seen, renamed, eyes = set(), "", []
        for t in tokens:
            if t in seen:
                f = next(fresh)
                renamed += f
                eyes.append((np.eye(dims[t][0], dtype=ct.dtype), t + f))
            else:
                seen.add(t)
                renamed += t
        spec = ",".join([seed + "".join(unique)] + [s for _, s in eyes])
        g = einsum(g, *(e for e, _ in eyes), subscripts=f"{spec}->{seed}{renamed}")
    return tuple(g if j == i else None for j in range(len(args)))


def _sum_ellipsis_to(g, tokens: list[str], want: tuple):
    """Sum the '...' axes of ``g`` (a seed axis, then ``tokens``) down to the operand's
    own '...' dimensions ``want``: '...' broadcasts like NumPy, aligned on the right."""
    dims = _split_shape(tokens, tuple(g.shape[1:]))
    start = 1 + sum(len(dims[t]) for t in tokens[:tokens.index("...")])
    have = dims["..."]
    extra = len(have) - len(want)
    ones = tuple(start + extra + k for k, n in enumerate(want)
                 if n == 1 and have[extra + k] != 1)
    if ones:
        g = sum_(g, axis=ones, keepdims=True)
    if extra:
        g = sum_(g, axis=tuple(range(start, start + extra)), keepdims=False)
    return g


def _einsum_shape(*operands, subscripts):
    terms, output = _parse_subscripts(subscripts, operands)
    sizes, ellipsis = {}, []
    for term, x in zip(terms, operands):
        for token, dim in _split_shape(_tokens(term), tuple(x.shape)).items():
            if token == "...":
                ellipsis.append(dim)
            else:
                sizes[token] = max(sizes.get(token, 1), dim[0])
    shape = ()
    for token in _tokens(output):
        shape += np.broadcast_shapes(*ellipsis) if token == "..." else (sizes[token],)
    return shape, np.result_type(*(x.dtype for x in operands))


einsum = Primitive("einsum",
                   lambda *operands, subscripts: np.einsum(subscripts, *operands, optimize=True),
                   jvp=_einsum_jvp, linear="one", transpose=_einsum_transpose,
                   shape_rule=_einsum_shape)


@implements(np.einsum)
def _einsum(*args, out=None, optimize=True, **kwargs):
    if out is not None or kwargs:
        raise TypeError("np.einsum on Duals takes subscripts and operands only (no out= or "
                        "dtype=): out= would drop the derivative")
    if isinstance(args[0], str):
        subscripts, operands = args[0], args[1:]
    else:
        subscripts, operands = _sublist_subscripts(args)
    # NumPy reads lists, tuples and Python numbers given as operands as arrays
    operands = [x if hasattr(x, "shape") else np.asarray(x) for x in operands]
    return einsum(*operands, subscripts=subscripts)


def _sublist_subscripts(args: tuple) -> tuple[str, tuple]:
    """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (the sublist form) as the
    subscripts string ``"ab,bc->ac"`` and the operands."""
    def letters(sublist):
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sublist)

    pairs = len(args) // 2
    inputs = ",".join(letters(args[2 * k + 1]) for k in range(pairs))
    output = "->" + letters(args[-1]) if len(args) % 2 else ""
    return inputs + output, tuple(args[2 * k] for k in range(pairs))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # NumPy's sublist labels


# ---------------------------------------------------------------------------
# Products built on matmul
# ---------------------------------------------------------------------------


@implements(np.tensordot)
def _tensordot(a, b, axes=2):
    a_shape, b_shape = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        a_axes = list(range(len(a_shape) - axes, len(a_shape)))
        b_axes = list(range(axes))
    else:
        a_axes, b_axes = ([int(i)] if np.ndim(i) == 0 else list(i) for i in axes)
    a_axes = [normalize_axis(i, len(a_shape)) for i in a_axes]
    b_axes = [normalize_axis(i, len(b_shape)) for i in b_axes]
    if [a_shape[i] for i in a_axes] != [b_shape[i] for i in b_axes]:
        raise ValueError(f"shape-mismatch for sum: {a_shape} and {b_shape} on axes "
                         f"{a_axes} and {b_axes}")
    a_free = [i for i in range(len(a_shape)) if i not in a_axes]
    b_free = [i for i in range(len(b_shape)) if i not in b_axes]
    def size(shape, axes):  # (explicit sizes: -1 is ambiguous for an empty array)
        return int(np.prod([shape[i] for i in axes], dtype=np.int64))

    summed = size(a_shape, a_axes)
    a2 = reshape(transpose(a, axes=tuple(a_free + a_axes)), shape=(size(a_shape, a_free),
                                                                   summed))
    b2 = reshape(transpose(b, axes=tuple(b_axes + b_free)), shape=(summed,
                                                                   size(b_shape, b_free)))
    out_shape = tuple(a_shape[i] for i in a_free) + tuple(b_shape[i] for i in b_free)
    return reshape(matmul(a2, b2), shape=out_shape)


@implements(np.dot)
def _dot(a, b, out=None):
    if out is not None:
        raise TypeError("np.dot(..., out=...) would drop the derivative of a Dual")
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return multiply(a, b)
    if a_nd <= 2 and b_nd <= 2:
        return matmul(a, b)
    return _tensordot(a, b, axes=([-1], [-2 if b_nd > 1 else -1]))


@implements(np.inner)
def _inner(a, b):
    if len(shape_of(a)) == 0 or len(shape_of(b)) == 0:
        return multiply(a, b)
    return _tensordot(a, b, axes=([-1], [-1]))


@implements(np.outer)
def _outer(a, b, out=None):
    return multiply(reshape(_ravel(a), shape=(-1, 1)), reshape(_ravel(b), shape=(1, -1)))


@implements(np.vdot)
def _vdot(a, b):
    return _sum(multiply(conj(_ravel(a)), _ravel(b)))  # NumPy conjugates a


@implements(np.linalg.vecdot)
def _vecdot(x1, x2, /, *, axis=-1):
    return _sum(multiply(conj(x1), x2), axis=axis)  # NumPy conjugates x1


def _vecdot_jvp(primals, tangents, ans):
    (x1, x2), (t1, t2) = primals, tangents
    ndim = max(x1.ndim, x2.ndim)  # tangents aligned with the broadcast operands
    d1 = None if t1 is None else _vecdot(align_tangent(t1, ndim), x2)
    d2 = None if t2 is None else _vecdot(x1, align_tangent(t2, ndim))
    return d2 if d1 is None else d1 if d2 is None else add(d1, d2)


def _vecdot_jax(x1, x2):
    import jax.numpy as jnp
    return jnp.vecdot(x1, x2)


# np.vecdot, a ufunc (called with positional arguments only), is a primitive: the
# ufuncs that are compositions refuse complex values (rules/complex_numbers.py).
vecdot = Primitive("vecdot", np.vecdot, jvp=_vecdot_jvp, complex_ok=True)
vecdot.kernels["jax"] = _vecdot_jax
register_function(np.vecdot, vecdot)


@implements(np.matvec)
def _matvec(x1, x2, /):
    v = reshape(x2, shape=shape_of(x2) + (1,))
    return getitem(matmul(x1, v), index=(Ellipsis, 0))


@implements(np.vecmat)
def _vecmat(x1, x2, /):
    shape = shape_of(x1)
    v = reshape(conj(x1), shape=shape[:-1] + (1, shape[-1]))  # NumPy conjugates x1
    return getitem(matmul(v, x2), index=(Ellipsis, 0, slice(None)))


implements(np.linalg.matmul)(matmul)

# ---------------------------------------------------------------------------
# Linear systems and inverses
# ---------------------------------------------------------------------------


def solve_seeds(a, rhs, vector: bool):
    """Solve ``a x = rhs`` for a seeded right-hand side with one factorization.

    ``rhs`` has shape ``(K, ..., n)`` (``vector``) or ``(K, ..., n, m)``; for a
    single matrix ``a`` the seeds become extra columns of one system.
    """
    k = rhs.shape[0]
    if a.ndim == 2 and rhs.ndim == (2 if vector else 3):
        if vector:  # (K, n) -> (n, K)
            return transpose(solve(a, transpose(rhs, axes=(1, 0))), axes=(1, 0))
        n, m = rhs.shape[1:]
        columns = reshape(transpose(rhs, axes=(1, 0, 2)), shape=(n, k * m))
        return transpose(reshape(solve(a, columns), shape=(n, k, m)), axes=(1, 0, 2))
    if vector:
        rhs = reshape(rhs, shape=rhs.shape + (1,))
        return getitem(solve(a, rhs), index=(Ellipsis, 0))
    return solve(a, rhs)


def _solve_jvp(primals, tangents, ans):
    a, b = primals
    ta, tb = tangents
    vector = b.ndim == 1
    rhs = None if tb is None else align_tangent(tb, ans.ndim)
    if ta is not None:
        # d(A⁻¹b) = A⁻¹(db − dA·x); dA is aligned with x so batch axes broadcast.
        x = reshape(ans, shape=ans.shape + (1,)) if vector else ans
        dax = matmul(align_tangent(ta, x.ndim), x)
        dax = getitem(dax, index=(Ellipsis, 0)) if vector else dax
        rhs = negative(dax) if rhs is None else rhs - dax
    return solve_seeds(a, rhs, vector)


def _solve_transpose(ct, args, linear):
    a, b = args
    # x = A⁻¹b is linear in b; its transpose is b̄ = A⁻ᵀ x̄.
    ct_b = solve_seeds(_swapaxes(a, -1, -2), ct, vector=b.ndim == 1)
    return None, unbroadcast(ct_b, b.shape)


def _solve_shape(a, b):
    if b.ndim == 1:
        return tuple(a.shape[:-1]), np.result_type(a.dtype, b.dtype)
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return batch + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype)


solve = Primitive("solve", np.linalg.solve, jvp=_solve_jvp, linear=(1,),
                  transpose=_solve_transpose, shape_rule=_solve_shape)
register_function(np.linalg.solve, solve)

inv = Primitive(
    "inv", np.linalg.inv,
    # d(A⁻¹) = −A⁻¹ dA A⁻¹
    jvp=lambda primals, tangents, ans: negative(matmul(ans, matmul(tangents[0], ans))),
    complex_ok=True,
)
register_function(np.linalg.inv, inv)


# ---------------------------------------------------------------------------
# Symmetric eigenproblems: eigenvalues and eigenvectors as two primitives
# ---------------------------------------------------------------------------


def _triangle(a, UPLO: str = "L"):
    return hermitian_part(a, lower=UPLO == "L")


def _uplo(UPLO: str) -> dict:
    # Passed on only when it is "U", so kernels without the parameter serve "L".
    return {} if UPLO == "L" else {"UPLO": UPLO}


def _in_eigenbasis(a, ta, UPLO):
    """Vᴴ dA V for each seed, V the eigenvectors of ``a``."""
    v = eigh_vectors(a, **_uplo(UPLO))
    return matmul(matmul(mH(v), _triangle(ta, UPLO)), v)


def _eigvalsh_jvp(primals, tangents, ans, UPLO="L"):
    # dwᵢ = vᵢᴴ dA vᵢ (real: dA is Hermitian)
    projected = _in_eigenbasis(primals[0], tangents[0], UPLO)
    i = np.arange(projected.shape[-1])
    return real(getitem(projected, index=(Ellipsis, i, i)))


def _eigh_vectors_jvp(primals, tangents, ans, UPLO="L"):
    # dV = V (F ∘ Vᴴ dA V), F_ij = 1 / (w_j − w_i) off the diagonal, 0 on it: JAX's
    # choice of phase for complex vectors, Im(vᵢᴴ dvᵢ) = 0
    a = primals[0]
    w = eigvalsh(a, **_uplo(UPLO))
    off = ~np.eye(w.shape[-1], dtype=bool)
    gap = getitem(w, index=(Ellipsis, None, slice(None))) - getitem(
        w, index=(Ellipsis, slice(None), None))
    f = where(off, 1.0 / where(off, gap, 1.0), 0.0)
    return matmul(ans, f * _in_eigenbasis(a, tangents[0], UPLO))


# NumPy's eigh(a, UPLO) itself, so values and eigenvector signs are NumPy's exactly.
eigvalsh = Primitive("eigvalsh", lambda a, UPLO="L": np.linalg.eigh(a, UPLO)[0],
                     jvp=_eigvalsh_jvp, complex_ok=True)
eigh_vectors = Primitive("eigh_vectors", lambda a, UPLO="L": np.linalg.eigh(a, UPLO)[1],
                         jvp=_eigh_vectors_jvp, complex_ok=True)

_EighResult = type(np.linalg.eigh(np.eye(1)))


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return _uplo(UPLO)


@implements(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):
    return eigvalsh(a, **_check_uplo(UPLO))


@implements(np.linalg.eigh)
def _eigh(a, UPLO="L"):
    uplo = _check_uplo(UPLO)
    return _EighResult(eigvalsh(a, **uplo), eigh_vectors(a, **uplo))


COMPLEX_FUNCTIONS.update({
    np.vdot, np.vecdot, np.linalg.vecdot, np.linalg.solve, np.linalg.inv, np.linalg.det,
    np.linalg.slogdet, np.linalg.eigh, np.linalg.eigvalsh,
})
