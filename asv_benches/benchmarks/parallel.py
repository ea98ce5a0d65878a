"""Parallel derivatives (``executor=``): the serial transform (the ``primal`` column of
:mod:`dualad.bench.parallel`) beside the same transform on two workers of a
``ThreadPoolExecutor`` (``threads``), a spawned ``ProcessPoolExecutor`` (``processes``)
and a Dask ``LocalCluster`` (``dask``):

- ``jacfwd`` of an explicit simulation, n = 400, 8 passes (``ParallelJacfwd*``; target:
  two workers ≤ 0.59 of the serial time, 1.7× faster);
- ``sparse_jacobian`` of a banded residual, 16 colours in 8 passes (``ParallelSparse*``);
- :func:`dualad.ensemble` of 64 Jacobians (``ParallelEnsemble*``);
- a cheap function with ``executor=`` given, which runs serially (``ParallelOverhead*``;
  target ≤ 1.05 of the serial time).

The ``*Ratio`` classes track the time over the serial time. Problems and checks are
defined once in :mod:`dualad.bench.parallel`; the executors are made once per process. A
quick run (``asv run --quick``) keeps the threads only: a process pool and a Dask cluster
take seconds to start in every benchmark's process.
"""

from .common import benchmark_classes

ParallelJacfwd, ParallelJacfwdPeers, ParallelJacfwdRatio = benchmark_classes(
    __name__, "ParallelJacfwd", "parallel_jacfwd", timeout=300.0, ratio_repeat=3,
    peers_repeat=(1, 3, 10.0), quick_peers=())

ParallelSparse, ParallelSparsePeers, ParallelSparseRatio = benchmark_classes(
    __name__, "ParallelSparse", "parallel_sparse", timeout=300.0,
    quick_peers=())

ParallelEnsemble, ParallelEnsemblePeers, ParallelEnsembleRatio = benchmark_classes(
    __name__, "ParallelEnsemble", "parallel_ensemble", timeout=300.0,
    quick_peers=())

ParallelOverhead, ParallelOverheadPeers, ParallelOverheadRatio = benchmark_classes(
    __name__, "ParallelOverhead", "parallel_overhead", quick_peers=())
