"""JVP of sum(sin(x)·exp(−x²) + log1p(x²)) on 10⁶ float64 (issue 2; target ≤ 2.5× primal).

The problem, its peers and their correctness checks are defined once in
:mod:`dualad.bench`, shared with ``python -m dualad bench``. A peer whose library
is not installed raises NotImplementedError in ``setup``: asv shows it as skipped.
"""

from .common import benchmark_classes

JVPSumSinExp, JVPSumSinExpPeers, JVPSumSinExpRatio = benchmark_classes(
    __name__, "JVPSumSinExp", "jvp_sum_sin_exp")
