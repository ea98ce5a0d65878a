"""Hyper-dual arrays: a + b·ε1 + c·ε2 + d·ε1ε2 with ε1² = ε2² = 0, ε1ε2 ≠ 0.

A HyperDual is a Dual (perturbation ε2) whose primal and tangent are Duals of
an outer perturbation ε1:  (a + b·ε1) + (c + d·ε1)·ε2. Every primitive
therefore works on it through the ordinary forward-mode interpreter, and the
second-order chain rule comes out of each rule evaluated on Duals — there is no
second formula per primitive. Evaluating f at x + ε1·u + ε2·v gives

    f(x) + ε1·(∇f·u) + ε2·(∇f·v) + ε1ε2·(uᵀ ∇²f v),

exact second derivatives with no step size (Fike & Alonso's hyper-dual method).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from .dual import Dual, as_float_array
from .tangents import check_tangent_shape
from .primitive import MINUS_ONE, ONE, Boxed, Over, Tag

__all__ = ["HyperDual", "SeededHyperDual"]


class HyperDual(Dual):
    """An array of hyper-dual numbers ``real + eps1·ε1 + eps2·ε2 + eps1eps2·ε1ε2``.

    Parameters
    ----------
    real:
        Array-like of real floats (ints become float64).
    eps1, eps2:
        The ε1 and ε2 parts: the shape of ``real``, or with ``batched=True``
        ``(K1, *real.shape)`` and ``(K2, *real.shape)`` for K1 and K2 seeds.
        ``None`` is zero.
    eps1eps2:
        The ε1ε2 part: the shape of ``real``, or ``(K1, K2, *real.shape)`` when
        batched. ``None`` is zero.
    batched:
        Whether the ε parts carry leading seed axes.
    tags:
        The ``(ε1, ε2)`` tags; pass ``other.tags`` to perturb several arrays by
        the same ε1 and ε2. Fresh tags if omitted.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad import HyperDual
    >>> x = HyperDual(0.5, 1.0, 1.0, 0.0)
    >>> y = np.sin(x) * x
    >>> float(y.real), float(y.eps1[0]), float(y.eps1eps2[0, 0])  # f, f', f''
    (0.2397127693021015, 0.9182168195493894, 1.515452354478644)
    """

    __slots__ = ("_tag1", "_seeds")

    def __init__(self, real: Any, eps1: Any = None, eps2: Any = None, eps1eps2: Any = None,
                 *, batched: bool = False, tags: tuple[Tag, Tag] | None = None) -> None:
        real = as_float_array(real)
        shape, dtype = real.shape, real.dtype

        def part(value, axes):
            if value is None:
                return None
            value = as_float_array(value, dtype)
            if not batched:
                check_tangent_shape(shape, value.shape)
                return value.reshape((1,) * axes + shape)
            check_tangent_shape(shape, value.shape[axes:], seeds=True)
            return value

        eps1, eps2, eps1eps2 = part(eps1, 1), part(eps2, 1), part(eps1eps2, 2)
        k1 = eps1.shape[0] if eps1 is not None else (eps1eps2.shape[0] if eps1eps2 is not None
                                                     else 1)
        k2 = eps2.shape[0] if eps2 is not None else (eps1eps2.shape[1] if eps1eps2 is not None
                                                     else 1)
        if eps1eps2 is not None and eps1eps2.shape[:2] != (k1, k2):
            raise ValueError(f"eps1eps2 has seed axes {eps1eps2.shape[:2]}, but eps1 and eps2 "
                             f"carry {k1} and {k2} seeds")
        tag1, tag2 = tags if tags is not None else (Tag(), Tag())
        built = HyperDual._assemble(real, eps1, eps2, eps1eps2, tag1, tag2, (k1, k2))
        self.primal, self.tangent, self._tag = built.primal, built.tangent, built._tag
        self._tag1, self._seeds = built._tag1, built._seeds

    @classmethod
    def _assemble(cls, real, eps1, eps2, eps1eps2, tag1: Tag, tag2: Tag,
                  seeds: tuple[int, int]) -> HyperDual:
        """Nest the four parts as Dual(tag2, Dual(tag1, a, b), Dual(tag1, c, d))."""
        primal = real if eps1 is None else Dual._new(real, eps1, tag1)
        if eps1eps2 is not None:
            if eps2 is None:
                eps2 = np.zeros(eps1eps2.shape[1:], eps1eps2.dtype)
            tangent = Dual._new(eps2, eps1eps2, tag1)
        else:
            tangent = eps2
        self = object.__new__(cls)
        self.primal, self.tangent, self._tag = primal, tangent, tag2
        self._tag1, self._seeds = tag1, seeds
        return self

    def _process(self, prim, args: tuple, params: dict) -> Any:
        # The fused chain rule only where a partial may be infinite (sqrt at 0): there
        # a zero seed product must give 0. Elsewhere the rule on Duals is faster.
        if prim.nonfinite_partials and prim.partials is not None and not params \
                and self._tag.live:
            parts = self._parts_of(args)
            if parts is not None:
                out = self._chain_rule(prim, parts)
                if out.dtype.kind != "c":  # complex values: the rule on Duals below
                    return out
        out = Dual._process(self, prim, args, params)
        if prim.differentiable and not (isinstance(out, Dual) and out._tag is self._tag):
            return self._wrap(out, None)  # the ε2 part is zero: still a HyperDual
        return out

    # -- the second-order chain rule of an elementwise primitive ---------------

    def _parts_of(self, args: tuple) -> list | None:
        """``(a, b, c, d)`` of each argument (None for a zero part), or None when some
        argument is not a plain hyper-dual of these tags (nested transforms)."""
        parts = []
        for x in args:
            if not isinstance(x, Boxed):
                parts.append((x, None, None, None))
                continue
            if not (isinstance(x, HyperDual) and x._tag is self._tag and x._tag1 is self._tag1):
                return None
            a, b = self._split(x.primal)
            c, d = (None, None) if x.tangent is None else self._split(x.tangent)
            if any(isinstance(v, Boxed) for v in (a, b, c, d)):
                return None
            parts.append((a, b, c, d))
        return parts

    def _chain_rule(self, prim, parts: list) -> HyperDual:
        """f at a + b·ε1 + c·ε2 + d·ε1ε2 from the row of partials:

            f(a) + ε1·Σ fᵢ bᵢ + ε2·Σ fᵢ cᵢ + ε1ε2·(Σ fᵢ dᵢ + Σᵢⱼ fᵢⱼ·bⱼ·cᵢ),

        with fᵢⱼ = ∂fᵢ/∂aⱼ taken by evaluating the partial fᵢ on Duals of unit seeds.
        A zero seed product bⱼ·cᵢ gives 0 even where fᵢⱼ is infinite (sqrt at 0), as
        a zero tangent does for an infinite first partial (``nonfinite_partials``).
        """
        reals = [p[0] for p in parts]
        ans = prim.impl(*reals)
        ndim = np.ndim(ans)
        nonfinite = prim.nonfinite_partials
        partials = prim.partials
        live = [i for i, p in enumerate(parts) if partials[i] is not None and any(
            v is not None for v in p[1:])]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            first = {i: _evaluate(partials[i], ans, reals) for i in live}
            eps1 = _sum_terms([_times(first[i], _lead(parts[i][1], 1, ndim), nonfinite)
                               for i in live if parts[i][1] is not None])
            eps2 = _sum_terms([_times(first[i], _lead(parts[i][2], 1, ndim), nonfinite)
                               for i in live if parts[i][2] is not None])
            terms = [_times(first[i], _lead(parts[i][3], 2, ndim), nonfinite)
                     for i in live if parts[i][3] is not None]
            inner = [j for j, p in enumerate(parts) if p[1] is not None]
            outer = [i for i in live if parts[i][2] is not None]
            if inner and outer:
                second = self._second_partials(prim, ans, reals, first, inner, outer)
                for i in outer:
                    c = _unit_axis(_lead(parts[i][2], 1, ndim), 0)  # (1, K2, ...)
                    for j, f2 in zip(inner, second[i] or ()):
                        b = _unit_axis(_lead(parts[j][1], 1, ndim), 1)  # (K1, 1, ...)
                        terms.append(ops.scale(ops.scale(f2, b), c))  # 0 where b or c is
            eps12 = _sum_terms(terms)
        shape, dtype = np.shape(ans), getattr(ans, "dtype", np.dtype(float))
        k1, k2 = self._seeds
        eps1 = _fit(eps1, (k1,) + shape, dtype)
        eps2 = _fit(eps2, (k2,) + shape, dtype)
        eps12 = _fit(eps12, (k1, k2) + shape, dtype)
        primal = ans if eps1 is None else Dual._new(ans, eps1, self._tag1)
        if eps12 is not None:
            if eps2 is None:
                eps2 = ops.broadcast_to(np.zeros((), dtype), shape=(k2,) + shape)
            tangent = Dual._new(eps2, eps12, self._tag1)
        else:
            tangent = eps2
        return self._wrap(primal, tangent)

    def _second_partials(self, prim, ans, reals, first, inner, outer) -> dict:
        """fᵢⱼ for i in ``outer``, j in ``inner``: each partial fᵢ evaluated once on
        Duals whose seed k moves argument ``inner[k]`` by 1 (the result by fⱼ)."""
        m = len(inner)
        tag = Tag()
        ndim = np.ndim(ans)
        seeded = list(reals)
        for k, j in enumerate(inner):
            shape = np.shape(reals[j])
            unit = np.zeros((m,) + shape, getattr(ans, "dtype", np.float64))
            unit[k] = 1.0
            seeded[j] = Dual._new(reals[j], unit, tag)
        zeros = np.zeros((1,) + np.shape(ans), ans.dtype)
        slots = [zeros + (first[j] if j in first else 0.0) for j in inner]
        ans_dual = Dual._new(ans, ops.concatenate(*slots, axis=0), tag)
        second = {}
        for i in outer:
            w = _evaluate(prim.partials[i], ans_dual, seeded)
            if not (isinstance(w, Dual) and w._tag is tag and w.tangent is not None):
                second[i] = None  # a constant partial: no second derivative
                continue
            t = _lead(w.tangent, 1, ndim)
            second[i] = [ops.getitem(t, index=(k,)) for k in range(m)]
        return second

    def _wrap(self, primal: Any, tangent: Any) -> HyperDual:
        out = object.__new__(type(self))
        out.primal, out.tangent, out._tag = primal, tangent, self._tag
        out._tag1, out._seeds = self._tag1, self._seeds
        return out

    # -- the four parts ------------------------------------------------------

    def _split(self, value: Any) -> tuple[Any, Any]:
        """The (value, ε1 part) of one level; the ε1 part may be None (zero)."""
        if isinstance(value, Dual) and value._tag is self._tag1:
            return value.primal, value.tangent
        return value, None

    @property
    def real(self) -> Any:
        """The real part ``a``, shape ``S``."""
        return self._split(self.primal)[0]

    @property
    def eps1(self) -> Any:
        """The ε1 part, shape ``(K1, *S)``."""
        part = self._split(self.primal)[1]
        return self._zeros(self._seeds[:1]) if part is None else part

    @property
    def eps2(self) -> Any:
        """The ε2 part, shape ``(K2, *S)``."""
        if self.tangent is None:
            return self._zeros(self._seeds[1:])
        return self._split(self.tangent)[0]

    @property
    def eps1eps2(self) -> Any:
        """The ε1ε2 part, shape ``(K1, K2, *S)``: the second derivatives."""
        part = None if self.tangent is None else self._split(self.tangent)[1]
        return self._zeros(self._seeds) if part is None else part

    def _zeros(self, seeds: tuple[int, ...]) -> np.ndarray:
        return np.zeros(seeds + self.shape, self.dtype)

    @property
    def tags(self) -> tuple[Tag, Tag]:
        """The tags of the ε1 and ε2 perturbations."""
        return self._tag1, self._tag

    def __repr__(self) -> str:
        return (f"HyperDual(real={self.real!r}, eps1={self.eps1!r}, eps2={self.eps2!r}, "
                f"eps1eps2={self.eps1eps2!r})")


def _evaluate(partial, ans: Any, args: list) -> Any:
    """A partial of a row at ``(ans, *args)``: a value, or the literal ONE/MINUS_ONE."""
    if partial is ONE or partial is MINUS_ONE:
        return partial
    w = partial(ans, *args)
    return w.reciprocal() if type(w) is Over else w


def _times(w: Any, t: Any, safe: bool) -> Any:
    if w is ONE:
        return t
    if w is MINUS_ONE:
        return -t
    return ops.scale(w, t) if safe else w * t


def _lead(t: Any, seeds: int, ndim: int) -> Any:
    """``t`` with unit axes after its ``seeds`` seed axes, so it has ``seeds + ndim`` axes."""
    missing = seeds + ndim - t.ndim
    if missing <= 0:
        return t
    return ops.reshape(t, shape=tuple(t.shape[:seeds]) + (1,) * missing
                       + tuple(t.shape[seeds:]))


def _unit_axis(t: Any, axis: int) -> Any:
    return ops.reshape(t, shape=tuple(t.shape[:axis]) + (1,) + tuple(t.shape[axis:]))


def _sum_terms(terms: list) -> Any:
    total = None
    for t in terms:
        total = t if total is None else total + t
    return total


def _fit(t: Any, shape: tuple, dtype: Any) -> Any:
    if t is None:
        return None
    if tuple(t.shape) != shape:
        t = ops.broadcast_to(t, shape=shape)
    return t if t.dtype == dtype else ops.convert(t, dtype=dtype)


class SeededHyperDual(HyperDual):
    """The hyper-duals ``hessian``, ``hvp`` and ``second_derivative`` seed: inside
    the user's function they stand for real arrays, so ``x.real`` is ``x`` itself
    and ``x.imag`` zeros, as NumPy's (not the value part of a HyperDual)."""

    __slots__ = ()
    real = Dual.real
    imag = Dual.imag
