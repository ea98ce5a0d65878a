"""Ensembles: one function at many points, the points spread over an executor's workers.

The units of work are batches of points, run by :class:`~dualad.parallel.Dispatch`
as a chunked transform's passes are: for a Monte-Carlo sensitivity study or a
multi-start optimisation.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .pytrees import tree_flatten, tree_structure
from .parallel import Dispatch, signature, too_few
from .progress import check_progress, tracked

__all__ = ["ensemble"]


def ensemble(fun: Callable, xs: Any, *, executor: Any = None, batch_size: int | None = None,
             min_seconds: float | None = None, progress: bool | None = None) -> Any:
    """``fun`` at every point of ``xs`` (along its leading axis), results stacked:
    ``jax.lax.map``'s meaning, the points spread over ``executor``'s workers.

    For a Monte-Carlo sensitivity study or a multi-start optimisation: ``fun`` is
    typically a transformed function, ``dualad.jacfwd(f)``, and ``xs`` the points.

    Parameters
    ----------
    fun:
        Called as ``fun(x)`` for each point ``x``: ``xs`` sliced at one index of the
        leading axis (``xs`` may be a pytree whose leaves share that axis). Its
        results (pytrees of arrays) must have the same structure and shapes.
    xs:
        The points: an array (or pytree of arrays) with a leading axis of N points.
    executor:
        A :class:`concurrent.futures.Executor` or a ``dask.distributed.Client``;
        ``None`` maps here, point by point.
    batch_size:
        Points per unit of work; ``None`` makes four units per worker.
    min_seconds:
        A first batch quicker than this runs the rest here (with a warning);
        ``None`` takes :data:`DISPATCH_SECONDS`, ``0`` always sends them out.
    progress:
        A progress bar over the points (batches with an executor): ``None`` shows one
        when they are expected to take more than a few seconds (see
        :mod:`dualad.progress`), ``True`` always, ``False`` never.

    Returns
    -------
    The results stacked along a new leading axis of length N (a pytree of them).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> jac = dualad.jacfwd(lambda x: np.sin(x) * x[0])
    >>> points = np.arange(12.0).reshape(6, 2)
    >>> with ThreadPoolExecutor(2) as pool:
    ...     Js = dualad.ensemble(jac, points, executor=pool, batch_size=2, min_seconds=0)
    >>> Js.shape
    (6, 2, 2)
    >>> bool(np.array_equal(Js[4], jac(points[4])))
    True
    """
    leaves, tree = tree_flatten(xs)
    leaves = [np.asarray(x) for x in leaves]
    if not leaves or any(np.ndim(x) == 0 for x in leaves):
        raise ValueError("ensemble needs points along a leading axis: an array (or a "
                         "pytree of arrays) of at least one dimension")
    count = leaves[0].shape[0]
    if count == 0:
        raise ValueError("ensemble needs at least one point")
    if any(x.shape[0] != count for x in leaves):
        raise ValueError(f"the leaves of xs must share their leading axis, got lengths "
                         f"{[x.shape[0] for x in leaves]}")
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    check_progress(progress)
    if executor is None:
        return _stacked(_points(fun, (tree, leaves), progress))
    dispatch = _ensemble_dispatch(fun, executor, min_seconds, progress)
    size = batch_size or max(1, math.ceil(count / (4 * dispatch.workers)))
    batches = [(tree, [x[start:start + size] for x in leaves])
               for start in range(0, count, size)]
    key = (signature(leaves, tree), size)
    if dispatch.serial(key) or too_few(dispatch, len(batches), "all points fit in one "
                                       "batch; give a smaller batch_size to split them", key):
        return _stacked(_points(fun, (tree, leaves), progress))
    parts = dispatch.map(_batch, fun, None, batches, key)
    return _stacked([r for part in parts for r in part])


#: fun -> {(id(executor), min_seconds): Dispatch}: an ensemble of the same function on
#: the same executor remembers its choice (and warns once), as a transform does.
_ENSEMBLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ensemble_dispatch(fun: Callable, executor: Any, min_seconds: float | None,
                       progress: bool | None) -> Dispatch:
    key = (id(executor), min_seconds, progress)
    try:
        dispatches = _ENSEMBLES.setdefault(fun, {})
    except TypeError:  # a function that cannot be weakly referenced: nothing remembered
        return Dispatch(executor, "ensemble", min_seconds, progress, "batch")
    found = dispatches.get(key)
    if found is None or found.executor is not executor:
        found = dispatches[key] = Dispatch(executor, "ensemble", min_seconds, progress, "batch")
    return found


def _points(fun: Callable, batch: tuple, progress: bool | None = False) -> list:
    tree, leaves = batch
    return [fun(tree.unflatten([x[i] for x in leaves]))
            for i in tracked(range(leaves[0].shape[0]), "ensemble", progress, "point")]


def _batch(fun: Callable, payload: None, batch: tuple) -> list:
    return _points(fun, batch)


def _stacked(results: list) -> Any:
    tree = tree_structure(results[0])
    columns = zip(*(tree.flatten_up_to(r) for r in results))
    return tree.unflatten([np.stack(column) for column in columns])
