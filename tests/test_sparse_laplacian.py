"""The sparse forward Laplacian (dualad.laplacian(f, method="sparse")): equal to the exact
one on particles, grids, dense and diagonal Hessians, pytrees and float32; its colours
counted; a colouring that merges coupled coordinates caught; the pattern kept, replayed,
checked when the function's structure changes, and its errors said."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

pytest.importorskip("scipy")

import dualad  # noqa: E402
import dualad.sparse.laplacian as sparse_laplacian  # noqa: E402
from dualad import laplacian  # noqa: E402
from dualad.replay import Transformed, cache  # noqa: E402
from dualad.sparse import PatternChanged, ValueDependentError  # noqa: E402
from dualad.sparse.coloring import distance1_coloring  # noqa: E402

RNG = np.random.default_rng(11)
PARTICLES, FEATURES, WIDTH = 5, 3, 8
WEIGHTS = [RNG.normal(size=(m, n)) / np.sqrt(n)
           for n, m in zip([FEATURES, WIDTH, WIDTH], [WIDTH, WIDTH, 1])]


def particles(x):
    """A sum over particles of one tanh MLP of each particle's features, x: (P, F)."""
    h = x
    for W in WEIGHTS[:-1]:
        h = np.tanh(h @ W.T)
    return np.sum(h @ WEIGHTS[-1].T)


def chain(x):
    """A 1-D finite-difference energy: Σ (x[i+1] - x[i])²·exp(x[i]) + Σ x⁴/4."""
    return np.sum((x[1:] - x[:-1]) ** 2 * np.exp(x[:-1])) + np.sum(x ** 4) / 4


def grid(u):
    """A 2-D energy on an N x N grid: ½|∇u|² (five-point), a reaction term, and
    a gradient-dependent coefficient: ½ Σ (∂u)²·(1 + u²)."""
    dx, dy = u[1:, :] - u[:-1, :], u[:, 1:] - u[:, :-1]
    return 0.5 * (np.sum(dx ** 2 * (1 + u[1:, :] ** 2)) + np.sum(dy ** 2)) + np.sum(np.cosh(u))


def dense(x):
    """Every pair coupled: log Σ exp(x) + (Σ x)³."""
    return np.log(np.sum(np.exp(x))) + np.sum(x) ** 3


def diagonal(x):
    return np.sum(np.sin(x) * x ** 2)


POINTS = {"particles": RNG.normal(size=(PARTICLES, FEATURES)), "chain": RNG.normal(size=12),
          "grid": RNG.normal(size=(6, 7)), "dense": RNG.normal(size=7),
          "diagonal": RNG.normal(size=9)}
FUNCTIONS = {"particles": particles, "chain": chain, "grid": grid, "dense": dense,
             "diagonal": diagonal}
#: The colours each needs: a particle's features, a path's and a grid's two, all, one.
PASSES = {"particles": FEATURES, "chain": 2, "grid": 2, "dense": 7, "diagonal": 1}


def _trace(f, x):
    return np.trace(dualad.hessian(f, replay=False)(x).reshape(x.size, x.size))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_sparse_equals_exact(name):
    f, x = FUNCTIONS[name], POINTS[name]
    lap = laplacian(f, method="sparse")
    got = lap(x)
    assert_allclose(got, laplacian(f)(x), rtol=1e-12, atol=1e-12)
    assert_allclose(got, _trace(f, x), rtol=1e-11, atol=1e-11)
    prepared = lap.prepare(x)
    assert prepared.passes == PASSES[name], prepared
    assert_allclose(lap(x + 0.5), laplacian(f)(x + 0.5), rtol=1e-12, atol=1e-12)


def test_one_colour_per_feature_of_a_particle():
    x = POINTS["particles"]
    pattern = dualad.hessian_sparsity(particles, x)
    blocks = np.kron(np.eye(PARTICLES), np.ones((FEATURES, FEATURES)))
    assert (pattern.toarray() == blocks.astype(bool)).all()
    colors = distance1_coloring(pattern)
    assert colors.max() + 1 == FEATURES
    for block in colors.reshape(PARTICLES, FEATURES):  # each particle's features differ
        assert len(set(block)) == FEATURES
    assert (laplacian(particles, method="sparse").prepare(x).colors == colors).all()


def test_a_colouring_that_merges_coupled_coordinates_is_caught(monkeypatch):
    # particle 0's and particle 1's first features coupled: colouring by feature merges them
    def coupled(x):
        return particles(x) + np.sin(x[0, 0] * x[1, 0])

    x = POINTS["particles"]
    exact = laplacian(coupled)(x)
    lap = laplacian(coupled, method="sparse")
    assert_allclose(lap(x), exact, rtol=1e-12)
    colors = lap.prepare(x).colors.reshape(PARTICLES, FEATURES)
    assert colors[0, 0] != colors[1, 0] and lap.prepare(x).passes <= FEATURES + 1
    # the test has teeth: the naive colouring (by feature) gives another number
    monkeypatch.setattr(sparse_laplacian.coloring, "distance1_coloring",
                        lambda pattern: np.tile(np.arange(FEATURES, dtype=np.int32), PARTICLES))
    wrong = laplacian(coupled, method="sparse")(x)
    assert not np.isclose(wrong, exact, rtol=1e-6)


def test_pytree_outputs_and_float32():
    x = RNG.normal(size=(2, 3))

    def f(z):
        return {"field": np.sin(z) * np.sum(z[0] ** 2), "energy": (np.sum(np.exp(z[0]) * z[1]),),
                "constant": 3.0}

    got, want = laplacian(f, method="sparse")(x), laplacian(f)(x)
    assert_allclose(got["field"], want["field"], rtol=1e-12)
    assert_allclose(got["energy"][0], want["energy"][0], rtol=1e-12)
    assert got["constant"] == 0.0
    x32 = POINTS["chain"].astype(np.float32)
    got32 = laplacian(chain, method="sparse")(x32)
    assert got32.dtype == np.float32
    assert_allclose(got32, laplacian(chain)(x32), rtol=1e-5)


@pytest.mark.parametrize("replay", [True, False])
def test_replayed_and_interpreted(replay, monkeypatch):
    monkeypatch.setattr(cache, "RECORD_AFTER", 1)
    lap = laplacian(grid, method="sparse", replay=replay)
    x = POINTS["grid"]
    for k in range(4):
        assert_allclose(lap(x + 0.1 * k), laplacian(grid, replay=False)(x + 0.1 * k),
                        rtol=1e-12)
    nonzeros = lap.prepare(x)._nonzeros
    assert isinstance(nonzeros, Transformed) == replay
    if replay:
        assert nonzeros.counts["replayed"] >= 1


def test_the_pattern_is_detected_once(monkeypatch):
    calls = []
    detect = sparse_laplacian.hessian_sparsity

    def counted(*args, **kwargs):
        calls.append(None)
        return detect(*args, **kwargs)

    monkeypatch.setattr(sparse_laplacian, "hessian_sparsity", counted)
    lap = laplacian(chain, method="sparse")
    x = POINTS["chain"]
    for k in range(cache.RECORD_AFTER + 8):
        lap(x + 0.01 * k)
    assert len(calls) <= 3  # preparing, then until the replays prove the pattern
    before = len(calls)
    for k in range(5):
        lap(x - 0.01 * k)
    assert len(calls) == before


def test_a_changed_structure_is_prepared_again():
    coupling = {"on": False}

    def f(x):  # a diagonal Hessian, or x0 and x1 coupled: one colour is then wrong
        return np.sum(x ** 3) + (x[0] * x[1] if coupling["on"] else 0.0)

    lap = laplacian(f, method="sparse")
    x = np.array([0.5, -1.0, 2.0])
    for _ in range(cache.RECORD_AFTER + 2):
        assert_allclose(lap(x), 6 * np.sum(x), rtol=1e-14)
    assert lap.prepare(x).passes == 1
    coupling["on"] = True
    assert_allclose(lap(x), 6 * np.sum(x), rtol=1e-14)  # (u·H·u would add 2 with one colour)
    assert lap.prepare(x).passes == 2
    prepared = lap.prepare(x)
    coupling["on"] = False
    with pytest.raises(PatternChanged, match="prepare it again"):
        for _ in range(3):
            prepared(x)


def test_value_dependent_structure_and_local():
    def f(x):
        return np.sum(x ** 2) * x[0] if x[0] > 0 else np.sum(np.sin(x))

    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueDependentError, match="local=True"):
        laplacian(f, method="sparse")(x)
    lap = laplacian(f, method="sparse", local=True)
    assert_allclose(lap(x), laplacian(f)(x), rtol=1e-13)


def test_inside_other_transforms():
    # the gradient of a Laplacian in the parameters, and in the point
    x = RNG.normal(size=(4, 2))
    W = RNG.normal(size=(3, 2))

    def loss(w, method):
        return laplacian(lambda z: np.sum(np.tanh(z @ w.T) ** 2), method=method)(x)

    want = dualad.grad(lambda w: loss(w, "exact"))(W)
    assert_allclose(dualad.grad(lambda w: loss(w, "sparse"))(W), want, rtol=1e-12)
    assert_allclose(dualad.jacfwd(lambda w: loss(w, "sparse"))(W), want, rtol=1e-12)
    y = POINTS["chain"]
    assert_allclose(dualad.grad(laplacian(chain, method="sparse"))(y),
                    dualad.grad(laplacian(chain))(y), rtol=1e-12)


def test_what_is_wrong_is_said():
    with pytest.raises(ValueError, match="'sparse'"):
        laplacian(chain, method="colored")
    with pytest.raises(ValueError, match="out of range"):
        laplacian(chain, argnums=2, method="sparse")(np.ones(3))
    with pytest.raises(TypeError, match="real"):
        laplacian(chain, method="sparse")(np.ones(3, complex))
    lap = laplacian(chain, method="sparse")
    with pytest.raises(ValueError, match="prepared for shape"):
        lap.prepare(np.ones(4))(np.ones(5))
    y = POINTS["chain"]
    scaled = laplacian(lambda a, z: a * chain(z), argnums=1, method="sparse")
    assert_allclose(scaled(2.0, y), 2 * laplacian(chain)(y), rtol=1e-12)
