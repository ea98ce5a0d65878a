"""np.fft in forward and reverse mode, against JAX (float64) and finite differences."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RTOL, ATOL = 1e-10, 1e-10

# (name, input dtypes, shape, keyword arguments): "r" real, "c" complex input.
# rfft/ihfft/rfftn take real arrays, irfft/hfft/irfftn complex ones (and real
# ones: the last rows); fft, ifft, ... either.
CASES = [
    ("fft", "rc", (6,), {}),
    ("fft", "c", (6,), {"n": 4, "norm": "ortho"}),
    ("fft", "r", (5,), {"n": 8, "norm": "forward"}),
    ("fft", "c", (3, 5), {"axis": 0, "norm": "backward"}),
    ("fft", "r", (3, 5), {"axis": -2, "n": 7}),
    ("fft", "c", (2, 3, 4), {"axis": 1, "n": 2, "norm": "ortho"}),
    ("ifft", "rc", (6,), {}),
    ("ifft", "r", (7,), {"n": 4, "norm": "forward"}),
    ("ifft", "c", (3, 4), {"axis": 0, "n": 6, "norm": "ortho"}),
    ("rfft", "r", (6,), {}),
    ("rfft", "r", (7,), {"norm": "ortho"}),
    ("rfft", "r", (6,), {"n": 9, "norm": "forward"}),
    ("rfft", "r", (8,), {"n": 5}),
    ("rfft", "r", (4, 5), {"axis": 0, "n": 6, "norm": "ortho"}),
    ("irfft", "c", (6,), {}),
    ("irfft", "c", (5,), {"n": 9, "norm": "ortho"}),
    ("irfft", "c", (4,), {"n": 12, "norm": "forward"}),
    ("irfft", "c", (6,), {"n": 4}),
    ("irfft", "c", (6,), {"n": 5, "norm": "backward"}),
    ("irfft", "c", (2, 4, 3), {"axis": -2, "n": 7}),
    ("hfft", "c", (6,), {}),
    ("hfft", "c", (4,), {"n": 7, "norm": "ortho"}),
    ("hfft", "c", (6, 3), {"axis": 0, "n": 4, "norm": "forward"}),
    ("ihfft", "r", (6,), {}),
    ("ihfft", "r", (5,), {"n": 8, "norm": "ortho"}),
    ("ihfft", "r", (3, 7), {"axis": 1, "n": 4, "norm": "forward"}),
    ("fft2", "c", (3, 4), {}),
    ("fft2", "r", (2, 3, 4), {"s": (4, 2), "norm": "ortho"}),
    ("fft2", "c", (3, 4, 2), {"axes": (0, -1), "norm": "forward"}),
    ("ifft2", "r", (3, 4), {"s": (5, 3)}),
    ("ifft2", "c", (2, 3, 4), {"axes": (-1, 0), "norm": "ortho"}),
    ("fftn", "r", (2, 3, 4), {}),
    ("fftn", "c", (2, 3, 4), {"s": (4, 2), "axes": (2, 0), "norm": "ortho"}),
    ("fftn", "r", (3, 4), {"axes": (-1,), "norm": "forward"}),
    ("ifftn", "c", (2, 3, 4), {"s": (3, 5, 2), "axes": (0, 1, 2)}),
    ("ifftn", "r", (2, 3, 4), {"axes": (1, -1), "norm": "forward"}),
    ("rfft2", "r", (3, 4), {}),
    ("rfft2", "r", (2, 5, 4), {"s": (3, 6), "norm": "ortho"}),
    ("rfftn", "r", (2, 3, 5), {}),
    ("rfftn", "r", (2, 3, 4), {"s": (4, 3), "axes": (-1, 0), "norm": "forward"}),
    ("rfftn", "r", (3, 4), {"axes": (0,)}),
    ("irfft2", "c", (3, 4), {}),
    ("irfft2", "c", (2, 3, 4), {"s": (4, 5), "norm": "ortho"}),
    ("irfftn", "c", (2, 3, 4), {}),
    ("irfftn", "c", (2, 3, 4), {"s": (3, 6), "axes": (0, 2), "norm": "forward"}),
    ("irfftn", "c", (4, 3), {"s": (2, 3), "axes": (-1, -2), "norm": "ortho"}),
    ("fftshift", "r", (5,), {}),
    ("fftshift", "c", (4, 5), {"axes": 0}),
    ("ifftshift", "c", (4, 5), {}),
    ("ifftshift", "r", (3, 4, 5), {"axes": (-1, 1)}),
    ("irfft", "r", (5,), {"n": 7}),
    ("hfft", "r", (4,), {}),
    ("irfftn", "r", (3, 4), {"norm": "ortho"}),
]

INPUTS = [pytest.param(name, dtype, shape, kw, id=f"{name}-{dtype}-{shape}-{kw}")
          for name, dtypes, shape, kw in CASES for dtype in dtypes]
REAL_INPUTS = [p for p in INPUTS if p.values[1] == "r"]


def _random(rng, shape, dtype):
    x = rng.normal(size=shape)
    return x + 1j * rng.normal(size=shape) if dtype in ("c", "complex") else x


def _functions(name, kw):
    np_fun, jnp_fun = getattr(np.fft, name), getattr(jnp.fft, name)
    return (lambda x: np_fun(x, **kw)), (lambda x: jnp_fun(x, **kw))


def _loss(xp, fun, w):
    """A real scalar of the transform, linear and quadratic in it."""
    def loss(x):
        y = fun(x)
        return xp.sum(xp.real(y * w)) + 0.5 * xp.sum(xp.abs(y) ** 2)
    return loss


class Case:
    """One row of CASES with its inputs (seeded by the row) and JAX's numbers."""

    def __init__(self, name, dtype, shape, kw):
        rng = np.random.default_rng(sum(map(ord, repr((name, dtype, shape, kw)))))
        self.f, jf = _functions(name, kw)
        self.x = _random(rng, shape, dtype)
        self.t = _random(rng, shape, dtype)
        y = self.f(self.x)
        self.ct = _random(rng, y.shape, "complex" if np.iscomplexobj(y) else "real")
        self.w = _random(rng, y.shape, "complex")
        self.loss = _loss(np, self.f, self.w)

        def references(x, t, ct, w):  # one compilation per case: JAX is slow to compile
            out = dict(zip(("y", "ty"), jax.jvp(jf, (x,), (t,))))
            out["ct"] = jax.vjp(jf, x)[1](ct)[0]
            out["loss"], out["grad"] = jax.value_and_grad(_loss(jnp, jf, w))(x)
            if not np.iscomplexobj(x):
                out["jacobian"] = jax.jacfwd(jf)(x)
            return out

        self.jax = {k: np.asarray(v) for k, v in
                    jax.jit(references)(self.x, self.t, self.ct, self.w).items()}


_CASES = {}


def case(name, dtype, shape, kw) -> Case:
    key = (name, dtype, shape, repr(kw))
    if key not in _CASES:
        _CASES[key] = Case(name, dtype, shape, kw)
    return _CASES[key]


def _close(actual, expected):
    assert np.shape(actual) == np.shape(expected)
    assert np.iscomplexobj(actual) == np.iscomplexobj(expected)
    assert_allclose(actual, np.asarray(expected), rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------
# Values, jvp, vjp, jacobians and gradients against JAX
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, dtype, shape, kw", INPUTS)
def test_jvp_against_jax_and_finite_differences(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    y, ty = dualad.jvp(c.f, (c.x,), (c.t,))
    _close(y, c.f(c.x))
    _close(y, c.jax["y"])
    _close(ty, c.jax["ty"])
    h = 1e-3  # the transforms are linear: central differences are exact up to rounding
    assert_allclose(ty, (c.f(c.x + h * c.t) - c.f(c.x - h * c.t)) / (2 * h), rtol=1e-8,
                    atol=1e-8)


@pytest.mark.parametrize("name, dtype, shape, kw", INPUTS)
def test_vjp_against_jax(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    y, pullback = dualad.vjp(c.f, c.x)
    (got,) = pullback(c.ct)
    _close(got, c.jax["ct"])
    assert got.dtype == c.x.dtype


@pytest.mark.parametrize("name, dtype, shape, kw", REAL_INPUTS)
def test_jacfwd_against_jax(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    _close(dualad.jacfwd(c.f)(c.x), c.jax["jacobian"])


@pytest.mark.parametrize("name, dtype, shape, kw", INPUTS)
def test_grad_against_jax(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    value, gradient = dualad.value_and_grad(c.loss)(c.x)
    assert_allclose(value, c.jax["loss"], rtol=RTOL)
    _close(gradient, c.jax["grad"])
    _close(dualad.grad(c.loss)(c.x), c.jax["grad"])  # a second call may replay the first


@pytest.mark.parametrize("name, kw", [
    ("fft", {"n": 4, "norm": "ortho"}), ("ifft", {"axis": 0, "n": 7}), ("fft2", {"s": (3, 5)}),
    ("ifftn", {"axes": (1,), "norm": "forward"}), ("fftshift", {})])
def test_holomorphic_jacobians_against_jax(name, kw):
    z = _random(np.random.default_rng(6), (3, 4), "complex")
    f, jf = _functions(name, kw)
    expected = np.asarray(jax.jit(jax.jacrev(jf, holomorphic=True))(z))
    _close(dualad.jacrev(f, holomorphic=True)(z), expected)
    _close(dualad.jacfwd(f, holomorphic=True)(z), expected)


def test_jacrev_of_real_outputs_against_jax():
    rng = np.random.default_rng(1)
    z = _random(rng, (3, 4), "complex")
    x = rng.normal(size=7)
    for f, jf, arg in [
            (lambda z: np.fft.irfft(z, n=5, axis=0), lambda z: jnp.fft.irfft(z, n=5, axis=0), z),
            (lambda z: np.fft.hfft(z, norm="ortho"), lambda z: jnp.fft.hfft(z, norm="ortho"), z),
            (lambda x: np.imag(np.fft.rfft(x, n=8)), lambda x: jnp.imag(jnp.fft.rfft(x, n=8)), x),
    ]:
        _close(dualad.jacrev(f)(arg), jax.jit(jax.jacrev(jf))(arg))


@pytest.mark.parametrize("fun", ["rfft", "rfft2"])
def test_gradient_of_the_power_spectrum(fun):
    x = np.random.default_rng(2).normal(size=(4, 6))
    f = lambda x, xp: xp.sum(xp.abs(getattr(xp.fft, fun)(x)) ** 2)
    expected = jax.jit(jax.grad(lambda x: f(x, jnp)))(x)
    _close(dualad.grad(f)(x, np), expected)
    z = x[:, :3] + 1j * x[:, 3:]  # and of a complex input, through fft
    g = lambda z, xp: xp.sum(xp.abs(getattr(xp.fft, fun.replace("r", "", 1))(z)) ** 2)
    _close(dualad.grad(g)(z, np), jax.jit(jax.grad(lambda z: g(z, jnp)))(z))


def test_convolution_theorem_gradient():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=6), rng.normal(size=5)
    n = a.size + b.size - 1

    def conv(xp):
        return lambda a, b: xp.sum(xp.sin(xp.fft.irfft(xp.fft.rfft(a, n) * xp.fft.rfft(b, n), n)))

    got = dualad.grad(conv(np), argnums=(0, 1))(a, b)
    expected = jax.jit(jax.grad(conv(jnp), argnums=(0, 1)))(a, b)
    for g, e in zip(got, expected):
        _close(g, e)
    assert_allclose(np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n), np.convolve(a, b))


SECOND_ORDER = [
    lambda x, xp: (xp.sum(xp.abs(xp.fft.rfft(xp.sin(x), n=8)) ** 2)
                   + xp.sum(xp.fft.irfft(xp.fft.fft(x * x)[:4], n=5) ** 3)),
    lambda x, xp: (xp.sum(xp.fft.hfft(xp.fft.ihfft(x * x), n=5) ** 3)
                   + xp.sum(xp.real(xp.exp(0.3j * xp.fft.fftshift(xp.fft.fft2(xp.outer(x, x))))))),
]


@pytest.mark.parametrize("f", SECOND_ORDER)
def test_hessian_through_the_fft(f):
    x = np.random.default_rng(5).normal(size=6)
    expected = jax.jit(jax.hessian(lambda x: f(x, jnp)))(x)
    for mode in ("hyperdual", "fwd-rev"):
        _close(dualad.hessian(f, mode=mode)(x, np), expected)


# ---------------------------------------------------------------------------
# Batched seeds, dtypes, inputs left alone
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, dtype, shape, kw", [p for p in INPUTS if len(p.values[2]) > 1])
def test_batched_jvp_matches_separate_jvps(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    seeds = np.stack([c.t, c.x, np.ones_like(c.x)])
    _, batched = dualad.jvp(c.f, (c.x,), (seeds,), batched=True)
    for k, t in enumerate(seeds):
        _close(batched[k], dualad.jvp(c.f, (c.x,), (t,))[1])


@pytest.mark.parametrize("name, dtype, shape, kw", INPUTS[::2])
def test_single_precision_stays_single(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    single = np.complex64 if dtype == "c" else np.float32
    x, t = c.x.astype(single), c.t.astype(single)
    y, ty = dualad.jvp(c.f, (x,), (t,))
    assert y.dtype == ty.dtype == c.f(x).dtype
    assert y.dtype in (np.float32, np.complex64)
    assert_allclose(ty, c.jax["ty"], rtol=1e-4, atol=1e-4)
    _, pullback = dualad.vjp(c.f, x)
    (ct,) = pullback(c.ct.astype(y.dtype))
    assert ct.dtype == x.dtype
    assert_allclose(ct, c.jax["ct"], rtol=1e-4, atol=1e-4)
    assert dualad.grad(c.loss)(x).dtype == x.dtype


@pytest.mark.parametrize("name, dtype, shape, kw", INPUTS[::3])
def test_inputs_are_not_modified(name, dtype, shape, kw):
    c = case(name, dtype, shape, kw)
    x, t, ct = c.x.copy(), c.t.copy(), c.ct.copy()
    for _ in range(2):  # a second call may replay the first
        dualad.jvp(c.f, (x,), (t,))
        dualad.vjp(c.f, x)[1](ct)
        dualad.grad(c.loss)(x)
    assert np.array_equal(x, c.x) and np.array_equal(t, c.t) and np.array_equal(ct, c.ct)


# ---------------------------------------------------------------------------
# NumPy's signatures and errors; frequencies; compositions
# ---------------------------------------------------------------------------


def test_transforms_dispatch_from_numpy_calls():
    names = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
             "rfft2", "irfft2", "rfftn", "irfftn", "fftshift", "ifftshift")
    value = np.arange(8.0).reshape(2, 4)
    for name in names:
        fun = getattr(np.fft, name)
        for x in (value, value + 1j * value[::-1]):
            if name in ("rfft", "ihfft", "rfft2", "rfftn") and np.iscomplexobj(x):
                continue
            out = fun(dualad.Dual(x, np.ones_like(x)))
            assert isinstance(out, dualad.Dual)
            _close(out.primal, fun(x))
            _close(out.tangent[0], fun(np.ones_like(x)))


def test_numpy_errors_and_warnings():
    x = dualad.Dual(np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        np.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Invalid norm"):
        np.fft.rfft(x, norm="unitary")
    with pytest.raises(np.exceptions.AxisError):
        np.fft.fft(x, axis=1)
    with pytest.raises(ValueError, match="Shape and axes"):
        np.fft.fftn(x, s=(4, 4), axes=(0,))
    with pytest.raises(TypeError, match="out="):
        np.fft.fft(x, out=np.empty(4, complex))
    with pytest.raises(TypeError):
        np.fft.rfft(dualad.Dual(np.ones(4) + 0j, np.ones(4) + 0j))
    y = dualad.Dual(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.warns(DeprecationWarning):
        out = np.fft.fftn(y, s=(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _close(out.primal, np.fft.fftn(np.ones((2, 3)), s=(2, 4)))
        _close(np.fft.irfftn(y, s=(None, 4), axes=(0, 1)).primal,
               np.fft.irfftn(np.ones((2, 3)), s=(None, 4), axes=(0, 1)))
    _close(np.fft.fftn(y, s=(-1, 5), axes=(0, 1)).primal,
           np.fft.fftn(np.ones((2, 3)), s=(-1, 5), axes=(0, 1)))


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_depend_on_the_spacing(name):
    fun = getattr(np.fft, name)
    y, ty = dualad.jvp(lambda d: fun(7, d), (0.5,), (1.0,))
    _close(y, fun(7, 0.5))
    _close(ty, -fun(7, 0.5) / 0.5)  # 1/(n·d) differentiated in d
    assert_allclose(dualad.grad(lambda d: np.sum(fun(6, d) ** 2))(0.25),
                    -2 * np.sum(fun(6, 0.25) ** 2) / 0.25, rtol=RTOL)


def test_round_trips_have_identity_derivatives():
    x = np.random.default_rng(3).normal(size=(3, 8))
    identity = np.eye(x.size).reshape(x.shape * 2)
    for f in (lambda x: np.fft.irfft(np.fft.rfft(x)),
              lambda x: np.fft.hfft(np.fft.ihfft(x)),
              lambda x: np.real(np.fft.ifft2(np.fft.fft2(x))),
              lambda x: np.fft.irfftn(np.fft.rfftn(x), s=x.shape, axes=(0, 1)),
              lambda x: np.fft.ifftshift(np.fft.fftshift(x))):
        assert_allclose(dualad.jacfwd(f)(x), identity, atol=1e-12)
        assert_allclose(dualad.jacrev(f)(x), identity, atol=1e-12)


# ---------------------------------------------------------------------------
# Replays and dualad_gpu
# ---------------------------------------------------------------------------

COMPOSITIONS = [
    lambda x: np.sum(np.abs(np.fft.rfft(x, n=8)) ** 2),
    lambda x: np.sum(np.fft.irfft(np.fft.fft(x, n=4) * (1 + 2j), n=9, norm="ortho") ** 3),
    lambda x: np.sum(np.fft.hfft(np.fft.ihfft(x), n=11) * np.arange(11.0)),
    lambda x: np.sum(np.abs(np.fft.fftshift(np.fft.rfft2(x.reshape(2, 3), s=(3, 5)))) ** 2),
]


@pytest.mark.parametrize("f", COMPOSITIONS)
def test_replays_give_the_interpreter_values(f):
    rng = np.random.default_rng(7)
    replayed = {name: getattr(dualad, name)(f) for name in ("grad", "hessian")}
    for _ in range(4):  # records at the second call, checks at the third, replays next
        x = rng.normal(size=6)
        for name, transform in replayed.items():
            expected = getattr(dualad, name)(f, replay=False)(x)
            assert_allclose(transform(x), expected, rtol=1e-12, atol=1e-12)


def test_dualad_gpu_compiles_the_transforms():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    x = np.arange(6.0) ** 1.5
    for f in COMPOSITIONS[1:3]:
        expected = dualad.grad(f)(x)
        _close(np.asarray(dualad_gpu.grad(f)(x)), expected)
        _close(np.asarray(dualad_gpu.jacfwd(f)(x)), expected)


# -- autograd's FFT tests, in our words: every case through check_grads in both modes,
# to second order (autograd checks reverse mode, first order) -------------------------

_RNG = np.random.default_rng(1)
_A5, _A4, _C4 = _RNG.standard_normal((5, 5)), _RNG.standard_normal((4, 4)) / 10, \
    _RNG.standard_normal((4, 4, 4)) / 10
_C5 = _RNG.standard_normal((5, 5, 5)) / 10
AUTOGRAD_CASES = {
    "fft": (lambda x: np.fft.fft(x), _A5),
    "fft ortho": (lambda x: np.fft.fft(x, norm="ortho"), _A5),
    "fft axis 0": (lambda x: np.fft.fft(x, axis=0), _A5),
    "fft n smaller": (lambda x: np.fft.fft(x, 3), _A5),
    "fft n bigger": (lambda x: np.fft.fft(x, 7), _A5),
    "ifft n smaller": (lambda x: np.fft.ifft(x, 3), _A5),
    "ifft n bigger": (lambda x: np.fft.ifft(x, 7), _A5),
    "rfft n smaller": (lambda x: np.fft.rfft(x, 2), _A4),
    "rfft n bigger": (lambda x: np.fft.rfft(x, 6), _A4),
    "irfft n smaller": (lambda x: np.fft.irfft(x, 2), np.fft.rfft(_A4)),
    "irfft n bigger": (lambda x: np.fft.irfft(x, 6), np.fft.rfft(_A4)),
    "fft2 s": (lambda x: np.fft.fft2(x, s=[7, 3], axes=[0, 2]), _C5),
    "ifft2 s": (lambda x: np.fft.ifft2(x, s=[7, 3], axes=[0, 2]), _C5),
    "fftn s": (lambda x: np.fft.fftn(x, s=[7, 3], axes=[0, 2]), _C5),
    "ifftn s": (lambda x: np.fft.ifftn(x, s=[7, 3], axes=[0, 2]), _C5),
    "rfft2 s": (lambda x: np.fft.rfft2(x, s=[6, 2], axes=[0, 2]), _C4),
    "irfft2 s": (lambda x: np.fft.irfft2(x, s=[6, 2], axes=[0, 2]), np.fft.rfft2(_C4)),
    "rfftn s": (lambda x: np.fft.rfftn(x, s=[6, 2], axes=[0, 2]), _C4),
    "irfftn s": (lambda x: np.fft.irfftn(x, s=[6, 2], axes=[0, 2]), np.fft.rfftn(_C4)),
    "ifft": (lambda x: np.fft.ifft(x), _A5),
    "fft2": (lambda x: np.fft.fft2(x), _A5 / 10),
    "ifft2": (lambda x: np.fft.ifft2(x), _A5),
    "fftn": (lambda x: np.fft.fftn(x), _A5 / 10),
    "ifftn": (lambda x: np.fft.ifftn(x), _A5),
    "rfft": (lambda x: np.fft.rfft(x), _A4),
    "rfft ortho": (lambda x: np.fft.rfft(x, norm="ortho"), _A4),
    "rfft axis 0": (lambda x: np.fft.rfft(x, axis=0), _A4),
    "irfft": (lambda x: np.fft.irfft(x), np.fft.rfft(_A4)),
    "irfft ortho": (lambda x: np.fft.irfft(x, norm="ortho"), np.fft.rfft(_A4)),
    "rfft2": (lambda x: np.fft.rfft2(x), _A4),
    "irfft2": (lambda x: np.fft.irfft2(x), np.fft.rfft2(_A4)),
    "rfftn": (lambda x: np.fft.rfftn(x), _C4),
    "rfftn odd": (lambda x: np.fft.rfftn(x), _C5),  # autograd: NotImplementedError
    "rfftn subset": (lambda x: np.fft.rfftn(x)[(0, 1, 0), (3, 3, 2)], _C4),
    "rfftn axes": (lambda x: np.fft.rfftn(x, axes=(0, 2)), _C4),
    "irfftn": (lambda x: np.fft.irfftn(x), np.fft.rfftn(_C4)),
    "irfftn subset": (lambda x: np.fft.irfftn(x)[(0, 1, 0), (3, 3, 2)], np.fft.rfftn(_C4)),
    "fftshift": (lambda x: np.fft.fftshift(x), _A5 / 10),
    "fftshift even": (lambda x: np.fft.fftshift(x), _A4),
    "fftshift axes": (lambda x: np.fft.fftshift(x, axes=1), _A5 / 10),
    "ifftshift": (lambda x: np.fft.ifftshift(x), _A5),
    "ifftshift even": (lambda x: np.fft.ifftshift(x), _A4),
    "ifftshift axes": (lambda x: np.fft.ifftshift(x, axes=1), _A5),
}


@pytest.mark.parametrize("case", list(AUTOGRAD_CASES))
def test_autograd_fft_cases_check_in_both_modes_to_second_order(case):
    from dualad.testing import check_grads

    f, x = AUTOGRAD_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy's s without axes
        check_grads(f, (x,), order=2)
