"""The benchmark rows of parallel derivatives (``dualad.bench.parallel``): registered on
request, and every implementation made at small sizes (each checks its result against
the serial transform's) on threads, processes and a Dask cluster."""

import pytest

from dualad import bench
from dualad.bench import parallel
from dualad.bench.registry import GROUP_NOTES


def test_the_group_is_registered_on_request():
    assert "parallel" in bench.ON_REQUEST and "parallel" in bench.GROUPS
    assert "parallel" in GROUP_NOTES
    rows = [p for p in bench.PROBLEMS.values() if p.group == "parallel"]
    assert [p.name for p in rows] == ["parallel_jacfwd", "parallel_sparse",
                                      "parallel_ensemble", "parallel_overhead"]
    assert all(p.peers == ["processes", "dask"] and p.own == ("threads",) for p in rows)


@pytest.mark.parametrize("row", ["jacfwd", "sparse", "ensemble", "overhead"])
def test_every_implementation_checks(row):
    pytest.importorskip("distributed")
    problem = {"jacfwd": lambda: parallel.jacfwd_problem(40, 5, 10, min_seconds=0),
               "sparse": lambda: parallel.sparse_problem(200, 16, 4, min_seconds=0),
               "ensemble": lambda: parallel.ensemble_problem(6, 5, 3, min_seconds=0),
               "overhead": parallel.overhead_problem}[row]()
    for impl in ("primal", *problem.own, *problem.peers):
        problem.make(impl)()
