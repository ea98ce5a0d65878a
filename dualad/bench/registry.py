"""The registry: every problem by name, the size sweeps, the peer columns."""

from __future__ import annotations

from .compiled import (compiled_grad_textbook, compiled_helmholtz, compiled_hessian_rosenbrock,
                       compiled_jacfwd_tanh, compiled_jvp_sum_sin_exp)
from .core import Problem
from .forward import BATCH_SIZES, JVP_SIZES, jacfwd_textbook, jvp_batched, jvp_sum_sin_exp
from .jacobians import CHUNK_SIZES, JACOBIAN_SIZES, jacfwd_chunk, jacfwd_tanh, jacrev_tanh
from .reverse import HELMHOLTZ_SIZES, grad_sum_sin_exp, helmholtz_problem
from .second_order import HESSIAN_SIZES, hessian_rosenbrock, hvp_rosenbrock


#: Every benchmark problem, by name. Factories are cheap: nothing is
#: computed or imported until a thunk is made.
PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    *map(jvp_sum_sin_exp, JVP_SIZES), grad_sum_sin_exp(), jacfwd_textbook(),
    *map(hessian_rosenbrock, HESSIAN_SIZES), hvp_rosenbrock(),
    *map(helmholtz_problem, HELMHOLTZ_SIZES),
    *map(jvp_batched, BATCH_SIZES),
    *map(jacfwd_tanh, JACOBIAN_SIZES), *map(jacrev_tanh, JACOBIAN_SIZES),
    *map(jacfwd_chunk, CHUNK_SIZES),
    compiled_jacfwd_tanh(), compiled_jvp_sum_sin_exp(), compiled_hessian_rosenbrock(),
    compiled_helmholtz(), compiled_grad_textbook())}

#: Groups, each printed as its own table (a size sweep: a row per size): name -> title.
GROUPS: dict[str, str] = {
    "helmholtz": "Gradient of the Helmholtz free energy (Baydin et al., \"Automatic "
                 "Differentiation in Machine Learning: a Survey\", Table 4)",
    "jvp_batched": "JVP along K seeds at once, sum(sin(x)exp(-x^2)+log1p(x^2)), n=10^4",
    "jacfwd_tanh": "Dense Jacobian by forward mode: jacfwd of tanh(Wx)+x^3",
    "jacrev_tanh": "Dense Jacobian by reverse mode: jacrev of tanh(Wx)+x^3",
    "jacfwd_chunk_size": "jacfwd of tanh(Wx)+x^3, n=1000, by chunk size: time and peak "
                         "memory",
    "compiled": "Compiled: dualad_gpu (dualad's transforms under jax.jit) against "
                "jax.jit of JAX's transforms",
}

#: The groups ``python -m dualad bench`` runs only when asked (``--only GROUP`` or
#: ``--all``): peer-heavy sweeps, about a minute each, that would take the
#: default run past two minutes.
ON_REQUEST: tuple[str, ...] = ("jvp_batched", "jacfwd_tanh", "jacrev_tanh", "jacfwd_chunk_size")

#: What a group's ``size`` is, when not ``n`` (the first column of its table).
SIZE_LABELS: dict[str, str] = {"jvp_batched": "K", "jacfwd_chunk_size": "chunk_size"}

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
}

#: Every peer column, in table order.
PEER_NAMES: list[str] = list(dict.fromkeys(k for p in PROBLEMS.values() for k in p.peers))
