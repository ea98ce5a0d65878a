"""np.linalg decompositions beyond the spec rows: values exactly NumPy's, dualad_gpu
against the NumPy path, degenerate and nearly degenerate spectra, and the refusals."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad
from dualad.rules.decompositions import EIG_ALWAYS_COMPLEX

RNG = np.random.default_rng(7)
A43 = RNG.uniform(-1.0, 1.0, (4, 3))
A35 = RNG.uniform(-1.0, 1.0, (3, 5))
SQ = RNG.uniform(-1.0, 1.0, (3, 3)) + 2.0 * np.eye(3)
STACK = RNG.uniform(-1.0, 1.0, (2, 3, 3)) + 2.0 * np.eye(3)
SPD = SQ @ SQ.T + np.eye(3)
V = RNG.uniform(-1.0, 1.0, (3, 3)) + 2.0 * np.eye(3)
REAL_SPECTRUM = (V * np.array([-1.0, 0.5, 2.0])) @ np.linalg.inv(V)
B = RNG.uniform(-1.0, 1.0, (4, 2))

# (name, function, argument): every output is a float array
CASES = [
    ("cholesky", np.linalg.cholesky, SPD),
    ("cholesky upper", lambda a: np.linalg.cholesky(a, upper=True), SPD),
    ("qr reduced", lambda a: tuple(np.linalg.qr(a)), A43),
    ("qr complete", lambda a: tuple(np.linalg.qr(a, "complete")), A43),
    ("qr wide", lambda a: tuple(np.linalg.qr(a)), A35),
    ("qr r", lambda a: np.linalg.qr(a, "r"), STACK),
    ("svd", lambda a: tuple(np.linalg.svd(a, full_matrices=False)), A35),
    ("svd square", lambda a: tuple(np.linalg.svd(a)), STACK),
    ("svd values", lambda a: np.linalg.svd(a, compute_uv=False), A43),
    ("svd hermitian", lambda a: tuple(np.linalg.svd(a, hermitian=True)), SQ),
    ("svdvals", np.linalg.svdvals, A43),
    # (np.real: NumPy 2.5's values are complex, whatever the spectrum)
    ("eig", lambda a: tuple(map(np.real, np.linalg.eig(a))), REAL_SPECTRUM),
    ("eigvals", lambda a: np.real(np.linalg.eigvals(a)), REAL_SPECTRUM),
    ("pinv", np.linalg.pinv, A43),
    ("pinv hermitian", lambda a: np.linalg.pinv(a, hermitian=True), SQ),
    ("lstsq", lambda a: (np.linalg.lstsq(a, B)[0], np.linalg.lstsq(a, B)[1],
                         np.linalg.lstsq(a, B)[3]), A43),
    ("matrix_power", lambda a: (np.linalg.matrix_power(a, 5), np.linalg.matrix_power(a, -2),
                                np.linalg.matrix_power(a, 0)), STACK),
    ("multi_dot", lambda a: np.linalg.multi_dot([a, a.T, a, a.T[:, 0]]), A43),
    ("cond", lambda a: (np.linalg.cond(a), np.linalg.cond(a, -2), np.linalg.cond(a, 1),
                        np.linalg.cond(a, "fro")), STACK),
    ("vector_norm", lambda a: np.linalg.vector_norm(a, ord=3, axis=(0, 2), keepdims=True),
     STACK),
    ("matrix_norm", lambda a: np.linalg.matrix_norm(a, ord=np.inf), STACK),
]
IDS = [name for name, _, _ in CASES]


def _leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize(("name", "f", "x"), CASES, ids=IDS)
def test_values_are_numpys_exactly(name, f, x):
    tangent = RNG.uniform(-1.0, 1.0, x.shape)
    ours, _ = dualad.jvp(f, (x,), (tangent,))
    for a, b in zip(_leaves(ours), _leaves(f(x))):
        assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize(("name", "f", "x"), CASES, ids=IDS)
def test_dualad_gpu_equals_numpy_path(name, f, x):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    for transform in ("jacfwd", "jacrev"):
        ours = getattr(dualad_gpu, transform)(f)(x)
        reference = getattr(dualad, transform)(f)(x)
        for a, b in zip(_leaves(ours), _leaves(reference)):
            assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-9, err_msg=transform)


@pytest.mark.parametrize("name", ["qr complete", "svd hermitian", "pinv", "eig", "cholesky"])
def test_dualad_gpu_hessians(name):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    _, f, x = CASES[IDS.index(name)]

    def scalar(a):
        return sum(np.sum(np.cos(np.arange(y.size).reshape(y.shape)) * y)
                   for y in _leaves(f(a)))

    assert_allclose(dualad_gpu.hessian(scalar)(x), dualad.hessian(scalar)(x),
                    rtol=1e-9, atol=1e-9)


def test_dualad_gpu_values_follow_numpys_conventions():
    """The JAX kernels read the triangle NumPy reads, use NumPy's pinv cutoff."""
    dualad_gpu = pytest.importorskip("dualad_gpu")
    a = SPD + np.triu(np.ones((3, 3)), 1)  # not symmetric: NumPy reads one triangle
    for f in (np.linalg.cholesky, lambda a: np.linalg.cholesky(a, upper=True),
              lambda a: np.linalg.pinv(a, hermitian=True),
              lambda a: np.linalg.pinv(a - np.diag([0.0, 0.0, 1e-9]) * 0, rcond=0.3)):
        y, _ = dualad_gpu.jvp(f, (a,), (np.ones_like(a),))
        assert_allclose(np.asarray(y), f(a), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# Degenerate and nearly degenerate spectra
# ---------------------------------------------------------------------------


def _orthogonal(n, seed=3):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q


def test_repeated_singular_values_keep_invariant_derivatives_exact():
    """At an orthogonal matrix every singular value is 1: the vectors' derivative
    terms 1/(s_i² - s_j²) are infinite, but the nuclear norm, the pseudo-inverse,
    lstsq and cond(·, 'fro') (functions of A that do not depend on the choice of
    vectors) have exact derivatives; the values stay NumPy's."""
    q = _orthogonal(3)
    nuclear = dualad.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)))(q)
    u, _, vh = np.linalg.svd(q)
    assert_allclose(nuclear, u @ vh, atol=1e-14)  # d tr(Σ) = <U Vᵀ, dA>
    # pinv(Q) = Qᵀ, so d pinv = -Qᵀ dA Qᵀ (+ terms that vanish for square Q)
    t = np.random.default_rng(1).normal(size=(3, 3))
    p, dp = dualad.jvp(np.linalg.pinv, (q,), (t,))
    assert_array_equal(p, np.linalg.pinv(q))
    assert_allclose(dp, -q.T @ t @ q.T, atol=1e-13)
    x, dx = dualad.jvp(lambda a: np.linalg.lstsq(a, np.ones(3))[0], (q,), (t,))
    assert_allclose(dx, -q.T @ t @ q.T @ np.ones(3), atol=1e-13)
    assert np.all(np.isfinite(dualad.jacfwd(lambda a: np.linalg.cond(a, "fro"))(q)))


def test_repeated_singular_values_give_nonfinite_vector_tangents_as_jax():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        q = _orthogonal(3)
        ours = dualad.jacfwd(lambda a: np.linalg.svd(a)[0])(q)
        theirs = np.asarray(jax.jacfwd(lambda a: jax.numpy.linalg.svd(a)[0])(q))
    assert not np.all(np.isfinite(ours))
    assert not np.all(np.isfinite(theirs))


def test_nearly_repeated_singular_values_projection_as_jax():
    """s₁ - s₂ = 1e-6: the vectors' tangents are huge (1/(s₁² - s₂²)), but the
    projection onto their span, U₂U₂ᵀ, is smooth; its derivative agrees with JAX's
    and with central differences to the digits the gap leaves."""
    jax = pytest.importorskip("jax")
    q1, q2 = _orthogonal(4, 1), _orthogonal(3, 2)
    a = (q1[:, :3] * np.array([2.0, 2.0 - 1e-6, 0.5])) @ q2.T

    def projection(a, xp=np):
        u = xp.linalg.svd(a, full_matrices=False)[0][:, :2]
        return u @ u.T

    ours = dualad.jacfwd(projection)(a)
    with jax.enable_x64(True):
        theirs = np.asarray(jax.jacfwd(lambda a: projection(a, jax.numpy))(a))
    assert np.all(np.isfinite(ours))
    assert_allclose(ours, theirs, atol=1e-6)
    h = 1e-5
    t = np.random.default_rng(4).normal(size=a.shape)
    fd = (projection(a + h * t) - projection(a - h * t)) / (2 * h)
    assert_allclose(np.tensordot(ours, t, axes=2), fd, atol=1e-5)


def test_full_matrices_extra_vectors_have_nan_tangents_others_differentiate():
    """The last m - n columns of U of a tall matrix (svd(a) with full_matrices=True)
    are any basis of a complement: their tangents are nan (JAX raises); S, Vh and
    the first n columns of U differentiate in every mode."""
    jac_u = dualad.jacfwd(lambda a: np.linalg.svd(a)[0])(A43)
    assert np.all(np.isnan(jac_u[:, 3:])) and np.all(np.isfinite(jac_u[:, :3]))
    assert np.all(np.isnan(dualad.jacfwd(lambda a: np.linalg.svd(a)[2])(A35)[3:]))
    values = dualad.jacfwd(lambda a: np.linalg.svd(a, full_matrices=False)[1])(A43)
    for transform in (dualad.jacfwd, dualad.jacrev):
        assert_allclose(transform(lambda a: np.linalg.svd(a)[1])(A43), values, atol=1e-14)
        first = transform(lambda a: np.linalg.svd(a)[0][:, :3] * np.linalg.svd(a)[2][:, :1].T)
        assert np.all(np.isfinite(first(A43)))


# ---------------------------------------------------------------------------
# Refusals and NumPy's errors
# ---------------------------------------------------------------------------


def test_complex_eigenvalues_of_a_real_matrix_are_differentiated():
    """Complex eigenvalues and eigenvectors of a real matrix, as NumPy returns them
    (tests/test_complex_linalg.py checks them against JAX)."""
    rotation = np.array([[0.3, -1.2], [0.9, 0.1]])
    h = 1e-6
    for f in (np.linalg.eigvals, lambda a: np.linalg.eig(a)[0], lambda a: np.linalg.eig(a)[1]):
        jacobian = dualad.jacfwd(f)(rotation)
        assert jacobian.dtype == np.complex128
        central = np.stack([(f(rotation + h * e) - f(rotation - h * e)) / (2 * h)
                            for e in np.eye(4).reshape(4, 2, 2)], axis=-1)
        assert_allclose(jacobian, central.reshape(jacobian.shape), atol=1e-8)


def test_complex_eigenvalues_under_dualad_gpu():
    """Complex values where NumPy's are complex whatever the spectrum (NumPy 2.5); before,
    a real matrix's values were real where all were, and a trace cannot tell: nan."""
    dualad_gpu = pytest.importorskip("dualad_gpu")
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]]) + 0.1
    compiled = np.asarray(dualad_gpu.jacfwd(np.linalg.eigvals)(rotation))
    if EIG_ALWAYS_COMPLEX:
        assert_allclose(compiled, dualad.jacfwd(np.linalg.eigvals)(rotation), rtol=1e-12)
    else:
        assert np.all(np.isnan(compiled))


def test_errors_as_numpys():
    with pytest.raises(ValueError, match="'raw'"):
        dualad.jacfwd(lambda a: np.linalg.qr(a, "raw")[0])(A43)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        dualad.jacfwd(lambda a: np.linalg.matrix_power(a, 1.5))(SQ)
    with pytest.raises(np.linalg.LinAlgError):
        dualad.jacfwd(lambda a: np.linalg.matrix_power(a, 2))(A43)
    with pytest.raises(np.linalg.LinAlgError):
        dualad.jacfwd(np.linalg.cholesky)(-SPD)
    with pytest.raises(ValueError, match="can't be both set"):
        dualad.jacfwd(lambda a: np.linalg.pinv(a, rcond=1e-3, rtol=1e-3))(A43)
    with pytest.raises(ValueError, match="at least two arrays"):
        dualad.jacfwd(lambda a: np.linalg.multi_dot([a]))(A43)


def test_lstsq_rank_and_rank_deficient_solution():
    """rank is an integer (no tangent); at a rank-deficient matrix the solution is
    the minimum-norm one and its derivative that of the constant-rank branch."""
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 0.5])  # rank 1
    b = np.array([1.0, 0.0, 2.0, 1.0])
    out = np.linalg.lstsq(a, b)
    rank = dualad.jvp(lambda a: np.linalg.lstsq(a, b)[2], (a,), (np.ones_like(a),))[0]
    assert rank == out[2] == 1
    assert_array_equal(dualad.jvp(lambda a: np.linalg.lstsq(a, b)[0], (a,),
                                  (np.ones_like(a),))[0], out[0])
    # along rank-1 perturbations the rank stays 1: compare with central differences
    t = np.outer([0.3, -1.0, 0.2, 0.5], [1.0, -1.0, 0.5])
    _, dx = dualad.jvp(lambda a: np.linalg.lstsq(a, b)[0], (a,), (t,))
    h = 1e-6
    fd = (np.linalg.lstsq(a + h * t, b)[0] - np.linalg.lstsq(a - h * t, b)[0]) / (2 * h)
    assert_allclose(dx, fd, atol=1e-7)
