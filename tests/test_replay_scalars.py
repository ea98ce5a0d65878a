"""The replay's arithmetic of tiny arrays on Python floats (dualad.replay.scalars):
the interpreter's bits, types, warnings and floating-point errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
from dualad.replay import Recording, identical
from test_replay_state import TRANSFORMS, X, run_like_the_interpreter


def _unrolled(transformed) -> bool:
    """Whether a transformed function's recordings run arithmetic on Python floats."""
    return any(isinstance(entry, Recording) and "_extobj()" in entry.source
               for entry in transformed.entries.values())


def ode(x):
    """A right-hand side in the habit of textbooks: components, scalar arithmetic,
    squares and a quotient, stacked again."""
    a, b, c = x[0], x[1], x[2]
    return np.array([-0.04 * a + 1e4 * b * c, 0.04 * a - 3e7 * b ** 2 / (1.0 + c * c),
                     -a * b + c])


def test_an_ode_right_hand_side_is_the_interpreter_s_bit_for_bit():
    shift = {"k": 0.0}

    def g(x):
        return ode(x + shift["k"])

    run_like_the_interpreter(g, lambda k: shift.update(k=0.25 * k), calls=9)
    jac = dualad.jacfwd(g)
    for k in range(10):
        jac(X + k)
    assert jac.counts["replayed"] and _unrolled(jac)


def test_scalar_inputs_give_the_interpreter_s_types():
    f = lambda a, b: (a * b - b / a, -a, a * a)  # noqa: E731
    jac = dualad.jacfwd(f, argnums=(0, 1))
    for k in range(6):
        for args in ((2.0 + k, 5.0), (np.float64(2.0 + k), 5.0), (np.array(2.0 + k), 5.0)):
            assert identical(jac(*args), dualad.jacfwd(f, argnums=(0, 1), replay=False)(*args))
    assert jac.counts["replayed"]


def _assert_as_interpreted(jac, f, x, errstate):
    """``jac(x)``, under ``np.errstate(all=errstate)`` unless None, gives the result,
    warnings and FloatingPointError of ``jacfwd(f, replay=False)``."""
    def call(transformed, x):
        if errstate is None:
            return transformed(x)
        with np.errstate(all=errstate):
            return transformed(x)

    got, got_warnings = _with_warnings(call, jac, x)
    expected, expected_warnings = _with_warnings(call, dualad.jacfwd(f, replay=False), x)
    assert got_warnings == expected_warnings
    assert got == expected if isinstance(expected, tuple) else identical(got, expected)


def _with_warnings(f, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = f(*args)
        except FloatingPointError as error:
            out = ("raised", str(error))
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("point", [
    np.array([1e300, 2.0, 3.0]),    # overflow in a product
    np.array([0.0, 2.0, 3.0]),      # division by zero
    np.array([np.inf, 2.0, 3.0]),   # inf - inf
    np.array([np.nan, 2.0, 3.0]),   # nan in, nan out, no warning
    np.array([1e-300, 1e-10, 3.0]),  # underflow: ignored by default
])
@pytest.mark.parametrize("errstate", [None, "raise"])
def test_floating_point_errors_are_numpy_s(point, errstate):
    """A result Python floats cannot flag (not finite, or an underflow where it is
    not ignored) is computed by the interpreter: the same warnings, the same
    FloatingPointError, the same bits."""
    def f(x):
        a, b, c = x[0], x[1], x[2]
        return np.array([a * 1e10 * b, b / a - c, a - a * b, a * b * 1e-300])

    jac = dualad.jacfwd(f)
    regular = np.array([1.5, 2.0, 3.0])
    for k in range(10):
        jac(regular + k)
    assert jac.counts["replayed"] and _unrolled(jac)
    for _ in range(3):
        _assert_as_interpreted(jac, f, point, errstate)
    # and back to the recording for finite values
    replayed = jac.counts["replayed"]
    for k in range(10):
        assert identical(jac(regular + k), dualad.jacfwd(f, replay=False)(regular + k))
    assert jac.counts["replayed"] > replayed


def test_signed_zeros_and_literals_keep_their_bits():
    f = lambda x: (x * -0.0, -x * 0.0, x - -0.0, 2 * x / -3.0, x[::-1] * x)  # noqa: E731
    jac = dualad.jacfwd(f)
    for k in range(8):
        x = np.array([0.0, -0.0, 1.0 + k])
        assert identical(jac(x), dualad.jacfwd(f, replay=False)(x))
    assert jac.counts["replayed"]


def test_every_transform_agrees_on_small_arithmetic():
    run_like_the_interpreter(lambda x: ode(x) * x[::-1], lambda k: None,
                             args=lambda k: (X * (k + 1),), calls=8, every=1,
                             transforms={k: v for k, v in TRANSFORMS.items()
                                         if not k.startswith("sparse")})


def test_an_error_state_that_flags_underflow_keeps_the_recording():
    """Under np.errstate(under=...) the calls go to the interpreter (Python floats
    cannot flag an underflow), and the recording serves the calls after them."""
    f = lambda x: x[0] * x[1] * 1e-300 - x[2]  # noqa: E731
    jac = dualad.jacfwd(f)
    point = np.array([1e-10, 2.0, 3.0])
    for k in range(10):
        jac(point + k)
    recorded = jac.counts["recorded"]
    for mode in ("raise", "warn", "ignore", "raise"):
        for _ in range(4):
            got, got_warnings = _with_warnings(_under, jac, point, mode)
            expected, expected_warnings = _with_warnings(
                _under, dualad.jacfwd(f, replay=False), point, mode)
            assert got_warnings == expected_warnings
            assert got == expected if isinstance(expected, tuple) else identical(got, expected)
    replayed = jac.counts["replayed"]
    for k in range(3):
        jac(point + k)
    assert jac.counts["replayed"] == replayed + 3 and jac.counts["recorded"] == recorded


def _under(transformed, x, mode):
    with np.errstate(under=mode):
        return transformed(x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("errstate", [None, "raise"])
def test_unary_ufuncs_on_0d_values_are_numpy_s(dtype, errstate):
    """A unary ufunc on a 0-d array is replayed on its NumPy scalar (faster, the
    same loop): the same type, bits, warnings and FloatingPointError, at ordinary
    points and where the ufunc overflows, divides by zero or is invalid."""
    def f(x):
        return np.exp(x) * np.log(x) + np.sqrt(x) - np.sin(x) * np.arctanh(x / 2)

    jac = dualad.jacfwd(f)
    for k in range(10):
        jac(np.asarray(0.3 + 0.01 * k, dtype))
    assert jac.counts["replayed"]
    assert any("[()])" in entry.source for entry in jac.entries.values()
               if isinstance(entry, Recording))
    for point in (0.7, 0.0, -1.0, 2.0, 1e4, np.inf, np.nan):
        _assert_as_interpreted(jac, f, np.asarray(point, dtype), errstate)
