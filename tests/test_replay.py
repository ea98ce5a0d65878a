"""The replay (``dualad/replay/``) against the interpreter it stands in for.

Every spec row's function goes through ``jacfwd``, ``jacrev`` and ``hessian``
with and without replay at four points; the replayed results must be the
interpreter's bit for bit, and most rows must actually replay (a test of a
cache that never engages would pass vacuously). Then the cases where a call
must leave the recording: branches on values, values read outside the
recording, randomness, arguments that change, threads, and the cache's bounds.
The state a function reads and changes between calls is tested in
``test_replay_state.py``.
"""

from __future__ import annotations

import gc
import math
import threading
import warnings

import numpy as np
import optree
import pytest

import dualad
from dualad.replay import Interpreted, Recording, Transformed, identical
from dualad.replay.transformed import _BY_FUNCTION, _caches_of
from specs import SPECS

TRANSFORMS = {
    "jacfwd": lambda f, replay: dualad.jacfwd(f, argnums=ARGNUMS[f], replay=replay),
    "jacrev": lambda f, replay: dualad.jacrev(f, argnums=ARGNUMS[f], replay=replay),
    "hessian": lambda f, replay: dualad.hessian(f, argnums=ARGNUMS[f], replay=replay),
}
ARGNUMS: dict = {}


def _points(spec, shapes, count: int = 4) -> list[tuple]:
    rng = np.random.default_rng(20261123)
    points = []
    for _ in range(50):
        args = spec.draw(rng, shapes)
        if spec.avoid is None or not spec.avoid(*args):
            points.append(args)
        if len(points) == count:
            break
    return points


def _state(transformed) -> str:
    """How the last calls of a transformed function went: "replayed" (a recording
    followed to the end), "recorded" (a recording, not yet replayed), "interpreted"."""
    entries = list(transformed.entries.values())
    if entries and all(isinstance(entry, Recording) for entry in entries):
        return "replayed" if transformed.counts["replayed"] else "recorded"
    return "interpreted" if any(isinstance(e, Interpreted) for e in entries) else "none"


def _outputs_size(spec, args) -> int:
    return sum(np.size(o) for o in optree.tree_leaves(spec.fun(*args)))


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_replay_equals_the_interpreter_on_every_spec_row(transform):
    states = {}
    for spec in SPECS:
        shapes = spec.shapes[0]
        points = _points(spec, shapes)
        if len(points) < 4:
            continue
        if transform == "hessian" and (sum(np.size(a) for a in points[0]) > 12
                                       or _outputs_size(spec, points[0]) > 12):
            continue
        f = lambda *a, _f=spec.fun: _f(*a)  # one function object per row
        ARGNUMS[f] = tuple(range(len(points[0])))
        replayed = TRANSFORMS[transform](f, True)
        interpreted = TRANSFORMS[transform](f, False)
        for args in points:
            try:
                expected = interpreted(*args)
            except Exception as error:  # a row outside this transform's reach
                with pytest.raises(type(error)):
                    replayed(*args)
                break
            assert identical(replayed(*args), expected), f"{spec.id}: replay differs"
        states[spec.id] = _state(replayed)
    counts = {s: sum(1 for v in states.values() if v == s) for s in set(states.values())}
    # Most rows replay; those that do not keep the interpreter for a reason.
    assert counts.get("replayed", 0) >= 0.6 * len(states), counts
    for name in ("sin", "exp", "multiply", "matmul", "sum", "linalg.solve", "tanh"):
        rows = [k for k in states if k.split("[")[0] == name]
        assert transform == "hessian" or rows, name
        assert not rows or any(states[k] == "replayed" for k in rows), name


def test_a_branch_on_a_value_continues_in_the_interpreter():
    f = lambda x: x ** 2 if np.sum(x) > 0 else -x ** 3
    jac = dualad.jacfwd(f)
    for x in ([1.0, 2.0], [2.0, 3.0], [3.0, 1.0], [-1.0, -2.0], [4.0, 1.0], [-2.0, -1.0],
              [5.0, 1.0], [6.0, 2.0], [7.0, 3.0]):
        x = np.array(x)
        np.testing.assert_array_equal(jac(x), dualad.jacfwd(f, replay=False)(x))
    assert _state(jac) == "replayed"
    assert jac.counts["continued"] == 2  # each change of branch, then recorded anew


def test_a_mask_built_outside_the_recording_keeps_the_interpreter():
    def pieces(x):  # np.piecewise converts its conditions with np.asarray
        return np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, np.sin, 0.25])

    d = dualad.derivative(pieces)
    for x in (0.7, 0.8, 0.9, -0.7, 0.1, -0.8):
        assert d(x) == dualad.derivative(pieces, replay=False)(x)
    assert _state(d) == "interpreted"


def test_randomness_is_drawn_at_every_call():
    rng = np.random.default_rng(0)
    grad = dualad.grad(lambda x: np.sum(x * rng.standard_normal(3)))
    results = [grad(np.ones(3)) for _ in range(12)]
    assert not any(np.array_equal(results[0], r) for r in results[1:])
    expected = np.random.default_rng(0).standard_normal((12, 3))
    np.testing.assert_array_equal(results, expected)
    assert _state(grad) == "interpreted"  # its constants differ at every call


def test_other_arguments_are_read_at_every_call():
    f = lambda x, A, scale: scale * np.sum(np.linalg.solve(A, x) ** 2)
    grad = dualad.grad(f)
    x = np.array([1.0, 2.0])
    for A, scale in [(np.eye(2), 1.0)] * 3 + [(2 * np.eye(2), 1.0), (np.eye(2), 3.0)]:
        np.testing.assert_array_equal(grad(x, A, scale), dualad.grad(f, replay=False)(x, A, scale))
    A = np.eye(2)
    grad(x, A, 1.0)
    A *= 5.0  # the same array, written: not the values recorded
    np.testing.assert_array_equal(grad(x, A, 1.0), 2 * np.linalg.solve(A, np.linalg.solve(A, x)))


def test_writes_into_results_and_arguments_stay_local():
    def rhs(y):  # an ODE right-hand side that fills its output
        dy = np.zeros_like(y)
        dy[0] = y[1]
        dy[1] = -np.sin(y[0]) - 0.1 * y[1]
        return dy

    jac = dualad.jacfwd(rhs)
    y = np.array([0.3, -0.2])
    before = y.copy()
    first = [jac(y * k) for k in (1.0, 2.0, 3.0, 1.0)]
    first[-1][:] = 7.0  # the caller writes into a result
    np.testing.assert_array_equal(jac(y), first[0])
    np.testing.assert_array_equal(y, before)
    assert _state(jac) == "replayed"


def test_equal_outputs_are_distinct_arrays():
    jac = dualad.jacfwd(lambda x: (np.sin(x) * 2, np.sin(x) * 2))
    for k in range(4):
        a, b = jac(np.ones(3) * k)
    assert _state(jac) == "replayed" and a is not b
    before = b.copy()
    a[:] = 7.0
    np.testing.assert_array_equal(b, before)



def test_repeated_calls_merge_only_where_nothing_is_lost():
    """A repeated selection (``x[1:]`` twice) is taken once; a repeated product is
    not merged (each may warn, as the interpreter's two do), nor are products by
    0.0 and -0.0 (their zeros' signs differ)."""
    def f(x):
        a, b = np.sin(x) * 0.0, np.sin(x) * -0.0
        return a, b, np.sum(x[1:] * 2.0), np.sum(x[1:] * 2.0)

    jac = dualad.jacfwd(f)
    for k in range(4):
        x = np.array([1.0, -2.0, 0.5]) * (k + 1)
        got = jac(x)
        assert identical(got, dualad.jacfwd(f, replay=False)(x))
    assert _state(jac) == "replayed"
    assert np.all(np.signbit(got[0]) != np.signbit(got[1]))
    huge = np.array([1.0, 1e308, 1e308])
    for transformed in (jac, dualad.jacfwd(f, replay=False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            transformed(huge)
        messages = [str(w.message) for w in caught]
        assert messages.count("overflow encountered in multiply") == 2, messages


def test_views_by_basic_indexing_need_no_overlap_guard():
    """Whether ``x[i]`` or ``x[1:]`` is a view of ``x`` is fixed by the recorded shapes:
    no ``np.may_share_memory`` is replayed for it; writes through the views still
    reach the array, as in the interpreter."""
    def f(x):
        head, tail, none = x[0], x[1:], x[5:]
        y = x * 1.0
        y[1:] *= head
        return np.sum(tail * y[1:]) + np.sum(none) + x[-1] ** 2

    grad = dualad.grad(f)
    for k in range(4):
        x = np.array([1.0, -2.0, 0.5]) * (k + 1)
        assert identical(grad(x), dualad.grad(f, replay=False)(x))
    assert _state(grad) == "replayed"
    recording = next(iter(grad.entries.values()))
    assert recording.source is not None  # compiled
    assert not any(v is np.may_share_memory
                   for v in recording.code.enter.__globals__.values())


@pytest.mark.parametrize("transform", ["jvp", "grad", "hvp"])
def test_large_temporaries_are_written_in_place_bit_for_bit(transform):
    """Above REUSE_MIN_BYTES a ufunc writes into a dead temporary (``out=``); the
    results stay the interpreter's, and no array the caller or the function holds
    is written into."""
    def f(x):
        y = np.sin(x) * np.exp(-x ** 2) + np.log1p(x ** 2)
        kept.append(dualad.primal_value(y).copy())
        return np.sum(y * y.reshape(-1)[::-1] + np.tanh(x) * x)

    n = 20_000
    rng = np.random.default_rng(3)
    t = rng.standard_normal(n)
    calls = {
        "jvp": lambda x, replay: dualad.jvp(f, (x,), (t,)) if replay
        else dualad.jvp(f, (x,), (t,), replay=False),
        "grad": lambda x, replay: dualad.grad(f, replay=replay)(x),
        "hvp": lambda x, replay: dualad.hvp(f, (x,), (t,)) if replay
        else dualad.hvp(f, (x,), (t,), replay=False),
    }[transform]
    kept: list = []
    for k in range(4):
        x = rng.standard_normal(n) * (1 + k)
        before, t_before = x.copy(), t.copy()
        got = calls(x, True)
        assert identical(got, calls(x, False))
        assert identical(kept[-2], kept[-1])  # what the function saw, both ways
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(t, t_before)
    recordings = [e for caches in _caches_of(f).values() for e in caches.entries.values()
                  if isinstance(e, Recording)]
    assert recordings and all("out=" in r.source for r in recordings)

def test_dtypes_and_types_are_the_interpreter_s():
    f = lambda x: np.sum(np.exp(x) * x)
    for x in (np.ones(3, np.float32), np.ones(3), 2.0, np.float32(2.0)):
        grad = dualad.grad(f)
        for _ in range(4):
            got, expected = grad(x), dualad.grad(f, replay=False)(x)
            assert type(got) is type(expected) and got.dtype == expected.dtype


def test_threads_get_their_own_answers():
    f = lambda x: np.tanh(x) * x ** 3
    jac = dualad.jacfwd(f)
    points = [np.linspace(-1, 1, 5) * (1 + k) for k in range(8)]
    expected = [dualad.jacfwd(f, replay=False)(x) for x in points]
    jac(points[0]), jac(points[1]), jac(points[2])
    errors = []

    def work(k):
        for _ in range(50):
            if not np.array_equal(jac(points[k]), expected[k]):
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_cache_is_bounded_and_dies_with_the_function():
    grad = dualad.grad(lambda x: np.sum(x ** 2))
    for n in range(1, 40):
        grad(np.ones(n)), grad(np.ones(n))
    assert len(grad.entries) <= dualad.replay.CACHE_SIZE
    before = len(_BY_FUNCTION)
    for k in range(50):
        dualad.jvp(lambda x: x * k, (1.0,), (1.0,))
    gc.collect()
    assert len(_BY_FUNCTION) <= before + 1


_CUBIC = lambda x: np.sin(x) * x ** 3
_ENERGY = lambda x: np.sum(np.sin(x) * x ** 3)
#: name -> (the transform written inline, its replay=False twin, point)
MADE_INLINE = {
    "jacfwd": (lambda **o: dualad.jacfwd(_CUBIC, argnums=0, **o), np.array([0.3, -1.2])),
    "jacrev": (lambda **o: dualad.jacrev(_CUBIC, nan_safe=True, **o), np.array([0.3, -1.2])),
    "grad": (lambda **o: dualad.grad(_ENERGY, **o), np.array([0.3, -1.2])),
    "value_and_grad": (lambda **o: dualad.value_and_grad(_ENERGY, **o), np.array([0.3, 1.2])),
    "hessian": (lambda **o: dualad.hessian(_ENERGY, mode="fwd-rev", **o), np.array([0.3, 1.])),
    "derivative": (lambda **o: dualad.derivative(_CUBIC, **o), 0.7),
    "second_derivative": (lambda **o: dualad.second_derivative(_CUBIC, **o), 0.7),
}


@pytest.mark.parametrize("name", sorted(MADE_INLINE))
def test_a_transform_made_again_at_every_call_replays(name):
    """``dualad.jacfwd(f)(x)`` in a loop: each transform made anew finds the cache of
    the first (made with the same options)."""
    make, x = MADE_INLINE[name]
    for _ in range(6):
        assert identical(make()(x), make(replay=False)(x))
    assert make().counts["replayed"] > 0, make().counts
    assert make().cache is make().cache


def test_a_transform_made_again_checks_its_options():
    f = lambda x: np.sin(x)
    dualad.jacfwd(f, argnums=0)(np.ones(2)), dualad.jacfwd(f, argnums=(1, 0))
    for argnums in (False, (True, 0)):  # equal to 0 and (1, 0), made before
        with pytest.raises(TypeError, match="argnums"):
            dualad.jacfwd(f, argnums=argnums)
    assert dualad.jacfwd(f, argnums=[0]) is not None  # an unhashable option: made anew


class _Model:
    def __init__(self, w: float) -> None:
        self.w = w

    def energy(self, x):
        return self.w * np.sum(np.sin(x) ** 2)


def test_a_bound_method_transformed_inline_replays_and_its_cache_dies_with_it():
    x = np.array([0.3, -1.2, 0.5])
    model, other = _Model(2.0), _Model(3.0)
    for k in range(6):
        for m in (model, other):
            got = dualad.grad(m.energy)(x)
            assert identical(got, dualad.grad(m.energy, replay=False)(x))
        if k == 3:
            model.w = 2.5  # an attribute changed: the replay sees it
    assert dualad.grad(model.energy).counts["replayed"] > 0
    assert dualad.grad(model.energy).cache is not dualad.grad(other.energy).cache
    gone = __import__("weakref").ref(model)
    gc.collect()  # the garbage of earlier tests first: only the model's entry may go below
    before = len(_BY_FUNCTION)
    del model
    gc.collect()
    assert gone() is None and len(_BY_FUNCTION) == before - 1


def test_replay_false_and_nested_transforms_interpret():
    assert not isinstance(dualad.jacfwd(np.sin, replay=False), Transformed)
    g = dualad.grad(lambda x: np.sum(np.sin(x) ** 2))
    hess = dualad.jacfwd(g)  # the inner grad sees Duals: it interprets
    x = np.array([0.1, 0.2])
    for _ in range(4):
        np.testing.assert_array_equal(hess(x), dualad.hessian(
            lambda x: np.sum(np.sin(x) ** 2), mode="fwd-rev", replay=False)(x))
    assert len(g.entries) == 0


def test_a_transform_inside_the_function_continues_in_the_interpreter():
    def f(x):  # a gradient taken inside: its Duals meet the outer call's values
        inner = dualad.grad(lambda y: np.sum(np.sin(x * y)), replay=False)(x)
        return np.sum(inner * x)

    jac = dualad.grad(f)
    for k in range(5):
        x = np.array([0.3, -0.4]) * (k + 1)
        assert identical(jac(x), dualad.grad(f, replay=False)(x))

    nested = {"now": False}

    def sometimes(x):  # replayed, until a call takes a gradient inside, late
        y = np.sin(x) * x
        if nested["now"]:
            inner = dualad.grad(lambda z: np.sum(z * y * x))(x)
            return np.sum(inner * y)
        return np.sum(y * y)

    for transform in (dualad.grad, dualad.hessian, dualad.jacfwd):
        replayed, interpreted = transform(sometimes), transform(sometimes, replay=False)
        for k in range(8):
            nested["now"] = k in (3, 6)
            x = np.array([0.3, -0.4]) * (k + 1)
            assert identical(replayed(x), interpreted(x)), (transform.__name__, k)
        assert replayed.counts["continued"] == 2, replayed.counts


# -- random programs ---------------------------------------------------------------

_STEPS = [
    lambda x, c: np.sin(x) * c,
    lambda x, c: np.tanh(x + c),
    lambda x, c: x * x - c,
    lambda x, c: np.exp(-x ** 2) + c * x,
    lambda x, c: np.where(x > c, x, c * x),                # a mask on values
    lambda x, c: np.maximum(x, c) - np.minimum(x, 0.5 * c),
    lambda x, c: x / (1.0 + np.abs(x)),
    lambda x, c: np.cumsum(x) * c,
    lambda x, c: x[::-1] + c,
    lambda x, c: np.sort(x) * c,                           # order depends on values
    lambda x, c: x - np.mean(x) * c,
    lambda x, c: np.roll(x, 1) * x,
    lambda x, c: (x if np.sum(x) > c else -x) * 1.5,      # a Python branch on a value
    lambda x, c: np.concatenate([x[1:], x[:1] * c]),
    lambda x, c: np.linalg.solve(np.eye(x.size) * 3.0 + np.outer(x, x) * 0.1, x),
]


def _program(steps, constants):
    def f(x):
        for step, c in zip(steps, constants):
            x = _STEPS[step](x, c)
        return np.sum(x ** 2) if len(steps) % 2 else x
    return f


@pytest.mark.parametrize("seed", range(12))
def test_replay_equals_the_interpreter_on_random_programs(seed):
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, len(_STEPS), size=rng.integers(2, 7))
    f = _program(steps, rng.uniform(-1.0, 1.0, len(steps)))
    transforms = [(dualad.jacfwd(f), dualad.jacfwd(f, replay=False)),
                  (dualad.jacrev(f), dualad.jacrev(f, replay=False)),
                  (dualad.hessian(f), dualad.hessian(f, replay=False))]
    for replayed, interpreted in transforms:
        for _ in range(6):
            x = rng.normal(size=5)
            assert identical(replayed(x), interpreted(x)), list(steps)


def test_an_ode_right_hand_side_replays_across_t():
    def robertson(t, y):  # an object array of 0-d Duals; t unused, as in most stiff RHS
        return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                         0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                         3e7 * y[1] ** 2])

    def damped(t, y):  # t an operand: a register, whatever its value
        return -y * t + np.exp(y) * t

    for rhs in (robertson, damped):
        jac = dualad.jacfwd(rhs, argnums=1)
        for k in range(8):
            t = 0.3 * k if k % 2 else np.float64(0.3 * k)  # solve_ivp passes both
            y = np.array([1.0, 2e-5, 1e-2]) * (1 + k)
            np.testing.assert_array_equal(
                jac(t, y), dualad.jacfwd(rhs, argnums=1, replay=False)(t, y))
        assert _state(jac) == "replayed" and jac.counts["continued"] == 0, rhs.__name__


def test_values_computed_from_t_in_python_are_inputs():
    """A float computed in Python from what changes at every call (an ODE's forcing
    np.sin(2 * t), math.exp(-t)) leaves the recording once; the next recording takes
    it as an input of its operation, of any value (its type checked), and replays."""
    def forced(t, y, mu=5.0):
        forcing = np.sin(2 * t) if t > 0.5 else 0.1 * t  # np.float64, or a float
        return np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0] + forcing * y[0]])

    def reads_the_float(t, y):
        return -y * math.exp(-t)

    def two_forcings(t, y):
        return np.array([y[1] * np.cos(t), -y[0] * np.exp(-0.1 * t) + np.float64(t) * y[1]])

    for rhs in (forced, reads_the_float, two_forcings):
        jac = dualad.jacfwd(rhs, argnums=1)
        for k in range(30):
            t, y = 0.1 * k, np.array([np.cos(k), np.sin(k)])
            assert identical(jac(t, y), dualad.jacfwd(rhs, argnums=1, replay=False)(t, y))
        assert _state(jac) == "replayed", (rhs.__name__, jac.counts)
        replayed = jac.counts["replayed"]
        for k in range(30, 35):  # and replays from then on
            t, y = 0.1 * k, np.array([np.cos(k), np.sin(k)])
            assert identical(jac(t, y), dualad.jacfwd(rhs, argnums=1, replay=False)(t, y))
        assert jac.counts["replayed"] == replayed + 5, (rhs.__name__, jac.counts)


def test_floats_made_anew_at_every_call_become_inputs_together():
    """After a call finds one float changed, the next recording also takes as inputs
    the floats that are new objects at every call (read from an array, computed
    from t), so that the changes after it replay; a literal of the code stays a
    constant."""
    weights = np.ones(4)

    def f(x):
        return np.sin(x) * weights[0] + x * weights[1] - np.exp(x) * weights[2] + x * 2.5

    jac = dualad.jacfwd(f)
    x = np.array([0.3, -0.7])
    for k in range(12):
        weights[k % 3] = 1.0 + 0.1 * k
        assert identical(jac(x), dualad.jacfwd(f, replay=False)(x)), k
    assert jac.counts["recorded"] == 2 and jac.counts["continued"] == 1, jac.counts
    recording = next(iter(jac.entries.values()))
    assert sum(len(positions) for positions in recording.variable.values()) == 3


SCALE = 1.0

VARYING_FLOATS = {  # each reads a float that changes at every call, in a different place
    "power": lambda t, y: y ** (1.5 + t),
    "clip": lambda t, y: np.clip(y, -t, t) * y,
    "comparison": lambda t, y: np.where(y > 0.3 * t, y * t, -y),
    "keyword": lambda t, y: np.sum(y * y) * np.float64(t) + np.linalg.norm(y, ord=2.0 + 0 * t),
    "twice": lambda t, y: (y * np.sin(t)) * np.sin(t),
    "state": lambda t, y: y * (SCALE * t),
    "float_then_scalar": lambda t, y: y * (t if t < 1.0 else np.float64(t)),
}


@pytest.mark.parametrize("name", sorted(VARYING_FLOATS))
def test_floats_that_change_are_inputs_bit_for_bit(name):
    """Whatever a float that changes between calls meets (a power's exponent, a
    bound, a comparison, a keyword, a rebound global), every call is the
    interpreter's bit for bit."""
    global SCALE
    rhs = VARYING_FLOATS[name]
    jac = dualad.jacfwd(rhs, argnums=1)
    for k in range(30):
        SCALE = 1.0 + (k // 10)
        t, y = 0.1 * k + 0.05, np.array([np.cos(k), 0.5 + np.sin(k) ** 2])
        expected = dualad.jacfwd(rhs, argnums=1, replay=False)(t, y)
        assert identical(jac(t, y), expected), (name, k)
    SCALE = 1.0
    assert jac.counts["replayed"], jac.counts  # the changing floats became inputs
    # a recording that keeps being left (a mask moving with t) stops being made
    assert jac.counts["recorded"] <= dualad.replay.cache.MAX_MISSES + 3, jac.counts


def test_calls_alternating_between_signatures_each_find_their_own():
    """The last signature is checked by code of its own (no key is built): a call
    of another shape, dtype, layout or argument type must not take its recording."""
    base = np.linspace(0.1, 0.9, 6)
    xs = [0.5, base, base[:5], base.astype(np.float32), base[::2], base.reshape(2, 3),
          base[:3].copy(), [0.1, 0.2, 0.3], np.arange(6),
          np.linspace(0.1, 0.9, 12).astype(np.float32)[::2]]  # base's shape and strides
    ts = [2.0, np.float64(2.0), 3, np.float32(2.0), np.array(2.0)]
    # one argument changes at a time
    calls = [(x, t) for t in ts for x in xs] + [(x, t) for x in xs for t in ts]
    for group in range(0, len(calls), 7):  # within the cache's size
        f = lambda x, t: np.sum(np.sin(x) * t) * x  # a cache of its own
        jac = dualad.jacfwd(f)
        for _ in range(4):
            for x, t in calls[group:group + 7]:
                expected = dualad.jacfwd(f, replay=False)(x, t)
                assert identical(jac(x, t), expected), (x, t)
        assert jac.counts["replayed"] > 0


def test_a_signature_records_after_record_after_interpreted_calls(monkeypatch):
    """As users get it: RECORD_AFTER interpreted calls, then one recording, then
    COMPILE_AFTER replays by the recorded calls run directly, then replays by the
    compiled code; every call the interpreter's, bit for bit."""
    from conftest import DEFAULT_COMPILE_AFTER, DEFAULT_RECORD_AFTER
    from dualad.replay import cache

    monkeypatch.setattr(cache, "RECORD_AFTER", DEFAULT_RECORD_AFTER)
    monkeypatch.setattr(cache, "COMPILE_AFTER", DEFAULT_COMPILE_AFTER)
    f = lambda x: np.sum(np.sin(x) * x ** 2)
    grad = dualad.grad(f)
    for k in range(DEFAULT_RECORD_AFTER + 1 + DEFAULT_COMPILE_AFTER + 2):
        x = np.linspace(-1.0, 1.0, 5) * (k + 1)
        assert identical(grad(x), dualad.grad(f, replay=False)(x))
        recording = next(iter(grad.entries.values()))
        compiled = k >= DEFAULT_RECORD_AFTER + DEFAULT_COMPILE_AFTER
        assert isinstance(recording, cache.Recording) == (k >= DEFAULT_RECORD_AFTER)
        assert (getattr(recording, "source", None) is not None) == compiled
    assert grad.counts == {"interpreted": DEFAULT_RECORD_AFTER, "recorded": 1,
                           "replayed": DEFAULT_COMPILE_AFTER + 2, "continued": 0}


@pytest.mark.parametrize("problem", ["Weibull MLE, minimize(trust-exact)",
                                     "Robertson, solve_ivp(BDF)",
                                     "Van der Pol (mu = 1000), solve_ivp(BDF)",
                                     "exponential decay, least_squares"])
def test_scipy_solves_with_the_replay_are_the_interpreter_s(problem):
    """The time-to-solution problems of ``python -m dualad.bench.solvers``: the
    solver takes the same steps with and without the replay, to the last bit."""
    from dualad.bench.solvers import PROBLEMS

    solve = PROBLEMS[problem]
    np.testing.assert_array_equal(solve("dualad"), solve("dualad, replay=False"))


def test_jvp_s_tuples_are_checked_by_the_signature_of_the_last_call():
    # jvp's primals and tangents are tuples: the last call's signature accepts them
    # leaf by leaf, and any leaf of another shape, dtype, layout or kind is a new call.
    f = lambda y, p: np.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[1] * y[0] * y[1]])
    y, p = np.array([10.0, 5.0]), np.array([1.5, 1.0])
    calls = [((y, p), (np.ones((3, 2)), np.eye(3, 2))),
             ((y[::-1].copy(), p), (np.ones((3, 2)), np.eye(3, 2))),
             ((y.astype(np.float32), p.astype(np.float32)),
              (np.ones((3, 2), np.float32), np.eye(3, 2, dtype=np.float32))),
             ((np.array([10.0, 5.0, 1.0])[::2], p), (np.ones((3, 2)), np.eye(3, 2))),
             ((y, p), (np.ones((2, 2)), np.eye(2))),
             ((y, p, ), (np.ones((3, 2)), np.eye(3, 2)))]
    for primals, tangents in calls * 12:
        got = dualad.jvp(f, primals, tangents, batched=True)
        expected = dualad.jvp(f, primals, tangents, batched=True, replay=False)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and np.array_equal(g, e)
    from dualad.replay.transformed import _caches_of
    (cache,) = _caches_of(f).values()
    assert cache.counts["replayed"] > 12, cache.counts
