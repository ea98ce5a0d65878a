"""Complex numbers in every first-order mode, with JAX's numbers and conventions.

Each complex rule is checked against JAX (x64) in ``jvp``, ``vjp``/``grad`` and the
holomorphic Jacobians, and against central differences of the function seen as a
map of real and imaginary parts, so that no check rests on JAX alone.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad.testing import check_grads

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

Z = np.array([0.7 + 0.4j, -1.3 + 0.9j, 0.2 - 1.1j])
T = np.array([0.3 - 0.8j, 1.1 + 0.2j, -0.5 + 0.6j])

#: name: (NumPy function, JAX function). Holomorphic first, then the rest.
HOLOMORPHIC = {
    "add": (lambda z: z + (2.0 - 1j) * z, lambda z: z + (2.0 - 1j) * z),
    "multiply": (lambda z: z * z[::-1], lambda z: z * z[::-1]),
    "divide": (lambda z: (1.0 + z) / (2.0 - z), lambda z: (1.0 + z) / (2.0 - z)),
    "negative": (np.negative, jnp.negative),
    "square": (np.square, jnp.square),
    "reciprocal": (np.reciprocal, jnp.reciprocal),
    "power": (lambda z: z ** (1.5 + 0.5j), lambda z: z ** (1.5 + 0.5j)),
    "power z^z": (lambda z: np.power(z, z), lambda z: jnp.power(z, z)),
    "integer power": (lambda z: z ** 3, lambda z: z ** 3),
    "sqrt": (np.sqrt, jnp.sqrt),
    "exp": (np.exp, jnp.exp),
    "exp2": (np.exp2, jnp.exp2),
    "expm1": (np.expm1, jnp.expm1),
    "log": (np.log, jnp.log),
    "log2": (np.log2, jnp.log2),
    "log10": (np.log10, jnp.log10),
    "log1p": (np.log1p, jnp.log1p),
    "sin": (np.sin, jnp.sin),
    "cos": (np.cos, jnp.cos),
    "tan": (np.tan, jnp.tan),
    "arcsin": (np.arcsin, jnp.arcsin),
    "arccos": (np.arccos, jnp.arccos),
    "arctan": (np.arctan, jnp.arctan),
    "sinh": (np.sinh, jnp.sinh),
    "cosh": (np.cosh, jnp.cosh),
    "tanh": (np.tanh, jnp.tanh),
    "arcsinh": (np.arcsinh, jnp.arcsinh),
    # JAX's 1/sqrt(z² - 1) has the wrong sign left of the imaginary axis (here at
    # -1.3 + 0.9j): the derivative of NumPy's branch, 1/(sqrt(z - 1)·sqrt(z + 1)), instead.
    "arccosh": None,  # below: JAX_ARCCOSH
    "arctanh": (np.arctanh, jnp.arctanh),
    "sum": (lambda z: np.sum(z * z), lambda z: jnp.sum(z * z)),
    "cumsum": (lambda z: np.cumsum(z), lambda z: jnp.cumsum(z)),
    "matmul": (lambda z: np.outer(z, z) @ z, lambda z: jnp.outer(z, z) @ z),
    "indexing": (lambda z: np.concatenate([z[1:], z[:1] * 2j]),
                 lambda z: jnp.concatenate([z[1:], z[:1] * 2j])),
}
NOT_HOLOMORPHIC = {
    "abs": (np.abs, jnp.abs),
    "abs squared": (lambda z: np.abs(z) ** 2, lambda z: jnp.abs(z) ** 2),
    "angle": (np.angle, jnp.angle),
    "angle deg": (lambda z: np.angle(z, deg=True), lambda z: jnp.angle(z, deg=True)),
    "real": (np.real, jnp.real),
    "imag": (np.imag, jnp.imag),
    "conj": (np.conj, jnp.conj),
    # JAX differentiates sign(z) = z/|z| as a step (derivative 0); it is not one.
    "sign": (np.sign, lambda z: z / jnp.abs(z)),
    "attributes": (lambda z: z.real * z.imag + z.conj(), lambda z: z.real * z.imag + z.conj()),
    "astype": (lambda z: np.real(np.exp(z)).astype(np.complex128) * z.astype(np.complex128),
               lambda z: jnp.real(jnp.exp(z)).astype(jnp.complex128) * z.astype(jnp.complex128)),
    "mixed": (lambda z: np.abs(np.sin(z)) * np.conj(z) + np.real(z) ** 2,
              lambda z: jnp.abs(jnp.sin(z)) * jnp.conj(z) + jnp.real(z) ** 2),
}
ALL = {**HOLOMORPHIC, **NOT_HOLOMORPHIC}


@jax.custom_jvp
def JAX_ARCCOSH(z):
    return jnp.arccosh(z)


JAX_ARCCOSH.defjvp(lambda primals, tangents: (
    JAX_ARCCOSH(primals[0]),
    tangents[0] / (jnp.sqrt(primals[0] - 1) * jnp.sqrt(primals[0] + 1))))
HOLOMORPHIC["arccosh"] = ALL["arccosh"] = (np.arccosh, JAX_ARCCOSH)


def central_jvp(f, z, t, h=1e-6):
    """The JVP of f as a map of real and imaginary parts, by central differences."""
    return (f(z + h * t) - f(z - h * t)) / (2 * h)


@pytest.mark.parametrize("name", list(ALL))
def test_jvp_is_jaxs_and_the_central_difference(name):
    f, jf = ALL[name]
    with np.errstate(all="ignore"):  # z ** 1.5 at the branch cut is not reached here
        y, t = dualad.jvp(f, (Z,), (T,))
    jy, jt = jax.jvp(jf, (Z,), (T,))
    assert_allclose(y, jy, rtol=1e-13)
    assert_allclose(t, jt, rtol=1e-11, atol=1e-13)
    assert_allclose(t, central_jvp(f, Z, T), rtol=1e-6, atol=1e-8)
    assert np.result_type(t) == np.result_type(jt.dtype)


@pytest.mark.parametrize("name", list(ALL))
def test_vjp_is_jaxs(name):
    f, jf = ALL[name]
    y, pullback = dualad.vjp(f, Z)
    _, jpullback = jax.vjp(jf, Z)
    ct = np.linspace(0.5, 1.5, y.size).reshape(y.shape) * (1 - 0.5j if y.dtype.kind == "c" else 1)
    assert_allclose(pullback(ct)[0], jpullback(ct)[0], rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", list(ALL))
def test_grad_of_a_real_loss_is_jaxs(name):
    f, jf = ALL[name]
    w = np.array([1.0 - 0.5j, 0.3 + 2.0j, -0.7 + 0.1j])

    def loss(z, xp, g):
        y = g(z)
        return xp.sum(xp.real(y * w[: y.size] if y.ndim else y * w[0]))

    g = dualad.grad(lambda z: loss(z, np, f))(Z)
    jg = jax.grad(lambda z: loss(z, jnp, jf))(Z)
    assert_allclose(g, jg, rtol=1e-11, atol=1e-13)
    value, g2 = dualad.value_and_grad(lambda z: loss(z, np, f))(Z)
    assert_allclose(g2, jg, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", list(HOLOMORPHIC))
def test_holomorphic_jacobians_are_jaxs(name):
    f, jf = HOLOMORPHIC[name]
    expected = jax.jacfwd(jf, holomorphic=True)(Z)
    assert_allclose(dualad.jacfwd(f, holomorphic=True)(Z), expected, rtol=1e-11, atol=1e-13)
    assert_allclose(dualad.jacrev(f, holomorphic=True)(Z), expected, rtol=1e-11, atol=1e-13)


def test_holomorphic_grad_is_the_complex_derivative():
    z = np.complex128(0.3 + 0.8j)
    assert_allclose(dualad.grad(np.sin, holomorphic=True)(z), np.cos(z), rtol=1e-15)
    assert_allclose(dualad.grad(lambda z: z ** 3, holomorphic=True)(z), 3 * z ** 2)


#: Real functions going through complex values: every transform, against JAX.
THROUGH_COMPLEX = {
    "imag": (lambda x, xp: xp.sum((x + 1j * x ** 2).imag)),
    "real": (lambda x, xp: xp.sum((x + 1j * x ** 2).real)),
    "abs": (lambda x, xp: xp.sum(xp.abs(x + 1j * x))),
    "complex constant": (lambda x, xp: xp.sum(xp.abs(x * xp.array([1 + 1j, 2.0, -0.5j])) ** 2)),
    "phase": (lambda x, xp: xp.sum(xp.real(xp.exp(1j * x) * xp.conj(x + 2j)))),
    "angle": (lambda x, xp: xp.sum(xp.angle(xp.exp(0.5j * x) * (1 + x)))),
    "sqrt": (lambda x, xp: xp.sum(xp.abs(xp.sqrt(x + 1j)) ** 3)),
}
X = np.array([0.4, 1.3, -0.7])


@pytest.mark.parametrize("name", list(THROUGH_COMPLEX))
def test_real_functions_through_complex_values_in_every_transform(name):
    f = THROUGH_COMPLEX[name]
    fn, fj = (lambda x: f(x, np)), (lambda x: f(x, jnp))
    expected = jax.grad(fj)(X)
    assert_allclose(dualad.grad(fn)(X), expected, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.jacfwd(fn)(X), expected, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.jacrev(fn)(X), expected, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.jvp(fn, (X,), (np.ones(3),))[1], expected.sum(), rtol=1e-12)
    hessian = jax.hessian(fj)(X)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(fn, mode=mode)(X), hessian, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.hvp(fn, (X,), (np.ones(3),))[0], hessian.sum(1), rtol=1e-12,
                    atol=1e-14)


def test_a_real_to_complex_jacobian_is_jaxs():
    f = lambda x, xp: xp.exp(1j * x) * x  # noqa: E731
    expected = jax.jacfwd(lambda x: f(x, jnp))(X)
    jac = dualad.jacfwd(lambda x: f(x, np))(X)
    assert jac.dtype == np.complex128
    assert_allclose(jac, expected, rtol=1e-13)


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)
    y, t = dualad.jvp(lambda z: np.exp(z) * np.abs(z), (z,), (T.astype(np.complex64),))
    assert y.dtype == np.complex64 and t.dtype == np.complex64
    g = dualad.grad(lambda z: np.sum(np.abs(z) ** 2))(z)
    assert g.dtype == np.complex64
    assert_allclose(g, 2 * np.conj(z), rtol=1e-6)


def test_a_real_tangent_of_a_complex_primal_is_taken_as_complex():
    _, t = dualad.jvp(np.exp, (Z,), (np.ones(3),))
    assert_allclose(t, np.exp(Z))


def test_batched_complex_tangents():
    tangents = np.stack([T, 1j * T, np.ones(3)])
    _, t = dualad.jvp(np.sin, (Z,), (tangents,), batched=True)
    for row, tangent in zip(t, tangents):
        assert_allclose(row, np.cos(Z) * tangent)


def test_the_callers_complex_array_is_not_modified():
    z = Z.copy()
    dualad.grad(lambda z: np.sum(np.abs(np.exp(z))))(z)
    dualad.jvp(np.conj, (z,), (T,))
    assert (z == Z).all()


# -- what JAX refuses, and what dualad cannot differentiate yet ------------------------


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev"])
def test_a_complex_output_needs_holomorphic(transform):
    with pytest.raises(TypeError, match="real-valued outputs.*holomorphic=True"):
        getattr(dualad, transform)(lambda z: np.sum(np.exp(z)))(Z)


def test_jacfwd_of_complex_inputs_needs_holomorphic():
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs.*holomorphic"):
        dualad.jacfwd(lambda z: np.sum(np.abs(z)))(Z)


def test_hessian_of_complex_inputs_needs_holomorphic():
    with pytest.raises(TypeError, match="hessian requires real-valued inputs.*holomorphic"):
        dualad.hessian(lambda z: np.sum(np.abs(z)))(Z)
    with pytest.raises(TypeError, match="hvp requires real-valued inputs.*not supported"):
        dualad.hvp(lambda z: np.sum(np.abs(z)), (Z,), (T,), mode="hyperdual")


def test_holomorphic_hessian_is_jaxs():
    f = lambda z, xp: xp.sum(xp.sin(z) * z ** 2 + xp.exp(z[::-1] * z))  # noqa: E731
    expected = jax.hessian(lambda z: f(z, jnp), holomorphic=True)(Z)
    assert_allclose(dualad.hessian(lambda z: f(z, np), holomorphic=True)(Z), expected,
                    rtol=1e-12)


# -- autograd's complex tests, in our words -----------------------------------------------


def test_the_gradient_of_a_real_part_is_real_at_a_real_point_and_complex_at_a_complex_one():
    gradient = dualad.grad(lambda x: np.sum(np.real(x)))
    assert np.isrealobj(gradient(2.0)) and np.iscomplexobj(gradient(1.0j))
    assert gradient(1.0j) == 1.0


@pytest.mark.parametrize("point", [0.7, -0.4, 0.6 + 0.3j, -1.1 + 1.2j])
@pytest.mark.parametrize("f", [np.angle, np.abs], ids=["angle", "abs"])
def test_angle_abs_and_their_gradients_check_at_real_and_complex_points(f, point):
    check_grads(f, (np.asarray(point),), order=2)
    check_grads(dualad.grad(f), (np.asarray(point),), order=1)


def test_hvp_forward_over_reverse_of_complex_inputs_is_jaxs():
    f = lambda z, xp: xp.sum(xp.abs(xp.sin(z)) ** 2 + xp.real(z ** 3))  # noqa: E731
    expected = jax.jvp(jax.grad(lambda z: f(z, jnp)), (Z,), (T,))[1]
    assert_allclose(dualad.hvp(lambda z: f(z, np), (Z,), (T,))[0], expected, rtol=1e-12)


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev"])
def test_holomorphic_needs_complex_inputs_and_outputs(transform):
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with a complex"):
        getattr(dualad, transform)(np.exp, holomorphic=True)(X)
    with pytest.raises(TypeError, match="holomorphic=True requires outputs with a complex"):
        getattr(dualad, transform)(lambda z: np.sum(np.abs(z)), holomorphic=True)(Z)


@pytest.mark.parametrize("f", [
    lambda z: np.maximum(z, 0.5),
    lambda z: np.cov(z) * z,
    lambda z: np.max(z) * z,
    lambda z: np.sinc(z),
    lambda z: np.convolve(z, z),
    lambda z: np.median(np.abs(z)) * np.cov(Z, np.abs(z)),  # a complex constant, a real Dual
    # SciPy's too: its triangular solve with trans="C" conjugates, toeplitz conjugates
    lambda z: __import__("scipy.linalg").linalg.solve_triangular(
        np.outer(z, z) + np.eye(3), z, trans="C"),
    lambda z: __import__("scipy.linalg").linalg.toeplitz(z),
], ids=["maximum", "cov", "max", "sinc", "convolve", "complex constant",
        "scipy solve_triangular", "scipy toeplitz"])
def test_a_rule_without_complex_support_refuses_complex_values(f):
    with pytest.raises(TypeError, match="no rule for complex numbers"):
        dualad.jvp(f, (Z,), (T,))


def test_complex_loggamma_and_polygamma_are_mpmath_s():
    """lmfit's pearson4 normalises with loggamma(m + iν/2): its derivatives are digamma
    and polygamma at complex points, which SciPy's polygamma does not take (dualad's
    kernel does, for digamma's rule; scipy.special.polygamma itself stays real)."""
    mpmath = pytest.importorskip("mpmath")
    scipy_special = pytest.importorskip("scipy.special")
    from dualad.rules.special import _polygamma

    mpmath.mp.dps = 30
    z = np.array([0.3 + 0.2j, 1.5 + 2.0j, -3.7 + 0.4j, 25.0 + 1.0j, 2.0 - 7.0j, 100 + 50j])
    for n in range(5):
        want = [complex(mpmath.polygamma(n, mpmath.mpc(v.real, v.imag))) for v in z]
        assert_allclose(_polygamma(n, z), want, rtol=2e-15)
    # nan, inf and far into the left half-plane (past 10⁴ steps of the recurrence): nan
    assert np.isnan(_polygamma(1, np.array([np.nan + 0j, complex(np.inf, 1.0), -2e4 + 1j]))).all()
    assert_allclose(dualad.hessian(lambda z: scipy_special.digamma(z).sum(),
                                   holomorphic=True)(z[:2]),
                    np.diag([complex(mpmath.polygamma(2, mpmath.mpc(v.real, v.imag)))
                             for v in z[:2]]), rtol=1e-14)

    def pearson4_norm(p):
        return np.real(scipy_special.loggamma(p[0] + 0.5j * p[1]))

    def exact(p):
        return mpmath.re(mpmath.loggamma(mpmath.mpc(p[0], p[1] / 2)))

    p = np.array([1.7, 0.9])
    assert_allclose(dualad.grad(pearson4_norm)(p),
                    [float(mpmath.diff(lambda *q: exact(q), tuple(p), d))
                     for d in [(1, 0), (0, 1)]], rtol=1e-14)
    hessian = [[float(mpmath.diff(lambda *q: exact(q), tuple(p), d)) for d in row]
               for row in [[(2, 0), (1, 1)], [(1, 1), (0, 2)]]]
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(pearson4_norm, mode=mode)(p), hessian, rtol=1e-13)


def test_a_complex_tangent_for_a_real_primal_is_refused():
    with pytest.raises(TypeError, match="complex tangent"):
        dualad.jvp(np.sin, (X,), (T,))


# -- second order and check_grads on every complex rule ----------------------------------

A, B = 0.6 + 0.3j, 0.1 - 0.2j
W = np.array([1.0 - 0.5j, 0.3 + 2.0j, -0.7 + 0.1j])


@pytest.mark.parametrize("name", list(ALL))
def test_second_order_through_each_complex_rule_is_jaxs(name):
    """x ↦ Σ Re(w·f(a·x + b)): a real function of real x through the complex rule."""
    f, jf = ALL[name]

    def g(x, xp, fun):
        y = fun(A * x + B)
        return xp.sum(xp.real(y * W[: y.size] if y.ndim else y * W[0]))

    expected = jax.hessian(lambda x: g(x, jnp, jf))(X)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(lambda x: g(x, np, f), mode=mode)(X), expected,
                        rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(ALL))
def test_check_grads_to_second_order_at_complex_points(name):
    f, _ = ALL[name]
    with np.errstate(all="ignore"):
        check_grads(f, (Z,), order=2)


def test_check_grads_catches_a_wrong_complex_rule():
    from dualad import Primitive
    wrong_conj = Primitive("wrong_conj", np.conjugate, complex_ok=True, linear="all",
                           jvp=lambda primals, tangents, ans: tangents[0],  # conj(t) is right
                           transpose=lambda ct, args, linear: (ct,))
    with pytest.raises(AssertionError, match="mode 'fwd', order 1"):
        check_grads(wrong_conj, (Z,), order=1)


def test_complex_checks_of_recorded_tangents_do_not_recurse():
    # np.real, np.abs and np.iscomplexobj of a reverse-mode tangent look at its dtype
    def f(z):
        y = np.sin(z)
        return np.sum(np.abs(y) ** 2) + float(np.iscomplexobj(y)) * np.sum(np.real(y))

    expected = jax.grad(lambda z: jnp.sum(jnp.abs(jnp.sin(z)) ** 2 + jnp.real(jnp.sin(z))))(Z)
    assert_allclose(dualad.grad(f)(Z), expected, rtol=1e-12)
    assert_allclose(dualad.grad(lambda z: np.sum(np.abs(z) ** 2))(Z), 2 * np.conj(Z))


def test_defprimitive_takes_complex_values_only_when_declared_complex_ok():
    def cube(complex_ok):
        return dualad.defprimitive(f"cube_{complex_ok}", lambda z: z ** 3,
                                   partials=[lambda ans, z: 3 * z ** 2], complex_ok=complex_ok)

    with pytest.raises(TypeError, match="cube_False has no rule for complex numbers"):
        dualad.jvp(cube(False), (Z,), (T,))
    _, t = dualad.jvp(cube(True), (Z,), (T,))
    assert_allclose(t, 3 * Z ** 2 * T)
    assert_allclose(dualad.grad(lambda z: np.sum(np.abs(cube(True)(z)) ** 2))(Z),
                    jax.grad(lambda z: jnp.sum(jnp.abs(z ** 3) ** 2))(Z), rtol=1e-12)


def test_derivatives_of_one_scalar_at_complex_points_are_along_the_real_direction():
    z = np.complex128(0.3 + 0.7j)
    assert_allclose(dualad.derivative(np.log)(z), 1 / z, rtol=1e-15)
    assert_allclose(dualad.second_derivative(np.sin)(z), -np.sin(z), rtol=1e-15)
    # complex outputs of a real scalar, and a function that is not holomorphic
    assert_allclose(dualad.second_derivative(lambda t: np.exp(1j * t))(0.5), -np.exp(0.5j))
    assert dualad.second_derivative(lambda z: np.abs(z) ** 2)(z) == 2.0  # d²/dt² |z + t|²
