"""SciPy functions called unchanged: scipy.special's Python functions, scipy.linalg,
scipy.signal.convolve and scipy.stats distributions.

These SciPy functions convert their arguments with ``np.asarray`` before any NumPy
protocol runs, so a Dual never reaches a rule through ``__array_function__``. The
route (measured against SciPy's array-API dispatch, see docs/scipy-functions.md):
each function of :data:`SCIPY_RULES` is replaced, in the SciPy module users call
it from, by a thin dispatcher that runs the dualad implementation when an argument
holds a Dual and SciPy's own function otherwise (one type test per argument).
Distribution methods are replaced on their classes (``rv_continuous.logpdf``, ...),
so ``norm.logpdf`` works however ``norm`` was imported. Modules not yet imported
are patched when they are (an import hook, removed once all are done): importing
dualad imports no SciPy module, and scipy.special's primitives are declared when it is
imported (:func:`dualad.rules.special.declare_scipy_rules`).

The condition: a SciPy *function* bound by name before ``import dualad``
(``from scipy.linalg import expm`` first) is SciPy's own and refuses Duals; call it
through its module (``scipy.linalg.expm``) or import dualad first.

scipy is optional: nothing here imports it at module level.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dual import ARRAY_NAMESPACE, as_operand, primal_value
from ..fillable import Fillable, resolved_tree
from ..operands import complex_error, holds_complex
from ..operands import holds_box as _holds_box
from ..primitive import COMPLEX_FUNCTIONS, entry_point, qualified_name
from ..primitive import SCIPY_ORIGINALS, Boxed, Primitive, register_function
from .shape import getitem, reshape, shape_of

# ---------------------------------------------------------------------------
# The route: dispatchers installed into SciPy's modules and classes
# ---------------------------------------------------------------------------

#: module -> {attribute: dualad implementation}. A dotted attribute
#: (``rv_continuous.logpdf``) names a method of a class of that module; the
#: attribute "" a function called with the module once it is imported.
SCIPY_RULES: dict[str, dict[str, Callable]] = {}
#: Each installed dispatcher -> SciPy's original function.
ORIGINALS: dict[Callable, Callable] = SCIPY_ORIGINALS  # (in dualad.primitive: operands reads it)
#: Implementations that take every call: solvers, whose callbacks may close over
#: Duals that no argument shows (they call SciPy's own where nothing is differentiated).
TAKING_CALLBACKS: set[Callable] = set()


def scipy_rule(module: str, *names: str, callbacks: bool = False
               ) -> Callable[[Callable], Callable]:
    """Declare ``implementation`` as dualad's ``module.name`` for Duals (decorator);
    ``callbacks``: for every call, Duals or not (see :data:`TAKING_CALLBACKS`)."""

    def decorate(implementation: Callable) -> Callable:
        for name in names:
            SCIPY_RULES.setdefault(module, {})[name] = implementation
        if callbacks:
            TAKING_CALLBACKS.add(implementation)
        return implementation

    return decorate


def original(module: str, name: str) -> Callable:
    """SciPy's own ``module.name``, under dualad's dispatcher if one is installed."""
    found = getattr(_scipy(module), name)
    return ORIGINALS.get(found, found)


def with_primal(value: Any, plain: Any) -> Any:
    """``value``'s perturbations on ``plain`` (SciPy's number, kept bit for bit)."""
    return value - primal_value(value) + plain


def _resolved(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments with each array made to be filled as what it stands for (a Dual
    once one was written in: filterpy's ``A = zeros(...); A[:n, :n] = ...; expm(A)``)."""
    if any(type(a) is Fillable for a in args) or any(type(v) is Fillable
                                                      for v in kwargs.values()):
        return resolved_tree(args), resolved_tree(kwargs)
    return args, kwargs


def _holds_dual(args: tuple, kwargs: dict) -> bool:
    for a in args:
        if isinstance(a, Boxed) or ((type(a) is tuple or type(a) is list) and _holds_box(a)):
            return True
    return bool(kwargs) and _holds_box(tuple(kwargs.values()))


def _dispatcher(original: Callable, implementation: Callable, method: bool) -> Callable:
    if implementation in TAKING_CALLBACKS:  # (not one operation: the callbacks run)
        def dispatch(*args, **kwargs):
            return implementation(*args, **kwargs)
    elif method:  # a method: ``self`` is the distribution, never a Dual
        implementation = entry_point(implementation)  # one operation of a replayed call

        def dispatch(self, *args, **kwargs):
            args, kwargs = _resolved(args, kwargs)
            if _holds_dual(args, kwargs):
                if holds_complex(args) or holds_complex(kwargs.values()):
                    raise complex_error(f"{type(self).__name__}.{original.__name__}")
                return implementation(self, *args, **kwargs)
            return original(self, *args, **kwargs)
    else:
        implementation = entry_point(implementation)  # one operation of a replayed call

        def dispatch(*args, **kwargs):
            args, kwargs = _resolved(args, kwargs)
            if _holds_dual(args, kwargs):
                if original not in COMPLEX_FUNCTIONS and (holds_complex(args)
                                                          or holds_complex(kwargs.values())):
                    raise complex_error(qualified_name(dispatch))
                return implementation(*args, **kwargs)
            return original(*args, **kwargs)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(dispatch, attr, getattr(original, attr, None))
    dispatch.__dict__.update(getattr(original, "__dict__", {}))
    dispatch.__wrapped__ = original
    return dispatch


def _install(module_name: str, module: Any) -> None:
    """Replace the functions of ``SCIPY_RULES[module_name]`` in ``module``."""
    rules = SCIPY_RULES.get(module_name, {})
    if "" in rules:  # not a function: a callback, first (scipy.special's declares rules)
        rules[""](module)
    for name, implementation in list(rules.items()):
        if not name:
            continue
        owner, _, attr = name.rpartition(".")
        target = getattr(module, owner) if owner else module
        original = vars(target)[attr]
        if original in ORIGINALS:  # installed already (a reload keeps ours)
            continue
        dispatch = _dispatcher(original, implementation, method=bool(owner))
        ORIGINALS[dispatch] = original
        setattr(target, attr, dispatch)
        if not owner:
            register_function(dispatch, implementation)


class _InstallOnImport:
    """A ``sys.meta_path`` finder that patches a SciPy module right after it runs."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _PENDING:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_and_install(module):
            exec_module(module)
            _done(fullname, module)

        spec.loader.exec_module = exec_and_install
        return spec


_PENDING: set[str] = set()
_HOOK = _InstallOnImport()


def _done(module_name: str, module: Any) -> None:
    _install(module_name, module)
    _PENDING.discard(module_name)
    if not _PENDING and _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def install_all() -> None:
    """Install the dispatchers in the SciPy modules imported so far, and on import
    for the others. Called once, when the rule table is loaded."""
    try:  # (not imported here: importing dualad imports no SciPy)
        if "scipy" not in sys.modules and importlib.util.find_spec("scipy") is None:
            return
    except ImportError:  # scipy is optional
        return
    for module_name in SCIPY_RULES:
        if module_name in sys.modules:
            _install(module_name, sys.modules[module_name])
        else:
            _PENDING.add(module_name)
    if _PENDING and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def _scipy(module: str) -> Any:
    return importlib.import_module(module)


class _ArrayNamespace(types.ModuleType):
    """What ``Dual.__array_namespace__`` returns, for SciPy's array-API dispatch
    (``SCIPY_ARRAY_API=1``): NumPy's namespace (NumPy 2 has the array API's names; its
    functions reach the rule table through ``__array_function__``), an ``asarray``
    that keeps Duals, and ``special``, the scipy.special ufuncs, where SciPy looks
    for a backend's own special functions."""

    def __getattr__(self, name: str) -> Any:
        if name == "special":
            from .special import sc
            return sc
        return getattr(np, name)

    @staticmethod
    def asarray(obj: Any, dtype: Any = None, copy: Any = None, device: Any = None) -> Any:
        """A Dual stays a Dual (cast to ``dtype`` if given); anything else: np.asarray."""
        if isinstance(obj, Boxed):
            return obj if dtype is None else np.astype(obj, dtype)
        return np.asarray(obj, dtype=dtype, copy=copy)


_NAMESPACE = _ArrayNamespace("dualad.array_namespace")


def array_namespace() -> Any:
    """The array namespace of Duals (``Dual.__array_namespace__``)."""
    return _NAMESPACE


ARRAY_NAMESPACE[:] = [_NAMESPACE]


# ---------------------------------------------------------------------------
# scipy.special: logsumexp, softmax, log_softmax, polygamma (dualad.rules.special), multigammaln
# ---------------------------------------------------------------------------

def _special_rules() -> None:
    from . import special
    # The ufuncs' primitives, and polygamma's dispatcher, once scipy.special is imported.
    scipy_rule("scipy.special", "")(special.declare_scipy_rules)
    scipy_rule("scipy.special", "logsumexp")(special.logsumexp)
    scipy_rule("scipy.special", "softmax")(special.softmax)
    scipy_rule("scipy.special", "log_softmax")(special.log_softmax)


_special_rules()


@scipy_rule("scipy.special", "multigammaln")
def multigammaln(a, d):
    """log of the multivariate gamma function, ``scipy.special.multigammaln``."""
    from .special import gammaln
    if not np.isscalar(d) or math.floor(d) != d:
        raise ValueError("d should be a positive integer (dimension)")
    a = as_operand(a)
    value = primal_value(a)
    if isinstance(value, (np.ndarray, np.generic)) and np.any(value <= 0.5 * (d - 1)):
        # (checked on NumPy values; a JAX value under dualad_gpu is not known yet)
        raise ValueError(f"condition a ({value}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    terms = np.stack([gammaln(a - 0.5 * j) for j in range(int(d))])
    return d * (d - 1) * 0.25 * np.log(np.pi) + np.sum(terms, axis=0)  # float64, as SciPy


# ---------------------------------------------------------------------------
# scipy.signal.convolve: bilinear. Tangents are convolved in 'full' mode (a seed
# axis of extent K against one of extent 1 keeps K) and cropped as SciPy crops;
# the transposes are 'valid' convolutions with the other input reversed.
# ---------------------------------------------------------------------------


def _crop_start(full: tuple, s1: tuple, s2: tuple, mode: str) -> tuple[tuple, tuple]:
    """(start, size) per axis of SciPy's mode output within the 'full' output."""
    if mode == "full":
        return (0,) * len(full), full
    size = s1 if mode == "same" else tuple(max(a, b) - min(a, b) + 1 for a, b in zip(s1, s2))
    return tuple((f - s) // 2 for f, s in zip(full, size)), size


def _full_seeded(t, other, method: str, t_first: bool):
    other = reshape(other, shape=(1,) + tuple(shape_of(other)))
    args = (t, other) if t_first else (other, t)
    return convolve(*args, mode="full", method=method)


def _convolve_jvp(primals, tangents, ans, mode, method):
    in1, in2 = primals
    t1, t2 = tangents
    full = None
    if t1 is not None:
        full = _full_seeded(t1, in2, method, True)
    if t2 is not None:
        term = _full_seeded(t2, in1, method, False)
        full = term if full is None else full + term
    start, size = _crop_start(shape_of(full)[1:], in1.shape, in2.shape, mode)
    return getitem(full, index=(slice(None),) + tuple(
        slice(s, s + n) for s, n in zip(start, size)))


def _convolve_transpose(ct, args, linear, mode, method):
    in1, in2 = args
    s1, s2 = tuple(shape_of(in1)), tuple(shape_of(in2))
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    start, size = _crop_start(full, s1, s2, mode)
    if mode != "full":  # the transpose of the crop: zeros around ct
        from .shape import index_add
        ct = index_add(ct, index=(slice(None),) + tuple(
            slice(s, s + n) for s, n in zip(start, size)), shape=(shape_of(ct)[0],) + full)
    flip = (Ellipsis,) + (slice(None, None, -1),) * len(s1)
    ct1 = ct2 = None
    if 0 in linear:
        ct1 = convolve(ct, reshape(getitem(in2, index=flip), shape=(1,) + s2), mode="valid",
                       method=method)
    if 1 in linear:
        ct2 = convolve(ct, reshape(getitem(in1, index=flip), shape=(1,) + s1), mode="valid",
                       method=method)
    return ct1, ct2


convolve = Primitive(
    "convolve",
    lambda in1, in2, mode, method: _scipy("scipy.signal").convolve(in1, in2, mode, method),
    jvp=_convolve_jvp, linear="one", transpose=_convolve_transpose)


def _convolve_jax(in1, in2, mode, method):
    import jax.numpy as jnp
    from jax.scipy.signal import convolve as jax_convolve
    s1, s2 = in1.shape, in2.shape
    if all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2)):
        return jax_convolve(in1, in2, mode=mode, method=method)
    if mode == "valid":
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    # JAX wants one input smaller in every axis (a seed axis against one of extent 1 is
    # not): zeros after in1 where it is the smaller add only zeros after the 'full' result.
    padded = jnp.pad(in1, [(0, max(b - a, 0)) for a, b in zip(s1, s2)])
    full_shape = tuple(a + b - 1 for a, b in zip(s1, s2))
    full = jax_convolve(padded, in2, mode="full", method=method)
    start, size = _crop_start(full_shape, s1, s2, mode)
    return full[tuple(slice(i, i + n) for i, n in zip(start, size))]


convolve.kernels["jax"] = _convolve_jax


@scipy_rule("scipy.signal", "convolve")
def _convolve(in1, in2, mode="full", method="auto"):
    in1, in2 = as_operand(in1), as_operand(in2)
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode == "valid" and all(a <= b for a, b in zip(s1, s2)) and s1 != s2:
        in1, in2 = in2, in1  # SciPy swaps them too: 'valid' is symmetric
    return convolve(in1, in2, mode=mode, method=method)

