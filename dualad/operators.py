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

from .pytrees import tree_map, tree_structure
from . import ops
from .inputs import as_array
from .replay import REPLAY_BY_DEFAULT, replayed
from .collapsed import collapsed, scalar_input

__all__ = ["laplacian", "hessian_trace", "divergence", "biharmonic"]


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
        x = scalar_input(args, argnums, "laplacian")
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
        _, sums = collapsed(fun, args, argnums, directions, weights, seed_placement)
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
        x = scalar_input(args, argnums, "hessian_trace")
        if C.shape[0] != x.size:
            raise ValueError(f"hessian_trace: C is {C.shape[0]}x{C.shape[0]}, the argument "
                             f"has {x.size} entries")
        directions = vectors.T.reshape((x.size,) + x.shape)
        _, sums = collapsed(fun, args, argnums, directions, weights, seed_placement)
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
        x = scalar_input(args, argnums, "biharmonic")
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
        x = scalar_input(args, argnums, "divergence")
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
