"""A constant scipy.sparse operator applied to Duals: A @ x, x @ A, A.dot(x), an
spmatrix's A * x and spsolve(A, b), in every transform, against JAX's dense twins."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad.testing import check_grads

sp = pytest.importorskip("scipy.sparse")
spla = pytest.importorskip("scipy.sparse.linalg")
integrate = pytest.importorskip("scipy.integrate")

N = 6
#: A 1-D Laplacian with one entry off its band (not symmetric: Aᵀ matters).
DENSE = 2.0 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1) + 0.5 * np.eye(N, k=3)
A = sp.csr_array(DENSE)
U = np.linspace(0.3, 1.2, N)

#: name -> (the function as users write it, its twin on the dense matrix: NumPy or JAX)
CASES = {
    "A @ u": (lambda u: A @ u + u ** 3, lambda u, m: DENSE @ u + u ** 3),
    "A.dot(u)": (lambda u: np.sin(A.dot(u)), lambda u, m: m.sin(DENSE @ u)),
    "an spmatrix's A * u": (lambda u: sp.csr_matrix(DENSE) * u ** 2,
                            lambda u, m: DENSE @ u ** 2),
    "u @ A": (lambda u: (u @ A) ** 2, lambda u, m: (u @ DENSE) ** 2),
    "A @ a matrix": (lambda u: (A @ np.outer(u, u[:2])).ravel(),
                     lambda u, m: (DENSE @ m.outer(u, u[:2])).ravel()),
    "a matrix @ A": (lambda u: (np.outer(u[:2], u) @ A.tocoo()).ravel(),
                     lambda u, m: (m.outer(u[:2], u) @ DENSE).ravel()),
    "A @ a column": (lambda u: (sp.csc_matrix(DENSE) @ u[:, None] ** 2).ravel(),
                     lambda u, m: (DENSE @ u[:, None] ** 2).ravel()),
    "spsolve(A, b)": (lambda u: spla.spsolve(A.tocsc(), u ** 2),
                      lambda u, m: m.linalg.solve(DENSE, u ** 2)),
    "spsolve(A, a column)": (lambda u: spla.spsolve(A, u[:, None] * u[0]),
                             lambda u, m: m.linalg.solve(DENSE, u * u[0])),
    "spsolve(A, a matrix)": (lambda u: spla.spsolve(A, np.outer(u, np.exp(u[:2]))).ravel(),
                             lambda u, m: m.linalg.solve(DENSE, m.outer(u, m.exp(u[:2]))).ravel()),
}


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_first_derivatives_match_jax(name, transform):
    jax = _jax()
    import jax.numpy as jnp

    f, twin = CASES[name]
    assert_allclose(f(U), twin(U, np), rtol=1e-13)
    expected = getattr(jax, transform)(lambda u: twin(u, jnp))(jnp.asarray(U))
    assert_allclose(getattr(dualad, transform)(f)(U), np.asarray(expected), rtol=1e-12,
                    atol=1e-13)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_hessians_match_jax(name, mode):
    jax = _jax()
    import jax.numpy as jnp

    f, twin = CASES[name]
    expected = jax.hessian(lambda u: jnp.sum(twin(u, jnp) ** 2))(jnp.asarray(U))
    assert_allclose(dualad.hessian(lambda u: np.sum(f(u) ** 2), mode=mode)(U),
                    np.asarray(expected), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_check_grads(name):
    check_grads(CASES[name][0], (U,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("form", ["csr", "csc", "coo", "dia", "bsr", "lil"])
def test_an_operator_written_in_place_is_read_at_every_call(form):
    B = A.asformat(form)
    f = lambda u: spla.spsolve(A, B @ np.sin(u) + u @ B)  # noqa: E731
    for make in (dualad.jacfwd, dualad.jacrev, dualad.hessian):
        replayed, interpreted = make(f), make(f, replay=False)
        for k in range(40):
            if k % 13 == 12 and form != "lil":
                B.data *= 1.1  # (the arrays it holds, written in place)
            u = U * (1 + 0.01 * k)
            assert np.array_equal(replayed(u), interpreted(u))
        # the arrays' formats are replayed, guarded by their bits; lil's lists are not
        assert (replayed.counts["replayed"] > 0) == (form != "lil")


def test_a_matrix_made_at_each_call_is_not_confused_with_an_old_one():
    made = []

    def f(u):
        made.append(sp.diags([np.full(N, 3.0)], [0]).tocsr())
        for old in made[:-1]:
            old.data[:] = 7.0  # the recording's matrix must not be the one read
        return made[-1] @ u

    replayed, interpreted = dualad.jacfwd(f), dualad.jacfwd(f, replay=False)
    for _ in range(40):
        assert np.array_equal(replayed(U), interpreted(U))
    assert replayed.counts["replayed"] > 0


def test_method_of_lines_through_solve_ivp():
    """u' = D u − k u² on a grid: the solution's derivative in k."""
    D = (sp.diags([np.ones(N - 1), -2 * np.ones(N), np.ones(N - 1)], [-1, 0, 1]) * N ** 2 / 10)

    def final(k):
        return integrate.solve_ivp(lambda t, u: D @ u - k[0] * u ** 2, (0.0, 0.5), U,
                                   rtol=1e-10, atol=1e-12).y[:, -1]

    k, h = np.array([0.7]), 1e-6
    central = (final(k + h) - final(k - h)) / (2 * h)
    assert_allclose(dualad.jacfwd(final)(k)[:, 0], central, rtol=1e-5, atol=1e-8)


def test_dualad_gpu_runs_the_operator_on_the_host():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    f = CASES["spsolve(A, b)"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the transform says it ran on the host)
        got = dualad_gpu.jacfwd(lambda u: f(u) + A @ u)(U)
    assert_allclose(got, dualad.jacfwd(lambda u: f(u) + A @ u)(U), rtol=1e-13)


def test_a_sparse_matrix_built_from_duals_says_what_to_write():
    with pytest.raises(TypeError, match="holds numbers, not Duals"):
        dualad.jacfwd(lambda k: sp.diags([-np.ones(N - 1), 2.0 + k, -np.ones(N - 1)],
                                         [-1, 0, 1]) @ np.ones(N))(np.ones(N))
    for make in (sp.csr_array, sp.csc_matrix, sp.dia_array, sp.lil_array):
        with pytest.raises(TypeError, match="holds numbers, not Duals"):
            dualad.jacfwd(lambda u: make(np.diag(u)) @ U)(U)
    with pytest.raises(TypeError, match="holds numbers, not Duals"):
        dualad.jacrev(lambda u: sp.coo_array((u, (np.arange(N), np.arange(N)))) @ U)(U)
    with pytest.raises(TypeError, match="multiply converts its argument to numbers"):
        dualad.jacfwd(lambda u: A.multiply(u).sum())(U)


def test_the_sparsity_pattern_is_the_operator_s():
    f = lambda u: A @ u + u ** 2 + (u @ A) * u[0]  # noqa: E731
    pattern = dualad.jacobian_sparsity(lambda u: A @ u + u ** 2, U)
    assert np.array_equal(pattern.toarray(), (DENSE != 0) | np.eye(N, dtype=bool))
    assert_allclose(dualad.sparse_jacobian(f)(U).toarray(), dualad.jacfwd(f)(U), rtol=1e-15)


def test_taylor_mode_through_the_operator():
    g = lambda u: np.sum(np.sin(A @ u) + spla.spsolve(A, u ** 3))  # noqa: E731
    assert_allclose(dualad.laplacian(g)(U), np.trace(dualad.hessian(g)(U)), rtol=1e-12)
