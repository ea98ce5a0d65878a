"""Hessian of Rosenbrock at n = 10 and 100, and an HVP at n = 10⁴ (issues 3 and 4).

Goal: ``dualad.hessian`` (its automatic choice of mode) faster than every
NumPy-level peer (num-dual, eager JAX, torch, autograd, numdifftools), and at
n = 100 also ≤ 200× the primal (``bench.HESSIAN_TARGETS``); the HVP is reported.
The problems, peers and checks (against ``scipy.optimize.rosen_hess`` and
``rosen_hess_prod``) are defined once in :mod:`dualad.bench`; a peer that is
not installed raises NotImplementedError in ``setup``: asv shows it as skipped.

numdifftools' Hessian at n = 100 takes seconds a call: its class caps the
sampling time, and the ratio benchmarks time a call of a second or more once
(``bench.measure``).
"""

from dualad import bench

from .common import thunk

SIZES = list(bench.HESSIAN_SIZES)
HESSIAN = {n: f"hessian_rosenbrock_{n}" for n in SIZES}
PEERS = bench.PROBLEMS[HESSIAN[SIZES[0]]].peers
HVP = "hvp_rosenbrock"
HVP_PEERS = bench.PROBLEMS[HVP].peers


class HessianRosenbrock:
    """Absolute times of the NumPy primal and of ``dualad.hessian``."""

    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        self.primal = thunk(HESSIAN[n], "primal")
        self.hessian = thunk(HESSIAN[n], "dualad")

    def time_primal(self, n):
        self.primal()

    def time_dualad_hessian(self, n):
        self.hessian()


class HessianRosenbrockPeers:
    """Absolute times of the same Hessian by peer libraries."""

    params = [SIZES, PEERS]
    param_names = ["n", "peer"]
    # numdifftools takes seconds at n = 100: at most 10 s of samples per round.
    repeat = (1, 10, 10.0)
    timeout = 180

    def setup(self, n, peer):
        self.hessian = thunk(HESSIAN[n], peer)

    def time_peer_hessian(self, n, peer):
        self.hessian()


class HessianRosenbrockRatio:
    """Time over the NumPy primal's, both timed in this process (dashboard ratios).

    dualad's ratio is to be below every NumPy-level peer's
    (``bench.NUMPY_LEVEL_PEERS``), all plotted side by side here, and at n = 100
    at most 200.
    """

    params = [SIZES, ["dualad", *PEERS]]
    param_names = ["n", "impl"]
    timeout = 180

    def setup(self, n, impl):
        self.thunks = {"primal": thunk(HESSIAN[n], "primal"), impl: thunk(HESSIAN[n], impl)}

    def track_ratio_to_primal(self, n, impl):
        times = bench.measure(self.thunks, repeat=7, min_time=0.05)
        return times[impl] / times["primal"]

    track_ratio_to_primal.unit = "ratio"


class HVPRosenbrock:
    """Absolute times of the NumPy primal and of ``dualad.hvp`` at n = 10⁴."""

    timeout = 180

    def setup(self):
        self.primal = thunk(HVP, "primal")
        self.hvp = thunk(HVP, "dualad")

    def time_primal(self):
        self.primal()

    def time_dualad_hvp(self):
        self.hvp()


class HVPRosenbrockPeers:
    """Absolute times of the same HVP by peer libraries."""

    params = HVP_PEERS
    param_names = ["peer"]

    def setup(self, peer):
        self.hvp = thunk(HVP, peer)

    def time_peer_hvp(self, peer):
        self.hvp()


class HVPRosenbrockRatio:
    """Time over the NumPy primal's, both timed in this process (dashboard ratios)."""

    params = ["dualad", *HVP_PEERS]
    param_names = ["impl"]
    timeout = 180

    def setup(self, impl):
        self.thunks = {"primal": thunk(HVP, "primal"), impl: thunk(HVP, impl)}

    def track_ratio_to_primal(self, impl):
        times = bench.measure(self.thunks, repeat=5, min_time=0.05)
        return times[impl] / times["primal"]

    track_ratio_to_primal.unit = "ratio"
