"""The Dual array: a primal array and a tangent array with a seed axis.

``Dual(primal, tangent)`` stands for ``primal + tangent·ε`` with ``ε² = 0``.
The tangent has shape ``(K, *primal.shape)``: K tangent directions ("seeds")
carried through one evaluation, so one ufunc or one BLAS call serves all K.
A tangent of ``None`` is a structural zero and costs nothing.

Every operation on a Dual is a call of a :class:`~dualad.primitive.Primitive`;
``_process`` below is the forward-mode interpreter of the rule table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .fillable import Fillable
from .primitive import (COMPLEX_FUNCTIONS, FUNCTION_HANDLERS, UFUNC_HANDLERS, Boxed,
                        EscapedDualError, Primitive, Tag, backend_of, missing_rule_error,
                        qualified_name)
from .pytrees import tree_map

__all__ = ["Dual", "primal_value"]


#: The array namespace of Duals (``Dual.__array_namespace__``): put here by the rule
#: table (dualad.rules.scipy_functions) when it loads.
ARRAY_NAMESPACE: list[Any] = []


class Dual(Boxed):
    """An array of dual numbers ``primal + ε·tangent`` (forward-mode AD).

    Parameters
    ----------
    primal:
        Array-like of real or complex floats (ints and bools become float64).
    tangent:
        Array-like of the primal's shape, or, with ``batched=True``, of shape
        ``(K, *primal.shape)`` for K tangent directions. ``None`` is a zero
        tangent.
    batched:
        Whether ``tangent`` has a leading seed axis.
    tag:
        The perturbation's :class:`~dualad.primitive.Tag`; a fresh one if
        omitted. Transforms make tags themselves.

    Attributes
    ----------
    primal:
        The value, an ndarray (or a Dual of an outer tag when nested).
    tangent:
        Shape ``(K, *primal.shape)``, or ``None`` (structural zero).

    Examples
    --------
    >>> import numpy as np
    >>> from dualad import Dual
    >>> x = Dual(np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    >>> y = np.sin(x) * 2.0
    >>> y.primal
    array([0.        , 1.68294197])
    >>> y.tangent            # one seed: shape (1, 2)
    array([[2.        , 1.08060461]])
    """

    # _viewed: (the Dual this is a NumPy view of, the function making it from that
    # Dual); _viewers: weak references to the views taken of this Dual. Both are
    # set only for views (left unset on the hot path: read with getattr).
    __slots__ = ("primal", "tangent", "_tag", "_viewed", "_viewers", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, primal: Any, tangent: Any = None, *, batched: bool = False,
                 tag: Tag | None = None) -> None:
        primal = as_float_array(primal, complex_ok=True)
        if tangent is not None:
            tangent = as_float_array(tangent, primal.dtype, complex_ok=True)
            if not batched:
                check_tangent_shape(primal.shape, tangent.shape)
                tangent = tangent[np.newaxis]
            else:
                check_tangent_shape(primal.shape, tangent.shape[1:], seeds=True)
        self.primal = primal
        self.tangent = tangent
        self._tag = tag if tag is not None else Tag()

    @classmethod
    def _new(cls, primal: Any, tangent: Any, tag: Tag) -> Dual:
        """Construct without checks (the hot path)."""
        self = object.__new__(cls)
        self.primal = primal
        self.tangent = tangent
        self._tag = tag
        return self

    def _wrap(self, primal: Any, tangent: Any) -> Dual:
        """A result of an operation on ``self``: a Dual of the same tag (and kind)."""
        return Dual._new(primal, tangent, self._tag)

    @property
    def tag(self) -> Tag:
        """The tag of the transform this perturbation belongs to."""
        return self._tag

    # -- the forward-mode interpreter --------------------------------------

    def _process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        tag = self._tag
        if not tag.live:
            raise EscapedDualError(tag)
        primals = []
        tangents = []
        seeded = nested = False
        for a in args:
            if isinstance(a, Boxed):
                if a._tag is tag:
                    primal, tangent = a.primal, a.tangent
                    primals.append(primal)
                    tangents.append(tangent)
                    seeded = seeded or tangent is not None
                    nested = nested or isinstance(primal, Boxed)
                    continue
                nested = True
            primals.append(a)
            tangents.append(None)
        # Primals that hold no boxes go straight to the kernel.
        ans = prim(*primals, **params) if nested else prim.impl(*primals, **params)
        if not seeded:
            return ans
        if not tag.carries_derivatives:  # a value in Dual's clothing: no rule to run
            return self._wrap(ans, _ops.reshape(ans * 0, shape=(1,) + tuple(np.shape(ans))))
        if tag.interprets:  # sparsity detection, Taylor mode: the tag runs the rule
            return tag.process(self, prim, primals, tangents, ans, params)
        if prim.partials is not None:
            t_out = elementwise_jvp(prim, primals, tangents, ans)
        elif prim.jvp_rule is not None:
            t_out = prim.jvp_rule(primals, tangents, ans, **params)
        else:
            return ans
        if t_out is None:
            return ans
        if t_out.dtype != ans.dtype:  # NumPy's promotion of the primals decides
            if (ans.dtype.kind == "c" or t_out.dtype.kind == "c") and not prim.complex_ok:
                raise complex_error(prim.name)
            t_out = _ops.convert(t_out, dtype=ans.dtype)
        elif t_out.dtype.kind == "c" and not prim.complex_ok:
            raise complex_error(prim.name)
        return self._wrap(ans, t_out)

    # -- array attributes ----------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.primal.shape

    @property
    def ndim(self) -> int:
        return self.primal.ndim

    @property
    def size(self) -> int:
        return self.primal.size

    @property
    def dtype(self) -> np.dtype:
        return self.primal.dtype

    @property
    def seeds(self) -> int:
        """K, the number of tangent directions (0 for a structural zero)."""
        return 0 if self.tangent is None else self.tangent.shape[0]

    @property
    def T(self) -> Dual:
        return self.__array_function__(np.transpose, (), (self,), {})

    @property
    def mT(self) -> Dual:
        return self.__array_function__(np.swapaxes, (), (self, -1, -2), {})

    @property
    def real(self) -> Dual:
        return np.real(self)

    @property
    def imag(self) -> Any:
        return np.imag(self)

    def __len__(self) -> int:
        return len(self.primal)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"Dual(primal={self.primal!r}, tangent={self.tangent!r})"

    # -- conversions that would lose the derivative --------------------------

    def __array__(self, dtype=None, copy=None):
        if dtype is not None:
            dtype = as_dtype(dtype)
        if dtype is None or dtype == object:
            # np.array([y[1], -y[0]]): an object array of 0-d Duals, one Dual again at the
            # first dualad operation that meets it; array Duals for np.vectorize and a
            # plain array's a.dot(x) only: a library converting an array gets the error.
            if self.ndim == 0 or inside_vectorize():
                return elements(self)
            from .constructors import method_operand
            if (objects := method_operand(self)) is not None:
                return objects
        elif dtype.kind in "biu":  # piecewise constant: as int(x), astype(int)
            return np.asarray(primal_value(self), dtype=dtype)
        raise conversion_error()

    def __float__(self) -> float:
        raise TypeError(
            "float() of a dualad.Dual would drop its derivative. If it came from the math "
            "module (math.sin(x), math.exp(x), ...), use the NumPy function instead "
            "(np.sin(x), np.exp(x)). If it came from storing into a float array "
            "(out[i] = x), make that array in the function being differentiated "
            "(np.zeros(n), np.empty(n), ...) or with np.zeros_like(x), so it can hold "
            "derivatives, or build the result with np.stack. Use dualad.primal_value(x) "
            "only for a value that is meant to be a constant.")

    __complex__ = __float__

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "a dualad.Dual cannot be pickled: its perturbation belongs to one transform "
            "call. Pickle its parts instead, dualad.primal_value(x) and x.tangent.")

    def item(self, *args):
        raise TypeError(
            "Dual.item() would drop the derivative; index the Dual instead "
            "(x[i]), or use dualad.primal_value(x).item()."
        )

    def tolist(self):
        raise TypeError("Dual.tolist() would drop the derivative; use list(x) for Duals.")

    def __int__(self) -> int:
        return int(primal_value(self))  # piecewise constant: derivative zero

    def __bool__(self) -> bool:
        return bool(primal_value(self))

    __hash__ = None  # type: ignore[assignment]

    # -- operators -----------------------------------------------------------

    def __add__(self, other): return _ops.add(self, as_operand(other))
    def __radd__(self, other): return _ops.add(as_operand(other), self)
    def __sub__(self, other): return _ops.subtract(self, as_operand(other))
    def __rsub__(self, other): return _ops.subtract(as_operand(other), self)
    def __mul__(self, other): return _ops.multiply(self, as_operand(other))
    def __rmul__(self, other): return _ops.multiply(as_operand(other), self)
    def __truediv__(self, other): return _ops.divide(self, as_operand(other))
    def __rtruediv__(self, other): return _ops.divide(as_operand(other), self)
    def __floordiv__(self, other): return _ops.floor_divide(self, as_operand(other))
    def __rfloordiv__(self, other): return _ops.floor_divide(as_operand(other), self)
    def __mod__(self, other): return _ops.remainder(self, as_operand(other))
    def __rmod__(self, other): return _ops.remainder(as_operand(other), self)
    def __divmod__(self, other): return UFUNC_HANDLERS[np.divmod](self, as_operand(other))
    def __rdivmod__(self, other): return UFUNC_HANDLERS[np.divmod](as_operand(other), self)

    def __matmul__(self, other):
        if is_sparse_matrix(other):
            return NotImplemented  # x @ A: the sparse matrix's __rmatmul__ (its rule)
        return UFUNC_HANDLERS[np.matmul](self, as_operand(other))

    def __rmatmul__(self, other): return UFUNC_HANDLERS[np.matmul](as_operand(other), self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return np.absolute(self)

    def __pow__(self, other):
        if isinstance(other, (int, float)) and other == 2:
            return _ops.square(self)  # the common case, one pass cheaper
        return _ops.power(self, as_operand(other))

    def __rpow__(self, other): return _ops.power(as_operand(other), self)

    # Comparisons look at primal values only and return plain boolean arrays,
    # so a branch never depends on the tangent or the number of seeds.
    def __lt__(self, other): return _ops.less(self, as_operand(other))
    def __le__(self, other): return _ops.less_equal(self, as_operand(other))
    def __gt__(self, other): return _ops.greater(self, as_operand(other))
    def __ge__(self, other): return _ops.greater_equal(self, as_operand(other))
    def __eq__(self, other): return _ops.equal(self, as_operand(other))  # type: ignore[override]
    def __ne__(self, other): return _ops.not_equal(self, as_operand(other))  # type: ignore[override]

    # -- indexing and writing -------------------------------------------------

    def __getitem__(self, index):
        index = _views.static_index(index)
        return _views.as_view(self, _ops.getitem(self, index=index),
                              _views.getitem_of(index))

    def __setitem__(self, index, value) -> None:
        """Write ``value`` at ``index`` (``out[i] = y``), with NumPy's aliasing.

        The primal is copied before the write, so nothing computed earlier
        changes: not the caller's array, not a value a reverse-mode tape holds.
        Views of this Dual (slices, reshapes, transposes) see the write, and a
        write into a view reaches the Dual it was taken from, as in NumPy.
        """
        if not isinstance(value, Dual):
            value = written_value(value)
        _views.check_writable(self, value)
        _views.store(self, _views.static_index(index), value)
        _views.written(self)

    # In-place operators write the result into the Dual, so every name bound to
    # it (and every view of it) sees the change, as with NumPy arrays.
    def _in_place(self, result: Any) -> Dual:
        _views.check_writable(self, result)
        _views.store(self, (Ellipsis,), _astype(result, self.dtype))
        _views.written(self)
        return self

    def __iadd__(self, other): return self._in_place(self + other)
    def __isub__(self, other): return self._in_place(self - other)
    def __imul__(self, other): return self._in_place(self * other)
    def __itruediv__(self, other): return self._in_place(self / other)
    def __ipow__(self, other): return self._in_place(self ** other)
    def __imatmul__(self, other): return self._in_place(self @ other)
    def __ifloordiv__(self, other): return self._in_place(self // other)
    def __imod__(self, other): return self._in_place(self % other)

    # -- NumPy protocols -----------------------------------------------------

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs, **kwargs):
        for x in inputs:
            if type(x) is list or type(x) is tuple or type(x) is Fillable or (
                    type(x) is np.ndarray and x.dtype.hasobject):
                inputs = tuple(as_operand(x) for x in inputs)
                break
        if method == "__call__" and not kwargs:  # the common case, first
            handler = UFUNC_HANDLERS.get(ufunc)
            if handler is not None:
                return handler(*inputs)
        out = kwargs.pop("out", None)
        if out is not None and any(o is not None for o in out):
            return into_outputs(ufunc, method, inputs, out, kwargs)
        if kwargs.pop("where", True) is not True:
            raise TypeError(f"{qualified_name(ufunc)}(..., where=...) is not supported "
                            "on Duals; use np.where on the results instead")
        dtype = kwargs.pop("dtype", None)
        for ignored in ("casting", "order", "subok", "signature"):
            kwargs.pop(ignored, None)
        if method == "__call__":
            handler = UFUNC_HANDLERS.get(ufunc)
            if handler is None and is_python_ufunc(ufunc) and not kwargs:
                # np.frompyfunc: the Python function runs on each element, a 0-d Dual
                return through_objects(ufunc, inputs)
            if handler is None:
                raise missing_rule_error(ufunc)
            if kwargs:
                raise TypeError(f"{qualified_name(ufunc)}: keyword arguments "
                                f"{sorted(kwargs)} are not supported on Duals")
            result = handler(*inputs)
        else:
            result = ufunc_method(ufunc, method, inputs, kwargs)
        return result if dtype is None else _astype(result, dtype)

    def __array_function__(self, func: Callable, types, args, kwargs):
        handler = FUNCTION_HANDLERS.get(func)
        if handler is None:
            raise missing_rule_error(func)
        if func not in COMPLEX_FUNCTIONS and holds_complex(args):
            raise complex_error(qualified_name(func))
        if not all(issubclass(t, (Boxed, np.ndarray, float)) for t in types):  # (a traced t)
            return NotImplemented
        for a in args:
            if type(a) is list or type(a) is tuple or (type(a) is np.ndarray
                                                        and a.dtype.hasobject):
                args, kwargs = array_arguments(func, args, kwargs)
                break
        else:
            if kwargs:
                args, kwargs = array_arguments(func, args, kwargs)
        result = handler(*args, **kwargs)
        if func in _views.VIEW_FUNCTIONS and isinstance(args[0], Dual):
            rest = args[1:]
            return _views.as_view(args[0], result, lambda base: handler(base, *rest, **kwargs))
        return result

    # -- ndarray methods -----------------------------------------------------

    def reshape(self, *shape, order: str = "C") -> Dual:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self.__array_function__(np.reshape, (), (self, shape), {"order": order})

    def transpose(self, *axes) -> Dual:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return self.__array_function__(np.transpose, (), (self, axes or None), {})

    def flatten(self, order: str = "C") -> Dual:
        return FUNCTION_HANDLERS[np.ravel](self, order=order).copy()

    def copy(self, order: str = "C") -> Dual:
        # Tangents are never written in place (writes replace them), so they may
        # be shared; a recorded one (reverse mode) could not be copied anyway.
        return self._wrap(self.primal.copy(), self.tangent)

    __copy__ = copy

    def __deepcopy__(self, memo) -> Dual:
        return self.copy()

    def astype(self, dtype, copy: bool = True) -> Any:
        return _astype(self, dtype)

    def conj(self) -> Dual:
        return np.conjugate(self)

    conjugate = conj

    def __round__(self, ndigits: int = 0):
        return np.round(primal_value(self), ndigits)

    def __array_namespace__(self, *, api_version: str | None = None):
        """The array namespace SciPy's array-API dispatch asks for (``SCIPY_ARRAY_API=1``):
        NumPy's functions, which reach the rule table through ``__array_function__``, and
        ``special``, the ``scipy.special`` ufuncs (see docs/scipy-functions.md)."""
        return ARRAY_NAMESPACE[0]


def _ndarray_method(func: Callable) -> Callable:
    """A Dual method that does what ``func(self, ...)`` does."""

    def method(self, *args, **kwargs):
        if func not in COMPLEX_FUNCTIONS and self.dtype.kind == "c":
            raise complex_error(f"Dual.{func.__name__}")
        return FUNCTION_HANDLERS[func](self, *args, **kwargs)

    method.__name__ = func.__name__
    method.__doc__ = f"Same as ``numpy.{func.__name__}(self, ...)``."
    return method


for _func in (np.sum, np.mean, np.prod, np.max, np.min, np.std, np.var, np.cumsum,
              np.cumprod, np.dot, np.swapaxes, np.squeeze, np.ravel, np.clip,
              np.diagonal, np.trace, np.take, np.repeat, np.argmax, np.argmin,
              np.argsort, np.nonzero, np.all, np.any, np.round):
    setattr(Dual, _func.__name__, _ndarray_method(_func))
del _func


# -- helpers shared by the rules ---------------------------------------------


def is_sparse_matrix(x: Any) -> bool:
    """Whether ``x`` is a scipy.sparse matrix or array (without importing SciPy)."""
    return type(x).__module__.startswith("scipy.sparse")


def without_tag(x: Any, tag: Tag) -> Any:
    """``x`` without the perturbation of ``tag`` (its primal), if it carries one."""
    return x.primal if isinstance(x, Dual) and x._tag is tag else x


def primal_value(x: Any) -> Any:
    """The value of ``x`` with every perturbation (of every tag) stripped.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> dualad.primal_value(dualad.Dual(np.array([1.0, 2.0]), np.ones(2)))
    array([1., 2.])
    """
    if type(x) is Fillable:
        x = x.value()
    while isinstance(x, Dual):
        if x._replayed:  # a replayed call's value (dualad.replay.live.Live)
            return x._session.value_of(x)
        if x._tag.opaque_values:  # global sparsity detection: values that vary with x
            return x._tag.opaque(primal_value(x.primal))
        x = x.primal
    return x


def stop_gradient(x: Any) -> Any:
    """``x`` as a constant to every transform (JAX's ``jax.lax.stop_gradient``): its
    derivatives of every tag stripped, its value kept. ``x`` may be a pytree; a value
    :mod:`dualad_gpu` gives a Dual's clothing stays so.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: x * dualad.stop_gradient(x)      # x² with x held fixed once
    >>> float(dualad.derivative(f)(3.0))
    3.0
    """
    if isinstance(x, (Dual, Fillable, np.ndarray)):
        return _stopped(x)
    return tree_map(_stopped, x)


def _stopped(x: Any) -> Any:
    if type(x) is Fillable:
        x = x.value()
    while isinstance(x, Dual) and x._tag.carries_derivatives:
        if x._replayed or x._tag.opaque_values:
            return primal_value(x)
        x = x.primal
    return x


def as_float_array(x: Any, dtype: Any = None, complex_ok: bool = False) -> Any:
    """``x`` as an array of floats (of ``dtype`` if given): ints and bools become
    float64, complex numbers stay complex if ``complex_ok`` (else a TypeError).
    Arrays of another registered backend (JAX) stay theirs."""
    if isinstance(x, Dual):
        return x
    if not isinstance(x, np.ndarray) and backend_of((x,)) != "numpy":
        if dtype is not None:
            return x.astype(dtype)
    else:
        x = np.asanyarray(x, dtype=dtype)  # anyarray: a replay's recording stays one
    kind = x.dtype.kind
    if kind == "f" or (kind == "c" and complex_ok):
        return x
    if kind in "biu":
        return x.astype(np.float64)
    if kind == "c":
        raise TypeError(
            f"this transform takes real inputs only, and this one is complex ({x.dtype}): "
            "jvp, vjp, grad, jacrev, hvp and (with holomorphic=True) jacfwd and hessian "
            "take complex inputs; HyperDual and sparsity detection do not yet. Split it "
            "into real and imaginary parts and differentiate with respect to both."
        )
    if kind == "O" and x.ndim == 0:  # an object no pytree opens: a class of the user's
        raise TypeError(
            f"cannot differentiate with respect to a {type(x[()]).__name__}: a transform's "
            "inputs are pytrees of arrays (tuples, lists, dicts, namedtuples, dataclasses); "
            "make the class one with dualad.register_pytree_node(cls, flatten, unflatten) "
            "or dualad.register_dataclass(cls), or pass its arrays")
    raise TypeError(f"cannot differentiate with respect to an array of dtype {x.dtype}")


def as_dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, and for a DType class (``np.dtypes.Float64DType``, which
    NumPy's own code passes to ufuncs as ``dtype=``) the dtype it makes, where
    ``np.dtype`` would read any Python class as ``object``."""
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        scalar: Any = dtype.type
        return np.dtype(scalar)
    return np.dtype(dtype)


def _astype(x: Any, dtype) -> Any:
    dtype = as_dtype(dtype)
    if dtype.kind in "fc":
        return _ops.convert(x, dtype=dtype)
    if dtype == object:  # its elements, 0-d Duals (NumPy's answer), not its primal's
        return elements(x).view(DualObjects)
    return primal_value(x).astype(dtype)


# Bound late, in this order: they use the Dual above. ``ops`` is the rule table's
# namespace, filled by dualad.rules when it loads (the table sits above the number types).
from .operands import (DualObjects, array_arguments, as_operand,  # noqa: E402,F401
                       complex_error, conversion_error, elements, from_objects,
                       holds_complex, inside_vectorize, into_outputs, is_python_ufunc,
                       object_loop_method, through_objects, ufunc_method, written_value)
from .tangents import (align_tangent, check_tangent_shape, elementwise_jvp,  # noqa: E402,F401
                       fit_tangent)
from . import ops as _ops  # noqa: E402,I001
from . import views as _views  # noqa: E402,I001
