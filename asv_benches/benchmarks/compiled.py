"""Compiled derivatives: ``dualad_gpu`` (dualad's transforms under ``jax.jit``)
against ``jax.jit`` of JAX's own transforms: the goal is to cost no more than JAX
compiling its own.

- ``jacfwd`` of tanh(W x) + x³, n = 1000: ≤ 1.2× ``jax.jit(jax.jacfwd)``;
- JVP of sum(sin(x)·exp(−x²) + log1p(x²)), 10⁶ float64: ≤ 1.15× ``jax.jit(jax.jvp)``;
- Hessian of Rosenbrock, n = 100: ≤ 1.5× ``jax.jit(jax.hessian)``;
- gradient of the Helmholtz free energy, n = 50: ≤ 1.96× the NumPy primal;
- gradient of ln(x1) + x1·x2 − sin(x2) at (2, 5), per call: reported;
- Laplacian of a 5-layer tanh MLP, D = 50, by ``dualad_gpu.laplacian`` against
  ``jax.jit`` of JAX's Hessian trace: reported.

Each problem has the usual three classes (absolute times, peers, ratios to the
NumPy primal) and a fourth, ``…Versus.track_ratio_to_peer``: dualad_gpu's time
over jax.jit's, the ratio most targets are stated in. The peers are
``jax.jit`` and ``dualad-numpy`` (dualad's uncompiled transform). The problems
and their checks are defined once in :mod:`dualad.bench.compiled`; without jax
(or dualad_gpu) ``setup`` raises NotImplementedError: asv shows them as skipped.
"""

from .common import benchmark_classes

(CompiledJacfwdTanh, CompiledJacfwdTanhPeers, CompiledJacfwdTanhRatio,
 CompiledJacfwdTanhVersus) = benchmark_classes(
    __name__, "CompiledJacfwdTanh", "compiled_jacfwd_tanh_1000", versus=True)

(CompiledJVPSumSinExp, CompiledJVPSumSinExpPeers, CompiledJVPSumSinExpRatio,
 CompiledJVPSumSinExpVersus) = benchmark_classes(
    __name__, "CompiledJVPSumSinExp", "compiled_jvp_sum_sin_exp", versus=True)

(CompiledHessianRosenbrock, CompiledHessianRosenbrockPeers, CompiledHessianRosenbrockRatio,
 CompiledHessianRosenbrockVersus) = benchmark_classes(
    __name__, "CompiledHessianRosenbrock", "compiled_hessian_rosenbrock_100", versus=True)

(CompiledHelmholtz, CompiledHelmholtzPeers, CompiledHelmholtzRatio,
 CompiledHelmholtzVersus) = benchmark_classes(
    __name__, "CompiledHelmholtz", "compiled_helmholtz_50", versus=True,
    ratio_min_time=0.02)

(CompiledGradTextbook, CompiledGradTextbookPeers, CompiledGradTextbookRatio,
 CompiledGradTextbookVersus) = benchmark_classes(
    __name__, "CompiledGradTextbook", "compiled_grad_textbook", versus=True)

(CompiledLaplacianMLP, CompiledLaplacianMLPPeers, CompiledLaplacianMLPRatio,
 CompiledLaplacianMLPVersus) = benchmark_classes(
    __name__, "CompiledLaplacianMLP", "compiled_laplacian_mlp", versus=True)
