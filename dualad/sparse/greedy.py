"""Greedy colourings in vectorized rounds: the engine under :mod:`dualad.sparse.coloring`.

Column colourings run on the bipartite row/column graph itself, never on the
column conflict graph ``PᵀP`` (which costs a sparse product and holds far more
edges): with each row's columns sorted by priority, a column may be coloured
as soon as it heads every one of its rows, and the colours already taken in a
row are one bitmask per row. Each round then touches only the rows of the
columns it colours, so a whole colouring reads every nonzero a few times.

Star colourings run on the graph of ``P + Pᵀ`` with speculation and repair.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_ONE = np.uint64(1)
_FULL = np.uint64(2**64 - 1)


# ---------------------------------------------------------------- helpers


def gather(p: sp.csr_array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(which, col)`` for every entry of the given rows: ``rows[which]`` holds ``col``."""
    start, count = p.indptr[rows], p.indptr[rows + 1] - p.indptr[rows]
    which = np.repeat(np.arange(len(rows)), count)
    return which, p.indices[np.arange(len(which)) + (start - np.cumsum(count) + count)[which]]


def _intp(p: sp.csr_array) -> sp.csr_array:
    """``p`` with intp index arrays: NumPy indexes with nothing else, so this converts once."""
    p.indices, p.indptr = p.indices.astype(np.intp), p.indptr.astype(np.intp)
    return p


def _segment_or(words: np.ndarray, which: np.ndarray, size: int) -> np.ndarray:
    """The bitwise or of the 1-D ``words`` grouped by sorted ``which``, for each group below ``size``."""
    out = np.zeros(size, dtype=np.uint64)
    if len(which):
        starts = np.flatnonzero(np.diff(which, prepend=-1))
        out[which[starts]] = np.bitwise_or.reduceat(words, starts)
    return out


def _lowest_free(mask: np.ndarray) -> np.ndarray:
    """The lowest clear bit of each column of a (W, k) uint64 mask (``64·W`` when all are set)."""
    full = mask == _FULL
    word = np.argmin(full, axis=0)
    x = mask[word, np.arange(mask.shape[1])]
    free = np.bitwise_count((~x & (x + _ONE)) - _ONE).astype(np.int64)
    return np.where(full.all(axis=0), 64 * len(mask), 64 * word + free)


class _RowMasks:
    """The colours taken in each row of a pattern: bit c % 64 of ``words[c // 64, row]``."""

    def __init__(self, m: int):
        self.words = np.zeros((1, m), dtype=np.uint64)

    def forbidden(self, which: np.ndarray, rows: np.ndarray, size: int) -> np.ndarray:
        """Smallest colour free in all ``rows[which == i]``, for each i below ``size``."""
        while True:
            colors = _lowest_free(np.stack([_segment_or(w[rows], which, size) for w in self.words]))
            if colors.max(initial=0) < 64 * len(self.words):
                return colors
            self.words = np.vstack([self.words, np.zeros_like(self.words[:1])])

    def take(self, rows: np.ndarray, colors: np.ndarray) -> None:
        """Mark ``colors[i]`` taken in ``rows[i]`` (the rows distinct)."""
        bits = _ONE << (colors % 64).astype(np.uint64)
        if len(self.words) == 1:
            self.words[0, rows] |= bits
        else:
            self.words.ravel()[colors // 64 * self.words.shape[1] + rows] |= bits


# ---------------------------------------------------------------- column colourings


def column_coloring(p: sp.csr_array, order: np.ndarray, lower: int, passes: int) -> np.ndarray:
    """A greedy column colouring of ``p`` (columns ``order[0]``, ``order[1]``, … first), improved
    by at most ``passes`` iterated-greedy passes unless it has ``lower`` colours already."""
    cols = _intp(sp.csr_array(p.T)[order])  # column order[i] -> its rows, as row i
    colors = _column_greedy(cols, _intp(cols.T.tocsr()))  # transposing keeps the columns sorted
    if colors.max(initial=-1) + 1 > lower:
        colors = _recolor_columns(cols, colors, lower, passes)
    out = np.empty_like(colors)
    out[order] = colors
    return out


def _column_greedy(cols: sp.csr_array, rows: sp.csr_array) -> np.ndarray:
    """The greedy distance-2 colouring of the columns, in the order of their indices.

    Jones–Plassmann rounds on the bipartite graph: ``rows`` lists every row's
    columns in order, so a column that heads all its rows has no uncoloured
    earlier conflict, and it takes the smallest colour its rows leave free. A
    row has one head, so the columns of a round share no row.
    """
    n = cols.shape[0]
    degree = np.diff(cols.indptr)
    head, end = rows.indptr[:-1].copy(), rows.indptr[1:]
    heads = np.bincount(rows.indices[head[head < end]], minlength=n)
    masks, colors = _RowMasks(rows.shape[0]), np.full(n, -1)
    new = np.flatnonzero(heads == degree)
    last = np.empty(n, dtype=np.intp)
    while len(new):
        which, r = gather(cols, new)
        colors[new] = masks.forbidden(which, r, len(new))
        masks.take(r, colors[new][which])
        at = head[r] + 1
        head[r] = at
        more = at < end[r]
        w = rows.indices[at[more]]
        np.add.at(heads, w, 1)
        w = w[heads[w] == degree[w]]
        last[w] = np.arange(len(w))  # keeps one of each w
        new = w[last[w] == np.arange(len(w))]
    return colors


def _recolor_columns(cols: sp.csr_array, colors: np.ndarray, lower: int, passes: int) -> np.ndarray:
    """Culberson's iterated greedy: recolour class by class, never more colours.

    A class shares no row, so all of it is recoloured at once. Passes
    alternate reverse class order and largest class first; they stop when the
    count reaches ``lower`` or, after two, when a pass does not reduce it.
    """
    k = colors.max(initial=-1) + 1
    for step in range(passes):
        sizes = np.bincount(colors, minlength=k)
        classes = np.arange(k)[::-1] if step % 2 == 0 else np.argsort(-sizes, kind="stable")
        position = np.empty(k, dtype=np.int16 if k < 2**15 else np.int64)
        position[classes] = np.arange(k)
        members = np.argsort(position[colors], kind="stable")  # a radix sort for int16
        bounds = np.concatenate([[0], np.cumsum(sizes[classes])])
        masks, new = _RowMasks(cols.shape[1]), np.empty_like(colors)
        for start, stop in zip(bounds[:-1], bounds[1:]):
            chunk = members[start:stop]
            which, r = gather(cols, chunk)
            new[chunk] = masks.forbidden(which, r, len(chunk))
            masks.take(r, new[chunk][which])
        better, colors = new.max(initial=-1) + 1, new
        if better <= lower or (better == k and step):
            break
        k = better
    return colors
