"""jacfwd of random compositions of primitives equals jax.jacfwd (float64)."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import dualad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

N = 4
_rng = np.random.default_rng(0)
W = _rng.normal(size=(N, N))
A = W @ W.T + N * np.eye(N)
B = _rng.normal(size=(N, 3))

# Each step maps a length-N vector to a length-N vector; xp is numpy or jax.numpy.
STEPS = {
    "sin": lambda xp, a: xp.sin(a),
    "tanh": lambda xp, a: xp.tanh(a),
    "exp": lambda xp, a: xp.exp(0.3 * a),
    "log1p": lambda xp, a: xp.log1p(a * a),
    "sqrt": lambda xp, a: xp.sqrt(1.0 + a * a),
    "cube": lambda xp, a: a ** 3 / 3.0,
    "power": lambda xp, a: xp.power(1.5 + xp.cos(a), a),
    "arctan2": lambda xp, a: xp.arctan2(a, 2.0),
    "hypot": lambda xp, a: xp.hypot(a, a[::-1]),
    "logaddexp": lambda xp, a: xp.logaddexp(a, 0.5 * a[::-1]),
    "matvec": lambda xp, a: xp.asarray(W) @ a,
    "vecmat": lambda xp, a: a @ xp.asarray(W),
    "solve": lambda xp, a: xp.linalg.solve(xp.asarray(A), a),
    "inv": lambda xp, a: xp.linalg.inv(xp.asarray(A) + xp.diag(a * a)) @ a,
    "det": lambda xp, a: a * xp.linalg.det(xp.asarray(A) + xp.outer(a, a)) / 100.0,
    "slogdet": lambda xp, a: a * xp.linalg.slogdet(xp.asarray(A) + xp.diag(a * a))[1],
    "norm": lambda xp, a: a / (1.0 + xp.linalg.norm(a)),
    "cumsum": lambda xp, a: xp.cumsum(a),
    "cumprod": lambda xp, a: xp.cumprod(1.0 + 0.1 * a),
    "prod": lambda xp, a: a * xp.prod(1.0 + 0.1 * a),
    "sort": lambda xp, a: xp.sort(a),
    "roll": lambda xp, a: xp.roll(a, 1),
    "flip": lambda xp, a: xp.flip(a),
    "mean_var": lambda xp, a: (a - xp.mean(a)) / xp.sqrt(1.0 + xp.var(a)),
    "std": lambda xp, a: a * xp.std(a),
    "max": lambda xp, a: a - xp.max(a),
    "maximum": lambda xp, a: xp.maximum(a, 0.3 * a[::-1]),
    "clip": lambda xp, a: xp.clip(a, -0.7, 0.7),
    "einsum": lambda xp, a: xp.einsum("ij,j->i", xp.asarray(W), a) * xp.einsum("i,i", a, a),
    "tensordot": lambda xp, a: xp.tensordot(xp.outer(a, a), xp.asarray(W), axes=2) * a,
    "reshape": lambda xp, a: xp.reshape(xp.reshape(a, (2, 2)).T, (N,)),
    "stack": lambda xp, a: xp.sum(xp.stack([a, a ** 2]), axis=0),
    "concat_take": lambda xp, a: (xp.concatenate([a[2:], a[:2]])
                                  * xp.take(a, xp.asarray([0, 0, 1, 3]))),
    "where": lambda xp, a: xp.where(a > 0.1, a, xp.sin(a)),
    "dot_B": lambda xp, a: xp.dot(xp.dot(a, xp.asarray(B)), xp.asarray(B).T),
    "tile_repeat": lambda xp, a: xp.tile(a[:2], 2) + xp.repeat(a[2:], 2),
    "trace_diag": lambda xp, a: xp.trace(xp.outer(a, a)) * xp.diagonal(xp.diag(a)),
}
NAMES = sorted(STEPS)


def program(xp, steps):
    def run(x):
        a = x
        for name in steps:
            a = STEPS[name](xp, a)
            a = a / (1.0 + 0.1 * a * a)  # keep values in a tame range
        return a

    return run


@given(steps=st.lists(st.sampled_from(NAMES), min_size=1, max_size=5),
       seed=st.integers(0, 2**16))
def test_jacfwd_of_random_compositions_matches_jax(steps, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size=N)
    ours = dualad.jacfwd(program(np, steps))(x)
    theirs = np.asarray(jax.jacfwd(program(jnp, steps))(jnp.asarray(x)))
    assume(np.all(np.isfinite(theirs)))  # a kink where JAX's convention gives nan
    assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", NAMES)
def test_every_step_matches_jax_alone(name):
    x = np.array([0.3, -0.8, 1.1, 0.45])
    ours = dualad.jacfwd(program(np, [name]))(x)
    theirs = np.asarray(jax.jacfwd(program(jnp, [name]))(jnp.asarray(x)))
    assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sin", "solve", "norm", "prod", "einsum", "inv"])
def test_hessian_by_nesting_matches_jax(name):
    x = np.array([0.3, -0.8, 1.1, 0.45])

    def f_np(x):
        return np.sum(program(np, [name])(x) ** 2)

    def f_jnp(x):
        return jnp.sum(program(jnp, [name])(x) ** 2)

    ours = dualad.jacfwd(dualad.jacfwd(f_np))(x)
    theirs = np.asarray(jax.hessian(f_jnp)(jnp.asarray(x)))
    assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


@given(steps=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4),
       seed=st.integers(0, 2**16))
def test_hessian_of_random_compositions_matches_jax(steps, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size=N)

    def f_np(x):
        return np.sum(program(np, steps)(x) ** 2)

    def f_jnp(x):
        return jnp.sum(program(jnp, steps)(x) ** 2)

    ours = dualad.hessian(f_np)(x)
    theirs = np.asarray(jax.hessian(f_jnp)(jnp.asarray(x)))
    assume(np.all(np.isfinite(theirs)))  # a kink where JAX's convention gives nan
    assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@given(steps=st.lists(st.sampled_from(NAMES), min_size=1, max_size=5),
       seed=st.integers(0, 2**16))
def test_grad_and_jacrev_of_random_compositions_match_jax(steps, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size=N)

    def f_np(x):
        return np.sum(np.sin(program(np, steps)(x)))

    def f_jnp(x):
        return jnp.sum(jnp.sin(program(jnp, steps)(x)))

    x_jax = jnp.asarray(x)
    assert_allclose(dualad.grad(f_np)(x), np.asarray(jax.grad(f_jnp)(x_jax)),
                    rtol=1e-9, atol=1e-11)
    assert_allclose(dualad.jacrev(program(np, steps))(x),
                    np.asarray(jax.jacrev(program(jnp, steps))(x_jax)), rtol=1e-9, atol=1e-11)
