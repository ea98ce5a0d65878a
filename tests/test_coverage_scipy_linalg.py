"""scipy.linalg beyond specs_scipy.py: values are SciPy's own (bit for bit, with SciPy's
dtypes and vector signs), keyword variants the spec rows do not cover, dualad_gpu on
every row of tests/specs_scipy_linalg.py, and what raises."""

from __future__ import annotations

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose

import dualad

sl = pytest.importorskip("scipy.linalg")
from specs import SPECS  # noqa: F401  (first: the family modules import specs)
from specs_scipy_linalg import ROWS

RNG = np.random.default_rng(7)
A = RNG.uniform(-1.0, 1.0, (4, 4)) + 3.0 * np.eye(4)
S = A @ A.T
V = np.array([2.0, -1.0, 0.5, 3.0])


def _outputs(out):
    return optree.tree_leaves(out)


def _dual_call(f, *args):
    """f on Duals (unit tangents), its primal values."""
    return dualad.jvp(f, args, tuple(np.ones_like(a) for a in args))[0]


VALUE_CALLS = {
    "det": (sl.det, (A,)),
    "inv": (sl.inv, (A,)),
    "inv pos": (lambda a: sl.inv(a, assume_a="pos", lower=True), (S,)),
    "solve": (sl.solve, (A, V)),
    "solve sym": (lambda a, b: sl.solve(a, b, assume_a="sym"), (S, V)),
    "solve pos": (lambda a, b: sl.solve(a, b, assume_a="pos"), (S, V)),
    "solve banded": (lambda a, b: sl.solve(np.triu(np.tril(a, 1), -1), b, assume_a="banded"),
                     (A, V)),
    "eigh": (sl.eigh, (S,)),
    "eigh b": (sl.eigh, (S, S + np.eye(4))),
    "eigh subset": (lambda a: sl.eigh(a, subset_by_index=(1, 2)), (S,)),
    "cholesky": (sl.cholesky, (S,)),
    "qr": (sl.qr, (A[:, :3],)),
    "qr pivoting": (lambda a: sl.qr(a, pivoting=True), (A,)),
    "qr r": (lambda a: sl.qr(a, mode="r"), (A[:3],)),
    "svd": (sl.svd, (A[:, :3],)),
    "svd gesvd": (lambda a: sl.svd(a, lapack_driver="gesvd"), (A[:3],)),
    "lu": (sl.lu, (A,)),
    "lu p_indices": (lambda a: sl.lu(a, p_indices=True), (A,)),
    "polar": (sl.polar, (A,)),
    "expm_frechet": (sl.expm_frechet, (A * 0.2, S * 0.1)),
    "eigh_tridiagonal": (sl.eigh_tridiagonal, (V, V[:3] * 0.3)),
    "fiedler_companion": (sl.fiedler_companion, (V,)),
    "convolution_matrix": (lambda a: sl.convolution_matrix(a, 6, "valid"), (V,)),
}


@pytest.mark.parametrize("name", list(VALUE_CALLS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_values_are_scipys_own(name, dtype):
    f, args = VALUE_CALLS[name]
    args = tuple(a.astype(dtype) for a in args)
    ours, theirs = _outputs(_dual_call(f, *args)), _outputs(f(*args))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        if t.dtype.kind in "iu":  # permutations: the same indices
            np.testing.assert_array_equal(o, t)
            continue
        assert o.dtype == t.dtype, name
        np.testing.assert_array_equal(o, t, err_msg=name)


def test_integer_constants_promote_to_float64():
    for c in (np.arange(3.0), np.arange(3.0, dtype=np.float32)):
        ours = _dual_call(lambda c: sl.toeplitz(c, [1, 2, 3, 4]), c)
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours, sl.toeplitz(c, [1, 2, 3, 4]))
    assert_allclose(dualad.jacfwd(lambda x: sl.det(x * np.array([[2, 1], [1, 3]])))(1.0), 10.0,
                    rtol=1e-14)


def test_second_derivative_of_det_and_inv():
    # d²/dt² det(A + tE) at 0 = 2 Σ of the 2x2 minors of E paired with A: check on a 2x2.
    e = np.array([[1.0, 2.0], [3.0, 4.0]])
    a = np.array([[2.0, 0.5], [0.1, 1.5]])
    second = dualad.derivative(dualad.derivative(lambda t: sl.det(a + t * e)))(0.0)
    assert_allclose(second, 2 * np.linalg.det(e), rtol=1e-12)
    h = dualad.hessian(lambda t: sl.inv(a + t * e)[0, 0])(0.0)
    inv = np.linalg.inv(a)
    assert_allclose(h, 2 * (inv @ e @ inv @ e @ inv)[0, 0], rtol=1e-12)


def test_eigh_vectors_have_scipys_signs_and_derivatives():
    # NumPy's and SciPy's eigenvector signs may differ: the tangent follows SciPy's.
    e = RNG.uniform(-1.0, 1.0, (4, 4))
    e = e + e.T
    def first_vector(t):
        return sl.eigh(S + t * e)[1][:, 0]
    fd = (sl.eigh(S + 1e-6 * e)[1][:, 0] - sl.eigh(S - 1e-6 * e)[1][:, 0]) / 2e-6
    assert_allclose(dualad.derivative(first_vector)(0.0), fd, rtol=1e-5, atol=1e-8)


def test_solve_reads_the_triangle_scipy_reads():
    # assume_a='pos' reads the upper triangle (lower=False): the lower one has no effect.
    below = np.tril(np.ones((4, 4)), -1)
    g = dualad.jacfwd(lambda t: sl.solve(S + t * below, V, assume_a="pos"))(0.0)
    np.testing.assert_array_equal(g, np.zeros(4))
    g = dualad.jacfwd(lambda t: sl.solve(S + t * below, V))(0.0)
    assert np.all(np.abs(g) > 0)


def test_lu_of_a_stack_and_permute_l():
    stack = np.stack([A, A.T])
    for ours, theirs in zip(_dual_call(sl.lu, stack), sl.lu(stack)):
        np.testing.assert_array_equal(ours, theirs)
    jac = dualad.jacfwd(lambda a: sl.lu(a, permute_l=True)[0])(A)
    fd = np.stack([(sl.lu(A + 1e-6 * d, permute_l=True)[0] - sl.lu(A - 1e-6 * d,
                                                                    permute_l=True)[0]) / 2e-6
                   for d in np.eye(16).reshape(16, 4, 4)], -1).reshape(4, 4, 4, 4)
    assert_allclose(jac, fd, rtol=1e-5, atol=1e-8)


# ---------------------------------------------------------------------------
# dualad_gpu: every spec row's Jacobian on JAX equals the NumPy one
# ---------------------------------------------------------------------------

GPU_ROWS = [s for s in ROWS if s.variant != "pivoting"]


@pytest.mark.parametrize("spec", GPU_ROWS, ids=lambda s: s.id)
def test_rows_under_dualad_gpu(spec):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    for _ in range(50):
        args = spec.draw(rng, spec.shapes[0])
        if spec.avoid is None or not spec.avoid(*args):
            break
    every = tuple(range(len(args)))
    ours = dualad.jacfwd(spec.fun, argnums=every)(*args)
    theirs = dualad_gpu.jacfwd(spec.fun, argnums=every)(*args)
    for a, b in zip(optree.tree_leaves(ours), optree.tree_leaves(theirs)):
        assert_allclose(np.asarray(b), a, rtol=1e-7, atol=1e-9, err_msg=spec.id)


def test_pivoting_under_dualad_gpu_runs_on_the_host():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    f = lambda a: sl.qr(a, pivoting=True)[1]  # noqa: E731  (the pivots need values)
    with pytest.warns(RuntimeWarning, match="pivoting=True.*needs NumPy values.*on the host"):
        got = dualad_gpu.jacfwd(f)(A)
    np.testing.assert_array_equal(np.asarray(got), dualad.jacfwd(f)(A))


# ---------------------------------------------------------------------------
# What raises
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("f, message", [
    (lambda a: sl.eigh(a, subset_by_value=(0.0, 10.0)), "subset_by_value.*depends on the values"),
    (lambda a: sl.eigh(a, a + np.eye(4), type=2), "type=2"),
    (lambda a: sl.qr(a, mode="raw"), "mode='raw'"),
    (lambda a: sl.lu(a[:3]), "non-square"),
    (lambda a: sl.qr(np.stack([a, a]), pivoting=True), "stack of matrices"),
    (lambda a: sl.eigh_tridiagonal(a[0], a[1, :3], select="v", select_range=(0, 1)),
     "select='v'"),
], ids=["eigh subset_by_value", "eigh type=2", "qr raw", "lu rectangular", "qr pivoting stack",
        "eigh_tridiagonal select=v"])
def test_what_raises(f, message):
    with pytest.raises(TypeError, match=message):
        dualad.jacfwd(f)(S)


def test_scipys_errors_stay_scipys():
    with pytest.raises(ValueError, match="not a recognized matrix structure"):
        dualad.jacfwd(lambda a: sl.solve(a, V, assume_a="nonsense"))(A)
    with pytest.raises(ValueError, match="Incorrect lengths"):
        dualad.jacfwd(lambda f: sl.leslie(f, f))(V)
    with pytest.raises(ValueError, match="side"):
        dualad.jacfwd(lambda a: sl.polar(a, side="up"))(A)
