"""Coverage: every NumPy ufunc is registered or declared non-differentiable,
every differentiable one has a rule, and every spec row names a registered function."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from numpy.testing.overrides import get_overridable_numpy_ufuncs

import dualad
from dualad import ops
from dualad.primitive import FUNCTION_HANDLERS, NON_DIFFERENTIABLE, UFUNC_HANDLERS, Primitive
from specs import SPECS, target

ALL_UFUNCS = sorted(get_overridable_numpy_ufuncs(), key=lambda u: u.__name__)

DIFFERENTIABLE_UFUNCS = [
    "add", "subtract", "multiply", "divide", "true_divide", "remainder", "mod", "fmod",
    "power", "float_power", "negative", "positive", "absolute", "fabs", "square", "sqrt",
    "cbrt", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "logaddexp", "logaddexp2", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
    "degrees", "radians", "maximum", "minimum", "fmax", "fmin", "copysign", "ldexp", "matmul",
    "vecdot", "matvec", "vecmat", "modf", "divmod", "frexp", "conjugate",
]

ZERO_DERIVATIVE_UFUNCS = ["floor_divide", "floor", "ceil", "trunc", "rint", "sign"]


@pytest.mark.parametrize("ufunc", ALL_UFUNCS, ids=lambda u: u.__name__)
def test_every_ufunc_is_registered_or_non_differentiable(ufunc):
    assert ufunc in UFUNC_HANDLERS or ufunc in NON_DIFFERENTIABLE, (
        f"np.{ufunc.__name__} has neither a rule nor a place in NON_DIFFERENTIABLE")


@pytest.mark.parametrize("name", DIFFERENTIABLE_UFUNCS)
def test_differentiable_ufunc_has_a_rule(name):
    ufunc = getattr(np, name)
    assert ufunc not in NON_DIFFERENTIABLE
    handler = UFUNC_HANDLERS[ufunc]
    if isinstance(handler, Primitive):
        assert handler.differentiable, f"np.{name}'s primitive has no partials or jvp rule"
    else:
        assert callable(handler)  # a composite of primitives


def test_clip_has_a_rule():
    assert ops.clip.differentiable
    assert FUNCTION_HANDLERS[np.clip] is not None


@pytest.mark.parametrize("name", ZERO_DERIVATIVE_UFUNCS)
def test_step_ufuncs_are_declared_non_differentiable(name):
    assert getattr(np, name) in NON_DIFFERENTIABLE


def _float_arguments(ufunc):
    """Arguments on which ``ufunc`` runs for float64 input, or None."""
    x = np.array([0.5, -1.5, 2.0])
    args = (x,) * ufunc.nin
    try:
        with np.errstate(all="ignore"):
            ufunc(*args)
    except TypeError:
        return None
    return args


# The string ufuncs of numpy.strings never take floats: only registration matters for them.
FLOAT_TAKING = sorted((u for u in NON_DIFFERENTIABLE if _float_arguments(u) is not None),
                      key=lambda u: u.__name__)


def test_the_non_differentiable_ufuncs_that_take_floats_are_the_numeric_ones():
    names = {u.__name__ for u in FLOAT_TAKING}
    assert {"floor", "sign", "isnan", "greater", "heaviside", "nextafter"} <= names
    string_only = [u.__name__ for u in FLOAT_TAKING
                   if all(set(sig) & set("OSUT") for sig in u.types)]
    assert string_only == []


@pytest.mark.parametrize("ufunc", FLOAT_TAKING, ids=lambda u: u.__name__)
def test_non_differentiable_ufunc_on_a_dual_gives_a_plain_array(ufunc):
    args = _float_arguments(ufunc)
    dual = dualad.Dual(args[0], np.ones_like(args[0]))
    with np.errstate(all="ignore"):
        result = ufunc(dual, *args[1:])
        expected = ufunc(*args)
    results = result if isinstance(result, tuple) else (result,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for r, e in zip(results, expected):
        assert isinstance(r, np.ndarray) and not isinstance(r, dualad.Dual)
        np.testing.assert_array_equal(r, e)


@pytest.mark.parametrize("name", sorted({spec.name for spec in SPECS}))
def test_every_spec_row_names_a_registered_function(name):
    func = target(name)
    if func is operator.getitem:
        assert isinstance(ops.getitem, Primitive) and ops.getitem.differentiable
        return
    table = UFUNC_HANDLERS if isinstance(func, np.ufunc) else FUNCTION_HANDLERS
    assert func in table, f"spec row {name!r} names np.{name}, which has no handler"
    # floor_divide has a rule in its divisor; sign, of complex values (z/|z|)
    assert func not in NON_DIFFERENTIABLE or name in ("floor_divide", "sign")
