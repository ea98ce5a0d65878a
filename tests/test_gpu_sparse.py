"""dualad_gpu.sparse_jacobian / sparse_hessian: compiled, against dualad's NumPy path."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

jax = pytest.importorskip("jax")
scipy_sparse = pytest.importorskip("scipy.sparse")
import dualad  # noqa: E402
import dualad_gpu  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402

jnp = jax.numpy


def bratu(u, lam):
    """The 1-D Bratu residual (h² scaled), Dirichlet zeros at both ends."""
    h = 1.0 / (u.size + 1)
    zero = np.zeros(1, u.dtype)
    padded = np.concatenate((zero, u, zero))
    return padded[:-2] - 2 * u + padded[2:] + h * h * lam * np.exp(u)


def stencil(u, c):
    """A 5-point Laplacian on a 2-D grid plus a cubic term, ``c`` not differentiated."""
    padded = np.pad(u, 1)
    lap = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] - 4 * u
    return lap + c * u ** 3


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def dense(J):
    if isinstance(J, jsparse.BCOO):
        with jax.enable_x64(True):
            return np.asarray(J.todense())
    return J.toarray()


@pytest.mark.parametrize("mode", ["fwd", "rev", "auto"])
def test_bratu_equals_numpy_path_and_dense(mode):
    u = np.sin(np.linspace(0.1, 3.0, 40))
    jac = dualad_gpu.sparse_jacobian(bratu, mode=mode)
    J = jac(u, 3.5)
    assert isinstance(J, jsparse.BCOO) and J.shape == (40, 40)
    assert J.data.dtype == np.float64
    expected = dualad.sparse_jacobian(lambda u: bratu(u, 3.5), mode=mode)(u)
    assert J.nse == expected.nnz == 3 * 40 - 2
    assert_allclose(np.asarray(J.data), expected.data, rtol=1e-12, atol=1e-12)
    assert_allclose(dense(J), dualad.jacfwd(bratu)(u, 3.5), rtol=1e-12, atol=1e-12)
    assert jac.prepare(u, 3.5).passes == 3
    assert_allclose(jac.prepare(u, 3.5)(u, 3.5).toarray(), dense(J), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_2d_stencil_with_an_array_argument_not_differentiated(mode):
    rng = np.random.default_rng(0)
    u, c = rng.normal(size=(6, 7)), rng.uniform(1, 2, size=(6, 7))
    J = dualad_gpu.sparse_jacobian(stencil, mode=mode, output="scipy")(u, c)
    assert isinstance(J, scipy_sparse.csr_array) and J.shape == (42, 42)
    expected = dualad.jacfwd(stencil)(u, c).reshape(42, 42)
    assert_allclose(J.toarray(), expected, rtol=1e-12, atol=1e-12)
    assert J.nnz >= np.count_nonzero(expected)
    # jax arrays as arguments: the same
    with jax.enable_x64(True):
        u_jax, c_jax = jnp.asarray(u), jnp.asarray(c)
    J_jax = dualad_gpu.sparse_jacobian(stencil, mode=mode)(u_jax, c_jax)
    assert_allclose(dense(J_jax), expected, rtol=1e-12, atol=1e-12)


def test_chained_rosenbrock_hessian():
    x = np.linspace(-1.2, 1.5, 30)
    hess = dualad_gpu.sparse_hessian(rosenbrock)
    H = hess(x)
    expected = dualad.sparse_hessian(rosenbrock)(x)
    assert H.nse == expected.nnz == 3 * 30 - 2
    assert_allclose(np.asarray(H.data), expected.data, rtol=1e-12, atol=1e-12)
    assert_allclose(dense(H), dualad.hessian(rosenbrock)(x), rtol=1e-12, atol=1e-9)
    assert hess.prepare(x).passes == 3
    H_scipy = dualad_gpu.sparse_hessian(rosenbrock, output="scipy")(x)
    assert_allclose(H_scipy.toarray(), dense(H), rtol=0, atol=0)


@pytest.mark.parametrize("output", ["bcoo", "scipy"])
def test_float32_stays_float32(output):
    u = np.linspace(0.0, 1.0, 12, dtype=np.float32)
    J = dualad_gpu.sparse_jacobian(bratu, output=output)(u, np.float32(1.0))
    assert J.dtype == np.float32
    assert_allclose(dense(J), dualad.jacfwd(bratu)(u.astype(np.float64), 1.0), rtol=1e-6)
    H = dualad_gpu.sparse_hessian(rosenbrock, output=output)(u)
    assert H.dtype == np.float32


def test_bcoo_and_scipy_outputs_agree_in_structure_and_values():
    u = np.cos(np.arange(15.0))
    B = dualad_gpu.sparse_jacobian(bratu)(u, 1.0)
    C = dualad_gpu.sparse_jacobian(bratu, output="scipy")(u, 1.0)
    assert B.indices_sorted and B.unique_indices
    coo = C.tocoo()
    assert_array_equal(np.asarray(B.indices), np.stack([coo.row, coo.col], axis=1))
    assert_array_equal(np.asarray(B.data), C.data)
    v = np.arange(15.0)
    with jax.enable_x64(True):
        assert_allclose(np.asarray(B @ jnp.asarray(v)), C @ v, rtol=1e-14)


def test_new_values_reuse_the_compiled_program_and_a_new_shape_prepares_again():
    calls = []

    def counted(u, lam):
        calls.append(type(u).__name__)
        return bratu(u, lam)

    jac = dualad_gpu.sparse_jacobian(counted)
    u = np.linspace(0, 1, 20)
    jac(u, 1.0)
    assert len(calls) == 2  # detection with NumPy, one trace
    J = jac(u ** 2 + 1, 2.0)
    again = dualad_gpu.sparse_jacobian(counted)(u - 1, 0.5)  # a new transform, same function
    assert len(calls) == 2
    assert_allclose(dense(J), dualad.jacfwd(bratu)(u ** 2 + 1, 2.0), rtol=1e-12, atol=1e-12)
    assert_allclose(dense(again), dualad.jacfwd(bratu)(u - 1, 0.5), rtol=1e-12, atol=1e-12)
    assert jac.prepare(u, 1.0).pattern.shape == (20, 20)

    J7 = jac(np.ones(7), 1.0)  # a new shape: detected and traced anew
    assert len(calls) == 4 and J7.shape == (7, 7)
    assert jac.prepare(np.ones(7), 1.0).pattern.shape == (7, 7)
    assert_allclose(dense(J7), dualad.jacfwd(bratu)(np.ones(7), 1.0), rtol=1e-12)


def test_a_changed_captured_array_changes_the_pattern():
    perm = np.array([1, 2, 3, 4, 0])

    def f(x):
        return x * x[perm]

    x = np.arange(1.0, 6.0)
    jac = dualad_gpu.sparse_jacobian(f, output="scipy")
    assert_allclose(jac(x).toarray(), dualad.jacfwd(f)(x), rtol=1e-14)
    perm[:] = [4, 3, 2, 1, 0]  # written in place: another function, another pattern
    assert_allclose(jac(x).toarray(), dualad.jacfwd(f)(x), rtol=1e-14)


def test_a_given_pattern_and_an_empty_one():
    u = np.linspace(0, 1, 9)
    pattern = dualad.jacobian_sparsity(lambda u: bratu(u, 1.0), u)
    J = dualad_gpu.sparse_jacobian(bratu, sparsity=pattern.toarray())(u, 1.0)
    assert_allclose(dense(J), dualad.jacfwd(bratu)(u, 1.0), rtol=1e-12)
    Z = dualad_gpu.sparse_jacobian(lambda x: np.ones(3) + 0 * np.sum(x[:0]))(u)
    assert Z.shape == (3, 9) and Z.nse == 0


def test_refusals():
    with pytest.raises(ValueError, match="output"):
        dualad_gpu.sparse_jacobian(np.sin, output="dense")
    with pytest.raises(ValueError, match="mode"):
        dualad_gpu.sparse_jacobian(np.sin, mode="both")
    with pytest.raises(TypeError, match="outside any trace"):
        jax.jit(dualad_gpu.sparse_jacobian(np.sin))(jnp.ones(3))


SHARDED = r"""
import numpy as np, jax, dualad_gpu
assert len(jax.local_devices()) == 4
def bratu(u):
    padded = np.concatenate(([0.0], u, [0.0]))
    return padded[:-2] - 2 * u + padded[2:] + np.exp(u)
rosenbrock = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
x = np.linspace(-1, 1, 16)
mesh = dualad_gpu.sharding.default_mesh()
results = [dualad_gpu.sparse_jacobian(bratu, mode=m, mesh=mesh, output="scipy")(x).toarray()
           for m in ("fwd", "rev")]
results.append(dualad_gpu.sparse_hessian(rosenbrock, mesh=mesh, output="scipy")(x).toarray())
np.savez(OUT, np.stack(results))
"""


def test_seeds_sharded_over_four_devices(on_four_devices):
    fwd, rev, hess = on_four_devices(SHARDED)["arr_0"]
    x = np.linspace(-1, 1, 16)
    expected = dualad.jacfwd(lambda u: bratu(u, (u.size + 1) ** 2))(x)
    assert_allclose(fwd, expected, rtol=1e-12, atol=1e-12)
    assert_allclose(rev, expected, rtol=1e-12, atol=1e-12)
    assert_allclose(hess, dualad.hessian(rosenbrock)(x), rtol=1e-12, atol=1e-9)
