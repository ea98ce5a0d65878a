"""dualad.derivative_tensor (exact interpolation of batched jets) against nested forward
derivatives and JAX, and its interpolation weights on polynomials."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad.tensors import _interpolation, _multi_indices

A = np.random.default_rng(0).normal(size=(3, 3))


def _mlp(x):
    y = np.tanh(A @ x.ravel())
    return np.sum(np.exp(np.sin(y)) / (1.0 + y * y))


def _solve_and_det(x):
    M = A + np.diag(x.ravel())
    return {"solve": np.linalg.solve(M, x.ravel()), "det": np.linalg.det(M)}


def _nested(fun, order):
    for _ in range(order):
        fun = dualad.jacfwd(fun, replay=False)
    return fun


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("fun, x", [(_mlp, np.array([0.3, -0.7, 1.1])),
                                    (_solve_and_det, np.array([[0.5], [1.5], [-0.2]]))],
                         ids=["mlp", "solve-det"])
def test_equals_nested_jacfwd(fun, x, order):
    got, want = dualad.derivative_tensor(fun, order)(x), _nested(fun, order)(x)
    for g, w in zip(*(dict(t).values() if isinstance(t, dict) else [t]
                      for t in (got, want))):
        assert g.shape == w.shape
        assert_allclose(g, w, rtol=1e-11, atol=1e-11 * max(1.0, np.max(np.abs(w))))


@pytest.mark.parametrize("n, d", [(1, 5), (2, 2), (3, 3), (2, 6), (4, 4)])
def test_the_weights_recover_every_coefficient_of_a_polynomial(n, d):
    """Σ_j γᵢⱼ f_j = ∂ⁱf for f = Σ cᵢ xⁱ (homogeneous of degree d), f_j = Σᵢ cᵢ jⁱ."""
    indices = _multi_indices(n, d)
    assert len(indices) == math.comb(n + d - 1, d)
    directions, gamma, where = _interpolation(n, d)
    c = np.random.default_rng(n * 10 + d).normal(size=len(indices))
    powers = np.array(indices, dtype=float)
    f_j = np.array([np.sum(c * np.prod(j ** powers, axis=1)) for j in directions])
    factorials = np.array([math.prod(map(math.factorial, i)) for i in indices])
    assert_allclose(gamma @ f_j, c * factorials, rtol=1e-10, atol=1e-10)
    for t in itertools.islice(itertools.product(range(n), repeat=d), 50):
        assert indices[where[np.ravel_multi_index(t, (n,) * d)]] == \
            tuple(np.bincount(t, minlength=n))


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def f(x, xp=np):
        return xp.sum(xp.log1p(x ** 2) * xp.cos(x[::-1]))

    x = np.array([0.4, -1.2, 0.9])
    want = jax.jacfwd(jax.jacfwd(jax.jacfwd(lambda z: f(z, jnp))))(x)
    assert_allclose(dualad.derivative_tensor(f, 3)(x), want, rtol=1e-11, atol=1e-12)


def test_dtypes_and_nesting():
    x32 = np.array([0.3, 0.7], np.float32)
    T = dualad.derivative_tensor(lambda x: np.sum(np.sin(x) ** 3), 3)(x32)
    assert T.dtype == np.float32
    assert_allclose(T, _nested(lambda x: np.sum(np.sin(x) ** 3), 3)(x32.astype(float)),
                    rtol=1e-4, atol=1e-5)
    # d/dy of the third derivative tensor of sin(x·y): through jacfwd and by hand
    x = np.array([0.2, 0.5])
    got = dualad.jacfwd(lambda y: dualad.derivative_tensor(
        lambda z: np.sum(np.sin(z * y)), 3)(x))(1.3)
    diag = 3 * 1.3 ** 2 * -np.cos(x * 1.3) + 1.3 ** 3 * x * np.sin(x * 1.3)
    assert_allclose([got[i, i, i] for i in range(2)], diag, rtol=1e-11)
    assert abs(got[0, 0, 1]) < 1e-14  # (a structural zero, up to the interpolation)


def test_what_is_wrong_is_said():
    with pytest.raises(ValueError, match="positive integer"):
        dualad.derivative_tensor(np.sin, 0)
    with pytest.raises(ValueError, match="out of range"):
        dualad.derivative_tensor(np.sin, 2, argnums=1)(1.0)
