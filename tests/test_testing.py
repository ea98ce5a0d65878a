"""dualad.testing: check_grads passes on right rules, fails on wrong ones; the strategies."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualad
from dualad.testing import check_grads
from dualad.testing import strategies as dst

MODES = [("fwd",), ("rev",), ("fwd", "rev")]


def well_conditioned(rng, n):
    return rng.uniform(-1.0, 1.0, (n, n)) + 2.0 * np.sqrt(n) * np.eye(n)


def pytree_function(params, x):
    """A dict and a tuple in, a dict with a tuple and an integer leaf out."""
    w, b = params["w"], params["b"]
    h = np.tanh(w @ x + b)
    return {"h": h, "pair": (np.sum(h ** 2), np.exp(b[:2]) * x[:2]), "count": np.int64(3)}


def correct_cases():
    rng = np.random.default_rng(1)
    return {
        "sin": (np.sin, (rng.uniform(-2.0, 2.0, (3, 2)),)),
        "scalar": (lambda x: x ** 3 - np.log(x), (1.5,)),
        "matmul": (np.matmul, (rng.standard_normal((2, 3)), rng.standard_normal((3, 4)))),
        "solve": (np.linalg.solve, (well_conditioned(rng, 3), rng.standard_normal((3, 2)))),
        "pytree": (pytree_function, ({"w": rng.standard_normal((3, 3)),
                                      "b": rng.standard_normal(3)}, rng.standard_normal(3))),
    }


CASES = correct_cases()


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("modes", MODES, ids="+".join)
@pytest.mark.parametrize("name", sorted(CASES))
def test_passes_on_correct_functions(name, modes, order):
    f, args = CASES[name]
    check_grads(f, args, order=order, modes=modes)


def test_passes_at_order_three_and_on_float32():
    check_grads(lambda x: np.sin(x) * np.exp(x), (np.linspace(-1.0, 1.0, 4),), order=3)
    x32 = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    check_grads(lambda x: np.tanh(x) @ x, (x32,), order=2)


def test_is_deterministic_and_takes_a_seed():
    wrong = dualad.Primitive("wrong_sin_seeded", np.sin,
                             partials=(lambda ans, x: 1.01 * np.cos(x),))
    x = (np.linspace(-1.0, 1.0, 5),)
    messages = []
    for seed in (0, 0, 7):
        with pytest.raises(AssertionError) as info:
            check_grads(wrong, x, order=1, modes=("fwd",), seed=seed)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0] != messages[2]


# ---------------------------------------------------------------------------
# Wrong rules are caught
# ---------------------------------------------------------------------------

# The partial is 1% off: forward and reverse mode share the wrong rule.
wrong_sin = dualad.Primitive("wrong_sin", np.sin, partials=(lambda ans, x: 1.01 * np.cos(x),))


def uses_wrong_sin(x, y):
    return wrong_sin(x) * y + np.cos(y)


def _double_jvp(primals, tangents, ans):
    (t,) = tangents
    return None if t is None else double_wrong_transpose(t)


# Right JVP (2·t), wrong transpose (3·ct, should be 2·ct): forward mode is right,
# reverse mode is not.
double_wrong_transpose = dualad.Primitive(
    "double_wrong_transpose", lambda x: 2.0 * x, jvp=_double_jvp,
    transpose=lambda ct, args, linear: (3.0 * ct,), linear="all")


def uses_wrong_transpose(x):
    return np.sin(double_wrong_transpose(x))


X = np.array([0.3, -1.2, 0.8])
Y = np.array([1.1, 0.4, -0.5])


def test_wrong_partial_is_caught_by_fwd_mode():
    with pytest.raises(AssertionError, match=r"mode 'fwd', order 1 of 1.*central differences"):
        check_grads(uses_wrong_sin, (X, Y), order=1, modes=("fwd",))


def test_wrong_partial_is_caught_by_rev_mode_against_finite_differences():
    # Both modes use the wrong rule, so the adjoint identity holds; the comparison
    # of ⟨Jᵀu, v⟩ with central differences (JAX's check) still catches it.
    with pytest.raises(AssertionError, match=r"mode 'rev'.*central differences"):
        check_grads(uses_wrong_sin, (X, Y), order=1, modes=("rev",))


def test_wrong_transpose_passes_fwd_and_is_caught_by_rev_mode():
    check_grads(uses_wrong_transpose, (X,), order=2, modes=("fwd",))
    with pytest.raises(AssertionError, match=r"mode 'rev', order 1 of 1.*adjoint identity"):
        check_grads(uses_wrong_transpose, (X,), order=1, modes=("rev",))


# Right first derivative, wrong second: the partial is written with np.cos on
# the primal value, so it is a constant to the next level of differentiation.
frozen_sin = dualad.Primitive(
    "frozen_sin", np.sin, partials=(lambda ans, x: np.cos(dualad.primal_value(x)),))


@pytest.mark.parametrize("modes", MODES, ids="+".join)
def test_wrong_second_derivative_is_caught_only_at_order_two(modes):
    check_grads(frozen_sin, (X,), order=1, modes=modes)
    with pytest.raises(AssertionError, match=r"order 2 of 2"):
        check_grads(frozen_sin, (X,), order=2, modes=modes)


def test_failure_message_names_mode_order_errors_and_tolerance():
    with pytest.raises(AssertionError) as info:
        check_grads(uses_wrong_sin, (X, Y), order=2, atol=1e-6, rtol=1e-7)
    message = str(info.value)
    for part in ("mode 'fwd'", "order 1 of 2", "uses_wrong_sin", "max abs error",
                 "max rel error", "atol=1e-06", "rtol=1e-07"):
        assert part in message


def test_loose_tolerance_lets_a_small_error_pass():
    check_grads(uses_wrong_sin, (X, Y), order=1, atol=0.1, rtol=0.1)


def test_bad_arguments():
    with pytest.raises(TypeError, match="tuple or list"):
        check_grads(np.sin, np.ones(3))
    with pytest.raises(ValueError, match="modes"):
        check_grads(np.sin, (np.ones(3),), modes=("sideways",))
    with pytest.raises(ValueError, match="order"):
        check_grads(np.sin, (np.ones(3),), order=0)
    with pytest.raises(TypeError, match="float"):
        check_grads(np.sin, (np.arange(3),))


def test_dualad_imports_without_hypothesis():
    code = ("import sys; sys.modules['hypothesis'] = None\n"  # import hypothesis now fails
            "import numpy as np, dualad, dualad.testing\n"
            "dualad.testing.check_grads(np.sin, (1.0,))\n"
            "assert 'dualad.testing.strategies' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


@given(shape=dst.shapes(max_dims=2), data=st.data())
def test_points_in_a_domain_pass_check_grads(shape, data):
    x = data.draw(dst.points((0.1, 3.0), shape))
    assert x.shape == shape and x.dtype == np.float64
    assert np.all((x > 0.1) & (x < 3.0))
    check_grads(lambda x: np.log(x) * np.sqrt(x), (x,), order=2)


@given(shapes=dst.broadcastable_shapes(2), data=st.data())
def test_broadcasting_binary_op(shapes, data):
    x = data.draw(dst.points((-2.0, 2.0), shapes[0]))
    y = data.draw(dst.points((0.5, 2.0), shapes[1]))
    check_grads(lambda x, y: x / y + x * y, (x, y), order=2)


@settings(max_examples=10)
@given(a=dst.points(lambda rng, shape: well_conditioned(rng, shape[-1]), (3, 3)),
       b=dst.points((-1.0, 1.0), (3,)))
def test_points_with_a_sampler(a, b):
    check_grads(np.linalg.solve, (a, b), order=1)


@given(dst.arrays(dst.shapes(max_dims=2), -1.0, 1.0, np.float32, exclude_min=True))
def test_arrays_are_float_in_the_domain(x):
    assert x.dtype == np.float32 and np.all((x > -1.0) & (x <= 1.0))


@given(dst.arrays((4,), 0.0, 5.0))
def test_wrong_rule_is_caught_at_generic_points(x):
    x = x + np.arange(1.0, 5.0)  # sin' ≠ 0 at most of these: the 1% error shows
    if np.max(np.abs(np.cos(x))) > 1e-2:
        with pytest.raises(AssertionError):
            check_grads(wrong_sin, (x,), order=1, modes=("fwd",))


@given(dst.points((-1.0, 1.0), (5,), avoid=lambda x: bool(np.any(np.abs(x) < 0.05))))
def test_points_avoid_rejects_kinks(x):
    assert np.all(np.abs(x) >= 0.05)
    check_grads(np.abs, (x,), order=2)
