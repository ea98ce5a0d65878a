"""Sparse Jacobians and Hessians: detect the pattern, colour it, compute only the nonzeros.

``sparse_jacobian(f)`` prepares, once per input shape and dtype, a
:class:`SparseJacobian`: the pattern (:func:`~dualad.jacobian_sparsity`), a
colouring of its columns (forward mode) or rows (reverse mode), and the
compressed seeds. Each call then evaluates ``f`` once on Duals carrying one
seed per colour — columns of one colour never share a row, so their sum is a
seed that reads all of them at once — and scatters the compressed block into a
``scipy.sparse`` CSR array with one vectorized gather. ``sparse_hessian`` does
the same with a star colouring of the symmetric Hessian pattern and
forward-over-reverse passes (Gebremedhin, Manne, Pothen, SIAM Review 2005).
A detected pattern is checked at every call that the replay does not prove
unchanged (see :meth:`SparseJacobian.__call__`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse

from .. import parallel
from ..constructors import scope
from ..dual import as_float_array
from ..primitive import Boxed
from ..forward import jvp
from ..inputs import check_chunk_size
from ..progress import check_progress, logged, tracked
from ..replay import REPLAY_BY_DEFAULT
from ..reverse import grad, jacrev
from . import coloring
from .checked import PatternChanged, _ByShape, _Checked, _detector, _with_arg
from .detection import hessian_sparsity, jacobian_sparsity

__all__ = ["PatternChanged", "SparseHessian", "SparseJacobian", "sparse_hessian",
           "sparse_jacobian"]

MODES = ("auto", "fwd", "rev")
def _as_pattern(pattern: Any, shape: tuple[int, int], what: str) -> sparse.csr_array:
    """A user's pattern (sparse or dense, any dtype) as a canonical boolean CSR array."""
    p = sparse.csr_array(pattern if sparse.issparse(pattern) else np.asarray(pattern))
    if p.shape != shape:
        raise ValueError(f"{what}: the sparsity pattern has shape {p.shape}, but the "
                         f"function needs {shape}")
    p = sparse.csr_array((p.data != 0, p.indices, p.indptr), shape=p.shape)
    p.eliminate_zeros()
    p.sum_duplicates()
    return p.astype(bool)


#: Without ``chunk_size``, a pass carries as many colours as fit in this many bytes of
#: tangent (at least one): at large n the passes then take a few times the Jacobian's
#: memory, not the colours' count times the function's.
PASS_BYTES = 8 * 2**20


def _per_pass(count: int, size: int, itemsize: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return max(1, min(count, chunk_size))
    return max(1, min(count, PASS_BYTES // max(1, size * itemsize)))


class _Prepared(_Checked):
    """What a sparse Jacobian and a sparse Hessian share: the decompression, computed
    once, and the evaluation of the nonzeros behind a replay cache.

    The decompression of :mod:`~dualad.sparse.coloring` runs once on a block of
    positions (0, 1, 2, ...) instead of values: each evaluation is then one gather.
    A problem too large to replay keeps no such index and decompresses its values.
    """

    colors: np.ndarray
    passes: int
    transform: str  # the name progress bars and log lines give

    def _prepare(self, fun: Callable, argnum: int, x: np.ndarray, values: Callable,
                 structure: sparse.csr_array, length: int, by_rows: bool,
                 replay: bool | None, chunk_size: int | None,
                 detect: Callable | None, dispatch: parallel.Dispatch | None = None,
                 progress: bool | None = None) -> None:
        """The compressed block is ``(passes, length)``, the passes' tangents one after
        the other; ``values`` (of :mod:`~dualad.sparse.coloring`) takes it as it is
        (rows coloured) or transposed, and gives the nonzeros of ``structure``.
        ``detect(args, kwargs)`` finds the pattern again (None: a pattern given, or
        local, which the user vouches for). With ``dispatch`` (an executor) the passes
        are its units of work, and are not replayed; ``progress`` as for
        :func:`~dualad.jacfwd`, over the passes."""
        check_chunk_size(chunk_size)
        self.progress = progress
        self.passes = int(self.colors.max(initial=-1)) + 1
        self.per_pass = _per_pass(self.passes, max(self.pattern.shape), x.dtype.itemsize,
                                  chunk_size)
        proving = detect is not None and REPLAY_BY_DEFAULT and replay is not False
        #: The executor the passes go to (None: here, one after the other).
        self.dispatch = dispatch
        if dispatch is not None:
            units = -(-self.passes // self.per_pass)
            if parallel.too_few(dispatch, units, f"all {self.passes} colours fit in one "
                                "pass; give a smaller chunk_size to split them",
                                (x.shape, x.dtype)):
                self.dispatch = None
            else:
                replay = False  # (a recording would run the passes here)
        if replay is None:  # a recording takes twice a pass's memory: only one pass
            replay = REPLAY_BY_DEFAULT and self.passes <= self.per_pass
        #: ``(indices, indptr)`` of the result's CSR structure.
        self.structure = (structure.indices, structure.indptr)
        self._length = length
        self._values = lambda block: values(structure, self.colors,
                                            block if by_rows else block.T)
        # A replayed problem gathers with a kept index; a large one decompresses anew.
        self._positions = self.positions() if replay else None
        self._checking(fun, argnum, x, self._interpret, replay, detect, proving)

    def positions(self) -> np.ndarray:
        """Where each nonzero (in the order of :attr:`structure`) is in the flattened
        ``(passes, length)`` compressed block: the decompression run on 0, 1, 2, ..."""
        size = self.passes * self._length
        positions = np.arange(size, dtype=np.int32 if size < 2**31 - 1 else np.int64)
        return self._values(positions.reshape(self.passes, self._length))

    def __call__(self, *args: Any, **kwargs: Any) -> sparse.csr_array:
        """The matrix at ``args`` (of the shapes it was prepared for), a CSR array;
        keyword arguments go to the function, undifferentiated.

        A detected pattern is only as good as the function's structure. A call
        whose passes replayed their recording to the end made the recorded
        operations with the same constants: the pattern holds. Any other call
        replays the function alone (about one evaluation of it), and if that does
        not reach the end either, finds the pattern again, and raises
        :class:`PatternChanged` if it differs. Where the global pattern cannot be
        told at this point (:class:`~dualad.sparse.ValueDependentError`), the
        pattern at this point must lie within the prepared one."""
        values = self._checked(args, kwargs)
        if isinstance(values, Boxed):
            raise TypeError(
                f"{type(self).__name__}: the matrix depends on the values of an enclosing "
                "transform, and a scipy.sparse array holds plain numbers, not their "
                "derivative. Inside another transform, take this derivative with "
                "dualad.jacfwd, jacrev or hessian (dense), or take the sparse one outside")
        return sparse.csr_array((values, *self.structure), shape=self.pattern.shape)

    def _interpret(self, fun: Callable, *args: Any) -> np.ndarray:
        x = as_float_array(args[self.argnum])
        block = self._compressed(fun, x, args)
        if self._positions is None:  # a large problem keeps no index: it decompresses
            return self._values(block)
        return np.reshape(block, (-1,))[self._positions]

    def _forward(self, fun: Callable, x: np.ndarray, length: int) -> np.ndarray:
        """``(passes, length)``: ``fun``'s tangents along one seed per colour."""
        chunks = [(start, min(start + self.per_pass, self.passes))
                  for start in range(0, self.passes, self.per_pass)]
        if self.dispatch is None or self.dispatch.serial((x.shape, x.dtype)):
            blocks = [colour_unit(fun, (x, self.colors, length), chunk)
                      for chunk in tracked(chunks, self.transform, self.progress)]
        else:
            blocks = self.dispatch.map(colour_unit, fun, (x, self.colors, length), chunks,
                                       (x.shape, x.dtype))
        if len(blocks) == 1:
            return blocks[0]
        return np.concatenate(blocks) if blocks else np.zeros((0, length), x.dtype)


class SparseJacobian(_Prepared):
    """A Jacobian pattern prepared for one input shape and dtype: call it to evaluate.

    Attributes
    ----------
    pattern:
        Boolean ``scipy.sparse.csr_array`` of shape ``(m, n)``.
    mode:
        ``"fwd"`` (columns coloured, one forward seed per colour) or ``"rev"``
        (rows coloured, one reverse seed per colour).
    colors:
        The colour of each column (``"fwd"``) or row (``"rev"``).
    passes:
        The number of colours: directional derivatives per Jacobian, against
        ``n`` (or ``m``) for a dense one.
    """

    transform = "sparse_jacobian"

    def __init__(self, fun: Callable, args: tuple, argnum: int = 0, *,
                 sparsity: Any = "detect", mode: str = "auto", local: bool = False,
                 chunk_size: int | None = None, replay: bool | None = None,
                 kwargs: dict | None = None, detected: sparse.csr_array | None = None,
                 dispatch: parallel.Dispatch | None = None,
                 progress: bool | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        x = as_float_array(args[argnum])
        detect = None
        if isinstance(sparsity, str):
            if sparsity != "detect":
                raise ValueError(f"sparsity must be 'detect' or a pattern, got {sparsity!r}")
            find = _detector(jacobian_sparsity, fun, argnum, local)
            detect = None if local else find  # a local pattern is the user's to vouch for
            self.pattern = detected if detected is not None else find(args, kwargs or {})
        else:
            m = int(np.size(fun(*_with_arg(args, argnum, x), **(kwargs or {}))))
            self.pattern = _as_pattern(sparsity, (m, x.size), "sparse_jacobian")
        with logged(f"sparse_jacobian: colouring a {self.pattern.shape} pattern with "
                    f"{self.pattern.nnz} nonzeros"):
            mode, self.colors = _jacobian_coloring(self.pattern, mode)
        self.mode = mode
        m, n = self.pattern.shape
        if mode == "fwd":
            self._prepare(fun, argnum, x, coloring.column_values, self.pattern, m, False,
                          replay, chunk_size, detect, dispatch, progress)
        else:
            self._prepare(fun, argnum, x, coloring.row_values, self.pattern, n, True,
                          replay, chunk_size, detect, dispatch, progress)

    def __repr__(self) -> str:
        m, n = self.pattern.shape
        return (f"SparseJacobian({m}x{n}, nnz={self.pattern.nnz}, mode={self.mode!r}, "
                f"passes={self.passes})")

    def _compressed(self, fun: Callable, x: np.ndarray, args: tuple) -> np.ndarray:
        argnum = self.argnum
        restricted = lambda x: fun(*_with_arg(args, argnum, x))  # noqa: E731
        m, n = self.pattern.shape
        if self.mode == "fwd":
            return self._forward(restricted, x, m)
        groups = [np.flatnonzero(self.colors == c) for c in range(self.passes)]

        def compressed_output(x):  # the outputs of each colour summed: one seed each
            flat = np.reshape(restricted(x), (-1,))
            return np.stack([np.sum(flat[rows]) for rows in groups]) if groups else flat[:0]

        return jacrev(compressed_output, chunk_size=self.per_pass, replay=False,
                      executor=self.dispatch, progress=self.progress)(x)


def _jacobian_coloring(pattern: sparse.csr_array, mode: str) -> tuple[str, np.ndarray]:
    """``(mode, colours)``: ``"fwd"`` and a colouring of the columns, or ``"rev"`` and
    one of the rows; with ``mode="auto"``, whichever has fewer colours."""
    if mode == "fwd":
        return mode, coloring.column_coloring(pattern)
    if mode == "rev":
        return mode, coloring.row_coloring(pattern)
    columns = coloring.column_coloring(pattern)
    fewest_rows = np.bincount(pattern.indices, minlength=1).max()  # a lower bound
    rows = coloring.row_coloring(pattern) if columns.max(initial=-1) + 1 > fewest_rows \
        else columns
    return ("rev", rows) if rows.max(initial=-1) < columns.max(initial=-1) else ("fwd", columns)


class SparseHessian(_Prepared):
    """A Hessian pattern prepared for one input shape and dtype: call it to evaluate.

    Attributes
    ----------
    pattern:
        Symmetric boolean ``scipy.sparse.csr_array`` of shape ``(n, n)``.
    colors:
        A star colouring of the pattern: one forward-over-reverse pass per colour.
    passes:
        The number of colours.
    """

    transform = "sparse_hessian"

    def __init__(self, fun: Callable, args: tuple, argnum: int = 0, *,
                 sparsity: Any = "detect", local: bool = False, chunk_size: int | None = None,
                 replay: bool | None = None, kwargs: dict | None = None,
                 detected: sparse.csr_array | None = None,
                 dispatch: parallel.Dispatch | None = None,
                 progress: bool | None = None) -> None:
        x = as_float_array(args[argnum])
        detect = None
        if isinstance(sparsity, str):
            if sparsity != "detect":
                raise ValueError(f"sparsity must be 'detect' or a pattern, got {sparsity!r}")
            find = _detector(hessian_sparsity, fun, argnum, local, symmetric=True)
            detect = None if local else find
            self.pattern = detected if detected is not None else find(args, kwargs or {})
        else:
            pattern = _as_pattern(sparsity, (x.size, x.size), "sparse_hessian")
            self.pattern = (pattern + pattern.T).tocsr()  # a Hessian is symmetric
        with logged(f"sparse_hessian: star colouring a {self.pattern.shape} pattern with "
                    f"{self.pattern.nnz} nonzeros"):
            self.colors = coloring.star_coloring(self.pattern)
        self._prepare(fun, argnum, x, coloring.star_values, coloring.symmetric(self.pattern),
                      x.size, False, replay, chunk_size, detect, dispatch, progress)

    def __repr__(self) -> str:
        n = self.pattern.shape[0]
        return f"SparseHessian({n}x{n}, nnz={self.pattern.nnz}, passes={self.passes})"

    def _compressed(self, fun: Callable, x: np.ndarray, args: tuple) -> np.ndarray:
        argnum = self.argnum
        gradient = grad(lambda x: fun(*_with_arg(args, argnum, x)), replay=False)
        return self._forward(gradient, x, x.size)


def colour_unit(fun: Callable, payload: tuple, chunk: tuple[int, int]) -> np.ndarray:
    """The colours ``chunk`` (start, stop) in one forward pass, ``(stop - start, length)``:
    ``fun``'s tangents along one seed per colour (also a unit of work of
    :mod:`dualad.parallel`; ``payload`` holds ``x``, the colours and ``length``)."""
    x, colors, length = payload
    chunk = np.arange(*chunk)
    seeds = (colors == chunk[:, None]).astype(x.dtype)
    with scope():
        _, t = jvp(fun, (x,), (seeds.reshape((len(chunk),) + x.shape),), batched=True,
                   replay=False)
    return np.reshape(t, (len(chunk), length))


def sparse_jacobian(fun: Callable, argnums: int = 0, *, sparsity: Any = "detect",
                    mode: str = "auto", local: bool = False, chunk_size: int | None = None,
                    replay: bool | None = None, executor: Any = None,
                    min_seconds: float | None = None, progress: bool | None = None
                    ) -> Callable:
    """The Jacobian of ``fun`` as a ``scipy.sparse`` CSR array, computing only its nonzeros.

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy, returning an array.
    argnums:
        The position of the array argument to differentiate with respect to
        (``argnums=1`` for an ODE right-hand side ``f(t, y)``).
    sparsity:
        ``"detect"`` finds the global pattern with :func:`jacobian_sparsity` at
        the first call for each input shape and dtype, and again at every call
        that does not replay its recording to the end (state ``fun`` reads may
        change its structure: a changed pattern is prepared anew; the checks run
        ``fun`` again, so a function that draws random numbers or counts its calls
        sees more calls than calls of the transform, fewer once they replay); or give
        the pattern (a ``scipy.sparse`` or dense array of shape ``(m, n)``, nonzeros
        marked), which is not checked, and ``fun`` runs once per pass.
    mode:
        ``"fwd"`` colours the columns (one forward pass per colour), ``"rev"``
        the rows (one reverse pass per colour); ``"auto"`` takes the one with
        fewer colours.
    local:
        Detect the pattern at the first point only (see :func:`jacobian_sparsity`).
    chunk_size:
        At most this many colours per pass. ``None`` puts as many in one pass as
        fit in :data:`PASS_BYTES` of tangent: all of them for small inputs, and at
        n = 10⁶ a few, so that memory stays within a few times the Jacobian's.
    replay:
        Replay the NumPy calls of an earlier evaluation with the same shapes, as
        :func:`~dualad.jacfwd` does: small problems then cost little more than the
        function itself. ``None`` (the default) replays when every colour fits in
        one pass; a larger problem runs its passes through the interpreter, since
        the recording would take twice a pass's memory. ``True`` replays anyway,
        ``False`` never.
    executor:
        A :class:`concurrent.futures.Executor` or a ``dask.distributed.Client``: the
        passes (``chunk_size`` colours each) run on its workers, and the result is
        equal to the serial one bit for bit (see :func:`~dualad.jacfwd`); they are
        then not replayed. One pass, or passes quicker than ``min_seconds``, run
        serially with a ``RuntimeWarning``.
    min_seconds:
        As for :func:`~dualad.jacfwd`.
    progress:
        As for :func:`~dualad.jacfwd`: a bar over the passes. The phases of the
        preparation (the pattern, the colouring) are logged at ``logging.INFO`` on
        the ``"dualad"`` logger, with their seconds.

    Returns
    -------
    Callable
        ``jac(*args, **kwargs)`` returning a ``scipy.sparse.csr_array`` of shape
        ``(fun(...).size, x.size)`` (keyword arguments go to ``fun``,
        undifferentiated). ``jac.prepare(*args)`` gives the
        :class:`SparseJacobian` (pattern, colours, passes) it uses for those
        shapes.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> def residual(u):
    ...     padded = np.concatenate(([0.0], u, [0.0]))
    ...     return padded[:-2] - 2 * u + padded[2:] + np.exp(u)
    >>> jac = dualad.sparse_jacobian(residual)
    >>> jac(np.zeros(5)).toarray()
    array([[-1.,  1.,  0.,  0.,  0.],
           [ 1., -1.,  1.,  0.,  0.],
           [ 0.,  1., -1.,  1.,  0.],
           [ 0.,  0.,  1., -1.,  1.],
           [ 0.,  0.,  0.,  1., -1.]])
    >>> jac.prepare(np.zeros(5))
    SparseJacobian(5x5, nnz=13, mode='fwd', passes=3)

    The three colours in three passes, on two threads:

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     spread = dualad.sparse_jacobian(residual, chunk_size=1, executor=pool,
    ...                                     min_seconds=0)
    ...     J = spread(np.zeros(5))
    >>> bool(np.array_equal(J.toarray(), jac(np.zeros(5)).toarray()))
    True
    """
    check_chunk_size(chunk_size)
    check_progress(progress)
    dispatch = parallel.dispatch_of(executor, "sparse_jacobian", min_seconds, progress)
    prepared = _ByShape(lambda args, kwargs, detected: SparseJacobian(
        fun, args, argnums, sparsity=sparsity, mode=mode, local=local, chunk_size=chunk_size,
        replay=replay, kwargs=kwargs, detected=detected, dispatch=dispatch,
        progress=progress), argnums)

    def jac(*args: Any, **kwargs: Any) -> sparse.csr_array:
        return prepared.call(args, kwargs)

    jac.prepare = lambda *args, **kwargs: prepared.get(args, kwargs)  # type: ignore[attr-defined]
    jac.__doc__ = f"The sparse Jacobian of {getattr(fun, '__name__', 'fun')}."
    return jac


def sparse_hessian(fun: Callable, argnums: int = 0, *, sparsity: Any = "detect",
                   local: bool = False, chunk_size: int | None = None,
                   replay: bool | None = None, executor: Any = None,
                   min_seconds: float | None = None, progress: bool | None = None
                   ) -> Callable:
    """The Hessian of a scalar ``fun`` as a ``scipy.sparse`` CSR array.

    The pattern (:func:`hessian_sparsity`, or ``sparsity=`` given) is star
    coloured, so that one forward-over-reverse pass per colour gives every
    nonzero, using the symmetry. Arguments as for :func:`sparse_jacobian`;
    ``hess.prepare(*args)`` gives the :class:`SparseHessian`. With ``executor=`` the
    passes (``chunk_size`` colours each) run on the executor's workers; ``progress``
    as for :func:`sparse_jacobian`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> rosenbrock = lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> hess = dualad.sparse_hessian(rosenbrock)
    >>> hess(np.ones(4)).toarray()
    array([[ 802., -400.,    0.,    0.],
           [-400., 1002., -400.,    0.],
           [   0., -400., 1002., -400.],
           [   0.,    0., -400.,  200.]])
    >>> hess.prepare(np.ones(4)).passes
    3
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     H = dualad.sparse_hessian(rosenbrock, chunk_size=1, executor=pool,
    ...                               min_seconds=0)(np.ones(4))
    >>> bool(np.array_equal(H.toarray(), hess(np.ones(4)).toarray()))
    True
    """
    check_chunk_size(chunk_size)
    check_progress(progress)
    dispatch = parallel.dispatch_of(executor, "sparse_hessian", min_seconds, progress)
    prepared = _ByShape(lambda args, kwargs, detected: SparseHessian(
        fun, args, argnums, sparsity=sparsity, local=local, chunk_size=chunk_size,
        replay=replay, kwargs=kwargs, detected=detected, dispatch=dispatch,
        progress=progress), argnums)

    def hess(*args: Any, **kwargs: Any) -> sparse.csr_array:
        return prepared.call(args, kwargs)

    hess.prepare = lambda *args, **kwargs: prepared.get(args, kwargs)  # type: ignore[attr-defined]
    hess.__doc__ = f"The sparse Hessian of {getattr(fun, '__name__', 'fun')}."
    return hess
