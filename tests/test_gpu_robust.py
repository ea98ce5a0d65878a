"""dualad_gpu is never silently wrong and never an obscure crash: functions that write
into their arguments, arguments that are not differentiated, empty inputs, state a
function reads besides its arguments, the cache's bound, a missing jax."""

import gc
import inspect
import itertools
import os
import subprocess
import sys
import types
import warnings
import weakref

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose

jax = pytest.importorskip("jax")
import dualad  # noqa: E402
import dualad_gpu  # noqa: E402
from dualad_gpu import cache, transforms  # noqa: E402

jnp = jax.numpy


def assert_same_tree(got, expected, rtol=1e-11, atol=1e-12):
    got_leaves, got_tree = optree.tree_flatten(got)
    expected_leaves, expected_tree = optree.tree_flatten(expected)
    assert got_tree == expected_tree, (got_tree, expected_tree)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e)
        assert_allclose(np.asarray(g), e, rtol=rtol, atol=atol)


# -- 1: a function that writes into its arguments ------------------------------------


def doubles_first(x, y):
    x[0] = x[0] * 2
    y[1] = y[1] * 3
    return x * x[0] + y * y[1]


def doubles_first_sum(x, y):
    return np.sum(doubles_first(x, y))


X0, Y0 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
# f(x, y) = x' * x'[0] + y' * y'[1] with x'[0] = 2x[0], y'[1] = 3y[1]
JAC_X = np.array([[8.0, 0, 0], [4, 2, 0], [6, 0, 2]])
JAC_Y = np.array([[15.0, 12, 0], [0, 90, 0], [0, 18, 15]])


def expected(transform, argnums):
    jac = {0: JAC_X, 1: JAC_Y}
    if transform in ("jacfwd", "jacrev"):
        return jac[argnums] if isinstance(argnums, int) else tuple(jac[i] for i in argnums)
    grads = {i: j.sum(axis=0) for i, j in jac.items()}
    if transform == "grad":
        return grads[argnums] if isinstance(argnums, int) else tuple(grads[i] for i in argnums)
    # the Hessian of the sum: only d²/dx0² = 8, d²/dx0dx1 = 2, d²/dx0dx2 = 2,
    # d²/dy1² = 18, d²/dy1dy0 = 3, d²/dy1dy2 = 3 are not zero
    hx = np.array([[8.0, 2, 2], [2, 0, 0], [2, 0, 0]])
    hy = np.array([[0.0, 3, 0], [3, 18, 3], [0, 3, 0]])
    h = {(0, 0): hx, (1, 1): hy, (0, 1): np.zeros((3, 3)), (1, 0): np.zeros((3, 3))}
    if isinstance(argnums, int):
        return h[argnums, argnums]
    return tuple(tuple(h[i, j] for j in argnums) for i in argnums)


@pytest.mark.parametrize("to_array", [np.array, jnp.array], ids=["numpy", "jax"])
@pytest.mark.parametrize("chunk_size", [None, 1])
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "grad", "hessian"])
def test_function_writing_into_its_arguments(transform, chunk_size, to_array):
    with jax.enable_x64(True):
        x, y = to_array(X0), to_array(Y0)
    for argnums in (0, 1, (0, 1)):
        if transform == "grad" and chunk_size is None:
            result = dualad_gpu.grad(doubles_first_sum, argnums)(x, y)
        elif transform == "grad":  # no chunks in grad: value_and_grad instead
            value, result = dualad_gpu.value_and_grad(doubles_first_sum, argnums)(x, y)
            assert_allclose(value, 389.0)
        elif transform == "hessian":
            result = dualad_gpu.hessian(doubles_first_sum, argnums, chunk_size=chunk_size,
                                        mode="fwd-rev" if chunk_size else "hyperdual")(x, y)
        else:
            result = getattr(dualad_gpu, transform)(doubles_first, argnums,
                                                    chunk_size=chunk_size)(x, y)
        assert_same_tree(result, expected(transform, argnums))
        assert np.array_equal(np.asarray(x), X0) and np.array_equal(np.asarray(y), Y0)


def test_jvp_vjp_hvp_of_a_function_writing_into_its_arguments():
    x, y, v = X0.copy(), Y0.copy(), np.array([1.0, -1.0, 2.0])
    out, jv = dualad_gpu.jvp(doubles_first, (x, y), (v, v))
    assert_allclose(out, [4.0, 4.0, 6.0] + np.array([60.0, 225.0, 90.0]))
    assert_allclose(jv, JAC_X @ v + JAC_Y @ v)
    out, pullback = dualad_gpu.vjp(doubles_first, x, y)
    gx, gy = pullback(v)
    assert_allclose(gx, v @ JAC_X)
    assert_allclose(gy, v @ JAC_Y)
    (hx, hy), = [dualad_gpu.hvp(doubles_first_sum, (x, y), (v, v))]
    assert_allclose(hx, expected("hessian", 0) @ v)
    assert_allclose(hy, expected("hessian", 1) @ v)
    assert np.array_equal(x, X0) and np.array_equal(y, Y0)


def test_write_through_a_view_reaches_the_base():
    def f(x):
        y = x * 1.0
        y[1:3][::-1] = y[:2]  # NumPy: y is written through the view
        return y

    x = np.arange(4.0)
    assert_allclose(dualad.jvp(f, (x,), (np.ones(4),))[0], [0.0, 1.0, 0.0, 3.0])
    assert_allclose(dualad_gpu.jvp(f, (x,), (np.ones(4),))[0], [0.0, 1.0, 0.0, 3.0])


# -- 24: NumPy calls on arguments that are not differentiated, empty inputs ----------

W = np.arange(12.0).reshape(3, 4) / 10
A = W[:, :3] @ W[:, :3].T + np.eye(3)

MULTI_ARGUMENT = {
    "ufuncs": lambda x, y: np.sum(np.sin(x) * np.cos(y) + np.exp(x) * np.log1p(y ** 2)
                                  + np.arctan2(x, y + 2.0) + np.tanh(x * y)),
    "reductions": lambda x, y: (np.max(x * y) - np.min(np.sqrt(y ** 2 + 1.0))
                                + np.prod(x + 2.0) * np.mean(y ** 3)
                                + np.cumsum(x * y)[2] + np.linalg.norm(y)),
    "matmul": lambda x, y: np.sum(np.tanh(W @ x) * (W @ y)) + x @ y
                           + np.sum(np.linalg.solve(A, y[:3]) * x[:3]),
    "indexing": lambda x, y: (np.sum(x[::-1] * y[1:][::-1][0]) + np.sum(x[[0, 2, 2]] * y[:3])
                              + np.sum(np.where(x > 0.1, x * y, np.exp(y)))),
    "three": lambda x, y, z: np.sum(np.sin(x) * y[:, None] * z) + np.sum(z.T @ y),
}


@pytest.mark.parametrize("name", sorted(MULTI_ARGUMENT))
def test_multi_argument_functions_against_the_numpy_path(name):
    f = MULTI_ARGUMENT[name]
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, 4), rng.uniform(0.5, 1.5, 4)]
    if name == "three":
        args.append(rng.uniform(-1, 1, (4, 4)))
    positions = range(len(args))
    choices = [*positions, *itertools.combinations(positions, 2)]
    if name == "three":
        choices = [0, 2, (1, 2), (0, 1, 2)]
    for transform, argnums in itertools.product(["grad", "jacfwd", "jacrev", "hessian"],
                                                choices):
        expected_value = getattr(dualad, transform)(f, argnums)(*args)
        result = getattr(dualad_gpu, transform)(f, argnums)(*args)
        assert_same_tree(result, expected_value, rtol=1e-10)


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_empty_inputs(shape):
    x, y = np.ones(shape), np.ones(3)
    f = lambda x, y: np.sum(np.sin(x)) * np.sum(y)  # noqa: E731
    g = lambda x, y: np.sin(x) * 2.0  # noqa: E731
    for argnums in (0, (0, 1)):
        for transform, fun in [("grad", f), ("jacfwd", g), ("jacrev", g), ("hessian", f)]:
            assert_same_tree(getattr(dualad_gpu, transform)(fun, argnums)(x, y),
                             getattr(dualad, transform)(fun, argnums)(x, y))
    assert dualad_gpu.jacfwd(g, chunk_size=1)(x, y).shape == shape + shape
    assert dualad_gpu.jvp(g, (x, y), (x, y))[1].shape == shape
    assert dualad_gpu.vjp(g, x, y)[1](np.ones(shape))[0].shape == shape


# -- 15: size-0 and size-1 inputs; values held constant (stop_gradient, a variance of one)


def _compose(y):
    """``y`` through np.minimum, np.maximum, np.where and np.clip (no ties at 0.3..0.7)."""
    return (y + np.minimum(y, 0.5) + np.maximum(y, 0.1) + np.where(y > 0.2, y, 0.0)
            + np.clip(y, 0.1, 0.5))


SMALL = {
    "var": np.var, "std": np.std, "mean": np.mean, "sum": np.sum, "prod": np.prod,
    "max": np.max, "min": np.min, "median": np.median, "sort": np.sort,
    "cumsum": np.cumsum, "norm": np.linalg.norm, "dot": lambda x: np.dot(x, x),
    "tensordot": lambda x: np.tensordot(x, x, axes=1),
    "stop_gradient": lambda x: x * dualad.stop_gradient(x),
}


def _outcome(transform, fun, x):
    try:
        return transform(fun)(x)
    except Exception as error:  # noqa: BLE001 (NumPy's refusal: the max of nothing)
        return type(error)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_size_0_and_size_1_inputs_give_numpy_s_answer(name):
    """Each function alone and composed with minimum/maximum/where/clip, in every
    transform: dualad's values (and errors) and NumPy's shapes."""
    for n, compose in itertools.product((0, 1), (False, True)):
        x = np.linspace(0.3, 0.7, n)
        f = (lambda x: _compose(SMALL[name](x))) if compose else SMALL[name]
        total = lambda x, f=f: np.sum(f(x))  # noqa: E731
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's mean of nothing
            try:
                out_shape = np.shape(SMALL[name](x))
            except ValueError:  # np.max of nothing
                out_shape = None
            for transform, fun in [("value_and_grad", total), ("jacfwd", f),
                                   ("jacrev", f), ("hessian", total)]:
                want = _outcome(getattr(dualad, transform), fun, x)
                got = _outcome(getattr(dualad_gpu, transform), fun, x)
                where = str((name, n, compose, transform))
                if isinstance(want, type):
                    assert want is ValueError and out_shape is None, where
                    assert got is want, where
                    continue
                assert out_shape is not None, where
                if transform == "value_and_grad":  # the value: NumPy's
                    assert_allclose(want[0], total(x), rtol=1e-15, equal_nan=True)
                    assert_allclose(np.asarray(got[0]), total(x), rtol=1e-15,
                                    equal_nan=True)
                    want, got = want[1], got[1]
                shape = {"value_and_grad": x.shape, "hessian": x.shape * 2}.get(
                    transform, out_shape + x.shape)
                assert np.shape(want) == shape and np.shape(got) == shape, where
                assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14,
                                equal_nan=True, err_msg=where)


def _held(x):
    return dualad.stop_gradient(x)


# name: a function of x = [0.3, 0.4] and its jax.numpy twin (None: dualad's std of one
# element has derivative 0 where JAX's is NaN)
HELD = {
    "product": (lambda x: np.sum(x * _held(x)), lambda x: jnp.sum(x * jax.lax.stop_gradient(x))),
    "minimum": (lambda x: np.sum(np.minimum(_held(x), 0.35) * x),
                lambda x: jnp.sum(jnp.minimum(jax.lax.stop_gradient(x), 0.35) * x)),
    "maximum": (lambda x: np.sum(np.maximum(_held(x) ** 2, x)),
                lambda x: jnp.sum(jnp.maximum(jax.lax.stop_gradient(x) ** 2, x))),
    "clip": (lambda x: np.sum(np.clip(_held(x), 0.1, 0.35) * x),
             lambda x: jnp.sum(jnp.clip(jax.lax.stop_gradient(x), 0.1, 0.35) * x)),
    "where": (lambda x: np.sum(np.where((_held(x) > 0.35) & (x < 0.5) | ~(x > 0.2), x, 2 * x)),
              lambda x: jnp.sum(jnp.where((jax.lax.stop_gradient(x) > 0.35) & (x < 0.5)
                                          | ~(x > 0.2), x, 2 * x))),
    "where, constants": (lambda x: np.sum(x * np.where(_held(x) > 0.35, 1.0, 3.0)),
                         lambda x: jnp.sum(x * jnp.where(x > 0.35, 1.0, 3.0))),
    "var of one": (lambda x: np.minimum(np.var(x[:1]), 0.5) + np.var(x[:1]) * x[1],
                   lambda x: jnp.minimum(jnp.var(x[:1]), 0.5) + jnp.var(x[:1]) * x[1]),
    "std of one": (lambda x: np.maximum(np.std(x[:1]), 0.1) + np.std(x[:1]), None),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_values_held_constant_stay_values_of_the_program(name):
    """What stop_gradient (or a variance of one element) leaves of a differentiated
    argument meets NumPy calls (minimum, maximum, clip, where, &, |, ~) in every
    transform, as dualad's and JAX's."""
    f, twin = HELD[name]
    x = np.array([0.3, 0.4])
    for transform in ("grad", "jacfwd", "jacrev", "hessian"):
        got = getattr(dualad_gpu, transform)(f)(x)
        assert_allclose(np.asarray(got), getattr(dualad, transform)(f)(x), rtol=1e-14,
                        err_msg=transform)
        if twin is not None:
            with jax.enable_x64(True):
                assert_allclose(np.asarray(got), getattr(jax, transform)(twin)(jnp.asarray(x)),
                                rtol=1e-14, err_msg=transform)


def test_complex_values_held_constant_stay_values_of_the_program():
    z = np.array([0.3 + 0.2j, 0.1 - 0.4j])
    for f in (lambda z: z * np.abs(_held(z)),
              lambda z: z * np.maximum(np.real(_held(z)), 0.2)):
        assert_allclose(np.asarray(dualad_gpu.jacfwd(f, holomorphic=True)(z)),
                        dualad.jacfwd(f, holomorphic=True)(z), rtol=1e-14)


def test_integer_results_stay_plain_arrays():
    """Integers computed from values (differentiated or not) index as JAX takes them and
    leave the transforms as integers."""
    x, y = np.array([0.3, 0.1, 0.4]), np.array([2.0, 1.0, 2.0])
    f = lambda x, y: np.take(x, np.lexsort((x, y))) * np.argmax(_held(x))  # noqa: E731
    for transform, argnums in itertools.product(("jacfwd", "jacrev"), (0, 1, (0, 1))):
        assert_same_tree(getattr(dualad_gpu, transform)(f, argnums)(x, y),
                         getattr(dualad, transform)(f, argnums)(x, y))
    g = lambda x: (np.sum(np.sin(x)), (np.argsort(x), np.argsort(_held(x))))  # noqa: E731
    grad, orders = dualad_gpu.grad(g, has_aux=True)(x)
    assert_allclose(np.asarray(grad), np.cos(x), rtol=1e-15)
    for order in orders:
        assert order.dtype.kind == "i" and np.array_equal(order, [1, 0, 2])
    (_, order), _ = dualad_gpu.jvp(lambda x: (np.sin(x), np.argsort(x)), (x,), (x,))
    assert order.dtype.kind == "i" and np.array_equal(order, [1, 0, 2])


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev", "hessian"])
def test_indexing_by_traced_integers(transform):
    """``x[np.argsort(x)]``, ``x[np.argmax(y)]``: an index computed under the trace is a
    gather (a copy), as in NumPy, not a view the stand-in could not make."""
    x, y = np.array([0.3, 0.1, 0.5]), np.array([1.0, 3.0, 2.0])

    def f(x):
        return np.sum(x[np.argsort(x)] ** 2 * np.arange(3.0)) + x[np.argmax(y * x)] * x[0]

    ours = getattr(dualad_gpu, transform)(f)(x)
    assert_allclose(np.asarray(ours), getattr(dualad, transform)(f)(x), rtol=1e-15)


def zeroed_where_positive(x):
    z = x * 2.0
    z[x > 0] = 0.0  # a mask computed from the input: its count is known only when it runs
    return np.sum(z ** 2) + np.sum(x[x < 0] ** 3)


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev", "hessian"])
def test_a_boolean_mask_of_the_inputs_runs_on_the_host_and_says_how_to_stay(transform):
    x = np.array([0.5, -1.0, 2.0, -0.25])
    with pytest.warns(RuntimeWarning, match=r"boolean mask computed from its inputs.*"
                                            r"np\.where\(mask, new, x\).*on the host"):
        ours = getattr(dualad_gpu, transform)(zeroed_where_positive)(x)
    assert_allclose(np.asarray(ours), getattr(dualad, transform)(zeroed_where_positive)(x),
                    rtol=1e-15)
    where = lambda x: np.sum(np.where(x > 0, 0.0, 2.0 * x) ** 2)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (np.where stays in jax.jit)
        assert_allclose(np.asarray(getattr(dualad_gpu, transform)(where)(x)),
                        getattr(dualad, transform)(where)(x), rtol=1e-15)


REVERSED_SLICE = """
import numpy as np, dualad_gpu
print(np.asarray(dualad_gpu.grad(lambda a: np.sum(np.sin(a[::-1][:])))(np.arange(4.0))).tolist())
print(np.asarray(dualad_gpu.jacrev(SLICES)(np.arange(12.0).reshape(3, 4))).tolist())
"""


def SLICES(a):
    return np.sin(a[1:, ::-1][::-1, :][:, ::2])


def test_gradient_through_a_reversed_slice_does_not_abort():
    # The reverse rule of two slices in a row used to emit two scatter-adds, of
    # which XLA's CPU compiler aborted the process on one reversing an axis.
    code = "import numpy as np\n" + inspect.getsource(SLICES) + REVERSED_SLICE
    run = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert run.returncode == 0, run.stderr[-3000:]
    grad_line, jac_line = run.stdout.splitlines()[-2:]
    assert_allclose(eval(grad_line), np.cos(np.arange(4.0)), rtol=1e-14)
    assert_allclose(eval(jac_line), dualad.jacrev(SLICES)(np.arange(12.0).reshape(3, 4)),
                    rtol=1e-14)


def test_the_jax_kernel_of_index_add_at_basic_indices():
    from dualad.rules.shape import _index_add_kernel
    from dualad_gpu.kernels import _index_add

    items = [None, Ellipsis, 0, -1, 2, slice(None), slice(None, None, -1), slice(1, None),
             slice(None, None, 2), slice(-1, 0, -2), slice(3, 1), np.int64(1)]
    rng = np.random.default_rng(1)
    checked = 0
    for shape in [(4, 3, 5), (), (0, 2)]:
        for size in range(4):
            for index in itertools.product(items, repeat=size):
                if sum(i is Ellipsis for i in index) > 1 or rng.random() > 0.02:
                    continue
                try:
                    values = rng.normal(size=np.zeros(shape)[index].shape)
                except IndexError:
                    continue
                with jax.enable_x64(True):
                    got = np.asarray(_index_add(jnp.asarray(values), index, shape))
                assert np.array_equal(got, _index_add_kernel(values, index, shape)), index
                checked += 1
    assert checked > 20
    text = jax.jit(lambda v: _index_add(v, (slice(None, None, -1),), (4,))).lower(
        jnp.ones(4)).as_text()
    assert "scatter" not in text and "pad" in text


# -- 23: state read besides the arguments, and the cache's bound ------------------------


class Model:
    def __init__(self):
        self.w = 2.0
        self.b = np.array([1.0, 2.0])

    def loss(self, x):
        return np.sum(self.w * x ** 2 + self.b * x)


def test_a_changed_attribute_of_a_bound_method_is_not_stale():
    m, x = Model(), np.ones(2)
    assert_allclose(dualad_gpu.grad(m.loss)(x), [5.0, 6.0])
    m.w = 3.0
    assert_allclose(dualad_gpu.grad(m.loss)(x), [7.0, 8.0])
    g = dualad_gpu.grad(m.loss)
    m.b = np.array([0.0, -1.0])  # replaced
    assert_allclose(g(x), [6.0, 5.0])  # the same compiled function, called again
    m.b[0] = 10.0  # written into
    assert_allclose(g(x), [16.0, 5.0])
    assert_allclose(dualad_gpu.hessian(m.loss)(x), 6.0 * np.eye(2))
    config = types.SimpleNamespace(scale=2.0)  # a class of the standard library
    g = dualad_gpu.grad(lambda x: np.sum(config.scale * x))
    assert_allclose(g(x), [2.0, 2.0])
    config.scale = 5.0
    assert_allclose(g(x), [5.0, 5.0])


CAPTURED = np.array([1.0, 2.0])


def uses_global(x):
    return np.sum(CAPTURED * np.sin(x))


def test_replaced_or_overwritten_captured_arrays_are_not_stale():
    global CAPTURED
    x = np.zeros(2)
    g = dualad_gpu.grad(uses_global)
    assert_allclose(g(x), [1.0, 2.0])
    CAPTURED = np.array([3.0, 4.0])
    assert_allclose(g(x), [3.0, 4.0])
    assert_allclose(dualad_gpu.grad(uses_global)(x), [3.0, 4.0])
    CAPTURED[1] = -1.0
    assert_allclose(dualad_gpu.jacfwd(uses_global)(x), [3.0, -1.0])

    def closure():
        v = np.ones(2)

        def f(x):
            return np.sum(v * np.sin(x))

        def replace(new):
            nonlocal v
            v = new

        return f, replace

    f, replace = closure()
    assert_allclose(dualad_gpu.grad(f)(x), [1.0, 1.0])
    replace(np.array([5.0, 6.0]))
    assert_allclose(dualad_gpu.grad(f)(x), [5.0, 6.0])
    # a jax.Array captured, replaced
    replace(jnp.array([7.0, 8.0]))
    assert_allclose(dualad_gpu.grad(f)(x), [7.0, 8.0])


def test_jax_jit_keeps_its_first_trace_as_the_docs_say():
    # docs/jax.md contrasts dualad_gpu with this behaviour of jax.jit
    m, x = Model(), jnp.ones(2)
    loss = lambda x: jnp.sum(m.w * x ** 2)  # noqa: E731
    jitted = jax.jit(jax.grad(loss))
    assert_allclose(jitted(x), [4.0, 4.0])
    m.w = 3.0
    assert_allclose(jitted(x), [4.0, 4.0])  # stale: the first trace's m.w
    assert_allclose(jax.jit(jax.grad(loss))(x), [6.0, 6.0])  # made again: traced anew
    assert_allclose(jax.jit(loss)(x), 6.0)
    m.w = 5.0
    assert_allclose(jax.jit(loss)(x), 6.0)  # made again on the same function: stale


def test_a_new_lambda_per_call_reuses_the_compiled_program():
    traces = []
    v = np.array([1.0, -1.0])

    def traced_sin(x):
        traces.append(1)
        return np.sin(x)

    for _ in range(5):
        g = dualad_gpu.grad(lambda x: np.sum(traced_sin(x) * v))
        assert_allclose(g(np.zeros(2)), v)
    assert len(traces) == 1


def test_the_cache_is_bounded_and_frees_what_it_drops(monkeypatch):
    monkeypatch.setattr(cache, "CACHE_SIZE", 3)
    monkeypatch.setattr(transforms, "_CACHE", cache.LRUCache())
    entries = []
    x = np.zeros(2)
    for k in range(10):
        v = np.full(2, float(k))  # a new captured array each time: a new program
        assert_allclose(dualad_gpu.grad(lambda x: np.sum(v * np.sin(x)))(x), v)
        assert len(transforms._CACHE) <= 3
        entries += [weakref.ref(e) for e, _ in transforms._CACHE._entries.values()]
    gc.collect()
    alive = {id(r()) for r in entries if r() is not None}
    assert len(alive) <= 3  # those still in the cache, nothing else (JAX holds none)


# -- 14 and 18: without jax; what the module docstring says ----------------------------


def test_import_without_jax_says_how_to_install_it():
    code = "import sys\nsys.modules['jax'] = None\nimport dualad_gpu\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()
    assert any(line.startswith("ImportError: dualad_gpu needs JAX") for line in last)
    assert 'pip install "dualad[jax]"' in run.stderr
    code = "import sys\nsys.modules['jax'] = None\nimport dualad\nprint(dualad.grad(abs)(-2.0))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "-1.0", run.stderr


def test_module_docstring_examples_hold():
    import doctest

    assert "dualad_gpu.numpy" in dualad_gpu.__doc__
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(dualad_gpu, optionflags=flags)
    assert result.attempted >= 6 and result.failed == 0
