"""The sparse benchmark problems (``dualad.bench.sparse``): the references derived by
hand against dense AD, the colour counts the group titles quote, and every problem's
dualad columns and NumPy-level peers checked at its smallest size."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad import bench
from dualad.bench import sparse as sb
from dualad.bench.registry import GROUP_NOTES

pytest.importorskip("scipy")


def test_bratu_jacobian_is_the_dense_one():
    u = np.linspace(0.1, 0.9, 7)
    assert_allclose(sb.bratu_jacobian(u).toarray(), dualad.jacfwd(sb.bratu)(u), rtol=1e-14)


def test_brusselator_jacobian_is_the_dense_one():
    rhs, y0 = sb.brusselator(5)
    y = y0 + np.linspace(0.5, 1.5, y0.size)
    assert_allclose(sb.brusselator_jacobian(5, y).toarray(),
                    dualad.jacfwd(rhs, argnums=1)(0.3, y), rtol=1e-14, atol=1e-12)


def test_rosenbrock_hessian_is_scipys():
    from scipy.optimize import rosen_hess

    x = np.linspace(-1.5, 1.5, 9)
    assert_allclose(sb.rosenbrock_hessian(x).toarray(), rosen_hess(x), rtol=1e-14)


def test_laplacian_energy_hessian_is_the_dense_one():
    u = np.linspace(-1.0, 1.0, 16)
    assert_allclose(sb.laplacian_energy_hessian(u).toarray(),
                    dualad.hessian(sb.laplacian_energy)(u), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(("family", "size", "colors"), [
    ("bratu", 1000, {3}), ("brusselator", 32, {8}), ("rosenbrock", 1000, {3}),
    ("laplacian", 32, {5})])
def test_colour_counts_are_the_group_titles(family, size, colors):
    case = sb.sweep_case(family, size)
    make = dualad.sparse_hessian if case.hessian else dualad.sparse_jacobian
    assert make(case.f, argnums=len(case.args)).prepare(*case.args, case.x).passes in colors
    for count in colors:
        assert f"{count} colours" in bench.GROUPS[f"sparse_{family}"] or len(colors) > 1


@pytest.mark.parametrize("group", ["sparse_bratu", "sparse_brusselator", "sparse_rosenbrock",
                                   "sparse_laplacian", "sparse_brusselator_solve"])
def test_smallest_problem_of_each_sweep_checks(group):
    smallest = min((p for p in bench.PROBLEMS.values() if p.group == group),
                   key=lambda p: p.size)
    assert group in bench.ON_REQUEST and group in GROUP_NOTES
    for impl in smallest.factories:
        if impl in ("jax.jit", "asdex", "asdex-prepare"):
            continue  # compiled peers: seconds to import and compile
        try:
            smallest.make(impl)  # checked once against the reference inside
        except bench.PeerUnavailable:
            assert impl == "scipy-fd-dense" and smallest.size > 32


def test_largest_bratu_measures_memory_and_has_the_targets():
    problems = {p.size: p for p in bench.PROBLEMS.values() if p.group == "sparse_bratu"}
    assert problems[10**6].memory and not problems[10**5].memory
    assert problems[10**5].target_of("dualad") == 10.0
    assert problems[10**5].target_of("detect") == 20.0
    assert (problems[10**4].versus, problems[10**4].versus_target) == ("dualad.jacfwd", 0.01)


def test_a_sweep_table_with_targets_keeps_its_peak_columns():
    from dualad.bench.report import Result, format_group_table

    results = []
    for n in (10**5, 10**6):
        problem = bench.PROBLEMS[f"sparse_bratu_{n}"]
        times = {"primal": 1.0, **{impl: 2.0 for impl in problem.own}}
        peaks = {"primal": 8 * 10**6, "dualad": 96 * 10**6} if problem.memory else {}
        results.append(Result(problem, times, {}, peaks))
    table = format_group_table(results, title="t")
    lines = table.splitlines()
    head, row = lines[2], lines[5]  # the title, a blank, the head, the rule, 10^5, 10^6
    assert head.split()[-2:] == ["peak", "dualad"] and row.split()[-2:] == ["96", "MB"]
    assert "<= 10x ok" in table
