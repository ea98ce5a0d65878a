"""The registry: every problem by name, the size sweeps, the peer columns."""

from __future__ import annotations

from .compiled import (compiled_grad_textbook, compiled_helmholtz, compiled_hessian_rosenbrock,
                       compiled_jacfwd_tanh, compiled_jvp_sum_sin_exp, compiled_laplacian_mlp,
                       device_problems)
from .core import Problem
from .forward import BATCH_SIZES, JVP_SIZES, jacfwd_textbook, jvp_batched, jvp_sum_sin_exp
from .inline import INLINE_PROBLEMS
from .parallel import PARALLEL_PROBLEMS
from .jacobians import CHUNK_SIZES, JACOBIAN_SIZES, jacfwd_chunk, jacfwd_tanh, jacrev_tanh
from .reverse import HELMHOLTZ_SIZES, grad_sum_sin_exp, helmholtz_problem
from .scipy_solvers import SCIPY_SOLVER_PROBLEMS
from .second_order import HESSIAN_SIZES, hessian_rosenbrock, hvp_rosenbrock
from .sparse import SPARSE_PROBLEMS
from .spectral import grad_power_spectrum, jvp_fft
from .taylor import TAYLOR_PROBLEMS, laplacian_problem, laplacian_sparse_problem


#: Every benchmark problem, by name. Factories are cheap: nothing is
#: computed or imported until a thunk is made.
PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    *map(jvp_sum_sin_exp, JVP_SIZES), grad_sum_sin_exp(), jacfwd_textbook(),
    *map(hessian_rosenbrock, HESSIAN_SIZES), hvp_rosenbrock(),
    *map(helmholtz_problem, HELMHOLTZ_SIZES), *INLINE_PROBLEMS,
    *map(jvp_batched, BATCH_SIZES),
    *map(jacfwd_tanh, JACOBIAN_SIZES), *map(jacrev_tanh, JACOBIAN_SIZES),
    *map(jacfwd_chunk, CHUNK_SIZES),
    compiled_jacfwd_tanh(), compiled_jvp_sum_sin_exp(), compiled_hessian_rosenbrock(),
    compiled_helmholtz(), compiled_grad_textbook(), compiled_laplacian_mlp(),
    *device_problems(), *SPARSE_PROBLEMS, jvp_fft(),
    grad_power_spectrum(), *SCIPY_SOLVER_PROBLEMS, *TAYLOR_PROBLEMS,
    laplacian_problem(), laplacian_sparse_problem(), *PARALLEL_PROBLEMS)}

#: Groups, each printed as its own table (a size sweep: a row per size): name -> title.
GROUPS: dict[str, str] = {
    "helmholtz": "Gradient of the Helmholtz free energy (Baydin et al., \"Automatic "
                 "Differentiation in Machine Learning: a Survey\", Table 4)",
    "inline": "Transforms written inline (dualad.jacfwd(f)(x) at every call): the same "
              "targets",
    "jvp_batched": "JVP along K seeds at once, sum(sin(x)exp(-x^2)+log1p(x^2)), n=10^4",
    "jacfwd_tanh": "Dense Jacobian by forward mode: jacfwd of tanh(Wx)+x^3",
    "jacrev_tanh": "Dense Jacobian by reverse mode: jacrev of tanh(Wx)+x^3",
    "jacfwd_chunk_size": "jacfwd of tanh(Wx)+x^3, n=1000, by chunk size: time and peak "
                         "memory",
    "compiled": "Compiled: dualad_gpu (dualad's transforms under jax.jit) against "
                "jax.jit of JAX's transforms",
    "device": "Compiled at an accelerator's sizes: dualad_gpu against jax.jit (run where "
              "JAX has a GPU)",
    "sparse_bratu": "Sparse Jacobian of the 1-D Bratu residual (tridiagonal, 3 colours)",
    "sparse_brusselator": "Sparse Jacobian of the 2-D Brusselator's rhs(t, y), argnums=1 "
                          "(n = 2N^2, 8 colours)",
    "sparse_brusselator_solve": "solve_ivp(method='BDF') of the 2-D Brusselator, "
                                "t in (0, 1): wall time over SciPy's sparse finite differences",
    "sparse_rosenbrock": "Sparse Hessian of the chained Rosenbrock function (tridiagonal, "
                         "3 colours)",
    "sparse_laplacian": "Sparse Hessian of 1/2 sum |grad u|^2 + sum u^4/4 on an N x N grid "
                        "(n = N^2, five-point, 5 colours)",
    "spectral": "Complex numbers and the FFT, n = 2^20",
    "scipy_ivp": "Jacobian of solve_ivp's final state in K parameters (RK45, rtol=1e-8): "
                 "Lotka-Volterra (K=3), a ring of ten species (K=30)",
    "scipy_root": "Implicit derivative of a root x*(p) of a forced 1-D Bratu problem: "
                  "dense dF/dx (n=100), sparse (n=10^4)",
    "taylor_elementwise": "Taylor mode: jet to order K of sum(tanh(sin(x)exp(-x))/(1+x^2)), "
                          "n=50 (time grows as K^2 at most)",
    "taylor_solve": "Taylor mode: jet to order K of sum(solve(A + diag(sin x), x)), n=50",
    "laplacian": "Forward Laplacian (collapsed Taylor mode) of a tanh MLP, against Hessian "
                 "traces",
    "laplacian_sparse": "Sparse forward Laplacian of a sum over particles of a per-particle "
                        "tanh MLP, against the dense one",
    "parallel": "Parallel derivatives (executor=): two workers against the serial transform",
}

#: The groups ``python -m dualad bench`` runs only when asked (``--only GROUP`` or
#: ``--all``): peer-heavy sweeps, about a minute each, that would take the
#: default run past two minutes.
ON_REQUEST: tuple[str, ...] = ("device", "jvp_batched", "jacfwd_tanh", "jacrev_tanh",
                               "jacfwd_chunk_size",
                               "sparse_bratu", "sparse_brusselator", "sparse_brusselator_solve",
                               "sparse_rosenbrock", "sparse_laplacian", "spectral",
                               "scipy_ivp", "scipy_root", "taylor_elementwise",
                               "taylor_solve", "laplacian", "laplacian_sparse", "parallel")

#: What a group's ``size`` is, when not ``n`` (the first column of its table).
SIZE_LABELS: dict[str, str] = {"jvp_batched": "K", "jacfwd_chunk_size": "chunk_size",
                               "sparse_brusselator": "N", "sparse_brusselator_solve": "N",
                               "sparse_laplacian": "N", "scipy_ivp": "K",
                               "taylor_elementwise": "K", "taylor_solve": "K"}

#: The notes under every sparse sweep's table: dualad's five columns.
_SPARSE_COLUMNS = (
    "Each cell: time / time of the NumPy primal (column 'primal'), both measured in this "
    "process. dualad: the",
    "transform's call with its pattern prepared (one pass per colour, then one gather into "
    "a CSR array); detect:",
    "jacobian_sparsity / hessian_sparsity; coloring: column_coloring / star_coloring of the "
    "pattern; prepare: all",
    "of a first call's one-time work (detection, colourings, the decompression's index); "
    "first-calls: a fresh",
    "transform's calls up to its first replay (preparing, interpreting, recording if it "
    "replays, replaying).",
    "'peak X': the peak of the memory allocated by one call (tracemalloc, which sees "
    "NumPy's buffers; the result",
    "included, the inputs not).",
)

#: The notes on the peers of the sparse sweeps.
_SPARSE_PEERS = (
    "asdex: jax.jit(asdex.{0}_from_coloring) (a BCOO); asdex-prepare: asdex.{0}_coloring "
    "(detection and colouring).",
)

#: Lines printed under a group's table.
GROUP_NOTES: dict[str, tuple[str, ...]] = {
    "helmholtz": (
        "Each cell: time of the gradient / time of f, the NumPy primal (column 'primal'), "
        "both measured",
        "in this process. dualad-fwd: dualad.jacfwd, all n seeds in one pass; "
        "dualad-rev: dualad.grad.",
        "DiffSharp: the figures Baydin et al. publish (compiled F#, against F#), for "
        "context; reference:",
        "the peers' ratios measured on another machine when the targets were set.",
    ),
    "jvp_batched": (
        "Each cell: time of the K JVPs / time of f, the NumPy primal (column 'primal'), both "
        "measured in this process.",
        "dualad: dualad.jvp(f, (x,), (T,), batched=True), T of shape (K, n); hand-dual: the "
        "same by hand in NumPy;",
        "jax, jax.jit, torch: vmap of jvp; autograd: a Python loop of make_jvp over the "
        "seeds. No targets.",
    ),
    "jacfwd_tanh": (
        "Each cell: time of the n x n Jacobian / time of f, the NumPy primal (column "
        "'primal'). dualad: dualad.jacfwd;",
        "jax, jax.jit, torch: their jacfwd; autograd: autograd.jacobian (reverse mode); "
        "numdifftools, num-dual:",
        "their Jacobians, at n <= 100 only (seconds to minutes a call at n = 1000). "
        "No targets.",
    ),
    "jacrev_tanh": (
        "Each cell: time of the n x n Jacobian / time of f, the NumPy primal (column "
        "'primal'). dualad: dualad.jacrev;",
        "jax, jax.jit, torch: their jacrev; autograd: autograd.jacobian. No targets.",
    ),
    "jacfwd_chunk_size": (
        "dualad.jacfwd(f, chunk_size=c): n/c passes of c seeds. Cells: time / time of the "
        "NumPy primal; 'peak': the",
        "peak of the memory allocated during one call (tracemalloc, which sees NumPy's "
        "buffers; the 8 MB Jacobian",
        "included, the inputs not). No targets.",
    ),
    "spectral": (
        "ratio = time / time of the NumPy primal, both measured in this process. jvp_fft: "
        "dualad.jvp(np.fft.fft, (z,), (t,));",
        "jax, jax.jit: jax.jvp of jnp.fft.fft. grad_power_spectrum: dualad.grad of "
        "sum(abs(rfft(x))**2); jax.jit, autograd,",
        "torch: their grad. Target: the FFT's JVP <= 2.5x (the primal's transform and the "
        "tangent's).",
    ),
    "compiled": (
        "ratio = time / time of the NumPy primal; 'vs jax.jit' = time of dualad_gpu / time "
        "of jax.jit;",
        "peer columns are ratios to the primal. Both compiled sides get device arrays and "
        "are timed",
        "to jax.block_until_ready. dualad-numpy: dualad's uncompiled transform.",
        "The tanh primal is an OpenBLAS W @ x, slowed by XLA's threads on few cores: "
        "OPENBLAS_NUM_THREADS=1",
        "steadies its ratio (not its target, which is against jax.jit).",
    ),
    "device": (
        "As 'compiled', at n = 4000 (jacfwd), 10^7 (jvp), 1000 (hessian, helmholtz): the "
        "compiled sides run on",
        "JAX's default device (a GPU where there is one), the primal and dualad-numpy on the "
        "CPU. The laplacian's jax.jit",
        "is JAX's Hessian trace. The targets are the CPU's, for comparison.",
    ),
    "sparse_bratu": (
        *_SPARSE_COLUMNS,
        "Peers: dense dualad.jacfwd and jax.jit(jax.jacfwd) at n <= 10^4 (800 MB); scipy-fd: "
        "approx_derivative(f, x,",
        "'2-point', sparsity=(pattern, groups)), the groups made once (as least_squares "
        "does); scipy-fd+group:",
        "sparsity=pattern, group_columns in every call (linear in n: 0.2 s at 10^6, 5 "
        "groups: random order).",
        _SPARSE_PEERS[0].format("jacobian"),
        "Targets: at n = 10^5 the Jacobian <= 10x and the detection <= 20x; at "
        "n = 10^4, <= 0.01x dense",
        "dualad.jacfwd (every own column). At n = 10^6 the CSR Jacobian is 40 MB (data, "
        "indices, indptr): 'peak",
        "dualad' must stay within 3x, 120 MB.",
    ),
    "sparse_brusselator": (
        *_SPARSE_COLUMNS,
        "Peers as for sparse_bratu (dense ones at N <= 64); the Jacobian is of rhs(t, y) "
        "with argnums=1. No targets.",
        _SPARSE_PEERS[0].format("jacobian"),
    ),
    "sparse_brusselator_solve": (
        "Each cell: wall time of the solve / that of the 'primal' column, here "
        "solve_ivp(rhs, (0, 1), y0, 'BDF',",
        "jac_sparsity=pattern): SciPy's coloured finite differences. dualad: "
        "jac=dualad.sparse_jacobian(rhs, argnums=1),",
        "made afresh in each solve (detection and colouring included); scipy-fd-dense: "
        "neither (N <= 32).",
        "BDF evaluates the Jacobian once here and spends the time in ~18 sparse LU "
        "factorizations. No targets.",
    ),
    "scipy_ivp": (
        "Each cell: time / time of the primal solve_ivp (column 'primal'), both measured in "
        "this process. jacfwd:",
        "dualad.jacfwd, forward sensitivities solved with the state; jacrev: dualad.jacrev, "
        "the adjoint: the",
        "primal once more with dense output, then one backward solve carrying every output's "
        "cotangent (2 and 10",
        "here). fd: approx_derivative(solve, p, '2-point'), K + 1 solves.",
        "Target: jacfwd <= 1 + K/2 primal solves.",
    ),
    "scipy_root": (
        "Each cell: time / time of the primal solve (column 'primal'), both measured in this "
        "process, the",
        "transform's own solve included. jvp: dualad.jvp of x*(p) along one direction; grad: "
        "dualad.grad of",
        "|x*|^2/2; jacfwd: in both parameters; fd: (x*(p + hv) - x*(p)) / h, one more solve. "
        "n=100: root(hybr),",
        "dF/dx by jacfwd; n=10^4: newton_krylov (Laplacian preconditioner), dF/dx sparse (3 "
        "colours, SuperLU).",
        "Targets: jvp and grad <= 2 primal solves.",
    ),
    "taylor_elementwise": (
        "Each cell: time / time of the NumPy primal (column 'primal'), both measured in this "
        "process. dualad:",
        "dualad.jet along one direction to order K (every term up to K); jax: jax.jit of "
        "jax.experimental.jet,",
        "compiled before timing. The sweep's slope is the cost's growth with K: at most K^2 "
        "(nested duals: 2^K).",
    ),
    "taylor_solve": (
        "Each cell: time / time of the NumPy primal (column 'primal'), both measured in this "
        "process. dualad:",
        "dualad.jet along one direction to order K. JAX's jet has no rule for a linear solve: "
        "no peer.",
    ),
    "laplacian": (
        "Each cell: time / time of the NumPy primal, both measured in this process. dualad: "
        "dualad.laplacian",
        "(one pass: D first derivatives and the sum of the second ones); hessian: "
        "trace(dualad.hessian);",
        "jax-hessian: jax.jit(trace(jax.hessian)); jax-jet: jax.jit of vmap(jet) over the D "
        "unit directions.",
        "Targets: dualad <= 0.55x trace(dualad.hessian), and faster than jax.jit's Hessian "
        "trace.",
    ),
    "laplacian_sparse": (
        "Each cell: time / time of the NumPy primal, both measured in this process. dualad: "
        "dualad.laplacian(f,",
        "method='sparse'): one direction per colour of the Hessian's pattern (4, a "
        "particle's features; the",
        "pattern detected and coloured once, before timing); dense: dualad.laplacian, the "
        "n = 80 unit directions;",
        "jax-hessian: jax.jit(trace(jax.hessian)). Target: the sparse Laplacian <= 0.05x "
        "the dense one (20x faster).",
    ),
    "parallel": (
        "Here the column 'primal' is the SERIAL transform (no executor): each cell is a time "
        "over the serial time",
        "(0.5: twice as fast). threads: ThreadPoolExecutor(2); processes: "
        "ProcessPoolExecutor(2), spawned;",
        "dask: a Client of LocalCluster(n_workers=2, threads_per_worker=1). Each with "
        "executor= and no other option:",
        "a first call times a pass and chooses (parallel_overhead: one pass, so serial). "
        "Targets, for threads (the",
        "others side by side): <= 0.59 (1.7x faster) with two workers, and <= 1.05 for "
        "the cheap function.",
        "Run with OPENBLAS_NUM_THREADS=1 (one BLAS thread per worker) and nothing else on "
        "the cores.",
    ),
    "sparse_rosenbrock": (
        *_SPARSE_COLUMNS,
        "Peers: dense dualad.hessian at n <= 1024. " + _SPARSE_PEERS[0].format("hessian")
        + " No targets.",
    ),
    "sparse_laplacian": (
        *_SPARSE_COLUMNS,
        "Peers: dense dualad.hessian at n <= 1024. " + _SPARSE_PEERS[0].format("hessian")
        + " No targets.",
    ),
}

#: Every peer column, in table order.
PEER_NAMES: list[str] = list(dict.fromkeys(k for p in PROBLEMS.values() for k in p.peers))
