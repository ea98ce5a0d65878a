"""JVP of sum(sin(x)·exp(−x²) + log1p(x²)) on 10⁶ float64 (issue 2; target ≤ 2.5× primal).

The problem, its peers and their correctness checks are defined once in
:mod:`dualad.bench`, shared with ``python -m dualad bench``. A peer whose library
is not installed raises NotImplementedError in ``setup``: asv shows it as skipped.
"""

from dualad import bench

from .common import thunk

PROBLEM = bench.PROBLEMS["jvp_sum_sin_exp"]


class JVPSumSinExp:
    """Absolute times of the NumPy primal and of ``dualad.jvp``."""

    def setup(self):
        self.primal = thunk(PROBLEM.name, "primal")
        self.jvp = thunk(PROBLEM.name, "dualad")

    def time_primal(self):
        self.primal()

    def time_dualad_jvp(self):
        self.jvp()


class JVPSumSinExpPeers:
    """Absolute times of the same JVP by peer libraries."""

    params = PROBLEM.peers
    param_names = ["peer"]

    def setup(self, peer):
        self.jvp = thunk(PROBLEM.name, peer)

    def time_peer_jvp(self, peer):
        self.jvp()


class JVPSumSinExpRatio:
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
