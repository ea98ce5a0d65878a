"""The benchmark rows of Taylor mode (``dualad.bench.taylor``): registered on request,
and every implementation made (each checks its first two terms against dualad.jvp and
dualad.hvp) at small orders; the forward Laplacians' rows, dense and sparse, checked
against the trace of nested Jacobians."""

import numpy as np
import pytest

import dualad
from dualad import bench
from dualad.bench import taylor
from dualad.bench.registry import GROUP_NOTES, SIZE_LABELS


def test_the_groups_are_registered_on_request():
    for group in ("taylor_elementwise", "taylor_solve"):
        assert group in bench.ON_REQUEST and group in bench.GROUPS and group in GROUP_NOTES
        assert SIZE_LABELS[group] == "K"
        rows = {p.size: p for p in bench.PROBLEMS.values() if p.group == group}
        assert sorted(rows) == list(taylor.TAYLOR_ORDERS)


@pytest.mark.parametrize("kind", ["elementwise", "solve"])
def test_every_implementation_checks(kind):
    problem = taylor.jet_problem(kind, 2)
    for impl in ("primal", *problem.own, *problem.peers):
        if impl == "jax":
            pytest.importorskip("jax")
        problem.make(impl)


def test_a_wrong_term_fails_its_check(monkeypatch):
    monkeypatch.setattr(taylor, "_first_terms", lambda f, x, v, order: [0.0, 0.0][:order])
    with pytest.raises(AssertionError, match="dualad.jet"):
        taylor.jet_problem("elementwise", 2).make("dualad")


def test_the_laplacian_row_and_its_implementations():
    problem = bench.PROBLEMS["laplacian_mlp"]
    assert "laplacian" in bench.ON_REQUEST and problem.versus == "hessian"
    assert problem.versus_target == 0.55 and problem.beat == ("jax-hessian",)
    for impl in ("primal", "dualad", "hessian"):
        problem.make(impl)  # each checked against the trace of nested Jacobians


def test_the_sparse_laplacian_row_and_its_implementations():
    problem = bench.PROBLEMS["laplacian_sparse"]
    assert "laplacian_sparse" in bench.ON_REQUEST and "laplacian_sparse" in GROUP_NOTES
    assert problem.versus == "dense" and problem.versus_target == 0.05
    assert problem.own == ("dualad",) and problem.peers == ["dense", "jax-hessian"]
    for impl in ("primal", "dualad", "dense"):
        problem.make(impl)  # each checked against the trace of nested Jacobians
    weights = taylor._particle_weights()
    x = np.zeros((taylor.PARTICLES, taylor.PARTICLE_FEATURES))
    f = lambda z: taylor.particle_mlp(z, weights)  # noqa: E731
    prepared = dualad.laplacian(f, method="sparse").prepare(x)
    assert prepared.passes == taylor.PARTICLE_FEATURES  # one direction per feature


def test_a_wrong_sparse_laplacian_fails_its_check(monkeypatch):
    from dualad.sparse import laplacian as sparse_laplacian
    n = taylor.PARTICLES * taylor.PARTICLE_FEATURES  # every coordinate one colour
    monkeypatch.setattr(sparse_laplacian.coloring, "distance1_coloring",
                        lambda pattern: np.zeros(n, dtype=np.int32))
    with pytest.raises(AssertionError, match="method='sparse'"):
        taylor.laplacian_sparse_problem().make("dualad")
