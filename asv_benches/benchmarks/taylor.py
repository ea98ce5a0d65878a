"""Taylor mode: ``dualad.jet`` to order K = 1, 2, 4, 8, 16 of a chain of elementwise
functions (beside ``jax.jit`` of JAX's ``jet``) and of a function with a linear solve,
n = 50 (reported: the time grows at most as K², not as 2^K).

The problems and their checks are defined once in :mod:`dualad.bench.taylor`.
"""

from dualad.bench import taylor

from .common import benchmark_classes

TaylorElementwise, TaylorElementwisePeers, TaylorElementwiseRatio = benchmark_classes(
    __name__, "TaylorElementwise", {k: f"taylor_elementwise_{k}" for k in taylor.TAYLOR_ORDERS})

TaylorSolve, TaylorSolvePeers, TaylorSolveRatio = benchmark_classes(
    __name__, "TaylorSolve", {k: f"taylor_solve_{k}" for k in taylor.TAYLOR_ORDERS})
