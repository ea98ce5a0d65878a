"""Sparsity detection and the sparse transforms (dualad.sparse).

Every detected pattern must contain every nonzero of the dense Jacobian (or
Hessian) at random points — on every spec row of the rule table and on random
programs — and be exact on the structured problems; the sparse transforms must
equal the dense ones.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose
from scipy import sparse

import dualad
from dualad.sparse import ValueDependentError, hessian_sparsity, jacobian_sparsity
from dualad.replay import Transformed
from specs import SPECS
from test_replay import _STEPS, _program

# -- problems -------------------------------------------------------------------------


def bratu(u, lam=1.0):
    h = 1.0 / (u.size + 1)
    padded = np.concatenate(([0.0], u, [0.0]))
    return (padded[:-2] - 2.0 * u + padded[2:]) / h**2 + lam * np.exp(u)


def brusselator(t, y, N=6, a=1.0, b=3.4, alpha=0.02):
    """The 2-D Brusselator on an N×N periodic grid, y = (u, v) flattened."""
    u, v = y[:N * N].reshape(N, N), y[N * N:].reshape(N, N)

    def laplacian(w):
        return (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1)
                - 4.0 * w) * (N - 1) ** 2

    du = a + u * u * v - (b + 1.0) * u + alpha * laplacian(u)
    dv = b * u - u * u * v + alpha * laplacian(v)
    return np.concatenate([du.ravel(), dv.ravel()])


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def laplacian_energy(x, N=5):
    u = x.reshape(N, N)
    return 0.5 * (np.sum(np.diff(u, axis=0) ** 2) + np.sum(np.diff(u, axis=1) ** 2)) \
        + 0.25 * np.sum(u**4)


def _nonzero(a) -> np.ndarray:
    return np.asarray(a) != 0


def _contains(pattern, dense) -> bool:
    return not (_nonzero(dense).reshape(pattern.shape) & ~pattern.toarray()).any()


# -- spec rows: the pattern holds every nonzero -----------------------------------------


def _points(spec, count=3):
    rng = np.random.default_rng(20261124)
    points = []
    for _ in range(50):
        args = spec.draw(rng, spec.shapes[0])
        if spec.avoid is None or not spec.avoid(*args):
            points.append(args)
        if len(points) == count:
            break
    return points


def _flat(out):
    leaves = optree.tree_leaves(out)
    return np.concatenate([np.reshape(o, -1) for o in leaves]) if len(leaves) > 1 \
        else np.reshape(leaves[0], -1)


def _one_argument(spec, i):
    def f(x, *rest):
        args = list(rest)
        args.insert(i, x)
        return _flat(spec.fun(*args))
    return f


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_patterns_hold_every_nonzero_of_each_spec_row(spec):
    points = _points(spec)
    assert len(points) == 3, f"{spec.id}: no three points away from the row's kinks"
    for i in range(spec.arity):
        f = _one_argument(spec, i)
        try:
            dualad.jacfwd(f, replay=False)(points[0][i], *(points[0][:i] + points[0][i + 1:]))
        except TypeError:
            continue  # an argument the row does not differentiate (an index, a write target)
        first = points[0]
        try:  # never a wrong pattern: one that holds at every point, or an error
            global_ = jacobian_sparsity(f, first[i], *(first[:i] + first[i + 1:]))
        except ValueDependentError:
            global_ = None
        local = jacobian_sparsity(f, first[i], *(first[:i] + first[i + 1:]), local=True)
        assert local.dtype == bool
        rest = first[:i] + first[i + 1:]  # the pattern is for these other arguments
        for k, p in enumerate(points):
            dense = dualad.jacfwd(f, replay=False)(p[i], *rest)
            assert global_ is None or _contains(global_, dense), (spec.id, i)
            assert k or _contains(local, dense), (spec.id, i, "local")
        p = points[0]
        if sum(np.size(a) for a in p) <= 12:
            g = lambda x, *rest, f=f: np.sum(f(x, *rest) * np.arange(1.0, 1.0 + f(x, *rest).size))
            rest = p[:i] + p[i + 1:]
            hess = dualad.hessian(g, replay=False)(p[i], *rest)
            assert _contains(hessian_sparsity(g, p[i], *rest, local=True), hess), (spec.id, i)
            try:
                assert _contains(hessian_sparsity(g, p[i], *rest), hess), (spec.id, i)
            except ValueDependentError:
                pass  # an error, not a wrong pattern


@pytest.mark.parametrize("seed", range(12))
def test_patterns_hold_every_nonzero_of_random_programs(seed):
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, len(_STEPS), size=rng.integers(2, 7))
    f = _program(steps, rng.uniform(-1.0, 1.0, len(steps)))
    x = rng.normal(size=5)
    try:
        pattern = jacobian_sparsity(f, x)
    except ValueDependentError:  # a Python branch on a value: only the local pattern
        assert 12 in steps
        pattern = None
    for _ in range(4):
        x = rng.normal(size=5)
        dense = dualad.jacfwd(f, replay=False)(x)
        assert _contains(jacobian_sparsity(f, x, local=True), dense)
        if pattern is not None:
            assert _contains(pattern, dense)
        if np.ndim(dense) == 1:
            assert _contains(hessian_sparsity(f, x, local=True),
                             dualad.hessian(f, replay=False)(x))


# -- exact on structured problems --------------------------------------------------------


def test_the_pattern_of_a_stencil_is_exact():
    tridiagonal = np.abs(np.subtract.outer(np.arange(8), np.arange(8))) <= 1
    assert (jacobian_sparsity(bratu, np.zeros(8)).toarray() == tridiagonal).all()
    y = np.random.default_rng(0).uniform(0.5, 1.5, 72)
    dense = dualad.jacfwd(brusselator, argnums=1)(0.0, y)
    pattern = jacobian_sparsity(lambda y: brusselator(0.0, y), y)
    assert (pattern.toarray() == _nonzero(dense)).all()
    assert pattern.shape == (72, 72) and pattern.nnz == 72 * 6


def test_hessian_patterns_keep_only_second_order_interactions():
    x = np.linspace(0.5, 1.5, 25)
    for f in (rosenbrock, laplacian_energy):
        assert (hessian_sparsity(f, x).toarray() == _nonzero(dualad.hessian(f)(x))).all()
    linear = hessian_sparsity(lambda x: np.sum(3.0 * x) + x[0] - x[1], np.ones(3))
    assert linear.nnz == 0  # x + y links nothing
    pairs = hessian_sparsity(lambda x: x[0] * x[1] + np.sin(x[2]), np.ones(3)).toarray()
    assert pairs.astype(int).tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]


def test_global_and_local_patterns():
    x = np.array([0.0, -1.0, 2.0])
    W = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    mask = np.array([False, True, True])
    # zeros that depend on x count only at this x
    for f, local_nnz, global_nnz in [(lambda x: np.where(x > 0, x, 0.0), 1, 3),
                                     (lambda x: np.maximum(x, 0.0), 2, 3),  # a tie at 0
                                     (lambda x: x[0] * x, 2, 5),
                                     (lambda x: W @ (x * x[0]), 2, 4)]:
        global_ = jacobian_sparsity(f, x)
        local = jacobian_sparsity(f, x, local=True)
        assert (local.nnz, global_.nnz) == (local_nnz, global_nnz)
        assert not (local.toarray() & ~global_.toarray()).any()
        assert _contains(local, dualad.jacfwd(f)(x))
    # zeros of constants are zeros for every x
    for f, nnz in [(lambda x: W @ x, 3), (lambda x: np.einsum("ij,j->i", W, x), 3),
                   (lambda x: x * mask, 2), (lambda x: np.where(mask, x, 0.0), 2),
                   (lambda x: np.tril(np.outer(x, x)).ravel(), 9),
                   (lambda x: np.pad(x, 1)[:-2] + np.pad(x, 1)[2:], 4)]:
        assert jacobian_sparsity(f, x).nnz == nnz
        assert jacobian_sparsity(f, x, local=True).nnz <= nnz


def test_a_branch_on_a_value_raises_globally_and_is_followed_locally():
    def f(x):
        return x**2 if x[0] > 0 else x[::-1]
    with pytest.raises(ValueDependentError, match="local=True"):
        jacobian_sparsity(f, np.ones(3))
    assert jacobian_sparsity(f, np.ones(3), local=True).nnz == 3
    # a rule that branches on values (the median's sort) is not the user's branch
    median = jacobian_sparsity(lambda x: np.median(x.reshape(2, 3), axis=1), np.arange(6.0))
    assert median.toarray().astype(int).tolist() == [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    assert jacobian_sparsity(lambda x: np.sort(x)[:1], np.arange(4.0)).nnz == 4
    # an index computed from values may be any index: every element, at every x
    x = np.array([1.0, -2.0, 3.0])
    for f in (lambda x: x[np.argmax(x)] * x, lambda x: x[x.argmin()] * x,
              lambda x: x[np.searchsorted(np.sort(x), 0.0)] * x):
        assert jacobian_sparsity(f, x).nnz == 9
        jac = dualad.sparse_jacobian(f)
        for y in (x, x[::-1], -x):
            np.testing.assert_allclose(jac(y).toarray(), dualad.jacfwd(f)(y))


def test_user_primitives_are_dense_unless_they_declare_their_pattern():
    kernel = lambda x: np.cumsum(x[::-1])[::-1]  # noqa: E731
    rule = lambda primals, tangents, ans: np.cumsum(tangents[0][:, ::-1], axis=1)[:, ::-1]
    dense = dualad.defprimitive("suffix_sum_dense", kernel, jvp=rule)
    derived = dualad.defprimitive("suffix_sum", kernel, jvp=rule, pattern="rule")
    square = dualad.defprimitive("square_", np.square, partials=[lambda ans, x: 2 * x])
    x = np.arange(1.0, 5.0)
    assert jacobian_sparsity(lambda x: dense(x[:2]), x).toarray().sum() == 4
    upper = jacobian_sparsity(derived, x).toarray()
    assert (upper == np.triu(np.ones((4, 4), bool))).all()
    assert jacobian_sparsity(square, x).nnz == 4
    with pytest.raises(ValueError, match="pattern"):
        dualad.defprimitive("bad", kernel, jvp=rule, pattern="sparse")


def test_detection_is_vectorized_and_leaves_no_state():
    x = np.full(100_000, 0.1)
    pattern = jacobian_sparsity(bratu, x)
    assert pattern.nnz == 3 * x.size - 2
    y = np.zeros(3)
    before = y.copy()
    jacobian_sparsity(lambda z: z + y, y)
    assert (y == before).all()
    assert dualad.jacfwd(bratu)(np.zeros(3)).shape == (3, 3)  # forward mode unaffected


# -- the sparse transforms equal the dense ones --------------------------------------


@pytest.mark.parametrize("mode", ["auto", "fwd", "rev"])
def test_sparse_jacobian_equals_the_dense_one(mode):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.0, 1.0, 9)
    jac = dualad.sparse_jacobian(bratu, mode=mode)
    result = jac(x)
    assert isinstance(result, sparse.csr_array)
    np.testing.assert_allclose(result.toarray(), dualad.jacfwd(bratu)(x), rtol=1e-13)
    prepared = jac.prepare(x)
    assert prepared.passes == 3 and prepared.mode == ("fwd" if mode == "auto" else mode)
    y = rng.uniform(0.5, 1.5, 72)
    rhs_jac = dualad.sparse_jacobian(brusselator, argnums=1, mode=mode)
    np.testing.assert_allclose(rhs_jac(0.0, y).toarray(),
                               dualad.jacfwd(brusselator, argnums=1)(0.0, y), rtol=1e-13)

    def wide(x):  # 2 outputs, each reading every input: one reverse pass per output
        return np.array([np.sum(x**2), np.sum(np.sin(x))])
    wide_jac = dualad.sparse_jacobian(wide, mode=mode)
    np.testing.assert_allclose(wide_jac(x).toarray(), dualad.jacfwd(wide)(x), rtol=1e-13)
    if mode == "auto":
        assert wide_jac.prepare(x).mode == "rev" and wide_jac.prepare(x).passes == 2


def test_sparse_hessian_equals_the_dense_one():
    x = np.linspace(-1.0, 1.0, 25)
    for f in (rosenbrock, laplacian_energy, lambda x: x[0] * np.sum(x**2)):  # an arrowhead
        hess = dualad.sparse_hessian(f)
        np.testing.assert_allclose(hess(x).toarray(), dualad.hessian(f)(x), rtol=1e-12,
                                   atol=1e-12)
    assert dualad.sparse_hessian(rosenbrock).prepare(x).passes == 3
    arrow = dualad.sparse_hessian(lambda x: x[0] * np.sum(x**2)).prepare(x)
    assert arrow.passes <= 3  # star colouring uses the symmetry: not n colours


def test_given_patterns_dtypes_and_the_prepared_cache():
    x = np.linspace(0.0, 1.0, 6)
    pattern = jacobian_sparsity(bratu, x)
    jac = dualad.sparse_jacobian(bratu, sparsity=pattern.toarray())
    np.testing.assert_allclose(jac(x).toarray(), dualad.jacfwd(bratu)(x))
    with pytest.raises(ValueError, match="shape"):
        dualad.sparse_jacobian(bratu, sparsity=np.ones((3, 3)))(x)
    with pytest.raises(ValueError, match="mode"):
        dualad.sparse_jacobian(bratu, mode="sideways")(x)
    jac = dualad.sparse_jacobian(lambda x: np.sin(x) * x[::-1])
    assert jac(x.astype(np.float32)).dtype == np.float32
    assert jac(x).dtype == np.float64
    assert jac.prepare(x) is jac.prepare(2 * x)  # once per shape and dtype
    for n in range(2, 14):
        jac(np.ones(n))
    assert jac.prepare(np.ones(13)).pattern.shape == (13, 13)
    hess = dualad.sparse_hessian(rosenbrock)
    assert hess(x.astype(np.float32)).dtype == np.float32


def test_threads_get_their_own_answers():
    jac = dualad.sparse_jacobian(bratu)
    points = [np.linspace(0.0, 1.0 + k, 7 + k % 3) for k in range(8)]
    results = [None] * len(points)

    def work(k):
        results[k] = jac(points[k]).toarray()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(points))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, result in zip(points, results):
        np.testing.assert_allclose(result, dualad.jacfwd(bratu)(x))


def test_scipy_takes_the_sparse_results():
    from scipy.integrate import solve_ivp
    from scipy.optimize import least_squares, minimize

    y0 = np.concatenate([np.full(36, 1.0), np.full(36, 3.0)])
    jac = dualad.sparse_jacobian(brusselator, argnums=1)
    solution = solve_ivp(brusselator, (0.0, 1.0), y0, method="BDF", jac=jac, rtol=1e-6)
    reference = solve_ivp(brusselator, (0.0, 1.0), y0, method="BDF", rtol=1e-6,
                          jac_sparsity=jac.prepare(0.0, y0).pattern)
    assert solution.success and np.allclose(solution.y[:, -1], reference.y[:, -1], rtol=1e-4)
    fit = least_squares(bratu, np.zeros(50), jac=dualad.sparse_jacobian(bratu),
                        tr_solver="lsmr")
    assert fit.success and np.abs(bratu(fit.x)).max() < 1e-6
    result = minimize(rosenbrock, np.zeros(20), method="trust-constr",
                      jac=dualad.grad(rosenbrock), hess=dualad.sparse_hessian(rosenbrock))
    assert result.success and np.allclose(result.x, 1.0, atol=1e-4)


def test_scipy_is_needed_only_for_the_sparse_transforms():
    script = ("import sys; sys.modules['scipy'] = None\n"
              "import numpy as np, dualad\n"
              "print(float(dualad.derivative(np.sin)(0.0)))\n"
              "try:\n    dualad.sparse_jacobian\n"
              "except ImportError as error:\n    print(error)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["1.0", "dualad.sparse_jacobian needs SciPy: pip install "
                                "dualad[sparse]"]


def test_replayed_nonzeros_equal_the_interpreted_ones():
    rng = np.random.default_rng(3)
    for transform, f in [(dualad.sparse_jacobian, bratu), (dualad.sparse_hessian, rosenbrock),
                         (dualad.sparse_hessian, laplacian_energy)]:
        replayed, interpreted = transform(f), transform(f, replay=False)
        for _ in range(5):
            x = rng.uniform(-1.0, 1.0, 25)
            a, b = replayed(x), interpreted(x)
            assert (a.indptr == b.indptr).all() and (a.indices == b.indices).all()
            np.testing.assert_array_equal(a.data, b.data)
        assert isinstance(replayed.prepare(x)._nonzeros, Transformed)
        assert not isinstance(interpreted.prepare(x)._nonzeros, Transformed)


def test_several_passes_are_interpreted_unless_replay_is_asked_for():
    """Recording takes twice a pass's memory: by default only a one-pass problem replays."""
    x = np.linspace(-1.0, 1.0, 25)
    default, forced = (dualad.sparse_jacobian(bratu, chunk_size=1),
                       dualad.sparse_jacobian(bratu, chunk_size=1, replay=True))
    assert not isinstance(default.prepare(x)._nonzeros, Transformed)
    assert isinstance(forced.prepare(x)._nonzeros, Transformed)
    assert isinstance(dualad.sparse_jacobian(bratu).prepare(x)._nonzeros, Transformed)
    for scale in (1.0, 0.5, 0.25, 0.125):
        np.testing.assert_array_equal(forced(scale * x).data, default(scale * x).data)



class _Coupling:
    """State a residual reads: whether its ends are coupled (a periodic boundary)."""

    periodic = False


def _coupled(u, scale=1.0):
    padded = np.concatenate((u[-1:] if _Coupling.periodic else [0.0], u,
                             u[:1] if _Coupling.periodic else [0.0]))
    return scale * (padded[:-2] - 2.0 * u + padded[2:]) + np.exp(u)


@pytest.mark.parametrize("replay", [True, False])
@pytest.mark.parametrize("transform", ["jacobian", "jacobian_passes", "jacobian_rev",
                                       "hessian"])
def test_a_pattern_that_changes_with_state_is_found_again(transform, replay):
    """The pattern is the function's structure: a call that does not replay its
    recording to the end (the proof that the structure is the recorded one) — of
    its passes, or of the function alone where the passes are not recorded (one
    colour a pass) — finds it again, and a changed one is prepared anew. Every
    call equals the dense transform (Jacobians bit for bit). Keyword arguments go
    to the function."""
    make, dense = {
        "jacobian": (lambda: dualad.sparse_jacobian(_coupled, replay=replay), dualad.jacfwd),
        "jacobian_passes": (lambda: dualad.sparse_jacobian(
            _coupled, chunk_size=1, replay=None if replay else False), dualad.jacfwd),
        "jacobian_rev": (lambda: dualad.sparse_jacobian(_coupled, mode="rev", replay=replay),
                         dualad.jacrev),
        "hessian": (lambda: dualad.sparse_hessian(lambda u, scale=1.0: np.sum(
            _coupled(u, scale) ** 2), replay=replay), None),
    }[transform]
    sparse_transform = make()
    f = _coupled if dense is not None else None
    u = np.linspace(-1.0, 1.0, 7)
    replays = 0
    try:
        for k in range(14):
            _Coupling.periodic = k % 6 == 5  # changed for one call, then back
            x = u * (1 + 0.1 * k)
            got = sparse_transform(x, scale=2.0).toarray()
            if dense is None:  # the colours' sums round otherwise: to rounding
                want = dualad.hessian(lambda u: np.sum(_coupled(u, 2.0) ** 2))(x)
                np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, err_msg=str(k))
            else:
                np.testing.assert_array_equal(got, dense(f)(x, scale=2.0), err_msg=str(k))
            prepared = sparse_transform.prepare(x)
            for cached in (prepared._nonzeros, prepared._prover):
                if isinstance(cached, Transformed):
                    replays = max(replays, cached.counts["replayed"])
        assert replays > 0 or not replay  # the proof of a replay engaged
    finally:
        _Coupling.periodic = False


@pytest.mark.parametrize("replay", [True, False])
def test_a_prepared_transform_refuses_a_changed_pattern(replay):
    """Called directly, at every call while the pattern differs: a recording made
    in such a call (not its pattern's) never proves a later one."""
    prepared = dualad.sparse_jacobian(_coupled, replay=replay).prepare(np.ones(5))
    for k in range(4):
        prepared(np.ones(5) * k)
    _Coupling.periodic = True
    try:
        for k in range(6):
            with pytest.raises(dualad.sparse.PatternChanged, match="prepare it again"):
                prepared(np.ones(5) * k)
    finally:
        _Coupling.periodic = False
    assert prepared(np.ones(5)).nnz == 13

def test_the_differentiated_argument_may_come_first():
    f = lambda u, lam, scale=1.0: scale * bratu(u, lam)  # noqa: E731
    x = np.linspace(0.0, 1.0, 6)
    for jac in (dualad.sparse_jacobian(f), dualad.sparse_jacobian(f, mode="rev")):
        np.testing.assert_allclose(jac(x, 2.0, 3.0).toarray(), dualad.jacfwd(f)(x, 2.0, 3.0))
    hess = dualad.sparse_hessian(lambda a, x, b: a * rosenbrock(x) + b, argnums=1)
    np.testing.assert_allclose(hess(2.0, x, 1.0).toarray(), 2.0 * dualad.hessian(rosenbrock)(x))


def test_colours_in_chunks_give_the_same_matrices():
    x = np.linspace(-1.0, 1.0, 25)
    y = np.random.default_rng(2).uniform(0.5, 1.5, 72)
    for chunk_size in (1, 2):
        np.testing.assert_array_equal(
            dualad.sparse_jacobian(bratu, chunk_size=chunk_size)(x).toarray(),
            dualad.sparse_jacobian(bratu)(x).toarray())
        np.testing.assert_allclose(
            dualad.sparse_jacobian(brusselator, 1, mode="rev", chunk_size=chunk_size)(
                0.0, y).toarray(), dualad.jacfwd(brusselator, argnums=1)(0.0, y), rtol=1e-13)
        np.testing.assert_allclose(
            dualad.sparse_hessian(laplacian_energy, chunk_size=chunk_size)(x).toarray(),
            dualad.hessian(laplacian_energy)(x), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="chunk_size"):
        dualad.sparse_jacobian(bratu, chunk_size=0)


def test_a_second_opinion_only_where_a_rule_may_pick_by_value():
    calls = []

    def counted(f):
        def wrapper(x):
            calls.append(1)
            return f(x)
        return wrapper

    jacobian_sparsity(counted(bratu), np.zeros(6))  # slices only: no doubt
    assert len(calls) == 1
    jacobian_sparsity(counted(lambda x: x[np.array([2, 0])] * 2.0), np.zeros(6))
    assert len(calls) == 3  # an index array: asked again at another point, same pattern
    with pytest.raises(ValueDependentError, match="another point"):
        jacobian_sparsity(lambda x: np.union1d(x, [0.5]), np.zeros(4))  # equal values too


@pytest.mark.parametrize("replay", [None, False])
def test_a_sparse_matrix_inside_another_transform_says_it_cannot_hold_its_derivative(replay):
    inner_jacobian = lambda p: dualad.sparse_jacobian(lambda u: u * p[0], replay=replay)(
        np.ones(3)).toarray().sum()
    with pytest.raises(TypeError, match="enclosing transform.*dualad.jacfwd"):
        dualad.jacfwd(inner_jacobian)(np.array([2.0]))
    inner_hessian = lambda p: dualad.sparse_hessian(lambda u: p[0] * np.sum(u ** 3),
                                                    replay=replay)(np.ones(3)).toarray().sum()
    with pytest.raises(TypeError, match="enclosing transform"):
        dualad.jacfwd(inner_hessian)(np.array([2.0]))
    # What does not depend on the enclosing transform's values stays a sparse array.
    constant = lambda p: p * dualad.sparse_jacobian(lambda u: u ** 2, replay=replay)(
        np.ones(3)).toarray().sum()
    assert_allclose(dualad.jacfwd(constant)(np.array([2.0])), [[6.0]])
