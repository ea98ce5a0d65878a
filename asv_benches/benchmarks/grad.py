"""Gradient of sum(sin(x)·exp(−x²) + log1p(x²)) on 10⁶ float64 (issue 4; goal ≤ 3× primal).

The function of the JVP benchmark (``jvp.py``), differentiated by ``dualad.grad``.
The problem, its peers (the gradient by hand in NumPy, ``jax.jit(jax.grad)``,
``autograd.grad``, torch's tape) and their checks are defined once in
:mod:`dualad.bench`; a peer that is not installed raises NotImplementedError in
``setup``: asv shows it as skipped.
"""

from dualad import bench

from .common import thunk

PROBLEM = bench.PROBLEMS["grad_sum_sin_exp"]


class GradSumSinExp:
    """Absolute times of the NumPy primal and of ``dualad.grad``."""

    def setup(self):
        self.primal = thunk(PROBLEM.name, "primal")
        self.grad = thunk(PROBLEM.name, "dualad")

    def time_primal(self):
        self.primal()

    def time_dualad_grad(self):
        self.grad()


class GradSumSinExpPeers:
    """Absolute times of the same gradient by hand and by peer libraries."""

    params = PROBLEM.peers
    param_names = ["peer"]

    def setup(self, peer):
        self.grad = thunk(PROBLEM.name, peer)

    def time_peer_grad(self, peer):
        self.grad()


class GradSumSinExpRatio:
    """Time over the NumPy primal's, both timed in this process (dashboard ratios)."""

    params = ["dualad", *PROBLEM.peers]
    param_names = ["impl"]
    timeout = 120

    def setup(self, impl):
        self.thunks = {"primal": thunk(PROBLEM.name, "primal"), impl: thunk(PROBLEM.name, impl)}

    def track_ratio_to_primal(self, impl):
        times = bench.measure(self.thunks, repeat=5, min_time=0.05)
        return times[impl] / times["primal"]

    track_ratio_to_primal.unit = "ratio"
