"""Sparse Jacobians and Hessians, their goals measured: four size sweeps and a
stiff solve, dualad's ``sparse_jacobian`` and ``sparse_hessian`` against dense
transforms, SciPy's coloured finite differences and asdex.

- ``sparse_bratu``: the Jacobian of the 1-D Bratu residual (:func:`bratu`),
  n = 10³ … 10⁶, checked against the tridiagonal derived by hand;
- ``sparse_brusselator``: the Jacobian of the 2-D Brusselator's right-hand side
  (:func:`brusselator`, ``rhs(t, y)``, ``argnums=1``), N = 32 … 256 (n = 2N²),
  checked against the block matrix derived by hand;
- ``sparse_brusselator_solve``: ``solve_ivp(rhs, method="BDF")`` over
  ``(0, BRUSSELATOR_T_END)`` with dualad's sparse Jacobian, against SciPy's own
  finite differences with ``jac_sparsity`` (the "primal" of that table: what a
  SciPy user already has) and without (dense, N ≤ 32);
- ``sparse_rosenbrock`` and ``sparse_laplacian``: the Hessians of the chained
  Rosenbrock function and of a 2-D Laplacian energy (:func:`laplacian_energy`),
  n = 10³ … 10⁶, checked against the tridiagonal and the five-point matrix.

Every sweep times four of dualad's implementations, each over the primal:
``dualad`` (the Jacobian or Hessian with its pattern prepared: one pass per
colour and a gather), ``detect`` (``jacobian_sparsity`` / ``hessian_sparsity``),
``coloring`` (``column_coloring`` / ``star_coloring`` of the pattern) and
``prepare`` (all of a first call's one-time work: detection, colourings and the
decompression's index). The peers: dense ``dualad.jacfwd`` / ``dualad.hessian``
and ``jax.jit(jax.jacfwd)`` where the dense matrix fits (:data:`DENSE_MAX_SIZE`),
``scipy.optimize._numdiff.approx_derivative`` with ``sparsity=(pattern, groups)``
(``scipy-fd``: the groups computed once, as ``least_squares`` does) and with
``sparsity=pattern`` (``scipy-fd+group``: ``group_columns`` inside every call),
and asdex's sparse Jacobian or Hessian under ``jax.jit`` (``asdex``) and its
detection and colouring (``asdex-prepare``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import dualad

from ..replay import cache as replay_cache
from .core import (APPROX_RTOL, EXACT_RTOL, Factory, PeerUnavailable, Problem, import_jax,
                   require, warm_up)
from .second_order import rosenbrock

#: The sizes of the sweeps: n for Bratu and Rosenbrock, the grid's N for the
#: Brusselator (n = 2N²) and the Laplacian energy (n = N²: 1024 … 10⁶).
BRATU_SIZES = (10**3, 10**4, 10**5, 10**6)
BRUSSELATOR_SIZES = (32, 64, 128, 256)
BRUSSELATOR_SOLVE_SIZES = (16, 32, 64)
ROSENBROCK_SIZES = (10**3, 10**4, 10**5, 10**6)
LAPLACIAN_SIZES = (32, 100, 316, 1000)

#: The end of the Brusselator's solves: about a second at N = 64 with SciPy's
#: sparse finite differences (BDF's default tolerances, one Jacobian, ~18 LU).
BRUSSELATOR_T_END = 1.0

#: The largest n (unknowns) at which each dense peer runs: the n × n Jacobian of
#: 10⁴ unknowns is 800 MB; a dense Hessian of 10³ takes about a second; SciPy's
#: dense finite differences make BDF factorize dense n × n matrices (8 s at N = 32).
DENSE_MAX_SIZE = {"dualad.jacfwd": 10**4, "jax.jit": 10**4, "dualad.hessian": 1024,
                  "scipy-fd-dense": 2 * 32**2}

#: The targets, by sweep and n: the Jacobian ≤ 10× the primal and the
#: detection ≤ 20× at n = 10⁵; ≥ 100× faster than dense ``dualad.jacfwd`` at 10⁴
#: (:attr:`Problem.versus_target`, which applies to every own column).
BRATU_TARGETS = {10**5: {"dualad": 10.0, "detect": 20.0}}
BRATU_VERSUS = {10**4: ("dualad.jacfwd", 0.01)}

#: dualad's columns: the prepared transform, then the one-time steps, then a fresh
#: transform's calls up to its first replay (preparing, interpreting, recording if it
#: replays, replaying): their peak memory is the largest a user meets.
OWN = ("dualad", "detect", "coloring", "prepare", "first-calls")

#: The sweeps whose derivative is a Hessian (the others: a Jacobian).
HESSIAN_FAMILIES = ("rosenbrock", "laplacian")


# -- the functions ----------------------------------------------------------------------


def bratu(u, lam: float = 1.0, xp=np):
    """The 1-D Bratu residual ``(u[i-1] − 2u[i] + u[i+1]) / h² + λ·exp(u[i])``, with
    ``u`` zero beyond both ends and ``h = 1 / (n + 1)``."""
    h = 1.0 / (u.shape[0] + 1)
    zero = xp.zeros(1, dtype=u.dtype)
    padded = xp.concatenate((zero, u, zero))
    return (padded[:-2] - 2.0 * u + padded[2:]) / h**2 + lam * xp.exp(u)


def brusselator(N: int, xp=np):
    """The right-hand side ``rhs(t, y)`` of the 2-D Brusselator on an N × N periodic
    grid of [0, 1]², and its initial state ``y0`` (``u`` then ``v``, n = 2N²).

    As in DifferentialEquations.jl's tutorial and Hairer & Wanner's BRUSS-2D::

        u' = 1 + u²v − 4.4u + α∇²u + f(x, y, t),   v' = 3.4u − u²v + α∇²v,

    α = 10, ∇² the five-point Laplacian with spacing 1/(N − 1), f = 5 in the disk
    of radius 0.1 around (0.3, 0.6) from t = 1.1 on;
    u₀ = 22 (y(1 − y))^{3/2}, v₀ = 27 (x(1 − x))^{3/2}.
    """
    x = np.linspace(0.0, 1.0, N)
    disk = 5.0 * (((x[:, None] - 0.3) ** 2 + (x[None, :] - 0.6) ** 2) <= 0.01)
    alpha = 10.0 * (N - 1) ** 2

    def laplacian(w):
        return alpha * (xp.roll(w, 1, 0) + xp.roll(w, -1, 0) + xp.roll(w, 1, 1)
                        + xp.roll(w, -1, 1) - 4.0 * w)

    def rhs(t, y):
        u, v = xp.reshape(y, (2, N, N))
        uuv = u * u * v
        du = 1.0 + uuv - 4.4 * u + laplacian(u) + disk * (t >= 1.1)
        dv = 3.4 * u - uuv + laplacian(v)
        return xp.concatenate((xp.reshape(du, (-1,)), xp.reshape(dv, (-1,))))

    u0 = np.broadcast_to(22.0 * (x[None, :] * (1.0 - x[None, :])) ** 1.5, (N, N))
    v0 = np.broadcast_to(27.0 * (x[:, None] * (1.0 - x[:, None])) ** 1.5, (N, N))
    return rhs, np.concatenate((u0.ravel(), v0.ravel()))


def laplacian_energy(u, xp=np):
    """``½ Σ |∇u|² + Σ u⁴/4`` of ``u`` on a square grid (flattened), ∇ the forward
    differences inside the grid."""
    N = math.isqrt(u.shape[0])
    grid = xp.reshape(u, (N, N))
    dx, dy = grid[1:, :] - grid[:-1, :], grid[:, 1:] - grid[:, :-1]
    return 0.5 * (xp.sum(dx * dx) + xp.sum(dy * dy)) + 0.25 * xp.sum(u**4)


# -- the derivatives derived by hand (the references) ------------------------------------


def bratu_jacobian(u, lam: float = 1.0):
    """The Jacobian of :func:`bratu`: ``1/h²`` off the diagonal, ``−2/h² + λe^u`` on it."""
    from scipy import sparse

    n, off = u.shape[0], (u.shape[0] + 1) ** 2
    return sparse.diags_array([np.full(n - 1, off), lam * np.exp(u) - 2.0 * off,
                               np.full(n - 1, off)], offsets=(-1, 0, 1), format="csr")


def _path_matrix(N: int, periodic: bool):
    """The second differences of a path of N points: periodic (−2 on the diagonal),
    or with free ends (``DᵀD``, D the forward differences; 1 at both ends)."""
    from scipy import sparse

    ones = np.ones(N - 1)
    if periodic:
        P = sparse.diags_array([ones, np.full(N, -2.0), ones], offsets=(-1, 0, 1)).tolil()
        P[0, N - 1] = P[N - 1, 0] = 1.0
        return P.tocsr()
    D = sparse.diags_array([-np.ones(N - 1), ones], offsets=(0, 1), shape=(N - 1, N))
    return (D.T @ D).tocsr()


def _grid_laplacian(N: int, periodic: bool):
    from scipy import sparse

    P, eye = _path_matrix(N, periodic), sparse.eye_array(N)
    return (sparse.kron(P, eye) + sparse.kron(eye, P)).tocsr()


def brusselator_jacobian(N: int, y):
    """The Jacobian of :func:`brusselator`'s ``rhs(t, ·)`` at ``y``:
    ``[[diag(2uv − 4.4) + αL, diag(u²)], [diag(3.4 − 2uv), −diag(u²) + αL]]``."""
    from scipy import sparse

    u, v = np.reshape(y, (2, -1))
    L = 10.0 * (N - 1) ** 2 * _grid_laplacian(N, periodic=True)
    diag = sparse.diags_array
    return sparse.block_array([[diag(2 * u * v - 4.4) + L, diag(u * u)],
                               [diag(3.4 - 2 * u * v), L - diag(u * u)]], format="csr")


def rosenbrock_hessian(x):
    """The tridiagonal Hessian of :func:`~dualad.bench.rosenbrock` (as
    ``scipy.optimize.rosen_hess``, without its dense n × n array)."""
    from scipy import sparse

    d = np.zeros_like(x)
    d[:-1] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    d[1:] += 200.0
    off = -400.0 * x[:-1]
    return sparse.diags_array([off, d, off], offsets=(-1, 0, 1), format="csr")


def laplacian_energy_hessian(u):
    """The Hessian of :func:`laplacian_energy`: the grid's Laplacian (free ends)
    plus ``diag(3u²)``."""
    from scipy import sparse

    L = _grid_laplacian(math.isqrt(u.shape[0]), periodic=False)
    return (L + sparse.diags_array(3.0 * u * u)).tocsr()


# -- the inputs, made once per size ----------------------------------------------------------


class SweepCase(NamedTuple):
    """One size of a sweep: the differentiated function ``f``, the point ``x``, the
    arguments before it (``(t,)`` for the Brusselator, differentiated with
    ``argnums=1``), the derivative derived by hand, its global pattern (ones, also
    where the reference is zero at ``x``), and whether it is a Hessian."""

    f: Callable
    x: np.ndarray
    args: tuple
    reference: Any
    pattern: Any
    hessian: bool


@functools.cache
def sweep_case(family: str, size: int) -> SweepCase:
    """The :class:`SweepCase` of ``family`` at ``size``, made once per process."""
    if family == "bratu":
        u = np.sin(np.pi * np.arange(1, size + 1) / (size + 1))
        reference = bratu_jacobian(u)
        return SweepCase(bratu, u, (), reference, _pattern_of(reference), False)
    if family == "brusselator":  # u = 0 on two edges: u² is zero there, not in the pattern
        rhs, y0 = brusselator(size)
        return SweepCase(rhs, y0, (0.0,), brusselator_jacobian(size, y0),
                     _pattern_of(brusselator_jacobian(size, np.ones_like(y0))), False)
    rng = np.random.default_rng(20240616 + size)
    if family == "rosenbrock":
        x = rng.uniform(-2.0, 2.0, size)
        reference = rosenbrock_hessian(x)
        return SweepCase(rosenbrock, x, (), reference, _pattern_of(reference), True)
    u = rng.standard_normal(size * size)
    reference = laplacian_energy_hessian(u)
    return SweepCase(laplacian_energy, u, (), reference, _pattern_of(reference), True)


def _jax_function(family: str, size: int):
    """The same function written with ``jax.numpy``, of the differentiated array only."""
    import jax.numpy as jnp

    if family == "bratu":
        return functools.partial(bratu, xp=jnp)
    if family == "brusselator":
        rhs = brusselator(size, xp=jnp)[0]
        return lambda y: rhs(0.0, y)
    return functools.partial(rosenbrock if family == "rosenbrock" else laplacian_energy, xp=jnp)


# -- checks -----------------------------------------------------------------------------------


def as_csr(matrix):
    """A Jacobian or Hessian of any library (SciPy sparse, NumPy or JAX dense, JAX
    BCOO) as a ``scipy.sparse.csr_array``."""
    from scipy import sparse

    if sparse.issparse(matrix):
        return sparse.csr_array(matrix)
    if hasattr(matrix, "indices") and hasattr(matrix, "nse"):  # jax.experimental.sparse.BCOO
        rows, cols = np.asarray(matrix.indices).T
        return sparse.csr_array((np.asarray(matrix.data), (rows, cols)), shape=matrix.shape)
    return sparse.csr_array(np.asarray(matrix))


def _checked(thunk, reference, what: str, rtol: float = EXACT_RTOL, read=as_csr):
    """Call ``thunk`` once, check ``read(result)`` against the sparse ``reference``:
    the largest error relative to the largest ``|reference|`` (no dense copies)."""
    got = read(thunk())
    scale = abs(reference).max()
    err = abs(got - reference).max() if got.shape == reference.shape else math.inf
    if not err <= rtol * scale:
        raise AssertionError(f"{what}: max error {err:.3g}, max |expected| {scale:.3g}")
    return thunk


def _checked_equal(thunk, expected, what: str, read=lambda r: r):
    """Call ``thunk`` once, check that ``read(result)`` equals ``expected`` exactly."""
    got = read(thunk())
    if not np.array_equal(np.asarray(got), np.asarray(expected)):
        raise AssertionError(f"{what}: got {got}, expected {expected}")
    return thunk


def _pattern_of(reference):
    """The pattern of a reference (ones where it stores an entry, zero or not)."""
    from scipy import sparse

    return sparse.csr_array((np.ones(reference.nnz), reference.indices, reference.indptr),
                            shape=reference.shape)


def _cap(peer: str, n: int) -> None:
    """Raise :class:`PeerUnavailable` when the dense ``peer`` does not fit at ``n``."""
    if n > DENSE_MAX_SIZE[peer]:
        raise PeerUnavailable(f"dense, run at n <= {DENSE_MAX_SIZE[peer]} only "
                              "(see bench.DENSE_MAX_SIZE)")


# -- the factories of one sweep -----------------------------------------------------------------


def _factories(family: str, size: int) -> dict[str, Factory]:
    """The primal, dualad's implementations (:data:`OWN`) and the peers of one
    Jacobian or Hessian problem; each checked against the :class:`SweepCase`'s reference."""
    hessian = family in HESSIAN_FAMILIES
    name = "hessian" if hessian else "jacobian"

    def case() -> SweepCase:
        return sweep_case(family, size)

    def of_x():
        """The function of ``x`` alone (the Brusselator's ``t`` fixed)."""
        c = case()
        return (lambda x: c.f(*c.args, x)) if c.args else c.f

    def transform():
        c = case()
        return dualad.sparse_hessian(c.f) if hessian else \
            dualad.sparse_jacobian(c.f, argnums=len(c.args))

    def primal():
        c = case()
        return functools.partial(c.f, *c.args, c.x)

    def dual():
        c = case()
        call = functools.partial(transform(), *c.args, c.x)
        warm_up(call)  # the replay records after dualad.replay.RECORD_AFTER calls
        return _checked(call, c.reference, f"dualad.sparse_{name}")

    def prepared():
        """The pattern and colours dualad's transform uses (its result is checked)."""
        c = case()
        return transform().prepare(*c.args, c.x)

    def detect():
        sparsity = getattr(dualad, f"{name}_sparsity")
        return _checked(functools.partial(sparsity, of_x(), case().x), case().pattern,
                        f"dualad.{name}_sparsity", read=lambda p: as_csr(p).astype(float))

    def color():
        from dualad.sparse import column_coloring, star_coloring

        coloring = star_coloring if hessian else column_coloring
        ready = prepared()
        return _checked_equal(functools.partial(coloring, ready.pattern), ready.colors,
                              coloring.__name__)

    def prepare():
        c = case()
        return _checked_equal(lambda: transform().prepare(*c.args, c.x), prepared().passes,
                              "prepare", read=lambda p: p.passes)

    def first_calls():
        c = case()

        def calls():
            call = functools.partial(transform(), *c.args, c.x)
            for _ in range(replay_cache.RECORD_AFTER + 1):  # preparing, interpreting,
                call()  # recording; each result dropped before the next, as in a loop
            return call()
        return _checked(calls, c.reference, f"dualad.sparse_{name} (first calls)")

    def dense():
        c = case()
        what = "dualad.hessian" if hessian else "dualad.jacfwd"
        _cap(what, c.x.size)
        full = dualad.hessian(c.f) if hessian else dualad.jacfwd(c.f, argnums=len(c.args))
        return _checked(functools.partial(full, *c.args, c.x), c.reference, what)

    def jax_dense():
        _cap("jax.jit", case().x.size)
        jax = import_jax()
        jac = jax.jit(jax.jacfwd(_jax_function(family, size)))
        x = jax.device_put(case().x)
        return _checked(lambda: jax.block_until_ready(jac(x)), case().reference,
                        "jax.jit(jax.jacfwd)")

    def scipy_fd(grouped: bool) -> Factory:
        def factory():
            from scipy.optimize._numdiff import approx_derivative, group_columns

            f, x, pattern = of_x(), case().x, case().pattern
            sparsity = (pattern, group_columns(pattern)) if grouped else pattern
            return _checked(lambda: approx_derivative(f, x, method="2-point", sparsity=sparsity),
                            case().reference, "approx_derivative", rtol=APPROX_RTOL)

        return factory

    def asdex_colored():
        asdex = require("asdex")
        import_jax()
        colored = asdex.hessian_coloring if hessian else asdex.jacobian_coloring
        fun, x = _jax_function(family, size), case().x
        colored(fun, x)  # warm-up: numba compiles asdex's colouring
        return _checked_equal(lambda: colored(fun, x), case().pattern.nnz,
                              f"asdex.{name}_coloring", read=lambda c: c.sparsity.nnz)

    def asdex():
        asdex = require("asdex")
        jax = import_jax()
        fun, x = _jax_function(family, size), case().x
        colored = getattr(asdex, f"{name}_coloring")(fun, x)
        full = jax.jit(getattr(asdex, f"{name}_from_coloring")(fun, colored))
        xj = jax.device_put(x)
        return _checked(lambda: jax.block_until_ready(full(xj)), case().reference,
                        f"jax.jit(asdex.{name}_from_coloring)")

    peers: dict[str, Factory] = (
        {"dualad.hessian": dense} if hessian else
        {"dualad.jacfwd": dense, "jax.jit": jax_dense, "scipy-fd": scipy_fd(grouped=True),
         "scipy-fd+group": scipy_fd(grouped=False)})
    return {"primal": primal, "dualad": dual, "detect": detect, "coloring": color,
            "prepare": prepare, "first-calls": first_calls, **peers, "asdex": asdex, "asdex-prepare": asdex_colored}


def _sweep_problem(family: str, size: int, title: str, largest: int, target=None,
                   versus=None, versus_target=None) -> Problem:
    """One size of a sweep: dualad's columns, peak memory at the ``largest`` size."""
    return Problem(name=f"sparse_{family}_{size}", title=title, target=target,
                   factories=_factories(family, size), own=OWN, versus=versus,
                   versus_target=versus_target, group=f"sparse_{family}", size=size,
                   memory=size == largest)


def sparse_bratu(n: int) -> Problem:
    """The sparse Jacobian of :func:`bratu` at n unknowns (tridiagonal, 3 colours),
    with its targets (:data:`BRATU_TARGETS`, :data:`BRATU_VERSUS`); peak
    memory measured at n = 10⁶."""
    versus, factor = BRATU_VERSUS.get(n, (None, None))
    return _sweep_problem("bratu", n, f"sparse Jacobian, 1-D Bratu, n={n}", BRATU_SIZES[-1],
                          target=BRATU_TARGETS.get(n), versus=versus, versus_target=factor)


def sparse_brusselator(N: int) -> Problem:
    """The sparse Jacobian of :func:`brusselator`'s ``rhs(t, y)`` with ``argnums=1``
    on an N × N grid (n = 2N²); reported."""
    return _sweep_problem("brusselator", N, f"sparse Jacobian, 2-D Brusselator, N={N}",
                          BRUSSELATOR_SIZES[-1])


def sparse_rosenbrock(n: int) -> Problem:
    """The sparse Hessian of the chained Rosenbrock function (tridiagonal); reported."""
    return _sweep_problem("rosenbrock", n, f"sparse Hessian, Rosenbrock, n={n}",
                          ROSENBROCK_SIZES[-1])


def sparse_laplacian(N: int) -> Problem:
    """The sparse Hessian of :func:`laplacian_energy` on an N × N grid (n = N²,
    five-point); reported."""
    return _sweep_problem("laplacian", N, f"sparse Hessian, Laplacian energy, N={N}",
                          LAPLACIAN_SIZES[-1])


# -- the stiff solve ----------------------------------------------------------------------------


@functools.cache
def _solve_reference(N: int) -> np.ndarray:
    """The Brusselator's state at :data:`BRUSSELATOR_T_END`, solved with the
    Jacobian derived by hand."""
    from scipy.integrate import solve_ivp

    rhs, y0 = brusselator(N)
    sol = solve_ivp(rhs, (0.0, BRUSSELATOR_T_END), y0, method="BDF", rtol=1e-6, atol=1e-8,
                    jac=lambda t, y: brusselator_jacobian(N, y))
    return sol.y[:, -1]


def brusselator_solve(N: int) -> Problem:
    """``solve_ivp(rhs, (0, BRUSSELATOR_T_END), y0, method="BDF")`` of the
    Brusselator on an N × N grid: the "primal" is SciPy's default, finite
    differences with ``jac_sparsity`` (the pattern given); ``dualad`` passes
    ``jac=dualad.sparse_jacobian(rhs, argnums=1)``, made afresh for each solve
    (detection and colouring included); ``scipy-fd-dense`` gives neither (N ≤ 32).
    Each checked against a solve with the Jacobian derived by hand, to 1e-3 of
    the state's largest entry (BDF's default tolerances)."""
    from scipy import sparse

    def solve(**options) -> Factory:
        def factory():
            from scipy.integrate import solve_ivp

            rhs, y0 = brusselator(N)
            if options.get("dense"):
                _cap("scipy-fd-dense", y0.size)
            jac = {"jac_sparsity": sweep_case("brusselator", N).pattern} if options.get("sparsity") \
                else {}

            def run():
                extra = ({"jac": dualad.sparse_jacobian(rhs, argnums=1)} if options.get("dualad")
                         else jac)
                return solve_ivp(rhs, (0.0, BRUSSELATOR_T_END), y0, method="BDF", **extra)

            return _checked(run, sparse.csr_array(_solve_reference(N)[None, :]),
                            "solve_ivp", rtol=1e-3, read=lambda sol: as_csr(sol.y[None, :, -1]))

        return factory

    return Problem(name=f"sparse_brusselator_solve_{N}",
                   title=f"solve_ivp BDF, 2-D Brusselator, N={N}", target=None,
                   factories={"primal": solve(sparsity=True), "dualad": solve(dualad=True),
                              "scipy-fd-dense": solve(dense=True)},
                   group="sparse_brusselator_solve", size=N)


#: Every problem of this module, in registry order.
SPARSE_PROBLEMS = (*map(sparse_bratu, BRATU_SIZES), *map(sparse_brusselator, BRUSSELATOR_SIZES),
                   *map(brusselator_solve, BRUSSELATOR_SOLVE_SIZES),
                   *map(sparse_rosenbrock, ROSENBROCK_SIZES),
                   *map(sparse_laplacian, LAPLACIAN_SIZES))


def jacobian_bytes(matrix) -> int:
    """The size of a CSR array: ``data``, ``indices`` and ``indptr`` (the yardstick
    of the peak-memory target at n = 10⁶)."""
    return matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes
