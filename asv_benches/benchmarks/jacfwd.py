"""Per-call cost of jacfwd of ln(x1) + x1·x2 − sin(x2) at (2, 5) (issue 2; target ≤ 20×).

The primal is the same function on Python floats with NumPy ufuncs. Problem,
peers and checks are defined once in :mod:`dualad.bench`; missing peers are
skipped (NotImplementedError in ``setup``).
"""

from .common import benchmark_classes

JacfwdTextbook, JacfwdTextbookPeers, JacfwdTextbookRatio = benchmark_classes(
    __name__, "JacfwdTextbook", "jacfwd_textbook", ratio_repeat=7)
