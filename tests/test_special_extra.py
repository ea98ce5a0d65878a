"""The ufuncs of ``dualad.rules.scipy_special_extra`` beyond their spec rows
(tests/specs_special_extra.py) and their probe against mpmath
(tests/test_special_domains.py): the arguments without a rule raise, ``round`` is a
step, the conventions at huber's second-order kink and at the series' limits, values
kept as SciPy's, and dualad_gpu.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad

sc = pytest.importorskip("scipy.special")

V = np.array([0.7, 1.3])


@pytest.mark.parametrize("f, name, argument", [
    (lambda v: sc.kn(v[0], v[1]), "kn", "n"),
    (lambda v: sc.jve(v[0], v[1]), "jve", "v"),
    (lambda v: sc.yve(v[0], v[1]), "yve", "v"),
    (lambda v: sc.kve(v[0], v[1]), "kve", "v"),
    (lambda v: sc.chdtr(v[0], v[1]), "chdtr", "v"),
    (lambda v: sc.chdtrc(v[0], v[1]), "chdtrc", "v"),
    (lambda v: sc.gdtr(1.0, v[0], v[1]), "gdtr", "b"),
    (lambda v: sc.gdtrc(1.0, v[0], v[1]), "gdtrc", "b"),
    (lambda v: sc.bdtr(v[0], 6.0, v[1] / 2), "bdtr", "k"),
    (lambda v: sc.bdtr(2.0, v[0] + 5, v[1] / 2), "bdtr", "n"),
    (lambda v: sc.nbdtr(v[0], 6.0, v[1] / 2), "nbdtr", "k"),
    (lambda v: sc.nbdtr(2.0, v[0] + 5, v[1] / 2), "nbdtr", "n"),
], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::DeprecationWarning")
def test_arguments_without_a_rule_raise(f, name, argument):
    with pytest.raises(TypeError, match=f"scipy.special.{name} is differentiated .* not in "
                                        f"'{argument}'"):
        dualad.grad(f)(V)


def test_round_is_a_step():
    x = np.array([-1.5, -0.2, 0.0, 0.5, 0.7, 2.5])
    value, tangent = dualad.jvp(sc.round, (x,), (np.ones_like(x),))
    assert_array_equal(value, sc.round(x))
    assert_array_equal(tangent, 0.0)


def test_limits_of_the_series():
    # exprel'(0) = 1/2, exprel''(0) = 1/3; inv_boxcox at λ = 0: eʸ, ∂λ = -y²eʸ/2
    assert dualad.derivative(sc.exprel)(0.0) == pytest.approx(0.5, rel=1e-15)
    assert dualad.hessian(sc.exprel)(0.0) == pytest.approx(1 / 3, rel=1e-15)
    g = dualad.grad(lambda v: sc.inv_boxcox(v[0], v[1]))(np.array([1.5, 0.0]))
    assert_allclose(g, [math.exp(1.5), -1.125 * math.exp(1.5)], rtol=1e-15)
    g = dualad.grad(lambda v: sc.inv_boxcox1p(v[0], v[1]))(np.array([1.5, 0.0]))
    assert_allclose(g, [math.exp(1.5), -1.125 * math.exp(1.5)], rtol=1e-15)
    # the degree functions at multiples of 90°: exact zeros
    assert dualad.derivative(sc.sindg)(90.0) == 0.0
    assert dualad.derivative(sc.cosdg)(180.0) == 0.0


def test_holomorphic_ones_take_complex_arguments():
    z = np.complex128(0.3 + 0.4j)
    assert dualad.derivative(sc.expm1)(z) == pytest.approx(np.exp(z), rel=1e-15)
    assert dualad.derivative(sc.log1p)(z) == pytest.approx(1 / (1 + z), rel=1e-15)
    assert dualad.derivative(sc.erfi)(z) == pytest.approx(
        2 / math.sqrt(math.pi) * np.exp(z * z), rel=1e-15)


def test_huber_takes_the_midpoint_at_its_second_order_kink():
    # huber is C¹: at |r| = δ its second derivatives are the midpoints of both sides'.
    h = dualad.hessian(lambda v: sc.huber(v[0], v[1]))(np.array([1.0, -1.0]))
    assert_allclose(h, [[-0.5, -0.5], [-0.5, 0.5]])
    g = dualad.grad(lambda v: sc.huber(v[0], v[1]))(np.array([1.0, -3.0]))
    assert_allclose(g, [2.0, -1.0])


@pytest.mark.parametrize("f, args", [
    (sc.exprel, (np.array([-3.0, 0.0, 1e-9, 2.0]),)),
    (sc.tandg, (np.array([45.0, 89.999, 135.0]),)),
    (sc.inv_boxcox, (np.array([0.4, 1.4, 2.0]), np.array([-0.3, 0.0, 1.3]))),
    (sc.huber, (np.array([1.0, 0.5, 2.0]), np.array([-0.7, 1.0, 3.0]))),
    (lambda x: sc.kve(2.5, x), (np.array([0.4, 30.0, 70.0]),)),
    (lambda a, x: sc.gdtr(a, 2.5, x), (np.array([0.4, 1.4, 2.0]), np.array([0.1, 1.0, 5.0]))),
])
def test_values_are_scipys(f, args):
    value, _ = dualad.jvp(f, args, tuple(np.ones_like(a) for a in args))
    assert_array_equal(value, f(*args))


GPU_CALLS = {
    "elementary": lambda v: (
        sc.expm1(v[0]) + sc.log1p(v[1]) + sc.cbrt(v[0]) + sc.exprel(v[1]) + sc.cosm1(v[0])
        + sc.powm1(v[1], v[0]) + sc.sindg(50 * v[0]) + sc.cosdg(50 * v[1])
        + sc.tandg(30 * v[0]) + sc.cotdg(30 * v[1]) + sc.radian(v[0], v[1], 3.0)
        + sc.zetac(v[1] + 1.0) + sc.erfi(v[0]) + sc.inv_boxcox(v[0], v[1] - 1.0)
        + sc.inv_boxcox1p(v[0], v[1]) + sc.huber(v[1], v[0]) + sc.round(v[0]) * v[1]),
    "bessel": lambda v: (
        sc.k0(v[0]) + sc.k1(v[1]) + sc.k0e(v[0]) + sc.k1e(v[1]) + sc.kn(2, v[0])
        + sc.jve(1.5, v[1]) + sc.yve(0.0, v[1]) + sc.kve(2.5, v[0]) + sc.k0e(60 * v[1])),
    "distributions": lambda v: (
        sc.chdtr(3.0, v[0]) + sc.chdtrc(2.0, v[1]) + sc.gdtr(v[0], 2.5, v[1])
        + sc.gdtrc(v[1], 0.7, v[0]) + sc.bdtr(2, 6, v[0] / 2) + sc.nbdtr(2, 6, v[1] / 2)),
}


@pytest.mark.parametrize("f", GPU_CALLS.values(), ids=GPU_CALLS.keys())
def test_dualad_gpu_gives_dualads_numbers(f):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    assert_allclose(dualad_gpu.grad(f)(V), dualad.grad(f)(V), rtol=1e-12)
    assert_allclose(dualad_gpu.hessian(f)(V), dualad.hessian(f)(V), rtol=1e-12, atol=1e-14)
