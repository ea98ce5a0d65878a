"""Graph colouring of sparsity patterns, and decompression of compressed derivatives.

A Jacobian ``J`` of shape (m, n) whose columns ``j`` and ``k`` never share a
nonzero row can be probed by one forward pass seeded with ``e_j + e_k``. A
*column colouring* groups the columns into such structurally orthogonal classes
(colours): with the seed matrix ``S[j, c] = 1 if colors[j] == c``, the k forward
passes of ``J @ S`` give every nonzero of ``J`` once, and
:func:`decompress_columns` puts it back. Rows and reverse mode are the same on
``Jᵀ``. For a symmetric Hessian a *star colouring* needs far fewer colours (an
arrowhead needs 2 instead of n): each ``H[i, j]`` is read either from row i or
from row j of ``H @ S`` (Gebremedhin, Manne, Pothen, "What color is your
Jacobian?", SIAM Review 2005; Gebremedhin, Tarafdar, Manne, Pothen, SIAM J. Sci.
Comput. 2007).

All colourings here are computed in vectorized rounds, never one vertex at a
time:

* Jones–Plassmann: each round, every uncoloured vertex whose priority beats all
  its uncoloured neighbours takes the smallest colour its neighbours leave free.
  With priorities from an ordering this is the sequential greedy colouring in
  that order, in as many rounds as the longest chain of decreasing priority.
* For star colourings the choice also avoids two-coloured paths on four
  vertices; two vertices chosen in the same round may still complete such a
  path together, so the round is checked and the lower-priority culprit
  uncoloured again (speculation and repair, as in Bozdağ et al., 2010).
* Culberson's iterated greedy then recolours a whole colour class at a time
  (a class is independent), which never increases the count.
* Patterns from grids in natural order (banded matrices, stencils) have
  optimal *periodic* colourings ``(j + s·(j // L)) mod p`` that greedy orders
  miss (greedy needs 7 colours on the 5-point stencil, where 5 suffice); these
  are tried too, exactly checked, and the fewest colours win.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import greedy

__all__ = ["ORDERS", "column_coloring", "row_coloring", "star_coloring", "distance1_coloring",
           "seed_matrix", "decompress_columns", "decompress_rows", "decompress_star"]

#: Vertex orderings accepted by the colourings: ties (and "random") broken by a
#: fixed seed, so a colouring is reproducible.
ORDERS = ("largest_first", "natural", "random")

_SEED = 0
_SMALL = 1000  # below this, star colourings always try the greedy colouring too
_ITERATED_GREEDY_PASSES = 4


# ---------------------------------------------------------------- patterns


def _csr(pattern) -> sp.csr_array:
    """The pattern as a canonical boolean CSR array (sorted, no duplicates, no zeros).

    A canonical boolean CSR array is returned as it is (not copied): never modify the result.
    """
    if isinstance(pattern, sp.csr_array) and pattern.dtype == bool \
            and pattern.has_canonical_format and pattern.data.all():
        return pattern
    p = sp.csr_array(pattern if sp.issparse(pattern) else np.asarray(pattern), dtype=bool)
    p.sum_duplicates()
    p.eliminate_zeros()
    p.sort_indices()
    return p


def symmetric(pattern) -> sp.csr_array:
    """``P + Pᵀ + I`` of a square pattern (the diagonal counts as present)."""
    p = _csr(pattern)
    if p.shape[0] != p.shape[1]:
        raise ValueError(f"a symmetric pattern must be square, got shape {p.shape}")
    t = sp.csr_array(p.T)
    if np.array_equal(t.indptr, p.indptr) and np.array_equal(t.indices, p.indices) \
            and p.diagonal().all():
        return p
    q = _csr(p + t)
    return q if q.diagonal().all() else _csr(q + sp.eye_array(p.shape[0], dtype=bool, format="csr"))


def _adjacency(p: sp.csr_array) -> sp.csr_array:
    """The graph of a pattern from :func:`symmetric`: its off-diagonal part (one entry a row)."""
    off = p.indices != _rows_of(p)
    indptr = p.indptr - np.arange(p.shape[0] + 1, dtype=p.indptr.dtype)
    return sp.csr_array((p.data[off], p.indices[off], indptr), shape=p.shape)


def _rows_of(p: sp.csr_array) -> np.ndarray:
    """The row index of every stored entry."""
    return np.repeat(np.arange(p.shape[0], dtype=p.indptr.dtype), np.diff(p.indptr))


def _order(degree: np.ndarray, order: str) -> np.ndarray:
    """The vertices in the order the greedy colouring takes them."""
    n = len(degree)
    rng = np.random.default_rng(_SEED)
    if order == "largest_first":  # ties in random order
        shuffled = rng.permutation(n)
        small = degree.max(initial=0) < 2**15
        key = np.asarray(-degree[shuffled], dtype=np.int16 if small else np.int64)
        return shuffled[np.argsort(key, kind="stable")]
    if order == "natural":
        return np.arange(n)
    if order == "random":
        return rng.permutation(n)
    raise AssertionError(order)


def _priorities(degree: np.ndarray, order: str) -> np.ndarray:
    """Distinct float priorities of the vertices: higher is coloured first."""
    n = len(degree)
    rng = np.random.default_rng(_SEED)
    if order == "largest_first":
        return degree + rng.random(n)
    if order == "natural":
        return -np.arange(n, dtype=np.float64)
    if order == "random":
        return rng.permutation(n).astype(np.float64)
    raise AssertionError(order)


def _check_order(order: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")


# ---------------------------------------------------------------- periodic colourings


def _periodic(p: sp.csr_array, bound: int, start: int = 0) -> np.ndarray | None:
    """The colouring ``(j + s·(j // L) + t·(j // B)) mod q`` with fewest colours
    ``start <= q < bound``, if one is valid.

    Valid means that no row of ``p`` has two columns of one colour. Periods L
    are the commonest column distances within a sample of rows (a stencil's
    grid line length shows up there); blocks B are distances that split the
    columns into a few equal fields, coupled in most rows (a reaction–diffusion
    system's species), t = 0 otherwise. All shifts s are tried on the sample at
    once, and the rows that refute a candidate on the whole pattern (at a
    grid's wrap, say) join the sample, so later candidates fail there cheaply.
    """
    n = p.shape[1]
    rng = np.random.default_rng(_SEED)
    rows = np.sort(rng.choice(p.shape[0], size=min(p.shape[0], 64), replace=False))
    sample = p[rows]
    which, col = greedy.gather(sample, np.arange(sample.shape[0]))
    which, col = which[:2048], col[:2048]
    distance = np.abs(col[:, None] - col[None, :])[which[:, None] == which[None, :]]
    distance, times = np.unique(distance[distance > 1], return_counts=True)
    periods = [0] + distance[np.argsort(-times, kind="stable")][:8].tolist()
    blocks = [int(d) for d in distance[2 * times >= len(rows)] if n % d == 0 and n // d <= 16][:2]
    j = np.arange(n, dtype=np.int32 if 65 * n < 2**31 else np.int64)
    for q in range(max(start, int(np.diff(p.indptr).max(initial=1))), min(bound, 64)):
        tilings = [(1, 0)] + [(b, t) for b in blocks for t in range(1, q)]
        for period, block, t in [(period, block, t) for period in periods
                                 for block, t in tilings]:
            def color(j, shift):
                c = j + shift * (j // period) if period else j
                return (c + t * (j // block) if t else c) % q
            shifts = np.arange(q if period else 1)[:, None]
            ok = _distinct_in_rows(sample, np.atleast_2d(_bits(color(sample.indices, shifts), q)))
            for shift in np.flatnonzero(ok):
                colors = color(j, shift)
                bad = ~_distinct_in_rows(p, _bits(colors, q)[p.indices])
                if not bad.any():
                    return colors.astype(np.int32)
                rows = np.union1d(rows, np.flatnonzero(bad)[:16])
                sample = p[rows]
    return None


def _distinct_in_rows(p: sp.csr_array, bits: np.ndarray) -> np.ndarray:
    """Whether each row of ``p`` has no two entries of one colour, given ``1 << colour`` per
    entry (along the last axis of ``bits``: a candidate colouring per leading index)."""
    total = np.zeros(bits.shape[:-1] + (bits.shape[-1] + 1,), dtype=bits.dtype)
    np.cumsum(bits, axis=-1, out=total[..., 1:])  # row sums as differences: wrapping is harmless
    # k distinct powers of two add up with k bits set; any repeat carries and sets fewer.
    sums = total[..., p.indptr[1:]] - total[..., p.indptr[:-1]]
    return (np.bitwise_count(sums) == np.diff(p.indptr)).all(axis=-1) if bits.ndim > 1 \
        else np.bitwise_count(sums) == np.diff(p.indptr)


def _bits(colors: np.ndarray, q: int) -> np.ndarray:
    """``1 << colors`` for colours below ``q <= 64``, in 32 bits when they fit."""
    dtype = np.uint32 if q <= 32 else np.uint64
    return np.left_shift(dtype(1), colors.astype(dtype))


def _is_star(graph: sp.csr_array, colors: np.ndarray) -> bool:
    """A proper colouring of ``graph`` with no two-coloured path on four vertices."""
    k = colors.max(initial=-1) + 1
    src, dst = _rows_of(graph), graph.indices
    if (colors[src] == colors[dst]).any():
        return False
    key = src * k + colors[dst]
    count = np.bincount(key, minlength=graph.shape[0] * k)
    return not ((count[key] >= 2) & (count[dst * k + colors[src]] >= 2)).any()


# ---------------------------------------------------------------- public colourings


def column_coloring(pattern, order: str = "largest_first") -> np.ndarray:
    """Colour the columns of a sparsity pattern so that same-coloured columns never share a row.

    Forward mode then needs one seed per colour (see :func:`seed_matrix`). This
    is a partial distance-2 colouring of the bipartite row/column graph.

    Parameters
    ----------
    pattern:
        Shape (m, n): a ``scipy.sparse`` array or matrix, or a dense array;
        stored nonzeros are the pattern.
    order:
        Priority of the greedy colouring, one of :data:`ORDERS`: "largest_first"
        (most conflicting columns first; the default, fewest colours measured on
        random patterns), "natural" (the greedy colouring in index order
        exactly; its rounds grow with the longest chain of conflicting columns,
        up to n on a banded pattern, so keep it to small patterns) or "random".

    Returns
    -------
    numpy.ndarray
        One colour in ``0..k-1`` per column (int32).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> tridiagonal = sp.diags_array([1., 1., 1.], offsets=[-1, 0, 1], shape=(6, 6))
    >>> column_coloring(tridiagonal)
    array([0, 1, 2, 0, 1, 2], dtype=int32)
    """
    _check_order(order)
    p = _csr(pattern)
    n = p.shape[1]
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    # Columns sharing a row form a clique: a periodic colouring that small is optimal.
    lower = int(np.diff(p.indptr).max(initial=1))
    # On large patterns a periodic colouring below twice the clique bound is taken without
    # trying greedy (on a grid's two coupled fields, as in a Brusselator, greedy does no better).
    bound = lower + 1 if n <= _SMALL else 2 * lower
    best = _periodic(p, bound)
    if best is not None:
        return best
    # Conflicts counted with multiplicity (columns sharing two rows count twice): no PᵀP needed.
    row_length = np.diff(p.indptr)
    degree = np.bincount(p.indices, weights=np.repeat(row_length - 1, row_length), minlength=n)
    best = greedy.column_coloring(p, _order(degree, order), lower, _ITERATED_GREEDY_PASSES)
    periodic = _periodic(p, int(best.max()) + 1, bound)
    return best.astype(np.int32) if periodic is None else periodic


def row_coloring(pattern, order: str = "largest_first") -> np.ndarray:
    """Colour the rows of a sparsity pattern so that same-coloured rows never share a column.

    Reverse mode then needs one cotangent seed per colour; this is
    :func:`column_coloring` of the transposed pattern.

    Examples
    --------
    >>> import numpy as np
    >>> row_coloring(np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]]))
    array([0, 1, 1], dtype=int32)
    """
    return column_coloring(_csr(pattern).T, order)


def star_coloring(pattern, order: str = "largest_first") -> np.ndarray:
    """Star-colour a symmetric pattern (a Hessian's), the diagonal counted as present.

    A star colouring is a proper colouring of the graph of the pattern in which
    every path on four vertices uses at least three colours. Then each
    ``H[i, j]`` can be read from ``H @ S`` (see :func:`decompress_star`), with
    one Hessian-vector product per colour; an arrowhead needs 2.

    Parameters
    ----------
    pattern:
        Square (n, n); only its symmetric part ``P + Pᵀ`` matters.
    order:
        As for :func:`column_coloring`.

    Returns
    -------
    numpy.ndarray
        One colour in ``0..k-1`` per variable (int32).

    Examples
    --------
    >>> import numpy as np
    >>> arrowhead = np.eye(5, dtype=bool)
    >>> arrowhead[0] = arrowhead[:, 0] = True
    >>> star_coloring(arrowhead)
    array([0, 1, 1, 1, 1], dtype=int32)
    """
    _check_order(order)
    p = symmetric(pattern)
    n = p.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    # A distance-2 colouring (a column colouring of P + Pᵀ + I) is a star colouring and needs
    # max-row-count colours; stencils and bands have a periodic one that small, and there it is
    # the star optimum too. Star colourings win big only around hubs (rows far longer than the
    # mean, as in an arrowhead) or on tiny patterns, where the greedy star colouring runs too.
    lower = int(np.diff(p.indptr).max())
    if n > _SMALL and lower <= 2 * p.nnz / n:
        best = _periodic(p, lower + 1)
        if best is not None:
            return best
    graph = _adjacency(p)
    best = greedy.star_coloring(graph, _priorities(np.diff(graph.indptr), order))
    periodic = _periodic(p, int(best.max()) + 1)
    return best.astype(np.int32) if periodic is None else periodic


def distance1_coloring(pattern, order: str = "largest_first") -> np.ndarray:
    """Colour the variables of a symmetric pattern so that no two coupled variables
    (``P[i, j]`` stored, i ≠ j) share a colour: a proper colouring of its graph.

    Laxer than :func:`star_coloring` and :func:`column_coloring` (a path needs 2
    colours, not 3): it recovers no Hessian entry, but ``Σ_c u_cᵀ H u_c`` for
    ``u_c = Σ_{i of colour c} e_i`` is ``tr H`` (the cross terms within a colour
    are structural zeros), which :func:`dualad.laplacian` uses with
    ``method="sparse"``. It is :func:`column_coloring` of the edge–vertex
    incidence matrix, one row per edge with its two ends; the diagonal is
    ignored, and a pattern without edges takes one colour.

    Parameters
    ----------
    pattern:
        Square (n, n); only its symmetric part ``P + Pᵀ`` matters.
    order:
        As for :func:`column_coloring`.

    Returns
    -------
    numpy.ndarray
        One colour in ``0..k-1`` per variable (int32).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> tridiagonal = sp.diags_array([1., 1., 1.], offsets=[-1, 0, 1], shape=(6, 6))
    >>> distance1_coloring(tridiagonal)
    array([0, 1, 0, 1, 0, 1], dtype=int32)
    >>> distance1_coloring(sp.eye_array(3))
    array([0, 0, 0], dtype=int32)
    """
    _check_order(order)
    graph = _adjacency(symmetric(pattern))
    first, second = _rows_of(graph), graph.indices
    upper = first < second
    edges = int(np.count_nonzero(upper))
    if edges == 0:
        return np.zeros(graph.shape[0], dtype=np.int32)
    ends = np.stack([first[upper], second[upper]], axis=1).ravel()  # sorted within each row
    incidence = sp.csr_array((np.ones(2 * edges, dtype=bool), ends,
                              np.arange(0, 2 * edges + 1, 2)), shape=(edges, graph.shape[0]))
    return column_coloring(incidence, order)


# ---------------------------------------------------------------- seeds and decompression


def seed_matrix(colors: np.ndarray, dtype=np.float64) -> np.ndarray:
    """The (n, k) 0/1 matrix ``S[j, c] = 1 if colors[j] == c``.

    A transform probes ``J @ S`` with one forward pass per column of S (or
    ``Sᵀ J`` with one reverse pass per column, for row colours).

    Examples
    --------
    >>> seed_matrix(np.array([0, 1, 0]))
    array([[1., 0.],
           [0., 1.],
           [1., 0.]])
    """
    colors = np.asarray(colors)
    seeds = np.zeros((len(colors), colors.max(initial=-1) + 1), dtype=dtype)
    seeds[np.arange(len(colors)), colors] = 1
    return seeds


def decompress_columns(pattern, colors: np.ndarray, compressed: np.ndarray) -> sp.csr_array:
    """Rebuild ``J`` from ``compressed = J @ seed_matrix(colors)`` for a column colouring.

    Returns a CSR array with exactly the pattern's (canonical) structure; the
    dtype of ``compressed`` is kept.

    Examples
    --------
    >>> import numpy as np
    >>> jac = np.array([[2., 3., 0.], [0., 4., 5.]])
    >>> colors = column_coloring(jac)
    >>> decompress_columns(jac, colors, jac @ seed_matrix(colors)).toarray()
    array([[2., 3., 0.],
           [0., 4., 5.]])
    """
    p = _csr(pattern)
    return sp.csr_array((column_values(p, colors, compressed), p.indices, p.indptr),
                        shape=p.shape)


def decompress_rows(pattern, colors: np.ndarray, compressed: np.ndarray) -> sp.csr_array:
    """Rebuild ``J`` from ``compressed = seed_matrix(colors).T @ J`` for a row colouring.

    Examples
    --------
    >>> import numpy as np
    >>> jac = np.array([[2., 3., 0.], [0., 4., 5.]])
    >>> colors = row_coloring(jac)
    >>> decompress_rows(jac, colors, seed_matrix(colors).T @ jac).toarray()
    array([[2., 3., 0.],
           [0., 4., 5.]])
    """
    p = _csr(pattern)
    return sp.csr_array((row_values(p, colors, compressed), p.indices, p.indptr),
                        shape=p.shape)


def decompress_star(pattern, colors: np.ndarray, compressed: np.ndarray) -> sp.csr_array:
    """Rebuild a symmetric ``H`` from ``compressed = H @ seed_matrix(colors)`` for a star colouring.

    ``H[i, j]`` is ``compressed[i, colors[j]]`` when j is the only one of row
    i's entries (the diagonal included) with colour ``colors[j]``, and
    ``compressed[j, colors[i]]`` otherwise, which a star colouring makes exact.
    Returns the full symmetric CSR array (both triangles and the diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> hess = np.array([[4., 1., 2.], [1., 5., 0.], [2., 0., 6.]])
    >>> colors = star_coloring(hess)
    >>> decompress_star(hess, colors, hess @ seed_matrix(colors)).toarray()
    array([[4., 1., 2.],
           [1., 5., 0.],
           [2., 0., 6.]])
    """
    p = symmetric(pattern)
    return sp.csr_array((star_values(p, colors, compressed), p.indices, p.indptr),
                        shape=p.shape)


# The nonzeros alone, in the order of a canonical pattern ``p`` (``symmetric`` for a star
# colouring): what the transforms gather at every evaluation.

def column_values(p: sp.csr_array, colors: np.ndarray, compressed: np.ndarray) -> np.ndarray:
    return _pick(compressed, _rows_of(p), np.asarray(colors)[p.indices])


def row_values(p: sp.csr_array, colors: np.ndarray, compressed: np.ndarray) -> np.ndarray:
    return _pick(compressed, np.asarray(colors)[_rows_of(p)], p.indices)


def star_values(p: sp.csr_array, colors: np.ndarray, compressed: np.ndarray) -> np.ndarray:
    colors = np.asarray(colors)
    rows, cols = _rows_of(p), p.indices
    k = colors.max(initial=0) + 1
    key = rows.astype(np.int64) * k + colors[cols]
    if len(colors) * k <= 4 * len(key) + 1024:  # counting is linear; a table that small is cheap
        direct = np.bincount(key, minlength=len(colors) * k)[key] == 1
    else:
        _, where, count = np.unique(key, return_inverse=True, return_counts=True)
        direct = count[where] == 1
    return np.where(direct, _pick(compressed, rows, colors[cols]),
                    _pick(compressed, cols, colors[rows]))


def _pick(a: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``a[i, j]``: one gather on a's memory when it is contiguous (twice as fast)."""
    a = np.asarray(a)
    if type(a) is not np.ndarray:  # (Duals of an enclosing transform)
        return a[i, j]
    index = np.int32 if a.size < 2**31 else np.int64
    if a.flags.c_contiguous:
        return a.ravel()[i.astype(index) * a.shape[1] + j]
    if a.flags.f_contiguous:
        return a.T.ravel()[j.astype(index) * a.shape[0] + i]
    return a[i, j]
