"""A constant array the function writes into after an operation used it: a scratch
buffer refilled between two products, a matrix scaled after its first use. Reverse mode
reads its constants again when it walks back, and a replay's recording keeps copies of
them: both must see each use's values, as forward mode and NumPy do. And every call
of a replayed transform lays its result out as the interpreter does."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from test_replay_state import TRANSFORMS, X, run_like_the_interpreter

import dualad

WORK = np.empty(3)


def _refilled(x):
    WORK[:] = [1.0, 2.0, 3.0]  # the weights of the first term
    first = x * WORK
    WORK[:] = [10.0, 20.0, 30.0]  # the same buffer, refilled for the second
    return first + np.sin(x) * WORK


def _scaled_after_use(x):
    W = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]])
    c = np.ones(3)
    y = np.tanh(W @ x) * c
    W *= 10.0
    c[0] = 5.0  # (an array made in the function, written with a plain number)
    index = np.array([2, 0])
    picked = x[index]
    index[0] = 1
    return y + np.dot(W, x) * 1e-2 + np.sum(picked * x[index])


def _expected(f, x):
    """The Jacobian by central differences (f is smooth)."""
    h, n = 1e-6, x.size
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(n)], axis=1)


@pytest.mark.parametrize("f", [_refilled, _scaled_after_use])
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_every_mode_sees_each_use_s_values(f, transform):
    J = getattr(dualad, transform)(f, replay=False)(X)
    assert_allclose(J, _expected(f, X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_second_order_sees_each_use_s_values(mode):
    g = lambda x: np.sum(_refilled(x) ** 2)  # noqa: E731
    want = dualad.hessian(g, mode="hyperdual", replay=False)(X)
    assert_allclose(dualad.hessian(g, mode=mode, replay=False)(X), want, rtol=1e-13)


@pytest.mark.parametrize("f", [_refilled, _scaled_after_use])
def test_the_recording_call_sees_each_use_s_values(f):
    """Every call, the one that records included, is the interpreter's bit for bit."""
    run_like_the_interpreter(f, lambda k: None, transforms=TRANSFORMS,
                             args=lambda k: (X * (1 + 0.01 * k),), calls=14, every=1)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_every_call_lays_its_result_out_as_the_interpreter(transform):
    """The strides too (an F-ordered Jacobian given to lu_factor(overwrite_a=True)),
    the recording call and a call the interpreter finishes included."""
    scale = [1.0]
    f = lambda x: np.stack([x[0] * x[1] * scale[0], x[1] ** 2 + 3 * x[2], np.sin(x[0])])  # noqa
    g = f if transform != "hessian" else (lambda x: np.sum(f(x) * x ** 2))
    replayed, interpreted = (getattr(dualad, transform)(g, replay=r) for r in (True, False))
    for k in range(24):
        if k % 7 == 6:
            scale[0] += 0.5  # (the next call is finished by the interpreter)
        got, expected = replayed(X), interpreted(X)
        assert np.array_equal(got, expected) and got.strides == expected.strides, k


def test_a_large_operand_written_after_its_use_raises_in_reverse_mode():
    """Larger than COPIED_UP_TO, an operand is not copied onto the tape but checked:
    reverse mode says what happened, forward mode reads it as each use saw it."""
    W = np.ones((100, 100))  # 80 kB

    def f(x):
        y = W @ x
        W[0, 0] += 1.0
        return np.sum(y ** 2)

    x = np.ones(100)
    assert dualad.jacfwd(f, replay=False)(x)[0] == 20000.0
    with pytest.raises(ValueError, match="wrote into an array after an operation used it"):
        dualad.grad(f, replay=False)(x)
    with pytest.raises(ValueError, match="copy the array before writing"):
        dualad.linearize(f, x)[1](x)
