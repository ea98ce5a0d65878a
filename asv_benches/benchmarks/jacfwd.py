"""Forward-mode Jacobians.

- Per-call cost of jacfwd of ln(x1) + x1·x2 − sin(x2) at (2, 5) (target ≤ 20×);
  the primal is the same function on Python floats with NumPy ufuncs.
- Dense ``dualad.jacfwd`` of tanh(W x) + x³ at n = 10, 100, 1000 (reported, no target),
  against ``jax.jacfwd`` eager and under ``jax.jit``, ``torch.func.jacfwd``,
  ``autograd.jacobian``, ``numdifftools.Jacobian`` and ``num_dual.jacobian`` (the
  last three at n ≤ 100 only: ``bench.SLOW_PEER_MAX_SIZE``).
- ``dualad.jacfwd(f, chunk_size=c)`` of the same layer at n = 1000, c = 1, 10, 100,
  1000: time (``JacfwdTanhChunkSize.time_jacfwd``) and peak memory
  (``JacfwdTanhChunkSizeMemory.peakmem_jacfwd``, beside the process's baseline
  ``JacfwdTanhMemoryBaseline.peakmem_primal``).

Problems, peers and checks are defined once in :mod:`dualad.bench`; missing peers
are skipped (NotImplementedError in ``setup``).
"""

import dualad
from dualad import bench

from .common import QUICK, ROUNDS, benchmark_classes, thunk

JacfwdTextbook, JacfwdTextbookPeers, JacfwdTextbookRatio = benchmark_classes(
    __name__, "JacfwdTextbook", "jacfwd_textbook", ratio_repeat=7)

JacfwdTanh, JacfwdTanhPeers, JacfwdTanhRatio = benchmark_classes(
    __name__, "JacfwdTanh", {n: f"jacfwd_tanh_{n}" for n in bench.JACOBIAN_SIZES},
    timeout=180.0, peers_repeat=(1, 10, 10.0))

# the chunk sizes; a quick run leaves out c = 1 (n passes of one seed: seconds a call)
_CHUNKS = [c for c in bench.CHUNK_SIZES if not (QUICK and c == 1)]
_CHUNK_PROBLEMS = {(c,): bench.jacfwd_chunk(c).name for c in _CHUNKS}


class JacfwdTanhChunkSize:
    """Time of ``dualad.jacfwd(tanh_layer, chunk_size=c)`` at n = 1000: n / c passes
    of c seeds (c = 1: about 5 s a call, hence the capped sampling)."""

    params, param_names = [_CHUNKS], ["chunk_size"]
    problems = _CHUNK_PROBLEMS
    repeat, timeout, rounds = (1, 10, 10.0), 180.0, ROUNDS

    def setup(self, chunk_size):
        self.call = thunk(self.problems[(chunk_size,)], "dualad")  # checked once

    def time_jacfwd(self, chunk_size):
        self.call()


class JacfwdTanhChunkSizeMemory:
    """Peak memory (asv: the process's peak resident set) of one call of
    ``dualad.jacfwd(tanh_layer, chunk_size=c)`` at n = 1000.

    ``setup`` only makes the inputs (``W``: 8 MB, no temporaries) and the
    transform, nothing the size of the Jacobian, so the call sets the peak:
    the 8 MB Jacobian plus the seeds and tangents of one chunk (c × n each) and
    the partial Jacobians. The call is checked by ``JacfwdTanhChunkSize``'s
    thunk (the same problem), not here: a check would allocate too.
    """

    params, param_names = [_CHUNKS], ["chunk_size"]
    problems = _CHUNK_PROBLEMS
    timeout, rounds = 180.0, ROUNDS

    def setup(self, chunk_size):
        self.args = bench.tanh_layer_point(bench.CHUNK_SWEEP_SIZE)
        self.jac = dualad.jacfwd(bench.tanh_layer, chunk_size=chunk_size)

    def peakmem_jacfwd(self, chunk_size):
        self.jac(*self.args)


class JacfwdTanhMemoryBaseline:
    """The baseline of ``JacfwdTanhChunkSizeMemory``: the same process and inputs,
    one call of the NumPy primal."""

    problems = {(): bench.jacfwd_chunk(bench.CHUNK_SIZES[-1]).name}
    rounds = ROUNDS

    def setup(self):
        self.args = bench.tanh_layer_point(bench.CHUNK_SWEEP_SIZE)

    def peakmem_primal(self):
        bench.tanh_layer(*self.args)
