"""Polynomials, unwrap and numpy.linalg's other names (specs_polynomials.py): every
row under dualad_gpu, values (and dtypes) equal NumPy's, the decisions taken on the
value (polydiv's trimming, roots' stripping), matrix_rank as a value, and the calls
refused with a reason."""

import warnings

import numpy as np
import optree
import pytest
import specs  # noqa: F401  (first: it imports specs_polynomials)
from numpy.testing import assert_allclose, assert_array_equal
from test_coverage_arrays import draw  # noqa: E402
from specs_polynomials import ROWS

import dualad

L = np.linalg
RNG = np.random.default_rng(7)
P5, P3 = RNG.uniform(-2.0, 2.0, 5), RNG.uniform(-2.0, 2.0, 3)
A3 = RNG.uniform(-1.0, 1.0, (2, 3, 3))
SPD = A3[0] @ A3[0].T + 3.0 * np.eye(3)
ROOTS = np.poly([-1.5, 0.25, 2.0])
# long enough that a matrix-vector product sums in another order than NumPy's dots
LONG, LONGER = RNG.uniform(-2.0, 2.0, 30), RNG.uniform(-2.0, 2.0, 50)




def total(*args, spec):
    """A weighted sum of every floating output of the row."""
    leaves = [leaf for leaf in optree.tree_leaves(spec.fun(*args))
              if getattr(dualad.primal_value(leaf), "dtype", np.dtype(float)).kind == "f"]
    return sum(np.sum(leaf * np.cos(np.arange(np.size(leaf)).reshape(np.shape(leaf))))
               for leaf in leaves)


def values(f, *args):
    """f's outputs on Duals (every argument seeded), as plain arrays."""
    out = dualad.jvp(f, args, tuple(np.ones_like(a) for a in args))[0]
    return optree.tree_leaves(out)


# ---------------------------------------------------------------------------
# dualad_gpu: the same rules compiled with jax.jit (abstract primals: polydiv keeps
# the coefficients zero by construction only, roots strips nothing)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.id)
def test_every_row_compiles_with_dualad_gpu(spec):
    pytest.importorskip("jax")
    import dualad_gpu

    args = draw(spec, spec.shapes[-1])
    every = tuple(range(len(args)))
    f = lambda *a: total(*a, spec=spec)
    ours = dualad_gpu.jacrev(f, argnums=every)(*args)
    for a, b in zip(optree.tree_leaves(ours), optree.tree_leaves(dualad.jacfwd(f, argnums=every)(
            *args))):
        assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_matrix_rank_under_dualad_gpu():
    pytest.importorskip("jax")
    import dualad_gpu

    f = lambda a: L.matrix_rank(a) * a[0, 0]
    a = np.diag([1.0, 2.0, 0.0])
    assert_allclose(dualad_gpu.jacfwd(f)(a), np.diag([2.0, 0.0, 0.0]))


# ---------------------------------------------------------------------------
# Values: NumPy's, bit for bit and dtype for dtype
# ---------------------------------------------------------------------------

CASES = {
    "polyadd": (np.polyadd, P5, P3), "polysub": (np.polysub, P3, P5),
    "polymul": (np.polymul, P5, P3), "polymul long": (np.polymul, LONG, LONGER),
    "convolve long same": (lambda a, v: np.convolve(a, v, "same"), LONG, LONGER),
    "correlate long full": (lambda a, v: np.correlate(a, v, "full"), LONGER, LONG),
    "polydiv": (np.polydiv, P5, P3),
    "polydiv short": (np.polydiv, P3, P5), "polydiv by constant": (np.polydiv, P5, P3[:1]),
    "polyder": (lambda p: np.polyder(p, 2), P5), "polyint": (lambda p: np.polyint(p, 2), P5),
    "polyint k": (lambda p, k: np.polyint(p, 2, k), P5, P3[:2]),
    "poly": (np.poly, P5), "poly matrix": (np.poly, SPD), "roots": (np.roots, ROOTS),
    "roots trailing zero": (np.roots, np.append(ROOTS, 0.0)),
    "vander": (np.vander, P5), "vander N increasing": (lambda x: np.vander(x, 3, True), P5),
    "vander N=0": (lambda x: np.vander(x, 0), P5),
    "unwrap": (lambda p: np.unwrap(4.0 * p), np.cumsum(P5)),
    "unwrap boundary": (np.unwrap, np.array([0.0, np.pi, 0.0, -np.pi])),
    "unwrap period": (lambda p, t: np.unwrap(p, period=t), 5.0 * P5, np.array(4.0)),
    "linalg.cross": (L.cross, A3[0], A3[1]), "linalg.diagonal": (L.diagonal, A3),
    "linalg.trace": (lambda x: L.trace(x, offset=1), A3),
    "linalg.matrix_transpose": (L.matrix_transpose, A3),
    "matrix_transpose": (np.matrix_transpose, A3), "linalg.outer": (L.outer, P5, P3),
    "linalg.tensordot": (lambda a, b: L.tensordot(a, b, axes=1), A3, P3),
    "linalg.tensorinv": (L.tensorinv, SPD.reshape(1, 3, 3)),
    "linalg.tensorsolve": (L.tensorsolve, SPD, P3),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_equal_numpy(case, dtype):
    f, *args = CASES[case]
    args = [a.astype(dtype) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = optree.tree_leaves(f(*args))
        ours = values(f, *args)
    assert len(ours) == len(expected)
    for a, b in zip(ours, expected):
        assert np.asarray(a).dtype == np.asarray(b).dtype, case
        assert_array_equal(a, b)


def test_polydiv_trims_the_remainder_as_numpy():
    u, v = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), np.array([2.0, 1.0, 1.0])
    assert values(np.polydiv, u, v)[1].shape == (2,)  # float64: the zeros by construction go
    # float32: NumPy's absolute tolerance 1e-8 keeps them (so does dualad)
    u32, v32 = np.array([0.3, 2.0, 3.0, 4.0], np.float32), np.array([0.7, 1.1], np.float32)
    assert values(np.polydiv, u32, v32)[1].shape == np.polydiv(u32, v32)[1].shape


def test_polydiv_refuses_to_drop_a_remainder_derivative():
    # x³ + x + 5 = x·(x² + 1) + 5: the remainder's x coefficient is 0 here, not its derivative
    with pytest.raises(TypeError, match="np.polydiv: the remainder's 1 leading"):
        dualad.jacfwd(lambda u: np.polydiv(u, [1.0, 0.0, 1.0])[1])(np.array([1.0, 0.0, 1.0, 5.0]))
    j = dualad.jacfwd(lambda u: np.polydiv(u, [1.0, 0.0, 1.0])[1])(np.array([1.0, 0.0, 2.0, 5.0]))
    assert_allclose(j, [[-1.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 1.0]])


def test_roots_with_a_trailing_zero_differentiate_in_it():
    """p = x³ - 3x² + 2x + c at c = 0: roots 2, 1, 0; dr/dc = -1/p'(r)."""
    p = np.array([1.0, -3.0, 2.0, 0.0])
    j = dualad.jacfwd(np.roots)(p)
    r = np.roots(p)
    assert_allclose(j[:, -1], -1.0 / np.polyval(np.polyder(p), r), rtol=1e-12)
    h = 1e-6
    central = np.stack([(np.roots(p + h * e) - np.roots(p - h * e)) / (2 * h)
                        for e in np.eye(4)], axis=1)
    assert_allclose(j, central, atol=1e-7)
    # second order: the Hessian's last column against central differences of the gradient
    g = lambda q: dualad.grad(lambda q: np.roots(q)[-1])(q)
    hess = dualad.hessian(lambda q: np.roots(q)[-1])(p)
    assert_allclose(hess[:, -1], (g(p + h * np.eye(4)[-1]) - g(p - h * np.eye(4)[-1])) / (2 * h),
                    atol=1e-6)


@pytest.mark.parametrize("p, match", [
    (np.array([0.0, 1.0, -3.0, 2.0]), "np.roots: the leading coefficient"),
    (np.array([1.0, -3.0, 0.0, 0.0]), "ends with 2 zero coefficients"),
], ids=["leading zero", "multiple root 0"])
def test_roots_refused_with_a_reason(p, match):
    with pytest.raises(TypeError, match=match):
        dualad.jacfwd(np.roots)(p)


def test_complex_roots():
    """Roots ±i of x² + 1: dr = -(r² dp₀ + r dp₁ + dp₂) / (2r), complex."""
    roots = np.roots(np.array([1.0, 0.0, 1.0]))
    j = dualad.jacfwd(np.roots)(np.array([1.0, 0.0, 1.0]))
    assert_allclose(j, -np.stack([roots ** 2, roots, np.ones(2)], axis=1) / (2 * roots[:, None]),
                    atol=1e-15)


def test_poly_of_a_matrix_with_complex_eigenvalues_is_real_as_numpys():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert_allclose(dualad.jvp(np.poly, (a,), (a,))[0], np.poly(a))
    j = dualad.jacfwd(np.poly)(a)  # det(xI - A) = x² - tr(A) x + det(A)
    assert j.dtype == np.float64
    assert_allclose(j, [np.zeros((2, 2)), -np.eye(2), [[0.0, -1.0], [1.0, 0.0]]], atol=1e-15)


@pytest.mark.parametrize("name", ["polyadd", "polymul", "polydiv", "polyval"])
def test_poly1d_is_refused(name):
    with pytest.raises(TypeError, match=f"np.{name} with a np.poly1d"):
        dualad.jacfwd(lambda p: getattr(np, name)(np.poly1d([1.0, 2.0]), p))(P3)


@pytest.mark.parametrize("f, x, error, match", [
    (lambda x: L.outer(x, P3), A3[0], ValueError, "one-dimensional"),
    (lambda x: L.cross(x, x), np.ones((3, 2)), ValueError, "3-dimensional vectors"),
    (L.matrix_transpose, P3, ValueError, "at least 2-dimensional"),
    (lambda x: L.tensorsolve(x, P3), np.ones((3, 4)), L.LinAlgError, "prod"),
    (lambda x: L.tensorinv(x, ind=0), SPD, ValueError, "Invalid ind"),
    (np.vander, SPD, ValueError, "one-dimensional"),
    (lambda p: np.polyder(p, -1), P3, ValueError, "Order of derivative"),
    (lambda p: np.polyint(p, -1), P3, ValueError, "Order of integral"),
    (lambda p: np.polyint(p, 3, k=[1.0, 2.0]), P3, ValueError, "k must be"),
    (np.poly, np.ones((2, 3)), ValueError, "1d or non-empty square"),
], ids=["outer 2-D", "cross 2-vectors", "transpose 1-D", "tensorsolve shapes", "tensorinv ind",
        "vander 2-D", "polyder m<0", "polyint m<0", "polyint k", "poly shape"])
def test_errors_are_numpys(f, x, error, match):
    with pytest.raises(error, match=match):
        f(x)  # NumPy's own message ...
    with pytest.raises(error, match=match):
        dualad.jacfwd(f)(x)  # ... and dualad's


# ---------------------------------------------------------------------------
# matrix_rank: an integer, computed on the value
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"tol": 0.5}, {"rtol": 0.3}, {"hermitian": True}],
                         ids=str)
def test_matrix_rank_is_numpys_value_with_derivative_zero(kwargs):
    a = np.diag([3.0, 1.0, 1e-20]) + 0.0
    expected = L.matrix_rank(a, **kwargs)
    ours = dualad.jvp(lambda a: L.matrix_rank(a, **kwargs), (a,), (np.ones_like(a),))
    assert ours[0] == expected and np.asarray(ours[0]).dtype.kind == "i"
    j = dualad.jacfwd(lambda a: L.matrix_rank(a, **kwargs) * a[0, 0])(a)
    assert_allclose(j, np.where(np.arange(9).reshape(3, 3) == 0, expected, 0.0))
    assert_allclose(dualad.jacrev(lambda a: L.matrix_rank(a, **kwargs) * a[0, 0])(a), j)
