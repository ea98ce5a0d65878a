"""The registry: every problem by name, the size sweeps, the peer columns."""

from __future__ import annotations

from .core import Problem
from .forward import jacfwd_textbook, jvp_sum_sin_exp
from .reverse import HELMHOLTZ_SIZES, grad_sum_sin_exp, helmholtz_problem
from .second_order import HESSIAN_SIZES, hessian_rosenbrock, hvp_rosenbrock


#: The problems of issues 2, 3 and 4, by name. Factories are cheap: nothing is
#: computed or imported until a thunk is made.
PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    jvp_sum_sin_exp(), grad_sum_sin_exp(), jacfwd_textbook(),
    *map(hessian_rosenbrock, HESSIAN_SIZES), hvp_rosenbrock(),
    *map(helmholtz_problem, HELMHOLTZ_SIZES))}

#: Size sweeps, each printed as its own table: group name -> title.
GROUPS: dict[str, str] = {
    "helmholtz": "Gradient of the Helmholtz free energy (Baydin et al., \"Automatic "
                 "Differentiation in Machine Learning: a Survey\", Table 4)",
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
}

#: Every peer column, in table order.
PEER_NAMES: list[str] = list(dict.fromkeys(k for p in PROBLEMS.values() for k in p.peers))
