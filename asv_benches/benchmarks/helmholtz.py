"""Gradient of the Helmholtz free energy, forward and reverse (Baydin et al., Table 4).

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

from .common import benchmark_classes

Helmholtz, HelmholtzPeers, HelmholtzRatio = benchmark_classes(
    __name__, "Helmholtz", {n: f"helmholtz_{n}" for n in bench.HELMHOLTZ_SIZES},
    ratio_min_time=0.02)
