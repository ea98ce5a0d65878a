"""dualad_gpu on functions that call SciPy's solvers: the solver needs NumPy values, so
the transform runs dualad's NumPy transform on the host (with a warning) and gives the
same derivatives as JAX arrays, in every mode."""

import warnings

import numpy as np
import optree
import pytest
from numpy.testing import assert_array_equal

jax = pytest.importorskip("jax")
si = pytest.importorskip("scipy.integrate")
so = pytest.importorskip("scipy.optimize")
import dualad  # noqa: E402
import dualad_gpu  # noqa: E402
from specs import SCIPY_OPTIMIZE as ROWS  # noqa: E402

P = np.array([2.0, 0.5])


def _line(x, a, b):
    return a * x + b


XS = np.linspace(0.0, 1.0, 6)

#: The issue's reproducers and one of each other family, as vector functions of p.
SOLVES = {
    "solve_ivp": lambda p: si.solve_ivp(lambda t, y: -p[0] * y + p[1], (0, 1), [1.0],
                                        rtol=1e-10, atol=1e-12).y[:, -1],
    "solve_ivp dense, events": lambda p: np.concatenate([
        (s := si.solve_ivp(lambda t, y: -p[0] * y, (0, 2), [1.0], dense_output=True,
                           events=lambda t, y: y[0] - 0.5, rtol=1e-10)).sol(0.7),
        s.t_events[0]]),
    "quad": lambda p: np.array([si.quad(lambda x: np.exp(-p[0] * x) * p[1], 0, 1)[0]]),
    "root": lambda p: so.root(lambda x: x ** 3 + x - p, [1.0, 1.0], tol=1e-13).x,
    "brentq": lambda p: np.array([so.brentq(lambda x: x ** 3 - p[0] * p[1], 0, 5,
                                            xtol=1e-14)]),
    "minimize": lambda p: so.minimize(lambda x: np.sum((x - p) ** 2 + x ** 4),
                                      np.zeros(2), method="BFGS", tol=1e-12).x,
    "least_squares": lambda p: so.least_squares(lambda c: c[0] * XS + c[1] - p[0] * XS ** 2,
                                                np.zeros(2), xtol=1e-14).x,
    "curve_fit": lambda p: so.curve_fit(_line, XS, p[0] * XS + p[1] * XS ** 2)[0],
}


def _host_warning():
    return pytest.warns(RuntimeWarning, match="on the host instead of jax.jit")


@pytest.mark.parametrize("name", sorted(SOLVES))
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_each_solver_in_each_mode_gives_dualads_numbers(name, transform):
    f = SOLVES[name]
    fun = (lambda p: np.sum(f(p) ** 2)) if transform == "hessian" else f
    want = getattr(dualad, transform)(fun)(P)
    with _host_warning():
        got = getattr(dualad_gpu, transform)(fun)(P)
    assert isinstance(got, jax.Array) and got.dtype == np.float64
    assert_array_equal(np.asarray(got), want)


def test_the_other_transforms_and_the_calls_after_the_first():
    f = SOLVES["root"]
    loss = lambda p: np.sum(f(p) ** 3)  # noqa: E731
    v = np.array([1.0, -2.0])
    with _host_warning():
        g = dualad_gpu.grad(loss)
        first = g(P)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the entry remembers: no trace, no warning
        assert_array_equal(np.asarray(g(P)), dualad.grad(loss)(P))
        assert_array_equal(np.asarray(first), dualad.grad(loss)(P))
    with _host_warning():
        value, gradient = dualad_gpu.value_and_grad(loss)(P)
    assert_array_equal(np.asarray(gradient), dualad.grad(loss)(P))
    assert float(value) == loss(P)
    with _host_warning():
        out, tangent = dualad_gpu.jvp(f, (P,), (v,))
    assert_array_equal(np.asarray(tangent), dualad.jvp(f, (P,), (v,))[1])
    with _host_warning():
        hv = dualad_gpu.hvp(loss, (P,), (v,))
    assert_array_equal(np.asarray(hv), dualad.hvp(loss, (P,), (v,)))
    with _host_warning():
        out, pull = dualad_gpu.vjp(f, P)
    with _host_warning():
        pulled = pull(v)
    assert_array_equal(np.asarray(optree.tree_leaves(pulled)[0]),
                       optree.tree_leaves(dualad.vjp(f, P)[1](v))[0])


def test_nested_transforms_run_on_the_host_from_the_outermost():
    loss = lambda p: np.sum(SOLVES["minimize"](p) ** 3)  # noqa: E731
    with _host_warning():
        got = dualad_gpu.jacfwd(dualad_gpu.grad(loss))(P)
    assert_array_equal(np.asarray(got), dualad.jacfwd(dualad.grad(loss))(P))


def test_dtypes_as_dualads():
    def f(p):  # float32 through np.sin, float64 out of SciPy's solver
        return np.sin(p), si.quad(lambda x: np.exp(-p[0] * x), 0, 1)[0]

    want = dualad.jacfwd(f)(P.astype(np.float32))
    with _host_warning():
        got = dualad_gpu.jacfwd(f)(P.astype(np.float32))
    assert [g.dtype for g in got] == [w.dtype for w in want] == [np.float32, np.float64]
    for g, w in zip(got, want):
        assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.id)
def test_every_solver_spec_row_under_dualad_gpu(spec):
    args = spec.draw(np.random.default_rng(0), spec.shapes[0])
    every = tuple(range(len(args)))
    want = dualad.jacfwd(spec.fun, argnums=every)(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (rows on JAX kernels say nothing)
        got = dualad_gpu.jacfwd(spec.fun, argnums=every)(*args)
    for a, b in zip(optree.tree_leaves(want), optree.tree_leaves(got)):
        np.testing.assert_allclose(np.asarray(b), a, rtol=1e-12, atol=1e-14, err_msg=spec.id)


def test_sparse_transforms_too():
    def cube_roots(x):  # one root per component: a diagonal Jacobian and Hessian
        return so.root(lambda z: z ** 3 + z - x, np.ones_like(x), tol=1e-13).x

    x = np.array([2.0, 10.0, 30.0])
    with _host_warning():
        got = dualad_gpu.sparse_jacobian(cube_roots, output="scipy")(x)
    assert_array_equal(got.toarray(), dualad.sparse_jacobian(cube_roots)(x).toarray())
    assert_array_equal(got.toarray(), dualad.jacfwd(cube_roots)(x))
    loss = lambda x: np.sum(cube_roots(x) ** 3)  # noqa: E731
    with _host_warning():
        got = dualad_gpu.sparse_hessian(loss, output="scipy")(x)
    assert_array_equal(got.toarray(), dualad.sparse_hessian(loss)(x).toarray())
