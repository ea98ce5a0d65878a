"""Gradient of sum(sin(x)·exp(−x²) + log1p(x²)) on 10⁶ float64 (goal ≤ 3× primal).

The function of the JVP benchmark (``jvp.py``), differentiated by ``dualad.grad``.
The problem, its peers (the gradient by hand in NumPy, ``jax.jit(jax.grad)``,
``autograd.grad``, torch's tape) and their checks are defined once in
:mod:`dualad.bench`; a peer that is not installed raises NotImplementedError in
``setup``: asv shows it as skipped.
"""

from .common import benchmark_classes

GradSumSinExp, GradSumSinExpPeers, GradSumSinExpRatio = benchmark_classes(
    __name__, "GradSumSinExp", "grad_sum_sin_exp")
