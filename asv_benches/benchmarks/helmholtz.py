"""Gradient of the Helmholtz free energy, forward and reverse (issue 4; Baydin et al., Table 4).

    f(x) = R·T·Σᵢ xᵢ log(xᵢ / (1 − bᵀx))
           − xᵀAx / (√8·bᵀx) · log((1 + (1+√2)·bᵀx) / (1 + (1−√2)·bᵀx))

for n ∈ {1, 8, 15, 22, 29, 36, 43, 50}; time(∇f) / time(f), f the NumPy function.
Goals at n = 50: forward (``dualad.jacfwd``, all n seeds in one pass) ≤ 7.5×,
reverse (``dualad.grad``) ≤ 10×. The problems, the peers and their checks
(against the hand-written gradient ``bench.helmholtz_grad``) are defined once
in :mod:`dualad.bench`; a peer that is not installed raises NotImplementedError
in ``setup``: asv shows it as skipped.
"""

from dualad import bench

from .common import thunk

SIZES = list(bench.HELMHOLTZ_SIZES)
HELMHOLTZ = {n: f"helmholtz_{n}" for n in SIZES}
OWN = list(bench.PROBLEMS[HELMHOLTZ[SIZES[0]]].own)  # ["dualad-fwd", "dualad-rev"]
PEERS = bench.PROBLEMS[HELMHOLTZ[SIZES[0]]].peers


class Helmholtz:
    """Absolute times of the NumPy primal and of dualad's forward and reverse gradients."""

    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        self.primal = thunk(HELMHOLTZ[n], "primal")
        self.forward = thunk(HELMHOLTZ[n], "dualad-fwd")
        self.reverse = thunk(HELMHOLTZ[n], "dualad-rev")

    def time_primal(self, n):
        self.primal()

    def time_dualad_jacfwd(self, n):
        self.forward()

    def time_dualad_grad(self, n):
        self.reverse()


class HelmholtzPeers:
    """Absolute times of the same gradient by hand and by peer libraries."""

    params = [SIZES, PEERS]
    param_names = ["n", "peer"]
    timeout = 120

    def setup(self, n, peer):
        self.gradient = thunk(HELMHOLTZ[n], peer)

    def time_peer_gradient(self, n, peer):
        self.gradient()


class HelmholtzRatio:
    """time(∇f) / time(f), both timed in this process (the dashboard's ratios).

    ``dualad-fwd`` and ``dualad-rev`` beside the peers, for every n; the issue's
    targets apply at n = 50 (``bench.HELMHOLTZ_TARGETS``).
    """

    params = [SIZES, [*OWN, *PEERS]]
    param_names = ["n", "impl"]
    timeout = 120

    def setup(self, n, impl):
        self.thunks = {"primal": thunk(HELMHOLTZ[n], "primal"), impl: thunk(HELMHOLTZ[n], impl)}

    def track_ratio_to_primal(self, n, impl):
        times = bench.measure(self.thunks, repeat=5, min_time=0.02)
        return times[impl] / times["primal"]

    track_ratio_to_primal.unit = "ratio"
