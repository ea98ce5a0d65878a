"""scipy.integrate.odeint differentiated in y0, args, its closure and t
(dualad/solvers/scipy_integrate.py).

Checked against closed forms (exponential decay), central differences of SciPy's own
odeint at tight tolerances, forward against reverse mode, both Hessian modes, and
jax.experimental.ode.odeint (another solver: agreement to ~1e-6).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from dualad.testing import check_grads

integrate = pytest.importorskip("scipy.integrate")

TOL = {"rtol": 1e-12, "atol": 1e-12}
T = np.linspace(0.0, 2.0, 5)
TLV = np.linspace(0.0, 3.0, 7)


def decay(y, t, k):
    return -k * y


def lotka_volterra(y, t, a, b, c, d):
    return [a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]]


def oscillator(y, t, p):  # p = (damping, stiffness): a damped oscillator, args an array
    return np.array([y[1], -p[0] * y[1] - p[1] * y[0]])


def solve_decay(y0, k):
    return integrate.odeint(decay, y0, T, args=(k,), **TOL)


def solve_lv(y0, theta):
    return integrate.odeint(lotka_volterra, y0, TLV, args=tuple(theta), **TOL)


def solve_osc(y0, p):
    return integrate.odeint(oscillator, y0, T, args=(p,), **TOL)


Y0, K = np.array([1.5, 0.5]), 0.7
LV0, THETA = np.array([1.0, 0.5]), np.array([1.1, 0.4, 0.9, 0.3])
OSC0, P = np.array([1.0, 0.0]), np.array([0.3, 2.0])


def exact_decay_jacobians(y0, k):
    e = np.exp(-k * T)
    return e[:, None, None] * np.eye(y0.size), -T[:, None] * y0 * e[:, None]


def central(f, x, h=1e-5):
    """Jacobian of f by central differences in every component of x."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        cols.append((f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


def test_values_are_scipys_own():
    y0 = dualad.Dual(Y0, np.ones(2))
    out = integrate.odeint(decay, y0, T, args=(K,), **TOL)
    assert np.array_equal(dualad.primal_value(out), integrate.odeint(decay, Y0, T, args=(K,),
                                                                     **TOL))


@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_decay_against_closed_form(transform):
    j_y0, j_k = transform(solve_decay, argnums=(0, 1))(Y0, K)
    e_y0, e_k = exact_decay_jacobians(Y0, K)
    assert_allclose(j_y0, e_y0, atol=1e-10)
    assert_allclose(j_k, e_k, atol=1e-10)


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_decay_hessian_against_closed_form(mode):
    def last(x):  # x = (y0[0], k)
        return solve_decay(x[:1], x[1])[-1, 0]
    x = np.array([1.5, K])
    t = T[-1]
    e = np.exp(-K * t)
    expected = np.array([[0.0, -t * e], [-t * e, t * t * x[0] * e]])
    assert_allclose(dualad.hessian(last, mode=mode)(x), expected, atol=1e-9)


@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_lotka_volterra_against_central_differences(transform):
    j_y0, j_theta = transform(solve_lv, argnums=(0, 1))(LV0, THETA)
    assert_allclose(j_y0, central(lambda y: solve_lv(y, THETA), LV0), atol=1e-7)
    assert_allclose(j_theta, central(lambda th: solve_lv(LV0, th), THETA), atol=1e-7)


def test_lotka_volterra_hessian_modes_agree_and_match_differences():
    def loss(theta):
        return np.sum(solve_lv(LV0, theta) ** 2)
    h_hd = dualad.hessian(loss, mode="hyperdual")(THETA)
    h_fr = dualad.hessian(loss, mode="fwd-rev")(THETA)
    assert_allclose(h_hd, h_fr, rtol=1e-7, atol=1e-7)
    assert_allclose(h_hd, central(dualad.grad(loss), THETA, h=1e-4), rtol=1e-5, atol=1e-5)


def test_oscillator_check_grads_and_vjp():
    check_grads(solve_osc, (OSC0, P), order=2, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    out, pull = dualad.vjp(solve_osc, OSC0, P)
    ct = np.random.default_rng(0).normal(size=out.shape)
    c_y0, c_p = pull(ct)
    j_y0, j_p = dualad.jacfwd(solve_osc, argnums=(0, 1))(OSC0, P)
    assert_allclose(c_y0, np.einsum("ti,tij->j", ct, j_y0), atol=1e-9)
    assert_allclose(c_p, np.einsum("ti,tij->j", ct, j_p), atol=1e-9)


def test_grad_both_modes():
    def loss(k):
        return np.sum(solve_decay(Y0, k))
    expected = np.sum(exact_decay_jacobians(Y0, K)[1])
    assert_allclose(dualad.grad(loss)(K), expected, atol=1e-10)
    assert_allclose(dualad.derivative(loss)(K), expected, atol=1e-10)


def test_nested_tags_keep_perturbations_apart():
    # d/dk [k · d/dy0 y(T)] with y(T) = y0 exp(-k T): d/dk [k exp(-kT)] = (1 - kT) exp(-kT)
    def inner(k):
        return dualad.derivative(
            lambda y0: integrate.odeint(decay, y0, T, args=(k,), **TOL)[-1, 0])(1.0)
    got = dualad.derivative(lambda k: k * inner(k))(K)
    t = T[-1]
    assert_allclose(got, (1 - K * t) * np.exp(-K * t), atol=1e-9)


def test_against_jax_experimental_ode():
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint
    jnp = jax.numpy

    def lv_jax(y, t, a, b, c, d):
        return jnp.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])

    with jax.enable_x64(True):
        def f_jax(y0, theta):
            return jax_odeint(lv_jax, y0, jnp.asarray(TLV), *theta, rtol=1e-11, atol=1e-11)
        # JAX's odeint has a custom VJP: reverse mode only, Hessian by jacrev(grad)
        want = jax.jacrev(f_jax, argnums=(0, 1))(jnp.asarray(LV0), jnp.asarray(THETA))
        want_h = jax.jacrev(jax.grad(lambda th: jnp.sum(f_jax(jnp.asarray(LV0), th) ** 2)))(
            jnp.asarray(THETA))
    got = dualad.jacrev(solve_lv, argnums=(0, 1))(LV0, THETA)
    for g, w in zip(got, want):
        assert_allclose(g, np.asarray(w), rtol=1e-6, atol=1e-6)
    got_h = dualad.hessian(lambda th: np.sum(solve_lv(LV0, th) ** 2))(THETA)
    assert_allclose(got_h, np.asarray(want_h), rtol=1e-6, atol=1e-6)


def test_keyword_variants():
    # tfirst, args given positionally, a list y0, per-component atol, Dfun for the primal
    def f_tfirst(t, y, k):
        return -k * y

    def jac(y, t, k):
        return -k * np.eye(y.size)

    def solve(k):
        return integrate.odeint(f_tfirst, [1.5, 0.5], T, (k,), tfirst=True, rtol=1e-12,
                                atol=np.array([1e-12, 1e-13]))

    assert_allclose(dualad.jacfwd(solve)(K), exact_decay_jacobians(Y0, K)[1], atol=1e-10)
    assert_allclose(dualad.jacrev(solve)(K), exact_decay_jacobians(Y0, K)[1], atol=1e-10)

    def solve_dfun(k):
        return integrate.odeint(decay, Y0, T, args=(k,), Dfun=jac, **TOL)

    assert_allclose(dualad.jacfwd(solve_dfun)(K), exact_decay_jacobians(Y0, K)[1],
                    atol=1e-10)


def test_full_output_returns_scipys_info():
    out, info = integrate.odeint(decay, dualad.Dual(Y0, np.ones(2)), T, args=(K,),
                                 full_output=True, **TOL)
    _, want = integrate.odeint(decay, Y0, T, args=(K,), full_output=True, **TOL)
    assert set(info) == set(want)
    assert np.array_equal(info["nfe"], want["nfe"])
    assert np.array_equal(dualad.primal_value(out), integrate.odeint(decay, Y0, T, args=(K,),
                                                                     **TOL))


def test_float32_inputs_give_scipys_float64():
    j = dualad.jacfwd(solve_decay)(Y0.astype(np.float32), np.float32(K))
    assert j.dtype == np.float64
    assert_allclose(j, exact_decay_jacobians(Y0, np.float32(K))[0], atol=1e-6)


def test_differentiated_in_the_times():
    # as autograd's test_odeint: every time moves, the first one (where y0 is) included
    def solution(t):
        return integrate.odeint(lambda y, t, k: -k * y * np.cos(t), Y0, t, args=(K,), **TOL)

    t = np.array([0.2, 0.9, 1.5, 2.0])
    want = central(solution, t)
    assert_allclose(dualad.jacfwd(solution)(t), want, atol=1e-8)
    assert_allclose(dualad.jacrev(solution)(t), want, atol=1e-8)
    loss = lambda t: np.sum(solution(t) ** 2)  # noqa: E731
    assert_allclose(dualad.hessian(loss)(t), central(dualad.grad(loss), t), atol=1e-7)
    # one moving time in a list; tfirst: y' = −t y from y(s) = 1 gives e^(−(1 − s²)/2)
    end = dualad.derivative(lambda s: integrate.odeint(
        lambda t, y: -t * y, 1.0, [s, 1.0], tfirst=True, **TOL)[1, 0])(0.5)
    assert_allclose(end, 0.5 * np.exp(-(1 - 0.25) / 2), rtol=1e-9)


def test_parameters_closed_over_by_func():
    def closed(y0, k):
        return integrate.odeint(lambda y, t: -k * y, y0, T, **TOL)

    want = exact_decay_jacobians(Y0, K)
    for transform in (dualad.jacfwd, dualad.jacrev):
        got = transform(closed, argnums=(0, 1))(Y0, K)
        assert_allclose(got[0], want[0], atol=1e-9)
        assert_allclose(got[1], want[1], atol=1e-9)

    def both(theta):  # args and a closure at once, Dfun (primal only) closing over theta
        a, b, c, d = theta
        return integrate.odeint(
            lambda y, t, a, b: [a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]],
            LV0, TLV, args=(a, b), Dfun=lambda y, t, a, b: np.array(
                [[a - b * y[1], -b * y[0]], [d * y[1], d * y[0] - c]]), **TOL)

    assert_allclose(dualad.jacfwd(both)(THETA), dualad.jacfwd(lambda th: solve_lv(LV0, th))(
        THETA), atol=1e-8)
    assert_allclose(dualad.hessian(lambda th: np.sum(both(th) ** 2))(THETA),
                    dualad.hessian(lambda th: np.sum(solve_lv(LV0, th) ** 2))(THETA),
                    atol=1e-7)


def test_a_differentiated_global_is_a_type_error():
    def through_a_global(k):
        global _RATE
        _RATE = k
        return integrate.odeint(lambda y, t: -_RATE * y, Y0, T)

    with pytest.raises(TypeError, match="args="):
        dualad.jacfwd(through_a_global)(K)


def test_dualad_gpu_runs_scipys_solver_on_the_host():
    jax = pytest.importorskip("jax")
    import dualad_gpu
    with jax.enable_x64(True):
        for argnums in (0, 1):
            for transform in ("jacfwd", "jacrev"):
                got = getattr(dualad_gpu, transform)(solve_osc, argnums=argnums)(OSC0, P)
                want = getattr(dualad, transform)(solve_osc, argnums=argnums)(OSC0, P)
                assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)

        closed = lambda k: integrate.odeint(lambda y, t: -k * y, Y0, T, **TOL)  # noqa: E731
        assert_allclose(np.asarray(dualad_gpu.jacrev(closed)(K)), dualad.jacfwd(closed)(K),
                        atol=1e-10)

        def loss(theta):
            return np.sum(solve_lv(LV0, theta) ** 2)
        want = dualad.hessian(loss)(THETA)
        for mode in ("hyperdual", "fwd-rev"):
            got = dualad_gpu.hessian(loss, mode=mode)(THETA)
            assert_allclose(np.asarray(got), want, rtol=1e-7, atol=1e-7)


def test_shapes_as_scipy():
    # a scalar y0 gives (len(t), 1); a 2-D y0 is refused as SciPy refuses it
    got = dualad.derivative(lambda y0: integrate.odeint(decay, y0, T, args=(K,), **TOL))(2.0)
    assert got.shape == (T.size, 1)
    assert_allclose(got[:, 0], np.exp(-K * T), atol=1e-10)
    with pytest.raises(ValueError):
        dualad.jacfwd(lambda y0: integrate.odeint(decay, y0, T, args=(K,)))(np.ones((2, 2)))


def test_the_adjoint_by_vector_jacobian_products(monkeypatch):
    # Past _FORWARD_UP_TO columns of ∂f/∂(y, a) the adjoint pulls each cotangent back by
    # a vjp instead of one batched jacfwd: forced here, the same Jacobian.
    from dualad.solvers import scipy_integrate

    def ends(p):
        rhs = lambda y, t: np.stack([-p[0] * y[0] + p[1] * y[1], -p[2] * y[1]])
        return integrate.odeint(rhs, np.array([1.0, 2.0]), np.array([0.0, 0.5, 1.0]),
                                rtol=1e-11, atol=1e-12)[1:].ravel()

    p = np.array([0.7, 0.3, 1.1])
    expected = dualad.jacrev(ends)(p)
    monkeypatch.setattr(scipy_integrate, "_FORWARD_UP_TO", 0)
    assert_allclose(dualad.jacrev(ends)(p), expected, rtol=1e-9, atol=1e-12)
    assert_allclose(dualad.jacrev(ends)(p), dualad.jacfwd(ends)(p), rtol=1e-7, atol=1e-9)


# Reverse mode reads y from one dense primal solve (solve_ivp's LSODA, what odeint wraps)
# and solves (λ, μ) back only between times where a cotangent enters.

TIGHT = {"rtol": 1e-10, "atol": 1e-12}
T3 = np.linspace(0.0, 4.0, 9)
Y3, P5 = np.array([1.0, 0.5, 0.2]), np.array([0.8, 0.6, 0.3, 0.5, 0.2])


def three_states(y, t, p):  # 3 states, 5 parameters, forced in t
    return np.array([-p[0] * y[0] + p[1] * y[1] * y[2],
                     p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] ** 2,
                     p[2] * y[1] ** 2 - p[3] * y[2] + p[4] * np.sin(t)])


def _losses(times):
    """Losses of odeint's solution: at the final time only, at every time, at some."""
    some = np.zeros(len(times), dtype=bool)
    some[[2, 5]] = True
    weights = np.arange(1.0, 4.0)
    return {"final": lambda ys: np.sum(ys[-1] ** 2),
            "every": lambda ys: np.sum(ys ** 2 * weights),
            "some": lambda ys: np.sum(np.where(some[:, None], ys, 0.0) ** 3)}


@pytest.mark.parametrize("loss", ["final", "every", "some"])
@pytest.mark.parametrize("through", ["args", "y0", "closure"])
def test_odeint_reverse_mode_along_the_interpolant(loss, through):
    measure = _losses(T3)[loss]

    def f(x):
        if through == "args":
            return measure(integrate.odeint(three_states, Y3, T3, args=(x,), **TIGHT))
        if through == "y0":
            return measure(integrate.odeint(three_states, x, T3, args=(P5,), **TIGHT))
        return measure(integrate.odeint(lambda y, t: three_states(y, t, x), Y3, T3, **TIGHT))

    x = Y3 if through == "y0" else P5
    got = dualad.grad(f)(x)
    assert_allclose(got, dualad.jacfwd(f)(x), rtol=1e-7, atol=1e-9)
    assert_allclose(got, central(f, x), rtol=1e-6, atol=1e-7)


def test_odeint_jacrev_decreasing_times_and_repeated_ones():
    t = np.array([3.0, 2.0, 2.0, 0.5, 0.0])  # odeint takes monotone t, repeats allowed

    def solution(p):
        return integrate.odeint(three_states, Y3, t, args=(p,), **TIGHT)

    got = dualad.jacrev(solution)(P5)
    assert_allclose(got, dualad.jacfwd(solution)(P5), rtol=1e-7, atol=1e-9)
    assert_allclose(got, central(solution, P5), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("problem", ["van der Pol", "Robertson"])
def test_odeint_reverse_mode_on_stiff_problems(problem):
    if problem == "van der Pol":  # μ = 10, through args; and y0
        def rhs(y, t, mu):
            return np.array([y[1], mu[0] * (1 - y[0] ** 2) * y[1] - y[0]])
        y0, p, t = np.array([2.0, 0.0]), np.array([10.0]), np.linspace(0.0, 6.0, 13)
    else:
        def rhs(y, t, k):
            return np.array([-k[0] * y[0] + k[2] * y[1] * y[2],
                             k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                             k[1] * y[1] ** 2])
        y0, p, t = np.array([1.0, 0.0, 0.0]), np.array([0.04, 3e7, 1e4]), np.geomspace(
            1e-5, 40.0, 12)
        t = np.concatenate([[0.0], t])
    scale = np.abs(p)  # differentiate in relative parameters (Robertson's span 1e-2..1e7)

    def final(q, y):
        return integrate.odeint(rhs, y, t, args=(q * scale,), **TIGHT)[-1]

    q = np.ones_like(p)
    for argnums, x in ((0, q), (1, y0)):
        got = dualad.jacrev(final, argnums=argnums)(q, y0)
        want = dualad.jacfwd(final, argnums=argnums)(q, y0)
        assert_allclose(got, want, rtol=1e-6, atol=1e-9)
        if problem == "Robertson" and argnums == 1:
            continue  # (y0's differences move y[1] ~ 1e-5 by far too much: jacfwd only)
        moved = (lambda v: final(v, y0)) if argnums == 0 else (lambda v: final(q, v))
        h = 1e-6 if problem == "van der Pol" else 1e-3  # (Robertson: odeint's noise / h)
        assert_allclose(got, central(moved, x, h=h), rtol=1e-5, atol=1e-6)


def test_odeint_final_time_loss_makes_one_backward_solve(monkeypatch):
    from dualad.solvers import scipy_integrate
    calls = []
    solve = scipy_integrate._solve

    def counted(*args, func, **kwargs):
        calls.append(type(func).__name__)
        return solve(*args, func=func, **kwargs)

    monkeypatch.setattr(scipy_integrate, "_solve", counted)
    ivp = scipy_integrate.original("scipy.integrate", "solve_ivp")
    dense = []
    monkeypatch.setattr(scipy_integrate, "original", lambda module, name: (
        lambda *a, **k: dense.append(k.get("dense_output")) or ivp(*a, **k)))
    t = np.linspace(0.0, 4.0, 50)
    measures = _losses(t)
    for loss, backward in (("final", 1), ("some", 3), ("every", 49)):
        calls.clear(), dense.clear()
        dualad.grad(lambda p: measures[loss](integrate.odeint(three_states, Y3, t, args=(p,),
                                                               **TIGHT)))(P5)
        assert calls == ["_Along"] * backward  # (λ, μ) solved back, y read from
        assert dense.count(True) == 1 and len(dense) == 1 + backward  # one dense primal
