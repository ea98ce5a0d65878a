"""Per-call cost of jacfwd of ln(x1) + x1·x2 − sin(x2) at (2, 5) (issue 2; target ≤ 20×).

The primal is the same function on Python floats with NumPy ufuncs. Problem,
peers and checks are defined once in :mod:`dualad.bench`; missing peers are
skipped (NotImplementedError in ``setup``).
"""

from dualad import bench

from .common import thunk

PROBLEM = bench.PROBLEMS["jacfwd_textbook"]


class JacfwdTextbook:
    """Absolute per-call times of the NumPy primal and of ``dualad.jacfwd``."""

    def setup(self):
        self.primal = thunk(PROBLEM.name, "primal")
        self.jacobian = thunk(PROBLEM.name, "dualad")

    def time_primal(self):
        self.primal()

    def time_dualad_jacfwd(self):
        self.jacobian()


class JacfwdTextbookPeers:
    """Absolute per-call times of the same gradient by peer libraries."""

    params = PROBLEM.peers
    param_names = ["peer"]

    def setup(self, peer):
        self.gradient = thunk(PROBLEM.name, peer)

    def time_peer_gradient(self, peer):
        self.gradient()


class JacfwdTextbookRatio:
    """Per-call time over the NumPy primal's, both timed in this process."""

    params = ["dualad", *PROBLEM.peers]
    param_names = ["impl"]
    timeout = 120

    def setup(self, impl):
        self.thunks = {"primal": thunk(PROBLEM.name, "primal"), impl: thunk(PROBLEM.name, impl)}

    def track_ratio_to_primal(self, impl):
        times = bench.measure(self.thunks, repeat=7, min_time=0.05)
        return times[impl] / times["primal"]

    track_ratio_to_primal.unit = "ratio"
