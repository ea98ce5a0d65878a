"""Rows of dependency sets: boolean CSR arrays, one row per element, one column per input.

Every operation is a handful of vectorized NumPy or ``scipy.sparse`` calls,
whatever the number of rows: a gather (``rows[numbers]``, with -1 for an
element that depends on nothing), a union of gathers, and a sparse product
``R @ rows`` for reductions, where ``R`` says which rows meet in each output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

__all__ = ["identity", "empty", "compact", "vstack", "gather", "union_gather", "union_all",
           "union", "broadcast_row", "reduce", "combine"]


def _csr(indices: Any, indptr: Any, n: int) -> sparse.csr_array:
    index = _index_dtype(max(n, len(indices)))
    return sparse.csr_array((np.ones(len(indices), bool), indices.astype(index, copy=False),
                             indptr.astype(index, copy=False)), shape=(len(indptr) - 1, n))


def _index_dtype(largest: int) -> type:
    """int32 indices when they fit (half the memory of int64), as SciPy's own."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64


def identity(n: int) -> sparse.csr_array:
    """Element i depends on input i."""
    index = _index_dtype(n)
    return _csr(np.arange(n, dtype=index), np.arange(n + 1, dtype=index), n)


def empty(rows: int, n: int) -> sparse.csr_array:
    return _csr(np.zeros(0, np.int32), np.zeros(rows + 1, np.int32), n)


def compact(rows: sparse.csr_array) -> sparse.csr_array:
    """``rows`` in arrays of their own, exactly as long as its entries (SciPy's sums
    allocate for the worst case and keep the rest)."""
    nnz = int(rows.indptr[-1])
    return _csr(rows.indices[:nnz].copy(), rows.indptr.copy(), rows.shape[1])


def vstack(blocks: list, n: int) -> sparse.csr_array:
    if not blocks:
        return empty(0, n)
    if len(blocks) == 1:
        return blocks[0]
    return sparse.vstack(blocks, format="csr")


def gather(rows: sparse.csr_array, numbers: Any) -> sparse.csr_array:
    """``rows[numbers]`` (flattened), with an empty row where the number is -1."""
    numbers = np.asarray(numbers, dtype=np.int64).ravel()
    indptr, indices, n = rows.indptr, rows.indices, rows.shape[1]
    if len(numbers) and numbers[0] >= 0 and _is_range(numbers - numbers[0]):
        first, last = indptr[numbers[0]], indptr[numbers[-1] + 1]  # a slice: views
        return _csr(indices[first:last], indptr[numbers[0]:numbers[-1] + 2] - first, n)
    if len(numbers) and numbers.min() < 0:  # -1 reads an appended empty row
        numbers = np.where(numbers < 0, rows.shape[0], numbers)
        indptr = np.append(indptr, indptr[-1])
    starts = indptr[numbers]
    counts = indptr[numbers + 1] - starts
    index = indptr.dtype  # the positions fit in it: they are the rows' own
    if len(numbers) and counts.min() == counts.max():  # as many inputs each: a 2-D take
        width = int(counts[0])
        at = (starts[:, None] + np.arange(width, dtype=index)).ravel()
        return _csr(indices[at], np.arange(len(numbers) + 1, dtype=np.int64) * width, n)
    new_indptr = np.zeros(len(numbers) + 1, np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    at = np.repeat((starts - new_indptr[:-1]).astype(index), counts)
    at += np.arange(int(new_indptr[-1]), dtype=index)
    return _csr(indices[at], new_indptr, n)


def union_gather(rows: sparse.csr_array, picks: list) -> sparse.csr_array:
    """Element k depends on the union of ``rows[pick[k]]`` over the picks."""
    return union([gather(rows, pick) for pick in picks])


def union(parts: list) -> sparse.csr_array:
    """Element k depends on the union of row k of every part."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _is_range(pick: Any) -> bool:
    """Whether ``pick`` is 0, 1, 2, ..."""
    return len(pick) == 0 or (pick[0] == 0 and pick[-1] == len(pick) - 1
                              and bool(np.all(pick[1:] - pick[:-1] == 1)))


def union_all(rows: sparse.csr_array) -> sparse.csr_array:
    """One row: every input any of ``rows`` depends on."""
    columns = np.unique(rows.indices)
    return _csr(columns, np.array([0, len(columns)]), rows.shape[1])


def broadcast_row(row: sparse.csr_array, count: int) -> sparse.csr_array:
    return gather(row, np.zeros(count, np.int64))


def reduce(rows: sparse.csr_array, groups: Any, count: int) -> sparse.csr_array:
    """Output g depends on the union of the rows i with ``groups[i] == g``."""
    return combine(rows, groups, np.arange(rows.shape[0]), count)


def combine(rows: sparse.csr_array, outs: Any, ins: Any, count: int) -> sparse.csr_array:
    """Output ``outs[k]`` depends on ``rows[ins[k]]``, united over k."""
    outs, ins = np.asarray(outs).ravel(), np.asarray(ins).ravel()
    meets = sparse.csr_array((np.ones(len(outs), bool), (outs, ins)),
                             shape=(count, rows.shape[0]))
    result = (meets @ rows).tocsr()
    result.sort_indices()
    return result
