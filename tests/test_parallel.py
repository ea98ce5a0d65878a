"""Parallel derivatives (``executor=``, :mod:`dualad.parallel`): every transform on a
thread pool, a process pool and a Dask cluster gives the serial result bit for bit;
pytrees, sparse results, errors in workers, the serial fallback, threads sharing a
transform, ensembles. Deterministic: no timing is asserted (``min_seconds=0`` sends
every problem out, a large one keeps it serial)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import subprocess
import sys
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import optree
import pytest
from scipy import sparse

import dualad
from dualad import parallel


# -- functions (module level: pickled by name; the lambdas travel by cloudpickle) ----------


def model(x):
    """A vector function with coupling between every pair of inputs."""
    return np.tanh(np.cumsum(x) * x[0]) + np.sin(x) ** 2


def energy(x):
    return np.sum(np.cos(x) * np.cumsum(x ** 2)) + x[0] * x[-1] ** 3


def residual(u):
    padded = np.concatenate(([0.0], u, [0.0]))
    return padded[:-2] - 2 * u + padded[2:] + np.exp(u)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def tree_model(p):
    """A pytree in ({"w": (3,), "b": (2, 2)}) and out ((4,), {"s": scalar})."""
    w, b = p["w"], p["b"]
    return np.sin(np.concatenate([w, b[0]]) * b[1, 1]), {"s": np.sum(w ** 2) * b[0, 1]}


X = np.linspace(0.1, 1.3, 10)
TREE = {"w": np.array([0.3, -0.2, 0.9]), "b": np.array([[0.5, 1.5], [-0.7, 1.1]])}
SCALE = 1.7
LAMBDAS = {"model": lambda x: model(x) * SCALE, "energy": lambda x: energy(x) * SCALE,
           "residual": lambda u: residual(u) * SCALE,
           "rosenbrock": lambda x: rosenbrock(x) * SCALE}

#: name -> (make the transform of f with the given executor keywords, f's name, the point)
TRANSFORMS = {
    "jacfwd": (lambda f, **kw: dualad.jacfwd(f, chunk_size=3, **kw), "model"),
    "jacrev": (lambda f, **kw: dualad.jacrev(f, chunk_size=3, **kw), "model"),
    "hessian-hyperdual": (lambda f, **kw: dualad.hessian(f, chunk_size=4, mode="hyperdual",
                                                         **kw), "energy"),
    "hessian-fwd-rev": (lambda f, **kw: dualad.hessian(f, chunk_size=3, mode="fwd-rev", **kw),
                        "energy"),
    "sparse_jacobian-fwd": (lambda f, **kw: dualad.sparse_jacobian(f, mode="fwd", chunk_size=1,
                                                                   **kw), "residual"),
    "sparse_jacobian-rev": (lambda f, **kw: dualad.sparse_jacobian(f, mode="rev", chunk_size=1,
                                                                   **kw), "residual"),
    "sparse_hessian": (lambda f, **kw: dualad.sparse_hessian(f, chunk_size=1, **kw),
                       "rosenbrock"),
}


def identical(a, b) -> bool:
    """The same pytree of the same arrays, bit for bit (a scipy.sparse result: the same
    CSR arrays)."""
    if sparse.issparse(a):
        return (isinstance(a, sparse.csr_array) and sparse.issparse(b) and a.shape == b.shape
                and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
                and np.array_equal(a.data, b.data))
    return (optree.tree_structure(a) == optree.tree_structure(b)
            and all(np.asarray(u).dtype == np.asarray(v).dtype and np.array_equal(u, v)
                    for u, v in zip(optree.tree_leaves(a), optree.tree_leaves(b))))


# -- the executors: one of each for the module, shut down at its end --------------------


@pytest.fixture(scope="module")
def thread_pool():
    with ThreadPoolExecutor(2) as pool:
        yield pool


@pytest.fixture(scope="module")
def process_pool():
    # spawn: forking a process that runs threads (the thread pool, Dask's) is unsafe.
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    before = set(multiprocessing.active_children())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (Dask's notes on ports and memory limits)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None,
                                           silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
    assert set(multiprocessing.active_children()) <= before  # its workers are gone


@pytest.fixture(params=["thread", "process", "dask"])
def executor(request):
    return request.getfixturevalue({"thread": "thread_pool", "process": "process_pool",
                                    "dask": "dask_client"}[request.param])


# -- every transform on every executor ------------------------------------------------


@pytest.mark.parametrize("named", [True, False], ids=["module-function", "lambda"])
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_every_transform_equals_the_serial_one_bit_for_bit(executor, transform, named):
    make, name = TRANSFORMS[transform]
    f = globals()[name] if named else LAMBDAS[name]
    x = X if name != "residual" else X[:7]
    expected = make(f)(x)
    spread = make(f, executor=executor, min_seconds=0)
    for _ in range(2):  # the first call times its first unit here; the second sends all
        assert identical(spread(x), expected)
    if transform.startswith("sparse"):
        assert isinstance(expected, sparse.csr_array)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_pytrees_in_and_out(executor, transform):
    make = {"jacfwd": lambda **kw: dualad.jacfwd(tree_model, chunk_size=2, **kw),
            "jacrev": lambda **kw: dualad.jacrev(tree_model, chunk_size=2, **kw),
            "hessian": lambda **kw: dualad.hessian(tree_model, chunk_size=2, **kw)}[transform]
    expected = make()(TREE)
    assert identical(make(executor=executor, min_seconds=0)(TREE), expected)


def test_has_aux_argnums_and_keyword_arguments(thread_pool):
    def f(x, y, scale=1.0):
        return np.sin(x * y) * scale, {"mean": np.mean(x)}

    x, y = np.linspace(0.0, 1.0, 7), np.linspace(1.0, 2.0, 7)
    for transform in (dualad.jacfwd, dualad.jacrev):
        expected = transform(f, argnums=(0, 1), chunk_size=2, has_aux=True)(x, y, scale=3.0)
        got = transform(f, argnums=(0, 1), chunk_size=2, has_aux=True, executor=thread_pool,
                        min_seconds=0)(x, y, scale=3.0)
        assert identical(got, expected)


# -- errors, cancelling, the serial fallback ---------------------------------------------


def test_an_exception_in_a_worker_is_raised_here_with_the_workers_traceback(executor):
    caller = (os.getpid(), threading.get_ident())

    def fails_in_workers(x):
        if (os.getpid(), threading.get_ident()) != caller:
            raise ZeroDivisionError("boom in a worker")
        return np.sin(x)

    with pytest.raises(ZeroDivisionError, match="boom in a worker") as info:
        dualad.jacfwd(fails_in_workers, chunk_size=2, executor=executor, min_seconds=0)(X)
    cause = info.value.__cause__
    assert isinstance(cause, parallel.WorkerTraceback)
    assert "fails_in_workers" in str(cause) and "ZeroDivisionError" in str(cause)
    assert any("raised in a worker" in note for note in info.value.__notes__)


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_a_failure_or_ctrl_c_cancels_the_units_not_started(error):
    started, release = set(), threading.Event()

    def work(fun, payload, unit):
        started.add(unit)
        if unit == 1:
            raise error("unit 1")
        release.wait(10)  # the workers stay busy until the failure has been seen
        return unit

    with ThreadPoolExecutor(2) as pool:
        with pytest.raises(error):
            parallel.run_units(pool, "thread", work, None, None, range(6))
        release.set()
    assert {3, 4, 5}.isdisjoint(started)


def test_a_problem_too_small_runs_serially_and_says_so_once(thread_pool):
    expected = dualad.jacfwd(model, chunk_size=2)(X)
    jac = dualad.jacfwd(model, chunk_size=2, executor=thread_pool, min_seconds=10.0)
    with pytest.warns(RuntimeWarning, match="runs serially: .*min_seconds=0"):
        assert identical(jac(X), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert identical(jac(X), expected)  # serial from now on, and quiet
    one_pass = dualad.jacrev(model, executor=thread_pool)
    with pytest.warns(RuntimeWarning, match="one backward pass; give a smaller chunk_size"):
        assert identical(one_pass(X), dualad.jacrev(model)(X))


def test_threads_that_do_not_gain_leave_later_calls_serial(thread_pool, monkeypatch):
    monkeypatch.setattr(parallel, "THREADS_GAIN", 0.0)  # as if the work held the GIL
    expected = dualad.jacfwd(model, chunk_size=2)(X)
    jac = dualad.jacfwd(model, chunk_size=2, executor=thread_pool, min_seconds=1e-9)
    with pytest.warns(RuntimeWarning, match="holds the GIL.*ProcessPoolExecutor"):
        assert identical(jac(X), expected)
    assert jac.dispatch.serial(parallel.signature([X], optree.tree_structure(X)))
    assert identical(jac(X), expected)


def _counting_units(monkeypatch) -> list:
    """Each call of run_units (units sent to the executor) appends its count."""
    sent, run_units = [], parallel.run_units

    def counted(executor, kind, work, fun, payload, units, report=None):
        sent.append(len(units))
        return run_units(executor, kind, work, fun, payload, units, report)

    monkeypatch.setattr(parallel, "run_units", counted)
    return sent


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_a_choice_to_stay_serial_is_looked_at_again_ever_less_often(
        thread_pool, monkeypatch, transform):
    # The first call finds the passes too small; the work then grows (min_seconds
    # falls): the choice is looked at again after RECHECK_AFTER calls, not never.
    monkeypatch.setattr(parallel, "RECHECK_AFTER", 3)
    make, name = TRANSFORMS[transform]
    x = X if name != "residual" else X[:7]
    expected = make(globals()[name])(x)
    spread = make(globals()[name], executor=thread_pool, min_seconds=1e9)
    with pytest.warns(RuntimeWarning, match="runs serially"):
        assert identical(spread(x), expected)
    sent = _counting_units(monkeypatch)
    for _ in range(2):
        assert identical(spread(x), expected)  # (serial: two calls of three)
    assert sent == []
    assert identical(spread(x), expected)  # looked at: still too small, serial again
    assert sent == []
    for _ in range(5):  # the next look comes twice as late
        assert identical(spread(x), expected)
    assert sent == []
    clock = iter(range(10 ** 9))  # the work has grown: every pass takes 10¹⁰ s
    monkeypatch.setattr(parallel.time, "perf_counter", lambda: 1e10 * next(clock))
    monkeypatch.setattr(parallel, "THREADS_GAIN", 1e12)  # (and threads gain)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (said once, at the first call)
        assert identical(spread(x), expected)
    assert sent and sum(sent) > 0  # looked at again: the passes went out
    assert identical(spread(x), expected)


def test_threads_that_stop_gaining_are_looked_at_again(thread_pool, monkeypatch):
    # Found to gain on the first call; later calls are timed too, and one that did not
    # gain makes the next call look again (here: decide that the work holds the GIL).
    expected = dualad.jacfwd(model, chunk_size=2)(X)
    jac = dualad.jacfwd(model, chunk_size=2, executor=thread_pool, min_seconds=1e-12)
    monkeypatch.setattr(parallel, "THREADS_GAIN", 1e12)  # (any time gains)
    assert identical(jac(X), expected)
    assert identical(jac(X), expected)
    key = parallel.signature([X], optree.tree_structure(X))
    assert jac.dispatch.decided[key].parallel is True
    monkeypatch.setattr(parallel, "THREADS_GAIN", 0.0)  # (no time gains)
    assert identical(jac(X), expected)  # timed: no gain
    assert jac.dispatch.decided[key].parallel is None
    with pytest.warns(RuntimeWarning, match="holds the GIL"):
        assert identical(jac(X), expected)  # looked at again
    assert jac.dispatch.serial(key)


@pytest.mark.parametrize("transform", ["sparse_jacobian-fwd", "sparse_jacobian-rev",
                                       "sparse_hessian", "jacrev"])
def test_a_choice_to_stay_serial_holds_at_later_calls(thread_pool, monkeypatch, transform):
    make, name = TRANSFORMS[transform]
    x = X if name != "residual" else X[:7]
    expected = make(globals()[name])(x)
    spread = make(globals()[name], executor=thread_pool, min_seconds=10.0)
    with pytest.warns(RuntimeWarning, match="runs serially"):
        assert identical(spread(x), expected)

    def refused(*args):
        raise AssertionError("sent to the executor")

    monkeypatch.setattr(parallel, "run_units", refused)
    assert identical(spread(x), expected)


def test_a_one_worker_executor_runs_serially():
    with ThreadPoolExecutor(1) as pool:
        with pytest.warns(RuntimeWarning, match="one worker"):
            got = dualad.hessian(energy, chunk_size=2, executor=pool, min_seconds=0)(X)
    assert identical(got, dualad.hessian(energy, chunk_size=2)(X))


def test_what_an_executor_must_be():
    with pytest.raises(TypeError, match="concurrent.futures.Executor"):
        dualad.jacfwd(model, executor=4)
    with pytest.raises(ValueError, match="seed_placement"):
        dualad.jacfwd(model, executor=ThreadPoolExecutor(1), seed_placement=lambda s: s)


@pytest.mark.parametrize("how", ["argument", "closure"])
def test_a_dual_of_an_enclosing_transform_is_refused(executor, how):
    x = np.linspace(0.0, 1.0, 6)

    def outer(p):
        if how == "argument":
            jac = dualad.jacfwd(lambda x, p: np.sin(x * p), chunk_size=2, executor=executor,
                                min_seconds=0)
            return np.sum(jac(x, p))
        jac = dualad.jacfwd(lambda x: np.sin(x * p), chunk_size=2, executor=executor,
                            min_seconds=0)
        return np.sum(jac(x))

    with pytest.raises(TypeError, match="Dual of an enclosing transform"):
        dualad.grad(outer)(0.7)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_a_dual_of_an_enclosing_transform_is_refused_where_the_passes_stay_here(
        thread_pool, transform):
    # Too small to gain (min_seconds not reached) or found so by an earlier call: the
    # passes run here, and the call is refused all the same, never timing-dependent.
    x = np.linspace(0.0, 1.0, 4)
    scale = {"p": 0.7}
    inner = getattr(dualad, transform)(lambda x: np.sum(np.sin(x * scale["p"]) * x),
                                       chunk_size=2, executor=thread_pool, min_seconds=1e9)
    with_p = getattr(dualad, transform)(lambda x, p: np.sum(np.sin(x * p) * x),
                                        chunk_size=2, executor=thread_pool, min_seconds=1e9)

    def closure(p):
        scale["p"] = p
        return np.sum(inner(x))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (runs serially: too small)
        for _ in range(2):  # the first call decides serial; the second takes the quick path
            with pytest.raises(TypeError, match="Dual of an enclosing transform"):
                dualad.grad(closure)(0.7)
            with pytest.raises(TypeError, match="Dual of an enclosing transform"):
                dualad.grad(lambda p: np.sum(with_p(x, p)))(0.7)
            scale["p"] = 0.7  # outside any transform, the serial result
            assert np.array_equal(inner(x), getattr(dualad, transform)(
                lambda x: np.sum(np.sin(x * 0.7) * x), chunk_size=2)(x))


# -- threads sharing transforms ------------------------------------------------------------


def test_threads_calling_the_same_transforms_get_right_answers(thread_pool):
    points = [X + 0.01 * k for k in range(12)]
    serial = dualad.jacfwd(model)  # replayed after a few calls, from every thread
    spread = dualad.hessian(energy, chunk_size=3, executor=thread_pool, min_seconds=0)
    expected = [(dualad.jacfwd(model, replay=False)(p),
                 dualad.hessian(energy, chunk_size=3, replay=False)(p)) for p in points]
    failures = []

    def caller(offset):
        for k in range(3 * len(points)):
            i = (k + offset) % len(points)
            got = (serial(points[i]), spread(points[i]))
            if not all(identical(g, e) for g, e in zip(got, expected[i])):
                failures.append(i)

    threads = [threading.Thread(target=caller, args=(offset,)) for offset in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert serial.counts["replayed"] > 0


# -- ensembles -------------------------------------------------------------------------


def test_an_ensemble_of_jacobians_in_order(executor):
    points = np.linspace(0.0, 1.0, 40).reshape(8, 5)
    jac = dualad.jacfwd(lambda x: model(x) * SCALE)
    expected = np.stack([jac(p) for p in points])
    got = dualad.ensemble(jac, points, executor=executor, batch_size=3, min_seconds=0)
    assert identical(got, expected)


def test_an_ensemble_of_pytrees(thread_pool):
    points = {"w": np.arange(12.0).reshape(4, 3) / 10, "b": np.ones((4, 2, 2))}
    grad = dualad.grad(lambda p: tree_model(p)[1]["s"])
    expected = [grad({"w": points["w"][i], "b": points["b"][i]}) for i in range(4)]
    got = dualad.ensemble(grad, points, executor=thread_pool, batch_size=1, min_seconds=0)
    assert identical(got, {"w": np.stack([e["w"] for e in expected]),
                           "b": np.stack([e["b"] for e in expected])})
    assert identical(dualad.ensemble(grad, points), got)  # no executor: here, in order


def test_an_ensemble_with_a_parallel_transform_sends_its_serial_twin(process_pool):
    inner = dualad.jacfwd(model, chunk_size=2, executor=ThreadPoolExecutor(2), min_seconds=10)
    points = np.linspace(0.0, 1.0, 30).reshape(6, 5)
    with pytest.warns(RuntimeWarning, match="jacfwd with executor= runs serially") as record:
        got = dualad.ensemble(inner, points, executor=process_pool, batch_size=2,
                              min_seconds=0)  # (the first batch runs here)
    assert record[0].filename == __file__  # the warning points at the user's call
    assert identical(got, np.stack([dualad.jacfwd(model, chunk_size=2)(p) for p in points]))


def test_ensemble_arguments():
    with pytest.raises(ValueError, match="leading axis"):
        dualad.ensemble(np.sin, 1.0)
    with pytest.raises(ValueError, match="share their leading axis"):
        dualad.ensemble(np.sin, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="batch_size"):
        dualad.ensemble(np.sin, np.ones(3), batch_size=0)


# -- the optional dependencies -------------------------------------------------------------


def test_dualad_imports_neither_dask_nor_cloudpickle():
    code = ("import sys, dualad, dualad.parallel; "
            "assert not {'distributed', 'dask', 'cloudpickle'} & set(sys.modules), "
            "sorted({'distributed', 'dask', 'cloudpickle'} & set(sys.modules))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(__file__))


def test_without_cloudpickle_module_functions_travel_and_closures_are_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "cloudpickle", None)  # import cloudpickle fails
    assert parallel._dumps((model, 1.0))
    with pytest.raises(TypeError, match="install cloudpickle"):
        parallel._dumps(lambda x: x)


# -- progress ---------------------------------------------------------------------------


@pytest.mark.parametrize("transform", ["jacfwd", "sparse_jacobian-fwd"])
def test_progress_on_every_executor(executor, transform, caplog, capsys):
    """A bar over the units (tqdm's; Dask's own on a cluster) and the log lines; the
    result unchanged."""
    pytest.importorskip("tqdm")
    make, name = TRANSFORMS[transform]
    f, x = globals()[name], X
    expected = make(f)(x)
    capsys.readouterr()
    caplog.set_level(logging.INFO, logger="dualad")
    assert identical(make(f, executor=executor, min_seconds=0, progress=True)(x), expected)
    out, err = capsys.readouterr()
    logged = [r.getMessage() for r in caplog.records if r.name == "dualad"]
    units = next(int(line.split(": ")[1].split()[0]) for line in logged
                 if line.endswith((" passes", " pass")))
    assert any(f"{units} of {units} passes in " in line for line in logged), logged
    if executor.__class__.__module__.startswith("distributed"):
        assert "100%" in out or "Completed" in out or "#" in out  # Dask's TextProgressBar
    else:
        assert f"/{units}" in err


def test_progress_of_an_ensemble_on_threads(thread_pool, caplog, capsys):
    pytest.importorskip("tqdm")
    caplog.set_level(logging.INFO, logger="dualad")
    points = np.outer(np.arange(1.0, 7.0), X)
    Js = dualad.ensemble(dualad.jacfwd(model), points, executor=thread_pool, batch_size=2,
                         min_seconds=0, progress=True)
    assert identical(Js, dualad.ensemble(dualad.jacfwd(model), points))
    logged = [r.getMessage() for r in caplog.records if r.name == "dualad"]
    assert "ensemble: 3 batches" in logged and any("3 of 3 batches in" in m for m in logged)
    assert "/3" in capsys.readouterr().err


def test_a_transform_on_the_pool_its_caller_runs_on_runs_its_units_there(thread_pool):
    """An ensemble on a thread pool of a jacfwd on the same pool: the inner passes run in
    the outer units (sent to the pool, they would wait for the workers that wait for
    them), with a warning; the results are the serial ones."""
    jac = dualad.jacfwd(model, chunk_size=3, executor=thread_pool, min_seconds=0)
    points = np.outer(np.arange(1.0, 5.0), X)
    done: dict = {}

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            done["Js"] = dualad.ensemble(jac, points, executor=thread_pool, batch_size=1,
                                         min_seconds=0)
        done["warnings"] = [str(w.message) for w in caught]

    caller = threading.Thread(target=run, daemon=True)
    caller.start()
    caller.join(timeout=120)
    assert not caller.is_alive(), "the nested call waits for itself"
    assert identical(done["Js"], dualad.ensemble(dualad.jacfwd(model, chunk_size=3), points))
    assert any("called from a unit of work on the same thread pool" in m
               for m in done["warnings"])


def test_dask_s_bar_never_fails_a_derivative(dask_client, monkeypatch):
    """Dask's bar as a text bar where ipywidgets is missing (a notebook without it raised
    ModuleNotFoundError, in the docs build); a bar that fails is a warning, not an error."""
    import importlib.util

    import distributed

    seen = []
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ipywidgets" else
                        real_find_spec(name, *a))
    monkeypatch.setattr(distributed, "progress",
                        lambda futures, **kw: seen.append(kw["notebook"]))
    make, name = TRANSFORMS["jacfwd"]
    expected = make(model)(X)
    assert identical(make(model, executor=dask_client, min_seconds=0, progress=True)(X),
                     expected)
    assert seen == [False]

    def broken(futures, **kw):
        raise ModuleNotFoundError("No module named 'ipywidgets'")

    monkeypatch.setattr(distributed, "progress", broken)
    with pytest.warns(RuntimeWarning, match="Dask's progress bar failed"):
        J = make(model, executor=dask_client, min_seconds=0, progress=True)(X)
    assert identical(J, expected)
