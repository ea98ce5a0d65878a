"""Misuse gets a clear error, never a silently wrong derivative: values of finished
transforms, outputs that are not real floats, bad argnums, complex outputs,
conversions that would drop a derivative, pickling, and tapes that outlive their call."""

import gc
import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad
from dualad.primitive import EscapedDualError
from dualad.linear import Tape

FORWARD = {"jacfwd": dualad.jacfwd, "hessian": dualad.hessian}
REVERSE = {"grad": dualad.grad, "jacrev": dualad.jacrev}
ALL = {**FORWARD, **REVERSE,
       "hessian fwd-rev": lambda f: dualad.hessian(f, mode="fwd-rev"),
       "value_and_grad": dualad.value_and_grad}


# -- a value of a finished transform ----------------------------------------------


@pytest.mark.parametrize("name", list(ALL))
def test_a_dual_kept_from_an_earlier_call_raises(name):
    store = {}

    def f(x):
        if "kept" not in store:
            store["kept"] = x * 2.0
        return np.sum(x * store["kept"])

    transform = ALL[name](f)
    with pytest.raises(EscapedDualError, match="finished transform"):
        transform(np.ones(2))  # fwd-rev evaluates f twice: it raises here already
        transform(np.ones(2))


@pytest.mark.parametrize("name", list(ALL))
def test_a_dual_kept_from_an_earlier_call_is_never_returned(name):
    store = {}

    def f(x):
        store.setdefault("kept", np.sum(x * x))
        return store["kept"]

    transform = ALL[name](f)
    with pytest.raises(EscapedDualError):
        transform(np.ones(2))
        transform(np.ones(2))


def test_values_of_one_jacfwd_pass_do_not_leak_into_the_next():
    store = []

    def f(x):
        if not store:
            store.append(x * 1.0)
        return x * store[0]

    with pytest.raises(EscapedDualError):
        dualad.jacfwd(f, chunk_size=1)(np.ones(3))


def test_a_closure_over_a_dual_raises_when_called_later():
    with pytest.raises(TypeError, match="returned a function"):
        dualad.derivative(lambda x: (lambda: x))(1.0)
    closures = []
    dualad.grad(lambda x: closures.append(lambda: x * 2.0) or x)(1.0)
    with pytest.raises(EscapedDualError):
        closures[0]()


def test_has_aux_refuses_an_escaped_value():
    store = {}

    def f(x):
        store.setdefault("kept", x * 3.0)
        return np.sum(x), store["kept"]

    dualad.grad(f, has_aux=True)(np.ones(2))
    with pytest.raises(EscapedDualError):
        dualad.grad(f, has_aux=True)(np.ones(2))


def test_nested_transforms_still_pass_outer_duals_through():
    # d/dx [x · d/dy (x + y)] = 1: the inner result carries the outer perturbation.
    f = lambda x: x * dualad.derivative(lambda y: x + y)(2.0)
    assert dualad.derivative(f)(3.0) == 1.0
    g = lambda x: dualad.grad(lambda y: np.sum(x * y ** 2))(x)  # 2·x·y at y = x
    assert_allclose(dualad.jacrev(g)(np.array([1.0, 2.0])), np.diag([4.0, 8.0]))
    assert_allclose(dualad.jacfwd(g)(np.array([1.0, 2.0])), np.diag([4.0, 8.0]))


# -- outputs that are not real floating-point -------------------------------------


@pytest.mark.parametrize("output", ["hi", True, np.arange(3), 3, np.array([True])],
                         ids=["str", "bool", "int array", "int", "bool array"])
@pytest.mark.parametrize("name", ["grad", "value_and_grad"])
def test_grad_refuses_outputs_that_are_not_floats(name, output):
    with pytest.raises(TypeError, match=r"str|bool|int64|int"):
        ALL[name](lambda x: output)(1.0)


def test_integer_outputs_as_jax_takes_them_in_each_transform():
    """JAX's rules, checked against it: forward mode (jvp, jacfwd) gives an integer or
    boolean output a zero derivative; vjp takes it and ignores its cotangent; jacrev,
    grad, hessian and hvp refuse it, even beside float outputs."""
    f = lambda x: (np.sin(x), np.arange(3))
    jac = dualad.jacfwd(f)(1.0)
    assert_allclose(jac[0], np.cos(1.0))
    assert_array_equal(jac[1], np.zeros(3))
    _, pullback = dualad.vjp(f, 1.0)
    assert_allclose(pullback((1.0, np.ones(3)))[0], np.cos(1.0))
    x = np.array([1.0, 3.0, 2.0])
    for transform in (dualad.jacrev, dualad.grad, dualad.hessian):
        for g in (f, np.argmax, lambda x: x > 1):
            with pytest.raises(TypeError, match=r"requires a real floating-point output.*"
                                                r"jacfwd gives it a zero derivative"):
                transform(g)(x)
    with pytest.raises(TypeError, match="requires a real floating-point output"):
        dualad.hvp(np.argmax, (x,), (x,))
    assert_array_equal(dualad.jacfwd(np.argmax)(x), np.zeros(3))


def test_grad_of_none_names_it():
    with pytest.raises(TypeError, match="None"):
        dualad.grad(lambda x: None)(1.0)


@pytest.mark.parametrize("name", list(ALL))
def test_every_transform_refuses_a_string_output(name):
    with pytest.raises(TypeError, match="returned a str"):
        ALL[name](lambda x: "hi")(np.ones(2))


def test_forward_mode_gives_integer_outputs_a_zero_derivative_as_jax_does():
    assert_array_equal(dualad.jacfwd(lambda x: np.arange(3))(1.0), np.zeros(3))
    assert_array_equal(dualad.jvp(lambda x: x > 0, (1.0,), (1.0,))[1], 0.0)


@pytest.mark.parametrize("name", [name for name in ALL if name != "jacfwd"])
def test_a_complex_output_raises(name):
    # As in JAX: only jacfwd differentiates complex outputs of real inputs (see
    # test_complex.py, which also differentiates real functions with complex
    # intermediates in every transform).
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        ALL[name](lambda x: np.sum(x) + 1j)(np.ones(2))


# -- argnums ------------------------------------------------------------------------


TRANSFORMS_WITH_ARGNUMS = {
    "jacfwd": dualad.jacfwd, "jacrev": dualad.jacrev, "grad": dualad.grad,
    "value_and_grad": dualad.value_and_grad, "hessian": dualad.hessian,
}


@pytest.mark.parametrize("name", list(TRANSFORMS_WITH_ARGNUMS))
@pytest.mark.parametrize("argnums", ["x", 1.0, [0.5], (), True, None])
def test_argnums_of_the_wrong_type_say_what_is_allowed(name, argnums):
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of distinct ints"):
        TRANSFORMS_WITH_ARGNUMS[name](lambda x: x, argnums=argnums)


@pytest.mark.parametrize("name", list(TRANSFORMS_WITH_ARGNUMS))
def test_repeated_argnums_are_refused(name):
    with pytest.raises(ValueError, match="twice"):
        TRANSFORMS_WITH_ARGNUMS[name](lambda x, y: x * y, argnums=(0, 0))


@pytest.mark.parametrize("transform", [dualad.derivative, dualad.second_derivative])
def test_scalar_transforms_take_one_argnum(transform):
    with pytest.raises(TypeError, match="argnums must be an int"):
        transform(np.sin, argnums=(0,))


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        dualad.grad(lambda x: x, argnums=2)(1.0)


# -- Python lists and scalars beside Duals ------------------------------------------


A = np.array([[2.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.dot(x, [1.0, 2.0]), np.array([1.0, 2.0])),
    (lambda x: x @ [1.0, 2.0], np.array([1.0, 2.0])),
    (lambda x: [1.0, 2.0] @ x, np.array([1.0, 2.0])),
    (lambda x: np.sum(np.matmul([[1.0, 2.0]], x)), np.array([1.0, 2.0])),
    (lambda x: np.inner([1.0, 2.0], x), np.array([1.0, 2.0])),
    (lambda x: np.sum(x + [1, 2]), np.array([1.0, 1.0])),
    (lambda x: np.sum(np.linalg.solve([[2.0, 1.0], [1.0, 3.0]], x)),
     np.linalg.solve(A.T, np.ones(2))),
    (lambda x: np.sum(np.concatenate([x, [1.0, 2.0]]) ** 2), np.array([2.0, 2.0])),
    (lambda x: np.sum(np.where([True, False], x, [5.0, 6.0])), np.array([1.0, 0.0])),
], ids=["dot", "matmul op", "rmatmul op", "matmul", "inner", "add", "solve",
        "concatenate", "where"])
@pytest.mark.parametrize("transform", [dualad.grad, lambda f: dualad.jacfwd(f)])
def test_lists_beside_duals_are_arrays(f, expected, transform):
    assert_allclose(transform(f)(np.ones(2)), expected)


def test_a_list_argument_of_solve_for_the_matrix():
    jac = dualad.jacfwd(lambda a: np.linalg.solve(a, [1.0, 2.0]))(A)
    x = np.linalg.solve(A, [1.0, 2.0])
    # d(A⁻¹b)/dA_ij = -A⁻¹ e_i x_j
    expected = -np.einsum("ki,j->kij", np.linalg.inv(A), x)
    assert_allclose(jac, expected)


# -- conversions that would drop the derivative -------------------------------------


def test_storing_a_dual_in_a_float_array_made_elsewhere_says_what_to_do():
    made_elsewhere = np.zeros(2)

    def f(x):
        out = made_elsewhere
        out[0] = x[0]
        return out

    with pytest.raises(ValueError) as info:  # NumPy wraps the cause in its ValueError
        dualad.jacfwd(f)(np.ones(2))
    cause = info.value.__cause__
    assert isinstance(cause, TypeError) and "np.zeros_like(x)" in str(cause)

    def g(x):
        out = made_elsewhere
        out[:] = x
        return out

    with pytest.raises(TypeError, match=r"np.zeros_like\(x\): a float array made elsewhere "
                       "cannot hold a derivative"):
        dualad.jacfwd(g)(np.ones(2))


def test_a_library_function_that_converts_its_argument_is_named():
    import scipy.linalg
    import scipy.signal
    import scipy.special

    with pytest.raises(TypeError, match=r"^scipy.linalg.logm converts its argument"):
        dualad.jacfwd(scipy.linalg.logm)(2.0 * np.eye(2))
    with pytest.raises(TypeError, match=r"^scipy.signal.lfilter converts .*with np.asarray"):
        dualad.jacfwd(lambda x: scipy.signal.lfilter([1.0], [1.0, 0.5], x))(np.ones(3))
    # SciPy's own function, as bound by `from scipy.special import logsumexp` before
    # dualad was imported (dualad replaces it in scipy.special at import):
    from dualad.rules.scipy_functions import ORIGINALS

    original = ORIGINALS[scipy.special.logsumexp]
    with pytest.raises(TypeError, match=r"bound before `import dualad`"):
        dualad.grad(original)(np.ones(3))
    # The user's own np.asarray gives the Dual; NumPy's function held under another
    # name (from numpy import asarray) cannot, and raises without naming a library.
    assert_allclose(dualad.jacfwd(lambda x: np.asarray(x))(np.ones(3)), np.eye(3))
    from dualad.constructors import NUMPY

    with pytest.raises(TypeError, match=r"^Converting a dualad.Dual"):
        dualad.jacfwd(lambda x: NUMPY["asarray"](x))(np.ones(3))


def test_zeros_like_holds_derivatives():
    def f(x):
        out = np.zeros_like(x)
        out[0] = x[0] * x[1]
        out[1] = np.sin(x[1])
        return out

    assert_allclose(dualad.jacfwd(f)(np.array([2.0, 0.0])), [[0.0, 2.0], [0.0, 1.0]])
    assert_allclose(dualad.jacrev(f)(np.array([2.0, 0.0])), [[0.0, 2.0], [0.0, 1.0]])


def test_math_functions_point_to_numpy():
    with pytest.raises(TypeError, match=r"use the NumPy function instead \(np.sin"):
        dualad.grad(lambda x: math.sin(x))(1.0)


def test_a_dual_cannot_be_pickled():
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(dualad.Dual(np.ones(2), np.ones(2)))


# -- dtypes and memory -----------------------------------------------------------------


@pytest.mark.parametrize("f", [lambda x: np.sum(x ** 3), lambda x: np.sum(x ** 3.0),
                               lambda x: np.sum(np.exp(x) ** 2)])
def test_float32_gradients_stay_float32(f):
    x = np.array([1.0, 2.0], np.float32)
    assert dualad.grad(f)(x).dtype == np.float32
    assert dualad.jacrev(lambda y: f(y) * y)(x).dtype == np.float32
    assert dualad.jacfwd(f)(x).dtype == np.float32


def test_a_float64_constant_promotes_as_in_numpy_but_the_gradient_keeps_the_input_dtype():
    f = lambda x: np.sum(np.float64(2.0) * x ** 2)  # NumPy: a float64 result
    x = np.array([1.0, 2.0], np.float32)
    assert dualad.jacfwd(f)(x).dtype == np.float64
    assert dualad.grad(f)(x).dtype == np.float32  # as jax.grad: the input's dtype


def test_reverse_mode_leaves_no_reference_cycles():
    f = lambda x: np.sum(np.sin(x) * x[::-1] @ np.ones((4, 4)))
    x = np.ones(4)
    gc.collect()
    gc.disable()
    try:  # (only this test's tapes: one an earlier test in the process keeps is not ours)
        before = {id(o) for o in gc.get_objects() if isinstance(o, Tape)}
        for _ in range(3):
            dualad.grad(f)(x)
            dualad.jacrev(f)(x)
            _, pullback = dualad.vjp(f, x)
            pullback(1.0)
            del pullback
            dualad.hessian(f, mode="fwd-rev")(x)
        assert not [o for o in gc.get_objects() if isinstance(o, Tape) and id(o) not in before]
    finally:
        gc.enable()


def test_real_and_imag_of_the_seeded_arrays_are_numpys_in_second_order():
    f = lambda x: np.sum(x.real ** 3 + x.imag + np.real(x) * x.T.real)
    x = np.array([1.0, 2.0])
    expected = np.diag(6 * x + 2)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(f, mode=mode)(x), expected)
    assert dualad.second_derivative(lambda t: t.real ** 3)(2.0) == 12.0
    assert_allclose(dualad.hvp(f, (x,), (np.ones(2),), mode="hyperdual")[0], 6 * x + 2)


_f = lambda x: np.sin(x) * x  # noqa: E731
_g = lambda v: np.sum(v ** 3 * np.sin(v))  # noqa: E731
#: name -> (the transform, made with replay on or off; the point)
SCALAR_RESULTS = {
    "grad": (lambda r: dualad.grad(_f, replay=r), 2.0),
    "value_and_grad": (lambda r: lambda x: dualad.value_and_grad(_f, replay=r)(x)[1], 2.0),
    "derivative": (lambda r: dualad.derivative(_f, replay=r), 2.0),
    "derivative-2": (lambda r: dualad.derivative(_f, order=2, replay=r), 2.0),
    "second_derivative": (lambda r: dualad.second_derivative(_f, replay=r), 2.0),
    "jacfwd": (lambda r: dualad.jacfwd(_f, replay=r), 2.0),
    "jacrev": (lambda r: dualad.jacrev(_f, replay=r), 2.0),
    "hessian": (lambda r: dualad.hessian(_f, replay=r), 2.0),
    "jvp": (lambda r: lambda x: dualad.jvp(_f, (x,), (1.0,), replay=r)[1], 2.0),
    "vjp": (lambda r: lambda x: dualad.vjp(_f, x)[1](1.0)[0], 2.0),
    "hvp": (lambda r: lambda x: dualad.hvp(_f, (x,), (1.0,), replay=r)[0], 2.0),
    "jet": (lambda r: lambda x: dualad.jet(_f, (x,), ([1.0, 0.0],))[1][1], 2.0),
    "laplacian": (lambda r: dualad.laplacian(_g, replay=r), np.ones(2)),
    "laplacian-sparse": (lambda r: dualad.laplacian(_g, method="sparse", replay=r),
                         np.ones(3)),
    "hessian_trace": (lambda r: dualad.hessian_trace(_g, np.eye(2), replay=r), np.ones(2)),
    "divergence": (lambda r: dualad.divergence(lambda v: v ** 3 * np.cos(v), replay=r),
                   np.ones(2)),
    "grad-of-0d": (lambda r: dualad.grad(_g, replay=r), np.array(1.5)),
}


@pytest.mark.parametrize("name", list(SCALAR_RESULTS))
def test_every_derivative_of_a_scalar_is_a_0d_array_replayed_or_not(name):
    """JAX's rule: a derivative is an array, ``array(5.5)``, never ``np.float64(5.5)``;
    the replayed calls hand out the interpreter's types bit for bit."""
    make, x = SCALAR_RESULTS[name]
    expected = make(False)(x)
    assert type(expected) is np.ndarray and expected.shape == ()
    replayed = make(True)
    for _ in range(40):
        got = replayed(x)
        assert type(got) is np.ndarray and got.shape == () and got.tobytes() == expected.tobytes()
