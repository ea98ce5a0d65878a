"""Derivative tensors of any order from univariate Taylor series.

The d-th derivative tensor of f at x holds one value per multi-index i = (i₁, …, iₙ)
with |i| = d (the rest are its permutations). Griewank, Utke and Walther (Math.
Comp. 69, 2000) recover every ∂ⁱf exactly from the d-th Taylor coefficients f_j of
f(x + t·j) along the C(n + d − 1, d) integer directions j with |j| = d:

    ∂ⁱf(x) = Σ_j γᵢⱼ f_j,   γᵢⱼ = Σ_{0 < k ≤ i} (−1)^{d−|k|} C(i, k) C(d·k/|k|, j) (|k|/d)^d,

with products of (generalised) binomial coefficients over the n components. The
directions travel as one batched :func:`dualad.jet` of order d: one evaluation of f,
each primitive's Taylor recurrence on all directions at once, O(d²) per primitive
rather than the O(2^d) of nested first-order passes.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .pytrees import tree_structure
from .dual import as_float_array
from .inputs import check_argnums
from .taylor import jet

__all__ = ["derivative_tensor"]


def derivative_tensor(fun: Callable, order: int, argnums: int = 0, *,
                      seed_placement: Callable | None = None) -> Callable:
    """The ``order``-th derivative tensor of ``fun`` in argument ``argnums``, from one
    batched Taylor-mode pass (exact interpolation of univariate jets; see the module
    docstring).

    The result of each output leaf has the shape ``out.shape + x.shape * order``, the
    layout of ``order`` nested :func:`dualad.jacfwd` (``order=2``: :func:`dualad.hessian`).
    The pass carries C(n + order − 1, order) directions for an argument of n entries:
    meant for small n. A directional derivative ∂ᵏf(x)[v, …, v] is one jet along v,
    :func:`dualad.jet`. ``seed_placement`` is :func:`dualad.jet`'s (for
    :mod:`dualad_gpu`).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: x[0] ** 3 * x[1] + np.sin(x[1])
    >>> T = dualad.derivative_tensor(f, order=3)(np.array([1.0, 0.0]))
    >>> T.shape, np.round([T[0, 0, 0], T[0, 0, 1], T[1, 1, 1]], 12).tolist()
    ((2, 2, 2), [0.0, 6.0, -1.0])
    """
    check_argnums(argnums, single=True)
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    d = int(order)

    @functools.wraps(fun)
    def tensor(*args: Any, **kwargs: Any) -> Any:
        if not -len(args) <= argnums < len(args):
            raise ValueError(f"derivative_tensor: argnums {argnums} is out of range for a "
                             f"call with {len(args)} positional arguments")
        x = as_float_array(args[argnums], complex_ok=True)
        n = x.size
        directions, gamma, where = _interpolation(n, d)
        seeds = directions.astype(x.dtype).reshape((len(directions),) + x.shape)
        zeros = np.zeros_like(seeds)

        def along(x_: Any) -> Any:
            return fun(*args[:argnums], x_, *args[argnums + 1:], **kwargs)

        out, terms = jet(along, (x,), ([seeds] + [zeros] * (d - 1),),
                         factorial_scaled=False, batched=True, seed_placement=seed_placement)
        tree = tree_structure(out)

        def assembled(value: Any, leaf_terms: list) -> Any:
            shape = tuple(np.shape(value))
            # (array methods: the same code on NumPy's, JAX's arrays and Duals)
            f_j = leaf_terms[-1].reshape((len(directions), -1))
            weights = gamma.astype(f_j.dtype) if f_j.dtype.kind == "f" else gamma
            full = (weights @ f_j)[where]  # (n**d, out.size): each tuple's multi-index
            return full.T.reshape(shape + x.shape * d)

        return tree.unflatten([assembled(v, t) for v, t in
                               zip(tree.flatten_up_to(out), tree.flatten_up_to(terms))])

    return tensor


def _multi_indices(n: int, d: int) -> list[tuple[int, ...]]:
    """Every i ∈ ℕⁿ with |i| = d, lexicographically from (d, 0, …, 0)."""
    if n == 1:
        return [(d,)]
    return [(first,) + rest for first in range(d, -1, -1)
            for rest in _multi_indices(n - 1, d - first)]


def _binomial(a: float, k: int) -> float:
    """C(a, k) for any real a: a (a − 1) … (a − k + 1) / k!."""
    out = 1.0
    for m in range(k):
        out *= (a - m) / (m + 1)
    return out


@functools.lru_cache(maxsize=32)
def _interpolation(n: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The directions j (rows), the matrix γ, and for each of the n^d index tuples the
    row of its multi-index."""
    indices = _multi_indices(n, d)
    directions = np.array(indices, dtype=float)
    row = {i: r for r, i in enumerate(indices)}
    gamma = np.zeros((len(indices), len(indices)))
    weights: dict = {}  # k -> C(d·k/|k|, j) (|k|/d)^d over the directions j
    for r, i in enumerate(indices):
        for k in itertools.product(*[range(m + 1) for m in i]):
            size = sum(k)
            if size == 0:
                continue
            if k not in weights:
                weights[k] = np.array([math.prod(_binomial(d * km / size, jm)
                                                 for km, jm in zip(k, j)) for j in indices]
                                      ) * (size / d) ** d
            sign = -1.0 if (d - size) % 2 else 1.0
            gamma[r] += sign * math.prod(math.comb(m, km) for m, km in zip(i, k)) * weights[k]
    where = np.array([row[tuple(np.bincount(t, minlength=n))]
                      for t in itertools.product(range(n), repeat=d)], dtype=np.intp)
    return directions, gamma, where
