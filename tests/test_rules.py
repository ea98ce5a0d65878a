"""Property tests of every primitive, driven by the rows of ``tests/specs.py``.

For each row and each of its shape sets, hypothesis draws a seed; the inputs
and tangent directions are built from it with NumPy's RNG inside the row's
domain (fast, deterministic, and shrinkable to a small seed). Each row is
checked for:

* the JVP against central differences (float64),
* linearity of the JVP in the tangent,
* a K-seed batch equal to K single JVPs,
* float32 in, float32 out, close to float64,
* ``jacfwd`` (chunked by 1 and unchunked) equal to JVPs of unit vectors,
* the JVP differentiated again (forward over forward) against central differences.

The conventions at non-differentiable points are tested at the end.
"""

from __future__ import annotations

import numpy as np
import optree
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dualad
from conftest import PER_ROW_EXAMPLES
from specs import SPECS, Spec

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

#: Step of the five-point central difference: its error is O(h⁴) truncation
#: plus O(ε/h) rounding, about 1e-12 relative here. Kinks are kept GAP away.
STEP = 1e-4


def _shapes_id(shapes) -> str:
    return "x".join("(" + ",".join(map(str, s)) + ")" for s in shapes)


CASES = [pytest.param(spec, shapes, id=f"{spec.id}-{_shapes_id(shapes)}")
         for spec in SPECS for shapes in spec.shapes]

seeds = st.integers(0, 2**32 - 1)


def leaves(tree) -> list:
    return optree.tree_leaves(tree)


def draw(spec: Spec, shapes, seed: int):
    """An RNG and float64 arguments of ``spec`` away from its kinks."""
    rng = np.random.default_rng(seed)
    args = spec.draw(rng, shapes)
    if spec.avoid is not None:
        assume(not spec.avoid(*args))
    return rng, args


def directions(rng: np.random.Generator, args: tuple) -> tuple:
    return tuple(rng.uniform(-1.0, 1.0, np.shape(a)) for a in args)


def central_difference(fun, args: tuple, tangents: tuple, h: float = STEP) -> list:
    """Directional derivative of every output leaf by the five-point stencil."""
    def at(s):
        moved = tuple(a + s * t for a, t in zip(args, tangents))
        return [np.asarray(v, dtype=np.float64) for v in leaves(fun(*moved))]

    f2, f1, m1, m2 = (at(k * h) for k in (2, 1, -1, -2))
    return [(-a + 8 * b - 8 * c + d) / (12 * h) for a, b, c, d in zip(f2, f1, m1, m2)]


def assert_close(actual, expected, rtol: float, atol: float, what: str) -> None:
    """Leaf by leaf; ``atol`` is relative to the largest expected magnitude (at least 1)."""
    actual, expected = leaves(actual), leaves(expected)
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, expected " \
                                         f"{len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what}, output {i}: shape {a.shape}, expected {e.shape}"
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol * scale,
                                   err_msg=f"{what}, output {i}")


def is_float(x) -> bool:
    return np.asarray(x).dtype.kind == "f"


# ---------------------------------------------------------------------------
# Properties of every row
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_jvp_matches_central_differences(spec, shapes, seed):
    rng, args = draw(spec, shapes, seed)
    tangents = directions(rng, args)
    expected_out = spec.fun(*args)
    out, tangent_out = dualad.jvp(spec.fun, args, tangents)
    assert optree.tree_structure(out) == optree.tree_structure(expected_out)
    assert_close(out, expected_out, 1e-10, 1e-12, "primal")
    assert_close(tangent_out, central_difference(spec.fun, args, tangents),
                 spec.rtol, spec.atol, "tangent vs central differences")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_jvp_is_linear_in_the_tangent(spec, shapes, seed):
    rng, args = draw(spec, shapes, seed)
    a, b = directions(rng, args), directions(rng, args)
    combined = tuple(2 * x + 3 * y for x, y in zip(a, b))
    ja = leaves(dualad.jvp(spec.fun, args, a)[1])
    jb = leaves(dualad.jvp(spec.fun, args, b)[1])
    jc = dualad.jvp(spec.fun, args, combined)[1]
    rtol, atol = (spec.rtol, spec.atol) if spec.adaptive else (1e-10, 1e-12)
    assert_close(jc, [2 * x + 3 * y for x, y in zip(ja, jb)], rtol, atol,
                 "jvp(2a + 3b) vs 2 jvp(a) + 3 jvp(b)")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_batched_seeds_equal_single_jvps(spec, shapes, seed):
    rng, args = draw(spec, shapes, seed)
    singles = [directions(rng, args) for _ in range(3)]
    stacked = tuple(np.stack([t[i] for t in singles]) for i in range(len(args)))
    _, batched = dualad.jvp(spec.fun, args, stacked, batched=True)
    one_by_one = [leaves(dualad.jvp(spec.fun, args, t)[1]) for t in singles]
    expected = [np.stack([o[j] for o in one_by_one]) for j in range(len(one_by_one[0]))]
    rtol, atol = (spec.rtol, spec.atol) if spec.adaptive else (1e-12, 1e-13)
    assert_close(batched, expected, rtol, atol, "3-seed batch vs 3 single JVPs")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_float32_in_float32_out(spec, shapes, seed):
    rng, args = draw(spec, shapes, seed)
    args32 = tuple(a.astype(np.float32) for a in args)
    tangents32 = tuple(t.astype(np.float32) for t in directions(rng, args))
    out32, t32 = dualad.jvp(spec.fun, args32, tangents32)
    out64, t64 = dualad.jvp(spec.fun, tuple(a.astype(np.float64) for a in args32),
                            tuple(t.astype(np.float64) for t in tangents32))
    # The dtypes NumPy gives for float32 input: float32, except for the few
    # functions that always compute in float64 (float_power).
    expected = leaves(spec.fun(*args32))
    for i, (o32, d32, e) in enumerate(zip(leaves(out32), leaves(t32), expected)):
        if is_float(e):
            assert np.asarray(o32).dtype == np.asarray(e).dtype, f"primal output {i}"
            assert np.asarray(d32).dtype == np.asarray(e).dtype, f"tangent output {i}"
    assert_close(out32, out64, 1e-4, 1e-5, "float32 primal vs float64")
    assert_close(t32, t64, 2e-3, 2e-4, "float32 tangent vs float64")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_jacfwd_equals_jvps_of_unit_vectors(spec, shapes, seed):
    _, args = draw(spec, shapes, seed)
    argnums = tuple(range(len(args)))
    out_leaves = leaves(spec.fun(*args))
    expected = []
    columns = []  # columns[i][k]: the output leaves' tangents along e_k of argument i
    for i, a in enumerate(args):
        cols = []
        for k in range(a.size):
            unit = [np.zeros_like(b) for b in args]
            unit[i].flat[k] = 1.0
            cols.append(leaves(dualad.jvp(spec.fun, args, tuple(unit))[1]))
        columns.append(cols)
    for j, o in enumerate(out_leaves):
        for i, a in enumerate(args):
            block = np.stack([c[j] for c in columns[i]], axis=-1) if columns[i] else \
                np.zeros(np.shape(o) + (0,))
            expected.append(block.reshape(np.shape(o) + a.shape))
    rtol, atol = (spec.rtol, spec.atol) if spec.adaptive else (1e-12, 1e-13)
    for chunk in (1, None):
        jac = dualad.jacfwd(spec.fun, argnums=argnums, chunk_size=chunk)(*args)
        assert_close(jac, expected, rtol, atol, f"jacfwd(chunk_size={chunk}) vs unit JVPs")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=seeds)
def test_jvp_rule_differentiates_again(spec, shapes, seed):
    """Forward over forward: the rule, written with primitives, has the right derivative."""
    rng, args = draw(spec, shapes, seed)
    t, u = directions(rng, args), directions(rng, args)

    def tangent_along_t(*xs):
        return dualad.jvp(spec.fun, xs, t)[1]

    _, second = dualad.jvp(tangent_along_t, args, u)
    assert_close(second, central_difference(tangent_along_t, args, u), 10 * spec.rtol,
                 10 * spec.atol, "second derivative vs central differences of the JVP")


# ---------------------------------------------------------------------------
# Conventions at non-differentiable points (see dualad/rules/elementwise.py)
# ---------------------------------------------------------------------------


def jac(fun, *args, argnums=0):
    return dualad.jacfwd(fun, argnums=argnums)(*(np.asarray(a, float) for a in args))


@pytest.mark.parametrize("f", [np.abs, np.absolute, np.fabs, abs])
def test_abs_has_derivative_zero_at_zero(f):
    np.testing.assert_array_equal(jac(f, [0.0, 2.0, -3.0]), np.diag([0.0, 1.0, -1.0]))


def test_norm_one_at_zero_has_derivative_zero():
    np.testing.assert_array_equal(jac(lambda x: np.linalg.norm(x, 1), [0.0, 2.0, -3.0]),
                                  [0.0, 1.0, -1.0])


@pytest.mark.parametrize("f", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_maximum_minimum_ties_split_half_half(f):
    x = np.array([1.0, -2.0, 0.0])
    dx, dy = jac(f, x, x, argnums=(0, 1))
    np.testing.assert_array_equal(dx, 0.5 * np.eye(3))
    np.testing.assert_array_equal(dy, 0.5 * np.eye(3))
    # Moving both arguments together moves the result by the same amount.
    _, t = dualad.jvp(f, (x, x), (np.ones(3), np.ones(3)))
    np.testing.assert_array_equal(t, np.ones(3))


def test_fmax_fmin_give_the_derivative_to_the_argument_that_is_not_nan():
    x, y = np.array([1.0, np.nan, 2.0]), np.array([np.nan, 3.0, 2.0])
    for f in (np.fmax, np.fmin):
        dx, dy = jac(f, x, y, argnums=(0, 1))
        np.testing.assert_array_equal(np.diag(dx), [1.0, 0.0, 0.5])
        np.testing.assert_array_equal(np.diag(dy), [0.0, 1.0, 0.5])


@pytest.mark.parametrize("f", [np.max, np.min, np.amax, np.amin])
def test_reduction_ties_split_equally(f):
    x = np.array([3.0, -1.0, 3.0, 0.0, 3.0]) * (1 if f in (np.max, np.amax) else -1)
    np.testing.assert_allclose(jac(f, x), [1 / 3, 0, 1 / 3, 0, 1 / 3], rtol=1e-15)
    m = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]]) * (1 if f in (np.max, np.amax) else -1)
    np.testing.assert_array_equal(jac(lambda a: f(a, axis=1), m).reshape(2, 6),
                                  [[0.5, 0.5, 0, 0, 0, 0], [0, 0, 0, 0, 0.5, 0.5]])


def test_sort_ties_follow_a_permutation():
    x = np.array([2.0, 1.0, 2.0])
    j = jac(np.sort, x)
    assert sorted(map(tuple, j)) == sorted(map(tuple, np.eye(3)))
    np.testing.assert_array_equal(j[0], [0.0, 1.0, 0.0])


def test_sqrt_at_zero_is_inf_along_a_nonzero_tangent_and_zero_along_zero():
    np.testing.assert_array_equal(jac(np.sqrt, [0.0, 1.0]), [[np.inf, 0.0], [0.0, 0.5]])
    _, t = dualad.jvp(np.sqrt, (np.array([0.0, 0.0, 4.0]),), (np.array([1.0, 0.0, 1.0]),))
    np.testing.assert_array_equal(t, [np.inf, 0.0, 0.25])


def test_norm_at_zero_has_derivative_zero():
    # sqrt'(0) = ∞ meets the exactly zero tangent of Σx²: the midpoint convention, not nan.
    np.testing.assert_array_equal(jac(np.linalg.norm, [0.0, 0.0]), [0.0, 0.0])
    np.testing.assert_array_equal(jac(np.hypot, 0.0, 0.0, argnums=(0, 1)), (0.0, 0.0))


def test_infinite_partials_raise_no_floating_point_errors():
    with np.errstate(all="raise"):
        jac(np.sqrt, [0.0, 1.0])
        jac(np.cbrt, [0.0, 1.0])
        jac(np.linalg.norm, [0.0, 0.0])
        jac(lambda x: np.power(x, 0.0), [0.0, 2.0])
        jac(lambda x: np.where(x > 0, np.sqrt(x), 0.0), [0.0, 4.0])


def test_where_selects_the_tangent_of_the_taken_branch():
    def f(x):
        return np.where(x > 0, np.sqrt(x), 0.0)

    with np.errstate(invalid="ignore"):  # NumPy's own sqrt(-1) in the unselected branch
        _, t = dualad.jvp(f, (np.array([0.0, 4.0, -1.0]),), (np.ones(3),))
    j = jac(f, [0.0, 4.0])
    np.testing.assert_array_equal(t, [0.0, 0.25, 0.0])
    np.testing.assert_array_equal(j, [[0.0, 0.0], [0.0, 0.25]])


@pytest.mark.parametrize("f", [np.floor, np.ceil, np.trunc, np.rint, np.sign, np.round,
                               np.around, lambda x: np.round(x, 1), lambda x: x // 1.0])
def test_step_functions_have_derivative_zero(f):
    x = np.array([-1.5, -0.2, 0.0, 0.7, 2.0])
    _, t = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.zeros_like(x))
    np.testing.assert_array_equal(jac(f, x), np.zeros((5, 5)))


def test_clip_at_a_boundary_takes_the_midpoint():
    x = np.array([-1.0, 1.0, 0.0, 2.0, -3.0])
    np.testing.assert_array_equal(jac(lambda v: np.clip(v, -1.0, 1.0), x),
                                  np.diag([0.5, 0.5, 1.0, 0.0, 0.0]))
    dx, dlo, dhi = jac(np.clip, x, -1.0, 1.0, argnums=(0, 1, 2))
    np.testing.assert_array_equal(dx, np.diag([0.5, 0.5, 1.0, 0.0, 0.0]))
    np.testing.assert_array_equal(dlo, [0.5, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(dhi, [0.0, 0.5, 0.0, 1.0, 0.0])


def test_power_at_zero_base_and_zero_exponent():
    # x² at 0 has derivative 0; 0^y is constant in y > 0; x⁰ is constant in x.
    np.testing.assert_array_equal(jac(lambda x: x ** 2, [0.0, 3.0]), np.diag([0.0, 6.0]))
    np.testing.assert_array_equal(jac(lambda y: np.power(0.0, y), [1.0, 2.5]), np.zeros((2, 2)))
    np.testing.assert_array_equal(jac(lambda x: np.power(x, 0.0), [0.0, 2.0]), np.zeros((2, 2)))
    np.testing.assert_array_equal(jac(lambda x: np.power(x, 1.0), [0.0, 2.0]), np.eye(2))


# ---------------------------------------------------------------------------
# Keyword arguments and ufunc methods
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("f", [np.sum, np.prod, np.mean, np.var, np.std, np.cumsum,
                               np.cumprod, np.trace])
def test_reduction_dtype_argument_gives_the_result_dtype(f):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 3))
    out, t = dualad.jvp(lambda a: f(a, dtype=np.float32), (x,), (np.ones_like(x),))
    expected = f(x, dtype=np.float32)
    assert np.asarray(out).dtype == np.asarray(t).dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_ufunc_accumulate_defaults_to_axis_zero():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    out, t = dualad.jvp(np.add.accumulate, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(out, np.add.accumulate(x))
    np.testing.assert_array_equal(t, [[1, 1, 1], [2, 2, 2]])


# ---------------------------------------------------------------------------
# The public checker on every row: what users run on the rules they register
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=3)
@given(data=st.data())
def test_check_grads_on_every_primitive(spec, shapes, data):
    from dualad.testing import check_grads, strategies

    args = tuple(data.draw(strategies.points(spec.domain_of(i), shape))
                 for i, shape in enumerate(shapes))
    if spec.avoid is not None:
        assume(not spec.avoid(*args))
    check_grads(spec.fun, args, order=1, modes=("fwd", "rev"))
