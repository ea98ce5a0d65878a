"""``np.array([...])`` of 0-d Duals — the first line of most ODE right-hand sides —
gives an object array that dualad turns back into one Dual at the first dualad
operation or at the transform's output, in every mode."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad


def van_der_pol(t, y, mu=3.0):
    return np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


def van_der_pol_stacked(t, y, mu=3.0):
    return np.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


Y = np.array([0.8, -0.3])

JACOBIANS = {
    "jacfwd": dualad.jacfwd,
    "jacfwd chunked": lambda f: dualad.jacfwd(f, chunk_size=1),
    "jacrev": dualad.jacrev,
}


@pytest.mark.parametrize("name", list(JACOBIANS))
def test_ode_right_hand_side_jacobian(name):
    jac = JACOBIANS[name](lambda y: van_der_pol(0.0, y))(Y)
    assert_allclose(jac, dualad.jacfwd(lambda y: van_der_pol_stacked(0.0, y))(Y), rtol=1e-15)
    mu = 3.0
    assert_allclose(jac, [[0.0, 1.0], [-2 * mu * Y[0] * Y[1] - 1, mu * (1 - Y[0] ** 2)]])


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_second_order_through_an_array_literal(mode):
    f = lambda y: np.sum(van_der_pol(0.0, y) ** 2)
    g = lambda y: np.sum(van_der_pol_stacked(0.0, y) ** 2)
    assert_allclose(dualad.hessian(f, mode=mode)(Y), dualad.hessian(g)(Y), rtol=1e-14)
    assert_allclose(dualad.hvp(f, (Y,), (np.ones(2),))[0],
                    dualad.hessian(g)(Y) @ np.ones(2), rtol=1e-14)


@pytest.mark.parametrize("f, expected", [
    (lambda y: np.array([[y[0], 1.0], [2.0, y[1]]]) @ y, [[2 * Y[0], 1.0], [2.0, 2 * Y[1]]]),
    (lambda y: np.asarray([y[0], y[1]]) + y, 2 * np.eye(2)),
    (lambda y: np.sin(np.array([y[0], y[1] ** 2])), np.diag([np.cos(Y[0]),
                                                          2 * Y[1] * np.cos(Y[1] ** 2)])),
    (lambda y: np.sum(np.array([y[0], 3.0, y[1]])) * y, None),
    (lambda y: np.concatenate([np.array([y[0] * y[1]]), y]), None),
    (lambda y: np.linalg.solve(np.array([[y[0], 1.0], [2.0, y[1]]]), y), None),
    (lambda y: np.array([y[1], 2.0]) * 3.0, [[0.0, 3.0], [0.0, 0.0]]),
], ids=["matrix literal", "asarray", "ufunc on it", "sum", "concatenate", "solve",
        "constant element"])
@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_array_literals_in_expressions(f, expected, transform):
    jac = transform(f)(Y)
    h = 1e-6
    numeric = np.stack([(f(Y + h * e) - f(Y - h * e)) / (2 * h) for e in np.eye(2)], axis=-1)
    assert_allclose(jac, numeric, rtol=1e-7, atol=1e-9)
    if expected is not None:
        assert_allclose(jac, expected, rtol=1e-14)


def test_numpy_functions_that_cast_an_object_array_to_float_raise_clearly():
    with pytest.raises(TypeError, match=r"numpy.cov was given an object array of Duals"):
        dualad.grad(lambda y: np.sum(np.cov([y[0], y[1] ** 2, 1.0])))(Y)
    # np.cov of the stacked array is the way, and gives the derivative:
    expected = dualad.grad(lambda y: np.cov(np.stack([y[0], y[1] ** 2, np.ones(())])))(Y)
    assert_allclose(expected, [1 / 3 * (2 * Y[0] - Y[1] ** 2 - 1),
                               2 * Y[1] / 3 * (2 * Y[1] ** 2 - Y[0] - 1)])


@pytest.mark.parametrize("container", [list, tuple, lambda items: np.array(items, object)])
@pytest.mark.parametrize("transform", [dualad.grad, lambda f: dualad.jacrev(f),
                                       lambda f: dualad.hessian(f, mode="hyperdual")])
def test_mean_std_var_of_a_list_of_duals(container, transform):
    def f(y):
        items = container([y[0], y[1] ** 2, y[0] * y[1]])
        return np.mean(items) + np.std(items) + 2.0 * np.var(items, ddof=1)

    stacked = lambda y: f.__wrapped__(np.stack([y[0], y[1] ** 2, y[0] * y[1]]))  # noqa: E731
    f.__wrapped__ = lambda a: np.mean(a) + np.std(a) + 2.0 * np.var(a, ddof=1)
    assert_allclose(transform(f)(Y), transform(stacked)(Y), rtol=1e-13)
    assert np.mean([1.0, 2.0]) == 1.5 and np.std((1.0, 3.0)) == 1.0  # NumPy's own path


# -- every NumPy function given a list of 0-d Duals ----------------------------------
# The same call on np.stack of the list, in forward, reverse and second order: a list
# either gives that derivative or raises a TypeError; it never drops the derivative
# (np.percentile of a list once gave the value with a zero derivative: NumPy's lerp
# passes ufuncs dtype=np.dtypes.Float64DType, which np.dtype reads as object).

LIST_X = np.array([0.3, 1.7, 0.9, 2.4])
LIST_W = np.array([1.0, 2.0, 0.5, 1.5])
XP = [0.0, 1.0, 2.0, 3.0]


def matrix(a):
    """``a`` (four items) as a 2 × 2 matrix: a list of lists of a list."""
    return [a[:2], a[2:]] if isinstance(a, (list, tuple)) else np.reshape(a, (2, 2))


TAKE_A_LIST = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "std": np.std,
    "var": lambda a: np.var(a, ddof=1), "max": np.max, "min": np.min, "ptp": np.ptp,
    "median": np.median, "nanmedian": np.nanmedian,
    "percentile": lambda a: np.percentile(a, 30),
    "quantile": lambda a: np.quantile(a, [0.2, 0.5]),
    "quantile lower": lambda a: np.quantile(a, 0.4, method="lower"),
    "quantile keepdims": lambda a: np.quantile(a, 0.7, keepdims=True),
    "nanpercentile": lambda a: np.nanpercentile(a, 70),
    "nanquantile": lambda a: np.nanquantile(a, [0.6, 0.1]),
    "nansum": np.nansum, "nanprod": np.nanprod, "nanmax": np.nanmax, "nanmin": np.nanmin,
    "average": np.average, "average weights": lambda a: np.average(a, weights=LIST_W),
    "average of weights": lambda a: np.average(LIST_W, weights=a),
    "interp fp": lambda a: np.interp([0.5, 2.2], XP, a),
    "interp x": lambda a: np.interp(a, XP, LIST_W),
    "interp xp": lambda a: np.interp(1.2, np.cumsum(a), LIST_W),
    "cumsum": np.cumsum, "cumprod": np.cumprod, "diff": np.diff, "ediff1d": np.ediff1d,
    "sort": np.sort, "partition": lambda a: np.partition(a, 2),
    "dot": lambda a: np.dot(a, LIST_W), "inner": lambda a: np.inner(a, LIST_W),
    "outer": lambda a: np.outer(a, LIST_W), "vdot": lambda a: np.vdot(a, LIST_W),
    "matmul": lambda a: np.matmul(a, LIST_W), "norm": np.linalg.norm,
    "norm 1": lambda a: np.linalg.norm(a, 1), "trapezoid": np.trapezoid,
    "convolve": lambda a: np.convolve(a, LIST_W), "polyval": lambda a: np.polyval(a, 1.3),
    "polyval x": lambda a: np.polyval(LIST_W, a), "clip": lambda a: np.clip(a, 0.5, 2.0),
    "where": lambda a: np.where(LIST_W > 1, a, 0.0), "sin": np.sin, "sqrt": np.sqrt,
    "maximum": lambda a: np.maximum(a, 1.0), "hypot": lambda a: np.hypot(a, LIST_W),
    "flip": np.flip, "roll": lambda a: np.roll(a, 1), "reshape": lambda a: np.reshape(a, (2, 2)),
    "tile": lambda a: np.tile(a, 2), "take": lambda a: np.take(a, [2, 0]),
    "kron": lambda a: np.kron(a, LIST_W[:2]), "einsum": lambda a: np.einsum("i,i->", a, LIST_W),
    "concatenate": lambda a: np.concatenate([a, LIST_W]),
    "stack": lambda a: np.stack([a, LIST_W]), "append": lambda a: np.append(a, LIST_W),
    "pad": lambda a: np.pad(a, 1), "atleast_2d": np.atleast_2d,
    "trace": lambda a: np.trace(matrix(a)), "diag": np.diag,
    "select": lambda a: np.select([LIST_W > 1], [a]),
}
#: Those that cast the object array NumPy makes of the list to floats, or have no
#: loop for it: a TypeError (dualad's, naming the function, where NumPy's code asks
#: dualad for the floats).
REFUSE_A_LIST = {
    "nanmean": (np.nanmean, "numpy.nanmean"), "nanstd": (np.nanstd, "numpy.nanstd"),
    "nanvar": (np.nanvar, "numpy.nanvar"), "cov": (np.cov, "numpy.cov"),
    "corrcoef": (lambda a: np.corrcoef(a, LIST_W), "numpy.corrcoef"),
    "linalg.det": (lambda a: np.linalg.det(matrix(a)), "numpy.linalg.det"),
    "linalg.inv": (lambda a: np.linalg.inv(matrix(a)), "numpy.linalg.inv"),
    "polyfit": (lambda a: np.polyfit(XP, a, 1), "numpy.linalg.lstsq"),
    "logaddexp": (lambda a: np.logaddexp(a, LIST_W), "logaddexp"),  # (no object loop)
}
CONTAINERS = {"list": list, "tuple": tuple, "object array": lambda items: np.array(items, object)}
MODES = {
    "jacfwd": dualad.jacfwd,
    "jacrev": dualad.jacrev,
    "hessian": lambda f: dualad.hessian(lambda x: np.sum(f(x) ** 2)),
}


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("name", list(TAKE_A_LIST))
def test_a_numpy_function_given_a_list_of_duals_as_given_their_stack(name, container):
    f, make = TAKE_A_LIST[name], CONTAINERS[container]
    given = lambda x: f(make([x[i] for i in range(4)]))
    stacked = lambda x: f(np.stack([x[i] for i in range(4)]))
    for mode, transform in MODES.items():
        assert_allclose(transform(given)(LIST_X), transform(stacked)(LIST_X), rtol=1e-13,
                        atol=1e-15, err_msg=mode)


@pytest.mark.parametrize("container", ["list", "tuple"])
@pytest.mark.parametrize("name", list(REFUSE_A_LIST))
def test_a_numpy_function_that_cannot_take_a_list_of_duals_raises(name, container):
    f, match = REFUSE_A_LIST[name]
    make = CONTAINERS[container]
    for transform in MODES.values():
        with pytest.raises(TypeError, match=match):
            transform(lambda x: f(make([x[i] for i in range(4)])))(LIST_X)


@pytest.mark.parametrize("transform", list(MODES.values()), ids=list(MODES))
def test_quantiles_of_a_list_with_ties_as_of_their_stack(transform):
    # Equal values of different inputs (ties: the rule's stable order), and a q that
    # is a Dual too (its derivative, (high - low)·(n-1)).
    x = np.array([1.0, 1.0, 2.0, 1.0])
    items = lambda x: [x[2], x[0], x[3], x[1], x[0] * x[2]]
    for f in (lambda a, x: np.percentile(a, 50), lambda a, x: np.quantile(a, [0.3, 0.8]),
              lambda a, x: np.nanpercentile(a, x[2] * 30), lambda a, x: np.median(a),
              lambda a, x: np.nanquantile(a, 0.9, method="nearest")):
        assert_allclose(transform(lambda x, f=f: f(items(x), x))(x),
                        transform(lambda x, f=f: f(np.stack(items(x)), x))(x), rtol=1e-14)


def test_a_ufunc_given_a_dtype_class_keeps_the_derivative():
    # NumPy's own code passes dtype=type(a.dtype) (np.dtypes.Float64DType), which
    # np.dtype reads as object; and astype(object) gives the 0-d Duals, as NumPy does.
    f = lambda x: np.subtract(x, 1.0, dtype=np.dtypes.Float64DType) * x[0]
    for transform in (dualad.jacfwd, dualad.jacrev):
        assert_allclose(transform(f)(Y), [[2 * Y[0] - 1.0, 0.0], [Y[1] - 1.0, Y[0]]])
    assert_allclose(dualad.grad(lambda x: np.sum(x.astype(object) * x))(Y), 2 * Y)
    assert_allclose(dualad.grad(lambda x: np.sum(np.sin(x, dtype=object)))(Y), np.cos(Y))


def test_an_array_of_vectors_is_their_stack():
    assert_allclose(dualad.jacfwd(lambda y: np.array([y, 2 * y]))(Y),
                    dualad.jacfwd(lambda y: np.stack([y, 2 * y]))(Y), rtol=1e-15)


# -- np.vectorize, np.frompyfunc, casts ---------------------------------------------


def piecewise_scalar(a):
    return a ** 2 + 1.0 if a > 0 else -a


@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_vectorize_runs_its_function_on_each_element(transform):
    x = np.array([1.0, -2.0, 3.0])
    assert_allclose(transform(np.vectorize(piecewise_scalar))(x), np.diag([2.0, -1.0, 6.0]))
    two = np.vectorize(lambda a, b: a * b + np.sin(a))
    jac_a, jac_b = transform(two, argnums=(0, 1))(np.array([1.0, 2.0]), 3.0)
    assert_allclose(jac_a, np.diag(3.0 + np.cos([1.0, 2.0])))
    assert_allclose(jac_b, [1.0, 2.0])


def test_vectorize_with_a_signature_and_second_order():
    rows = np.vectorize(lambda r: np.sum(r ** 2), signature="(n)->()")
    x = np.arange(6.0).reshape(2, 3)
    assert_allclose(dualad.jacfwd(rows)(x), np.stack([np.stack([2 * x[0], 0 * x[0]]),
                                                      np.stack([0 * x[1], 2 * x[1]])]))
    f = lambda x: np.sum(np.vectorize(piecewise_scalar)(x) ** 2)
    x = np.array([1.0, -2.0])
    for mode in ("hyperdual", "fwd-rev"):  # d²/dx² (x²+1)² = 12x² + 4; (−x)² = 2
        assert_allclose(dualad.hessian(f, mode=mode)(x), np.diag([16.0, 2.0]))


@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_frompyfunc_runs_its_function_on_each_element(transform):
    square_plus_one = np.frompyfunc(lambda a: a ** 2 + 1, 1, 1)
    assert_allclose(transform(square_plus_one)(np.array([1.0, 2.0])), np.diag([2.0, 4.0]))


def test_vectorize_and_literals_under_dualad_gpu():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    f = lambda y: van_der_pol(0.0, y)
    assert_allclose(dualad_gpu.jacfwd(f)(Y), dualad.jacfwd(f)(Y))
    assert_allclose(dualad_gpu.jacrev(f)(Y), dualad.jacfwd(f)(Y))
    x = np.array([1.0, -2.0])  # (a Python branch on a value cannot be traced: none here)
    smooth = np.vectorize(lambda a: a ** 2 + np.sin(a))
    assert_allclose(dualad_gpu.jacfwd(smooth)(x), np.diag(2 * x + np.cos(x)))


def test_casts_give_a_value_where_numpy_does_and_never_drop_a_tangent():
    x = dualad.Dual(np.array([2.5, -1.0]), np.ones(2))
    assert x.astype(np.float32).tangent.dtype == np.float32
    assert np.int64(x[0]) == 2 and int(x[0]) == 2  # integers: piecewise constant
    assert np.asarray(x, dtype=int).tolist() == [2, -1]
    assert np.bool_(x[0])
    for cast in (lambda: np.float64(x[0]), lambda: np.asarray(x, dtype=float),
                 lambda: float(x[0]), lambda: np.float32(x[1])):
        with pytest.raises(TypeError, match="drop"):
            cast()


@pytest.mark.parametrize("x, expected", [(1.0, [0.0, 0.0, 0.0]), (-1.0, [1.0, 1.0, 1.0])])
def test_an_output_of_constants_from_an_object_array_has_derivative_zero(x, expected):
    # np.min over an object array: where 0.5 wins, the output holds no Dual at all.
    def f(x):
        return np.min(np.array([[x, x, x], [x, 0.5, 0.5], [0.5, 0.5, 0.5], [x, x, 0.5]]),
                      axis=0)

    for transform in (dualad.jacfwd, dualad.jacrev):
        assert_allclose(transform(f)(x), expected)
    assert dualad.hessian(lambda x: np.sum(f(x)))(x) == 0.0
