"""Rules at the edges of their domains: never silently wrong, never an obscure crash.

Each case is checked in forward mode, reverse mode and at second order (hyper-duals
and forward-over-reverse), against JAX (float64) or central differences where JAX's
convention differs, or against reference values of high precision.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

HESSIAN_MODES = ("hyperdual", "fwd-rev")


def all_modes(f, x):
    """jacfwd, jacrev and both Hessians of ``f`` at ``x``."""
    return {
        "jacfwd": dualad.jacfwd(f)(x),
        "jacrev": dualad.jacrev(f)(x),
        **{m: dualad.hessian(lambda a: np.sum(f(a)), mode=m)(x) for m in HESSIAN_MODES},
    }


def jax_modes(f, x):
    x = jnp.asarray(x)
    return {"jacfwd": np.asarray(jax.jacfwd(f)(x)), "jacrev": np.asarray(jax.jacrev(f)(x)),
            **{m: np.asarray(jax.hessian(lambda a: jnp.sum(f(a)))(x)) for m in HESSIAN_MODES}}


def central_difference(f, x, h=1e-5):
    x = np.asarray(x, float)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


# ---------------------------------------------------------------------------
# np.var / np.std over one element: constant 0, derivative 0 in every mode
# ---------------------------------------------------------------------------

ONE_ELEMENT = [
    ("std axis of length 1", lambda a: np.std(a, axis=1), lambda a: jnp.std(a, axis=1)),
    ("var axis of length 1", lambda a: np.var(a, axis=1), lambda a: jnp.var(a, axis=1)),
    ("std keepdims", lambda a: np.std(a, axis=-1, keepdims=True),
     lambda a: jnp.std(a, axis=-1, keepdims=True)),
    ("std of all, one element", lambda a: np.std(a[:1, 0]), lambda a: jnp.std(a[:1, 0])),
    ("std then more", lambda a: np.sin(a[:, 0]) * np.std(a, axis=1),
     lambda a: jnp.sin(a[:, 0]) * jnp.std(a, axis=1)),
]


@pytest.mark.parametrize("name, f, f_jax", ONE_ELEMENT, ids=[c[0] for c in ONE_ELEMENT])
def test_std_var_over_one_element(name, f, f_jax):
    x = np.array([[1.0], [2.5], [-0.5]])
    ours, theirs = all_modes(f, x), jax_modes(f_jax, x)
    for mode in ours:
        # JAX's std is nan here (sqrt'(0)·0); the function is constant in those inputs
        expected = np.where(np.isnan(theirs[mode]), 0.0, theirs[mode])
        assert_allclose(ours[mode], expected, rtol=1e-12, atol=1e-14, err_msg=mode)


def test_std_of_a_scalar():
    assert dualad.grad(np.std)(1.5) == 0.0
    assert dualad.derivative(np.var)(1.5) == 0.0
    assert dualad.second_derivative(np.std)(1.5) == 0.0
    for mode in HESSIAN_MODES:
        assert_array_equal(dualad.hessian(np.std, mode=mode)(np.array([2.0])), [[0.0]])


# ---------------------------------------------------------------------------
# einsum with '...' of different lengths in its operands, in reverse mode
# ---------------------------------------------------------------------------

EINSUM = [
    ("j...k,lj...->lk...", (3, 2, 4), (5, 3)),
    ("j...k,lj...->lk...", (3, 4), (5, 3, 2)),
    ("jk...,lj...->lk...", (3, 4, 2), (5, 3)),
    ("jk...,lj...->lk...", (3, 4, 1), (5, 3, 2)),
    ("jk,lj...->lk...", (3, 4), (5, 3, 2)),
    ("...j,...j->...", (2, 1, 3), (4, 3)),
    ("j...k,lj...", (3, 2, 4), (5, 3)),
]


@pytest.mark.parametrize("spec, a_shape, b_shape", EINSUM, ids=[c[0] + str(c[1:]) for c in EINSUM])
def test_einsum_ellipsis_in_reverse_mode(spec, a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    both = (0, 1)
    expected = jax.jacrev(lambda a, b: jnp.einsum(spec, a, b), both)(a, b)
    for ours in (dualad.jacrev(lambda a, b: np.einsum(spec, a, b), argnums=both)(a, b),
                 dualad.jacfwd(lambda a, b: np.einsum(spec, a, b), argnums=both)(a, b)):
        for o, e in zip(ours, expected):
            assert_allclose(o, np.asarray(e), rtol=1e-12, atol=1e-13)
    # a second order through the same transposes
    f = lambda a: np.sum(np.einsum(spec, a, b) ** 2)  # noqa: E731
    h = np.asarray(jax.hessian(lambda a: jnp.sum(jnp.einsum(spec, a, b) ** 2))(a))
    for mode in HESSIAN_MODES:
        assert_allclose(dualad.hessian(f, mode=mode)(a), h, rtol=1e-11, atol=1e-11)


# ---------------------------------------------------------------------------
# eigh(a, 'U'): NumPy's own values and eigenvectors, and their derivatives
# ---------------------------------------------------------------------------


def _align_signs(v, reference):
    """``v`` with each column's sign flipped to match ``reference``'s."""
    return v * np.sign(np.sum(v * reference, axis=-2, keepdims=True))


@pytest.mark.parametrize("uplo", ["U", "L"])
def test_eigh_uplo_values_and_derivatives(uplo):
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 4))
    t = rng.normal(size=(4, 4))
    w_np, v_np = np.linalg.eigh(a, uplo)
    (w, v), (dw, dv) = dualad.jvp(lambda m: tuple(np.linalg.eigh(m, uplo)), (a,), (t,))
    assert_array_equal(w, w_np)
    assert_array_equal(v, v_np)
    assert_array_equal(np.linalg.eigvalsh(dualad.Dual(a, t), uplo).primal,
                       np.linalg.eigh(a, uplo)[0])

    # Central differences of NumPy's eigh(·, uplo), each column's sign kept continuous.
    def vectors(m):
        return _align_signs(np.linalg.eigh(m, uplo)[1], v_np)

    h = 1e-6
    assert_allclose(dv, (vectors(a + h * t) - vectors(a - h * t)) / (2 * h), atol=1e-7)
    # JAX (which reads the same triangle), with its eigenvector signs aligned to NumPy's.
    sym = np.tril(a) + np.tril(a, -1).T if uplo == "L" else np.triu(a) + np.triu(a, 1).T
    sym_t = np.tril(t) + np.tril(t, -1).T if uplo == "L" else np.triu(t) + np.triu(t, 1).T
    (jw, jv), (jdw, jdv) = jax.jvp(lambda m: jnp.linalg.eigh(m), (sym,), (sym_t,))
    signs = np.sign(np.sum(np.asarray(jv) * v_np, axis=-2, keepdims=True))
    assert_allclose(dw, np.asarray(jdw), rtol=1e-10, atol=1e-12)
    assert_allclose(dv, np.asarray(jdv) * signs, rtol=1e-9, atol=1e-11)
    # reverse mode and second order of a sign-dependent function of the vectors
    c = rng.normal(size=(4, 4))

    def f(m):
        return np.sum(np.linalg.eigh(m, uplo)[1] * c) + np.sum(np.linalg.eigh(m, uplo)[0] ** 2)

    g = dualad.grad(f)(a)
    assert_allclose(g, dualad.jacfwd(f)(a), rtol=1e-10, atol=1e-12)
    assert_allclose(np.sum(g * t), np.sum(dv * c) + np.sum(2 * w * dw), rtol=1e-10)
    hd, fr = (dualad.hessian(f, mode=m)(a) for m in HESSIAN_MODES)
    assert_allclose(hd, fr, rtol=1e-8, atol=1e-10)
    assert_allclose(hd, dualad.jacfwd(dualad.jacfwd(f))(a), rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------
# Accuracy of elementwise rules near the ends of their domains
# ---------------------------------------------------------------------------

NEAR_ONE = np.array([1 - 1e-6, -(1 - 1e-6), 1 - 1e-12, -(1 - 2e-10), 0.3])


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctanh"])
def test_inverse_trig_near_one_is_accurate(name):
    f, f_jax = getattr(np, name), getattr(jnp, name)
    expected = np.asarray(jax.vmap(jax.grad(f_jax))(NEAR_ONE))
    _, t = dualad.jvp(f, (NEAR_ONE,), (np.ones_like(NEAR_ONE),))
    assert_allclose(t, expected, rtol=4e-16)
    assert_allclose(np.diag(dualad.jacrev(f)(NEAR_ONE)), expected, rtol=4e-16)
    second = np.asarray(jax.vmap(jax.grad(jax.grad(f_jax)))(NEAR_ONE))
    for mode in HESSIAN_MODES:
        h = dualad.hessian(lambda x: np.sum(f(x)), mode=mode)(NEAR_ONE)
        assert_allclose(np.diag(h), second, rtol=1e-15)


def test_arccosh_near_one_is_accurate():
    x = np.array([1 + 1e-6, 1 + 1e-12, 1.5])
    expected = 1 / np.sqrt((x - 1) * (x + 1))  # exact inputs: (x-1) has no rounding
    _, t = dualad.jvp(np.arccosh, (x,), (np.ones_like(x),))
    assert_allclose(t, expected, rtol=4e-16)
    assert_allclose(np.diag(dualad.jacrev(np.arccosh)(x)), expected, rtol=4e-16)
    second = -x / ((x - 1) * (x + 1)) ** 1.5
    for mode in HESSIAN_MODES:
        h = dualad.hessian(lambda v: np.sum(np.arccosh(v)), mode=mode)(x)
        assert_allclose(np.diag(h), second, rtol=1e-15)


def test_tanh_derivative_stays_accurate_for_large_arguments():
    x = np.array([0.5, 5.0, 19.0, 25.0, -40.0, 300.0, 800.0, -1e4])
    sech2 = np.array([float(1 / np.cosh(v) ** 2) if abs(v) < 700 else 0.0 for v in x])
    _, t = dualad.jvp(np.tanh, (x,), (np.ones_like(x),))
    assert_allclose(t, sech2, rtol=1e-15)
    assert t[2] > 0 and t[3] > 0  # 1 - tanh² is 0 there
    assert_allclose(np.diag(dualad.jacrev(np.tanh)(x)), sech2, rtol=1e-15)
    second = -2 * np.tanh(x) * sech2
    for mode in HESSIAN_MODES:
        h = dualad.hessian(lambda v: np.sum(np.tanh(v)), mode=mode)(x)
        assert np.all(np.isfinite(h))
        assert_allclose(np.diag(h), second, rtol=1e-14)


@pytest.mark.parametrize("name", ["i1", "j1", "i1e"])
def test_bessel_second_derivatives_near_zero(name):
    mpmath = pytest.importorskip("mpmath")
    sc = pytest.importorskip("scipy.special")
    f = getattr(sc, name)
    reference = {"i1": lambda v: mpmath.besseli(1, v), "j1": lambda v: mpmath.besselj(1, v),
                 "i1e": lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v))}[name]
    mpmath.mp.dps = 40
    x = np.array([1e-6, -1e-4, 1e-2, 0.3, 0.999, 1.001, 2.5])
    first = np.array([float(mpmath.diff(reference, mpmath.mpf(v))) for v in x])
    second = np.array([float(mpmath.diff(reference, mpmath.mpf(v), 2)) for v in x])
    assert_allclose(np.diag(dualad.jacrev(f)(x)), first, rtol=3e-15, atol=1e-300)
    for mode in HESSIAN_MODES:
        h = np.diag(dualad.hessian(lambda v: np.sum(f(v)), mode=mode)(x))
        assert_allclose(h, second, rtol=1e-14, atol=1e-15)
    if name != "i1e":  # i1e has a kink at 0; i1 and j1 are odd: f''(0) = 0
        assert dualad.second_derivative(f)(0.0) == 0.0


# ---------------------------------------------------------------------------
# Infinite second partials against zero seed products (hyper-duals)
# ---------------------------------------------------------------------------


def test_hessian_of_sqrt_at_zero_keeps_the_finite_entries():
    x = np.array([0.0, 1.0, 4.0])
    expected = np.diag([-np.inf, -0.25, -1 / 32])
    for mode in ("auto", "hyperdual"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert_array_equal(dualad.hessian(lambda v: np.sum(np.sqrt(v)), mode=mode)(x),
                               expected)
    # JAX agrees where it has a number ([0, 1:] is nan there: 0·∞ in its JVP).
    theirs = np.asarray(jax.hessian(lambda v: jnp.sum(jnp.sqrt(v)))(x))
    finite = np.isfinite(theirs)
    assert_array_equal(expected[finite], theirs[finite])
    u, v = np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0])
    out = np.sqrt(dualad.HyperDual(x, u, v))
    assert_array_equal(out.eps1eps2[0, 0], [0.0, 0.0, -2 / 32])


@pytest.mark.xfail(strict=True, reason="forward over reverse: the forward interpreter "
                   "(dual.py) multiplies divide's infinite partial by a zero tangent "
                   "(0·∞ = nan) in the derivative of sqrt's partial 0.5/sqrt(x) at 0")
def test_hessian_of_sqrt_at_zero_forward_over_reverse():
    x = np.array([0.0, 1.0, 4.0])
    assert_array_equal(dualad.hessian(lambda v: np.sum(np.sqrt(v)), mode="fwd-rev")(x),
                       np.diag([-np.inf, -0.25, -1 / 32]))


# ---------------------------------------------------------------------------
# logaddexp and hypot at infinite arguments: the limits of their partials
# ---------------------------------------------------------------------------

INF = np.inf
LOGADDEXP = [  # (x, y, ∂x, ∂y)
    (INF, 0.0, 1.0, 0.0), (0.0, INF, 0.0, 1.0), (-INF, 0.0, 0.0, 1.0),
    (INF, INF, 0.5, 0.5), (-INF, -INF, 0.5, 0.5), (INF, -INF, 1.0, 0.0), (1.0, 1.0, 0.5, 0.5),
]
HYPOT = [
    (INF, 1.0, 1.0, 0.0), (-INF, 1.0, -1.0, 0.0), (2.0, -INF, 0.0, -1.0),
    (INF, INF, 2 ** -0.5, 2 ** -0.5), (3.0, 4.0, 0.6, 0.8), (0.0, 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize("f, cases", [(np.logaddexp, LOGADDEXP), (np.logaddexp2, LOGADDEXP),
                                      (np.hypot, HYPOT)], ids=["logaddexp", "logaddexp2",
                                                               "hypot"])
def test_partials_at_infinity_are_the_limits(f, cases):
    x, y, dx, dy = (np.array(c) for c in zip(*cases))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jx, jy = dualad.jacfwd(f, argnums=(0, 1))(x, y)
        gx, gy = dualad.jacrev(f, argnums=(0, 1))(x, y)
        for a, b in ((jx, jy), (gx, gy)):
            assert_allclose(np.diag(a), dx, rtol=1e-15)
            assert_allclose(np.diag(b), dy, rtol=1e-15)
        # second order (elementwise): no nan where a partial is constant near the point
        hyper = f(dualad.HyperDual(x, np.ones_like(x), np.ones_like(x)), y).eps1eps2[0, 0]
        fwd_rev = np.diagonal(dualad.jacfwd(
            lambda a: np.diagonal(dualad.jacrev(lambda b: f(b, y))(a)))(x))
        at_inf = np.isinf(x) & np.isfinite(y)
        assert_array_equal(hyper[at_inf], 0.0)
        assert_array_equal(fwd_rev[at_inf], 0.0)


def test_logaddexp_matches_jax_at_infinity_where_jax_has_the_limit():
    # JAX gives (1, 1) at (inf, 0): its ∂y replaces inf - inf by 0; the limit is 0.
    gx, _ = dualad.grad(np.logaddexp, argnums=(0, 1))(INF, 0.0)
    assert gx == float(jax.grad(jnp.logaddexp)(INF, 0.0)) == 1.0
    assert dualad.grad(np.logaddexp, argnums=1)(-INF, 0.0) == float(
        jax.grad(jnp.logaddexp, argnums=1)(-INF, 0.0)) == 1.0


# ---------------------------------------------------------------------------
# det at singular matrices: the derivative is the adjugate
# ---------------------------------------------------------------------------


def _singular(rng, n, rank):
    u, _, vh = np.linalg.svd(rng.normal(size=(n, n)))
    s = np.r_[rng.uniform(0.5, 2.0, rank), np.zeros(n - rank)]
    return (u * s) @ vh


SINGULAR = {
    "2x2 rank 1": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "3x3 rank 2": _singular(np.random.default_rng(1), 3, 2),
    "3x3 rank 1": _singular(np.random.default_rng(2), 3, 1),
    "4x4 rank 3": _singular(np.random.default_rng(3), 4, 3),
    "zeros": np.zeros((3, 3)),
    "stack": np.stack([_singular(np.random.default_rng(4), 3, 2),
                       np.random.default_rng(5).normal(size=(3, 3))]),
}


def test_derivatives_of_det_above_its_degree_are_zero_at_singular_matrices():
    """det of an n x n matrix is a polynomial of degree n: along any line its derivatives
    above n vanish, and the n-th is n!·det(D). Through the SVD, the zero singular value's
    rounding made the 4th derivative of a 3 x 3 one -2e-4 (NumPy 2.4) or -2e-2 (2.5)."""
    for name in ("3x3 rank 2", "3x3 rank 1", "zeros"):
        a = SINGULAR[name]
        d = np.random.default_rng(6).normal(size=(3, 3))
        g = lambda t: np.linalg.det(a + d * t)
        derivatives = []
        for _ in range(5):
            g = dualad.derivative(g, replay=False)
            derivatives.append(float(g(0.0)))
        assert_allclose(derivatives[2], 6 * np.linalg.det(d), rtol=1e-12)
        assert derivatives[3:] == [0.0, 0.0], name
        terms = dualad.jet(np.linalg.det, (a,), ([d] + [np.zeros((3, 3))] * 4,))[1]
        assert_allclose([float(t) for t in terms], derivatives, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(SINGULAR))
def test_det_at_singular_matrices(name):
    a = SINGULAR[name]
    f = np.linalg.det
    ours, theirs = all_modes(f, a), jax_modes(jnp.linalg.det, a)
    scale = max(1.0, float(np.max(np.abs(theirs["jacfwd"]))))
    assert_allclose(ours["jacfwd"], central_difference(f, a), atol=1e-8 * scale)
    gradient = dualad.jacfwd(lambda m: np.sum(f(m)))
    for mode in ours:
        expected = theirs[mode]
        if mode in HESSIAN_MODES:  # JAX's Hessian at singular matrices: nan (0.10)
            expected = central_difference(gradient, a)  # or 0 at rank n - 2 (0.12): wrong
        assert_allclose(ours[mode], expected, rtol=1e-8, atol=1e-8 * scale, err_msg=mode)


def test_det_third_derivative_at_a_singular_matrix():
    # det of a 3x3 matrix is cubic in its entries: the third derivative is the same
    # constant everywhere, so at a singular matrix it equals the one at a regular one.
    a = SINGULAR["3x3 rank 2"]
    third = dualad.jacfwd(dualad.hessian(np.linalg.det, mode="hyperdual"))
    regular = a + np.eye(3)
    assert np.linalg.cond(regular) < 1e3
    assert_allclose(third(a), third(regular), rtol=0, atol=1e-12)


def test_primitives_take_negative_axes():
    # sum and concatenate called as primitives (as rules call them) with axes counted
    # from the end: the tangent's seed axis in front must not shift them.
    from dualad.rules.reductions import sum_
    from dualad.rules.shape import concatenate

    def f(x):
        block = concatenate(concatenate(x, x, axis=-1),
                            concatenate(np.zeros((2, 2)), x, axis=-1), axis=-2)
        return sum_(block * block, axis=(-1,), keepdims=False)

    def g(x):  # the same with NumPy's functions, which normalize the axes
        block = np.block([[x, x], [np.zeros((2, 2)), x]])
        return np.sum(block * block, axis=-1)

    x = np.arange(1.0, 5.0).reshape(2, 2)
    for transform in (dualad.jacfwd, dualad.jacrev):
        np.testing.assert_allclose(transform(f)(x), transform(g)(x), rtol=1e-15)
    np.testing.assert_allclose(dualad.hessian(lambda x: np.sum(f(x)), mode="hyperdual")(x),
                               dualad.hessian(lambda x: np.sum(g(x)))(x), rtol=1e-15)
