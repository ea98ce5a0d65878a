"""Forward differential operators: the Laplacian, weighted Hessian traces, the
divergence and the biharmonic, each from one evaluation of the function.

The Laplacian is collapsed Taylor mode (the forward Laplacian of Li et al., 2024):
along directions u_1 … u_D, every value y of the program carries its D first
derivatives ∂_d y and one sum, T_y = Σ_d w_d·y_d⁽²⁾, of the second Taylor
coefficients y_d⁽²⁾ = ½·u_dᵀ∇²y u_d — not D second-order coefficients, nor the D²
entries of a Hessian. For y = g(x):

- g linear (a reshape, a sum, ``x @ W``): each of the D + 1 rows maps alone;
- g elementwise, with its row of partials pᵢ: ∂_d y = Σᵢ pᵢ ∂_d xᵢ, and
  T_y = Σᵢ pᵢ T_{xᵢ} + ½ Σᵢⱼ ∂ⱼpᵢ·cᵢⱼ with cᵢⱼ = Σ_d w_d ∂_d xᵢ ∂_d xⱼ: the directions
  are contracted first, and each partial is differentiated along one tangent;
- any other primitive: the JVP rule for the first row and T's linear part, and the
  second coefficients of D two-term series (:class:`dualad.taylor.Series`).

Δf = 2·T_f for the unit directions; tr(C∇²f) for C = Σ_d w_d u_d u_dᵀ (its
eigen-decomposition); random directions with weights 1/m give Hutchinson's
unbiased estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .pytrees import tree_flatten, tree_map, tree_structure
from . import ops
from .dual import Dual, as_float_array
from .tangents import align_tangent, fit_tangent
from .inputs import as_array
from .primitive import MINUS_ONE, ONE, Primitive, Tag
from .replay import REPLAY_BY_DEFAULT, replayed
from .taylor import RowsTag, Series, _Context, _per_coefficient, evaluated, zeros_like

__all__ = ["laplacian", "hessian_trace", "divergence", "biharmonic"]


class CollapsedTag(RowsTag):
    """The tag of one collapsed evaluation: its Duals' tangents hold D first derivatives
    and, last, the weighted sum of the second Taylor coefficients."""

    __slots__ = ("weights", "unit")
    order = 2  # (second-order information: a solver's chord-Newton takes two steps)

    def __init__(self, weights: np.ndarray) -> None:
        super().__init__()
        self.weights = weights
        self.unit = bool(np.all(weights == 1))

    def nonlinear(self, prim: Primitive, primals: list, tangents: list, moving: list,
                  ans: Any, params: dict) -> Any:
        if prim.partials is not None:
            return self._elementwise(prim, primals, tangents, moving, ans)
        rows = _per_coefficient(prim, primals, tangents, ans, params)
        if rows is None:  # the result does not depend on the moving arguments
            return None
        curvature = self._through_series(prim, primals, tangents, ans, params)
        return _added_to_last(fit_tangent(rows, np.shape(ans)), curvature, len(self.weights))

    def _elementwise(self, prim: Primitive, primals: list, tangents: list, moving: list,
                     ans: Any) -> Any:
        """The rows of y = f(x₁, …) by its row of partials pᵢ: Σᵢ pᵢ·(each row of xᵢ),
        plus ½ Σᵢⱼ ∂ⱼpᵢ·cᵢⱼ on the last, cᵢⱼ = Σ_d w_d ∂_d xᵢ ∂_d xⱼ (the directions
        contracted first). Each partial is evaluated once, on Duals of two seeds: xⱼ
        moving by cᵢⱼ, then y by one, so ∂ⱼpᵢ·cᵢⱼ = first + second·Σⱼ pⱼcᵢⱼ."""
        D, shape = len(self.weights), tuple(np.shape(ans))
        ndim = len(shape)
        firsts = {i: align_tangent(tangents[i][:D], ndim) for i in moving}
        tag, weights, pending = Tag(), {}, []
        y_seeds = np.zeros((2,) + shape, np.result_type(ans))
        y_seeds[1] = 1.0
        y = Dual._new(ans, y_seeds, tag)
        for i in moving:
            partial = prim.partials[i]
            if partial is None or partial is ONE or partial is MINUS_ONE:
                weights[i] = partial
                continue
            c = {j: self._contracted(firsts[i] * firsts[j]) for j in moving}
            lifted = [a if j not in moving else Dual._new(
                _shaped(a, shape), ops.concatenate(_lead(c[j], ans), _lead(zeros_like(c[j]), ans),
                                                   axis=0), tag)
                      for j, a in enumerate(primals)]
            p = evaluated(prim, partial, y, lifted)
            if isinstance(p, Dual) and p._tag is tag:
                weights[i] = p.primal
                if p.tangent is not None:
                    pending.append((fit_tangent(p.tangent, shape), c))
            else:
                weights[i] = p
        rows = None
        for i, w in weights.items():
            if w is None:
                continue
            t = fit_tangent(align_tangent(tangents[i], ndim), shape)
            term = t if w is ONE else -t if w is MINUS_ONE else \
                ops.scale(w, t) if prim.nonfinite_partials else w * t
            rows = term if rows is None else rows + term
        curvature = None
        for seeds, c in pending:
            moved = None
            for j, w in weights.items():
                if w is None:
                    continue
                term = c[j] if w is ONE else -c[j] if w is MINUS_ONE else w * c[j]
                moved = term if moved is None else moved + term
            term = seeds[0] if moved is None else seeds[0] + seeds[1] * moved
            curvature = term if curvature is None else curvature + term
        return rows if curvature is None else _added_to_last(rows, curvature * 0.5, D)

    def _contracted(self, products: Any) -> Any:
        """Σ_d w_d·products[d] (one matrix product: einsum's path search costs more)."""
        if self.unit:
            return ops.sum_(products, axis=(0,), keepdims=False)
        shape = tuple(np.shape(products))[1:]
        flat = ops.reshape(products, shape=(len(self.weights), int(np.prod(shape, dtype=int))))
        return ops.reshape(ops.matmul(self.weights, flat), shape=shape)

    def _through_series(self, prim: Primitive, primals: list, tangents: list, ans: Any,
                        params: dict) -> Any:
        """Σ_d w_d y_d⁽²⁾ from a two-term series along each direction (x⁽²⁾ = 0)."""
        total = zeros_like(ans)
        for d, w in enumerate(self.weights):
            context = _Context()
            args = [a if t is None else Series.known(a, fit_tangent(t, np.shape(a))[d:d + 1],
                                                      context)
                    for a, t in zip(primals, tangents)]
            y = Series.result(prim, args, params, ans, context)
            total = total + y.coefficient(2) * w
        return total


def _shaped(value: Any, shape: tuple) -> Any:
    """``value`` broadcast to ``shape`` (as it is where it has that shape already)."""
    return value if np.shape(value) == shape else ops.broadcast_to(value, shape=shape)


def _lead(value: Any, ans: Any) -> Any:
    """``value`` broadcast to ``ans``'s shape, with a leading axis of one."""
    shape = tuple(np.shape(ans))
    return ops.reshape(_shaped(value, shape), shape=(1,) + shape)


def _added_to_last(rows: Any, value: Any, D: int) -> Any:
    """``rows`` (D + 1 of them) with ``value`` added to the last (two calls, not a
    slice, a sum and a concatenation of the parts)."""
    shape = tuple(np.shape(rows))
    return rows + ops.index_add(_shaped(value, shape[1:]), index=(D,), shape=shape)


def _collapsed(fun: Callable, args: tuple, argnum: int, directions: np.ndarray,
               weights: np.ndarray, seed_placement: Callable | None = None
               ) -> tuple[Any, Any]:
    """``fun(*args)`` and, for each output leaf, Σ_d w_d·½u_dᵀ∇²y u_d (``directions``:
    (D, *x.shape); ``seed_placement`` as in :func:`dualad.jacfwd`)."""
    x = as_float_array(args[argnum])
    tag = CollapsedTag(np.asarray(weights, dtype=x.dtype))
    directions = np.asarray(directions, dtype=x.dtype)
    seeds = np.concatenate([directions, np.zeros((1,) + x.shape, x.dtype)], axis=0)
    call = list(args)
    call[argnum] = Dual._new(x, seeds if seed_placement is None else seed_placement(seeds),
                             tag)
    D = len(weights)
    try:
        out = fun(*call)
        from .forward import read_leaf
        leaves, tree = tree_flatten(out)
        pairs = [read_leaf(leaf, tag, D + 1, "laplacian") for leaf in leaves]
    finally:
        tag.live = False
    values = tree.unflatten([p for p, _ in pairs])
    sums = tree.unflatten([fit_tangent(t, np.shape(p))[D] for p, t in pairs])
    return values, sums


def _scalar_input(args: tuple, argnum: int, name: str) -> np.ndarray:
    if not -len(args) <= argnum < len(args):
        raise ValueError(f"{name}: argnums {argnum} is out of range for a call with "
                         f"{len(args)} positional arguments")
    x = as_float_array(args[argnum])
    if x.dtype.kind == "c":
        raise TypeError(f"{name} takes real inputs")
    return x


def laplacian(fun: Callable, argnums: int = 0, *, method: str = "exact",
              num_samples: int = 16, rng: Any = None, distribution: str = "rademacher",
              local: bool = False, seed_placement: Callable | None = None,
              replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """The Laplacian Δf = tr ∇²f of ``fun`` in argument ``argnums``, from one forward
    pass (collapsed Taylor mode: see the module docstring).

    Parameters
    ----------
    fun:
        A function of arrays written with NumPy; each output leaf gets its own
        Laplacian (the shape of that leaf).
    argnums:
        The argument (an array of any shape) the Laplacian is taken in.
    method:
        ``"exact"``: the n unit directions. ``"sparse"``: exact too, with one direction
        per colour of the Hessian's detected pattern, u_c = Σ_{i of colour c} e_i, no
        two coordinates of one colour coupled (∂²f/∂xᵢ∂xⱼ structurally zero), so that
        Σ_c u_cᵀ∇²f u_c = Δf (see :mod:`dualad.sparse.laplacian`; needs SciPy). A sum
        over particles of a per-particle function takes as many directions as a
        particle has coordinates; a dense Hessian takes n, as ``"exact"`` does (plus
        the detection). The pattern is found at the first call for each input shape
        and dtype, kept, and checked as :func:`dualad.sparse_hessian` checks its own;
        ``lap.prepare(*args)`` shows it and its colours. ``"hutchinson"``:
        ``num_samples`` random directions v, E[vᵀ∇²f v] = Δf for v with identity
        covariance (unbiased; its standard error falls as 1/√num_samples).
        ``"stde"``: the stochastic Taylor derivative estimator's sparse random jets
        (Shi et al., 2024): ``num_samples`` coordinates drawn without replacement,
        Δf ≈ n/m Σ_{i drawn} ∂ᵢ²f (unbiased, exact when m ≥ n; cheaper per sample
        than Hutchinson's, and better where the Hessian's diagonal dominates).
    num_samples, rng, distribution:
        For ``"hutchinson"`` and ``"stde"``: how many directions, a
        ``numpy.random.Generator`` (or a seed) to draw them from, and for
        ``"hutchinson"`` ``"rademacher"`` (±1) or ``"gaussian"``.
    local:
        For ``"sparse"``: detect the pattern at the first point only, and trust it at
        later calls (see :func:`dualad.hessian_sparsity`), for a function whose
        global pattern cannot be found (a :class:`~dualad.sparse.ValueDependentError`).
    seed_placement:
        As in :func:`dualad.jacfwd`, for the directions (:mod:`dualad_gpu`).
    replay:
        As in :func:`dualad.jacfwd` (the exact and the sparse Laplacian; random
        directions are drawn anew at each call and interpreted).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.sum(x ** 3) + np.prod(x)
    >>> float(dualad.laplacian(f)(np.array([1.0, 2.0, 3.0])))  # 6·(1 + 2 + 3)
    36.0

    Two particles in 3-D, coupled only through a sum: 3 directions instead of 6.

    >>> def energy(x):                  # x: (particles, 3)
    ...     return np.sum(np.tanh(x @ np.array([1.0, 2.0, 3.0])) ** 2)
    >>> x = np.array([[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]])
    >>> sparse = dualad.laplacian(energy, method="sparse")
    >>> bool(np.isclose(sparse(x), dualad.laplacian(energy)(x), rtol=1e-12))
    True
    >>> sparse.prepare(x).passes
    3
    """
    if method not in ("exact", "sparse", "hutchinson", "stde"):
        raise ValueError(f"method must be 'exact', 'sparse', 'hutchinson' or 'stde', got "
                         f"{method!r}")
    if distribution not in ("rademacher", "gaussian"):
        raise ValueError(f"distribution must be 'rademacher' or 'gaussian', got "
                         f"{distribution!r}")
    if method in ("hutchinson", "stde"):
        _check_samples(num_samples)

    if method == "sparse":
        try:
            from .sparse.laplacian import sparse_laplacian
        except ImportError as error:
            raise ImportError("laplacian(method='sparse') needs SciPy: pip install "
                              "dualad[sparse]; method='exact' does not") from error
        return sparse_laplacian(fun, argnums, local=local, replay=replay)

    def delta(fun: Callable, *args: Any) -> Any:
        x = _scalar_input(args, argnums, "laplacian")
        if method == "exact":
            directions = np.eye(x.size, dtype=x.dtype).reshape((x.size,) + x.shape)
            weights = np.ones(x.size)
        elif method == "stde":
            m = min(num_samples, x.size)
            drawn = np.random.default_rng(rng).choice(x.size, size=m, replace=False)
            directions = np.eye(x.size, dtype=x.dtype)[drawn].reshape((m,) + x.shape)
            weights = np.full(m, x.size / m)
        else:
            generator = np.random.default_rng(rng)
            shape = (num_samples,) + x.shape
            directions = (generator.choice([-1.0, 1.0], size=shape)
                          if distribution == "rademacher" else generator.standard_normal(shape))
            weights = np.full(num_samples, 1.0 / num_samples)
        _, sums = _collapsed(fun, args, argnums, directions, weights, seed_placement)
        return tree_map(lambda s: as_array(s * 2), sums)

    return replayed(delta, fun, argnums, replay and method == "exact")


def _check_samples(num_samples: Any) -> None:
    if not isinstance(num_samples, (int, np.integer)) or num_samples < 1:
        raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")


def hessian_trace(fun: Callable, C: Any, argnums: int = 0, *,
                  seed_placement: Callable | None = None,
                  replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """tr(C ∇²f), the Laplacian weighted by a symmetric matrix ``C`` (of size n, the
    flattened argument's), from one forward pass along C's eigenvectors;
    ``seed_placement`` and ``replay`` as in :func:`dualad.jacfwd`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: x[0] ** 2 * x[1]          # ∇²f = [[2 x1, 2 x0], [2 x0, 0]]
    >>> float(dualad.hessian_trace(f, np.array([[1.0, 0.5], [0.5, 0.0]]))(np.ones(2)))
    4.0
    """
    C = np.asarray(C, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or not np.allclose(C, C.T):
        raise ValueError("hessian_trace: C must be a symmetric square matrix")
    weights, vectors = np.linalg.eigh(C)

    def trace(fun: Callable, *args: Any) -> Any:
        x = _scalar_input(args, argnums, "hessian_trace")
        if C.shape[0] != x.size:
            raise ValueError(f"hessian_trace: C is {C.shape[0]}x{C.shape[0]}, the argument "
                             f"has {x.size} entries")
        directions = vectors.T.reshape((x.size,) + x.shape)
        _, sums = _collapsed(fun, args, argnums, directions, weights, seed_placement)
        return tree_map(lambda s: as_array(s * 2), sums)

    return replayed(trace, fun, argnums, replay)


def biharmonic(fun: Callable, argnums: int = 0, *, method: str = "exact",
               num_samples: int = 16, rng: Any = None,
               replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """The biharmonic Δ²f = Σᵢⱼ ∂ᵢ²∂ⱼ²f of ``fun`` in argument ``argnums``.

    ``method="exact"``: the collapsed Laplacian of the collapsed Laplacian, one
    evaluation of ``fun`` carrying n first derivatives of n first derivatives.
    ``method="stde"``: the stochastic Taylor derivative estimator (Shi et al., 2024):
    one batched fourth-order :func:`dualad.jet` along ``num_samples`` standard Gaussian
    directions v drawn from ``rng``, whose fourth moments make E[∂⁴f[v, v, v, v]] =
    3 Δ²f (unbiased; the cost grows with the samples, not with n², for large n).
    ``replay`` as in :func:`dualad.jacfwd` (random directions are interpreted).

    Examples
    --------
    >>> import numpy as np, dualad
    >>> f = lambda x: np.sum(x ** 4) + x[0] ** 2 * x[1] ** 2   # Δ²f = 24·2 + 8
    >>> float(dualad.biharmonic(f)(np.array([0.3, -1.2])))
    56.0
    >>> estimates = dualad.biharmonic(f, method="stde", num_samples=4000, rng=0)
    >>> bool(abs(estimates(np.array([0.3, -1.2])) - 56.0) < 3.0)
    True
    """
    if method not in ("exact", "stde"):
        raise ValueError(f"method must be 'exact' or 'stde', got {method!r}")
    if method == "exact":
        return laplacian(laplacian(fun, argnums, replay=False), argnums, replay=replay)
    _check_samples(num_samples)
    from .taylor import jet

    def estimate(fun: Callable, *args: Any) -> Any:
        x = _scalar_input(args, argnums, "biharmonic")
        v = np.random.default_rng(rng).standard_normal((num_samples,) + x.shape)
        v = v.astype(x.dtype)
        zeros = np.zeros_like(v)

        def along(z: Any) -> Any:
            return fun(*args[:argnums], z, *args[argnums + 1:])

        out, terms = jet(along, (x,), ([v, zeros, zeros, zeros],), batched=True)
        tree = tree_structure(out)
        return tree.unflatten([as_array(np.mean(t[3], axis=0) / 3)
                              for t in tree.flatten_up_to(terms)])

    return replayed(estimate, fun, argnums, False)


def divergence(fun: Callable, argnums: int = 0, *,
               replay: bool = REPLAY_BY_DEFAULT) -> Callable:
    """∇·F = Σᵢ ∂Fᵢ/∂xᵢ of a vector field ``fun`` (its output the shape of its input
    argument ``argnums``), from one forward pass with the n unit directions; ``replay``
    as in :func:`dualad.jacfwd`.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> F = lambda x: np.array([x[0] * x[1], np.sin(x[1])])
    >>> float(dualad.divergence(F)(np.array([2.0, 0.0])))   # x1 + cos x1
    1.0
    """
    from .forward import _jvp

    def div(fun: Callable, *args: Any) -> Any:
        x = _scalar_input(args, argnums, "divergence")
        eye = np.eye(x.size, dtype=x.dtype).reshape((x.size,) + x.shape)

        def at(z):
            return fun(*args[:argnums], z, *args[argnums + 1:])

        out, tangent = _jvp(at, (x,), (eye,), True, False)
        if np.shape(out) != x.shape:
            raise ValueError(f"divergence: the field's value has shape {np.shape(out)}, its "
                             f"argument {x.shape}: they must be the same")
        return as_array(ops.einsum(ops.reshape(tangent, shape=(x.size, x.size)),
                                   subscripts="ii->"))

    return replayed(div, fun, argnums, replay)
