"""Primitives, the rule table, and dispatch by argument type.

A :class:`Primitive` is a named operation with one kernel per array backend and
one derivative rule. Calling a primitive looks at its arguments: plain arrays go
straight to the backend kernel; if some argument is a *boxed* value (a
:class:`~dualad.Dual`, later a reverse-mode tracer), the box with the innermost
tag interprets the call with the primitive's rule. Rules are written with
primitives, so a rule evaluated on boxes is differentiated again: that is how
nested derivatives and hyper-duals need no second formula.

The same module holds the two tables NumPy's protocols consult:
``UFUNC_HANDLERS`` (ufunc -> implementation) and ``FUNCTION_HANDLERS`` (NumPy
function -> implementation). An implementation is a primitive or a Python
function built from primitives.
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Primitive",
    "Tag",
    "EscapedDualError",
    "NeedsHost",
    "Over",
    "Boxed",
    "register_backend",
    "register_function",
    "UFUNC_HANDLERS",
    "FUNCTION_HANDLERS",
    "NON_DIFFERENTIABLE",
    "same_layout_copy",
]

#: NumPy's conversions, wrapped while a transform runs (dualad.constructors).
CONVERSIONS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")
#: NumPy's makers of new arrays, which give a Fillable in the code a transform runs.
MAKERS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
          "full_like", "eye", "identity")
#: NumPy's functions that take lists of values (a list of Duals is stacked first).
STACKERS = ("atleast_1d", "atleast_2d", "atleast_3d")
#: NumPy's predicates on types, answered for a Dual by its primal value's type.
PREDICATES = ("isscalar",)
#: SciPy's own functions, by the dispatcher that replaced each in its module
#: (dualad.rules.scipy_functions installs them; a conversion error names them).
SCIPY_ORIGINALS: dict[Callable, Callable] = {}
#: NumPy's own functions, by name (taken before any transform wraps them).
NUMPY: dict[str, Callable] = {name: getattr(np, name)
                              for name in CONVERSIONS + MAKERS + STACKERS + PREDICATES}

# Partials may be these literals; the interpreters then skip the multiply.
ONE = 1
MINUS_ONE = -1


class Over:
    """A partial written as ``1 / denominator``: applied as ``t / denominator``,
    one division instead of a reciprocal and a product (``log: Over(x)``)."""

    __slots__ = ("denominator",)

    def __init__(self, denominator: Any) -> None:
        self.denominator = denominator

    def reciprocal(self) -> Any:
        return 1.0 / self.denominator

UFUNC_HANDLERS: dict[np.ufunc, Callable] = {}
FUNCTION_HANDLERS: dict[Callable, Callable] = {}
#: The NumPy functions whose implementation holds for complex values (filled by
#: dualad.rules.complex_numbers); the others refuse them.
COMPLEX_FUNCTIONS: set[Callable] = set()
NON_DIFFERENTIABLE: set[Callable] = set()
#: NumPy functions (and ufuncs) whose implementation a user registered: their code
#: is the user's, which a replay must run on every call (dualad.replay).
USER_FUNCTIONS: set[Callable] = set()
#: Every primitive ever declared, so a backend can give each its kernel.
PRIMITIVES: list[Primitive] = []

# (array type, backend name) pairs registered by optional backends such as
# dualad_gpu; empty means every kernel call is a NumPy call.
_FOREIGN_ARRAY_TYPES: list[tuple[type, str]] = []

_tag_counter = itertools.count(1)
#: Levels set aside for the tags of a transform that starts late (Tag.reserve, within).
_RESERVED_LEVELS: contextvars.ContextVar = contextvars.ContextVar("dualad_reserved_levels",
                                                                  default=None)


class Tag:
    """The marker of one transform call.

    Every call of ``jvp``/``jacfwd``/... makes a fresh tag; a tag made later
    belongs to a transform nested inside the earlier ones, so it has a higher
    ``level``. When boxes with different tags meet, the highest level is
    processed first and the others are constants to it: that is what keeps
    perturbations of nested derivatives apart.
    """

    __slots__ = ("level", "live")

    #: False for the tag of Duals that only route NumPy calls on foreign arrays
    #: (JAX tracers) to the rule table: their tangents stay zero, so no rule runs.
    carries_derivatives = True
    #: True for the tags whose Duals carry other things than tangents and that run the
    #: rules themselves (``tag.process``): sparsity detection (dualad.sparse, patterns)
    #: and Taylor mode (dualad.taylor, the higher coefficients of a series).
    interprets = False
    #: The order of perturbation one Dual of the tag carries (ε² = 0: one; a jet's
    #: tag, dualad.taylor.JetTag, carries its Taylor series' order).
    order = 1
    #: True for global sparsity detection: values read from its Duals (primal_value)
    #: hold at one x only, and are marked so by ``opaque(value)``.
    opaque_values = False

    def __init__(self) -> None:
        reserved = _RESERVED_LEVELS.get()
        self.level = next(_tag_counter) if reserved is None else next(reserved)
        #: Set to False when the transform that made the tag returns: a Dual of
        #: a finished transform that is used again raises EscapedDualError.
        self.live = True

    def __repr__(self) -> str:
        return f"Tag({self.level})"

    @staticmethod
    def reserve() -> int:
        """A level, set aside now for tags made later by :meth:`within` (atomic under
        the GIL)."""
        return next(_tag_counter)

    @staticmethod
    def within(level: int) -> None:
        """In the current context, make the tags of the levels just above ``level``
        (``level + 2⁻²⁰``, ``+ 2·2⁻²⁰``, ...): a transform started late (a replayed
        call's interpreter taking over) stays below the transforms nested in the
        function since the level was set aside. (A million of them: a solver's
        callbacks make a transform call per step.)"""
        _RESERVED_LEVELS.set(level + (i + 1) / 2 ** 20 for i in range(2 ** 20 - 1))


class EscapedDualError(TypeError):
    """A Dual of a transform call that has already returned was used again.

    Like JAX's ``UnexpectedTracerError``: a value computed inside ``jacfwd``,
    ``grad``, ... (kept in a dict, a global or a closure) carries that call's
    perturbation, which means nothing once the call is over.
    """

    def __init__(self, tag: Tag) -> None:
        super().__init__(
            f"a Dual of a finished transform ({tag!r}) was used again. A value computed "
            "inside jacfwd/grad/hessian/... was kept (in a dict, a global, a closure or an "
            "attribute) and reused after that call returned, where its derivative means "
            "nothing. Keep only plain values across calls: store dualad.primal_value(y), "
            "or recompute the value inside each call.")


#: The thread of each transform running (list.append and remove are atomic; kept
#: by dualad.constructors).
TRANSFORMS_RUNNING: list[int] = []


class Boxed:
    """Base class of the values a primitive call must interpret (Dual, ...).

    A subclass has a ``_tag`` and a method ``_process(prim, args, params)``
    that evaluates ``prim`` on ``args`` when it is the innermost box among them.
    """

    __slots__ = ()
    _tag: Tag
    _process: Callable[[Primitive, tuple, dict], Any]
    #: True for tangents that are recorded rather than computed (reverse mode).
    records_linear = False
    #: True for the values of a replayed call (dualad.replay.live.Live).
    _replayed = False

    def _interpreted(self) -> Any:
        """The value the interpreter computes with: itself (a replayed call's value,
        once the interpreter has taken the call over: its Dual)."""
        return self

    def _apparent_class(self) -> type:
        """The class ``__class__`` gives while a transform runs (``isinstance(x,
        np.ndarray)`` asks): dualad.constructors installs its ``apparent_class``."""
        return type(self)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return self._apparent_class() if TRANSFORMS_RUNNING else type(self)


#: Functions users call directly with Duals that are neither NumPy's protocols nor
#: Dual methods (SciPy's dispatchers, ``np.c_[...]``): see :func:`entry_point`.
ENTRY_POINTS: set[Callable] = set()
#: Module-level objects an entry point takes as they are (``np.c_``, ``np.r_``): a
#: replay compares them by identity.
STATIC_OBJECTS: list = []


def entry_point(func: Callable) -> Callable:
    """``func``, called as one operation by the boxes that ask for it (a replayed
    call's values, :mod:`dualad.replay.live`), as it is otherwise."""
    import functools

    @functools.wraps(func)
    def entry(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            items = a if type(a) is tuple or type(a) is list else (a,)
            for item in items:
                if isinstance(item, Boxed) and hasattr(item, "_entry"):
                    return item._entry(func, *args, **kwargs)
        return func(*args, **kwargs)

    ENTRY_POINTS.add(func)
    return entry


class NeedsHost(TypeError):
    """A rule that runs on NumPy values on the host (SciPy's solvers, decisions on
    values) met the arrays of another backend: JAX tracers under ``dualad_gpu``,
    whose transforms then run dualad's NumPy transform on the host instead."""


def backend_of(args: Sequence) -> str:
    """Name of the array backend that should run a kernel on ``args``."""
    if _FOREIGN_ARRAY_TYPES:
        for a in args:
            for typ, name in _FOREIGN_ARRAY_TYPES:
                if isinstance(a, typ):
                    return name
    return "numpy"


class Primitive:
    """One operation of the rule table.

    Parameters
    ----------
    name:
        Name used in error messages.
    kernel:
        The NumPy implementation, called on plain arrays as
        ``kernel(*args, **params)``. Kernels for other backends are added to
        ``kernels`` under the backend's name.
    partials:
        For elementwise operations: one entry per argument, each a function
        ``(ans, *args) -> ∂ans/∂arg`` written with primitives (or ``None`` for
        an argument that is not differentiable, the literal ``1``/``-1``, or
        ``Over(d)`` for a partial ``1/d``).
        Every mode derives what it needs from this row.
    jvp:
        For everything else: ``jvp(primals, tangents, ans, **params)`` giving
        the output tangent, written with primitives and linear in the tangents.
        Tangents carry a leading seed axis and are ``None`` when structurally
        zero.
    transpose:
        For primitives linear in some arguments: the transpose rule used by
        reverse mode, ``transpose(ct, args, linear, **params)`` returning one
        cotangent per argument (``None`` for those not in ``linear``). ``ct``
        has a leading axis of cotangent seeds before the output's shape.
    linear:
        Where the primitive is linear: ``"all"`` (jointly in every argument,
        like ``add``), ``"one"`` (in any single argument, the others fixed,
        like ``multiply``), or a tuple of argument positions (``divide``: 0).
        Required with ``transpose``.
    shape_rule:
        ``shape_rule(*args, **params) -> (shape, dtype)`` of the result without
        computing it (reverse mode records linear primitives abstractly).
        Defaults to running the kernel on zero-strided stand-ins, which is
        free for views (reshape, transpose, indexing).
    nonfinite_partials:
        Set when a partial may be infinite where the function is finite
        (``sqrt`` at 0): a zero tangent then gives a zero, not ``0·∞ = nan``.
    pattern:
        How sparsity detection (:func:`dualad.jacobian_sparsity`) finds which
        inputs each output element depends on. ``None`` (the default) derives
        it from the rule; ``"dense"`` says every output element depends on
        every input element (the safe default of ``defprimitive``).
    complex_ok:
        Whether the rule (and the kernel) holds for complex numbers as written: a
        holomorphic function's partials, a ℂ-linear map's transpose. A primitive
        without it that meets complex values raises instead of giving a wrong
        derivative (see docs/conventions.md and dualad/rules/complex_numbers.py).

    A primitive with neither ``partials`` nor ``jvp`` is not differentiable:
    applied to boxes it returns its plain primal result (derivative zero).
    """

    __slots__ = ("name", "kernels", "impl", "partials", "jvp_rule", "transpose_rule",
                 "linear", "shape_rule", "nonfinite_partials", "pattern", "complex_ok",
                 "builtin", "__weakref__")

    def __init__(
        self,
        name: str,
        kernel: Callable,
        *,
        partials: Sequence[Callable | int | None] | None = None,
        jvp: Callable | None = None,
        transpose: Callable | None = None,
        linear: str | tuple[int, ...] | None = None,
        shape_rule: Callable | None = None,
        nonfinite_partials: bool = False,
        pattern: str | None = None,
        complex_ok: bool = False,
    ) -> None:
        if partials is not None and jvp is not None:
            raise ValueError(f"primitive {name!r}: give partials or jvp, not both")
        if (transpose is None) != (linear is None):
            raise ValueError(f"primitive {name!r}: a transpose rule needs linear=, and "
                             "linear= needs a transpose rule")
        self.name = name
        self.kernels = {"numpy": kernel}
        # What runs on plain arrays: the NumPy kernel itself, until another array
        # backend registers and a dispatch by argument type becomes necessary.
        self.impl = kernel if not _FOREIGN_ARRAY_TYPES else self._dispatch
        self.partials = tuple(partials) if partials is not None else None
        self.jvp_rule = jvp
        self.transpose_rule = transpose
        self.linear = linear
        self.shape_rule = shape_rule
        self.nonfinite_partials = nonfinite_partials
        self.pattern = pattern
        self.complex_ok = complex_ok
        #: Whether dualad declared it (a user's kernel and rule are the user's code).
        self.builtin = _declared_by_dualad()
        PRIMITIVES.append(self)

    def _dispatch(self, *args: Any, **params: Any) -> Any:
        backend = backend_of(args)
        if backend == "numpy" and params:  # an index may hold another backend's array
            backend = backend_of([item for value in params.values()
                                  for item in (value if isinstance(value, tuple) else (value,))])
        kernel = self.kernels.get(backend)
        if kernel is None:
            raise TypeError(f"primitive {self.name!r} has no {backend} kernel; give it one "
                            f"with dualad.primitive.register_backend")
        return kernel(*args, **params)

    @property
    def differentiable(self) -> bool:
        return self.partials is not None or self.jvp_rule is not None

    def __call__(self, *args: Any, **params: Any) -> Any:
        top = None
        level = 0
        replayed = False
        for a in args:
            if isinstance(a, Boxed):
                replayed = replayed or a._replayed
                if a._tag.level > level:
                    top, level = a, a._tag.level
        if top is None:
            return self.impl(*args, **params)
        if replayed and not top._replayed:
            # A replayed call's value the interpreter has taken over is its Dual, to
            # the rules too (a HyperDual's fused chain rule, as in an interpreted call).
            args = tuple(a._interpreted() if isinstance(a, Boxed) else a for a in args)
        return top._process(self, args, params)

    def __repr__(self) -> str:
        return f"<dualad primitive {self.name}>"


#: Per backend, what gives primitives declared later their kernels (``refresh=``).
_BACKEND_REFRESH: dict[str, Callable[[], None]] = {}


def refresh_backends() -> None:
    """Give the primitives declared since (scipy.special's, on its import) the kernels of
    every backend registered so far."""
    for refresh in list(_BACKEND_REFRESH.values()):
        refresh()


def register_backend(name: str, array_type: type,
                     kernels: dict[Primitive, Callable],
                     refresh: Callable[[], None] | None = None) -> None:
    """Run primitives on another array library (``dualad_gpu`` registers JAX).

    ``array_type`` identifies that library's arrays (``jax.Array``, which
    tracers are too); ``kernels`` maps each primitive to its implementation
    there. A primitive called with such an array uses that kernel; NumPy-only
    calls keep their NumPy kernel. ``refresh`` registers the kernels again, for
    primitives declared later (:func:`refresh_backends`).
    """
    if refresh is not None:
        _BACKEND_REFRESH[name] = refresh
    if all(name != known for _, known in _FOREIGN_ARRAY_TYPES):
        _FOREIGN_ARRAY_TYPES.append((array_type, name))
    for prim, kernel in kernels.items():
        prim.kernels[name] = kernel
    for prim in PRIMITIVES:
        prim.impl = prim._dispatch


def register_function(numpy_function: Callable, implementation: Callable) -> Callable:
    """Make ``numpy_function`` accept Duals by calling ``implementation``.

    ``implementation`` receives the same arguments as the NumPy function and
    must be written with functions dualad already differentiates (NumPy calls
    on Duals, operators, primitives). It is used by ``__array_function__`` (or
    ``__array_ufunc__`` for a ufunc) whenever an argument is a Dual.

    Examples
    --------
    ``np.emath.arccos`` has no rule (its values turn complex outside [-1, 1]); for
    code that only calls it inside, ``np.arccos`` is the right rule:

    >>> import numpy as np, dualad
    >>> _ = dualad.register_function(np.emath.arccos, lambda x: np.arccos(x))
    >>> float(dualad.derivative(lambda x: np.emath.arccos(x))(0.0))
    -1.0
    """
    table = UFUNC_HANDLERS if isinstance(numpy_function, np.ufunc) else FUNCTION_HANDLERS
    table[numpy_function] = implementation
    if not _declared_by_dualad():
        USER_FUNCTIONS.add(numpy_function)
    return implementation


def _declared_by_dualad() -> bool:
    """Whether the caller of the caller is dualad's own rule table (not a user's
    ``defprimitive``, ``custom_jvp`` or ``register_function``)."""
    import sys

    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__") in ("dualad.primitive",
                                                                      "dualad.custom"):
        if frame.f_globals.get("__name__") == "dualad.custom":
            return False
        frame = frame.f_back
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return module == "dualad" or module.startswith("dualad.")


def implements(*numpy_functions: Callable) -> Callable[[Callable], Callable]:
    """Decorator form of :func:`register_function` for several NumPy functions."""

    def decorate(implementation: Callable) -> Callable:
        for f in numpy_functions:
            register_function(f, implementation)
        return implementation

    return decorate


def qualified_name(func: Any) -> str:
    """The name by which a user reaches ``func``: ``numpy.fft.rfft``, ``numpy.polyval``.

    The shortest public path (no component starting with ``_``) among the
    modules already imported whose namespace holds ``func`` itself, so that
    the name printed evaluates back to the function: NumPy's submodules
    (``numpy.fft``, ``numpy.linalg``, ``numpy.random``, ``numpy.emath``, ...),
    ``scipy.special`` for its ufuncs (which carry no ``__module__``), and any
    other library. An internal function that no public module exports keeps
    its full module path (``scipy.special._ufuncs._riemann_zeta``).
    """
    import inspect
    import sys

    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return repr(func)
    # np.random.normal is a bound method of the global RandomState: a new
    # object at each attribute access, equal to (not identical with) func.
    bound = inspect.ismethod(func) or (inspect.isbuiltin(func)
                                       and not inspect.ismodule(getattr(func, "__self__", None))
                                       and getattr(func, "__self__", None) is not None)

    def holds(module: Any) -> bool:
        try:
            found = vars(module).get(name)  # vars: no lazy __getattr__ runs
        except TypeError:
            return False
        return found is func or (bound and found is not None and found == func)

    def public(path: str) -> bool:
        return not any(part.startswith("_") for part in path.split("."))

    def shortest(paths: list[str]) -> str:
        # A function that names no module (scipy.special's ufuncs) by NumPy's or SciPy's
        # name before another library's that imports it (lmfit.lineshapes.wofz).
        return min(paths, key=lambda path: (library is None and path.split(".")[0] not in
                                            ("numpy", "scipy"), path.count("."), path))

    module = getattr(func, "__module__", None)
    module = module if isinstance(module, str) else ""
    library = module.split(".")[0] if module else None
    # Every imported module of the function's own library, or of any library
    # when the function names none (scipy.special's ufuncs), under its own name
    # and under the names its parent gives it (numpy.emath is numpy.lib.scimath).
    paths: list[tuple[str, Any]] = []
    for path, mod in list(sys.modules.items()):
        if not inspect.ismodule(mod) or (library is not None
                                         and path.split(".")[0] != library):
            continue
        paths.append((path, mod))
        for attr, sub in list(vars(mod).items()):
            if inspect.ismodule(sub) and f"{path}.{attr}" != sub.__name__ \
                    and sub.__name__.split(".")[0] == path.split(".")[0]:
                paths.append((f"{path}.{attr}", sub))
    found = [path for path, mod in paths if holds(mod)]
    if any(public(path) for path in found):
        return f"{shortest([path for path in found if public(path)])}.{name}"
    if found:
        return f"{shortest(found)}.{name}"
    private = [path for path, mod in list(sys.modules.items())
               if inspect.ismodule(mod) and holds(mod)]
    if private:
        return f"{shortest(private)}.{name}"
    qualname = getattr(func, "__qualname__", name)
    qualname = qualname if isinstance(qualname, str) else name
    owner = ".".join(part for part in module.split(".") if part and not part.startswith("_"))
    return f"{owner}.{qualname}" if owner else qualname


def missing_rule_error(func: Any) -> TypeError:
    """The TypeError for a NumPy function that has no dualad rule, with the fix.

    The function is named as the user types it (:func:`qualified_name`). A
    ufunc is elementwise, so the fix shown first is a ``defprimitive`` with one
    partial derivative per argument; for any other function it is one line of
    ``register_function`` (an implementation written with functions dualad
    knows), then a primitive with a ``jvp`` rule.
    """
    import sys

    name = qualified_name(func)
    # A name that is no Python expression (np.frompyfunc's "<lambda> (vectorized)").
    code_name = name if all(p.isidentifier() for p in name.split(".")) else "f"
    subject = name
    if any(part.startswith("_") for part in name.split(".")[:-1]):
        # An internal function (scipy.special.zeta calls _riemann_zeta): also name
        # the public function of its library that called it, the one the user typed.
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith("dualad"):
            frame = frame.f_back
        if frame is not None:
            caller = frame.f_globals.get(frame.f_code.co_name)
            library = frame.f_globals.get("__name__", "").split(".")[0]
            if getattr(caller, "__code__", None) is frame.f_code and \
                    library == name.split(".")[0]:
                subject = f"{qualified_name(caller)} calls {name}, which"
    head = f"{subject} has no dualad derivative rule, so it cannot be applied to a Dual.\n"
    primal = ("If its result does not depend smoothly on the input, call it on the value "
              "without the derivative: dualad.primal_value(x) instead of x.")
    if isinstance(func, np.ufunc):
        args = "x" if func.nin == 1 else ", ".join(f"x{i + 1}" for i in range(func.nin))
        row = ", ".join(f"lambda ans, {args}: ..." for _ in range(func.nin))
        if func.nout == 1:
            partials = f"partials=[{row}],  # d ans / d each argument"
        else:
            rows = ", ".join(f"[{row}]" for _ in range(func.nout))
            partials = (f"partials=[{rows}],  # per output: d ans / d each argument\n"
                        f"        outputs={func.nout},")
        return TypeError(
            head
            + f"It is elementwise: declare it a primitive with one partial derivative per "
              f"argument (docs/adding-a-primitive.md):\n\n"
              f"    dualad.defprimitive(\n"
              f"        {func.__name__!r}, {code_name},\n"
              f"        {partials}\n"
              f"        numpy_function={code_name})\n\n"
              f"If it is built from functions dualad knows, register that implementation:\n"
              f"    dualad.register_function({code_name}, lambda {args}: ...)\n"
            + primal)
    return TypeError(
        head
        + f"If it can be written with functions dualad knows, register that implementation "
          f"(docs/adding-a-primitive.md):\n\n"
          f"    dualad.register_function({code_name}, lambda *args, **kwargs: ...)\n\n"
          f"Otherwise declare a primitive with its own rule: dualad.defprimitive("
          f"{getattr(func, '__name__', 'f')!r}, {code_name}, jvp=..., "
          f"numpy_function={code_name}).\n"
        + primal)


def same_layout_copy(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` with its strides (the memory of a reversed or strided view)."""
    if x.flags.c_contiguous or x.size == 0:
        return x.copy()
    low = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + x.itemsize
    memory = np.empty(high - low, np.uint8)
    copy = np.ndarray(x.shape, x.dtype, buffer=memory, offset=-low, strides=x.strides)
    copy[...] = x
    return copy
