"""Forward differential operators (dualad.operators): the collapsed Laplacian, weighted
Hessian traces and the divergence against traces of dualad's and JAX's Hessians and
Jacobians, on an MLP, a Slater-determinant wave function and a PDE residual; Hutchinson's
estimator unbiased within its standard error."""

import warnings

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose
from specs import SPECS, jet_order

import dualad
from dualad import divergence, hessian_trace, laplacian

RNG = np.random.default_rng(3)
D = 6
WEIGHTS = [RNG.normal(size=(8, D)) / np.sqrt(D), RNG.normal(size=(8, 8)) / np.sqrt(8),
           RNG.normal(size=(1, 8)) / np.sqrt(8)]
ORBITALS = RNG.normal(size=(3, 2))  # three orbitals of 2-D positions, three electrons


def mlp(x, xp=np):
    h = x
    for W in WEIGHTS[:-1]:
        h = xp.tanh(W @ h)
    return (WEIGHTS[-1] @ h)[0]


def slater(x, xp=np):
    """log|det Φ|, Φ_ij = exp(-|r_i|²/2)·(1 + tanh(o_j·r_i)), positions x = (3, 2)."""
    r = xp.reshape(x, (3, 2))
    phi = xp.exp(-0.5 * xp.sum(r * r, axis=1))[:, None] * (1.0 + xp.tanh(r @ ORBITALS.T))
    return xp.linalg.slogdet(phi)[1]


def residual(x, xp=np):
    """A Poisson residual's field: u(x) = sin(x0)·exp(x1)·x2² + x3·x4·x5."""
    return xp.sin(x[0]) * xp.exp(x[1]) * x[2] ** 2 + x[3] * x[4] * x[5]


FUNCTIONS = {"mlp": mlp, "slater": slater, "residual": residual}


def _hessian_trace(f, x):
    return np.trace(dualad.jacfwd(dualad.jacfwd(f))(x).reshape(x.size, x.size))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_laplacian_is_the_trace_of_the_hessian(name):
    f = FUNCTIONS[name]
    x = RNG.normal(size=D)
    assert_allclose(laplacian(f)(x), _hessian_trace(f, x), rtol=1e-12, atol=1e-12)
    assert_allclose(laplacian(f)(x), np.trace(dualad.hessian(f)(x)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_against_jax(name):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = FUNCTIONS[name]
    x = RNG.normal(size=D)
    with jax.enable_x64(True):
        theirs = jnp.trace(jax.hessian(lambda z: f(z, jnp))(jnp.asarray(x)))
        div_theirs = jnp.trace(jax.jacfwd(jax.grad(lambda z: f(z, jnp)))(jnp.asarray(x)))
    assert_allclose(laplacian(f)(x), float(theirs), rtol=1e-12, atol=1e-12)
    assert_allclose(divergence(dualad.grad(f))(x), float(div_theirs), rtol=1e-12, atol=1e-12)


def test_arrays_of_any_shape_vector_outputs_and_pytrees():
    x = RNG.normal(size=(2, 3))

    def f(z):
        return {"field": np.sin(z) * np.sum(z ** 2), "energy": (np.sum(np.exp(z[0]) * z[1]),)}

    got = laplacian(f)(x)
    for i in np.ndindex(x.shape):
        component = lambda z, i=i: f(z)["field"][i]  # noqa: E731
        assert_allclose(got["field"][i], _hessian_trace(component, x), rtol=1e-12)
    assert_allclose(got["energy"][0], _hessian_trace(lambda z: f(z)["energy"][0], x),
                    rtol=1e-12)
    constant = laplacian(lambda z: (np.sum(z), 3.0))(x)
    assert constant == (0.0, 0.0)


def test_hessian_trace_with_an_indefinite_weight():
    x = RNG.normal(size=D)
    C = RNG.normal(size=(D, D))
    C = C + C.T
    H = dualad.hessian(mlp)(x)
    assert_allclose(hessian_trace(mlp, C)(x), np.trace(C @ H), rtol=1e-11, atol=1e-12)
    assert_allclose(hessian_trace(mlp, np.eye(D))(x), laplacian(mlp)(x), rtol=1e-12)
    with pytest.raises(ValueError, match="symmetric"):
        hessian_trace(mlp, np.triu(np.ones((D, D))))
    with pytest.raises(ValueError, match="entries"):
        hessian_trace(mlp, np.eye(3))(x)


def test_divergence():
    x = RNG.normal(size=D)
    W = RNG.normal(size=(D, D))
    F = lambda z: np.tanh(W @ np.sin(z)) * z  # noqa: E731
    assert_allclose(divergence(F)(x), np.trace(dualad.jacfwd(F)(x)), rtol=1e-13)
    assert_allclose(divergence(lambda a, z: a * z ** 2, argnums=1)(2.0, x), np.sum(4 * x),
                    rtol=1e-14)
    with pytest.raises(ValueError, match="same"):
        divergence(lambda z: z[:2])(x)


@pytest.mark.parametrize("distribution", ["rademacher", "gaussian"])
def test_hutchinson_is_unbiased(distribution):
    x = RNG.normal(size=D)
    exact = laplacian(slater)(x)
    estimates = [laplacian(slater, method="hutchinson", num_samples=4, rng=seed,
                           distribution=distribution)(x) for seed in range(200)]
    standard_error = np.std(estimates, ddof=1) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - exact) < 4 * standard_error
    again = laplacian(slater, method="hutchinson", num_samples=4, rng=7,
                      distribution=distribution)(x)
    assert again == estimates[7]  # a seed reproduces its estimate


@pytest.mark.parametrize("name", ["slater", "residual"])
def test_stde_laplacian_is_unbiased_and_exact_with_every_coordinate(name):
    f = FUNCTIONS[name]
    x = RNG.normal(size=D)
    exact = laplacian(f)(x)
    estimates = [laplacian(f, method="stde", num_samples=2, rng=seed)(x)
                 for seed in range(300)]
    standard_error = np.std(estimates, ddof=1) / np.sqrt(len(estimates))
    assert standard_error > 0 and abs(np.mean(estimates) - exact) < 4 * standard_error
    # two coordinates of six give a third of the trace, weighted by three: not Δf
    assert abs(estimates[0] - exact) > 1e-6 * abs(exact)
    assert_allclose(laplacian(f, method="stde", num_samples=D, rng=1)(x), exact, rtol=1e-12)
    assert laplacian(f, method="stde", num_samples=2, rng=5)(x) == estimates[5]


def _separable_quartic(x):
    """Σ x⁴ + x0²x1² + sin(x2)·x3²: Δ²f = 24·4 + 8 + sin(x2)·(x3² − 4)."""
    return np.sum(x ** 4) + x[0] ** 2 * x[1] ** 2 + np.sin(x[2]) * x[3] ** 2


def test_stde_biharmonic_is_unbiased():
    x = RNG.normal(size=4)
    exact = dualad.biharmonic(_separable_quartic)(x)
    estimates = [dualad.biharmonic(_separable_quartic, method="stde", num_samples=50,
                                   rng=seed)(x) for seed in range(100)]
    standard_error = np.std(estimates, ddof=1) / np.sqrt(len(estimates))
    assert standard_error > 0 and abs(np.mean(estimates) - exact) < 4 * standard_error
    # (E[∂⁴f[v,v,v,v]] is 3Δ²f: an estimator without the third would be far off)
    assert abs(3 * np.mean(estimates) - exact) > 20 * standard_error
    with pytest.raises(ValueError, match="method"):
        dualad.biharmonic(_separable_quartic, method="hutchinson")
    with pytest.raises(ValueError, match="num_samples"):
        dualad.biharmonic(_separable_quartic, method="stde", num_samples=0)


def test_inside_other_transforms():
    # the gradient of a Laplacian in the parameters, a physics-informed loss's
    x = RNG.normal(size=3)
    W = RNG.normal(size=(4, 3))

    def loss(w):
        return laplacian(lambda z: np.sum(np.tanh(w @ z) ** 2))(x)

    step = 1e-6
    differences = np.zeros_like(W)
    for i in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[i] = step
        differences[i] = (loss(W + e) - loss(W - e)) / (2 * step)
    assert_allclose(dualad.grad(loss)(W), differences, rtol=1e-6, atol=1e-8)
    assert_allclose(dualad.jacfwd(loss)(W), dualad.grad(loss)(W), rtol=1e-12)


def test_dtypes_and_what_is_wrong_is_said():
    x32 = RNG.normal(size=3).astype(np.float32)
    assert laplacian(lambda z: np.sum(np.sin(z)))(x32).dtype == np.float32
    with pytest.raises(ValueError, match="method"):
        laplacian(mlp, method="nested")
    with pytest.raises(ValueError, match="num_samples"):
        laplacian(mlp, method="hutchinson", num_samples=0)
    with pytest.raises(ValueError, match="distribution"):
        laplacian(mlp, method="hutchinson", distribution="uniform")
    with pytest.raises(ValueError, match="out of range"):
        laplacian(mlp, argnums=2)(np.ones(D))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_under_dualad_gpu(name):
    jax = pytest.importorskip("jax")
    import dualad_gpu
    f = FUNCTIONS[name]
    x = RNG.normal(size=D)
    got = dualad_gpu.laplacian(f)(x)
    assert isinstance(got, jax.Array) and got.dtype == np.float64
    assert_allclose(np.asarray(got), laplacian(f)(x), rtol=1e-12, atol=1e-12)
    C = RNG.normal(size=(D, D))
    C = C + C.T
    assert_allclose(np.asarray(dualad_gpu.hessian_trace(f, C)(x)), hessian_trace(f, C)(x),
                    rtol=1e-11, atol=1e-12)
    field = dualad.grad(f)
    assert_allclose(np.asarray(dualad_gpu.divergence(field)(x)), divergence(field)(x),
                    rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["mlp", "residual"])
def test_biharmonic_against_jax(name):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = FUNCTIONS[name]
    x = RNG.normal(size=D)

    def jax_laplacian(g):
        return lambda z: jnp.trace(jax.hessian(g)(z))

    with jax.enable_x64(True):
        theirs = float(jax_laplacian(jax_laplacian(lambda z: f(z, jnp)))(jnp.asarray(x)))
    assert_allclose(dualad.biharmonic(f)(x), theirs, rtol=1e-11, atol=1e-11)
    assert_allclose(dualad.biharmonic(f)(x), laplacian(laplacian(f))(x), rtol=1e-14)
    import dualad_gpu
    assert_allclose(np.asarray(dualad_gpu.biharmonic(f)(x)), theirs, rtol=1e-11, atol=1e-11)


def test_through_scipys_solvers():
    # the implicit function theorem's corrections take one step per order carried:
    # the collapsed Laplacian carries two (one step gave a wrong curvature)
    so = pytest.importorskip("scipy.optimize")
    p = np.array([2.0, 10.0, 30.0])
    solves = {
        "root": lambda p: np.sum(so.root(lambda x: x ** 3 + x - p, np.ones_like(p),
                                         tol=1e-13).x ** 2),
        "brentq": lambda p: so.brentq(lambda x: x ** 3 + x - p[0] * p[1], 0.0, 50.0,
                                      xtol=1e-14) ** 2,
        "minimize": lambda p: np.sum(so.minimize(lambda x: np.sum((x - p) ** 2 + 0.1 * x ** 4),
                                                 np.zeros(3), method="BFGS", tol=1e-12).x ** 3),
    }
    for name, f in solves.items():
        assert_allclose(laplacian(f)(p), np.trace(dualad.hessian(f)(p)), rtol=1e-7, atol=1e-9,
                        err_msg=name)


def _row_point(spec):
    rng = np.random.default_rng(5)
    for _ in range(50):
        args = spec.draw(rng, spec.shapes[0])
        if spec.avoid is None or not spec.avoid(*args):
            break
    return [np.asarray(a, dtype=np.result_type(a, float)) for a in args]


#: The rows whose first argument is real and has 1 to 30 entries (a Hessian to compare).
LAPLACIAN_ROWS = [s for s in SPECS if jet_order(s) >= 3
                  and (lambda x: x.dtype.kind != "c" and 0 < x.size <= 30)(_row_point(s)[0])]


@pytest.mark.parametrize("spec", LAPLACIAN_ROWS, ids=lambda s: s.id)
def test_every_row_against_the_trace_of_its_hessian(spec):
    # (in the first argument, of a weighted sum of the row's float outputs; rows with
    # NaN inputs, nanmax's, once gave nan: a structurally zero coefficient made as x·0)
    args = _row_point(spec)

    def total(*a):
        """Every float output, weighted so that no entry cancels another."""
        leaves = [leaf for leaf in optree.tree_leaves(spec.fun(*a))
                  if np.result_type(dualad.primal_value(leaf)).kind == "f"]
        return sum(np.sum(leaf * np.cos(np.arange(np.size(dualad.primal_value(leaf)))
                                        .reshape(np.shape(dualad.primal_value(leaf)))))
                   for leaf in leaves)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = laplacian(total, replay=False)(*args)
        H = dualad.jacfwd(dualad.jacfwd(total, replay=False), replay=False)(*args)
    want = np.trace(np.reshape(H, (args[0].size, args[0].size)))
    assert_allclose(got, want, rtol=1e-6, atol=1e-7 * max(1.0, abs(want)), equal_nan=True,
                    err_msg=spec.id)
