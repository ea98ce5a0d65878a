"""Adding to the rule table: defprimitive and custom_jvp work in every mode."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad import custom_jvp, defprimitive, ops


def _sigmoid(x):
    return 1.0 / (1.0 + ops.exp(-x))  # dualad.ops, not np: the row also runs on JAX tracers


softplus = defprimitive("softplus", lambda x: np.logaddexp(x, 0.0),
                        partials=[lambda ans, x: _sigmoid(x)])


def _double_transpose(ct, args, linear):
    return (double(ct),)


double = defprimitive("double", lambda x: 2.0 * x,
                      jvp=lambda primals, tangents, ans: double(tangents[0]),
                      linear="all", transpose=_double_transpose)


X = np.array([-1.0, 0.5, 2.0])


def test_elementwise_primitive_in_every_mode():
    s = _sigmoid(X)
    assert_allclose(dualad.jacfwd(softplus)(X), np.diag(s))
    assert_allclose(dualad.jacrev(softplus)(X), np.diag(s))
    assert_allclose(dualad.grad(lambda x: np.sum(softplus(x)))(X), s)
    _, ts = dualad.jvp(softplus, (X,), (np.eye(3),), batched=True)
    assert_allclose(ts, np.diag(s))
    for mode in ("hyperdual", "fwd-rev"):
        H = dualad.hessian(lambda x: np.sum(softplus(x)), mode=mode)(X)
        assert_allclose(H, np.diag(s * (1 - s)), rtol=1e-14)


def test_linear_primitive_in_forward_and_reverse():
    f = lambda x: np.sum(np.sin(double(x)))  # noqa: E731
    assert_allclose(dualad.grad(f)(X), 2 * np.cos(2 * X))
    assert_allclose(dualad.jacfwd(f)(X), 2 * np.cos(2 * X))
    assert_allclose(dualad.hessian(f, mode="fwd-rev")(X), np.diag(-4 * np.sin(2 * X)))


def test_registered_as_a_numpy_function():
    scipy_special = pytest.importorskip("scipy.special")
    prim = defprimitive("struve0", lambda x: scipy_special.struve(0, x),
                        partials=[lambda ans, x: 2 / np.pi - prim1(x)])
    prim1 = defprimitive("struve1", lambda x: scipy_special.struve(1, x),
                         partials=[lambda ans, x: prim(x) - prim1(x) / x])
    x = np.array([0.7, 1.3])
    h = 1e-6
    fd = (scipy_special.struve(0, x + h) - scipy_special.struve(0, x - h)) / (2 * h)
    assert_allclose(np.diag(dualad.jacfwd(prim)(x)), fd, rtol=1e-7)


def test_malformed_registrations_are_refused():
    with pytest.raises(ValueError, match="takes 1 array arguments but 2 partials"):
        defprimitive("bad", lambda x: x, partials=[None, None])
    with pytest.raises(ValueError, match="partials .* or jvp"):
        defprimitive("bad", np.sin)
    with pytest.raises(ValueError, match="transpose"):
        defprimitive("bad", lambda x: x, jvp=lambda p, t, a: t[0], linear="all")
    with pytest.raises(ValueError, match="linear="):
        defprimitive("bad", lambda x: x, jvp=lambda p, t, a: t[0],
                     transpose=lambda ct, a, l: (ct,))
    wrong_shape = defprimitive("wrong_shape", lambda x: x * 1.0,
                               jvp=lambda p, t, ans: t[0][:, :1])
    with pytest.raises(ValueError, match=r"shape \(1, 1\).*expected \(1, 3\)"):
        dualad.jvp(wrong_shape, (X,), (np.ones(3),))


@custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * _sigmoid(x)


def test_custom_jvp_in_every_mode():
    s = _sigmoid(X)
    f = lambda x: np.sum(log1pexp(x))  # noqa: E731
    assert_allclose(dualad.jacfwd(log1pexp)(X), np.diag(s))
    assert_allclose(dualad.grad(f)(X), s)
    assert_allclose(dualad.jacrev(log1pexp)(X), np.diag(s))
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(f, mode=mode)(X), np.diag(s * (1 - s)), rtol=1e-13)
    assert float(dualad.derivative(log1pexp)(700.0)) == 1.0


def test_custom_jvp_rule_is_the_one_used():
    @custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def _(primals, tangents):
        return f(primals[0]), 3.0 * tangents[0]  # deliberately not cos

    assert_allclose(dualad.grad(lambda x: np.sum(f(x)))(X), 3 * np.ones(3))
    assert_allclose(dualad.jacfwd(f)(X), 3 * np.eye(3))
    assert_allclose(f(X), np.sin(X))  # plain calls run the function itself


def test_custom_jvp_with_nondiff_argnums_and_a_solver():
    # x(a) solving x³ + a·x = 1 by Newton; implicit derivative dx/da = -x / (3x² + a)
    def newton(order, a):
        x = np.ones_like(a)
        for _ in range(order):
            x = x - (x ** 3 + a * x - 1) / (3 * x ** 2 + a)
        return x

    root = custom_jvp(newton, nondiff_argnums=(0,))

    @root.defjvp
    def _(order, primals, tangents):
        (a,), (t,) = primals, tangents
        x = root(order, a)
        return x, -x * t / (3 * x ** 2 + a)

    a = np.array([0.5, 2.0])
    x = newton(50, a)
    assert_allclose(np.diag(dualad.jacfwd(lambda a: root(50, a))(a)), -x / (3 * x ** 2 + a),
                    rtol=1e-12)
    assert_allclose(dualad.grad(lambda a: np.sum(root(50, a)))(a), -x / (3 * x ** 2 + a),
                    rtol=1e-12)


def test_custom_jvp_needs_a_rule():
    @custom_jvp
    def f(x):
        return x

    with pytest.raises(TypeError, match="defjvp"):
        dualad.grad(f)(1.0)


def test_a_defined_primitive_with_a_jax_kernel_compiles():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    cube = defprimitive("cube", lambda x: x ** 3, partials=[lambda ans, x: 3.0 * x * x],
                        jax_kernel=lambda x: jax.numpy.power(x, 3))
    assert_allclose(dualad_gpu.grad(lambda x: np.sum(cube(x)))(X), 3 * X ** 2)
    assert_allclose(dualad_gpu.hessian(lambda x: np.sum(cube(x)))(X), np.diag(6 * X))


sincos = defprimitive("sincos", lambda x: (np.sin(x), np.cos(x)), outputs=2,
                      partials=[[lambda ans, x: ops.cos(x)], [lambda ans, x: -ops.sin(x)]])


def _unit_jvp(primals, tangents, ans):
    (x,), (t,) = primals, tangents
    u, r = ans
    dr = np.sum(u * t, axis=-1)  # t has a leading seed axis
    return (t - u * dr[..., None]) / r, dr


unit_and_norm = defprimitive(
    "unit_and_norm", lambda x: (x / np.linalg.norm(x), np.linalg.norm(x)), outputs=2,
    jvp=_unit_jvp)


def test_multiple_outputs_in_every_mode():
    s, c = sincos(X)
    assert_allclose(s, np.sin(X))
    f = lambda x: np.sum(sincos(x)[0] * sincos(x)[1])  # noqa: E731  sin·cos = sin(2x)/2
    assert_allclose(dualad.grad(f)(X), np.cos(2 * X))
    assert_allclose(dualad.jacfwd(lambda x: sincos(x)[1])(X), np.diag(-np.sin(X)))
    assert_allclose(dualad.hessian(f, mode="hyperdual")(X), np.diag(-2 * np.sin(2 * X)),
                    rtol=1e-13, atol=1e-15)
    x = np.array([3.0, 4.0])
    u = x / 5.0
    ju, jr = dualad.jacfwd(unit_and_norm)(x)
    assert_allclose(jr, u)
    assert_allclose(ju, (np.eye(2) - np.outer(u, u)) / 5.0)
    assert_allclose(dualad.jacrev(lambda x: unit_and_norm(x)[0])(x), ju)


def test_multiple_outputs_need_a_row_each():
    with pytest.raises(ValueError, match="2 outputs need 2 rows"):
        defprimitive("bad", lambda x: (x, x), outputs=2, partials=[[lambda ans, x: 1.0]])


REGISTERED = {
    "elementwise": lambda x: np.sum(softplus(x) * x),
    "linear": lambda x: np.sum(np.sin(double(x)) * x),
    "multi-output": lambda x: np.sum(sincos(x)[0] * sincos(x)[1] * x),
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_every_transform_on_registered_primitives(name):
    from dualad.testing import check_grads

    f = REGISTERED[name]
    x, v = np.array([-0.7, 0.4, 1.3]), np.array([1.0, -2.0, 0.5])
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    g = dualad.jacfwd(f)(x)
    H = dualad.hessian(f, mode="hyperdual")(x)
    assert_allclose(dualad.grad(f)(x), g, rtol=1e-13)
    assert_allclose(dualad.value_and_grad(f)(x)[1], g, rtol=1e-13)
    assert_allclose(dualad.vjp(f, x)[1](1.0)[0], g, rtol=1e-13)
    assert_allclose(dualad.jacrev(f)(x), g, rtol=1e-13)
    assert_allclose(dualad.jvp(f, (x,), (np.eye(3),), batched=True)[1], g, rtol=1e-13)
    assert_allclose(dualad.hessian(f, mode="fwd-rev")(x), H, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.hvp(f, (x,), (v,))[0], H @ v, rtol=1e-12)
    assert_allclose(dualad.hvp(f, (x,), (v,), mode="hyperdual")[0], H @ v, rtol=1e-12)
    if pytest.importorskip("jax"):
        import dualad_gpu

        assert_allclose(dualad_gpu.grad(f)(x), g, rtol=1e-13)
        assert_allclose(dualad_gpu.hessian(f)(x), H, rtol=1e-12, atol=1e-14)
