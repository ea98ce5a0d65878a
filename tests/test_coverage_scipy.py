"""SciPy functions called unchanged: the route (dispatchers installed in SciPy's
modules and distribution classes), its conditions, dualad_gpu on every spec row of
tests/specs_scipy.py, and the derivatives that raise."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

sc = pytest.importorskip("scipy.special")
import scipy.linalg as sl  # noqa: E402
import scipy.signal as sg  # noqa: E402
import scipy.stats as st  # noqa: E402
from specs import SPECS  # noqa: E402  (first: specs_scipy is imported by specs)

from dualad.rules import scipy_functions  # noqa: E402
from specs_scipy import ROWS  # noqa: E402

X = np.array([0.3, 0.7, 1.4])
M = np.array([[3.0, 0.5, 0.2], [0.4, 2.5, 0.1], [0.3, 0.2, 2.0]])

# Every function of the issue, called as users call it (a function of one array).
ISSUE_CALLS = {
    "special.logsumexp": lambda x: sc.logsumexp(x),
    "special.softmax": lambda x: sc.softmax(x),
    "special.log_softmax": lambda x: sc.log_softmax(x),
    "special.gammainc": lambda x: sc.gammainc(2.0, x),
    "special.gammaincc": lambda x: sc.gammaincc(2.0, x),
    "special.iv": lambda x: sc.iv(1.5, x),
    "special.ive": lambda x: sc.ive(1.5, x),
    "special.jv": lambda x: sc.jv(1.5, x),
    "special.kv": lambda x: sc.kv(1.5, x),
    "special.betainc": lambda x: sc.betainc(2.0, 3.0, x / 2),
    "special.erfcinv": lambda x: sc.erfcinv(x),
    "special.multigammaln": lambda x: sc.multigammaln(x + 2, 2),
    "special.rgamma": lambda x: sc.rgamma(x),
    "stats.norm": lambda x: [f(x, 0.2, 1.5) for f in (st.norm.logpdf, st.norm.pdf, st.norm.cdf,
                                                      st.norm.logcdf, st.norm.sf)],
    "stats.t": lambda x: [f(x, 4.0, 0.1, 1.2) for f in (st.t.logpdf, st.t.pdf, st.t.cdf,
                                                        st.t.logcdf, st.t.sf)],
    "stats.gamma": lambda x: [f(x, 2.0, 0.0, 1.3) for f in (st.gamma.logpdf, st.gamma.pdf,
                                                            st.gamma.cdf, st.gamma.logcdf,
                                                            st.gamma.sf)],
    "stats.beta": lambda x: [f(x / 2, 2.0, 3.0) for f in (st.beta.logpdf, st.beta.pdf,
                                                          st.beta.cdf, st.beta.logcdf,
                                                          st.beta.sf)],
    "stats.poisson": lambda mu: [f(3, mu) for f in (st.poisson.logpmf, st.poisson.pmf,
                                                    st.poisson.cdf, st.poisson.logcdf,
                                                    st.poisson.sf)],
    "stats.gamma(params)": lambda a: st.gamma.logpdf(1.0, a, 0.0, a),
    "stats.multivariate_normal": lambda x: st.multivariate_normal.logpdf(x, np.zeros(3),
                                                                         M @ M.T),
    "linalg.solve_triangular": lambda b: sl.solve_triangular(np.triu(M), b),
    "linalg.cho_factor/cho_solve": lambda d: sl.cho_solve(sl.cho_factor(M @ M.T + np.diag(d)),
                                                          X),
    "linalg.lu_factor/lu_solve": lambda d: sl.lu_solve(sl.lu_factor(M + np.diag(d)), X),
    "linalg.expm": lambda d: sl.expm(M * d[0]),
    "linalg.sqrtm": lambda d: sl.sqrtm(M @ M.T + np.diag(d)),
    "linalg.solve_sylvester": lambda d: sl.solve_sylvester(M, M.T + np.diag(d), np.eye(3)),
    "linalg.solve_banded": lambda b: sl.solve_banded(
        (1, 1), np.array([[0, 1.0, 1], [4.0, 4, 4], [1.0, 1, 0]]), b),
    "signal.convolve": lambda x: sg.convolve(x, np.array([1.0, 2.0, 0.5])),
}


def central_differences(f, x, h=1e-6):
    columns = [(np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h)
               for e in np.eye(x.size)]
    return np.stack(columns, -1)


@pytest.mark.parametrize("name", list(ISSUE_CALLS))
def test_every_function_of_the_issue_is_differentiated_unchanged(name):
    def f(x):
        out = ISSUE_CALLS[name](x)
        return np.stack(out) if isinstance(out, list) else out

    assert_allclose(dualad.jacfwd(f)(X), central_differences(f, X), rtol=1e-5, atol=1e-7)
    assert_allclose(dualad.jacrev(f)(X), dualad.jacfwd(f)(X), rtol=1e-10, atol=1e-12)


def test_the_issue_example():
    assert_allclose(dualad.grad(lambda x: sc.logsumexp(x))(np.ones(3)), np.full(3, 1 / 3))


# ---------------------------------------------------------------------------
# dualad_gpu: every spec row's Jacobian on JAX equals the NumPy one
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [s for s in ROWS if s.gpu], ids=lambda s: s.id)
def test_rows_under_dualad_gpu(spec):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    args = spec.draw(rng, spec.shapes[0])
    every = tuple(range(len(args)))
    ours = dualad.jacfwd(spec.fun, argnums=every)(*args)
    theirs = dualad_gpu.jacfwd(spec.fun, argnums=every)(*args)
    import optree
    for a, b in zip(optree.tree_leaves(ours), optree.tree_leaves(theirs)):
        assert_allclose(np.asarray(b), a, rtol=1e-8, atol=1e-10, err_msg=spec.id)


# ---------------------------------------------------------------------------
# The dispatchers: SciPy's own function for plain arrays, thread safe
# ---------------------------------------------------------------------------


def test_plain_calls_run_scipys_own_function():
    for dispatch, original in scipy_functions.ORIGINALS.items():
        assert dispatch.__wrapped__ is original
    assert sc.logsumexp in scipy_functions.ORIGINALS
    assert sl.expm in scipy_functions.ORIGINALS
    expm = scipy_functions.ORIGINALS[sl.expm]
    np.testing.assert_array_equal(sl.expm(M), expm(M))
    assert type(st.norm.logpdf(X)) is np.ndarray
    np.testing.assert_array_equal(st.norm.logpdf(X, 1.0, 2.0),
                                  type(st.norm).__mro__[1].logpdf.__wrapped__(st.norm, X, 1.0,
                                                                               2.0))


def test_names_and_docs_stay_scipys():
    assert sc.logsumexp.__name__ == "logsumexp" and "logsumexp" in sc.logsumexp.__doc__
    assert sl.expm.__module__ == scipy_functions.ORIGINALS[sl.expm].__module__


def test_threads_share_the_dispatchers():
    expected = dualad.grad(lambda x: sc.logsumexp(x * 2.0))(X)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(dualad.grad(lambda x: sc.logsumexp(x * 2.0))(X))
                results.append(sc.softmax(X) * 0 + expected)  # a plain call in between
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        assert_allclose(r, expected, rtol=1e-15)


def test_frozen_distributions_use_the_same_rules():
    f = lambda x: st.norm(0.5, 2.0).logpdf(x)  # noqa: E731
    assert_allclose(dualad.grad(lambda x: np.sum(f(x)))(X), -(X - 0.5) / 4.0)


def test_values_off_the_support_are_scipys():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        ours = dualad.primal_value(getattr(st.gamma, method)(dualad.Dual(x, np.ones(4)), 2.0))
        assert_allclose(ours, getattr(st.gamma, method)(x, 2.0), rtol=1e-13, err_msg=method)
    ours = dualad.primal_value(st.gamma.logpdf(dualad.Dual(x, np.ones(4)), -1.0))
    assert np.all(np.isnan(ours))  # parameters SciPy refuses: nan
    k = np.array([-1.0, 2.0, 2.5])
    for method in ("logpmf", "pmf", "cdf", "sf"):
        mu = dualad.Dual(np.full(3, 1.5), np.ones(3))
        assert_allclose(dualad.primal_value(getattr(st.poisson, method)(k, mu)),
                        getattr(st.poisson, method)(k, 1.5), rtol=1e-13, err_msg=method)


# ---------------------------------------------------------------------------
# What raises
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("f, argument", [
    (lambda b: sc.betainc(2.0, b, 0.3), "'b'"),
    (lambda v: sc.jv(v, 1.3), "'v'"),
    (lambda v: sc.iv(v, 1.3), "'v'"),
    (lambda df: st.t.cdf(0.4, df), "'df'"),
], ids=["betainc", "jv", "iv", "t.cdf"])
def test_derivatives_in_orders_and_shape_parameters_raise(f, argument):
    with pytest.raises(TypeError, match=f"differentiated in its last argument only, not in "
                                        f"{argument}"):
        dualad.grad(f)(2.0)


def test_a_distribution_without_rules_is_named():
    with pytest.raises(TypeError, match=r"scipy.stats.johnsonsu.logpdf has no dualad rule.*norm"):
        dualad.grad(lambda x: st.johnsonsu.logpdf(x, 0.5, 1.0))(1.0)


def test_logsumexp_with_weights_and_sign_gives_scipys_values():
    b = np.array([1.0, -2.0, 0.5])
    for kwargs in ({"b": b}, {"b": b, "return_sign": True}, {"return_sign": True}):
        def f(x, kwargs=kwargs):
            return sc.logsumexp(x, **kwargs)
        got = dualad.jvp(f, (X,), (np.ones_like(X),))[0]
        for g, e in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                        np.atleast_1d(f(X)) if not isinstance(got, tuple) else f(X)):
            np.testing.assert_array_equal(g, e)  # nan where Σ b·exp(x) < 0, as SciPy


def test_unsupported_options_raise():
    with pytest.raises(TypeError, match="stack of matrices"):
        dualad.jacfwd(lambda a: sl.lu_factor(a)[0])(np.stack([M, M]))


# ---------------------------------------------------------------------------
# Import order, lazy patching, scipy absent, SCIPY_ARRAY_API (fresh interpreters)
# ---------------------------------------------------------------------------


def run(code: str, env: dict | None = None) -> str:
    import os
    full_env = dict(os.environ, **(env or {}))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=full_env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_dualad_does_not_import_scipy_stats_and_patches_it_on_import():
    out = run("""
        import sys, numpy as np, dualad
        from dualad.rules.scipy_functions import _HOOK
        print('scipy.stats' in sys.modules, 'scipy.signal' in sys.modules)
        from scipy.stats import norm
        import scipy.linalg, scipy.signal
        print(dualad.grad(lambda x: norm.logpdf(x))(0.5), _HOOK in sys.meta_path)
    """)
    assert out.split() == ["False", "False", "-0.5", "False"]


def test_import_order():
    # Distribution methods work however they were imported; a function bound by name
    # before `import dualad` is SciPy's own and refuses Duals.
    out = run("""
        import numpy as np
        from scipy.stats import norm
        from scipy.special import logsumexp
        import scipy.special
        import dualad
        print(dualad.grad(lambda x: norm.logpdf(x))(0.5))
        print(dualad.grad(lambda x: scipy.special.logsumexp(x))(np.ones(2))[0])
        try:
            dualad.grad(lambda x: logsumexp(x))(np.ones(2))
        except TypeError as e:
            print("TypeError")
    """)
    assert out.split() == ["-0.5", "0.5", "TypeError"]


def test_dualad_imports_without_scipy():
    out = run("""
        import sys
        class Block:
            def find_spec(self, name, path, target=None):
                if name == 'scipy' or name.startswith('scipy.'):
                    raise ImportError('no scipy')
        sys.meta_path.insert(0, Block())
        import numpy as np, dualad
        print(dualad.grad(lambda x: np.sum(np.sin(x)))(np.zeros(2))[0])
    """)
    assert out.split() == ["1.0"]


MEASURE = """
    import numpy as np, scipy.special as sc, scipy.stats as st, scipy.linalg as sl
    import dualad
    from dualad.rules import scipy_functions
    {setup}
    calls = [lambda x: sc.logsumexp(x), lambda x: sc.softmax(x), lambda x: sc.erf(x),
             lambda x: sc.gammainc(2.0, x), lambda x: st.norm.logpdf(x),
             lambda x: sl.expm(np.diag(x))]
    ok = 0
    for f in calls:
        try:
            dualad.jacfwd(f)(np.array([0.3, 0.7]))
            ok += 1
        except TypeError:
            pass
    print(ok)
"""
UNINSTALL = """
    import sys
    for dispatch, original in list(scipy_functions.ORIGINALS.items()):
        owner = original.__qualname__.rpartition('.')[0]
        for module in list(sys.modules.values()):
            target = getattr(module, owner, None) if owner else module
            if target is not None and vars(target).get(original.__name__) is dispatch:
                setattr(target, original.__name__, original)
"""


def test_scipy_array_api_dispatch_alone_covers_little_and_the_route_works_under_it():
    # SCIPY_ARRAY_API=1 and Dual.__array_namespace__, dualad's dispatchers removed:
    # only the array-API functions written with the namespace (softmax, logsumexp,
    # whose array-API path calls the namespace's logsumexp with b= and return_sign=)
    # and the ufuncs (found under the namespace's `special`) work.
    alone = run(MEASURE.format(setup=UNINSTALL), env={"SCIPY_ARRAY_API": "1"})
    routed = run(MEASURE.format(setup=""), env={"SCIPY_ARRAY_API": "1"})
    plain = run(MEASURE.format(setup=""), env={"SCIPY_ARRAY_API": ""})
    assert (int(alone), int(routed), int(plain)) == (4, 6, 6)
