"""Taylor mode: jets of any order, from the one rule table.

``jet(f, (x,), ((x1, ..., xK),))`` propagates the truncated Taylor series
x(t) = x + x1·t + x2·t²/2! + … + xK·t^K/K! through ``f``: the result is f(x(t))'s
series to order K, its k-th term the k-th derivative ∂ᵏf(x)[v, …, v] when
x(t) = x + v·t.

The user's function runs once, on Duals of a :class:`JetTag` whose tangent holds
the K higher Taylor coefficients on its seed axis (coefficient k is
``tangent[k - 1]``, not factorial-scaled). A linear map acts on each coefficient
alone, so every primitive called linearly (``reshape``, ``sum``, ``x @ W``, ``x +
y``, in-place writes) runs the ordinary forward rule on all K at once. Any other
primitive is evaluated on :class:`Series`, whose coefficients are computed on
demand from the rule table:

- a product of several series (``multiply``, ``matmul``, ``einsum``: a primitive
  linear in each argument) is their Cauchy product, y_k = Σ_j a_j ⊗ b_{k−j};
- a quotient of series solves a·1 = y·b order by order;
- an elementwise primitive y = f(x₁, …) takes its row of partials pᵢ = ∂f/∂xᵢ,
  evaluated on series (``ans`` is y's own series), and y' = Σᵢ pᵢ·xᵢ' gives
  k·y_k = Σᵢ Σ_{j=1..k} j·x_{i,j}·p_{i,k−j};
- every other primitive takes its JVP rule, evaluated on series — the inputs,
  their derivative series x'(t) as tangents and y's own series as ``ans`` — and
  k·y_k is the rule's coefficient k − 1.

A coefficient of y only needs lower coefficients of the series the rule built, so
the recursion is solved order by order (a series caches what it computed). The
series a rule builds are shared within one primitive call (``sin``'s partial
``cos(x)`` has the partial ``-sin(x)``, which is y itself), so a chain of
elementwise functions costs O(K²) per primitive, not O(2^K) as nested duals do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .pytrees import tree_flatten
from . import ops
from .constructors import scoped
from .dual import Dual, as_float_array
from .tangents import check_tangent_shape, elementwise_jvp, fit_tangent
from .inputs import only_row, read_leaf
from .primitive import MINUS_ONE, ONE, Over, Primitive, Tag

__all__ = ["jet", "JetTag", "RowsTag", "Series"]


def _linear_in(prim: Primitive, moving: list[int]) -> bool:
    """Whether ``prim`` is linear in the arguments at ``moving`` jointly (the others
    held): then each Taylor coefficient maps on its own."""
    linear = prim.linear
    if linear == "all":
        return True
    if linear == "one":
        return len(moving) == 1
    if isinstance(linear, tuple):
        return set(moving) <= set(linear)
    if prim.partials is not None:
        return all(prim.partials[i] is ONE or prim.partials[i] is MINUS_ONE for i in moving)
    return False


def _per_coefficient(prim: Primitive, primals: list, tangents: list, ans: Any,
                     params: dict) -> Any:
    """The forward rule of a primitive called linearly in its perturbed arguments:
    the tangent's seed axis may hold anything a linear map acts on one by one."""
    if prim.partials is not None:
        return elementwise_jvp(prim, primals, tangents, ans)
    return prim.jvp_rule(primals, tangents, ans, **params)


class RowsTag(Tag):
    """The tag of an evaluation whose Duals' tangents hold rows that every linear map
    acts on one by one (Taylor coefficients, or a collapsed operator's parts): those
    calls run the ordinary forward rule. Each subclass gives the rows of the rest,
    ``nonlinear(prim, primals, tangents, moving, ans, params)`` (None: no rows)."""

    __slots__ = ()
    interprets = True

    def process(self, box: Dual, prim: Primitive, primals: list, tangents: list, ans: Any,
                params: dict) -> Any:
        """A Dual of this tag meets ``prim``: the rows of its result."""
        if not prim.differentiable:
            return ans
        moving = [i for i, t in enumerate(tangents) if t is not None]
        if _linear_in(prim, moving):
            out = _per_coefficient(prim, primals, tangents, ans, params)
        else:
            out = self.nonlinear(prim, primals, tangents, moving, ans, params)
        if out is None:
            return ans
        if out.dtype != ans.dtype:
            out = ops.convert(out, dtype=ans.dtype)
        return box._wrap(ans, out)


class JetTag(RowsTag):
    """The tag of one :func:`jet` call: its Duals' tangents hold the ``order`` higher
    Taylor coefficients of ``batch`` jets, jet by jet (coefficient k of jet b at
    ``tangent[b * order + k - 1]``: a split of the leading axis between devices keeps
    each jet whole)."""

    __slots__ = ("order", "batch")

    def __init__(self, order: int, batch: int = 1) -> None:
        super().__init__()
        self.order, self.batch = order, batch

    def nonlinear(self, prim: Primitive, primals: list, tangents: list, moving: list,
                  ans: Any, params: dict) -> Any:
        """The coefficients of ``prim``'s result from its rule on series: for many jets,
        one series of stacked coefficients through an elementwise primitive (each jet
        its own entries), else one series per jet."""
        K, B = self.order, self.batch
        shape = tuple(np.shape(ans))
        if B == 1:
            context = _Context()
            series = [a if t is None else Series.known(a, fit_tangent(t, np.shape(a)),
                                                       context)
                      for a, t in zip(primals, tangents)]
            y = Series.result(prim, series, params, ans, context)
            return ops.concatenate(*[_lead(y.coefficient(k)) for k in range(1, K + 1)],
                                   axis=0)
        rows = [None if t is None else _by_jet(t, np.shape(a), K, B, len(shape))
                for a, t in zip(primals, tangents)]
        if prim.partials is not None or prim is ops.multiply or prim is ops.divide:
            # (every series of the jets' shape: the rules on series see one array)
            full, context = (B,) + shape, _Context()
            series = [a if r is None else Series.known(
                _stacked(a, full), [_stacked(r[:, k], full) for k in range(K)], context)
                      for a, r in zip(primals, rows)]
            y = Series.result(prim, series, params, _stacked(ans, full), context)
            terms = [ops.reshape(_stacked(y.coefficient(k), full), shape=(B, 1) + shape)
                     for k in range(1, K + 1)]
            return ops.reshape(ops.concatenate(*terms, axis=1), shape=(B * K,) + shape)
        jets = []
        for b in range(B):
            context = _Context()
            series = [a if r is None else Series.known(
                a, [ops.reshape(r[b, k], shape=np.shape(a)) for k in range(K)], context)
                      for a, r in zip(primals, rows)]
            y = Series.result(prim, series, params, ans, context)
            jets += [_lead(y.coefficient(k)) for k in range(1, K + 1)]
        return ops.concatenate(*jets, axis=0)


def _by_jet(t: Any, shape: tuple, K: int, B: int, ndim: int) -> Any:
    """A jets' rows (B·K, *shape) as (B, K, 1, …, *shape), the jets' axis ahead of the
    ``ndim`` axes of the result (an elementwise primitive's broadcasting)."""
    t = fit_tangent(t, shape)
    return ops.reshape(t, shape=(B, K) + (1,) * (ndim - len(shape)) + tuple(shape))


def _stacked(c: Any, shape: tuple) -> Any:
    """``c`` broadcast to ``shape``, the same object where it has that shape."""
    return ops.broadcast_to(c, shape=shape) if tuple(np.shape(c)) != shape else c


def zeros_like(value: Any) -> np.ndarray:
    """Zeros of ``value``'s shape and dtype: a coefficient that is structurally zero
    (not ``value * 0``, which is nan where ``value`` is infinite)."""
    dtype = np.dtype(getattr(value, "dtype", np.float64))
    return np.zeros(np.shape(value), dtype if dtype.kind in "fc" else np.float64)


def _lead(c: Any) -> Any:
    """A coefficient with a leading axis of one."""
    return ops.reshape(c, shape=(1,) + tuple(np.shape(c)))


class _Context:
    """What the series of one primitive call share: their tag (made after every
    value they hold, so they are the innermost boxes) and the series made so far."""

    __slots__ = ("tag", "made")

    def __init__(self) -> None:
        self.tag, self.made = Tag(), {}


class Series(Dual):
    """A Taylor series y_0 + y_1·t + y_2·t² + … inside a rule's evaluation, each
    coefficient computed once, when first asked for (see the module docstring).

    ``primal`` is y_0; ``coefficient(k)`` gives y_k from ``rule(k)``. A primitive
    applied again to the same series of one ``context`` gives the same series.
    """

    __slots__ = ("_coefficients", "_rule", "_context")

    @classmethod
    def _make(cls, y0: Any, rule: Callable[[int], Any] | None, context: _Context) -> Series:
        self = cls._new(y0, None, context.tag)
        self._coefficients, self._rule, self._context = [y0], rule, context
        return self

    @classmethod
    def known(cls, y0: Any, higher: Any, context: _Context) -> Series:
        """The series of a jet's Dual: ``higher[k - 1]`` is y_k (a list, or an array
        with the coefficients on its leading axis)."""
        self = cls._make(y0, None, context)
        count = len(higher) if type(higher) is list else np.shape(higher)[0]
        self._coefficients += [higher[k] for k in range(count)]
        return self

    def coefficient(self, k: int) -> Any:
        """y_k (zeros past the last coefficient of a known series)."""
        coefficients = self._coefficients
        while len(coefficients) <= k:
            if self._rule is None:
                return zeros_like(self.primal)
            coefficients.append(self._rule(len(coefficients)))
        return coefficients[k]

    def _process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        primals = [a.primal if type(a) is Series else a for a in args]
        moving = [i for i, a in enumerate(args) if type(a) is Series]
        ans = prim(*primals, **params)
        if not prim.differentiable or not moving:
            return ans
        return Series.result(prim, list(args), params, ans, self._context)

    @staticmethod
    def result(prim: Primitive, args: list, params: dict, ans: Any,
               context: _Context) -> Series:
        """The series of ``prim(*args)`` (``ans``: its value), the same one for the
        same primitive on the same series."""
        key = (prim, *map(id, args), *sorted((k, id(v)) for k, v in params.items()))
        found = context.made.get(key)
        if found is not None:
            return found[0]
        moving = [i for i, a in enumerate(args) if type(a) is Series]
        y = Series._make(ans, None, context)
        if _linear_in(prim, moving):
            y._rule = _linear_rule(prim, args, params, ans)
        elif prim.linear == "one":
            y._rule = _cauchy_rule(prim, args, params)
        elif prim is ops.divide:
            y._rule = _quotient_rule(y, *args)
        elif prim.partials is not None:
            y._rule = _partials_rule(prim, y, args)
        else:
            y._rule = _jvp_rule(prim, y, args, params)
        context.made[key] = (y, args, params)  # (holding the arguments keeps ids unique)
        return y


def _coefficient(a: Any, k: int) -> Any:
    """Coefficient k of an argument (a constant's are zero past the first)."""
    if type(a) is Series:
        return a.coefficient(k)
    return a if k == 0 else None


def _linear_rule(prim: Primitive, args: list, params: dict, ans: Any) -> Callable:
    primals = [a.primal if type(a) is Series else a for a in args]

    def rule(k: int) -> Any:
        tangents = [_lead(a.coefficient(k)) if type(a) is Series else None for a in args]
        out = _per_coefficient(prim, primals, tangents, ans, params)
        return zeros_like(ans) if out is None else out[0]

    return rule


def _cauchy_rule(prim: Primitive, args: list, params: dict) -> Callable:
    """y_k = Σ over j₁ + … + jₙ = k of prim(a_{j₁}, …): a product of series."""
    moving = [i for i, a in enumerate(args) if type(a) is Series]

    def rule(k: int) -> Any:
        total = None
        for orders in _compositions(k, len(moving)):
            picked = list(args)
            for i, j in zip(moving, orders):
                picked[i] = args[i].coefficient(j)
            term = prim(*picked, **params)
            total = term if total is None else total + term
        return total

    return rule


def _compositions(k: int, parts: int):
    """Every way of writing k as an ordered sum of ``parts`` integers ≥ 0."""
    if parts == 1:
        yield (k,)
        return
    for first in range(k + 1):
        for rest in _compositions(k - first, parts - 1):
            yield (first, *rest)


def _quotient_rule(y: Series, a: Any, b: Any) -> Callable:
    """y = a / b: y_k = (a_k − Σ_{j=1..k} b_j·y_{k−j}) / b_0."""
    def rule(k: int) -> Any:
        total = _coefficient(a, k)
        for j in range(1, k + 1):
            b_j = _coefficient(b, j)
            if b_j is not None:
                term = b_j * y.coefficient(k - j)
                total = -term if total is None else total - term
        return zeros_like(y.primal) if total is None else total / _coefficient(b, 0)

    return rule


def evaluated(prim: Primitive, partial: Callable, ans: Any, args: list) -> Any:
    """One partial of ``prim``'s row at (``ans``, ``args``), ``Over(d)`` as ``1/d`` (where
    it may be infinite, without a warning: the caller multiplies it safely)."""
    if prim.nonfinite_partials:
        with np.errstate(divide="ignore", invalid="ignore"):
            p = partial(ans, *args)
    else:
        p = partial(ans, *args)
    return ops.divide(1.0, p.denominator) if type(p) is Over else p


def _partials_rule(prim: Primitive, y: Series, args: list) -> Callable:
    """k·y_k = Σᵢ Σ_{j=1..k} j·x_{i,j}·p_{i,k−j}, pᵢ the row of partials on series."""
    partials: list = []
    safe = prim.nonfinite_partials

    def weights() -> list:
        if not partials:
            for partial, a in zip(prim.partials, args):
                if type(a) is not Series or partial is None:
                    continue
                p = float(partial) if partial is ONE or partial is MINUS_ONE else \
                    evaluated(prim, partial, y, args)
                partials.append((a, p))
        return partials

    def rule(k: int) -> Any:
        total = None
        for a, p in weights():
            for j in range(1, k + 1):
                p_m = _coefficient(p, k - j)
                if p_m is None:
                    continue
                x_j = a.coefficient(j)
                term = ops.scale(p_m, x_j) if safe else p_m * x_j
                term = term * j if j > 1 else term
                total = term if total is None else total + term
        return zeros_like(y.primal) if total is None else total / k

    return rule


def _derivative_of(x: Series) -> Series:
    """x'(t) of a series, with a leading seed axis: the tangent a JVP rule takes."""
    def rule(m: int) -> Any:
        return _lead(x.coefficient(m + 1) * (m + 1))

    return Series._make(_lead(x.coefficient(1)), rule, x._context)


def _jvp_rule(prim: Primitive, y: Series, args: list, params: dict) -> Callable:
    """k·y_k = coefficient k − 1 of the JVP rule on series: y' = J(x)·x'."""
    derivative: list = []

    def rule(k: int) -> Any:
        if not derivative:
            tangents = [_derivative_of(a) if type(a) is Series else None for a in args]
            derivative.append(prim.jvp_rule(args, tangents, y, **params))
        d = derivative[0]
        if d is None:
            return zeros_like(y.primal)
        d_m = d.coefficient(k - 1) if type(d) is Series else (d if k == 1 else zeros_like(d))
        return d_m[0] / k

    return rule


# ---------------------------------------------------------------------------
# The transform
# ---------------------------------------------------------------------------


@scoped
def jet(fun: Callable, primals: Sequence, series: Sequence, factorial_scaled: bool = True,
        *, batched: bool = False, seed_placement: Callable | None = None
        ) -> tuple[Any, Any]:
    """Taylor-mode derivatives of any order (JAX's ``jax.experimental.jet``).

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy; its result may be a pytree.
    primals:
        A tuple or list of ``fun``'s positional arguments, arrays or scalars.
    series:
        One sequence per argument of its K higher terms: with
        ``factorial_scaled=True`` (JAX's default) the derivatives x⁽ᵏ⁾(0) of the path
        x(t) through ``primals``; else its Taylor coefficients x⁽ᵏ⁾(0)/k!.
    factorial_scaled:
        Whether the input and output terms are derivatives (True) or Taylor
        coefficients (False).
    batched:
        Whether each term has a leading axis of B paths through the same
        ``primals``: B jets from one evaluation of ``fun`` (as ``jax.vmap`` of JAX's
        ``jet`` over the series), each output term with the same leading axis.
    seed_placement:
        For :mod:`dualad_gpu`: a function applied to the rows the path carries
        (B·K of them, jet by jet), which places them on devices.

    Returns
    -------
    (primals_out, series_out)
        ``fun(*primals)``, and for each leaf of it the list of its K terms along the
        path, in the same convention as ``series``.

    Examples
    --------
    The derivatives of sin along x(t) = t³ at t = 0.5, as in JAX's docstring:

    >>> import numpy as np, dualad
    >>> h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    >>> f0, (f1, f2) = dualad.jet(np.sin, (h0,), ((h1, h2),))
    >>> bool(np.isclose(f2, -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2))
    True

    The first eight derivatives of exp(sin x) at 0 in one pass:

    >>> _, terms = dualad.jet(lambda x: np.exp(np.sin(x)), (0.0,), ([1.0] + [0.0] * 7,))
    >>> np.round(terms, 10).tolist()
    [1.0, 1.0, 0.0, -3.0, -8.0, -3.0, 56.0, 217.0]

    Third derivatives ∂³f(x)[v, v, v] along three directions v at once:

    >>> f = lambda x: x[0] ** 2 * x[1] + np.sin(x[1])
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> _, (_, _, third) = dualad.jet(f, (np.array([1.0, 0.0]),),
    ...                               ((v, np.zeros_like(v), np.zeros_like(v)),),
    ...                               batched=True)
    >>> third.tolist()      # 0, -cos 0, 3·∂²₀∂₁f - cos 0
    [0.0, -1.0, 5.0]
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError("jet expects primals and series as tuples or lists, one entry per "
                        f"argument; got {type(primals).__name__} and {type(series).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet got {len(primals)} primals and {len(series)} series: give "
                         "one sequence of terms per argument")
    orders = {len(terms) for terms in series}
    if len(orders) != 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments: "
                         f"{sorted(orders)}")
    order = orders.pop()
    xs = [as_float_array(x, complex_ok=True) for x in primals]
    terms_in = [[as_float_array(term, x.dtype, complex_ok=True) for term in terms]
                for x, terms in zip(xs, series)]
    batch = _batch_size(xs, terms_in) if batched else 1
    tag = JetTag(order, batch)
    jets = []
    for x, terms in zip(xs, terms_in):
        if not order:
            jets.append(x)
            continue
        coefficients = []
        for k, term in enumerate(terms, start=1):
            check_tangent_shape(x.shape, term.shape[1:] if batched else term.shape, batched)
            term = term / math.factorial(k) if factorial_scaled else term
            coefficients.append(ops.reshape(term, shape=(batch, 1) + x.shape))
        rows = ops.reshape(ops.concatenate(*coefficients, axis=1),
                           shape=(batch * order,) + x.shape)
        jets.append(Dual._new(x, rows if seed_placement is None else seed_placement(rows),
                              tag))
    try:
        out = fun(*jets)
        leaves, tree = tree_flatten(out)
        pairs = [_read(leaf, tag, factorial_scaled, batched) for leaf in leaves]
    finally:
        tag.live = False
    return tree.unflatten([p for p, _ in pairs]), tree.unflatten([s for _, s in pairs])


def _batch_size(xs: list, terms_in: list) -> int:
    """The number of jets of a batched call (each term's leading axis)."""
    sizes = {term.shape[0] if term.ndim > x.ndim else None
             for x, terms in zip(xs, terms_in) for term in terms}
    if None in sizes or len(sizes) > 1:
        raise ValueError("jet(batched=True) expects every term to have a leading axis of "
                         "the same number of jets ahead of its argument's shape; got "
                         f"leading axes {sorted(map(str, sizes))}")
    return sizes.pop() if sizes else 1


def _read(leaf: Any, tag: JetTag, factorial_scaled: bool, batched: bool
          ) -> tuple[Any, list]:
    K, B = tag.order, tag.batch
    primal, stacked = read_leaf(leaf, tag, K * B, "jet")
    shape = tuple(np.shape(primal))
    stacked = ops.reshape(fit_tangent(stacked, shape), shape=(B, K) + shape)
    terms = [stacked[:, k - 1] * math.factorial(k) if factorial_scaled else stacked[:, k - 1]
             for k in range(1, K + 1)]
    return primal, terms if batched else [only_row(t) for t in terms]  # (arrays, even 0-d)
