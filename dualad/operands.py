"""How the arguments of NumPy calls reach the rule table.

Lists and tuples given for array parameters become arrays (as NumPy reads
them); ``np.array([y[1], -y[0]])`` of 0-d Duals is an object array that becomes
one Dual again at the first dualad operation or transform output that meets it;
``np.vectorize`` and ``np.frompyfunc`` run their Python function on 0-d Duals;
and a conversion that would drop a derivative raises an error naming the NumPy
or SciPy function that attempted it.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ops
from .dual import Dual, primal_value
from .fillable import Fillable, resolved, resolved_tree
from .primitive import FUNCTION_HANDLERS, SCIPY_ORIGINALS, Boxed, qualified_name


def conversion_error() -> TypeError:
    """The error of ``np.asarray(dual)``: what would be lost, who asked, what to do."""
    caller, func = converting_caller() or (None, None)
    if caller is None:
        lead = ""
    elif caller.startswith("scipy.sparse"):
        lead = (f"{caller} converts its argument to numbers: a scipy.sparse matrix holds "
                "numbers, not Duals. dualad applies a constant sparse matrix to a Dual "
                "(A @ x, x @ A, A.dot(x), scipy.sparse.linalg.spsolve(A, b)); write the rest "
                "with NumPy (A.multiply(x) as A @ np.diag(x) or A.toarray() * x). ")
    elif func in FUNCTION_HANDLERS and hasattr(func, "_implementation"):
        lead = (f"{caller} was given an object array of Duals (np.array([...]) of Duals "
                "makes one) and casts it to floats. ")
    elif func in _scipy_originals():
        lead = (f"{caller} is SciPy's function as it was bound before `import dualad` "
                "(from scipy... import ... ran first): import dualad before it, or call it "
                "through its module (scipy.linalg.expm(x)), and dualad's rule runs. ")
    else:
        lead = (f"{caller} converts its argument with np.asarray, so NumPy never hands "
                "dualad the Dual, and dualad has no rule for it (docs/coverage.md lists "
                "those it has): write the computation with functions dualad differentiates. ")
    return TypeError(
        lead
        + "Converting a dualad.Dual to a NumPy array would drop its derivative "
        "(the tangent). Keep it a Dual: use NumPy functions on it directly (a plain "
        "array's method given a Dual, a.dot(x), converts it: write np.dot(a, x) or "
        "a @ x); to fill "
        "an array element by element, make it in the function being differentiated "
        "(np.zeros(n), np.empty(n), ...) or with np.zeros_like(x): a float array made "
        "elsewhere cannot hold a derivative; build an array from Duals with np.stack([...]) "
        "or, in the function being differentiated, np.array([...]); and use "
        "dualad.primal_value(x) only for a value that is meant to be a constant."
    )


def _scipy_originals() -> set:
    """SciPy's own functions that dualad replaced by dispatchers in their modules."""
    return set(SCIPY_ORIGINALS.values())


def converting_caller() -> tuple[str, Any] | None:
    """The NumPy or SciPy function the user called that converts a Dual to an
    array (scipy.linalg.logm, np.polynomial.Polynomial.__call__, ...), if any: the
    outermost of the NumPy/SciPy frames right above ``__array__`` that is a
    module's function or a class's method (decorators' inner wrappers skipped).
    Its name and the function (None for a method)."""
    frame, frames = sys._getframe(3), []  # above conversion_error and __array__
    while frame is not None and frame.f_globals.get("__name__", "") == "dualad.constructors":
        frame = frame.f_back  # np.asarray's wrapper, handing a library's call to NumPy
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in (
            "numpy", "scipy"):
        frames.append(frame)
        frame = frame.f_back
    for found in reversed(frames):  # outermost first
        code = found.f_code
        if "<locals>" in code.co_qualname:  # a decorator's wrapper: the function it wraps
            for name in code.co_freevars:
                wrapped = found.f_locals.get(name)
                if callable(wrapped) and "<locals>" not in getattr(wrapped, "__qualname__",
                                                                    "<locals>"):
                    return qualified_name(wrapped), wrapped
            continue
        owner = found.f_globals.get(code.co_qualname.split(".")[0])
        if owner is None:
            continue
        if code.co_qualname != code.co_name:  # a method
            return f"{found.f_globals['__name__']}.{code.co_qualname}", None
        return qualified_name(owner), owner
    return None


def as_operand(x: Any) -> Any:
    """An operand as NumPy reads it: a list or tuple of numbers as an array, an
    object array of Duals (``np.array([d1, d2])``) as one Dual, and a
    :class:`~dualad.fillable.Fillable` as what it stands for."""
    if type(x) is Fillable:
        return x.value()
    if type(x) is list or type(x) is tuple:
        return np.asarray(x) if not holds_box(x) else from_objects(np.array(x, object))
    if type(x) is np.ndarray and x.dtype.hasobject:
        return from_objects(x)
    return x


def elements(x: Dual) -> np.ndarray:
    """``x`` as an object array of its elements, each a 0-d Dual."""
    out = np.empty(x.shape, object)
    if x.ndim == 0:
        out[()] = x
    else:
        for i, element in enumerate(x.reshape(-1)):
            out.flat[i] = element
    return out


def inside_vectorize() -> bool:
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("numpy"):
        if frame.f_code is _VECTORIZE_CALL:
            return True
        frame = frame.f_back
    return False


_VECTORIZE_CALL = np.vectorize.__call__.__code__


def is_python_ufunc(ufunc: np.ufunc) -> bool:
    """Whether ``ufunc`` is made by np.frompyfunc (object loops only)."""
    return all(set(t) <= {"O", "-", ">"} for t in ufunc.types)


def into_outputs(ufunc: np.ufunc, method: str, inputs: tuple, out: Any,
                 kwargs: dict) -> Any:
    """A ufunc with ``out=`` (``np.log(g, out=y, where=g > 0)``) where a Dual is met:
    the results are written into the outputs that are Duals or Fillables (with
    ``where=``, only the chosen elements are computed, as NumPy computes them). A
    comparison or predicate writes the primal's booleans into plain arrays (no
    derivative to keep); any other result for a plain array raises."""
    outs = out if type(out) is tuple else (out,)
    inputs = tuple(as_operand(x) for x in inputs)
    if not any(isinstance(x, Boxed) for x in inputs + tuple(map(resolved, outs))):
        arrays = tuple(o._array if type(o) is Fillable and not o.filled else o for o in outs)
        results = getattr(ufunc, method)(*inputs, out=arrays, **kwargs)
        return _outputs_given(outs, results)
    outputs = {types.partition("->")[2] for types in ufunc.types}
    if method == "__call__" and "?" in outputs and outputs <= {"?", "O"} and all(
            o is None or type(o) is np.ndarray for o in outs):
        return ufunc(*[primal_value(x) for x in inputs], out=outs, **kwargs)
    if method != "__call__" or any(type(o) is np.ndarray for o in outs):
        raise TypeError(
            f"{qualified_name(ufunc)}(..., out=...) with a Dual argument would write the "
            "result into a plain array and drop the derivative; use the returned value "
            "instead of out=, or make the array in the transformed function "
            "(np.zeros, np.empty_like, ...) or with np.zeros_like of a Dual")
    where = kwargs.pop("where", True)
    chosen = Ellipsis
    if where is True:
        results = ufunc(*inputs, **kwargs)
    elif isinstance(primal_value(where), (np.ndarray, np.generic, bool)):
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs + (where,)),
                                    *(np.shape(o) for o in outs if o is not None))
        chosen = np.broadcast_to(primal_value(where), shape)
        results = ufunc(*[np.broadcast_to(x, shape)[chosen] for x in inputs], **kwargs)
    else:  # another backend's mask (JAX, traced): every element, then a select
        results = ufunc(*inputs, **kwargs)
        results = tuple(np.where(where, r, resolved(o)) for o, r in zip(
            outs, results if type(results) is tuple else (results,)))
    results = results if type(results) is tuple else (results,)
    for o, r in zip(outs, results):
        if o is not None:
            o[chosen] = r
    return _outputs_given(outs, results)


def _outputs_given(outs: tuple, results: Any) -> Any:
    """What NumPy returns for ``out=``: the arrays given, new ones where None."""
    results = results if type(results) is tuple else (results,)
    given = tuple(r if o is None else o for o, r in zip(outs, results))
    return given[0] if len(given) == 1 else given


def through_objects(ufunc: np.ufunc, inputs: tuple) -> Any:
    objects = [elements(x) if isinstance(x, Dual) else x for x in inputs]
    out = ufunc(*objects)
    return tuple(map(from_objects, out)) if isinstance(out, tuple) else from_objects(out)


class DualObjects(np.ndarray):
    """An object array of Duals that the code a transform runs made
    (``np.array([[x[0], 0.1], [0.1, x[1]]], dtype=object)``, a plain array's
    ``a.dot(x)`` of a Dual: see :mod:`dualad.constructors`): NumPy's functions and
    ufuncs given it meet the one Dual it stands for (:func:`from_objects`), where a
    plain object array would end in NumPy's ``dtype('O')`` errors."""

    __array_priority__ = 1000  # (a.dot(x) of a plain a: the product is one too)

    def __array_function__(self, func: Callable, types: tuple, args: tuple,
                           kwargs: dict) -> Any:
        if func in _WRITING_FUNCTIONS:  # into their first argument: NumPy's, on it
            return func(*map(_plain_objects, args), **kwargs)
        return func(*_one_dual_each(args), **_one_dual_each(kwargs))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
        out = kwargs.get("out", ())
        if any(type(o) is DualObjects for o in out):
            # Written in place (np.add(m, 1.0, out=m)): NumPy's loop over the elements,
            # each a Dual, as for a plain object array.
            kwargs["out"] = tuple(map(_plain_objects, out))
            getattr(ufunc, method)(*map(_plain_objects, inputs), **kwargs)
            return out[0] if len(out) == 1 else out
        return getattr(ufunc, method)(*_one_dual_each(inputs), **_one_dual_each(kwargs))


#: NumPy's functions that write into their first argument: a DualObjects given them is
#: written element by element, as a plain object array is.
_WRITING_FUNCTIONS = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                                np.put_along_axis})


def _plain_objects(v: Any) -> Any:
    return v.view(np.ndarray) if type(v) is DualObjects else v


def _one_dual_each(values: Any) -> Any:
    """``values`` (a tuple, list or dict, nested) with each DualObjects as its Dual."""
    if type(values) is DualObjects:
        return from_objects(values)
    if type(values) in (tuple, list):
        return type(values)(map(_one_dual_each, values))
    if type(values) is dict:
        return {k: _one_dual_each(v) for k, v in values.items()}
    return values


def from_objects(x: Any) -> Any:
    """An object array holding Duals as one struct-of-arrays Dual (a stack of its
    elements, so every mode records it); any other value as it is (a DualObjects
    holding none as a plain object array)."""
    if type(x) is DualObjects:
        x = x.view(np.ndarray)
    if type(x) is not np.ndarray or not x.dtype.hasobject:
        return x
    items = x.ravel().tolist()
    if not any(isinstance(v, Boxed) for v in items):
        return x
    if x.ndim == 0:
        return items[0]
    stacked = FUNCTION_HANDLERS[np.stack]([v if isinstance(v, Boxed) else np.asarray(v)
                                            for v in items])
    return stacked.reshape(x.shape)


def output_of(x: Any) -> Any:
    """A transform's output leaf: :func:`from_objects`, and an object array of plain
    numbers (``np.min`` of ``np.array([[x, 0.5], [0.5, 0.5]])`` where 0.5 wins) as
    the numeric array NumPy would make of them (its derivative is 0)."""
    if type(x) is Fillable:
        x = x.value()
    x = from_objects(x)
    if type(x) is np.ndarray and x.dtype == object and x.size:
        numbers = np.array(x.tolist())
        if numbers.dtype.kind in "biuf" and numbers.shape == x.shape:
            return numbers
    return x


def holds_box(items: Any) -> bool:
    return any(isinstance(v, Boxed) or (type(v) in (list, tuple) and holds_box(v))
               for v in items)


# The parameters of NumPy functions that take an array, and those that take a
# sequence of arrays: lists and tuples given for them become arrays before the
# rule runs, as NumPy converts them (shapes, axes and the like stay as given).
_ARRAY_PARAMETERS = frozenset({
    "a", "b", "x", "y", "x1", "x2", "v", "m", "A", "B", "arr", "ary", "array", "a1", "a2",
    "condition", "a_min", "a_max", "min", "max", "mean", "prototype", "xp", "fp",
    "weights", "c", "p", "q", "values", "u"})
_ARRAY_SEQUENCE_PARAMETERS = frozenset({"arrays", "tup", "condlist", "choicelist", "xi"})
# Variadic parameters that take one array per argument (np.einsum's *operands mixes
# arrays with subscript lists: its rule reads them itself).
_VARIADIC_ARRAY_PARAMETERS = frozenset({"arys"})
_PARAMETER_NAMES: dict[Callable, tuple[tuple[str, ...], str | None]] = {}


def arguments_as_given(func: Callable) -> None:
    """Leave the lists and tuples of calls of ``func`` as given: its rule reads them
    itself (np.block's nested lists)."""
    _AS_GIVEN.add(func)


_AS_GIVEN: set[Callable] = set()


def array_arguments(func: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args`` and ``kwargs`` of a call of ``func`` with the lists and tuples given
    for array parameters turned into arrays."""
    if func in _AS_GIVEN:
        return args, kwargs
    names = _PARAMETER_NAMES.get(func)
    if names is None:  # one entry per NumPy function with a rule: bounded
        try:
            parameters = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            parameters = ()
        positional = tuple(p.name for p in parameters
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        var = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
        names = _PARAMETER_NAMES[func] = (positional, var)
    positional, var = names
    args = tuple(_array_argument(positional[i], a) if i < len(positional)
                 else as_operand(a) if var in _VARIADIC_ARRAY_PARAMETERS else a
                 for i, a in enumerate(args))
    kwargs = {k: _array_argument(k, v) for k, v in kwargs.items()}
    return args, kwargs


def _array_argument(name: str | None, value: Any) -> Any:
    if type(value) is np.ndarray:
        return from_objects(value)
    if type(value) is not list and type(value) is not tuple:
        return value
    if name in _ARRAY_PARAMETERS:
        return as_operand(value)
    if name in _ARRAY_SEQUENCE_PARAMETERS:
        return type(value)(as_operand(v) for v in value)
    return value


def holds_complex(values: Any) -> bool:
    """Whether an argument (in lists and tuples too) holds complex numbers."""
    for v in values:
        if type(v) is list or type(v) is tuple:
            if holds_complex(v):
                return True
        elif type(v) is complex or getattr(getattr(v, "dtype", None), "kind", "") == "c":
            return True
    return False


def is_complex(x: Any) -> bool:
    """Whether ``x`` (an array, a Dual, a recorded tangent, a list of them) is complex."""
    return holds_complex((x,))


def complex_error(name: str) -> TypeError:
    return TypeError(
        f"{name} has no rule for complex numbers in dualad: its real rule would give a "
        "wrong derivative here, so it is refused. Complex arithmetic, exp, log, powers, "
        "trigonometric and hyperbolic functions, abs, angle, real, imag, conj, the FFT "
        "and linear operations are differentiated in forward and reverse mode (see "
        "docs/conventions.md); elsewhere write the computation with the real and "
        "imaginary parts as separate real arrays.")


def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """``np.add.at(a, indices, b)`` (``np.subtract.at``) where a Dual takes part: the
    elements of ``a`` at ``indices`` gain ``b``, repeated indices accumulating (the
    assembly of a finite-element matrix), written into ``a`` — a Dual, or an array made
    in the function (a Fillable), which becomes one."""
    value = resolved(a)
    if not (isinstance(value, Boxed) or isinstance(b, Boxed) or type(b) is Fillable):
        return ufunc.at(value, indices, *(() if b is None else (resolved(b),)))
    if ufunc not in (np.add, np.subtract) or b is None:
        raise TypeError(f"{qualified_name(ufunc)}.at is not supported on Duals; np.add.at "
                        "and np.subtract.at are (or write a[idx] = ... with unique indices)")
    shape = np.shape(primal_value(value))
    b = as_operand(resolved(b))
    indices = tuple(np.asarray(i) if type(i) is list else i  # (as NumPy reads lists)
                    for i in (indices if type(indices) is tuple else (indices,)))
    picked = np.empty(shape, np.int8)[indices].shape
    added = FUNCTION_HANDLERS[np.broadcast_to](b if ufunc is np.add else -b, picked)
    a[...] = value + ops.index_add(added, index=indices, shape=shape)


def ufunc_method(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc.reduce``/``accumulate``/``outer``/``at`` expressed with the rule table."""
    if method == "at" and not kwargs:
        return ufunc_at(ufunc, *inputs)
    reductions = {
        (np.add, "reduce"): np.sum, (np.add, "accumulate"): np.cumsum,
        (np.multiply, "reduce"): np.prod, (np.multiply, "accumulate"): np.cumprod,
        (np.maximum, "reduce"): np.max, (np.fmax, "reduce"): np.max,
        (np.minimum, "reduce"): np.min, (np.fmin, "reduce"): np.min,
    }
    func = reductions.get((ufunc, method))
    if func is not None:
        kwargs.setdefault("axis", 0)  # NumPy's default for reduce and accumulate
        return FUNCTION_HANDLERS[func](*inputs, **kwargs)
    if method == "outer" and len(inputs) == 2 and not kwargs:
        a, b = inputs
        b_ndim = np.ndim(primal_value(b))
        a = FUNCTION_HANDLERS[np.reshape](a, np.shape(primal_value(a)) + (1,) * b_ndim)
        return ufunc(a, b)
    raise TypeError(
        f"{qualified_name(ufunc)}.{method} is not supported on Duals; "
        "write it with ordinary NumPy calls (np.sum, np.cumsum, broadcasting; np.add.at or "
        "np.bincount(idx, weights=w) for sums over groups)"
    )


def object_loop_method(ufunc: np.ufunc) -> Callable:
    """``np.sin`` of an object array calls each element's ``sin`` method: give Duals
    one per ufunc with a rule, so such arrays compute (elementwise) instead of failing."""

    def method(self, *others):
        return ufunc(self, *others)

    method.__name__ = ufunc.__name__
    method.__doc__ = f"Same as ``numpy.{ufunc.__name__}(self, ...)``."
    return method


# ---------------------------------------------------------------------------
# np.mean, np.std, np.var, the quantiles and np.interp of a list of Duals
# ---------------------------------------------------------------------------
# NumPy dispatches on the list, not on its items, so no protocol runs: it makes an
# object array of it and computes on the Duals one by one, or casts it to floats
# (np.mean: the sum cast with ``dtype.type``; np.interp's C code), which would drop
# the derivative (and is refused). The helpers those functions call once the list is
# an array, looked up in NumPy's modules on every call, are wrapped: an object array
# (or list) holding Duals becomes one Dual and goes to dualad's rule, as np.stack of
# the list would; anything else runs NumPy's code.

def _object_array_of_boxes(a: Any) -> bool:
    return type(a) is np.ndarray and a.dtype == object and holds_box(a.ravel())


def _holds_boxes(a: Any) -> bool:
    return (type(a) in (list, tuple) and holds_box(a)) or _object_array_of_boxes(a)


def _objects_to_rule(method: Callable, func: Callable) -> Callable:
    def wrapped(a, *args, **kwargs):
        if _holds_boxes(a):
            return func(from_objects(np.array(a, dtype=object)), *args, **kwargs)
        return method(a, *args, **kwargs)

    wrapped.__wrapped__ = method
    return wrapped


def _quantile_rule(func: Callable) -> Callable:
    """NumPy's ``_quantile_unchecked(a, q, axis, out, overwrite_input, method, keepdims,
    weights, weak_q)`` (q already divided by 100 for the percentiles) as ``func``."""

    def rule(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, weights=None, weak_q=False):
        keepdims = False if keepdims is np._NoValue else keepdims
        return func(a, q, axis, out, overwrite_input, method, keepdims, weights=weights)

    return rule


def _interp_to_rule(compiled: Callable) -> Callable:
    """NumPy's C ``interp(x, xp, fp, left, right)``, which np.interp calls with its
    arguments as given (x and xp too): dualad's rule where one holds Duals."""

    def wrapped(x, xp, fp, left=None, right=None):
        if _holds_boxes(x) or _holds_boxes(xp) or _holds_boxes(fp):
            return np.interp(as_operand(x), as_operand(xp), as_operand(fp), left, right)
        return compiled(x, xp, fp, left, right)

    wrapped.__wrapped__ = compiled
    return wrapped


def _fft_to_rule(raw_fft: Callable) -> Callable:
    """NumPy's ``_raw_fft(a, n, axis, is_real, is_forward, norm, out)``, which every
    np.fft function calls with ``a`` made an array (an object array where the caller
    gave a list of Duals, which its C code cannot take): the public function's rule."""

    def wrapped(a, n, axis, is_real, is_forward, norm, out=None):
        if out is None and _object_array_of_boxes(a):
            public = {(False, True): np.fft.fft, (False, False): np.fft.ifft,
                      (True, True): np.fft.rfft, (True, False): np.fft.irfft}
            return public[bool(is_real), bool(is_forward)](from_objects(a), n, axis, norm)
        return raw_fft(a, n, axis, is_real, is_forward, norm, out)

    wrapped.__wrapped__ = raw_fft
    return wrapped


def _methods_to_rule(wrapit: Callable) -> Callable:
    """NumPy's ``_wrapit(obj, method, ...)``, which np.clip, np.round, np.cumsum and
    the other functions of ``numpy._core.fromnumeric`` call on a list (it has not the
    method): on a list holding Duals, the method of the Dual made of it (NumPy's
    object loop would compare the Duals: np.clip at a bound took one side)."""

    def wrapped(obj, method, *args, **kwargs):
        if type(obj) in (list, tuple) and holds_box(obj) and hasattr(Dual, method):
            return getattr(from_objects(np.array(obj, dtype=object)), method)(*args, **kwargs)
        return wrapit(obj, method, *args, **kwargs)

    wrapped.__wrapped__ = wrapit
    return wrapped


def _reduction_to_rule(wrapreduction: Callable) -> Callable:
    """NumPy's ``_wrapreduction(obj, ufunc, method, ...)`` of np.max, np.min, np.sum,
    np.prod (and np.nanmax's object arrays): a list or object array holding Duals is
    reduced as the Dual made of it (NumPy's object loop compares: a tie took one)."""

    def wrapped(obj, ufunc, method, *args, **kwargs):
        kind = type(obj)  # (every np.sum passes here: a numeric array at once)
        if (kind is list or kind is tuple or kind is np.ndarray and obj.dtype.hasobject) \
                and _holds_boxes(obj):
            obj = from_objects(np.array(obj, dtype=object))
        return wrapreduction(obj, ufunc, method, *args, **kwargs)

    wrapped.__wrapped__ = wrapreduction
    return wrapped


#: (NumPy's module, the helper's name, what its object arrays of Duals go to).
_HELPERS = (
    ("numpy._core.fromnumeric", "_wrapit", _methods_to_rule),
    ("numpy._core.fromnumeric", "_wrapreduction", _reduction_to_rule),
    ("numpy._core._methods", "_ptp", lambda method: _objects_to_rule(method, np.ptp)),
    ("numpy._core._methods", "_mean", lambda method: _objects_to_rule(method, np.mean)),
    ("numpy._core._methods", "_var", lambda method: _objects_to_rule(method, np.var)),
    ("numpy._core._methods", "_std", lambda method: _objects_to_rule(method, np.std)),
    # np.quantile and np.percentile; np.nanquantile and np.nanpercentile
    ("numpy.lib._function_base_impl", "_quantile_unchecked",
     lambda method: _objects_to_rule(method, _quantile_rule(np.quantile))),
    ("numpy.lib._nanfunctions_impl", "_nanquantile_unchecked",
     lambda method: _objects_to_rule(method, _quantile_rule(np.nanquantile))),
    ("numpy.lib._function_base_impl", "compiled_interp", _interp_to_rule),
    ("numpy.fft._pocketfft", "_raw_fft", _fft_to_rule),
)


def _wrap_statistics() -> None:
    for module_name, name, wrap in _HELPERS:
        try:  # (numpy.fft is imported on first use)
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        method = getattr(module, name, None)
        if method is not None and not hasattr(method, "__wrapped__"):
            setattr(module, name, wrap(method))


_wrap_statistics()


# ---------------------------------------------------------------------------
# np.vectorize of a Dual, and numpy.linalg given lists of Duals
# ---------------------------------------------------------------------------
# np.vectorize runs its function on each element (a 0-d Dual) and returns NumPy's
# object array of the results: made one Dual, it reaches np.linalg and NumPy's other
# C code as a Dual, not as dtype('O'). numpy.linalg converts a list of lists itself
# (np.linalg.det([[x[0], x[1]], ...]) dispatches on the list, not on its items) and
# its gufuncs cannot take the object array NumPy makes of it: dualad says so.

def _vectorized_to_dual(method: Callable) -> Callable:
    def wrapped(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        if not holds_box(args) and not holds_box(kwargs.values()):
            return out
        return tuple(map(from_objects, out)) if type(out) is tuple else from_objects(out)

    wrapped.__wrapped__ = method
    return wrapped


def _refusing_objects(common_type: Callable) -> Callable:
    def wrapped(*arrays):
        if any(map(_object_array_of_boxes, arrays)):
            name = f"numpy.linalg.{sys._getframe(1).f_code.co_name}"
            raise TypeError(
                f"{name} was given a list or object array holding Duals: NumPy makes an "
                "object array of it, which its linear algebra cannot take. Make it one "
                "array first: np.array([[x[0], x[1]], ...]) in the function being "
                "differentiated, or np.stack([...]).")
        return common_type(*arrays)

    wrapped.__wrapped__ = common_type
    return wrapped


def _wrap_vectorize_and_linalg() -> None:
    call = np.vectorize.__call__
    if not hasattr(call, "__wrapped__"):
        np.vectorize.__call__ = _vectorized_to_dual(call)
    linalg = sys.modules.get("numpy.linalg._linalg")  # (each function's common dtype)
    common_type = getattr(linalg, "_commonType", None)
    if common_type is not None and not hasattr(common_type, "__wrapped__"):
        linalg._commonType = _refusing_objects(common_type)


_wrap_vectorize_and_linalg()


def written_value(value: Any) -> Any:
    """A value written into an array (``out[i:j] = [y[1], 2.0]``), as NumPy reads it."""
    return as_operand(resolved_tree(value))
