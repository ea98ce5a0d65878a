"""The registry: every problem by name, the size sweeps, the peer columns."""

from __future__ import annotations

from .compiled import (compiled_grad_textbook, compiled_helmholtz, compiled_hessian_rosenbrock,
                       compiled_jacfwd_tanh, compiled_jvp_sum_sin_exp)
from .core import Problem
from .forward import jacfwd_textbook, jvp_sum_sin_exp
from .reverse import HELMHOLTZ_SIZES, grad_sum_sin_exp, helmholtz_problem
from .second_order import HESSIAN_SIZES, hessian_rosenbrock, hvp_rosenbrock


#: The problems of issues 2 to 5, by name. Factories are cheap: nothing is
#: computed or imported until a thunk is made.
PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    jvp_sum_sin_exp(), grad_sum_sin_exp(), jacfwd_textbook(),
    *map(hessian_rosenbrock, HESSIAN_SIZES), hvp_rosenbrock(),
    *map(helmholtz_problem, HELMHOLTZ_SIZES),
    compiled_jacfwd_tanh(), compiled_jvp_sum_sin_exp(), compiled_hessian_rosenbrock(),
    compiled_helmholtz(), compiled_grad_textbook())}

#: Groups, each printed as its own table (a size sweep: a row per size): name -> title.
GROUPS: dict[str, str] = {
    "helmholtz": "Gradient of the Helmholtz free energy (Baydin et al., \"Automatic "
                 "Differentiation in Machine Learning: a Survey\", Table 4)",
    "compiled": "Compiled: dualad_gpu (dualad's transforms under jax.jit) against "
                "jax.jit of JAX's transforms (issue 5)",
}

#: Lines printed under a group's table.
GROUP_NOTES: dict[str, tuple[str, ...]] = {
    "helmholtz": (
        "Each cell: time of the gradient / time of f, the NumPy primal (column 'primal'), "
        "both measured",
        "in this process. dualad-fwd: dualad.jacfwd, all n seeds in one pass; "
        "dualad-rev: dualad.grad.",
        "DiffSharp: the figures Baydin et al. publish (compiled F#, against F#), for "
        "context; issue 4",
        "reference: the peers as measured when the issue was filed.",
    ),
    "compiled": (
        "ratio = time / time of the NumPy primal; 'vs jax.jit' = time of dualad_gpu / time "
        "of jax.jit;",
        "peer columns are ratios to the primal. Both compiled sides get device arrays and "
        "are timed",
        "to jax.block_until_ready. dualad-numpy: dualad's uncompiled transform. "
        "Targets: issue 5.",
        "The tanh primal is an OpenBLAS W @ x, slowed by XLA's threads on few cores: "
        "OPENBLAS_NUM_THREADS=1",
        "steadies its ratio (not its target, which is against jax.jit).",
    ),
}

#: Every peer column, in table order.
PEER_NAMES: list[str] = list(dict.fromkeys(k for p in PROBLEMS.values() for k in p.peers))
