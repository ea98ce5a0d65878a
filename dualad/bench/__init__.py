"""Benchmarks of dualad against its primal and its peers, in one process.

This package is the one place where the benchmark problems are defined. Two
front ends use it:

- ``python -m dualad bench`` (:func:`main`) times the problems in one process,
  in about a minute and a half, and prints a table of ratios to the primal, then
  one table per group: a size sweep (the gradient of the Helmholtz free energy of
  Baydin et al.'s survey: a row per n) and the compiled problems (``dualad_gpu``
  against ``jax.jit``); the peer-heavy sweeps (batched JVP, dense ``jacfwd``
  and ``jacrev``, ``jacfwd``'s chunk size, the sparse sweeps, SciPy's
  differentiated solvers) only when asked (``--only GROUP``, ``--all``:
  :data:`ON_REQUEST`);
- the asv suite under ``asv_benches/`` imports the same :class:`Problem` objects
  for its ``time_`` and ``track_`` benchmarks (the performance dashboard).

A :class:`Problem` is a primal function, the dualad transform(s) of it, and the
same transform done by peer libraries. Each is built by a *factory*: a function
that prepares inputs, compiles or warms up, checks the result once against the
known derivative, and returns a zero-argument *thunk* that does one measured
call. Peers are imported lazily, inside their factories; a factory whose
library is missing raises :class:`PeerUnavailable`, a ``NotImplementedError``,
which asv reports as a skipped benchmark. Every ratio divides by the *NumPy*
primal: "how much slower than the NumPy code I already have".

The modules, by family: :mod:`~dualad.bench.core` (:class:`Problem`,
:func:`measure`, :func:`peak_memory`, the factories' helpers),
:mod:`~dualad.bench.forward` (the JVP at two sizes, the batched JVP and the small
``jacfwd``), :mod:`~dualad.bench.jacobians` (dense ``jacfwd`` and ``jacrev`` of a
layer, and ``jacfwd``'s chunk-size sweep), :mod:`~dualad.bench.second_order`
(Rosenbrock's Hessian and HVP), :mod:`~dualad.bench.reverse` (the gradients: the
large sum and the Helmholtz sweep), :mod:`~dualad.bench.compiled` (dualad's
transforms compiled by ``dualad_gpu``, against ``jax.jit`` of JAX's own),
:mod:`~dualad.bench.sparse` (sparse Jacobians and Hessians: Bratu, the
Brusselator and its stiff solve, Rosenbrock, a Laplacian energy),
:mod:`~dualad.bench.scipy_solvers` (SciPy's solvers differentiated: the Jacobian
of a ``solve_ivp`` solution by forward sensitivities, the adjoint and finite
differences; the implicit derivative of a ``root``, dense and sparse),
:mod:`~dualad.bench.registry` (:data:`PROBLEMS`,
:data:`GROUPS`), :mod:`~dualad.bench.report` (:func:`run` and the tables),
:mod:`~dualad.bench.cli` (:func:`main`) and :mod:`~dualad.bench.snapshot` (what
``--json PATH`` writes: medians over ``--runs`` runs, with the commit, date and machine,
for the docs' performance page). Every public name is importable from
``dualad.bench`` itself.

Only dualad's public API (``dualad.jvp``, ``dualad.jacfwd``, ``dualad.jacrev``,
``dualad.grad``, ``dualad.hessian``, ``dualad.hvp``) and ``dualad_gpu``'s (the same
names) are used here.

A problem's target is a fixed ratio (the JVP at 10⁶: ≤ 2.5× the primal), the
best ratio measured for a set of peers dualad must beat (the Hessian: "faster than
every NumPy-level peer"), a multiple of one peer's time (``dualad_gpu`` ≤ 1.2×
``jax.jit``, :attr:`Problem.versus_target`), several of these (the tightest
wins), or nothing: a problem that is only reported.
Most problems have one dualad implementation, ``"dualad"``; the Helmholtz
problems have two, ``"dualad-fwd"`` (``jacfwd``, all seeds in one pass) and
``"dualad-rev"`` (``grad``), each with its own target (:attr:`Problem.own`).
Thunks that take a second or more per call are timed once (see
:func:`measure`), so that slow ones (numdifftools' Hessian at n = 100, about
2 s a call) keep the whole run short.

Examples
--------
>>> from dualad import bench
>>> problem = bench.PROBLEMS["jacfwd_textbook"]
>>> run = problem.make("dualad")         # checked once against the known gradient
>>> [float(g) for g in run()]
[5.5, 1.7163378145367738]
>>> times = bench.measure({"primal": problem.make("primal"), "dualad": run},
...                       repeat=2, min_time=0.001)
>>> sorted(times)
['dualad', 'primal']

The Hessian problems check dualad against ``scipy.optimize.rosen_hess``:

>>> bench.PROBLEMS["hessian_rosenbrock_10"].make("dualad")().shape
(10, 10)

The Helmholtz problems check every implementation against the hand-written
gradient :func:`helmholtz_grad` (itself checked by the complex step):

>>> helm = bench.PROBLEMS["helmholtz_8"]
>>> helm.own, helm.group, helm.size
(('dualad-fwd', 'dualad-rev'), 'helmholtz', 8)
>>> helm.make("dualad-rev")().shape
(8,)
>>> bench.PROBLEMS["helmholtz_50"].target_of("dualad-fwd")
7.5

Size sweeps are groups; the dense Jacobians are checked against the
Jacobian derived by hand, the batched JVP against ``T @ ∇f``:

>>> [p.size for p in bench.PROBLEMS.values() if p.group == "jacrev_tanh"]
[10, 100, 1000]
>>> bench.PROBLEMS["jacfwd_tanh_10"].make("dualad")().shape
(10, 10)
>>> y, tangents = bench.PROBLEMS["jvp_batched_16"].make("dualad")()
>>> tangents.shape
(16,)
>>> bench.PROBLEMS["jacfwd_tanh_1000_chunk_10"].memory
True

The compiled problems (group ``compiled``) compare ``dualad_gpu`` with ``jax.jit``:

>>> tanh = bench.PROBLEMS["compiled_jacfwd_tanh_1000"]
>>> tanh.own, tanh.peers, tanh.versus, tanh.versus_target
(('dualad_gpu',), ['jax.jit', 'dualad-numpy'], 'jax.jit', 1.2)

The sparse sweeps time the prepared transform and its one-time work, checked
against the derivatives derived by hand (a ``scipy.sparse`` CSR array):

>>> bratu = bench.PROBLEMS["sparse_bratu_1000"]
>>> bratu.own
('dualad', 'detect', 'coloring', 'prepare', 'first-calls')
>>> bratu.make("dualad")().nnz
2998

SciPy's differentiated solvers (groups ``scipy_ivp`` and ``scipy_root``, on request:
``python -m dualad bench --only scipy_ivp --only scipy_root``) divide each
derivative's time by the primal solve's: the Jacobian of ``solve_ivp``'s final state
in K = 3 and 30 parameters (target: forward sensitivities ≤ 1 + K/2 solves), and the
implicit derivative of a root at n = 100 (dense ∂F/∂x) and 10⁴ (sparse; target: the
JVP and the gradient ≤ 2 solves):

>>> ivp = bench.PROBLEMS["scipy_ivp_3"]
>>> ivp.own, ivp.peers, ivp.target_of("jacfwd")
(('jacfwd', 'jacrev'), ['fd'], 2.5)
>>> bench.PROBLEMS["scipy_root_10000"].own
('jvp', 'grad', 'jacfwd')
>>> bench.scipy_root(100).make("jvp")()[1].shape    # checked against dx*/dp by hand
(100,)
"""

from __future__ import annotations

from .cli import main
from .compiled import (TANH_LAYER_SIZE, compiled_grad_textbook, compiled_helmholtz,
                       compiled_hessian_rosenbrock, compiled_jacfwd_tanh, compiled_jvp_sum_sin_exp)
from .core import (APPROX_RTOL, EXACT_RTOL, Factory, PeerUnavailable, Problem, Thunk, measure,
                   peak_memory, ratio)
from .forward import (BATCH_SIZES, BATCHED_JVP_SIZE, JVP_SIZES, JVP_TARGETS, TEXTBOOK_GRADIENT,
                      TEXTBOOK_POINT, TEXTBOOK_VALUE, jacfwd_textbook, jvp_batched,
                      jvp_sum_sin_exp, sum_sin_exp, sum_sin_exp_grad, textbook)
from .jacobians import (CHUNK_SIZES, CHUNK_SWEEP_SIZE, JACOBIAN_SIZES, SLOW_PEER_MAX_SIZE,
                        jacfwd_chunk, jacfwd_tanh, jacrev_tanh, tanh_layer, tanh_layer_point)
from .registry import GROUPS, ON_REQUEST, PEER_NAMES, PROBLEMS, SIZE_LABELS
from .report import Result, format_group_table, format_table, run
from .reverse import (HELMHOLTZ_R, HELMHOLTZ_SIZES, HELMHOLTZ_T, HELMHOLTZ_TARGETS,
                      grad_sum_sin_exp, helmholtz, helmholtz_grad, helmholtz_problem)
from .scipy_solvers import IVP_SIZES, ROOT_SIZES, scipy_ivp, scipy_root
from .second_order import (HESSIAN_SIZES, HESSIAN_TARGETS, NUMPY_LEVEL_PEERS,
                           hessian_rosenbrock, hvp_rosenbrock, rosenbrock)
from .sparse import (BRATU_SIZES, BRUSSELATOR_SIZES, BRUSSELATOR_SOLVE_SIZES, DENSE_MAX_SIZE,
                     LAPLACIAN_SIZES, ROSENBROCK_SIZES, bratu, brusselator, brusselator_solve,
                     laplacian_energy, sparse_bratu, sparse_brusselator, sparse_laplacian,
                     sparse_rosenbrock, sweep_case)

__all__ = [
    "BATCHED_JVP_SIZE",
    "BATCH_SIZES",
    "BRATU_SIZES",
    "BRUSSELATOR_SIZES",
    "BRUSSELATOR_SOLVE_SIZES",
    "DENSE_MAX_SIZE",
    "LAPLACIAN_SIZES",
    "ROSENBROCK_SIZES",
    "CHUNK_SIZES",
    "CHUNK_SWEEP_SIZE",
    "GROUPS",
    "HELMHOLTZ_SIZES",
    "HESSIAN_SIZES",
    "IVP_SIZES",
    "JACOBIAN_SIZES",
    "JVP_SIZES",
    "JVP_TARGETS",
    "NUMPY_LEVEL_PEERS",
    "ON_REQUEST",
    "PROBLEMS",
    "PEER_NAMES",
    "ROOT_SIZES",
    "PeerUnavailable",
    "Problem",
    "Result",
    "SIZE_LABELS",
    "SLOW_PEER_MAX_SIZE",
    "TANH_LAYER_SIZE",
    "bratu",
    "brusselator",
    "brusselator_solve",
    "compiled_grad_textbook",
    "compiled_helmholtz",
    "compiled_hessian_rosenbrock",
    "compiled_jacfwd_tanh",
    "compiled_jvp_sum_sin_exp",
    "format_group_table",
    "format_table",
    "grad_sum_sin_exp",
    "helmholtz",
    "helmholtz_grad",
    "helmholtz_problem",
    "hessian_rosenbrock",
    "hvp_rosenbrock",
    "jacfwd_chunk",
    "jacfwd_tanh",
    "jacfwd_textbook",
    "jacrev_tanh",
    "jvp_batched",
    "jvp_sum_sin_exp",
    "laplacian_energy",
    "main",
    "measure",
    "peak_memory",
    "ratio",
    "rosenbrock",
    "run",
    "scipy_ivp",
    "scipy_root",
    "sparse_bratu",
    "sparse_brusselator",
    "sparse_laplacian",
    "sparse_rosenbrock",
    "sweep_case",
    "tanh_layer",
    "tanh_layer_point",
]
