"""Greedy colourings in vectorized rounds: the engine under :mod:`dualad.sparse.coloring`.

Column colourings run on the bipartite row/column graph itself, never on the
column conflict graph ``PᵀP`` (which costs a sparse product and holds far more
edges): with each row's columns sorted by priority, a column may be coloured
as soon as it heads every one of its rows, and the colours already taken in a
row are one bitmask per row. Each round then touches only the rows of the
columns it colours, so a whole colouring reads every nonzero a few times.

Star colourings run on the graph of ``P + Pᵀ`` with speculation and repair.
A vertex goes as soon as its higher-priority neighbours are coloured (a count
per vertex), and its forbidden colours come from one word per coloured
neighbour, kept up to date as vertices are coloured for good, not from a walk
over everything two hops away; only repairs look further, along edges whose
colour counts already show a conflict.
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
    which = np.repeat(np.arange(len(rows), dtype=np.int32 if len(rows) < 2**31 else np.intp), count)
    at = np.repeat(start - np.cumsum(count) + count, count)
    at += np.arange(len(which))
    return which, p.indices[at]


def _tally(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct non-negative ``keys`` and how often each occurs (``np.add.at``, faster)."""
    keys = np.sort(keys)
    start = np.flatnonzero(np.diff(keys, prepend=-1))
    return keys[start], np.diff(np.append(start, len(keys)))


def _or_at(target: np.ndarray, index: np.ndarray, words: np.ndarray) -> None:
    """``target[index[i]] |= words[i]`` for every i, repeats in ``index`` included."""
    while len(index):
        target[index] |= words  # of repeated indices, one write wins: redo the others
        missed = (target[index] & words) != words
        index, words = index[missed], words[missed]


def _max_at(target: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """``target[index[i]] = max(target[index[i]], values[i])`` for every i (``np.maximum.at``)."""
    while len(index):
        target[index] = np.maximum(target[index], values)  # of repeats, one write wins
        missed = target[index] < values
        index, values = index[missed], values[missed]


def _intp(p: sp.csr_array) -> sp.csr_array:
    """``p`` with intp index arrays: NumPy indexes with nothing else, so this converts once."""
    p.indices, p.indptr = p.indices.astype(np.intp), p.indptr.astype(np.intp)
    return p


def _segment_or(words: np.ndarray, which: np.ndarray, size: int) -> np.ndarray:
    """The bitwise or of the 1-D ``words`` grouped by sorted ``which``, for each group
    below ``size``."""
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
            self.words[0][rows] |= bits
        else:
            self.words.ravel()[colors // 64 * self.words.shape[1] + rows] |= bits


# ---------------------------------------------------------------- column colourings


def column_coloring(p: sp.csr_array, order: np.ndarray, lower: int, passes: int) -> np.ndarray:
    """A greedy column colouring of ``p`` (columns ``order[0]``, ``order[1]``, … first), improved
    by at most ``passes`` iterated-greedy passes unless it has ``lower`` colours already."""
    rank = np.empty(len(order), dtype=p.indices.dtype)
    rank[order] = np.arange(len(order))
    rows = sp.csr_array((np.ones(p.nnz, dtype=bool), rank[p.indices], p.indptr.copy()),
                        shape=p.shape)
    rows.has_sorted_indices = False
    rows.sort_indices()  # each row's columns in order
    cols = _intp(rows.T.tocsr())  # column order[i] -> its rows, as row i
    colors = _column_greedy(cols, _intp(rows))
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
    while len(new):
        which, r = gather(cols, new)
        colors[new] = masks.forbidden(which, r, len(new))
        masks.take(r, colors[new][which])
        at = head[r] + 1
        head[r] = at
        more = at < end[r]
        w, times = _tally(rows.indices[at[more]])
        heads[w] += times
        new = w[heads[w] == degree[w]]
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


# ---------------------------------------------------------------- star colourings


def star_coloring(graph: sp.csr_array, priority: np.ndarray) -> np.ndarray:
    """Jones–Plassmann star colouring of a symmetric graph without self-loops.

    A vertex goes in the round after its last higher-priority neighbour is
    coloured (``waiting`` counts those still uncoloured), so each round reads
    only the edges of its own vertices.
    """
    n = graph.shape[0]
    colors = np.full(n, -1)
    graph = _intp(sp.csr_array((graph.data, graph.indices, graph.indptr), shape=graph.shape))
    degree = np.diff(graph.indptr)
    down = priority[graph.indices] < np.repeat(priority, degree)
    below = np.zeros(len(down) + 1, dtype=np.intp)
    np.cumsum(down, out=below[1:])
    lower = sp.csr_array((np.ones(below[-1], dtype=bool), graph.indices[down], below[graph.indptr]),
                         shape=graph.shape)  # each vertex's lower-priority neighbours
    waiting = degree - np.diff(lower.indptr)  # priorities are distinct: the rest are higher
    count = _ColourCounts(n, degree.max(initial=0))
    masks = _StarMasks(n)
    new = np.flatnonzero(waiting == 0)
    while len(new):
        which, nbr = gather(graph, new)
        coloured = colors[nbr] >= 0
        near = which[coloured], nbr[coloured], colors[nbr[coloured]]  # (i, w, colour of w)
        chosen = None if masks is None else masks.first_allowed(count, new, *near)
        if chosen is None:
            chosen = _mex(*_star_forbidden(graph, colors, count, new, *near), len(new))
        colors[new] = chosen
        tally = count.add(colors, new, which, nbr)
        lost = _repair(graph, colors, count, priority, new, *near)
        done = new[colors[new] >= 0] if len(lost) else new
        if masks is not None and colors[done].max(initial=0) < 64:
            masks.commit(graph, colors, count, new, *near, *tally)
        else:
            masks = None  # 64 colours and more: the colour sets no longer fit a word
        t, times = _tally(gather(lower, done)[1])
        waiting[t] -= times
        new = np.sort(np.concatenate([lost, t[waiting[t] == 0]]))
    return colors


class _ColourCounts:
    """How many coloured neighbours of each colour every vertex has: a dense (n, k) table, in
    the narrowest integer type that holds the largest degree (it is read at random)."""

    def __init__(self, n: int, degree: int):
        dtype = next(t for t in (np.uint8, np.uint16, np.uint32) if degree <= np.iinfo(t).max)
        self.table = np.zeros((n, 8), dtype=dtype)

    def add(self, colors, vertices, which, nbr) -> tuple[np.ndarray, np.ndarray]:
        """Count the (new) colours of ``vertices`` at their neighbours ``nbr`` (of
        ``vertices[which]``); return the entries of the table changed and their old values."""
        self._fit(colors.max(initial=0) + 1)
        key, times = _tally(nbr * self.table.shape[1] + colors[vertices[which]])
        before = self.table.ravel()[key]
        self.table.ravel()[key] = before + times.astype(self.table.dtype)
        return key, before

    def remove(self, graph: sp.csr_array, colors: np.ndarray, vertices: np.ndarray) -> None:
        """Uncount the colours of ``vertices`` at their neighbours."""
        which, nbr = gather(graph, vertices)
        key, times = _tally(nbr * self.table.shape[1] + colors[vertices[which]])
        self.table.ravel()[key] -= times.astype(self.table.dtype)

    def __getitem__(self, index):
        vertex, color = index
        return self.table.ravel()[vertex * self.table.shape[1] + color]

    def present(self, vertices: np.ndarray) -> np.ndarray:
        """The colours below 64 among the neighbours of each vertex, as bitmasks."""
        rows = np.take(self.table, vertices, axis=0)  # faster than fancy indexing
        bits = np.packbits(rows[:, :64] > 0, axis=1, bitorder="little")
        words = np.zeros((len(vertices), 8), dtype=np.uint8)
        words[:, :bits.shape[1]] = bits
        return words.view("<u8").ravel().astype(np.uint64)

    def _fit(self, k: int) -> None:
        if k > self.table.shape[1]:
            wider = np.zeros((len(self.table), k + 7 & ~7), dtype=self.table.dtype)
            wider[:, :self.table.shape[1]] = self.table
            self.table = wider


class _StarMasks:
    """For each coloured vertex w, the colours (below 64) of its coloured neighbours x that
    have another neighbour coloured like w, as a bitmask ``far[w]``: x–w–… would be the middle
    of a two-coloured path. It only grows, as vertices are coloured for good (after repair),
    so a vertex's forbidden colours come from its neighbours' words, without walking two hops.
    """

    def __init__(self, n: int):
        self.far = np.zeros(n, dtype=np.uint64)

    def first_allowed(self, count, new, owner, w, w_colour) -> np.ndarray | None:
        """The colours :func:`_star_forbidden` leaves ``new`` (None when one needs 64 or more)."""
        words = (_ONE << w_colour.astype(np.uint64)) | self.far[w]
        twice = np.flatnonzero(count[new[owner], w_colour] >= 2)  # u–v–w–x, u coloured like w
        words[twice] |= count.present(w[twice])
        mask = _segment_or(words, owner, len(new))
        if (mask == _FULL).any():
            return None
        return np.bitwise_count((~mask & (mask + _ONE)) - _ONE).astype(np.int64)

    def commit(self, graph, colors, count, new, owner, x, c_x, key, before) -> None:
        """Take in the vertices of ``new`` still coloured after repair (and counted), with
        coloured neighbours ``x`` (of ``new[owner]``, all old) and their colours ``c_x``;
        ``key`` are the entries of the count table this round changed, ``before`` their
        values before it."""
        c_new = colors[new]
        done = c_new[owner] >= 0
        owner, x, c_x = owner[done], x[done], c_x[done]
        c_done = c_new[owner]
        k = count.table.shape[1]
        mine = count[x, c_done] >= 2
        self.far[new] |= _segment_or(_ONE << c_x[mine].astype(np.uint64), owner[mine], len(new))
        theirs = count[new[owner], c_x] >= 2
        _or_at(self.far, x[theirs], _ONE << c_done[theirs].astype(np.uint64))
        # Old pairs w–x that the new colours make count: x's count of w's colour reached 2.
        after = count.table.ravel()[key]
        key = key[(after >= 2) & (before < 2)]
        x, c = key // k, key % k
        x, c = x[colors[x] >= 0], c[colors[x] >= 0]
        hop, w = gather(graph, x)
        like = colors[w] == c[hop]
        _or_at(self.far, w[like], _ONE << colors[x[hop[like]]].astype(np.uint64))


def _star_forbidden(graph, colors, count, new, owner, w, w_colour):
    """Colours that vertex ``new[i]`` may not take in a star colouring, given its coloured
    neighbours ``w`` (of ``new[owner]``) and their colours.

    Besides its neighbours' colours: the colour of x on a coloured path v–w–x
    when v–w–x–y or u–v–w–x would then be two-coloured, that is, when x has
    another neighbour coloured like w, or v has two neighbours coloured like w.
    """
    twice = count[new[owner], w_colour] >= 2
    hop, x = gather(graph, w)
    x_colour = colors[x]  # v itself is uncoloured yet
    bad = count[x, w_colour[hop]] >= 2
    bad |= twice[hop]
    bad &= x_colour >= 0
    return [owner, owner[hop[bad]]], [w_colour, x_colour[bad]]


def _repair(graph, colors, count, priority, new, owner, a, c_a) -> np.ndarray:
    """Uncolour vertices of ``new`` until no path on four vertices is two-coloured; return them.

    Such a path u–v–w–x has a *middle edge* v–w where v has two neighbours
    coloured like w and w two coloured like v. Every vertex just coloured on it
    lies in S = N_c(w)(v) ∪ N_c(v)(w); each vertex chose its colour safely
    against the colours already there, so keeping only the highest-priority
    new vertex of every such S leaves no two-coloured path. A middle edge with
    a new y in S is y–a itself, or a–w for a neighbour a of y with another
    neighbour w coloured like y: only those are looked at (``a`` are the coloured
    neighbours of ``new[owner]``, ``c_a`` their colours). A path two-coloured only now has two new
    vertices (they chose their colours against the old ones), never adjacent.
    """
    y = new[owner]
    c_y = colors[y]
    twice = count[a, c_y] >= 2
    middle = twice & (count[y, c_a] >= 2)
    # An end y of u–v–w–x whose w is new too is the middle of w's own middle edge; one whose x
    # is new is the end x of x–w–v–y, with the two colours swapped: look from one end only.
    twice &= c_y < c_a
    a_2 = a[twice]
    hop, w = gather(graph, a_2)
    like = colors[w] == c_y[twice][hop]
    hop, w = hop[like], w[like]
    keep = count[w, c_a[twice][hop]] >= 2
    v, w = np.concatenate([y[middle], a_2[hop[keep]]]), np.concatenate([a[middle], w[keep]])
    if not len(v):
        return v
    is_new = np.zeros(len(colors), dtype=bool)
    is_new[new] = True
    # S of middle edge e: the neighbours of v coloured like w, and of w coloured like v; a new
    # end is one (the other end is old), and only an old end's neighbours can be new.
    ends = np.concatenate([v, w])
    edge = np.tile(np.arange(len(v)), 2)
    like = colors[np.concatenate([w, v])]
    old = ~is_new[ends]
    hop, y = gather(graph, ends[old])
    member = is_new[y] & (colors[y] == like[old][hop])
    edge = np.concatenate([edge[~old], edge[old][hop[member]]])
    y = np.concatenate([ends[~old], y[member]])
    top = np.full(len(v), -np.inf)
    _max_at(top, edge, priority[y])
    loser = np.unique(y[priority[y] < top[edge]])
    count.remove(graph, colors, loser)
    colors[loser] = -1
    return loser


def _mex(owners: list, values: list, size: int) -> np.ndarray:
    """For each owner ``0..size-1``, the smallest non-negative int not among its values.

    ``owners[i]`` (sorted) and ``values[i]`` are parallel arrays, for each i.
    """
    mask = np.zeros(size, dtype=np.uint64)
    for owner, value in zip(owners, values):
        low = value < 64
        starts = np.flatnonzero(np.diff(owner[low], prepend=-1))
        if len(starts):
            bits = np.left_shift(np.uint64(1), value[low].astype(np.uint64))
            mask[owner[low][starts]] |= np.bitwise_or.reduceat(bits, starts)
    free = ~mask & (mask + np.uint64(1))  # lowest clear bit (0 when all 64 are set)
    result = np.log2(np.maximum(free, 1)).astype(np.int64)
    full = np.flatnonzero(free == 0)
    if len(full):
        # Owners with colours 0..63 all taken: look again at colours from 64 on.
        pos = np.full(size, -1)
        pos[full] = np.arange(len(full))
        keep = [(value >= 64) & (pos[owner] >= 0) for owner, value in zip(owners, values)]
        result[full] = 64 + _mex([pos[o[k]] for o, k in zip(owners, keep)],
                                 [v[k] - 64 for v, k in zip(values, keep)], len(full))
    return result
