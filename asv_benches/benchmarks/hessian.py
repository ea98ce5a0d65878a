"""Hessian of Rosenbrock at n = 10 and 100, and an HVP at n = 10⁴.

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

from .common import benchmark_classes

# numdifftools takes seconds at n = 100: its class samples at most 10 s a round.
HessianRosenbrock, HessianRosenbrockPeers, HessianRosenbrockRatio = benchmark_classes(
    __name__, "HessianRosenbrock",
    {n: f"hessian_rosenbrock_{n}" for n in bench.HESSIAN_SIZES},
    timeout=180.0, ratio_repeat=7, peers_repeat=(1, 10, 10.0))

HVPRosenbrock, HVPRosenbrockPeers, HVPRosenbrockRatio = benchmark_classes(
    __name__, "HVPRosenbrock", "hvp_rosenbrock", timeout=180.0)
