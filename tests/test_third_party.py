"""Third-party NumPy code as it is written (issue: "third-party NumPy code, unchanged"):
``np.asarray``/``np.array`` on the input and array literals of Duals fed to NumPy's
internals, in every mode, with the replay on and off; NumPy's own constructors
outside a transform."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg
from numpy import isscalar, zeros  # bound by name, as filterpy and pvlib do
from numpy.testing import assert_allclose

import dualad
from dualad.constructors import NUMPY
from dualad.primitive import EscapedDualError
from test_replay_state import TRANSFORMS, X, run_like_the_interpreter


def _inverse_literal(x):
    m = np.array([[x[0], 0.1, 0.0], [0.1, x[1], 0.0], [0.0, 0.0, x[2]]])
    return np.linalg.inv(m) @ x


def _inverse_stacked(x):
    z = np.zeros_like(x[0])
    m = np.stack([np.stack([x[0], z + 0.1, z]), np.stack([z + 0.1, x[1], z]),
                  np.stack([z, z, x[2]])])
    return np.linalg.inv(m) @ x


def _copied_then_written(x):
    v = np.array(x)  # a copy: writing into it leaves x as it was
    v[0] = 5.0
    return v * x


def _rhs_filled(x):
    dy = np.zeros(3)  # an ODE right-hand side's first line
    dy[0] = x[1]
    dy[1] = -np.sin(x[0]) * x[2]
    dy[2] += 2.0 * x[0]  # an element updated in place
    return dy


def _rows_of_a_matrix(x):
    m = np.empty((2, 3))
    m[0] = x
    row = m[1]  # a view: writes reach m
    row[1:] = x[:2] * 2.0
    row[:1] = 3.0
    return m.ravel()


def _masked_in_place(x):
    fx = np.zeros(3)  # opfunu's CEC functions
    mask = np.array([True, False, True])
    fx[mask] -= x[mask] ** 2
    fx[~mask] += np.sin(x[~mask])
    return fx


def _ones_scaled(x):
    w = np.ones(3)
    w *= x
    w += np.full(3, 2.0)
    return w


def _full_of_a_dual(x):
    a = np.full(3, x[0])
    b = np.zeros_like(np.arange(3.0))
    b[2] = x[2]
    return a * b + a


def _eye_solved(x):
    a = np.eye(3)
    a[0, 1] = x[0]
    a[2, 2] = 2.0 + x[1] ** 2
    return np.linalg.solve(a, x)


def _eye_solved_twin(x):
    one, zero = np.ones_like(x[0]), np.zeros_like(x[0])
    a = np.stack([np.stack([one, x[0], zero]), np.stack([zero, one, zero]),
                  np.stack([zero, zero, 2.0 + x[1] ** 2])])
    return np.linalg.solve(a, x)


def _sigma_points(x):
    sigmas = np.zeros((3, 3))  # filterpy's sigma points
    sigmas[0] = x
    for k in range(2):
        sigmas[k + 1] = x + (k + 1.0) * x[k]
    return sigmas.sum(axis=0)


def _zeros_bound_by_name(x):
    q = zeros((3, 3))  # filterpy: from numpy import zeros
    q[0, :] = x
    q[1:, 1:] = np.outer(x[1:], x[:2])
    return q.sum(axis=0)


def _scalar_made_an_array(x):
    w = x[0]
    if np.isscalar(w) and isscalar(w):  # pvlib's _calc_taud: np.array([w]) of a scalar
        w = np.array([w])
    return np.concatenate([w, x])  # (a 0-d array cannot be concatenated)


def _van_loan(x):
    a = zeros((4, 4))  # filterpy's van_loan_discretization: filled, then into SciPy
    a[:2, :2] = -np.array([[0.0, 1.0], [-1.0, 0.0]]) * x[0]
    a[:2, 2:] = np.eye(2) * x[1]
    return scipy.linalg.expm(a)[:2].ravel() * x[2]


def _van_loan_twin(x):
    a = np.zeros((4, 4))
    a = a + np.kron(np.array([[1.0, 0.0], [0.0, 0.0]]),
                    -np.array([[0.0, 1.0], [-1.0, 0.0]])) * x[0]
    a = a + np.kron(np.array([[0.0, 1.0], [0.0, 0.0]]), np.eye(2)) * x[1]
    return scipy.linalg.expm(a)[:2].ravel() * x[2]


def _promoted_if_an_array(x):
    if isinstance(x, np.ndarray) and x.ndim == 1:  # pymoo's Problem.evaluate
        x = np.atleast_2d(x)
    out = np.zeros(x.shape)
    if isinstance(out, np.ndarray) and not isinstance(x[0, 0], np.ndarray):
        out[:] = x * np.sin(x)
    return np.sum(out, axis=1)


P = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, -1.0, 1.5]])


def _objects_filled(x):
    m = np.empty((2, 2), dtype=object)  # filled with Duals and numbers, then solved
    m[0, 0], m[0, 1], m[1, 0], m[1, 1] = x[0], 0.5, 0.5 * x[2], x[1]
    return np.linalg.solve(m, x[:2]) + np.linalg.det(m)


def _objects_filled_twin(x):
    m = np.stack([np.stack([x[0], 0.5 + 0 * x[0]]), np.stack([0.5 * x[2], x[1]])])
    return np.linalg.solve(m, x[:2]) + np.linalg.det(m)


def _objects_written_in_place(x):
    m = np.empty((2, 2), dtype=object)
    m[0, 0], m[0, 1], m[1, 0], m[1, 1] = x[0], 0.5, 0.5 * x[2], x[1]
    np.multiply(m, 3.0, out=m)  # in place: m itself holds the products
    return np.linalg.solve(m / 3.0, x[:2]) * 3.0 + np.linalg.det(m) / 3.0


#: Library idioms, each with the same function written with Dual-friendly calls.
_BARS = ((0, 1), (1, 2), (0, 2))


def _assembled(x):  # a finite-element matrix, one bar at a time (scatter-add)
    K = np.zeros((3, 3))
    for e, (i, j) in enumerate(_BARS):
        np.add.at(K, (np.array([i, i, j, j]), np.array([i, j, i, j])),
                  x[e] * np.array([1.0, -1.0, -1.0, 1.0]))
    np.subtract.at(K, ([0, 0], [0, 0]), x[1] ** 2)  # (a repeated index: twice)
    return K @ np.ones(3) + np.diag(K) * x


def _assembled_twin(x):
    E = np.eye(3)
    K = sum(x[e] * np.outer(E[i] - E[j], E[i] - E[j]) for e, (i, j) in enumerate(_BARS))
    K = K - 2 * x[1] ** 2 * np.outer(E[0], E[0])
    return K @ np.ones(3) + np.diag(K) * x


IDIOMS = {
    "asarray dtype=float": (lambda x: np.asarray(x, dtype=float) ** 2 + x,
                            lambda x: x ** 2 + x),
    "array(x).ravel()": (lambda x: np.array(x).ravel() * 3.0 + np.sin(x),
                         lambda x: x * 3.0 + np.sin(x)),
    "atleast_1d(asarray)": (lambda x: np.atleast_1d(np.asarray(x)) * x, lambda x: x * x),
    "asanyarray, ascontiguousarray, asfortranarray": (
        lambda x: np.ascontiguousarray(x) + np.asanyarray(x) ** 2 - np.asfortranarray(x, float),
        lambda x: x + x ** 2 - x),
    "matrix literal into np.linalg.inv": (_inverse_literal, _inverse_stacked),
    "floats and Duals in a list into np.sqrt": (
        lambda x: np.sqrt(np.asarray([2.0, x[0] ** 2] + list(x[1:] ** 2))),
        lambda x: np.sqrt(np.concatenate([np.full(1, 2.0), x ** 2]))),
    "np.array copies": (_copied_then_written,
                        lambda x: np.concatenate([np.full(1, 5.0), x[1:]]) * x),
    "ndmin": (lambda x: np.array(x, ndmin=2)[0] * x, lambda x: x * x),
    "an object array of Duals to floats": (
        lambda x: np.asarray(np.array([x[0], 2.0 * x[1], x[2]], dtype=object), dtype=float),
        lambda x: x * np.array([1.0, 2.0, 1.0])),
    "rows of a Dual and numbers": (
        lambda x: np.array([x, [1.0, 2.0, 3.0]]).T @ np.array([1.0, -1.0]),
        lambda x: x - np.array([1.0, 2.0, 3.0])),
    "np.zeros filled element by element": (
        _rhs_filled, lambda x: np.stack([x[1], -np.sin(x[0]) * x[2], 2.0 * x[0]])),
    "np.empty written through a row's view": (
        _rows_of_a_matrix, lambda x: np.concatenate([x, np.full(1, 3.0), x[:2] * 2.0])),
    "masked in-place updates of np.zeros": (
        _masked_in_place, lambda x: np.where([True, False, True], -x ** 2, np.sin(x))),
    "in-place operators on np.ones": (_ones_scaled, lambda x: x + 2.0),
    "np.full of a Dual, zeros_like of a plain array": (
        _full_of_a_dual, lambda x: x[0] * np.array([0.0, 0.0, 1.0]) * x[2] + x[0]),
    "np.eye written into, solved": (_eye_solved, _eye_solved_twin),
    "rows of np.zeros((3, 3)), summed": (
        _sigma_points, lambda x: 3.0 * x + x[0] + 2.0 * x[1]),
    "np.zeros imported by name, filled": (
        _zeros_bound_by_name,
        lambda x: x + np.concatenate([np.zeros(1), (x[1] + x[2]) * x[:2]])),
    "a filled array into scipy.linalg.expm": (_van_loan, _van_loan_twin),
    "np.atleast_2d of a list of Duals": (
        lambda x: np.atleast_2d([x[0] * x, np.sin(x)]).sum(axis=0),
        lambda x: x[0] * x + np.sin(x)),
    "np.isscalar of an element": (_scalar_made_an_array,
                                  lambda x: np.concatenate([x[:1], x])),
    "isinstance(x, np.ndarray) of the input and of np.zeros": (
        _promoted_if_an_array, lambda x: np.sum(x * np.sin(x), keepdims=True)),
    "a plain array's a.dot(x)": (  # filterpy's multivariate_multiply
        lambda x: P.dot(x) + P.T.dot(np.outer(x, x)).sum(axis=1),
        lambda x: P @ x + (P.T @ np.outer(x, x)).sum(axis=1)),
    "an object array literal into np.linalg.inv": (
        lambda x: _inverse_literal(x).sum() * np.linalg.inv(np.array(
            [[x[0], 0.1], [0.1, x[1]]], dtype=object)).ravel()[:3],
        lambda x: _inverse_stacked(x).sum() * np.linalg.inv(np.stack(
            [np.stack([x[0], 0.1 + 0 * x[0]]), np.stack([0.1 + 0 * x[0], x[1]])])).ravel()[:3]),
    "np.empty(dtype=object) filled, into np.linalg": (_objects_filled, _objects_filled_twin),
    "an object array written in place by a ufunc's out=": (
        _objects_written_in_place, lambda x: _objects_filled_twin(x) * 3.0),
    "np.vectorize's result into np.linalg.solve": (
        lambda x: np.linalg.solve(np.vectorize(lambda a: a * a + 1.0)(np.outer(x[:2], x[1:])),
                                  x[:2]),
        lambda x: np.linalg.solve(np.outer(x[:2], x[1:]) ** 2 + 1.0, x[:2])),
    "a list of Duals into np.fft": (
        lambda x: np.real(np.fft.fft([x[0], x[1] * x[2], 2.0])) + np.fft.irfft(
            np.fft.rfft([x[2], np.sin(x[0])], n=3), n=3, norm="ortho"),
        lambda x: np.real(np.fft.fft(np.stack([x[0], x[1] * x[2], 2.0 + 0 * x[0]])))
        + np.fft.irfft(np.fft.rfft(np.stack([x[2], np.sin(x[0])]), n=3), n=3, norm="ortho")),
    "lists of Duals into np.clip and np.max at a tie": (  # (half each, as for arrays)
        lambda x: np.clip([x[0], x[1] * x[2], x[2]], dualad.primal_value(x[0]), 1.5)
        + np.cumsum([x[1], x[0]]).sum() + np.max([x[1], 1.0 * x[1]], axis=0) + np.ptp(
            [x[2], x[2] * 1.0, x[2] ** 2]) * np.min([[x[0], 1.0 * x[0]]], axis=1),
        lambda x: np.clip(np.stack([x[0], x[1] * x[2], x[2]]), dualad.primal_value(x[0]), 1.5)
        + np.cumsum(np.stack([x[1], x[0]])).sum() + np.max(np.stack([x[1], 1.0 * x[1]]), axis=0)
        + np.ptp(np.stack([x[2], x[2] * 1.0, x[2] ** 2])) * np.min(
            np.stack([np.stack([x[0], 1.0 * x[0]])]), axis=1)),
    "np.add.at assembling a matrix": (_assembled, _assembled_twin),
    "a ufunc into out= with where=": (
        lambda x: np.log(x ** 2, out=np.full_like(x, -9.0), where=x > 0)
        + np.multiply(x, 2.0, out=np.zeros(3)),
        lambda x: np.where(x > 0, np.log(x ** 2), -9.0) + x * 2.0),
}


@pytest.mark.parametrize("name", list(IDIOMS))
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_an_idiom_gives_the_derivative_of_its_dual_friendly_twin(name, transform):
    idiom, twin = IDIOMS[name]
    make = TRANSFORMS[transform]
    for k in range(3):
        x = X * (1 + 0.1 * k)
        want = make(twin, False)(x)
        # (rounding of the other summation order: an entry that cancels terms of size ~10)
        scale = max(1.0, float(np.max(np.abs(want))))
        assert_allclose(make(idiom, False)(x), want, rtol=1e-14, atol=1e-15 * scale)


#: Idioms calling SciPy's linear algebra, whose calls keep the interpreter.
INTERPRETED = {"a filled array into scipy.linalg.expm"}


@pytest.mark.parametrize("name", list(IDIOMS))
def test_an_idiom_replays_bit_for_bit(name):
    run_like_the_interpreter(IDIOMS[name][0], lambda k: None,
                             args=lambda k: (X * (1 + 0.05 * k),), calls=12, every=1,
                             engaged=name not in INTERPRETED)


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_second_order_through_the_idioms(mode):
    f = lambda x: np.sum(_inverse_literal(np.asarray(x, dtype=float)) ** 2)  # noqa: E731
    g = lambda x: np.sum(_inverse_stacked(x) ** 2)  # noqa: E731
    assert_allclose(dualad.hessian(f, mode=mode)(X), dualad.hessian(g, mode=mode)(X),
                    rtol=1e-13)


def test_the_caller_s_array_is_never_written():
    x = X.copy()
    dualad.jacfwd(_copied_then_written)(x)
    dualad.jacrev(lambda x: np.asarray(x))(x)
    np.testing.assert_array_equal(x, X)


def test_numpy_s_constructors_outside_a_transform():
    seen = {}

    def f(x):
        seen["inside"] = np.asarray is not NUMPY["asarray"] and zeros is not NUMPY["zeros"]
        return np.asarray(x) * 2.0

    def numpy_s_after_a_call():
        """NumPy's own again after one constructor call, at no cost from then on, in
        numpy and in this module, which holds two of them by name."""
        assert type(np.asarray([1.0])) is np.ndarray
        return all(getattr(np, name) is NUMPY[name] for name in NUMPY) \
            and zeros is NUMPY["zeros"] and isscalar is NUMPY["isscalar"]

    # (whichever test ran last in this process, its transform's wrappers go at one call)
    assert numpy_s_after_a_call()
    dualad.jacfwd(lambda x: f(x) + zeros(3) * isscalar(1.0))(X)
    assert seen["inside"] and numpy_s_after_a_call()
    with pytest.raises(ZeroDivisionError):
        dualad.grad(lambda x: 1 / 0)(X)
    assert numpy_s_after_a_call()


def test_plain_values_inside_a_transform_are_numpy_s():
    """Inside a transform, and in another thread meanwhile, a value that holds no
    Dual gets NumPy's own answer: the same object, type, dtype and copy rules."""
    plain = np.arange(3.0)
    found = []

    def other_thread():
        found.append((np.asarray(plain) is plain, np.array(plain) is not plain,
                      type(np.asarray([1, 2])), np.asarray([1, 2]).dtype))

    def f(x):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        found.append((np.asarray(plain) is plain, np.array(plain) is not plain,
                      type(np.asarray([1, 2])), np.asarray([1, 2]).dtype))
        return x * np.asarray(plain, dtype=np.float32)

    dualad.jacfwd(f)(X)
    assert found == [(True, True, np.ndarray, np.asarray([1, 2]).dtype)] * 2


def test_nested_transforms_keep_their_perturbations_apart():
    # d/dx [x · d/dy (x + y)] = 1, through np.asarray at both levels
    inner = lambda x, y: np.asarray(x) + np.asarray(y)  # noqa: E731
    outer = lambda x: np.asarray(x) * dualad.derivative(inner, argnums=1)(x, 2.0)  # noqa: E731
    assert dualad.derivative(outer)(3.0) == 1.0


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "jvp", "grad", "hessian"])
def test_an_integer_view_is_piecewise_constant(transform):
    idiom = lambda x: x * np.asarray(x * 3, dtype=int)  # noqa: E731
    twin = lambda x: x * np.trunc(dualad.primal_value(x * 3))  # noqa: E731
    make = TRANSFORMS[transform]
    assert_allclose(make(idiom, False)(X), make(twin, False)(X), rtol=1e-15)
    run_like_the_interpreter(idiom, lambda k: None, args=lambda k: (X * (1 + 0.05 * k),),
                             transforms={transform: make}, every=1)


def test_dtypes_follow_numpy():
    x32 = X.astype(np.float32)
    assert dualad.jacfwd(lambda x: np.asarray(x))(x32).dtype == np.float32
    assert dualad.jacfwd(lambda x: np.asarray(x, dtype=np.float64))(x32).dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        dualad.jacfwd(lambda x: np.asarray(x, dtype=np.float64, copy=False))(x32)


def test_dualad_gpu_takes_the_idioms():
    pytest.importorskip("jax")
    import dualad_gpu

    for name, (idiom, twin) in IDIOMS.items():
        assert_allclose(np.asarray(dualad_gpu.jacfwd(idiom)(X)), dualad.jacfwd(twin)(X),
                        rtol=1e-14, atol=1e-15, err_msg=name)
        assert_allclose(np.asarray(dualad_gpu.grad(lambda x: np.sum(idiom(x) ** 2))(X)),
                        dualad.grad(lambda x: np.sum(twin(x) ** 2))(X), rtol=1e-13,
                        err_msg=name)


def test_a_comparison_into_a_plain_array_keeps_no_derivative():
    def masked(x):
        mask = np.zeros(x.shape, bool)
        np.greater_equal(x, 0.5, out=mask)
        np.logical_or(mask, np.isnan(x), out=mask)
        return x * mask + np.sin(x)

    twin = lambda x: x * (dualad.primal_value(x) >= 0.5) + np.sin(x)  # noqa: E731
    for name, make in TRANSFORMS.items():
        assert_allclose(make(masked, False)(X), make(twin, False)(X), rtol=1e-15, err_msg=name)
    # The recording refuses a write into an array it does not hold: interpreted calls.
    run_like_the_interpreter(masked, lambda k: None, args=lambda k: (X * (1 + 0.5 * k),),
                             engaged=False, every=1)


def test_arithmetic_into_a_plain_array_made_outside_still_raises():
    made_outside = np.zeros(3)
    with pytest.raises(TypeError, match=r"numpy.add\(..., out=...\)"):
        dualad.grad(lambda x: np.sum(np.add(x, 1.0, out=made_outside)))(X)
    with pytest.raises((TypeError, ValueError)):  # NumPy's own ValueError for a 0-d Dual
        dualad.grad(lambda x: np.sum(made_outside.__setitem__(0, x[0])))(X)
    with pytest.raises(TypeError, match="np.zeros_like"):
        dualad.grad(lambda x: np.sum(made_outside.__setitem__(slice(2), x[:2])))(X)
    np.testing.assert_array_equal(made_outside, 0.0)


def test_a_complex_literal_times_a_scalar_dual():
    """lmfit's voigt: ``(x - center + 1j*gamma) / (sigma*s2)`` in its parameters, where
    Python's complex took NumPy's float64 primal for a float."""
    def voigt_like(p):
        z = (X - p[0] + 1j * p[1]) / (p[2] * np.sqrt(2.0))
        return np.concatenate([np.real(z * z), np.imag(1j / z)])

    p = np.array([0.3, 0.8, 1.1])
    h = 1e-6
    fd = np.stack([(voigt_like(p + h * e) - voigt_like(p - h * e)) / (2 * h)
                   for e in np.eye(3)], axis=1)
    assert_allclose(dualad.jacfwd(voigt_like)(p), fd, rtol=1e-7, atol=1e-8)
    run_like_the_interpreter(voigt_like, lambda k: None, args=lambda k: (p * (1 + 0.1 * k),),
                             every=1)


def test_a_fillable_is_numpy_s_array_until_a_dual_is_written():
    seen = {}

    def f(x):
        a = np.zeros(3)
        a[0] = 1.0
        b = np.asarray(a)  # the array itself, as NumPy's asarray gives it
        b[1] = 5.0
        seen["plain"] = (a[1], type(a + 1.0), type(a[1:] * 2.0), a.shape, a.dtype, len(a))
        return x * a

    assert_allclose(dualad.jacfwd(f)(X), np.diag([1.0, 5.0, 0.0]))
    assert seen["plain"] == (5.0, np.ndarray, np.ndarray, (3,), np.float64, 3)
    out = dualad.jacfwd(lambda x: np.zeros(3))(X)  # never written: no derivative
    assert type(out) is np.ndarray and not out.any()
    primal, tangent = dualad.jvp(lambda x: np.ones(2), (X,), (X,))
    assert type(primal) is np.ndarray and type(tangent) is np.ndarray


def test_threads_and_libraries_get_numpy_s_arrays():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    found = []

    def other_thread():
        found.append(type(np.zeros(2)))

    def f(x):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        found.append(type(scipy_linalg.block_diag(np.eye(2))))  # SciPy's own np.zeros
        found.append(type(np.zeros(2, dtype=int)))
        # C code calling np.empty (NumPy's random generators, Cython) takes its result
        # for an ndarray unchecked: it gets one
        found.append(type(np.random.default_rng(0).standard_normal(2)))
        make = np.zeros  # a call that does not name the maker: NumPy's array
        found.append(type(make(2)))
        return x

    dualad.jacfwd(f)(X)
    assert found == [np.ndarray] * 5


def test_a_dual_is_an_ndarray_only_to_the_code_a_transform_runs():
    """isinstance(x, np.ndarray) is True in the transformed code (of a Dual standing
    for an array, not for x[0]); NumPy's and SciPy's code, other threads and code
    outside any transform see the Dual it is."""
    library = {"__name__": "scipy._a_module", "np": np}
    exec(compile("def is_array(x): return isinstance(x, np.ndarray)",
                 "/site-packages/scipy/_a_module.py", "exec"), library)
    found = []

    def other_thread(x):
        found.append(("thread", isinstance(x, np.ndarray)))

    def f(x):
        found.append(("user", isinstance(x, np.ndarray), isinstance(x[0], np.ndarray),
                      type(x) is np.ndarray))
        found.append(("scipy", library["is_array"](x)))
        worker = threading.Thread(target=other_thread, args=(x,))
        worker.start()
        worker.join()
        kept.append(x)
        return x

    kept: list = []
    for transform in (dualad.jacfwd, dualad.jacrev, dualad.hessian):
        dualad.jacfwd(f)(X) if transform is dualad.jacfwd else transform(
            lambda x: np.sum(f(x)))(X)
        assert found == [("user", True, False, False), ("scipy", False), ("thread", False)]
        assert not isinstance(kept.pop(), np.ndarray)  # after the transform
        found.clear()


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_numpy_s_writing_functions_write_into_an_object_array_of_duals(transform):
    def f(x):
        m = np.array([[x[0], 0.5], [0.5, x[1]]], dtype=object)
        np.fill_diagonal(m, [2.0 * x[0], x[1] * x[1]])
        np.copyto(m[1:], np.array([[0.25, x[1] * x[1]]], dtype=object))
        return np.linalg.det(m) + 0 * x[0]  # 2·x0·x1² − 0.125

    x = X[:2]
    exact = {"jacfwd": [2 * x[1] ** 2, 4 * x[0] * x[1]],
             "jacrev": [2 * x[1] ** 2, 4 * x[0] * x[1]],
             "hessian": [[0.0, 4 * x[1]], [4 * x[1], 4 * x[0]]]}[transform]
    assert_allclose(getattr(dualad, transform)(f)(x), exact, rtol=1e-13)


@pytest.mark.parametrize("linalg", [np.linalg.inv, np.linalg.det, np.linalg.eigvalsh,
                                    lambda m: np.linalg.solve(m, np.ones(2))],
                         ids=["inv", "det", "eigvalsh", "solve"])
def test_numpy_linalg_of_a_list_of_duals_says_what_to_do(linalg):
    """numpy.linalg converts a list itself (no protocol sees the Duals in it): dualad's
    message, not NumPy's dtype('O') error."""
    with pytest.raises(TypeError, match=r"numpy\.linalg\.\w+ was given a list .* np\.stack"):
        dualad.grad(lambda x: np.sum(linalg([[x[0], 0.1], [0.1, x[1]]])))(X[:2])
    assert_allclose(np.linalg.det([[1.0, 2.0], [3.0, 4.0]]), -2.0)  # plain lists: NumPy's


def test_an_array_kept_from_a_call_is_never_silently_wrong():
    kept = []

    def f(x):
        out = np.zeros(3)
        out[0] = x[0] * 2.0
        kept.append(out)
        return out

    for transform in (dualad.jacfwd(f), dualad.jacrev(f), dualad.jacfwd(f, replay=False)):
        for _ in range(10):
            assert_allclose(transform(X)[0], [2.0, 0.0, 0.0])
        for out in (kept[0], kept[-1]):
            with pytest.raises(EscapedDualError):
                out + 1.0
        kept.clear()


def test_an_inner_transform_s_dual_written_after_an_outer_one():
    def g(x, p):
        out = np.zeros(2)
        out[0] = p[0] * 3.0  # of the outer transform only
        out[1] = x[0] * p[0]
        return out

    inner = lambda p: dualad.jacfwd(lambda x: g(x, p))(np.array([2.0]))  # noqa: E731
    assert_allclose(dualad.jacfwd(inner)(np.array([1.5])), [[[0.0]], [[1.0]]])
    assert_allclose(dualad.jacfwd(lambda p: g(np.array([2.0]), p))(np.array([1.5])),
                    [[3.0], [2.0]])


def test_fillable_dtypes_follow_numpy():
    x32 = X.astype(np.float32)

    def into(dtype):
        def f(x):
            out = np.zeros(3, dtype)
            out[:] = x
            return out
        return f

    assert dualad.jacfwd(into(np.float32))(X).dtype == np.float32
    assert dualad.jacfwd(into(np.float64))(x32).dtype == np.float64
    assert_allclose(dualad.jacfwd(into(np.float32))(X), np.eye(3))
    assert not dualad.jacfwd(into(int))(X).any()  # an int array: piecewise constant


def test_a_one_element_point_of_a_bivariate_normal_broadcasts_as_scipy_s():
    """filterpy's InformationFilter: ``logpdf`` of a point of one element against a
    mean of two, which SciPy reads as the row ``x[None, :]`` and broadcasts."""
    from scipy.stats import multivariate_normal

    mean, cov = np.array([0.5, 1.5]), np.array([[2.0, 0.3], [0.3, 1.0]])
    f = lambda x: multivariate_normal.logpdf(x[:1], mean, cov)  # noqa: E731
    h = 1e-6
    fd = [(f(X + h * e) - f(X - h * e)) / (2 * h) for e in np.eye(3)]
    assert_allclose(dualad.grad(f)(X), fd, rtol=1e-7, atol=1e-9)
    assert_allclose(dualad.primal_value(f(X)), multivariate_normal.logpdf(X[:1], mean, cov))
