"""The benchmark rows of SciPy's differentiated solvers (``dualad.bench.scipy_solvers``):
the registry's groups, targets and notes, the reference derived by hand against dualad,
and every implementation made (each checks its result) on small versions of the rows."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad import bench
from dualad.bench import scipy_solvers as ss
from dualad.bench.registry import GROUP_NOTES, SIZE_LABELS

pytest.importorskip("scipy")


def test_the_groups_are_registered_on_request_with_their_targets():
    for group in ("scipy_ivp", "scipy_root"):
        assert group in bench.ON_REQUEST and group in bench.GROUPS and group in GROUP_NOTES
    assert SIZE_LABELS["scipy_ivp"] == "K"
    ivp = {p.size: p for p in bench.PROBLEMS.values() if p.group == "scipy_ivp"}
    assert {K: p.target_of("jacfwd") for K, p in ivp.items()} == {3: 2.5, 30: 16.0}
    assert all(p.target_of("jacrev") is None and p.peers == ["fd"] for p in ivp.values())
    roots = {p.size: p for p in bench.PROBLEMS.values() if p.group == "scipy_root"}
    assert sorted(roots) == [100, 10**4]
    for p in roots.values():
        assert (p.target_of("jvp"), p.target_of("grad"), p.target_of("jacfwd")) == (2.0, 2.0,
                                                                                     None)


def test_the_root_reference_is_dualad_s_dense_jacobian():
    x, J = ss._root_reference(30)
    assert_allclose(J, dualad.jacfwd(ss.root_solver(30))(ss.ROOT_POINT), rtol=1e-10)
    assert_allclose(ss.forced_bratu(ss.ROOT_POINT, 30)(x), 0.0, atol=1e-14)


@pytest.mark.parametrize(("K", "t_end"), [(3, 0.5), (30, 0.5)])
def test_every_ivp_implementation_checks_on_a_short_span(K, t_end):
    problem = ss.scipy_ivp(K, t_end=t_end)
    assert problem.make("primal")().shape == ((2,) if K == 3 else (10,))
    for impl in ("jacfwd", "jacrev", "fd"):
        problem.make(impl)  # checked once against central differences inside


@pytest.mark.parametrize("n", [100, 300])
def test_every_root_implementation_checks_dense_and_sparse(n):
    problem = ss.scipy_root(n)
    assert ("dense" in problem.title) == (n < 200)
    for impl in ("jvp", "grad", "jacfwd", "fd"):
        problem.make(impl)  # checked once against the Jacobian derived by hand inside


def test_a_wrong_derivative_fails_its_check(monkeypatch):
    monkeypatch.setattr(ss, "_root_reference", lambda n: (np.ones(n), np.ones((n, 2))))
    with pytest.raises(AssertionError, match="jvp"):
        ss.scipy_root(100).make("jvp")
