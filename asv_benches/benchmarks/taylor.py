"""Taylor mode: ``dualad.jet`` to order K = 1, 2, 4, 8, 16 of a chain of elementwise
functions (beside ``jax.jit`` of JAX's ``jet``) and of a function with a linear solve,
n = 50 (reported: the time grows at most as K², not as 2^K); and the sparse forward
Laplacian, ``dualad.laplacian(f, method="sparse")``, of a sum over 20 particles of a
10-layer tanh MLP of each particle's 4 features (``LaplacianSparse*``), beside the dense
one and ``jax.jit`` of JAX's Hessian trace (``LaplacianSparseVersus``: its time over the
dense one's, target ≤ 0.05).

The problems and their checks are defined once in :mod:`dualad.bench.taylor`.
"""

from dualad.bench import taylor

from .common import benchmark_classes

TaylorElementwise, TaylorElementwisePeers, TaylorElementwiseRatio = benchmark_classes(
    __name__, "TaylorElementwise", {k: f"taylor_elementwise_{k}" for k in taylor.TAYLOR_ORDERS})

TaylorSolve, TaylorSolvePeers, TaylorSolveRatio = benchmark_classes(
    __name__, "TaylorSolve", {k: f"taylor_solve_{k}" for k in taylor.TAYLOR_ORDERS})

LaplacianSparse, LaplacianSparsePeers, LaplacianSparseRatio, LaplacianSparseVersus = \
    benchmark_classes(__name__, "LaplacianSparse", "laplacian_sparse", versus=True)
