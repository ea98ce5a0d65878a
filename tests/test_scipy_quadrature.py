"""scipy.integrate's quadratures differentiated (dualad/rules/scipy_quadrature.py).

The spec rows check quad (closed over, args, limits, infinite ranges), dblquad,
simpson, romb and cumulative_trapezoid against central differences in every mode.
Here: closed forms (Leibniz's rule, a Gaussian integral), breakpoints, SciPy's own
results and warnings where nothing is differentiated, and what is refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

si = pytest.importorskip("scipy.integrate")


def test_leibniz_rule_from_the_limits():
    """d/dp ∫_0^p exp(-x²) dx = exp(-p²), d²/dp² = −2p·exp(-p²)."""
    erf_like = lambda p: si.quad(lambda x: np.exp(-x ** 2), 0.0, p, epsabs=1e-14)[0]
    for p in (0.3, 1.2):
        assert_allclose(dualad.derivative(erf_like)(p), np.exp(-p ** 2), rtol=1e-12)
        assert_allclose(dualad.second_derivative(erf_like)(p), -2 * p * np.exp(-p ** 2),
                        rtol=1e-10)


def test_a_gaussian_integral_over_the_whole_line():
    """∫ exp(−a x² + b x) dx = √(π/a)·exp(b²/4a): its gradient and Hessian."""
    integral = lambda p: si.quad(lambda x: np.exp(-p[0] * x ** 2 + p[1] * x), -np.inf,
                                 np.inf, epsabs=1e-14, epsrel=1e-13)[0]
    closed = lambda p: np.sqrt(np.pi / p[0]) * np.exp(p[1] ** 2 / (4 * p[0]))
    p = np.array([2.0, 0.5])
    assert_allclose(dualad.grad(integral)(p), dualad.grad(closed)(p), rtol=1e-10)
    assert_allclose(dualad.hessian(integral)(p), dualad.hessian(closed)(p), rtol=1e-9)


def test_breakpoints_and_the_value_kept_bit_for_bit():
    kink = lambda p: si.quad(lambda x: np.abs(x - 0.5) * p, 0.0, 1.0, points=[0.5])[0]
    assert_allclose(dualad.derivative(kink)(2.0), 0.25, rtol=1e-14)
    value = dualad.jvp(kink, (2.0,), (1.0,))[0]
    assert dualad.primal_value(value) == si.quad(lambda x: np.abs(x - 0.5) * 2.0, 0.0, 1.0,
                                                 points=[0.5])[0]


def test_nothing_differentiated_is_scipy_s_quad():
    own = si.quad.__wrapped__
    assert si.quad(np.sin, 0.0, 1.0) == own(np.sin, 0.0, 1.0)
    assert len(si.quad(np.sin, 0.0, 1.0, full_output=1)) == 3
    with pytest.warns(si.IntegrationWarning):
        si.quad(lambda x: 1 / np.sqrt(abs(x - 0.3)), 0.0, 1.0, limit=3)


def test_a_weighted_integrand_is_refused_when_differentiated():
    weighted = lambda p: si.quad(lambda x: np.exp(-p * x), 0.0, 1.0, weight="cos", wvar=3.0)[0]
    with pytest.raises(TypeError, match="weighted"):
        dualad.derivative(weighted)(2.0)


def test_simpson_is_not_differentiated_in_its_sample_points():
    with pytest.raises(TypeError, match="not in their positions"):
        dualad.grad(lambda x: si.simpson(np.sin(x), x=x))(np.linspace(0.0, 1.0, 5))
