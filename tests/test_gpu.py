"""dualad_gpu: the same transforms compiled with jax.jit, against the NumPy path and JAX."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

jax = pytest.importorskip("jax")
import dualad  # noqa: E402
import dualad_gpu  # noqa: E402
from test_against_jax import NAMES, N, program  # noqa: E402

jnp = jax.numpy


def scalar(steps):
    def f(x):
        return np.sum(np.sin(program(np, steps)(x)))

    return f


def scalar_jax(steps):
    def f(x):
        return jnp.sum(jnp.sin(program(jnp, steps)(x)))

    return f


@settings(max_examples=8)  # each example compiles six programs
@given(steps=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3),
       seed=st.integers(0, 2**16))
def test_compiled_transforms_match_numpy_path_and_jax(steps, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, size=N)
    f, f_jax = program(np, steps), program(jnp, steps)
    with jax.enable_x64(True):
        x_jax = jnp.asarray(x)
        jac_jax = np.asarray(jax.jacfwd(f_jax)(x_jax))
        grad_jax = np.asarray(jax.grad(scalar_jax(steps))(x_jax))
        v = jnp.asarray(np.cos(np.arange(N)))
        jvp_jax = np.asarray(jax.jvp(f_jax, (x_jax,), (v,))[1])
        hessian_jax = np.asarray(jax.hessian(scalar_jax(steps))(x_jax))
    # At a kink (a clip saturating, std of equal values) JAX gives nan where
    # dualad's convention (docs/conventions.md) gives a number: not compared.
    assume(all(np.all(np.isfinite(r)) for r in (jac_jax, grad_jax, jvp_jax, hessian_jax)))
    assert_allclose(dualad_gpu.jacfwd(f)(x), dualad.jacfwd(f)(x), rtol=1e-10, atol=1e-12)
    assert_allclose(dualad_gpu.jacfwd(f)(x), jac_jax, rtol=1e-9, atol=1e-11)
    assert_allclose(dualad_gpu.jacrev(f)(x), jac_jax, rtol=1e-9, atol=1e-11)
    assert_allclose(dualad_gpu.jvp(f, (x,), (np.cos(np.arange(N)),))[1], jvp_jax,
                    rtol=1e-9, atol=1e-11)
    assert_allclose(dualad_gpu.grad(scalar(steps))(x), grad_jax, rtol=1e-9, atol=1e-11)
    assert_allclose(dualad_gpu.hessian(scalar(steps))(x), hessian_jax, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_compiled_hessian_and_hvp(mode):
    x = np.array([0.3, -0.8, 1.1, 0.45])
    f = scalar(["solve", "tanh", "prod"])
    H = dualad.hessian(f, mode="hyperdual")(x)
    assert_allclose(dualad_gpu.hessian(f, mode=mode)(x), H, rtol=1e-10, atol=1e-12)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    (hv,) = dualad_gpu.hvp(f, (x,), (v,))
    assert_allclose(hv, H @ v, rtol=1e-10, atol=1e-12)


def test_compiled_jvp_and_vjp():
    W = np.arange(16.0).reshape(4, 4) / 10

    def f(x):
        return np.tanh(W @ x) + x ** 3

    x, t = np.linspace(-1, 1, 4), np.ones(4)
    y, jv = dualad_gpu.jvp(f, (x,), (t,))
    assert_allclose(jv, dualad.jvp(f, (x,), (t,))[1], rtol=1e-13)
    out, pullback = dualad_gpu.vjp(f, x)
    assert_allclose(out, f(x), rtol=1e-13)
    assert_allclose(pullback(t)[0], dualad.vjp(f, x)[1](t)[0], rtol=1e-13)


def test_textbook_gradient_compiled():
    from dualad.__main__ import textbook

    g1, g2 = dualad_gpu.grad(textbook, argnums=(0, 1))(2.0, 5.0)
    assert (float(g1), float(g2)) == (5.5, 1.7163378145367738)


def test_same_shapes_do_not_retrace():
    traces = []

    def f(x):
        traces.append(1)
        return np.sum(np.sin(x) ** 2)

    g = dualad_gpu.grad(f)
    for k in range(3):
        g(np.full(5, float(k)))
    assert len(traces) == 1
    g(np.ones(6))  # a new shape compiles once more
    g(np.ones(6, np.float32))  # and so does a new dtype
    assert len(traces) == 3
    jv = []

    def h(x):
        jv.append(1)
        return np.cos(x)

    for k in range(3):
        dualad_gpu.jvp(h, (np.full(3, float(k)),), (np.ones(3),))
    assert len(jv) == 1


def test_float64_without_changing_jax_default():
    default = jnp.ones(2).dtype
    out = dualad_gpu.jacfwd(np.sin)(np.ones(2))
    assert out.dtype == np.float64
    assert jnp.ones(2).dtype == default


def test_float32_stays_float32():
    out = dualad_gpu.grad(lambda x: np.sum(np.exp(x) * x))(np.ones(3, np.float32))
    assert out.dtype == np.float32


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
def test_transforming_again_in_a_loop_does_not_recompile(transform):
    traces = []

    def f(x):
        traces.append(1)
        return np.sum(np.sin(x) ** 2)

    for k in range(3):
        getattr(dualad_gpu, transform)(f)(np.full(3, float(k)))
    assert len(traces) == 1
    getattr(dualad_gpu, transform)(f, argnums=[0])(np.ones(3))  # other options: compiled anew
    assert len(traces) == 2


def test_lowered_text_shows_float64():
    text = dualad_gpu.grad(lambda x: np.sum(x ** 2)).lower(np.ones(2)).as_text()
    assert "f64" in text and "f32" not in text


def test_python_control_flow_on_traced_values_is_jax_s_error():
    def f(x):
        return np.sin(x) if np.sum(x) > 0 else np.cos(x)

    assert_allclose(dualad.jacfwd(f)(np.ones(2)), np.diag(np.cos(np.ones(2))))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        dualad_gpu.jacfwd(f)(np.ones(2))


def test_duals_are_pytrees():
    x = dualad.Dual(np.ones(2), np.array([1.0, 2.0]))
    leaves, tree = jax.tree_util.tree_flatten(x)
    assert len(leaves) == 2
    y = jax.tree_util.tree_unflatten(tree, [leaf * 2 for leaf in leaves])
    assert isinstance(y, dualad.Dual) and y.tag is x.tag
    h = dualad.HyperDual(np.ones(2), np.ones(2), np.ones(2), np.ones(2))
    doubled = jax.tree_util.tree_map(lambda a: a * 2, h)
    assert isinstance(doubled, dualad.HyperDual)
    assert_allclose(doubled.eps1eps2, 2 * h.eps1eps2)


def test_jax_arrays_as_inputs_run_the_jax_kernels():
    with jax.enable_x64(True):
        x = jnp.linspace(0.0, 1.0, 3)
        jac = dualad.jacfwd(lambda x: np.exp(x) * 2.0)(x)
    assert isinstance(jac, jax.Array)
    assert_allclose(np.asarray(jac), np.diag(2 * np.exp(np.linspace(0, 1, 3))), rtol=1e-14)


SHARDED = r"""
import numpy as np, jax, dualad, dualad_gpu
assert len(jax.local_devices()) == 4
W = np.arange(64.0).reshape(8, 8) / 100
f = lambda x: np.tanh(W @ x) + x ** 3
r = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
x = np.linspace(-1, 1, 8)
mesh = dualad_gpu.sharding.default_mesh()
results = {
    "jacfwd": dualad_gpu.jacfwd(f)(x),
    "jacrev": dualad_gpu.jacrev(f)(x),
    "hessian-hyperdual": dualad_gpu.hessian(r, mode="hyperdual")(x),
    "hessian-fwd-rev": dualad_gpu.hessian(r, mode="fwd-rev", mesh=mesh)(x),
}
for name, value in results.items():
    assert len(value.sharding.device_set) == 4, (name, value.sharding)
np.savez(OUT, **{k: np.asarray(v) for k, v in results.items()})
"""


def test_seed_axis_sharded_over_four_devices_equals_one_device(on_four_devices):
    sharded = on_four_devices(SHARDED)
    W = np.arange(64.0).reshape(8, 8) / 100
    x = np.linspace(-1, 1, 8)

    def f(x):
        return np.tanh(W @ x) + x ** 3

    def r(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    single = {
        "jacfwd": dualad_gpu.jacfwd(f, mesh=None)(x),
        "jacrev": dualad_gpu.jacrev(f, mesh=None)(x),
        "hessian-hyperdual": dualad_gpu.hessian(r, mode="hyperdual", mesh=None)(x),
        "hessian-fwd-rev": dualad_gpu.hessian(r, mode="fwd-rev", mesh=None)(x),
    }
    for name, value in single.items():
        assert_allclose(sharded[name], np.asarray(value), rtol=1e-12, atol=1e-12)


def test_functions_written_with_the_dual_aware_jax_numpy():
    import dualad_gpu.numpy as djnp

    A = np.array([[3.0, 1.0], [1.0, 2.0]])

    def f_jax(x):
        return djnp.sum(djnp.linalg.solve(A, x) * djnp.tanh(x)) + djnp.linalg.norm(x)

    def f_np(x):
        return np.sum(np.linalg.solve(A, x) * np.tanh(x)) + np.linalg.norm(x)

    x = np.array([0.5, -1.0])
    assert_allclose(dualad_gpu.grad(f_jax)(x), dualad.grad(f_np)(x), rtol=1e-13)
    assert_allclose(dualad_gpu.hessian(f_jax)(x), dualad.hessian(f_np)(x), rtol=1e-12)
    assert isinstance(djnp.sin(np.ones(2)), jax.Array)  # without Duals: jax.numpy itself


def test_plain_jax_numpy_on_a_dual_is_refused():
    # JAX names the type it cannot take; the README points to dualad_gpu.numpy.
    with pytest.raises(TypeError, match="Dual"):
        dualad_gpu.grad(lambda x: jnp.sum(jnp.sin(x)))(np.ones(2))


def test_special_functions_compile():
    sp = pytest.importorskip("scipy.special")

    def f(x):
        return np.sum(sp.erf(x) * sp.gammaln(x + 2.0) + sp.expit(x) + sp.j0(x)
                      + sp.log_expit(x) + np.sinc(x) + np.i0(x))

    x = np.array([0.3, 1.2])
    assert_allclose(dualad_gpu.grad(f)(x), dualad.grad(f)(x), rtol=1e-13)
    assert_allclose(dualad_gpu.hessian(f)(x), dualad.hessian(f)(x), rtol=1e-12)


def test_aux_of_compiled_transforms_is_plain_values():
    f = lambda x: (np.sum(x ** 2), {"total": np.sum(x)})  # noqa: E731
    g, aux = dualad_gpu.grad(f, has_aux=True)(np.ones(2))
    assert_allclose(g, [2.0, 2.0])
    assert_allclose(aux["total"], 2.0)


def test_custom_jvp_compiles_and_its_rule_is_used():
    from test_custom import log1pexp  # declared at import, possibly before dualad_gpu's kernels

    @dualad.custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def _(primals, tangents):
        return f(primals[0]), 3.0 * tangents[0] + np.cos(primals[0]) * 0.0  # not cos: 3

    def newton(order, a):  # x³ + a·x = 1, solved by Newton; dx/da = -x / (3x² + a)
        x = np.ones_like(a)
        for _ in range(order):
            x = x - (x ** 3 + a * x - 1) / (3 * x ** 2 + a)
        return x

    root = dualad.custom_jvp(newton, nondiff_argnums=(0,))

    @root.defjvp
    def _(order, primals, tangents):
        (a,), (t,) = primals, tangents
        x = root(order, a)
        return x, -x * t / (3 * x ** 2 + a)

    x = np.array([-1.0, 0.5, 2.0])
    s = 1.0 / (1.0 + np.exp(-x))
    softplus_sum = lambda x: np.sum(log1pexp(x))  # noqa: E731
    assert_allclose(dualad_gpu.grad(softplus_sum)(x), s)
    assert_allclose(dualad_gpu.jacfwd(log1pexp)(x), np.diag(s))
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad_gpu.hessian(softplus_sum, mode=mode)(x), np.diag(s * (1 - s)),
                        rtol=1e-12)
    assert_allclose(dualad_gpu.jacrev(f)(x), 3.0 * np.eye(3))
    a = np.array([0.5, 2.0])
    r = newton(30, a)
    assert_allclose(dualad_gpu.grad(lambda a: np.sum(root(30, a)))(a), -r / (3 * r ** 2 + a),
                    rtol=1e-12)


def test_defprimitive_rules_written_with_numpy_compile():
    softplus = dualad.defprimitive("softplus_np", lambda x: np.logaddexp(x, 0.0),
                                   partials=[lambda ans, x: 1.0 / (1.0 + np.exp(-x))])

    def unit_jvp(primals, tangents, ans):
        (x,), (t,) = primals, tangents
        u, r = ans
        dr = np.sum(u * t, axis=-1)
        return (t - u * dr[..., None]) / r, dr

    unit_and_norm = dualad.defprimitive(
        "unit_and_norm_np", lambda x: (x / np.linalg.norm(x), np.linalg.norm(x)), outputs=2,
        jvp=unit_jvp)
    x = np.array([-1.0, 0.0, 2.0])
    s = 1.0 / (1.0 + np.exp(-x))
    total = lambda x: np.sum(softplus(x))  # noqa: E731
    assert_allclose(dualad_gpu.grad(total)(x), s)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad_gpu.hessian(total, mode=mode)(x), np.diag(s * (1 - s)),
                        rtol=1e-12)
    v = np.array([3.0, 4.0])
    assert_allclose(dualad_gpu.jacfwd(lambda v: unit_and_norm(v)[1])(v), [0.6, 0.8])
    assert_allclose(dualad_gpu.jacrev(lambda v: unit_and_norm(v)[0])(v),
                    (np.eye(2) - np.outer(v, v) / 25.0) / 5.0)


def test_arguments_without_seeds_stay_values_of_the_program():
    """An argument with no seed in a chunk and an empty one: each a value NumPy calls
    still send to JAX."""
    got = dualad_gpu.jacfwd(lambda a, b: np.sum(np.sqrt(1 + a) * b), argnums=(0, 1),
                            chunk_size=1)(np.ones(2), np.ones(2))
    want = dualad.jacfwd(lambda a, b: np.sum(np.sqrt(1 + a) * b), argnums=(0, 1),
                         chunk_size=1)(np.ones(2), np.ones(2))
    for g, w in zip(got, want):
        assert_allclose(np.asarray(g), w, rtol=1e-15)
    assert dualad_gpu.jacfwd(lambda a: np.sum(np.sqrt(1.0 + a)))(np.zeros(0)).shape == (0,)
    J = dualad_gpu.jacfwd(lambda x: x * dualad.stop_gradient(x))(np.array([3.0, 2.0]))
    assert_allclose(np.asarray(J), np.diag([3.0, 2.0]))


def test_reductions_masked_by_traced_values():
    """where= computed from the argument (a traced mask under jax.jit) and initial=."""
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]])
    for f in (lambda x: np.sum(x ** 2, where=x > 0, axis=1),
              lambda x: np.max(x, where=x < 1.0, initial=-5.0, axis=0),
              lambda x: np.mean(x ** 2, where=x > 0) + np.prod(x, where=x < 1.0)):
        want = dualad.jacfwd(f)(x)
        assert_allclose(np.asarray(dualad_gpu.jacfwd(f)(x)), want, rtol=1e-14)
        assert_allclose(np.asarray(dualad_gpu.jacrev(f)(x)), want, rtol=1e-14)
