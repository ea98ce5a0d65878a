"""filterpy: one predict+update step of each filter, and its helper functions.

A filter case builds the filter with fixed matrices, sets the inputs from ``z``
(the state, a measurement, a noise matrix or the filter's parameters), runs one
step and returns the new state (and covariance, where the input is a noise
matrix). The JAX reference runs the same step on the filter's class with its
methods swapped to ``jax.numpy`` (the autograd column: ``autograd.numpy``); the
case's own glue (``call``, ``step``, ``_ravel_concat``) is swapped too, so that
only the package's code decides whether they run.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator

import numpy as np

from harness import Case
from jax_swap import JAX, swap_class, swap_func, swap_instance

ROOT = "filterpy"
F2 = np.array([[1.0, 0.1], [0.0, 1.0]])
H2 = np.array([[1.0, 0.0]])
P0 = np.array([[2.0, 0.3], [0.3, 1.0]])


def _ravel_concat(parts) -> np.ndarray:
    return np.concatenate([np.ravel(a) for a in parts])


def _kalman_cases() -> list[Case]:
    """KalmanFilter, differentiated with respect to the state, the measurement, R or Q."""
    from filterpy.common import Q_discrete_white_noise
    from filterpy.kalman import KalmanFilter

    def step(z, mode, xp, filter_class, white_noise):
        kf = filter_class(dim_x=2, dim_z=1)
        kf.F = xp.array(F2)
        kf.H = xp.array(H2)
        kf.P = xp.array([[2.0, 0.3], [0.3, 1.0]])
        kf.R = xp.array([[0.5]])
        kf.Q = xp.eye(2) * 0.01
        kf.x = xp.array([[0.5], [1.0]])
        measurement = 0.7
        if mode == "state":
            kf.x = z.reshape(2, 1)
        elif mode == "meas":
            measurement = z.reshape(1, 1)
        elif mode == "R":
            kf.R = z.reshape(1, 1)
        elif mode == "Q":
            kf.Q = white_noise(2, dt=z[0], var=z[1])
        kf.predict()
        kf.update(measurement)
        if mode in ("R", "Q"):
            return xp.concatenate([kf.x.ravel(), kf.P.ravel()])
        return kf.x.ravel()

    def make(mode):
        x0 = {"state": [0.4, 1.2], "meas": [0.7], "R": [0.5], "Q": [0.1, 0.3]}[mode]

        def make_jax(backend=JAX):
            memo = {}
            filter_class = swap_class(KalmanFilter, ROOT, memo, backend)
            white_noise = swap_func(Q_discrete_white_noise, ROOT, memo, backend)
            return lambda z: step(z, mode, backend.numpy, filter_class, white_noise)

        def f(z):
            return step(z, mode, np, KalmanFilter, Q_discrete_white_noise)
        return f, np.array(x0), make_jax

    return [Case(ROOT, f"KalmanFilter.predict+update wrt {mode}", lambda mode=mode: make(mode))
            for mode in ("state", "meas", "R", "Q")]


def _function_case(name: str, fn: Callable, x0, call: Callable) -> Case:
    """The case ``call(fn, x)`` at ``x0``; its JAX or autograd version: ``call(swapped fn, x)``."""
    def make():
        def make_jax(backend=JAX):
            swapped = (swap_func(fn, ROOT, {}, backend) if isinstance(fn, types.FunctionType)
                       else fn)
            glue = swap_func(call, __name__, {}, backend)
            return lambda z: glue(swapped, z)
        return (lambda z: call(fn, z)), np.array(x0, float), make_jax
    return Case(ROOT, name, make)


def _function_cases() -> list[Case]:
    from filterpy import stats
    from filterpy.common import (Q_continuous_white_noise, Q_discrete_white_noise,
                                 linear_ode_discretation, van_loan_discretization)
    from filterpy.discrete_bayes import normalize
    from filterpy.discrete_bayes import predict as bayes_predict
    from filterpy.discrete_bayes import update as bayes_update
    from filterpy.kalman import predict, update

    system = np.array([[0., 1.], [-1., -0.2]])
    c = _function_case
    return [
        c("kalman.predict (functional) wrt x", predict, [0.4, 1.2],
          lambda fn, z: _ravel_concat(fn(z, P0, F2, np.eye(2) * 0.01))),
        c("kalman.update (functional) wrt x,z", update, [0.4, 1.2, 0.7],
          lambda fn, z: _ravel_concat(fn(z[:2], P0, z[2:], np.array([[0.5]]), H2))),
        c("Q_discrete_white_noise dim2", Q_discrete_white_noise, [0.1, 0.3],
          lambda fn, z: fn(2, dt=z[0], var=z[1]).ravel()),
        c("Q_discrete_white_noise dim3", Q_discrete_white_noise, [0.1, 0.3],
          lambda fn, z: fn(3, dt=z[0], var=z[1]).ravel()),
        c("Q_discrete_white_noise dim4 block2", Q_discrete_white_noise, [0.1, 0.3],
          lambda fn, z: fn(4, dt=z[0], var=z[1], block_size=2).ravel()),
        c("Q_continuous_white_noise dim3", Q_continuous_white_noise, [0.1, 0.3],
          lambda fn, z: fn(3, dt=z[0], spectral_density=z[1]).ravel()),
        c("van_loan_discretization wrt dt", van_loan_discretization, [0.1],
          lambda fn, z: _ravel_concat(fn(system, np.array([[0.], [1.]]), z[0]))),
        c("linear_ode_discretation wrt dt", linear_ode_discretation, [0.1],
          lambda fn, z: _ravel_concat(fn(system, L=np.array([[0.], [1.]]),
                                         Q=np.array([[0.3]]), dt=z[0]))),
        c("stats.gaussian", stats.gaussian, [0.3, 0.1, 0.8], lambda fn, z: fn(*z)),
        c("stats.mahalanobis", stats.mahalanobis, [0.3, 0.1, 0.5, -0.2],
          lambda fn, z: fn(z[:2], z[2:], P0)),
        c("stats.logpdf", stats.logpdf, [0.3, 0.1, 0.5, -0.2],
          lambda fn, z: fn(z[:2], z[2:], P0)),
        c("stats.multivariate_gaussian", stats.multivariate_gaussian, [0.3, 0.1, 0.5, -0.2],
          lambda fn, z: fn(z[:2], z[2:], P0)),
        c("stats.multivariate_multiply", stats.multivariate_multiply, [0.3, 0.1, 0.5, -0.2],
          lambda fn, z: _ravel_concat(fn(z[:2], P0, z[2:], 2 * P0))),
        c("stats.mul", stats.mul, [0.3, 0.5, 1.1, 0.7], lambda fn, z: np.hstack(fn(*z))),
        c("stats.add", stats.add, [0.3, 0.5, 1.1, 0.7], lambda fn, z: np.hstack(fn(*z))),
        c("stats.mul_pdf", stats.mul_pdf, [0.3, 0.5, 1.1, 0.7], lambda fn, z: np.hstack(fn(*z))),
        c("stats.norm_cdf", stats.norm_cdf, [0.0, 1.0, 0.3, 0.8],
          lambda fn, z: fn((z[0], z[1]), z[2], z[3])),
        c("stats.covariance_ellipse", stats.covariance_ellipse, [2.0, 0.3, 0.3, 1.0],
          lambda fn, z: np.hstack(fn(z.reshape(2, 2)))),
        c("stats.log_likelihood", stats.log_likelihood, [0.7, 0.2],
          lambda fn, z: fn(np.array([z[0]]), np.array([z[1]]), np.array([[0.5]]))),
        c("discrete_bayes.normalize", normalize, [0.2, 0.5, 0.3, 0.9],
          lambda fn, z: fn(z.copy())),
        c("discrete_bayes.update", bayes_update, [0.2, 0.5, 0.3, 0.9],
          lambda fn, z: fn(z, np.array([0.1, 0.2, 0.3, 0.4]))),
        c("discrete_bayes.predict (wrap)", bayes_predict, [0.2, 0.5, 0.3, 0.9, 0.1],
          lambda fn, z: fn(z, 1, np.array([0.1, 0.8, 0.1]), mode="wrap")),
        c("discrete_bayes.predict (constant)", bayes_predict, [0.2, 0.5, 0.3, 0.9, 0.1],
          lambda fn, z: fn(z, 1, np.array([0.1, 0.8, 0.1]), mode="constant")),
    ]


def _sigma_point_cases() -> list[Case]:
    """Sigma points wrt the mean and the covariance's diagonal; the unscented transform."""
    from filterpy.kalman import (JulierSigmaPoints, MerweScaledSigmaPoints, SimplexSigmaPoints,
                                 spherical_radial_sigmas, unscented_transform)

    def sigma_points_case(name, cls, args):
        def make():
            points = cls(*args)

            def make_jax(backend=JAX):
                swapped = swap_instance(points, ROOT, backend=backend)
                return lambda z: swapped.sigma_points(
                    z[:2], backend.numpy.array([[z[2], 0.3], [0.3, z[3]]])).ravel()

            def f(z):
                return points.sigma_points(z[:2], np.array([[z[2], 0.3], [0.3, z[3]]])).ravel()
            return f, np.array([0.4, 1.2, 2.0, 1.0]), make_jax
        return Case(ROOT, name, make)

    points = MerweScaledSigmaPoints(2, 0.5, 2.0, 1.0)
    sigmas = points.sigma_points(np.array([0.4, 1.2]), P0)
    return [
        sigma_points_case("MerweScaledSigmaPoints.sigma_points", MerweScaledSigmaPoints,
                          (2, 0.1, 2.0, 1.0)),
        sigma_points_case("JulierSigmaPoints.sigma_points", JulierSigmaPoints, (2, 1.0)),
        sigma_points_case("SimplexSigmaPoints.sigma_points", SimplexSigmaPoints, (2,)),
        _function_case("unscented_transform wrt sigmas", unscented_transform, sigmas.ravel(),
                       lambda fn, z: _ravel_concat(fn(z.reshape(5, 2), points.Wm, points.Wc,
                                                      np.eye(2) * 0.01))),
        _function_case("spherical_radial_sigmas", spherical_radial_sigmas,
                       [0.4, 1.2, 2.0, 1.0],
                       lambda fn, z: fn(z[:2], np.array([[z[2], 0.3], [0.3, z[3]]])).ravel()),
    ]


def _filter_case(name: str, build: Callable, step: Callable, x0) -> Case:
    """``step(build(), x)``; for JAX or autograd, ``step`` on the built filter, methods swapped."""
    def make():
        def make_jax(backend=JAX):
            memo = {}
            glue = swap_func(step, __name__, {}, backend)
            return lambda z: glue(swap_instance(build(), ROOT, memo, backend), z)
        return (lambda z: step(build(), z)), np.array(x0, float), make_jax
    return Case(ROOT, name, make)


def _filter_cases() -> list[Case]:
    from filterpy.gh import GHFilter, GHKFilter
    from filterpy.hinfinity import HInfinityFilter
    from filterpy.kalman import (CubatureKalmanFilter, ExtendedKalmanFilter, FadingKalmanFilter,
                                 InformationFilter, MerweScaledSigmaPoints,
                                 SquareRootKalmanFilter, UnscentedKalmanFilter)
    from filterpy.leastsq import LeastSquaresFilter

    def fx(x, dt):
        return np.array([[1, dt], [0, 1]]) @ x

    def hx(x):
        return x[:1]

    def unscented():
        u = UnscentedKalmanFilter(dim_x=2, dim_z=1, dt=0.1, hx=hx, fx=fx,
                                  points=MerweScaledSigmaPoints(2, 0.5, 2.0, 1.0))
        u.P = P0.copy()
        u.R = np.array([[0.5]])
        u.Q = np.eye(2) * 0.01
        return u

    def cubature():
        c = CubatureKalmanFilter(dim_x=2, dim_z=1, dt=0.1, hx=hx, fx=fx)
        c.P = P0.copy()
        c.R = np.array([[0.5]])
        c.Q = np.eye(2) * 0.01
        return c

    def sigma_step(flt, z):
        flt.x = z.copy() if hasattr(z, "copy") else z
        flt.predict()
        flt.update(np.array([0.7]))
        return flt.x

    def extended():
        e = ExtendedKalmanFilter(dim_x=2, dim_z=1)
        e.F = F2.copy()
        e.P = P0.copy()
        e.R = np.array([[0.5]])
        e.Q = np.eye(2) * 0.01
        return e

    def extended_step(e, z):
        e.x = z.reshape(2, 1)
        e.predict_update(np.array([[0.49]]), HJacobian=lambda x: np.array([[2 * x[0, 0], 0.0]]),
                         Hx=lambda x: x[:1] ** 2)
        return e.x.ravel()

    def linear(filter_class, **kwargs):
        def build():
            k = filter_class(dim_x=2, dim_z=1, **kwargs)
            k.F = F2.copy()
            k.H = H2.copy()
            k.R = np.array([[0.5]])
            k.Q = np.eye(2) * 0.01
            if filter_class is InformationFilter:
                k.P_inv = np.linalg.inv(P0)
            else:
                k.P = P0.copy()
            return k
        return build

    def linear_step(k, z):
        k.x = z.reshape(2, 1)
        k.predict()
        k.update(np.array([[0.7]]))
        return k.x.ravel()

    def h_infinity():
        h = HInfinityFilter(dim_x=2, dim_z=1, dim_u=1, gamma=0.01)
        h.F = F2.copy()
        h.H = H2.copy()
        h.P = P0.copy()
        h.V = np.array([[0.5]])
        h.W = np.eye(2) * 0.01
        return h

    def gh_step(g, z):
        g.x = z[0]
        g.dx = z[1]
        return np.hstack(g.update(0.7, g=z[2], h=z[3]))

    def ghk_step(g, z):
        g.x = z[0]
        g.dx = z[1]
        g.ddx = z[2]
        return np.hstack(g.update(0.7))

    def least_squares_step(lsq, z):
        for zi in z:
            lsq.update(zi)
        return np.hstack(lsq.x)

    c = _filter_case
    return [
        c("UnscentedKalmanFilter predict+update wrt x", unscented, sigma_step, [0.4, 1.2]),
        c("CubatureKalmanFilter predict+update wrt x", cubature, sigma_step, [0.4, 1.2]),
        c("ExtendedKalmanFilter.predict_update wrt x", extended, extended_step, [0.4, 1.2]),
        c("InformationFilter predict+update wrt x", linear(InformationFilter), linear_step,
          [0.4, 1.2]),
        c("FadingKalmanFilter predict+update wrt x", linear(FadingKalmanFilter, alpha=1.02),
          linear_step, [0.4, 1.2]),
        c("SquareRootKalmanFilter predict+update wrt x", linear(SquareRootKalmanFilter),
          linear_step, [0.4, 1.2]),
        c("HInfinityFilter predict+update wrt x", h_infinity, linear_step, [0.4, 1.2]),
        c("GHFilter.update wrt x,dx,g,h",
          lambda: GHFilter(x=0.0, dx=1.0, dt=0.1, g=0.6, h=0.02), gh_step,
          [0.4, 1.2, 0.6, 0.02]),
        c("GHKFilter.update wrt x,dx,ddx",
          lambda: GHKFilter(x=0.0, dx=1.0, ddx=0.0, dt=0.1, g=0.6, h=0.02, k=0.001), ghk_step,
          [0.4, 1.2, 0.1]),
        c("LeastSquaresFilter.update x3 wrt z", lambda: LeastSquaresFilter(dt=0.1, order=1),
          least_squares_step, [0.4, 1.2, 1.9]),
    ]


def cases() -> Iterator[Case]:
    yield from _kalman_cases()
    yield from _function_cases()
    yield from _sigma_point_cases()
    yield from _filter_cases()
