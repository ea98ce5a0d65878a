"""JVPs of sum(sin(x)·exp(−x²) + log1p(x²)): along one tangent at 10³ and 10⁶ float64
(target ≤ 2.5× the primal at 10⁶; 10³ reported), and along K = 1, 16, 256 seeds at
once on 10⁴ float64 (``dualad.jvp(..., batched=True)``, reported).

The problems, their peers and their correctness checks are defined once in
:mod:`dualad.bench`, shared with ``python -m dualad bench``. A peer whose library
is not installed, or that is too slow at a size (num-dual's Python scalars at
10⁶), raises NotImplementedError in ``setup``: asv shows it as skipped.
"""

from dualad import bench

from .common import benchmark_classes

JVPSumSinExp, JVPSumSinExpPeers, JVPSumSinExpRatio = benchmark_classes(
    __name__, "JVPSumSinExp", {n: bench.jvp_sum_sin_exp(n).name for n in bench.JVP_SIZES})

JVPBatched, JVPBatchedPeers, JVPBatchedRatio = benchmark_classes(
    __name__, "JVPBatched", {k: f"jvp_batched_{k}" for k in bench.BATCH_SIZES})
