"""The replay with state that changes between calls (issue: "the replay must never
return a stale derivative").

Each reproducer is a function that reads state — a rebound global, a helper's
global, an attribute, an argument object, an array written in place, a decision
in Python, warnings and errstate — changed before every call. Every transform it
applies to is called many times with the replay on and off, on the same state,
and the results must be the same bit for bit (exceptions included). Each test
also checks that the replay engaged (a test of a cache that never runs would
pass vacuously). Then the user's Python: it runs once per call, and keeps plain
values only. Last, a hypothesis test draws programs that read state of every kind
and change it at random between calls.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import dualad
from dualad.primitive import EscapedDualError
from dualad.replay import identical

X = np.array([0.7, -1.2, 0.4])
ONES = np.ones(3)

#: Transforms of a vector function ``g``: each makes, for ``replay``, a function of
#: the call's arguments (the point first).
TRANSFORMS = {
    "jacfwd": lambda g, replay: dualad.jacfwd(g, replay=replay),
    "jacrev": lambda g, replay: dualad.jacrev(g, replay=replay),
    "jvp": lambda g, replay: lambda x, *a: dualad.jvp(lambda x: g(x, *a), (x,), (ONES,),
                                                      replay=replay),
    "grad": lambda g, replay: dualad.grad(_scalar(g), replay=replay),
    "hessian": lambda g, replay: dualad.hessian(_scalar(g), replay=replay),
    "hvp": lambda g, replay: lambda x, *a: dualad.hvp(_scalar(g), (x,) + a, (ONES,) + tuple(
        np.zeros_like(v) for v in a), replay=replay),
    "sparse_jacobian": lambda g, replay: _dense(dualad.sparse_jacobian(g, replay=replay)),
    "sparse_hessian": lambda g, replay: _dense(dualad.sparse_hessian(_scalar(g),
                                                                    replay=replay)),
    "laplacian": lambda g, replay: dualad.laplacian(g, replay=replay),
}
_SCALARS: dict = {}


def _scalar(g):
    """``sum(g(x)²)/2``, one function object per ``g`` (the replay's cache is found
    from the function)."""
    if g not in _SCALARS:
        _SCALARS[g] = lambda x, *a: 0.5 * np.sum(g(x, *a) ** 2)
    return _SCALARS[g]


def _dense(sparse_transform):
    return lambda *args: sparse_transform(*args).toarray()


class Raised:
    """An exception as an outcome: its type and message."""

    def __init__(self, error: Exception) -> None:
        self.kind, self.message = type(error), str(error)

    def __eq__(self, other) -> bool:
        return type(other) is Raised and (self.kind, self.message) == (other.kind,
                                                                         other.message)

    def __repr__(self) -> str:
        return f"Raised({self.kind.__name__}: {self.message})"


def _outcome(f, args):
    try:
        return f(*args)
    except Exception as error:  # noqa: BLE001  (the interpreter's exception is the answer)
        return Raised(error)


def run_like_the_interpreter(g, change, transforms=TRANSFORMS, calls=12, args=lambda k: (X,),
                             engaged=True, every=3):
    """Call each transform of ``g`` ``calls`` times with and without replay, the state
    changed (``change(j)``) before every ``every``-th call: the same results bit for
    bit. With ``engaged``, at least one call of each replayed to the end (the calls
    between two changes can)."""
    for name, make in transforms.items():
        replayed, interpreted = make(g, True), make(g, False)
        for k in range(calls):
            if k % every == 0:
                change(k // every)
            expected = _outcome(interpreted, args(k))
            got = _outcome(replayed, args(k))
            if type(expected) is Raised or type(got) is Raised:
                assert got == expected, (name, k, got, expected)
            else:
                assert identical(got, expected), (name, k, got, expected)
        counts = _counts(g, name, replayed)
        if engaged and counts is not None:
            assert counts["replayed"] > 0, (name, counts)


def _counts(g, name, transformed):
    """The replay cache's counts of a transform of ``g`` (found as the transform finds it)."""
    if hasattr(transformed, "counts"):
        return transformed.counts
    from dualad.replay.transformed import _caches_of
    target = _scalar(g) if name == "hvp" else None
    caches = _caches_of(target) if target is not None else None
    return next(iter(caches.values())).counts if caches else None


# -- 1. rebinding --------------------------------------------------------------------

S = 2.0


def _scaled(x):
    return S * np.sin(x) * x


def test_a_rebound_float_is_seen_whatever_its_address():
    def change(k):
        global S
        S = S + 1.0  # freed floats' addresses are reused: the old key was stale at call 5

    run_like_the_interpreter(_scaled, change, calls=30)


MU = 1.0


def test_an_interior_point_loop_rebinding_its_barrier_parameter():
    def barrier(x):
        return np.sum(x ** 2) - MU * np.sum(np.log(x + 2.0))

    newton = []
    for replay in (True, False):
        global MU
        MU, x = 1.0, np.array([0.5, 0.3])
        grad, hess = dualad.grad(barrier, replay=replay), dualad.hessian(barrier, replay=replay)
        for _ in range(12):
            x = x - np.linalg.solve(hess(x), grad(x))
            MU = MU * 0.2
        newton.append(x)
    np.testing.assert_array_equal(*newton)


# -- 2. state read anywhere ----------------------------------------------------------

HS = 1.0
ACT = np.sin


def _helper(x):
    return HS * np.sin(x)


def _uses_helper(x):
    return _helper(x) * x


def _uses_callable(x):
    return ACT(x) * x


def _uses_redefined(x):
    return _redefined(x) + x


def _redefined(x):
    return np.sin(x)


def test_a_helper_function_s_global():
    def change(k):
        global HS
        HS = 1.0 + k

    run_like_the_interpreter(_uses_helper, change)


def test_a_global_callable_rebound():
    def change(k):
        global ACT
        ACT = (np.sin, np.cos, np.tanh, np.sin)[k % 4]

    run_like_the_interpreter(_uses_callable, change, calls=15)


def test_a_function_redefined_as_in_a_notebook_cell():
    def change(k):
        global _redefined
        scale = 1.0 + k

        def _redefined(x):  # noqa: F811  (a new definition, as a cell run again)
            return scale * np.sin(x)

    run_like_the_interpreter(_uses_redefined, change)


def test_partial_and_decorated_functions():
    weights = {"w": 1.0}

    def weighted(x, w):
        return w["w"] * np.tanh(x)

    def decorate(f):
        @functools.wraps(f)
        def wrapper(x):
            return f(x) * weights["w"]
        return wrapper

    decorated = decorate(np.sin)
    partial = functools.partial(weighted, w=weights)

    def change(k):
        weights["w"] = 1.0 + 0.5 * k

    run_like_the_interpreter(partial, change)
    run_like_the_interpreter(decorated, change)


def test_data_assigned_after_the_transform_was_made():
    holder = {}
    f = lambda x: holder["data"] * x  # noqa: E731
    jac, expected = dualad.jacfwd(f), dualad.jacfwd(f, replay=False)
    for k in range(6):
        holder["data"] = np.arange(3.0) + k
        assert identical(jac(X), expected(X))
    assert jac.counts["replayed"] == 0  # new values at every call: never the recorded ones


# -- 3. objects --------------------------------------------------------------------------

class Model:
    def __init__(self):
        self.w = 1.0
        self.W = np.eye(3)

    def energy(self, x):
        return self.w * (self.W @ x) ** 2


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    table: np.ndarray = dataclasses.field(compare=False)


def test_an_attribute_of_the_object_whose_method_is_differentiated():
    model = Model()

    def change(k):
        model.w = 1.0 + k

    jac, expected = dualad.jacfwd(model.energy), dualad.jacfwd(model.energy, replay=False)
    for k in range(12):
        if k % 3 == 0:
            change(k)
        assert identical(jac(X), expected(X))
    assert jac.counts["replayed"] > 0
    run_like_the_interpreter(lambda x: model.energy(x), change)


def test_objects_as_arguments():
    model, frozen = Model(), Frozen(2.0, np.ones(3))

    def change(k):
        model.w = 1.0 + k
        frozen.table[:] = k  # a field the dataclass's equality does not compare

    uses = lambda x, m, fr: m.w * np.sin(x) * fr.table  # noqa: E731
    run_like_the_interpreter(uses, change, args=lambda k: (X, model, frozen),
                             transforms={k: TRANSFORMS[k] for k in ("jacfwd", "jacrev",
                                                                    "hessian")})


def test_minus_zero_is_not_zero():
    def signed(x, c):
        return np.sqrt(np.abs(c) + x ** 2) * np.copysign(1.0, c)

    zeros = (np.float64(0.0), np.float64(-0.0))
    run_like_the_interpreter(signed, lambda k: None, args=lambda k: (X, zeros[k // 3 % 2]),
                             transforms={k: TRANSFORMS[k] for k in ("jacfwd", "jacrev")})


# -- 4. arrays written in place ------------------------------------------------------------

D = np.ones(3)
PARAMS = {"k": 1.0, "v": np.ones(3)}
COEF = np.array([1.0, 0.5])


def _in_place(x):
    return D * np.sin(x) * PARAMS["k"] + PARAMS["v"] * x + COEF[0] * x ** 2


def test_arrays_written_in_place():
    model = Model()

    def change(k):
        D[:] = 1.0 + k
        PARAMS["k"] = 1.0 - 0.1 * k
        PARAMS["v"][k % 3] += 1.0
        COEF[0] += 1.0
        model.W[:] *= 1.1

    run_like_the_interpreter(_in_place, change)
    run_like_the_interpreter(lambda x: model.energy(x), change)


# -- 5. decisions in Python -----------------------------------------------------------------

def test_decisions_on_a_float_the_function_reads():
    times = [0.0, 0.05, 1.5, 0.3, 2.5, 3.1, 0.1, 1.2, 0.2, 0.25]

    def switched(t, y):  # a bang-bang input
        return (1.0 if math.floor(t) % 2 == 0 else -1.0) * y ** 2

    def by_sine(t, y):
        return (1.0 if math.sin(3 * t) > 0 else -1.0) * y ** 2

    for f in (switched, by_sine):
        jac = dualad.jacfwd(f, argnums=1)
        for t in times:
            assert identical(jac(t, X), dualad.jacfwd(f, argnums=1, replay=False)(t, X)), t


def test_decisions_inside_a_rule_on_the_values_it_meets():
    """np.roots, np.poly of a matrix and (NumPy before 2.5) eigvals return real values
    where every eigenvalue is real, complex otherwise: a decision of the rule on the
    values, which the replay must guard (recorded on one kind of spectrum, it returned
    complex derivatives on the other)."""
    real_roots, complex_roots = np.array([1.0, -3.0, 2.0]), np.array([1.0, 0.0, 1.0])
    symmetric, rotation = np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[0.3, -1.2],
                                                                        [0.9, 0.1]])
    for f, points in ((lambda p: np.roots(p).real, (real_roots, complex_roots)),
                      (lambda a: np.abs(np.poly(a)), (symmetric, rotation)),
                      (lambda a: np.abs(np.linalg.eigvals(a)), (symmetric, rotation))):
        run_like_the_interpreter(
            lambda x, f=f: f(x), lambda j: None,
            transforms={k: TRANSFORMS[k] for k in ("jacfwd", "jacrev", "grad")},
            calls=20, every=20, engaged=False,
            args=lambda k, points=points: (points[(k // 5) % 2] + 0.001 * k,))


def test_decisions_on_numpy_scalars_that_are_one_object():
    """Comparisons give np.True_ and np.False_, one object each: every operation's
    result is its own (found in a library corpus: lmfit's ``max(1e-15, sigma)``,
    pvlib's ``(z[0] > 0) & (z[1] > 0)``)."""
    xs = np.array([0.35, 0.9, 1.6, 2.3, 3.1])

    def gaussian(p):  # lmfit.lineshapes.gaussian in its parameters
        return p[0] / max(1e-15, p[2]) * np.exp(-(xs - p[1]) ** 2 / max(1e-15, p[2]) ** 2)

    def both_positive(z):
        return np.where((z[0] > 0) & (z[1] > 0), z[0] * z[1], 0.0) + z

    def pair(z):  # two equal booleans in one result, and a NumPy scalar beside them
        flags = (z[0] > 0, z[1] > 0, z[2] < 0)
        return z * (flags[0] & flags[1]) + z * flags[2] + np.sum(z) * (z[0] > -1)

    for g in (gaussian, both_positive, pair):
        run_like_the_interpreter(g, lambda k: None, args=lambda k: (np.array([1.3, 0.2, 0.9]),))
        run_like_the_interpreter(g, lambda k: None,
                                 args=lambda k: (np.array([1.3, 0.2, 0.9]) * (-1) ** k,),
                                 every=1, engaged=False)


# -- 6. the user's Python runs on every call -------------------------------------------------

def test_side_effects_happen_once_per_call():
    calls, seen = [], []

    def counted(x):
        calls.append(1)
        seen.append(float(dualad.primal_value(x)[0]))
        return np.sin(x) * x

    for name, make in TRANSFORMS.items():
        if name in ("hvp", "sparse_jacobian", "sparse_hessian", "hessian"):
            continue
        calls.clear()
        f = make(counted, True)
        for k in range(6):
            f(X + k)
        assert len(calls) == 6, (name, len(calls))
    assert seen[-6:] == [float(X[0] + k) for k in range(6)]


def test_errstate_and_warnings_inside_the_function():
    def raising(x):
        with np.errstate(all="raise"):
            return np.log(x)

    def falling_back(x):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                return np.log(x)
            except RuntimeWarning:
                return x * 1.0

    points = [np.abs(X), np.abs(X) + 1, X, np.abs(X) + 2, X - 5.0, np.abs(X) + 3]
    for f in (raising, falling_back):
        run_like_the_interpreter(f, lambda k: None, args=lambda k: (points[k % 6],),
                                 transforms={k: TRANSFORMS[k] for k in ("jacfwd", "jacrev")},
                                 calls=12, every=1)


def test_warnings_are_given_once_per_call():
    f = lambda x: np.log(x) * x  # noqa: E731
    jac = dualad.jacfwd(f)
    for k in range(4):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            jac(np.array([0.0, 1.0 + k]))
        messages = [str(w.message) for w in caught]
        with warnings.catch_warnings(record=True) as expected:
            warnings.simplefilter("always")
            dualad.jacfwd(f, replay=False)(np.array([0.0, 1.0 + k]))
        assert messages == [str(w.message) for w in expected], k


def test_an_annealing_schedule_in_the_function():
    state = {"temperature": 1.0}

    def annealed(x):
        state["temperature"] *= 0.9  # the function's own schedule, one step per call
        return np.exp(-x ** 2 / state["temperature"])

    results = []
    for replay in (True, False):
        state["temperature"] = 1.0
        jac = dualad.jacfwd(annealed, replay=replay)
        results.append([jac(X) for _ in range(8)])
    for a, b in zip(*results):
        assert identical(a, b)


# -- 7. what the function keeps --------------------------------------------------------------

def test_kept_values_are_plain_and_pickle():
    kept = []

    class Solver:
        z0 = None

        def residual(self, z):
            self.z0 = dualad.primal_value(z)  # a warm start
            kept.append(dualad.primal_value(z).copy())
            return z ** 3 - 1.0

    solver = Solver()
    jac = dualad.jacfwd(solver.residual)
    for k in range(6):
        jac(X + k)
        assert type(solver.z0) is np.ndarray and type(kept[-1]) is np.ndarray
        np.testing.assert_array_equal(kept[-1], X + k)
    pickle.dumps((kept, solver.z0))
    grad = dualad.grad(lambda z: np.sum(solver.residual(z) ** 2))
    for k in range(6):
        g = grad(X + k)
        assert type(g) is np.ndarray
        np.testing.assert_array_equal(g, dualad.grad(
            lambda z: np.sum(solver.residual(z) ** 2), replay=False)(X + k))


def test_a_value_kept_from_an_earlier_call_raises_as_in_the_interpreter():
    for replay in (True, False):
        box = []

        def keeps(x):
            if box:
                return x * box[0]  # a value of the previous call
            box.append(x * 2.0)
            return x * 1.0

        jac = dualad.jacfwd(keeps, replay=replay)
        jac(X)
        with pytest.raises(EscapedDualError):
            jac(X)


# -- 8. writes through views ------------------------------------------------------------------

def test_a_write_through_a_view_reaches_its_base():
    def views(x):
        out = np.zeros_like(x)
        out[1] = x[1] ** 2
        v = out[:1]
        v[0] = 3.0 * x[0] ** 3  # reaches out
        return out

    points = [np.array([1.0 + k, 2.0 - k]) for k in range(8)]
    run_like_the_interpreter(views, lambda k: None, args=lambda k: (points[k % 8],),
                             transforms={k: TRANSFORMS[k] for k in ("jacfwd", "jacrev",
                                                                    "hessian", "grad")})


# -- keyword arguments ---------------------------------------------------------------------------

def test_keyword_arguments_go_to_the_function_undifferentiated():
    f = lambda a, b=2.0: a * b + np.sin(a)  # noqa: E731
    for transform in (dualad.grad, dualad.jacfwd, dualad.jacrev, dualad.hessian):
        replayed, interpreted = transform(f), transform(f, replay=False)
        for k in range(5):
            assert identical(replayed(1.5, b=3.0 + k), interpreted(1.5, b=3.0 + k))
    assert dualad.grad(f)(1.0, b=3.0) == 3.0 + np.cos(1.0)


# -- random programs that read changing state --------------------------------------------

class Box:
    def __init__(self):
        self.gain = 1.0
        self.table = np.linspace(0.5, 1.5, 3)


GLOBAL = {"scale": 1.0, "array": np.ones(3), "act": np.tanh, "flag": True}
BOX = Box()

#: Steps of a program, each reading one kind of state: (step, how to change it).
READS = [
    (lambda x: GLOBAL["scale"] * x, lambda r: GLOBAL.update(scale=float(r.normal()))),
    (lambda x: GLOBAL["array"] * x, lambda r: GLOBAL["array"].__setitem__(
        int(r.integers(3)), float(r.normal()))),
    (lambda x: GLOBAL["act"](x), lambda r: GLOBAL.update(
        act=(np.tanh, np.sin, np.arctan)[int(r.integers(3))])),
    (lambda x: BOX.gain * np.sin(x), lambda r: setattr(BOX, "gain", float(r.normal()))),
    (lambda x: x * BOX.table, lambda r: BOX.table.__imul__(1.0 + 0.1 * r.normal())),
    (lambda x: x ** 2 if GLOBAL["flag"] else x ** 3,
     lambda r: GLOBAL.update(flag=bool(r.integers(2)))),
    (lambda x: np.where(x > GLOBAL["scale"], x, 0.5 * x), lambda r: None),
    (lambda x: x + float(np.sum(dualad.primal_value(x)) > 0), lambda r: None),
    (lambda x: np.exp(-x ** 2) * math.cos(GLOBAL["scale"]), lambda r: None),
    # decisions on NumPy's booleans and on comparisons Python makes (max, min)
    (lambda x: x * max(0.1, x[0]) + min(x[1], GLOBAL["scale"]), lambda r: None),
    (lambda x: 2.0 * x if (x[0] > -5.0) & (x[1] < GLOBAL["scale"] + 5.0) else x - 1.0,
     lambda r: None),
    (lambda x: np.sin(x) if bool(np.all(x < GLOBAL["scale"])) == GLOBAL["flag"]
     else np.cos(x), lambda r: None),
    (lambda x: _filled(x), lambda r: None),  # an array made in the function, then filled
]


def _filled(x):
    out = np.zeros(3)
    out[0] = x[0] * GLOBAL["scale"]
    out[1:] = x[1:] * GLOBAL["array"][1:]
    mask = x > 0.5
    out[mask] += 1.0
    return out


@given(steps=st.lists(st.integers(0, len(READS) - 1), min_size=1, max_size=5),
       changes=st.lists(st.integers(0, len(READS) - 1), min_size=8, max_size=8),
       seed=st.integers(0, 2**16), transform=st.sampled_from(sorted(TRANSFORMS)))
# The sparse pattern, found anew at a call not replayed, cannot be told globally at
# some points (a mask from x's values): the call is right when the pattern at x lies
# within the prepared one, as a replayed call is (it raised ValueDependentError).
@example(steps=[1, 12], changes=[1, 1, 0, 1, 0, 0, 0, 0], seed=0, transform="sparse_hessian")
def test_programs_reading_changing_state_replay_like_the_interpreter(steps, changes, seed,
                                                                     transform):
    rng = np.random.default_rng(seed)

    def program(x):
        for step in steps:
            x = READS[step][0](x)
        return x

    GLOBAL.update(scale=1.0, array=np.ones(3), act=np.tanh, flag=True)
    BOX.gain, BOX.table = 1.0, np.linspace(0.5, 1.5, 3)
    run_like_the_interpreter(program, lambda k: READS[changes[k]][1](rng), calls=8,
                             transforms={transform: TRANSFORMS[transform]},
                             args=lambda k: (X + 0.1 * k,), engaged=False, every=1)


# -- the interpreter taking over at every operation ------------------------------------------

@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_the_interpreter_takes_over_at_any_operation(transform):
    """The same function, one constant changed at operation j: the call leaves the
    recording there, and the interpreter finishes it from the operations so far.
    (Python floats kept in a list: each is the same object until it changes, so
    each change is found where it is, and taken as an input from then on.)"""
    constants = [1.0] * 6

    def chain(x):
        y = np.sin(x) * constants[0]
        y = y * x + constants[1]
        y = np.exp(-y ** 2) * constants[2]
        y[1:] = y[1:] * constants[3]  # a write
        z = y.reshape(3, 1) @ np.ones((1, 3)) * constants[4]
        return np.sum(z, axis=1) + x * constants[5]

    make = TRANSFORMS[transform]
    replayed, interpreted = make(chain, True), make(chain, False)
    for j in range(len(constants)):
        constants[:] = [1.0] * 6
        for _ in range(3):  # interpreted, recorded, replayed
            assert identical(replayed(X), interpreted(X))
        constants[j] = 2.0
        assert identical(replayed(X), interpreted(X)), j
    counts = _counts(chain, transform, replayed)
    assert counts is None or counts["continued"] == len(constants), counts


@pytest.mark.parametrize("mode", ["hyperdual", "fwd-rev"])
def test_a_value_from_before_the_interpreter_took_over_is_its_dual(mode):
    """A recording that fails midway continues in the interpreter; a value the function
    made before (a Live value) meeting one made after, on the right of an operator, is
    the interpreter's Dual to the rule: the hyper-dual chain rule of ``**``, bit for bit
    as in an interpreted call (found in pvlib's clearsky.simplified_solis)."""
    def f(z):
        b = z[0] * 0.3 + 0.1
        m = np.zeros(1, dtype=bool)
        np.less(z[1:2], 0.05, out=m)  # not recordable: the interpreter takes over
        s = np.sin(z[2]) + 2.0
        return s ** b

    z = np.array([0.7, 0.1, 1.3])
    expected = dualad.hessian(f, mode=mode, replay=False)(z)
    hessian = dualad.hessian(f, mode=mode)
    for _ in range(4):
        assert identical(hessian(z), expected)


@pytest.mark.parametrize("transform", [
    lambda f: dualad.jacfwd(f), lambda f: dualad.jacrev(f),
    lambda f: dualad.hessian(lambda x: 0.5 * np.sum(f(x) * x))], ids=["jacfwd", "jacrev",
                                                                      "hessian"])
@pytest.mark.parametrize("f", [lambda x: x, lambda x: 2.0 * x], ids=["identity", "linear"])
def test_a_result_written_into_by_the_caller_does_not_change_later_calls(transform, f):
    # A constant result (the function is linear) was recorded as the very array the
    # recording call returned: the caller's writes into it came back from every replay.
    x = np.array([1.0, 2.0, 3.0])
    expected = transform(f)(x)
    replayed = transform(f)
    for _ in range(60):
        got = replayed(x)
        np.testing.assert_array_equal(got, expected)
        got[...] = 99.0
