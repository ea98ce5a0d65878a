"""Dense Jacobians by reverse mode: ``dualad.jacrev`` of tanh(W x) + x³ at n = 10,
100, 1000 (reported, no target), against ``jax.jacrev`` eager and under ``jax.jit``,
``torch.func.jacrev`` and ``autograd.jacobian``.

Problems, peers and checks (against the Jacobian derived by hand) are defined once
in :mod:`dualad.bench.jacobians`; missing peers are skipped (NotImplementedError in
``setup``). dualad's and autograd's Jacobians take seconds at n = 1000: the peers'
sampling is capped at 10 s a round.
"""

from dualad import bench

from .common import benchmark_classes

JacrevTanh, JacrevTanhPeers, JacrevTanhRatio = benchmark_classes(
    __name__, "JacrevTanh", {n: f"jacrev_tanh_{n}" for n in bench.JACOBIAN_SIZES},
    timeout=180.0, peers_repeat=(1, 10, 10.0))
