"""The coverage table of ``docs/coverage.md``, computed from the code.

Every public function of NumPy (``numpy``, ``numpy.linalg``, ``numpy.fft``),
``scipy.special``, ``scipy.linalg``, ``scipy.signal``, ``scipy.stats``,
``scipy.integrate`` and ``scipy.optimize`` gets dualad's status beside JAX's:

- ``rule``: dualad differentiates it (a rule, a spec row, or for SciPy an installed
  dispatcher). ``tested`` says its spec row runs in every
  mode (forward against central differences, reverse, hyper-dual, check_grads),
  ``jax_checked`` that the row is compared with JAX in first and second order, and
  ``dualad_gpu`` that every primitive its derivatives call has a JAX kernel giving
  the NumPy kernel's values (checked on one call each).
- ``value``: a step function, evaluated on the value with derivative 0
  (comparisons, ``floor``, ``argmax``, ...).
- ``none``: no rule yet; calling it on a Dual raises a TypeError naming it.
- ``n/a``: nothing to differentiate. Either NumPy never hands it a Dual (no
  ``__array_function__`` dispatch: constructors from shapes, dtype and print
  utilities, I/O), or its arguments are integers, or it stores values (the savers,
  which refuse a Dual): :data:`NOT_APPLICABLE`. A non-dispatched function built
  from dispatched ones still runs on Duals (``np.kaiser(m, beta)``).

``tests/test_coverage_table.py`` fails when ``docs/data/coverage.json`` differs
from what this module computes (``--print`` prints it); after changing the rules,
rewrite it with::

    python tests/coverage_table.py
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import optree

import dualad
from dualad.primitive import FUNCTION_HANDLERS, NON_DIFFERENTIABLE, UFUNC_HANDLERS, Primitive
from dualad.rules.shape import ON_PRIMAL

sys.path.insert(0, str(Path(__file__).parent))
from specs import SPECS, jet_order, target  # noqa: E402

OUTPUT = Path(__file__).parent.parent / "docs" / "data" / "coverage.json"
#: The table's entry naming the versions of the libraries it was computed with.
VERSIONS = "_versions"

#: Module -> where JAX has its counterpart (the same name).
MODULES = {
    "numpy": "jax.numpy",
    "numpy.linalg": "jax.numpy.linalg",
    "numpy.fft": "jax.numpy.fft",
    "scipy.special": "jax.scipy.special",
    "scipy.linalg": "jax.scipy.linalg",
    "scipy.signal": "jax.scipy.signal",
    "scipy.integrate": "jax.scipy.integrate",
    "scipy.optimize": "jax.scipy.optimize",
    "scipy.stats": "jax.scipy.stats",
}


#: Functions with nothing to differentiate beyond the non-dispatched NumPy ones.
NOT_APPLICABLE = {
    "numpy": {"save", "savez", "savez_compressed", "savetxt"},  # refuse a Dual
    "scipy.special": {"bernoulli", "euler", "factorial2", "factorialk", "stirling2"},
    "scipy.linalg": {"dft", "hadamard", "helmert", "hilbert", "invhilbert", "invpascal",
                     "pascal"},
}


def dispatched(func: object) -> bool:
    """NumPy hands a Dual to it: a ufunc, or a function with ``__array_function__``."""
    return isinstance(func, np.ufunc) or type(func).__name__ == "_ArrayFunctionDispatcher"


def public_functions(module_name: str) -> dict[str, object]:
    """Name -> callable of a module's public functions (ufuncs, functions, and for
    scipy.stats the distribution objects); no classes, modules or constants."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or dir(module)
    found = {}
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or inspect.isclass(obj):
            continue
        distribution = type(obj).__module__.startswith("scipy.stats") and hasattr(obj, "logpdf")
        distribution = distribution or hasattr(obj, "logpmf")
        if isinstance(obj, np.ufunc) or inspect.isroutine(obj) or distribution or (
                callable(obj) and type(obj).__name__ == "_ArrayFunctionDispatcher"):
            found[name] = obj
    return found


def jax_names(module_name: str) -> set[str]:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return set()
    return {name for name in dir(module) if not name.startswith("_")}


def rows_by_function() -> dict[int, list]:
    rows: dict[int, list] = {}
    for spec in SPECS:
        try:
            func = target(spec.name)
        except AttributeError:
            continue
        rows.setdefault(id(func), []).append(spec)
    return rows


def _scipy_dispatcher(func: object) -> bool:
    """dualad's dispatcher for a SciPy function is installed in its place."""
    from dualad.rules.scipy_functions import ORIGINALS
    try:
        return func in ORIGINALS
    except TypeError:  # unhashable
        return False


def kind_of(module_name: str, name: str, func: object, rows: list) -> str:
    if name in NOT_APPLICABLE.get(module_name, ()):
        return "n/a"
    on_primal = ON_PRIMAL.get(getattr(func, "__name__", ""))
    if on_primal is not None and on_primal.kernels["numpy"] is func:
        return "value"
    handler = UFUNC_HANDLERS.get(func) if isinstance(func, np.ufunc) else None
    if handler is None and not isinstance(func, np.ufunc):
        try:
            handler = FUNCTION_HANDLERS.get(func)
        except TypeError:  # unhashable
            handler = None
    if isinstance(handler, Primitive) and not handler.differentiable:
        return "value"
    if handler is not None or rows or _scipy_dispatcher(func):
        return "rule"
    if func in NON_DIFFERENTIABLE if isinstance(func, np.ufunc) else False:
        return "value"
    if module_name.startswith("numpy") and not dispatched(func):
        return "n/a"
    return "none"


def primitive_calls(spec) -> dict:
    """The primitives the row's forward, reverse and second-order derivatives call,
    each with the values of one of its calls (None for a row that fails)."""
    from dualad.linear import LinearVar

    calls: dict = {}
    call = Primitive.__call__

    def recording(self, *args, **params):
        if self not in calls and not any(isinstance(a, LinearVar) for a in args):
            calls[self] = ([np.asarray(dualad.primal_value(a)) if isinstance(a, dualad.Dual)
                            else a for a in args], params)
        return call(self, *args, **params)

    args = spec.draw(np.random.default_rng(0), spec.shapes[0])
    every = tuple(range(len(args)))
    scalar = lambda *a: sum(np.sum(o) for o in optree.tree_leaves(spec.fun(*a))  # noqa: E731
                            if np.issubdtype(getattr(o, "dtype", np.float64), np.floating))
    floats = lambda *a: tuple(o for o in optree.tree_leaves(spec.fun(*a))  # noqa: E731
                              if np.issubdtype(getattr(o, "dtype", np.float64), np.inexact))
    Primitive.__call__ = recording
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dualad.jacfwd(spec.fun, argnums=every)(*args)
            dualad.jacrev(floats, argnums=every)(*args)
            dualad.hessian(scalar, argnums=every, mode="hyperdual")(*args)
    except Exception:  # noqa: BLE001  (a row that fails here is not green anywhere)
        return None
    finally:
        Primitive.__call__ = call
    return calls


_KERNEL_AGREES: dict = {}


def kernel_agrees(prim, args, params) -> bool:
    """The primitive's JAX kernel gives its NumPy kernel's values (one call, eagerly)."""
    if prim not in _KERNEL_AGREES:
        import jax
        from dualad_gpu.kernels import jax_kernel

        jax.config.update("jax_enable_x64", True)
        kernel = jax_kernel(prim)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = prim.kernels["numpy"](*args, **params)
                got = kernel(*(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a
                               for a in args), **params)
            _KERNEL_AGREES[prim] = all(
                np.shape(a) == np.shape(b) and np.allclose(np.asarray(a), np.asarray(b),
                                                           rtol=1e-9, atol=1e-12,
                                                           equal_nan=True)
                for a, b in zip(optree.tree_leaves(expected), optree.tree_leaves(got)))
        except Exception:  # noqa: BLE001
            _KERNEL_AGREES[prim] = False
    return _KERNEL_AGREES[prim]


def runs_on_jax(spec) -> bool:
    """Every primitive the row's derivatives call has a JAX kernel that agrees with
    its NumPy kernel, so dualad_gpu computes the same numbers."""
    calls = primitive_calls(spec)
    return calls is not None and all(kernel_agrees(prim, *call) for prim, call in calls.items())


@functools.cache
def compute() -> dict:
    import dualad_gpu  # noqa: F401  (registers the JAX kernels)

    rows = rows_by_function()
    table = {}
    for module_name, jax_module in MODULES.items():
        try:
            functions = public_functions(module_name)
        except ImportError:
            continue
        in_jax = jax_names(jax_module)
        entries = {}
        for name, func in functions.items():
            specs = rows.get(id(func), [])
            kind = kind_of(module_name, name, func, specs)
            entry = {"dualad": kind, "jax": name in in_jax}
            if kind == "rule":
                entry["tested"] = bool(specs)
                entry["jax_checked"] = any(s.jax is not None for s in specs)
                entry["dualad_gpu"] = bool(specs) and all(s.gpu and runs_on_jax(s)
                                                            for s in specs)
                entry["jet"] = bool(specs) and all(jet_order(s) >= 3 for s in specs)
            entries[name] = entry
        table[module_name] = entries
    table[VERSIONS] = {lib: importlib.metadata.version(lib) for lib in ("numpy", "scipy", "jax")}
    return table


def dumps(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    if "--print" in sys.argv:
        print(dumps(compute()), end="")
    else:
        OUTPUT.write_text(dumps(compute()))
        print(f"wrote {OUTPUT}")
