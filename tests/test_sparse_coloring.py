"""Colourings of sparsity patterns and the decompression of compressed derivatives.

Every colouring is checked by brute force (a loop over rows, or over all paths
on four vertices), independently of the vectorized code under test.
"""

import itertools
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from dualad.sparse.coloring import (ORDERS, column_coloring, decompress_columns,
                                    decompress_rows, decompress_star, distance1_coloring,
                                    row_coloring, seed_matrix, star_coloring)


# ---------------------------------------------------------------- patterns


def banded(n, b, m=None):
    return sp.csr_array(sp.diags_array([np.ones(n)] * (2 * b + 1), offsets=range(-b, b + 1),
                                       shape=(m or n, n)), dtype=bool)


def stencil(N):
    """The 5-point Laplacian on an N×N grid, natural order."""
    T, I = banded(N, 1), sp.eye_array(N, dtype=bool)
    return sp.csr_array(sp.kron(T, I) + sp.kron(I, T), dtype=bool)


def two_fields(N):
    """A Brusselator's Jacobian: fields u, v on an N×N periodic grid; each row is a 5-point
    periodic stencil in its own field plus the same point of the other field."""
    idx = np.arange(N * N).reshape(N, N)
    near = np.stack([idx, np.roll(idx, 1, 0), np.roll(idx, -1, 0), np.roll(idx, 1, 1),
                     np.roll(idx, -1, 1)]).reshape(5, -1)
    rows = np.concatenate([np.tile(idx.ravel(), 6), np.tile(idx.ravel(), 6) + N * N])
    cols = np.concatenate([near.ravel(), idx.ravel() + N * N, near.ravel() + N * N, idx.ravel()])
    return sp.csr_array((np.ones(len(rows), bool), (rows, cols)), shape=(2 * N * N, 2 * N * N))


def arrowhead(n):
    a = np.eye(n, dtype=bool)
    a[0] = a[:, 0] = True
    return a


def random_pattern(m, n, density, seed):
    return sp.random_array((m, n), density=density, rng=np.random.default_rng(seed),
                           format="csr").astype(bool)


def random_symmetric(n, density, seed):
    p = random_pattern(n, n, density, seed)
    return p + p.T


RANDOM = [random_pattern(m, n, d, seed) for seed, (m, n, d) in enumerate(
    [(30, 40, 0.05), (40, 30, 0.1), (25, 25, 0.3), (50, 8, 0.2), (8, 50, 0.2), (1, 1, 1.0),
     (5, 0, 0.0), (0, 5, 0.0), (12, 12, 0.0), (60, 60, 0.02)])]
RANDOM.append(sp.csr_array(np.array([[1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 1]], dtype=bool)))

PATTERNS = {"tridiagonal": banded(30, 1), "banded3": banded(40, 3), "rect-banded": banded(20, 2, 25),
            "stencil": stencil(9), "arrowhead": arrowhead(12), "dense": np.ones((6, 7), bool),
            **{f"random{i}": p for i, p in enumerate(RANDOM)}}

SYMMETRIC = {"tridiagonal": banded(30, 1), "banded2": banded(30, 2), "stencil": stencil(9),
             "arrowhead": arrowhead(12), "dense": np.ones((6, 6), bool),
             "diagonal": np.eye(5, dtype=bool), "1x1": np.ones((1, 1), bool),
             "empty": np.zeros((0, 0), bool),
             **{f"random{i}": random_symmetric(n, d, 100 + i) for i, (n, d) in
                enumerate([(20, 0.1), (30, 0.05), (15, 0.3), (40, 0.03), (12, 0.5)])}}


# ---------------------------------------------------------------- brute-force checks


def assert_column_coloring(pattern, colors):
    dense = sp.csr_array(pattern).toarray() if sp.issparse(pattern) else np.asarray(pattern)
    assert colors.shape == (dense.shape[1],)
    if len(colors):
        assert set(colors) == set(range(colors.max() + 1))
    for row in dense:
        used = colors[np.flatnonzero(row)]
        assert len(set(used)) == len(used)


def assert_star_coloring(pattern, colors):
    dense = sp.csr_array(pattern).toarray() if sp.issparse(pattern) else np.asarray(pattern)
    adjacent = (dense | dense.T) & ~np.eye(len(dense), dtype=bool)
    assert colors.shape == (len(dense),)
    neighbours = [set(np.flatnonzero(row)) for row in adjacent]
    for v, w in zip(*np.nonzero(adjacent)):
        assert colors[v] != colors[w]
        for u, x in itertools.product(neighbours[v] - {w}, neighbours[w] - {v}):
            if u != x:
                assert not (colors[u] == colors[w] and colors[v] == colors[x]), (u, v, w, x)


def assert_star_coloring_by_counts(pattern, colors):
    """The same check for larger patterns: v–w is the middle of a two-coloured path on four
    vertices exactly when v has another neighbour coloured like w, and w one like v."""
    p = sp.csr_array(pattern, dtype=bool)
    p = sp.csr_array(p + p.T, dtype=bool)
    p.setdiag(False)
    p.eliminate_zeros()
    like = [Counter(colors[p.indices[p.indptr[v]:p.indptr[v + 1]]]) for v in range(p.shape[0])]
    for v in range(p.shape[0]):
        for w in p.indices[p.indptr[v]:p.indptr[v + 1]]:
            assert colors[v] != colors[w]
            assert like[v][colors[w]] < 2 or like[w][colors[v]] < 2, (v, w)


def count(colors):
    return int(colors.max(initial=-1)) + 1


# ---------------------------------------------------------------- validity


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("order", ORDERS)
def test_column_and_row_colorings_are_valid(name, order):
    pattern = PATTERNS[name]
    assert_column_coloring(pattern, column_coloring(pattern, order))
    transposed = sp.csr_array(pattern).T if sp.issparse(pattern) else np.asarray(pattern).T
    assert_column_coloring(transposed, row_coloring(pattern, order))


@pytest.mark.parametrize("name", SYMMETRIC)
@pytest.mark.parametrize("order", ORDERS)
def test_star_colorings_are_valid(name, order):
    pattern = SYMMETRIC[name]
    assert_star_coloring(pattern, star_coloring(pattern, order))


def assert_distance1_coloring(pattern, colors):
    dense = sp.csr_array(pattern).toarray() if sp.issparse(pattern) else np.asarray(pattern)
    adjacent = (dense | dense.T) & ~np.eye(len(dense), dtype=bool)
    assert colors.shape == (len(dense),) and colors.dtype == np.int32
    if len(colors):
        assert set(colors) == set(range(colors.max() + 1))
    for v, w in zip(*np.nonzero(adjacent)):
        assert colors[v] != colors[w], (v, w)


@pytest.mark.parametrize("name", SYMMETRIC)
@pytest.mark.parametrize("order", ORDERS)
def test_distance1_colorings_are_valid_and_need_no_more_than_star(name, order):
    pattern = SYMMETRIC[name]
    colors = distance1_coloring(pattern, order)
    assert_distance1_coloring(pattern, colors)
    if order == "largest_first":
        assert count(colors) <= count(star_coloring(pattern))


@pytest.mark.parametrize("seed", range(8))
def test_distance1_coloring_of_random_graphs(seed):
    rng = np.random.default_rng(seed)
    pattern = random_symmetric(int(rng.integers(8, 60)), rng.uniform(0.02, 0.5), seed)
    colors = distance1_coloring(pattern)
    assert_distance1_coloring(pattern, colors)
    degree = (pattern.toarray() & ~np.eye(pattern.shape[0], dtype=bool)).sum(axis=1)
    assert count(colors) <= degree.max(initial=0) + 1  # as greedy in any order


def test_distance1_color_counts():
    assert count(distance1_coloring(banded(30, 1))) == 2  # a path: column colouring needs 3
    assert count(distance1_coloring(stencil(10))) == 2  # a grid is bipartite
    assert count(distance1_coloring(arrowhead(12))) == 2
    assert count(distance1_coloring(np.eye(7, dtype=bool))) == 1  # no edges: one colour
    assert count(distance1_coloring(np.ones((9, 9), bool))) == 9
    blocks = sp.block_diag([np.ones((4, 4), bool)] * 20, format="csr")  # 20 particles
    assert count(distance1_coloring(blocks)) == 4
    assert distance1_coloring(np.zeros((0, 0), bool)).shape == (0,)
    with pytest.raises(ValueError, match="square"):
        distance1_coloring(np.ones((2, 3)))
    with pytest.raises(ValueError, match="order"):
        distance1_coloring(np.eye(3), order="smallest_first")


@pytest.mark.parametrize("seed", range(12))
def test_star_coloring_of_random_graphs(seed):
    rng = np.random.default_rng(seed)
    pattern = random_symmetric(int(rng.integers(8, 40)), rng.uniform(0.05, 0.5), seed)
    assert_star_coloring(pattern, star_coloring(pattern))


@pytest.mark.parametrize("order", ORDERS)
def test_star_coloring_of_a_larger_random_graph(order):
    # Hundreds of vertices per round: many speculative colours to repair.
    pattern = random_symmetric(3000, 0.0007, 11)
    colors = star_coloring(pattern, order)
    assert_star_coloring_by_counts(pattern, colors)
    assert count(colors) <= 12


def test_star_coloring_with_more_than_64_colors():
    # A 70-clique needs 70 colours: forbidden colours leave one machine word.
    pattern = random_symmetric(200, 0.02, 5).toarray()
    pattern[:70, :70] = True
    colors = star_coloring(pattern)
    assert_star_coloring_by_counts(pattern, colors)
    assert count(colors) >= 70


def test_pattern_kinds():
    dense = np.array([[1, 1, 0], [0, 1, 1]])
    expected = column_coloring(dense)
    for kind in (sp.csr_array, sp.csc_array, sp.coo_array, sp.csr_matrix, sp.lil_matrix):
        np.testing.assert_array_equal(column_coloring(kind(dense)), expected)


def test_bad_arguments():
    with pytest.raises(ValueError, match="order"):
        column_coloring(np.eye(3), order="smallest_first")
    with pytest.raises(ValueError, match="square"):
        star_coloring(np.ones((2, 3)))


# ---------------------------------------------------------------- colour counts


@pytest.mark.parametrize("n", [4, 10, 1000])
def test_tridiagonal_needs_three_colors(n):
    pattern = banded(n, 1)
    assert count(column_coloring(pattern)) == 3
    assert count(row_coloring(pattern)) == 3
    assert count(star_coloring(pattern)) == 3


@pytest.mark.parametrize("b", [1, 2, 3, 5])
def test_banded_needs_2b_plus_1_colors(b):
    pattern = banded(200, b)
    assert count(column_coloring(pattern)) == 2 * b + 1
    assert count(star_coloring(pattern)) == 2 * b + 1  # optimal (SparseMatrixColorings' theory test)


@pytest.mark.parametrize("N", [5, 10, 31, 100])
def test_stencil_colors(N):
    pattern = stencil(N)
    colors = column_coloring(pattern)
    assert count(colors) == 5  # a point and its 4 neighbours share a row: 5 is optimal
    # The star chromatic number of a large 2-D grid is 5 (Fertin, Raspaud, Reed 2004).
    assert count(star_coloring(pattern)) <= 5
    if N <= 10:
        assert_column_coloring(pattern, colors)


def test_arrowhead_star_coloring_needs_two_colors():
    pattern = arrowhead(50)
    assert count(star_coloring(pattern)) == 2
    assert count(column_coloring(pattern)) == 50


def test_diagonal_and_dense():
    assert count(column_coloring(np.eye(7))) == 1
    assert count(star_coloring(np.eye(7))) == 1
    assert count(column_coloring(np.ones((3, 5)))) == 5
    assert count(star_coloring(np.ones((4, 4)))) == 4


# ---------------------------------------------------------------- decompression


def with_values(pattern, dtype, seed):
    p = sp.csr_array(pattern, dtype=bool)
    rng = np.random.default_rng(seed)
    return sp.csr_array((rng.uniform(1, 2, p.nnz).astype(dtype), p.indices, p.indptr),
                        shape=p.shape)


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decompress_columns_and_rows(name, dtype):
    pattern = PATTERNS[name]
    jac = with_values(pattern, dtype, 1)
    colors = column_coloring(pattern)
    out = decompress_columns(pattern, colors, jac @ seed_matrix(colors, dtype))
    assert isinstance(out, sp.csr_array) and out.dtype == dtype and out.has_canonical_format
    np.testing.assert_array_equal(out.indptr, jac.indptr)
    np.testing.assert_array_equal(out.indices, jac.indices)
    np.testing.assert_array_equal(out.data, jac.data)
    colors = row_coloring(pattern)
    out = decompress_rows(pattern, colors, seed_matrix(colors, dtype).T @ jac)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.toarray(), jac.toarray())


@pytest.mark.parametrize("name", SYMMETRIC)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decompress_star(name, dtype):
    pattern = np.asarray(sp.csr_array(SYMMETRIC[name]).toarray())
    n = len(pattern)
    full = pattern | pattern.T | np.eye(n, dtype=bool)
    values = np.random.default_rng(2).uniform(1, 2, (n, n)).astype(dtype)
    hess = np.where(full, values + values.T, 0).astype(dtype)
    colors = star_coloring(pattern)
    out = decompress_star(pattern, colors, hess @ seed_matrix(colors, dtype))
    assert isinstance(out, sp.csr_array) and out.dtype == dtype and out.has_canonical_format
    assert out.nnz == full.sum()
    np.testing.assert_array_equal(out.toarray(), hess)


def test_decompress_star_of_a_large_stencil():
    pattern = stencil(40)
    hess = with_values(pattern, np.float64, 3)
    hess = hess + hess.T
    colors = star_coloring(pattern)
    out = decompress_star(pattern, colors, hess @ seed_matrix(colors))
    np.testing.assert_array_equal(out.toarray(), hess.toarray())


def test_seed_matrix():
    np.testing.assert_array_equal(seed_matrix(np.array([1, 0, 1]), np.float32),
                                  np.array([[0, 1], [1, 0], [0, 1]], np.float32))
    assert seed_matrix(np.zeros(0, int)).shape == (0, 0)


# ---------------------------------------------------------------- large patterns


def test_star_coloring_of_large_bands_and_stencils_is_periodic_and_optimal():
    # Above the small-pattern size the periodic distance-2 colouring is tried first.
    for pattern, expected in [(banded(3000, 1), 3), (banded(3000, 3), 7), (stencil(40), 5)]:
        colors = star_coloring(pattern)
        assert count(colors) == expected
        assert_column_coloring(pattern, colors)  # distance 2, hence star


def test_large_arrowhead_star_coloring_still_needs_two_colors():
    pattern = sp.csr_array(arrowhead(3000))
    colors = star_coloring(pattern)
    assert count(colors) == 2
    hess = with_values(pattern, np.float64, 4)
    hess = hess + hess.T
    np.testing.assert_array_equal(decompress_star(pattern, colors, hess @ seed_matrix(colors)).toarray(),
                                  hess.toarray())


@pytest.mark.parametrize("order", ORDERS)
def test_column_coloring_of_a_large_random_pattern(order):
    pattern = random_pattern(3000, 2000, 0.002, 7)
    colors = column_coloring(pattern, order)
    p = sp.csr_array(pattern)
    for row in range(p.shape[0]):
        used = colors[p.indices[p.indptr[row]:p.indptr[row + 1]]]
        assert len(set(used)) == len(used)
    assert count(colors) <= int(np.diff(p.indptr).max()) + 6


@pytest.mark.parametrize("N", [7, 20, 30, 50, 64])
def test_column_coloring_of_two_coupled_periodic_fields(N):
    # Small: greedy; large: a periodic colouring, tried first (below twice the clique bound).
    pattern = two_fields(N)
    colors = column_coloring(pattern)
    p = sp.csr_array(pattern)
    assert (np.diff(p.indptr) == 6).all()
    for row in range(p.shape[0]):
        used = colors[p.indices[p.indptr[row]:p.indptr[row + 1]]]
        assert len(set(used)) == len(used)
    assert count(colors) <= 11


def test_column_coloring_with_more_than_64_colors():
    dense_rows = np.zeros((3, 150), bool)
    dense_rows[0, :130] = dense_rows[1, 100:] = dense_rows[2, ::2] = True
    colors = column_coloring(dense_rows)
    assert_column_coloring(dense_rows, colors)
    assert count(colors) == 130


def test_canonical_input_is_not_modified():
    pattern = banded(2000, 2)
    before = (pattern.indptr.copy(), pattern.indices.copy())
    column_coloring(pattern), star_coloring(pattern), row_coloring(pattern)
    np.testing.assert_array_equal(pattern.indptr, before[0])
    np.testing.assert_array_equal(pattern.indices, before[1])
