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

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Primitive",
    "Tag",
    "Over",
    "Boxed",
    "register_backend",
    "register_function",
    "UFUNC_HANDLERS",
    "FUNCTION_HANDLERS",
    "NON_DIFFERENTIABLE",
]

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
NON_DIFFERENTIABLE: set[Callable] = set()
#: Every primitive ever declared, so a backend can give each its kernel.
PRIMITIVES: list[Primitive] = []

# (array type, backend name) pairs registered by optional backends such as
# dualad_gpu; empty means every kernel call is a NumPy call.
_FOREIGN_ARRAY_TYPES: list[tuple[type, str]] = []

_tag_counter = itertools.count(1)


class Tag:
    """The marker of one transform call.

    Every call of ``jvp``/``jacfwd``/... makes a fresh tag; a tag made later
    belongs to a transform nested inside the earlier ones, so it has a higher
    ``level``. When boxes with different tags meet, the highest level is
    processed first and the others are constants to it: that is what keeps
    perturbations of nested derivatives apart.
    """

    __slots__ = ("level",)

    #: False for the tag of Duals that only route NumPy calls on foreign arrays
    #: (JAX tracers) to the rule table: their tangents stay zero, so no rule runs.
    carries_derivatives = True

    def __init__(self) -> None:
        self.level = next(_tag_counter)  # atomic under the GIL

    def __repr__(self) -> str:
        return f"Tag({self.level})"


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

    A primitive with neither ``partials`` nor ``jvp`` is not differentiable:
    applied to boxes it returns its plain primal result (derivative zero).
    """

    __slots__ = ("name", "kernels", "impl", "partials", "jvp_rule", "transpose_rule",
                 "linear", "shape_rule", "nonfinite_partials", "__weakref__")

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
        for a in args:
            if isinstance(a, Boxed) and a._tag.level > level:
                top, level = a, a._tag.level
        if top is None:
            return self.impl(*args, **params)
        return top._process(self, args, params)

    def __repr__(self) -> str:
        return f"<dualad primitive {self.name}>"


def register_backend(name: str, array_type: type,
                     kernels: dict[Primitive, Callable]) -> None:
    """Run primitives on another array library (``dualad_gpu`` registers JAX).

    ``array_type`` identifies that library's arrays (``jax.Array``, which
    tracers are too); ``kernels`` maps each primitive to its implementation
    there. A primitive called with such an array uses that kernel; NumPy-only
    calls keep their NumPy kernel.
    """
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
    >>> import numpy as np, dualad
    >>> _ = dualad.register_function(
    ...     np.ptp, lambda a, axis=None: np.max(a, axis) - np.min(a, axis))
    >>> dualad.jacfwd(np.ptp)(np.array([3.0, 1.0, 2.0]))
    array([ 1., -1.,  0.])
    """
    table = UFUNC_HANDLERS if isinstance(numpy_function, np.ufunc) else FUNCTION_HANDLERS
    table[numpy_function] = implementation
    return implementation


def implements(*numpy_functions: Callable) -> Callable[[Callable], Callable]:
    """Decorator form of :func:`register_function` for several NumPy functions."""

    def decorate(implementation: Callable) -> Callable:
        for f in numpy_functions:
            register_function(f, implementation)
        return implementation

    return decorate


def qualified_name(func: Any) -> str:
    """``numpy.linalg.solve``-style name of a NumPy function or ufunc."""
    name = getattr(func, "__name__", repr(func))
    module = getattr(func, "__module__", None)
    if isinstance(func, np.ufunc) and module in (None, "numpy._core.umath"):
        module = "numpy" if getattr(np, name, None) is func else "scipy.special"
    if module and module.startswith("numpy.linalg"):
        module = "numpy.linalg"
    elif module and module.startswith("numpy") and module != "numpy":
        module = "numpy"
    return f"{module}.{name}" if module else name


def missing_rule_error(func: Any) -> TypeError:
    """The TypeError for a NumPy function that has no dualad rule, with the fix."""
    name = qualified_name(func)
    short = getattr(func, "__name__", "f")
    return TypeError(
        f"{name} has no dualad derivative rule, so it cannot be applied to a Dual.\n"
        f"Give it one by declaring a primitive (docs/adding-a-primitive.md):\n\n"
        f"    dualad.defprimitive(\n"
        f"        {short!r}, {name},\n"
        f"        partials=[lambda ans, x: ...],  # elementwise: dans/dx for each argument\n"
        f"        # or jvp=lambda primals, tangents, ans: ...,\n"
        f"        numpy_function={name})\n\n"
        f"If it is built from functions dualad knows, register that implementation:\n"
        f"    dualad.register_function({name}, lambda *args, **kw: ...)\n"
        f"If its result does not depend smoothly on the input, call it on the primal "
        f"value instead: {name}(dualad.primal_value(x))."
    )
