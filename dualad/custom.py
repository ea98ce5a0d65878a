"""Adding to the rule table: ``defprimitive`` and ``custom_jvp``.

One registration makes an operation work in every mode — Duals, batched
seeds, hyper-duals, reverse mode and ``dualad_gpu`` — because every mode
consumes the same rule.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .pytrees import tree_leaves, tree_map
from . import ops
from .dual import Dual, without_tag
from .primitive import (_FOREIGN_ARRAY_TYPES, Boxed, Primitive, Tag, backend_of,
                        register_function)

__all__ = ["defprimitive", "custom_jvp"]


def _arity(kernel: Callable) -> int | None:
    if isinstance(kernel, np.ufunc):
        return kernel.nin
    try:
        params = inspect.signature(kernel).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params)


def defprimitive(name: str, kernel: Callable, *, partials: Sequence | None = None,
                 jvp: Callable | None = None, transpose: Callable | None = None,
                 linear: str | tuple[int, ...] | None = None,
                 jax_kernel: Callable | None = None,
                 numpy_function: Callable | None = None, outputs: int = 1,
                 pattern: str = "dense", complex_ok: bool = False) -> Any:
    """Declare a new primitive; it then works in every mode of dualad.

    Parameters
    ----------
    name:
        For error messages.
    kernel:
        The NumPy implementation, ``kernel(*arrays, **params)``.
    partials:
        For an elementwise operation: one entry per array argument, each
        ``(ans, *args) -> ∂ans/∂arg`` written with NumPy calls or operators (so
        it can be differentiated again), or ``None`` for an argument without a
        derivative. Under ``dualad_gpu`` the rule's JAX arrays arrive as
        Duals, so its NumPy calls compile too.
    jvp:
        Otherwise: ``jvp(primals, tangents, ans, **params)`` returning the
        output's tangent, linear in the tangents, written with NumPy calls.
        Tangents have a leading axis of K seeds and are ``None`` when zero.
    transpose, linear:
        For an operation linear in some arguments whose JVP applies the
        operation itself to tangents: its transpose rule and where it is linear
        (see :class:`~dualad.Primitive`). Reverse mode needs them.
    jax_kernel:
        The ``jax.numpy`` implementation, used by ``dualad_gpu``. Without it, the
        NumPy kernel runs there on Duals, so that its NumPy calls reach the JAX
        kernels of the rule table (this needs a kernel written with functions
        dualad knows).
    numpy_function:
        A NumPy function (or ufunc) that should run this primitive when given a
        Dual, e.g. ``scipy.special.struve``.
    pattern:
        For sparsity detection (:func:`dualad.jacobian_sparsity`) of a primitive
        with a ``jvp`` rule: ``"dense"`` (the safe default) makes every output
        element depend on every input element; ``"rule"`` derives the pattern
        from the ``jvp`` rule, which must then be written with NumPy calls
        linear in the tangents. An elementwise primitive (``partials``) always
        has the elementwise pattern.
    complex_ok:
        The rule holds for complex values as written (the partials of a
        holomorphic function, the plain transpose of a ℂ-linear map; see
        docs/conventions.md). Without it, complex values raise a TypeError.
    outputs:
        For a kernel returning a tuple of ``outputs`` arrays: ``partials`` is
        then one row per output (each partial taking that output as ``ans``),
        and ``jvp`` receives the tuple of outputs as ``ans`` and returns a
        tuple of tangents. Each output becomes a primitive of its own (the
        kernel runs once per output differentiated).

    Returns
    -------
    Primitive
        The :class:`~dualad.Primitive`; call it like the kernel. With
        ``outputs`` > 1, a function returning the tuple of outputs.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> softplus = dualad.defprimitive(
    ...     "softplus", lambda x: np.logaddexp(x, 0.0),
    ...     partials=[lambda ans, x: 1.0 / (1.0 + np.exp(-x))])
    >>> dualad.grad(lambda x: np.sum(softplus(x)))(np.array([0.0, 2.0]))
    array([0.5       , 0.88079708])
    >>> float(dualad.second_derivative(softplus)(0.0))
    0.25
    """
    if partials is None and jvp is None:
        raise ValueError(f"defprimitive({name!r}): give partials (elementwise) or jvp; an "
                         "operation without a derivative needs neither — use a plain function")
    if pattern not in ("dense", "rule"):
        raise ValueError(f"defprimitive({name!r}): pattern must be 'dense' or 'rule', got "
                         f"{pattern!r}")
    if outputs > 1:
        if complex_ok:
            raise ValueError(f"defprimitive({name!r}): complex_ok is for single outputs")
        return _multiple_outputs(name, kernel, partials, jvp, jax_kernel, numpy_function,
                                 outputs, pattern)
    if transpose is not None and linear is None:
        raise ValueError(f"defprimitive({name!r}): a transpose rule needs linear= (the "
                         "arguments in which the operation is linear)")
    if linear is not None and transpose is None:
        raise ValueError(f"defprimitive({name!r}): linear= needs a transpose rule for "
                         "reverse mode")
    if partials is not None:
        arity = _arity(kernel)
        if arity is not None and len(partials) != arity:
            raise ValueError(f"defprimitive({name!r}): the kernel takes {arity} array "
                             f"arguments but {len(partials)} partials were given")
        for i, p in enumerate(partials):
            if p is not None and not callable(p):
                raise TypeError(f"defprimitive({name!r}): partial {i} must be a function "
                                f"(ans, *args) -> derivative, or None")
    shape_rule = _elementwise_shape if partials is not None else None
    if partials is not None:
        partials = [p if p is None else _on_any_backend(p) for p in partials]
    prim = Primitive(name, kernel, partials=partials,
                     jvp=None if jvp is None else _shape_checked(name, _on_any_backend(jvp)),
                     transpose=transpose, linear=linear,
                     shape_rule=shape_rule if linear else None, complex_ok=complex_ok,
                     pattern="dense" if jvp is not None and pattern == "dense" else None)
    # Without a JAX kernel, the NumPy one runs on JAX arrays through the rule table.
    prim.kernels["jax"] = jax_kernel if jax_kernel is not None else _through_duals(kernel)
    if _FOREIGN_ARRAY_TYPES:
        prim.impl = prim._dispatch
    if numpy_function is not None:
        register_function(numpy_function, prim)
    return prim


def _multiple_outputs(name, kernel, partials, jvp, jax_kernel, numpy_function, outputs,
                      pattern):
    """One primitive per output of a kernel returning a tuple."""
    if partials is not None and len(partials) != outputs:
        raise ValueError(f"defprimitive({name!r}): {outputs} outputs need {outputs} rows of "
                         f"partials, got {len(partials)}")

    def declare(i):
        def output_jvp(primals, tangents, ans, **params):
            tangents_out = jvp(primals, tangents, kernel(*primals, **params), **params)
            if len(tangents_out) != outputs:
                raise ValueError(f"the jvp rule of {name!r} returned {len(tangents_out)} "
                                 f"tangents for {outputs} outputs")
            return tangents_out[i]

        return defprimitive(
            f"{name}[{i}]", lambda *args, **params: kernel(*args, **params)[i],
            partials=None if partials is None else partials[i],
            jvp=None if jvp is None else output_jvp,
            jax_kernel=None if jax_kernel is None else (
                lambda *args, **params: jax_kernel(*args, **params)[i]), pattern=pattern)

    parts = [declare(i) for i in range(outputs)]

    def multi(*args, **params):
        return tuple(part(*args, **params) for part in parts)

    multi.__name__ = name
    multi.outputs = tuple(parts)
    if numpy_function is not None:
        register_function(numpy_function, multi)
    return multi


def _through_duals(kernel: Callable) -> Callable:
    """``kernel`` for arrays NumPy cannot take (JAX tracers): its arguments become
    Duals with one zero seed, so its NumPy calls dispatch to the rule table."""

    def run(*args, **params):
        tag = _KernelTag()
        out = kernel(*(_zero_seed(a, tag) for a in args), **params)
        if isinstance(out, tuple):
            return tuple(without_tag(o, tag) for o in out)
        return without_tag(out, tag)

    return run


class _KernelTag(Tag):
    """The tag of :func:`_zero_seed` Duals: values, not perturbations."""

    __slots__ = ()
    carries_derivatives = False


def _zero_seed(a: Any, tag: _KernelTag) -> Dual:
    """``a`` as a Dual of ``tag`` with one zero seed: NumPy calls on it reach the
    rule table, and so the kernels of ``a``'s backend."""
    return Dual._new(a, ops.reshape(a * 0, shape=(1,) + tuple(np.shape(a))), tag)


def _on_any_backend(rule: Callable) -> Callable:
    """``rule`` (a partial or a JVP written with NumPy calls) for JAX arrays too:
    they reach it as :func:`_zero_seed` Duals, whose NumPy calls dispatch to the
    rule table and so to JAX's kernels. NumPy arrays reach it unchanged."""

    def run(*args, **params):
        leaves = tree_leaves(args)
        if backend_of(leaves) == "numpy":
            return rule(*args, **params)
        tag = _KernelTag()
        args = tree_map(
            lambda a: _zero_seed(a, tag) if backend_of((a,)) != "numpy" else a, args)
        return tree_map(lambda out: without_tag(out, tag), rule(*args, **params))

    return functools.wraps(rule)(run)


def _shape_checked(name: str, jvp: Callable) -> Callable:
    """``jvp``, refusing a tangent of the wrong shape at its first use."""

    def checked(primals, tangents, ans, **params):
        t_out = jvp(primals, tangents, ans, **params)
        if t_out is None:
            return None
        seeds = next(t.shape[0] for t in tangents if t is not None)
        expected = (seeds,) + tuple(np.shape(_value(ans)))
        if tuple(t_out.shape) != expected:
            raise ValueError(f"the jvp rule of {name!r} returned a tangent of shape "
                             f"{tuple(t_out.shape)}; expected {expected} (the seed axis, "
                             "then the output's shape)")
        return t_out

    return checked


def _elementwise_shape(*args, **params):
    from .rules.elementwise import broadcast_shape_rule

    return broadcast_shape_rule(*args, **params)


class custom_jvp:
    """A function with a derivative rule of its own, used in every mode.

    The interface is JAX's: decorate the function, then register its rule
    with ``@f.defjvp``; the rule takes ``(primals, tangents)`` — tuples, each
    tangent of its primal's shape — and returns ``(primal_out, tangent_out)``.
    With ``nondiff_argnums`` the rule takes those arguments first, as in JAX:
    ``rule(*nondiff_args, primals, tangents)``.
    Write the rule with NumPy calls, linear in the tangents: dualad evaluates it
    on Duals (forward, batched seeds one at a time), on Duals of Duals (second
    derivatives, so the rule itself gets differentiated) and on recorded
    tangents (reverse mode) — unlike JAX, where a ``custom_vjp`` function
    cannot be differentiated in forward mode. Under ``dualad_gpu`` the function
    and its rule run on Duals over JAX arrays, so their NumPy calls compile.

    Parameters
    ----------
    fun:
        The function; its positional arguments are arrays.
    nondiff_argnums:
        Positions of arguments that are not differentiated (static values).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> @dualad.custom_jvp
    ... def log1pexp(x):
    ...     return np.log1p(np.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t / (1.0 + np.exp(-x))   # not exp(x) / (1 + exp(x))
    >>> float(dualad.derivative(log1pexp)(700.0))
    1.0
    >>> float(dualad.grad(log1pexp)(0.0)), float(dualad.second_derivative(log1pexp)(0.0))
    (0.5, 0.25)
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.rule: Callable | None = None
        self._primitive: Primitive | None = None

    def defjvp(self, rule: Callable) -> Callable:
        """Register ``rule(primals, tangents) -> (primal_out, tangent_out)``."""
        self.rule = rule
        self._primitive = Primitive(
            getattr(self.fun, "__name__", "custom_jvp"), self._kernel, jvp=self._jvp)
        self._primitive.kernels["jax"] = _through_duals(self._kernel)
        if _FOREIGN_ARRAY_TYPES:
            self._primitive.impl = self._primitive._dispatch
        return rule

    def _kernel(self, *args, static=()):
        return self.fun(*_merge(args, static, self.nondiff_argnums))

    def _jvp(self, primals, tangents, ans, static=()):
        seeds = next(t.shape[0] for t in tangents if t is not None)
        out_shape = (1,) + tuple(np.shape(_value(ans)))
        tag = None
        if backend_of(primals) != "numpy":  # JAX arrays: the rule's NumPy calls go through Duals
            tag = _KernelTag()
            primals = tuple(_zero_seed(p, tag) for p in primals)
        per_seed = []
        for k in range(seeds):  # the rule sees tangents of the primals' shapes
            ts = tuple(_zeros_like(p) if t is None else ops.getitem(t, index=(k,))
                       for p, t in zip(primals, tangents))
            _, t_out = self.rule(*static, tuple(primals), ts)
            t_out = without_tag(t_out, tag)
            if not hasattr(t_out, "reshape"):
                t_out = np.asarray(t_out)
            if tuple(t_out.shape) != out_shape[1:]:
                raise ValueError(f"the jvp rule of {self.__name__} returned a tangent of "
                                 f"shape {tuple(t_out.shape)}; expected the output's "
                                 f"shape {out_shape[1:]}")
            per_seed.append(ops.reshape(t_out, shape=out_shape))
        return per_seed[0] if seeds == 1 else ops.concatenate(*per_seed, axis=0)

    def __call__(self, *args: Any) -> Any:
        if self._primitive is None:
            raise TypeError(f"custom_jvp function {self.__name__} has no rule yet: "
                            "register one with @f.defjvp")
        static = tuple(args[i] for i in self.nondiff_argnums)
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        if not any(isinstance(a, Boxed) for a in diff):
            return self.fun(*args)
        return self._primitive(*diff, static=static)


def _merge(diff: tuple, static: tuple, positions: tuple) -> tuple:
    """The full argument tuple from the differentiated and the static arguments."""
    args, diff_iter, static_iter = [], iter(diff), iter(static)
    for i in range(len(diff) + len(static)):
        args.append(next(static_iter) if i in positions else next(diff_iter))
    return tuple(args)


def _value(x: Any) -> Any:
    while isinstance(x, Boxed):
        x = x.primal
    return x


def _zeros_like(primal: Any) -> np.ndarray:
    value = _value(primal)
    return np.zeros(np.shape(value), getattr(value, "dtype", np.float64))
