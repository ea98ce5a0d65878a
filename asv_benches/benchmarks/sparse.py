"""Sparse Jacobians and Hessians: ``dualad.sparse_jacobian`` and
``dualad.sparse_hessian`` over their primal, beside dense transforms, SciPy's
coloured finite differences and asdex.

- the 1-D Bratu residual, n = 10³ … 10⁶ (``SparseBratu*``), with their
  targets: the Jacobian ≤ 10× the primal and the detection ≤ 20× at 10⁵;
- the 2-D Brusselator's ``rhs(t, y)``, N = 32 … 256 (``SparseBrusselator*``), and
  ``solve_ivp(method="BDF")`` with dualad's Jacobian over SciPy's finite
  differences with ``jac_sparsity`` (``SparseBrusselatorSolve*``);
- the Hessians of the chained Rosenbrock function and of a 2-D Laplacian energy,
  n = 10³ … 10⁶ (``SparseRosenbrock*``, ``SparseLaplacian*``);
- the memory of the Bratu Jacobian at n = 10⁶: the process's peak
  (``SparseBratuMemory.peakmem_jacobian`` beside ``SparseBratuMemoryBaseline``) and
  the peak allocated by one call over the CSR Jacobian's own bytes
  (``SparseBratuMemory.track_peak_over_jacobian``, target ≤ 3), and by a fresh
  transform's calls up to its first replay, its preparation included
  (``track_first_calls_peak_over_jacobian``).

Each ``impl`` parameter is one of dualad's columns (``dualad``: the prepared
transform; ``detect``, ``coloring``, ``prepare``: its one-time work) or a peer.
Problems, peers and checks are defined once in :mod:`dualad.bench.sparse`; missing
or dense peers beyond their size are skipped (NotImplementedError in ``setup``).
"""

import dualad
from dualad import bench
from dualad.bench import sparse

from .common import ROUNDS, benchmark_classes, sweep_sizes, thunk

SparseBratu, SparseBratuPeers, SparseBratuRatio = benchmark_classes(
    __name__, "SparseBratu", {n: f"sparse_bratu_{n}" for n in sparse.BRATU_SIZES},
    timeout=300.0, peers_repeat=(1, 5, 10.0))

SparseBrusselator, SparseBrusselatorPeers, SparseBrusselatorRatio = benchmark_classes(
    __name__, "SparseBrusselator",
    {N: f"sparse_brusselator_{N}" for N in sparse.BRUSSELATOR_SIZES},
    timeout=300.0, peers_repeat=(1, 5, 10.0))

SparseBrusselatorSolve, SparseBrusselatorSolvePeers, SparseBrusselatorSolveRatio = \
    benchmark_classes(__name__, "SparseBrusselatorSolve",
                      {N: f"sparse_brusselator_solve_{N}" for N in sparse.BRUSSELATOR_SOLVE_SIZES},
                      timeout=300.0, ratio_repeat=3, peers_repeat=(1, 3, 10.0))

SparseRosenbrock, SparseRosenbrockPeers, SparseRosenbrockRatio = benchmark_classes(
    __name__, "SparseRosenbrock", {n: f"sparse_rosenbrock_{n}" for n in sparse.ROSENBROCK_SIZES},
    timeout=300.0, peers_repeat=(1, 5, 10.0))

SparseLaplacian, SparseLaplacianPeers, SparseLaplacianRatio = benchmark_classes(
    __name__, "SparseLaplacian", {N: f"sparse_laplacian_{N}" for N in sparse.LAPLACIAN_SIZES},
    timeout=300.0, peers_repeat=(1, 5, 10.0))

_LARGEST = sweep_sizes(sparse.BRATU_SIZES)[-1]   # the largest run


class SparseBratuMemory:
    """The memory of the Bratu Jacobian at n = 10⁶.

    ``peakmem_jacobian``: asv's peak resident set of the process after ``setup``
    (the input, the prepared pattern) and one call; compare it with
    ``SparseBratuMemoryBaseline.peakmem_primal``. ``track_peak_over_jacobian``:
    the peak allocated during one call (``bench.peak_memory``, tracemalloc) over
    the bytes of the CSR Jacobian it returns (``data``, ``indices``, ``indptr``);
    the target is ≤ 3. ``track_first_calls_peak_over_jacobian``: the same for a
    fresh transform's calls up to its first replay (detection, colouring, the
    interpreted calls, recording if any).
    """

    timeout, rounds = 300.0, ROUNDS

    def setup(self):
        self.u = sparse.sweep_case("bratu", _LARGEST).x
        self.jac = dualad.sparse_jacobian(sparse.bratu)
        self.jac.prepare(self.u)

    def peakmem_jacobian(self):
        self.jac(self.u)

    def track_peak_over_jacobian(self):
        call = thunk(f"sparse_bratu_{_LARGEST}", "dualad")  # checked once
        return bench.peak_memory(call) / sparse.jacobian_bytes(call())

    track_peak_over_jacobian.unit = "ratio"

    def track_first_calls_peak_over_jacobian(self):
        calls = thunk(f"sparse_bratu_{_LARGEST}", "first-calls")
        return bench.peak_memory(calls) / sparse.jacobian_bytes(calls())

    track_first_calls_peak_over_jacobian.unit = "ratio"


class SparseBratuMemoryBaseline:
    """The baseline of ``SparseBratuMemory.peakmem_jacobian``: the same process and
    input, one call of the NumPy primal."""

    rounds = ROUNDS

    def setup(self):
        self.u = sparse.sweep_case("bratu", _LARGEST).x

    def peakmem_primal(self):
        sparse.bratu(self.u)
