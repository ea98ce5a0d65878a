"""NumPy's array constructors while a transform runs: ``np.asarray(x)`` of a Dual is a Dual.

Library code starts with ``x = np.asarray(x, dtype=float)`` or ``np.array(x).ravel()``,
and builds matrices as ``np.array([[x[0], 0.1], [0.1, x[1]]])``. NumPy offers no
protocol for these calls: it asks the Dual for a plain array (``__array__``), which
would drop the derivative, so dualad refuses. While a transform runs, ``numpy.array``,
``asarray``, ``asanyarray``, ``ascontiguousarray`` and ``asfortranarray`` are
wrappers instead: an argument that holds a Dual (a Dual, a nested list or tuple of
Duals and numbers, an object array of Duals) gives a Dual, made with the rule table
(``astype``, ``copy``, ``np.stack``), so every mode and the replay see ordinary
operations. Anything else, and any call from NumPy's or SciPy's own code (whose
functions dualad differentiates by its rules, and names where it has none), goes to
NumPy's own function unchanged. After the last transform has returned, the first
constructor call puts NumPy's functions back: code that runs outside a transform
calls NumPy directly, at no cost. Code that holds NumPy's functions under other
names (``from numpy import asarray``) and C extensions still see plain arrays, or
dualad's error for a Dual.

>>> import numpy as np, dualad
>>> dualad.grad(lambda x: np.sum(np.asarray(x, dtype=float).ravel() ** 2))(np.ones(3))
array([2., 2., 2.])
>>> _ = np.asarray([1.0])  # outside a transform: the first call puts back NumPy's own
>>> np.asarray is NUMPY["asarray"]
True
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .primitive import Boxed

__all__ = ["enter", "exit", "scope", "scoped", "NUMPY"]

#: NumPy's own constructors, by name.
NUMPY: dict[str, Callable] = {name: getattr(np, name) for name in (
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")}

_ndarray = np.ndarray
_COPY_MODES = {mode: {"ALWAYS": True, "NEVER": False}.get(mode.name)
               for mode in getattr(np, "_CopyMode", ())}


def _holds_box(a: Any) -> bool:
    """Whether ``a`` is a Dual, or a list, tuple or object array holding one."""
    if isinstance(a, Boxed):
        return True
    kind = type(a)
    if kind is list or kind is tuple:
        return any(_holds_box(item) for item in a)
    if kind is _ndarray and a.dtype.hasobject:
        return any(isinstance(item, Boxed) for item in a.ravel().tolist())
    return False


def _library_call() -> bool:
    """Whether the constructor was called by NumPy's or SciPy's own code, which keeps
    NumPy's constructors: dualad differentiates their functions by its rules, and
    names the ones it has none for (``scipy.linalg.logm converts its argument``)."""
    caller = sys._getframe(2).f_globals.get("__name__", "")
    return caller.partition(".")[0] in ("numpy", "scipy")


def _build(a: Any) -> Any:
    """A Dual (or a plain array, where no element is one) of a nested list or tuple,
    as ``np.array`` builds it: each level a stack of the level below."""
    if isinstance(a, Boxed):
        return a
    kind = type(a)
    if kind is _ndarray and a.dtype.hasobject:
        a = a.tolist() if a.ndim else a[()]
        kind = type(a)
    if kind is list or kind is tuple:
        items = [_build(item) for item in a]
        if not any(isinstance(item, Boxed) for item in items):
            return NUMPY["asarray"](items)
        return np.stack(items)
    return NUMPY["asarray"](a)


def _as_dual(a: Any, dtype: Any, copy: Any, ndmin: int, name: str) -> Any:
    """``a`` (holding a Dual) as one Dual, as NumPy's ``name`` would make it."""
    wanted = None if dtype is None else np.dtype(dtype)
    if wanted is not None and wanted.kind not in "fc":
        # An object array is NumPy's (np.array([y[1], -y[0]], dtype=object)); an integer
        # or boolean array of a Dual is piecewise constant: NumPy's own call, through
        # the Dual's __array__ (its primal values, as int(x) gives).
        return NUMPY[name](a, dtype=wanted)
    copy = _COPY_MODES.get(copy, copy)  # np._CopyMode, which some libraries pass
    made = not isinstance(a, Boxed)
    x = _build(a) if made else a
    if wanted is not None:
        if wanted != x.dtype:
            if copy is False:
                raise ValueError(f"np.{name}(..., copy=False) cannot give dtype {wanted} "
                                 f"without a copy of a {x.dtype} Dual")
            x, made = x.astype(wanted), True
    if copy and not made:
        x = x.copy()
    if ndmin > x.ndim:
        x = x.reshape((1,) * (ndmin - x.ndim) + x.shape)
    return x


def _array(object: Any, dtype: Any = None, *, copy: bool | None = True, order: str = "K",
           subok: bool = False, ndmin: int = 0, **kwargs: Any) -> Any:
    if not _RUNNING:
        _restore()
    if type(object) is _ndarray and not object.dtype.hasobject or kwargs \
            or not _holds_box(object) or _library_call():
        return NUMPY["array"](object, dtype, copy=copy, order=order, subok=subok,
                              ndmin=ndmin, **kwargs)
    return _as_dual(object, dtype, copy, ndmin, "array")


def _converter(name: str) -> Callable:
    numpy = NUMPY[name]

    @functools.wraps(numpy)
    def convert(a: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not _RUNNING:
            _restore()
        # (order, positional or not, changes no value of a Dual: its layout is its own)
        if type(a) is _ndarray and not a.dtype.hasobject or len(args) > 1 \
                or not set(kwargs) <= {"order", "copy"} or not _holds_box(a) \
                or _library_call():
            return numpy(a, dtype, *args, **kwargs)
        return _as_dual(a, dtype, kwargs.get("copy"), 0, name)

    return convert


_array = functools.wraps(NUMPY["array"])(_array)
WRAPPERS: dict[str, Callable] = {"array": _array, **{
    name: _converter(name) for name in NUMPY if name != "array"}}

#: One item per transform running, in any thread (list.append and pop are atomic).
_RUNNING: list = []
_LOCK = threading.Lock()
_NUMPY_NAMESPACE = vars(np)


def enter() -> None:
    """NumPy's constructors take Duals until the matching :func:`exit`."""
    _RUNNING.append(None)
    if _NUMPY_NAMESPACE["asarray"] is not WRAPPERS["asarray"]:
        with _LOCK:  # (checked again under the lock, where _restore decides too)
            _NUMPY_NAMESPACE.update(WRAPPERS)


def exit() -> None:  # noqa: A001
    """The end of an :func:`enter`. NumPy's own functions come back at the first
    constructor call made while no transform runs (none in a loop of transforms)."""
    _RUNNING.pop()


def _restore() -> None:
    """NumPy's own constructors, if no transform runs (called by the wrappers; also by
    a wrapper a module bound while a transform ran, ``from numpy import asarray``,
    which then costs one Python call)."""
    if _NUMPY_NAMESPACE["asarray"] is WRAPPERS["asarray"]:
        with _LOCK:
            if not _RUNNING:
                _NUMPY_NAMESPACE.update(NUMPY)


class scope:
    """``with scope():`` — NumPy's constructors take Duals while the block runs (in
    every thread: they act only on arguments holding Duals, which only a transform
    makes)."""

    __slots__ = ()

    def __enter__(self) -> None:
        enter()

    def __exit__(self, *exc: Any) -> None:
        exit()


def scoped(transform: Callable) -> Callable:
    """``transform`` run inside :class:`scope`."""

    @functools.wraps(transform)
    def run(*args: Any, **kwargs: Any) -> Any:
        enter()
        try:
            return transform(*args, **kwargs)
        finally:
            exit()

    return run
