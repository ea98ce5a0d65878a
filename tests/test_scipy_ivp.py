"""scipy.integrate.solve_ivp differentiated (dualad/solvers/scipy_ivp.py).

Checked against closed forms (a linear decay with a source), central differences of
SciPy's own solve_ivp at tight tolerances, forward against reverse mode, hyper-dual
Hessians against differences of the gradient, and jax.experimental.ode.odeint
(another solver: agreement to ~1e-6). Every method; every way a parameter reaches
the right-hand side; t_span's ends, events and the dense solution.
"""

import functools

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad
from test_scipy_integrate import central

integrate = pytest.importorskip("scipy.integrate")
solve_ivp = integrate.solve_ivp

TIGHT = {"rtol": 1e-11, "atol": 1e-12}
METHODS = ("RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA")
P = np.array([2.0, 0.5])


def decay(p, method="RK45", **options):
    """y' = −k y + c, y(0) = 1 at t = 1: c/k + (1 − c/k) e^(−k)."""
    options = options or TIGHT
    return solve_ivp(lambda t, y: -p[0] * y + p[1], (0.0, 1.0), [1.0], method=method,
                     **options).y[:, -1]


def decay_exact(p):
    k, c = p
    return np.array([c / k + (1 - c / k) * np.exp(-k)])


def lotka_volterra(p, t_eval=None):
    a, b, c, d = p
    rhs = lambda t, y: [a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]]  # noqa: E731
    return solve_ivp(rhs, (0.0, 3.0), [1.0, 0.5], t_eval=t_eval, **TIGHT).y


THETA = np.array([1.1, 0.4, 0.9, 0.3])
T_OBS = np.linspace(0.5, 3.0, 6)


def assert_derivatives(f, p, rtol=1e-6, atol=1e-8):
    """jacfwd and jacrev of ``f`` agree with central differences of it."""
    want = central(f, p)
    assert_allclose(dualad.jacfwd(f)(p), want, rtol=rtol, atol=atol)
    assert_allclose(dualad.jacrev(f)(p), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_against_the_closed_form(method):
    want = dualad.jacfwd(decay_exact)(P)
    tol = 1e-8 if method in ("BDF", "LSODA") else 1e-9
    assert_allclose(dualad.jacfwd(lambda p: decay(p, method))(P), want, atol=tol)
    assert_allclose(dualad.jacrev(lambda p: decay(p, method))(P), want, atol=tol)
    assert_allclose(dualad.jacrev(lambda p: decay(p, method))(P), want, atol=tol)


def test_values_are_scipys_own_and_nothing_differentiated_is_untouched():
    captured = {}

    def keep(p):
        captured["result"] = solve_ivp(lambda t, y: -p[0] * y + p[1], (0.0, 1.0), [1.0])
        return captured["result"].y[:, -1]

    dualad.jacfwd(keep)(P)
    own = solve_ivp(lambda t, y: -P[0] * y + P[1], (0.0, 1.0), [1.0])
    got = captured["result"]
    assert set(got.keys()) == set(own.keys())
    assert np.array_equal(dualad.primal_value(got.y), own.y)
    assert np.array_equal(got.t, own.t) and got.nfev == own.nfev
    plain = solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0])
    assert type(plain.y) is np.ndarray


def test_lotka_volterra_trajectory_and_hessian():
    assert_derivatives(lambda p: lotka_volterra(p, T_OBS), THETA)
    loss = lambda p: np.sum(lotka_volterra(p, T_OBS) ** 2)  # noqa: E731
    h = dualad.hessian(loss)(THETA)
    assert_allclose(h, h.T, atol=1e-9)
    assert_allclose(h, central(dualad.grad(loss), THETA), rtol=1e-5, atol=1e-6)
    assert_allclose(dualad.jacfwd(dualad.grad(loss))(THETA), h, atol=1e-8)


def test_against_jax_experimental_ode():
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint
    jnp = jax.numpy

    def rhs(y, t, a, b, c, d):
        return jnp.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])

    times = np.concatenate([[0.0], T_OBS])
    with jax.enable_x64(True):
        want = jax.jacrev(lambda th: jax_odeint(rhs, jnp.array([1.0, 0.5]), jnp.asarray(times),
                                                *th, rtol=1e-11, atol=1e-11)[1:].T)(
            jnp.asarray(THETA))
    got = dualad.jacfwd(lambda p: lotka_volterra(p, T_OBS))(THETA)
    assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-7)


class Decay:
    def __init__(self, k, c):
        self.k, self.c = k, c

    def rhs(self, t, y):
        return -self.k * y + self.c

    __call__ = rhs


def _source(t, y, k, c):
    return -k * y + c


def _helper_closure(p):
    params = {"k": p[0], "c": p[1]}

    def loss(y):
        return -params["k"] * y

    return lambda t, y: loss(y) + params["c"]


def _filled(p):
    q = np.zeros(2)
    q[0], q[1] = p[0], p[1]
    return lambda t, y: -q[0] * y + q[1]


PASSED = {
    "args": lambda p: solve_ivp(_source, (0, 1), [1.0], args=(p[0], p[1]), **TIGHT),
    "partial": lambda p: solve_ivp(functools.partial(_source, k=p[0], c=p[1]), (0, 1),
                                   [1.0], **TIGHT),
    "bound method": lambda p: solve_ivp(Decay(p[0], p[1]).rhs, (0, 1), [1.0], **TIGHT),
    "callable object": lambda p: solve_ivp(Decay(p[0], p[1]), (0, 1), [1.0], **TIGHT),
    "a helper's closure": lambda p: solve_ivp(_helper_closure(p), (0, 1), [1.0], **TIGHT),
    "an array filled with Duals": lambda p: solve_ivp(_filled(p), (0, 1), [1.0], **TIGHT),
}


@pytest.mark.parametrize("how", PASSED)
def test_every_way_a_parameter_reaches_the_right_hand_side(how):
    want = dualad.jacfwd(decay_exact)(P)
    f = lambda p: PASSED[how](p).y[:, -1]  # noqa: E731
    assert_allclose(dualad.jacfwd(f)(P), want, atol=1e-9)
    assert_allclose(dualad.jacrev(f)(P), want, atol=1e-9)
    assert_allclose(dualad.jacfwd(f)(2 * P), dualad.jacfwd(decay_exact)(2 * P), atol=1e-9)


def test_y0_and_t_span_in_the_parameters():
    def solution(q):  # (y0, t0, t1, k)
        r = solve_ivp(lambda t, y: -q[3] * y * np.sin(t), (q[1], q[2]), [q[0]], **TIGHT)
        return np.concatenate([r.y[:, -1], r.y[:, 0], r.t[[0, -1]]])

    q = np.array([1.5, 0.3, 1.7, 0.8])
    assert_derivatives(solution, q)
    end = lambda q: solution(q)[0]  # noqa: E731
    assert_allclose(dualad.hessian(end)(q), central(dualad.grad(end), q), rtol=1e-5,
                    atol=1e-6)


def test_t_eval_with_a_moving_start():
    def at_times(q):
        return solve_ivp(lambda t, y: -q[0] * y * np.sin(t), (q[1], 2.0), [1.0],
                         t_eval=[0.5, 1.0, 1.5], **TIGHT).y.ravel()

    assert_derivatives(at_times, np.array([0.8, 0.3]), atol=1e-7)


def _bounce(p):
    """A ball thrown up at p[1] with gravity p[0] and drag p[2]: the time and state at
    which it lands (a terminal event, direction −1)."""
    def ground(t, y):
        return y[0]
    ground.terminal, ground.direction = True, -1
    r = solve_ivp(lambda t, y: [y[1], -p[0] - p[2] * y[1]], (0, 10), [0.0, p[1]],
                  events=ground, **TIGHT)
    assert r.status == 1
    return np.concatenate([r.t_events[0], r.y_events[0][0], r.t[-1:], r.y[:, -1]])


def test_a_terminal_event_and_its_time():
    p = np.array([9.81, 5.0, 0.1])
    assert_derivatives(_bounce, p)
    land = lambda p: _bounce(p)[0]  # noqa: E731
    # without drag T = 2v/g, and dT/d(drag) = −2v²/(3g²) (first order in the drag)
    assert_allclose(dualad.grad(land)(np.array([9.81, 5.0, 0.0])),
                    [-2 * 5.0 / 9.81 ** 2, 2 / 9.81, -2 * 5.0 ** 2 / (3 * 9.81 ** 2)],
                    rtol=1e-7)
    assert_allclose(dualad.hessian(land)(p), central(dualad.grad(land), p), rtol=1e-5,
                    atol=1e-6)


def test_events_that_close_over_the_parameters():
    def crossings(p):
        level = lambda t, y: y[0] - p[1]  # noqa: E731
        r = solve_ivp(lambda t, y: [y[1], -p[0] * y[0]], (0, 5), [1.0, 0.0], events=level,
                      **TIGHT)
        assert len(r.t_events[0]) >= 2
        return np.concatenate([r.t_events[0], r.y_events[0][:, 1]])

    assert_derivatives(crossings, np.array([2.0, 0.3]))


def test_dense_output_evaluates_to_duals():
    def dense(p):
        r = solve_ivp(lambda t, y: -p[0] * y * np.cos(t) + p[1], (0, 3), [1.0],
                      dense_output=True, **TIGHT)
        assert r.sol.t_min == 0 and r.sol.t_max == 3
        return np.concatenate([r.sol(1.3), r.sol(np.array([0.5, 2.5])).ravel(),
                               r.sol(p[1] + 1.0)])

    assert_derivatives(dense, P, atol=1e-7)


def test_replayed_calls_follow_the_parameters():
    jac = dualad.jacfwd(lambda p: decay(p))
    for scale in (1.0, 2.0, 3.0, 1.0):
        assert_allclose(jac(scale * P), dualad.jacfwd(decay_exact)(scale * P), atol=1e-9)


def test_float32_parameters():
    got = dualad.jacfwd(lambda p: decay(p))(P.astype(np.float32))
    assert_allclose(got, dualad.jacfwd(decay_exact)(P), rtol=1e-5)


def test_a_differentiated_global_is_a_type_error():
    def through_a_global(p):
        global _RATE
        _RATE = p
        return solve_ivp(lambda t, y: -_RATE[0] * y, (0, 1), [1.0]).y[:, -1]

    with pytest.raises(TypeError, match="args="):
        dualad.jacfwd(through_a_global)(P)


def test_the_adjoint_is_as_accurate_as_forward_mode():
    # Lotka–Volterra at 21 times, parameters unpacked into NumPy scalars (which once
    # sent the adjoint down its slower, less accurate path). The adjoint reads y from
    # a primal solved a hundred times more tightly: its error was 2.3e-7 here.
    t_obs = np.linspace(0.0, 20.0, 21)

    def model(p, **tolerances):
        a, b, d, g = p
        rhs = lambda t, y: [a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - g * y[1]]
        return solve_ivp(rhs, (0.0, 20.0), [10.0, 5.0], t_eval=t_obs, **tolerances).y

    p = np.array([0.8, 0.3, 0.15, 0.6])
    reference = dualad.jacfwd(lambda p: model(p, rtol=1e-13, atol=1e-13, method="DOP853"))(p)
    error = lambda J: np.abs(J - reference).max() / np.abs(reference).max()
    f = lambda p: model(p, rtol=1e-8, atol=1e-10)
    assert error(dualad.jacfwd(f)(p)) < 2e-8
    assert error(dualad.jacrev(f)(p)) < 2e-8


def test_moving_t_eval():
    # y' = −y, y(0) = 1: y(t) = e^(−t) at the moving times p, and t itself is p.
    at = lambda p: solve_ivp(lambda t, y: -y, (0, 2), [1.0], t_eval=p, **TIGHT)
    p = np.array([0.5, 1.0, 1.7])
    assert_allclose(dualad.jacfwd(lambda p: at(p).y[0])(p), np.diag(-np.exp(-p)), atol=1e-9)
    assert_allclose(dualad.jacrev(lambda p: at(p).y[0])(p), np.diag(-np.exp(-p)), atol=1e-9)
    assert_allclose(dualad.jacfwd(lambda p: at(p).t)(p), np.eye(3))
    assert_allclose(dualad.hessian(lambda p: at(p).y[0, 1])(p),
                    np.diag([0.0, np.exp(-1.0), 0.0]), atol=1e-8)
    # A list of times, some moving, with parameters in the right-hand side too.
    mixed = lambda q: solve_ivp(lambda t, y: -q[0] * y * np.sin(t), (0.0, 2.0), [1.0],
                                t_eval=[0.5, q[1], 1.5], **TIGHT).y.ravel()
    assert_derivatives(mixed, np.array([0.8, 1.1]), atol=1e-7)
    # The primal is SciPy's, bit for bit.
    kept = []
    dualad.jacfwd(lambda p: kept.append(dualad.primal_value(at(p).y)) or at(p).y[0])(p)
    assert np.array_equal(kept[0], at(p).y)


def test_what_has_no_derivative_is_a_type_error():
    with pytest.raises(TypeError, match="failed"):
        # y' = k y² blows up at t = 1/k, inside (0, 2)
        dualad.jacfwd(lambda p: solve_ivp(lambda t, y: p[0] * y ** 2, (0, 2),
                                          [1.0]).y[:, -1])(np.array([1.0]))


def test_the_callbacks_writes_land_in_the_users_objects():
    # SciPy's solve runs the user's own object: a count kept on it counts that solve
    class Counted:
        def __init__(self, k):
            self.k, self.calls = k, 0

        def rhs(self, t, y):
            self.calls += 1
            return -self.k * y

    seen = {}

    def solution(p):
        model = Counted(p[0])
        r = solve_ivp(model.rhs, (0, 1), [1.0], **TIGHT)
        seen["calls"], seen["nfev"] = model.calls, r.nfev
        return r.y[:, -1]

    assert_allclose(dualad.jacfwd(solution)(P), [[-np.exp(-P[0]), 0.0]], rtol=1e-9)
    assert seen["calls"] >= seen["nfev"] > 0


# ---------------------------------------------------------------------------
# sol (dense_output=True): one sensitivity solve, then interpolation
# ---------------------------------------------------------------------------


def _predator_prey(p, method="RK45", t_span=(0.0, 3.0), counter=None):
    """Lotka–Volterra with three parameters, its dense solution (``counter``: a list
    whose first entry counts the right-hand side's calls)."""
    a, b, c = p[0], p[1], p[2]

    def rhs(t, y):
        if counter is not None:
            counter[0] += 1
        return [a * y[0] - b * y[0] * y[1], 0.3 * y[0] * y[1] - c * y[1]]

    return solve_ivp(rhs, t_span, [1.0, 0.5], method=method, dense_output=True,
                     **TIGHT).sol


Q = np.array([1.1, 0.4, 0.9])


def _at_times(sol, t_span=(0.0, 3.0)):
    """sol at a scalar time, at an array of times (unsorted, one repeated, both ends)
    and just outside both ends (where SciPy extrapolates)."""
    lo, hi = min(t_span), max(t_span)
    inside = lo + (hi - lo) * np.array([0.83, 0.07, 0.43, 1.0, 0.0])
    return np.concatenate([sol(inside[2]), sol(inside).ravel(),
                           sol(np.array([lo - 1e-4, hi + 1e-4])).ravel()])


TRANSFORMS = {
    "jacfwd": dualad.jacfwd,
    "jacrev": dualad.jacrev,
    "hessian": lambda f: dualad.hessian(lambda p: np.sum(f(p) ** 2)),
    "jacfwd of grad": lambda f: dualad.jacfwd(dualad.grad(lambda p: np.sum(f(p) ** 2))),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_sol_solves_once_then_only_interpolates(transform):
    counts = []

    def three_calls(p):
        calls = [0]
        sol = _predator_prey(p, counter=calls)
        out = []
        for t in (1.3, np.array([0.5, 2.0, 2.9]), 0.1):
            out.append(np.ravel(sol(t)))
            counts.append(calls[0])
        return np.concatenate(out)

    TRANSFORMS[transform](three_calls)(Q)
    # The first call solved (the sensitivities, dense): later ones call fun no more.
    assert counts[0] > 0 and counts[1:] == counts[:1] * 2


@pytest.mark.parametrize("method", METHODS)
def test_sol_against_central_differences_every_method(method):
    span = (0.0, 1.5)  # (RK23 takes small steps at these tolerances)
    f = lambda p: _at_times(_predator_prey(p, method, span), span)  # noqa: E731
    assert_derivatives(f, Q, atol=1e-7)


def test_sol_backwards_and_its_hessian():
    span = (3.0, 0.0)
    f = lambda p: _at_times(_predator_prey(p, t_span=span), span)  # noqa: E731
    assert_derivatives(f, Q, atol=1e-7)
    loss = lambda p: np.sum(_at_times(_predator_prey(p)) ** 2)  # noqa: E731
    h = dualad.hessian(loss)(Q)
    assert_allclose(h, central(dualad.grad(loss), Q), rtol=1e-5, atol=1e-6)
    assert_allclose(dualad.jacfwd(dualad.grad(loss))(Q), h, atol=1e-8)


def test_sol_at_a_moving_time():
    def at(q):  # the parameters, then two times
        sol = _predator_prey(q[:3])
        return np.concatenate([sol(q[3]), sol(q[3:]).ravel(), sol(np.array([q[4], 1.0]))[0]])

    q = np.concatenate([Q, [0.7, 2.2]])
    assert_derivatives(at, q, atol=1e-7)
    # d sol(t)/dt is the right-hand side there
    y = _predator_prey(Q)(0.7)
    want = [Q[0] * y[0] - Q[1] * y[0] * y[1], 0.3 * y[0] * y[1] - Q[2] * y[1]]
    assert_allclose(dualad.jacfwd(at)(q)[:2, 3], want, rtol=1e-8)
    first = lambda q: _predator_prey(q[:3])(q[3])[0]  # noqa: E731
    assert_allclose(dualad.hessian(first)(q[:4]), central(dualad.grad(first), q[:4]),
                    rtol=1e-5, atol=1e-6)
