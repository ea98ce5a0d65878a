"""NumPy's array constructors while a transform runs: ``np.asarray(x)`` of a Dual is a
Dual, and ``np.zeros(n)`` can be filled with Duals.

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
calls NumPy directly, at no cost. Python modules that hold NumPy's functions under
their own names (``from numpy import zeros``) get the wrappers in their namespace
too, for as long. C extensions, and code holding the functions under another name,
still see plain arrays, or dualad's error for a Dual: the wrappers answer only
Python code that names them (``np.asarray(x)``, ``zeros(n)``, read from the call's
source once per call site). ``np.atleast_1d``/``2d``/``3d`` stack a list of Duals
first, and ``np.isscalar`` is wrapped as well: a Dual is a scalar where the value it
stands for is one (``x[0]`` of a 1-D array).

NumPy's makers of new arrays (``zeros``, ``empty``, ``ones``, ``full``, their
``*_like``, ``eye``, ``identity``) are wrapped too: in the thread running a
transform, a float array made by the code it runs is a
:class:`~dualad.fillable.Fillable`, which becomes the Dual written into it.

>>> import numpy as np, dualad
>>> dualad.grad(lambda x: np.sum(np.asarray(x, dtype=float).ravel() ** 2))(np.ones(3))
array([2., 2., 2.])
>>> _ = np.asarray([1.0])  # outside a transform: the first call puts back NumPy's own
>>> np.asarray is NUMPY["asarray"]
True
"""

from __future__ import annotations

import ast
import functools
import linecache
import sys
import threading
from threading import get_ident
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np

from .dual import Dual, primal_value
from .fillable import Fillable
from .operands import DualObjects, elements
from .primitive import (CONVERSIONS, MAKERS, NUMPY, PREDICATES, STACKERS,  # noqa: F401
                        TRANSFORMS_RUNNING, Boxed)

__all__ = ["enter", "exit", "scope", "scoped", "NUMPY"]

# NumPy's conversions, makers, stackers and predicates, and NUMPY (NumPy's own functions,
# by name): in dualad.primitive, where the replay reads NumPy's own functions too.

_ndarray = np.ndarray
_COPY_MODES = {mode: {"ALWAYS": True, "NEVER": False}.get(mode.name)
               for mode in getattr(np, "_CopyMode", ())}


def holds_dual(a: Any) -> bool:
    """Whether ``a`` is a Dual, or a list, tuple or object array holding one."""
    if isinstance(a, Boxed):
        return True
    kind = type(a)
    if kind is list or kind is tuple:
        return any(holds_dual(item) for item in a)
    if kind is Fillable:
        return a.filled
    if kind is DualObjects:
        a, kind = a.view(_ndarray), _ndarray
    if kind is _ndarray and a.dtype.hasobject:
        return any(isinstance(item, Boxed) for item in a.ravel().tolist())
    return False


def _called_by_name(name: str, kept: frozenset, sourceless: bool = False) -> bool:
    """Whether the wrapper of NumPy's ``name`` was called by Python code naming it
    (``np.zeros(n)``, ``numpy.asarray(x)``) outside the packages ``kept``. C code
    calling it (a Cython extension's ``np.empty``, which takes its result for an
    ndarray unchecked) and the packages kept get NumPy's own function. Code whose
    source is not at hand (``exec``, ``python -c``) gets ``sourceless``."""
    frame = sys._getframe(2)
    if _in_packages(frame, kept):
        return False
    callee = _callee(frame)
    return callee == name or (sourceless and callee is _NO_SOURCE)


#: NumPy's and SciPy's own code keeps NumPy's conversions: dualad differentiates their
#: functions by its rules, and names the ones it has none for (``scipy.linalg.logm
#: converts its argument``).
_LIBRARIES = frozenset({"numpy", "scipy"})
#: Packages whose new arrays stay NumPy's: dualad's own, and libraries built on NumPy
#: arrays (their code checks types, hands arrays to C), which dualad does not
#: differentiate through.
_KEEP_NUMPY_S = _LIBRARIES | {"dualad", "dualad_gpu", "jax", "jaxlib", "pandas", "xarray",
                              "dask", "numba", "matplotlib", "sklearn"}
#: (code, instruction) -> the name the call made there calls, read once from its source.
_CALLEES: dict = {}
_UNREAD, _NO_SOURCE = object(), object()


def _callee(frame: Any) -> Any:
    """The name of the function the call under way in ``frame`` calls (``zeros`` for
    ``np.zeros(3)``), None for another expression, :data:`_NO_SOURCE` without source."""
    key = (frame.f_code, frame.f_lasti)
    name = _CALLEES.get(key, _UNREAD)
    if name is _UNREAD:
        name = _read_callee(frame.f_code, frame.f_lasti, frame.f_globals)
        if len(_CALLEES) >= 4096:
            _CALLEES.clear()
        _CALLEES[key] = name
    return name


def _read_callee(code: Any, offset: int, globals_: dict) -> Any:
    try:
        line, end_line, col, end_col = list(code.co_positions())[offset // 2]
        lines = [text.encode() for text in linecache.getlines(code.co_filename, globals_)]
        if None in (line, end_line, col, end_col) or len(lines) < end_line:
            return _NO_SOURCE
        if line == end_line:
            source = lines[line - 1][col:end_col]
        else:
            source = b"".join([lines[line - 1][col:], *lines[line:end_line - 1],
                               lines[end_line - 1][:end_col]])
        call = ast.parse(source.decode(), mode="eval").body
    except (SyntaxError, ValueError, IndexError, UnicodeDecodeError):
        return None
    func = call.func if isinstance(call, ast.Call) else None
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else None


def build(a: Any) -> Any:
    """A Dual (or a plain array, where no element is one) of a nested list or tuple,
    as ``np.array`` builds it: each level a stack of the level below."""
    if isinstance(a, Boxed):
        return a
    kind = type(a)
    if kind is Fillable:
        return a.value()
    if kind is DualObjects:
        a, kind = a.view(_ndarray), _ndarray
    if kind is _ndarray and a.dtype.hasobject:
        a = a.tolist() if a.ndim else a[()]
        kind = type(a)
    if kind is list or kind is tuple:
        items = [build(item) for item in a]
        if not any(isinstance(item, Boxed) for item in items):
            return NUMPY["asarray"](items)
        return np.stack(items)
    return NUMPY["asarray"](a)


def _as_dual(a: Any, dtype: Any, copy: Any, ndmin: int, name: str) -> Any:
    """``a`` (holding a Dual) as one Dual, as NumPy's ``name`` would make it."""
    wanted = None if dtype is None else np.dtype(dtype)
    if wanted is not None and wanted.kind not in "fc":
        # An object array is NumPy's (np.array([y[1], -y[0]], dtype=object)), which
        # NumPy's functions take as the Dual it holds (DualObjects); an integer or
        # boolean array of a Dual is piecewise constant: NumPy's own call, through the
        # Dual's __array__ (its primal values, as int(x) gives).
        made = NUMPY[name](a, dtype=wanted)
        return made.view(DualObjects) if wanted == object else made
    copy = _COPY_MODES.get(copy, copy)  # np._CopyMode, which some libraries pass
    made = not isinstance(a, Boxed) and type(a) is not Fillable
    x = build(a) if made or type(a) is Fillable else a
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
            or not holds_dual(object) or not _called_by_name("array", _LIBRARIES, True):
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
                or not set(kwargs) <= {"order", "copy"} or not holds_dual(a) \
                or not _called_by_name(name, _LIBRARIES, True):
            return numpy(a, dtype, *args, **kwargs)
        return _as_dual(a, dtype, kwargs.get("copy"), 0, name)

    return convert


#: The fill value of the arrays each maker gives (None: not one number).
_FILLS = {"zeros": 0.0, "empty": 0.0, "ones": 1.0, "zeros_like": 0.0, "empty_like": 0.0,
          "ones_like": 1.0}


def _maker(name: str) -> Callable:
    # np.empty gives zeros: any content is its contract, and a replay's recording
    # sees the same constant at every call.
    numpy = NUMPY[name.replace("empty", "zeros")]
    like = name.endswith("_like")
    full = name.startswith("full")

    @functools.wraps(NUMPY[name])
    def make(*args: Any, **kwargs: Any) -> Any:
        if not _RUNNING:
            _restore()
        elif get_ident() in _RUNNING and "like" not in kwargs \
                and _called_by_name(name, _KEEP_NUMPY_S):
            if like and args:
                if isinstance(args[0], Boxed):
                    return numpy(*args, **kwargs)
                if type(args[0]) is Fillable:
                    args = (args[0].value(),) + args[1:]
                    if isinstance(args[0], Boxed):
                        return numpy(*args, **kwargs)
            fill = _FILLS.get(name)
            if full:
                fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
                if holds_dual(fill):
                    return _filled_with(numpy, args, kwargs, fill)
            made = numpy(*args, **kwargs)
            if type(made) is _ndarray and made.dtype.kind in "fc":
                return Fillable(made, fill if isinstance(fill, (int, float, np.number))
                                else None)
            if type(made) is _ndarray and made.dtype == object:  # (filled with Duals)
                return made.view(DualObjects)
            return made
        return NUMPY[name](*args, **kwargs)

    return make


def _filled_with(numpy: Callable, args: tuple, kwargs: dict, fill: Any) -> Any:
    """``np.full(shape, x[0])`` (or ``full_like``) of a Dual fill value: a Fillable,
    filled (NumPy's dtype: the fill value's where none is given)."""
    fill = build(fill)
    args = list(args)
    if len(args) > 1:  # (shape or a, fill_value, dtype, ...) for np.full and full_like
        args[1] = 0
    else:
        kwargs = {**kwargs, "fill_value": 0}
    if kwargs.get("dtype") is None and len(args) < 3:
        kwargs = {**kwargs, "dtype": fill.dtype}
    made = numpy(*args, **kwargs)
    if made.dtype.kind not in "fc":  # an integer array of a Dual: its primal, as int(x)
        made[...] = primal_value(fill)
        return made
    out = Fillable(made)
    out[...] = fill
    return out


def _stacker(name: str) -> Callable:
    numpy = NUMPY[name]

    @functools.wraps(numpy)
    def stack(*arys: Any) -> Any:
        if not _RUNNING:
            _restore()
        elif any(not isinstance(a, Boxed) and holds_dual(a) for a in arys) \
                and _called_by_name(name, _LIBRARIES, True):
            # filterpy's np.atleast_2d([hx(s) for s in sigmas]): a list of Duals, one Dual
            arys = tuple(a if isinstance(a, Boxed) else build(a) for a in arys)
        return numpy(*arys)

    return stack


@functools.wraps(NUMPY["isscalar"])
def _isscalar(element: Any) -> bool:
    # A Dual of x[0] stands for NumPy's scalar x[0]: the answer is its primal's.
    boxed = False
    while isinstance(element, Dual):
        element = element._session.value_of(element) if element._replayed else element.primal
        boxed = True
    if boxed and not isinstance(element, (np.ndarray, np.generic)):
        return getattr(element, "ndim", None) == 0  # a JAX value: no scalar type, as jnp's
    return NUMPY["isscalar"](element)


#: Methods of a plain array that convert a Dual argument in C (no protocol reaches
#: dualad): given an object array of its elements instead, one scalar operation a
#: product (np.dot(a, x) and a @ x are one operation).
PLAIN_METHODS = frozenset({"dot"})


def method_operand(x: Dual) -> DualObjects | None:
    """What ``x.__array__()`` gives a plain array's method (``a.dot(x)``) called by the
    code a transform runs (as :func:`apparent_class` decides who asks): ``x``'s
    elements, as DualObjects; None for any other conversion, which raises."""
    frame = _transformed_code(3)  # (2: Dual.__array__)
    if frame is None or _callee(frame) not in PLAIN_METHODS:
        return None
    return elements(x).view(DualObjects)


def _transformed_code(depth: int) -> Any:
    """The frame ``depth`` calls up, if it runs code a transform runs in this thread,
    outside the packages that keep NumPy's functions (else None)."""
    if not _RUNNING or get_ident() not in _RUNNING:
        return None
    frame = sys._getframe(depth)
    return None if _in_packages(frame, _KEEP_NUMPY_S) else frame


def _in_packages(frame: Any, packages: frozenset) -> bool:
    """Whether ``frame`` runs the code of one of ``packages`` (not a doctest of it)."""
    return frame.f_globals.get("__name__", "").partition(".")[0] in packages \
        and not frame.f_code.co_filename.startswith("<")


def apparent_class(x: Any) -> type:
    """The class a Dual or a :class:`~dualad.fillable.Fillable` ``x`` gives as its
    ``__class__``: ``np.ndarray`` where it stands for an array and the code asking
    (``isinstance(x, np.ndarray)``, which reads ``__class__`` when the type itself does
    not match) is code a transform runs, in this thread, outside the packages that
    keep NumPy's functions; its own type everywhere else. Library code that takes only
    arrays (pymoo's ``evaluate``, which makes a 1-D ``x`` 2-D only for an ndarray) then
    takes a Dual as NumPy's array, as the constructors above do, while NumPy, SciPy and
    dualad see the Dual it is."""
    kind = type(x)
    if _transformed_code(3) is None:  # (2: the property calling this)
        return kind
    value = x.value() if kind is Fillable else x
    while isinstance(value, Dual):
        value = value._session.value_of(value) if value._replayed else value.primal
    # (a JAX value stands for NumPy's array, or for its scalar where 0-d: x[0], sums)
    array = isinstance(value, _ndarray) or not isinstance(value, np.generic) \
        and getattr(value, "ndim", 0) > 0
    return _ndarray if array else kind


Boxed._apparent_class = Fillable._apparent_class = apparent_class  # type: ignore[assignment]
_array = functools.wraps(NUMPY["array"])(_array)
WRAPPERS: dict[str, Callable] = {"array": _array, "isscalar": _isscalar, **{
    name: _converter(name) for name in CONVERSIONS if name != "array"}, **{
    name: _maker(name) for name in MAKERS}, **{name: _stacker(name) for name in STACKERS}}

_RUNNING = TRANSFORMS_RUNNING
_LOCK = threading.Lock()
_NUMPY_NAMESPACE = vars(np)


def enter() -> None:
    """NumPy's constructors take Duals until the matching :func:`exit`."""
    _RUNNING.append(get_ident())
    if _NUMPY_NAMESPACE["asarray"] is not WRAPPERS["asarray"]:
        with _LOCK:  # (checked again under the lock, where _restore decides too)
            _NUMPY_NAMESPACE.update(WRAPPERS)
            for namespace, name in _bound_by_name():
                if namespace.get(name) is NUMPY[name]:
                    namespace[name] = WRAPPERS[name]


def exit() -> None:  # noqa: A001
    """The end of an :func:`enter`. NumPy's own functions come back at the first
    constructor call made while no transform runs (none in a loop of transforms)."""
    _RUNNING.remove(get_ident())


def _restore() -> None:
    """NumPy's own constructors, if no transform runs (called by the wrappers; also by
    a wrapper a module bound while a transform ran, ``from numpy import asarray``,
    which then costs one Python call)."""
    if _NUMPY_NAMESPACE["asarray"] is WRAPPERS["asarray"]:
        with _LOCK:
            if not _RUNNING:
                _NUMPY_NAMESPACE.update(NUMPY)
                for namespace, name in _BOUND:
                    if namespace.get(name) is WRAPPERS[name]:
                        namespace[name] = NUMPY[name]


#: (globals, name) of the Python modules that hold NumPy's functions under their own
#: names (``from numpy import zeros``): wrapped and put back with NumPy's namespace.
_BOUND: list[tuple[dict, str]] = []
_SCANNED = {"modules": 0}  # how many modules were loaded at the last look


def _bound_by_name() -> list[tuple[dict, str]]:
    """:data:`_BOUND`, looked for again in the modules imported since the last look
    (Python source files outside the packages that keep NumPy's own functions)."""
    modules = sys.modules
    if len(modules) != _SCANNED["modules"]:
        _SCANNED["modules"] = len(modules)
        known = {id(namespace) for namespace, _ in _BOUND}
        for module_name, module in list(modules.items()):
            namespace = getattr(module, "__dict__", None)
            if namespace is None or id(namespace) in known \
                    or module_name.partition(".")[0] in _KEEP_NUMPY_S \
                    or not str(getattr(module, "__file__", "")).endswith(".py"):
                continue
            _BOUND.extend((namespace, name) for name, function in NUMPY.items()
                          if namespace.get(name) is function)
    return _BOUND


class scope:
    """``with scope():`` — NumPy's constructors take Duals while the block runs (in
    every thread: they act only on arguments holding Duals, which only a transform
    makes)."""

    __slots__ = ()

    def __enter__(self) -> None:
        enter()

    def __exit__(self, *exc: Any) -> None:
        exit()


_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def scoped(transform: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """``transform`` run inside :class:`scope` (its signature kept, for type checkers)."""

    @functools.wraps(transform)
    def run(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        enter()
        try:
            return transform(*args, **kwargs)
        finally:
            exit()

    return run
