"""Spec rows: SciPy functions called unchanged (special, stats, linalg, signal).

Rows as in ``specs.py`` (which adds them to ``SPECS``); give each row its
``jax=`` counterpart where JAX has the function. Every ``fun`` calls SciPy as users
do (``scipy.special.logsumexp(x)``, ``scipy.stats.norm.logpdf(x, loc, scale)``):
dualad's dispatchers in SciPy's modules route Duals to the rule table.

JAX has no iv, ive, jv, kv, rgamma, stdtr (nor t.cdf), sqrtm or solve_sylvester
derivatives (schur has no JVP) and no solve_banded: those rows have no ``jax=``,
or one written with the JAX functions that compute the same thing (erfcinv by
ndtri, solve_banded by a dense solve). Rows name a distribution as
``scipy.stats.norm`` (the object the coverage table lists) with the method as the
variant.
"""

from __future__ import annotations

import numpy as np
from specs import MATRIX, UNARY, LazyModule, Spec, jnp, matrices

try:
    import scipy.linalg as sl
    import scipy.signal as sg
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    import scipy.special as sc
    import scipy.stats as st
except ImportError:  # scipy is optional
    sc = None


jsp = LazyModule("jax.scipy.special")
jst = LazyModule("jax.scipy.stats")
jsl = LazyModule("jax.scipy.linalg")
jsg = LazyModule("jax.scipy.signal")
jnn = LazyModule("jax.nn")

VECTOR_SHAPES = (((5,),), ((2, 3),))
SOFT = (((4,),), ((2, 3),))


def _each(dist, methods, *args):
    return tuple(getattr(dist, m)(*args) for m in methods)


def spd(rng: np.random.Generator, shape) -> np.ndarray:
    a = rng.uniform(-1.0, 1.0, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def pivoting(rng: np.random.Generator, shape) -> np.ndarray:
    """Matrices whose LU pivots are clear (one large entry per column, rows shuffled)."""
    a = matrices(rng, shape)
    return a[..., [2, 0, 1] + list(range(3, shape[-2])), :]


def positive(rng: np.random.Generator, shape) -> np.ndarray:
    """Matrices with eigenvalues of positive real part: A and -B of a Sylvester
    equation AX + XB = Q stay apart, so that it is well conditioned (float32 too)."""
    return rng.uniform(-1.0, 1.0, shape) + 2.0 * np.sqrt(shape[-1]) * np.eye(shape[-1])


def small_matrices(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape)


def banded(rng: np.random.Generator, shape) -> np.ndarray:
    """Band storage (3, n) of tridiagonal matrices with a dominant diagonal."""
    ab = rng.uniform(-1.0, 1.0, shape)
    ab[1] += 4.0
    ab[0, 0] = ab[2, -1] = 0.0
    return ab


def _dense_of_band(ab):
    """The tridiagonal matrix of band storage ``ab`` (jax.numpy), for the JAX rows."""
    return jnp.diag(ab[1]) + jnp.diag(ab[0, 1:], 1) + jnp.diag(ab[2, :-1], -1)


def _sym(a):
    return a @ a.T + 3.0 * np.eye(a.shape[-1])


def _jsym(a):
    return a @ a.T + 3.0 * jnp.eye(a.shape[-1])


ROWS: list[Spec] = []

if sc is not None:  # a 1-D Laplacian with one entry off its band (not symmetric)
    _OPERATOR = sp.csr_array(np.diag(np.full(5, 2.0)) - np.diag(np.ones(4), 1)
                             - np.diag(np.ones(4), -1) + np.diag([0.5, 0.0], 3))
    _DENSE = _OPERATOR.toarray()

if sc is not None:
    _CONT = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    _DENSITY = ("logpdf", "pdf")
    ROWS += [
        # -- scipy.special: Python functions, called unchanged ----------------------
        Spec("scipy.special.logsumexp",
             lambda x: (sc.logsumexp(x), sc.logsumexp(x, axis=-1),
                        sc.logsumexp(x, axis=0, keepdims=True)), SOFT, (-5.0, 5.0),
             variant="unchanged",
             jax=lambda x: (jsp.logsumexp(x), jsp.logsumexp(x, axis=-1),
                            jsp.logsumexp(x, axis=0, keepdims=True))),
        Spec("scipy.special.softmax", lambda x: (sc.softmax(x), sc.softmax(x, axis=-1)), SOFT,
             (-5.0, 5.0), variant="unchanged",
             jax=lambda x: (jnn.softmax(x, axis=None), jnn.softmax(x, axis=-1))),
        Spec("scipy.special.log_softmax",
             lambda x: (sc.log_softmax(x), sc.log_softmax(x, axis=0)), SOFT, (-5.0, 5.0),
             variant="unchanged",
             jax=lambda x: (jnn.log_softmax(x, axis=None), jnn.log_softmax(x, axis=0))),
        Spec("scipy.special.polygamma", lambda x: (sc.polygamma(1, x), sc.polygamma(2, x)),
             UNARY, (0.5, 4.0), variant="unchanged",
             jax=lambda x: (jsp.polygamma(1, x), jsp.polygamma(2, x))),
        Spec("scipy.special.multigammaln", lambda x: sc.multigammaln(x, 3), UNARY, (1.5, 4.0),
             jax=lambda x: jsp.multigammaln(x, 3)),
        # -- scipy.special ufuncs: in x (the order parameters raise) ---------------
        Spec("scipy.special.gammainc", lambda x: (sc.gammainc(2.5, x), sc.gammainc(0.7, x)),
             UNARY, (0.1, 5.0), jax=lambda x: (jsp.gammainc(2.5, x), jsp.gammainc(0.7, x))),
        Spec("scipy.special.gammaincc", lambda x: sc.gammaincc(2.5, x), UNARY, (0.1, 5.0),
             jax=lambda x: jsp.gammaincc(2.5, x)),
        Spec("scipy.special.betainc", lambda x: sc.betainc(2.0, 3.5, x), UNARY, (0.05, 0.95),
             jax=lambda x: jsp.betainc(2.0, 3.5, x)),
        Spec("scipy.special.betaincc", lambda x: sc.betaincc(2.0, 3.5, x), UNARY,
             (0.05, 0.95), jax=lambda x: jsp.betainc(3.5, 2.0, 1.0 - x)),
        Spec("scipy.special.erfcinv", sc.erfcinv, UNARY, (0.1, 1.9),
             jax=lambda x: -jsp.ndtri(0.5 * x) / np.sqrt(2.0)),
        Spec("scipy.special.rgamma", sc.rgamma, UNARY, (-2.4, 4.0),  # (its zeros, too)
             jax=lambda x: jsp.gammasgn(x) * jnp.exp(-jsp.gammaln(x))),
        Spec("scipy.special.stdtr", lambda t: sc.stdtr(3.0, t), UNARY, (-3.0, 3.0)),
        Spec("scipy.special.pdtr", lambda m: (sc.pdtr(3.0, m), sc.pdtrc(3.0, m)), UNARY,
             (0.2, 6.0), jax=lambda m: (jsp.gammaincc(4.0, m), jsp.gammainc(4.0, m))),
        Spec("scipy.special.iv", lambda x: (sc.iv(1.5, x), sc.iv(0.0, x), sc.iv(-0.5, x)),
             UNARY, (0.2, 4.0)),
        Spec("scipy.special.ive", lambda x: (sc.ive(1.5, x), sc.ive(2.0, x)), UNARY,
             (0.2, 4.0)),
        # through |x| = 50, where the partial turns to its asymptotic series
        Spec("scipy.special.ive", lambda x: (sc.ive(1.5, x), sc.ive(2.0, x)), UNARY,
             (35.0, 90.0), variant="large x"),
        Spec("scipy.special.jv", lambda x: (sc.jv(1.5, x), sc.jv(3.0, x)), UNARY, (0.2, 6.0)),
        Spec("scipy.special.kv", lambda x: (sc.kv(1.5, x), sc.kv(0.0, x)), UNARY, (0.2, 4.0)),
        # -- scipy.stats ---------------------------------------------------------
        Spec("scipy.stats.norm", lambda x, loc, scale: _each(st.norm, _CONT, x, loc, scale),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))),
             ((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0)), variant="x, loc, scale",
             jax=lambda x, loc, scale: _each(jst.norm, _CONT, x, loc, scale)),
        Spec("scipy.stats.norm", lambda x: _each(st.norm(0.5, 2.0), _CONT, x), UNARY,
             (-3.0, 3.0), variant="frozen",
             jax=lambda x: _each(jst.norm, _CONT, x, 0.5, 2.0)),
        Spec("scipy.stats.t", lambda x, df, loc, scale: _each(st.t, _DENSITY, x, df, loc, scale),
             (((5,), (), (), ()), ((2, 3), (3,), (2, 1), ())),
             ((-3.0, 3.0), (1.5, 6.0), (-1.0, 1.0), (0.5, 2.0)), variant="density",
             jax=lambda x, df, loc, scale: _each(jst.t, _DENSITY, x, df, loc, scale)),
        Spec("scipy.stats.t", lambda x: _each(st.t, ("cdf", "logcdf", "sf", "logsf"), x, 3.0,
                                              0.5, 1.5),
             UNARY, (-3.0, 3.0), variant="cdf in x"),
        Spec("scipy.stats.gamma", lambda x, a, scale: _each(st.gamma, _DENSITY, x, a, 0.0,
                                                            scale),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((0.2, 5.0), (0.8, 4.0), (0.5, 2.0)),
             variant="density",
             jax=lambda x, a, scale: _each(jst.gamma, _DENSITY, x, a, 0.0, scale)),
        Spec("scipy.stats.gamma", lambda x, scale: _each(st.gamma, _CONT[2:], x, 2.5, 0.0,
                                                         scale),
             (((5,), ()), ((2, 3), (3,))), ((0.2, 5.0), (0.5, 2.0)), variant="cdf in x",
             jax=lambda x, scale: _each(jst.gamma, _CONT[2:], x, 2.5, 0.0, scale)),
        Spec("scipy.stats.beta", lambda x, a, b: _each(st.beta, _DENSITY, x, a, b),
             (((5,), (), ()), ((2, 3), (3,), (2, 1))), ((0.05, 0.95), (0.8, 4.0), (0.8, 4.0)),
             variant="density", jax=lambda x, a, b: _each(jst.beta, _DENSITY, x, a, b)),
        Spec("scipy.stats.beta", lambda x: _each(st.beta, _CONT[2:], x, 2.0, 3.5), UNARY,
             (0.05, 0.95), variant="cdf in x",
             jax=lambda x: _each(jst.beta, _CONT[2:], x, 2.0, 3.5)),
        Spec("scipy.stats.poisson",
             lambda mu: _each(st.poisson, ("logpmf", "pmf", "cdf"), np.arange(mu.size).reshape(
                 mu.shape) % 5, mu), UNARY, (0.3, 6.0), variant="in mu",
             jax=lambda mu: _each(jst.poisson, ("logpmf", "pmf", "cdf"), jnp.arange(
                 mu.size).reshape(mu.shape) % 5, mu)),
        Spec("scipy.stats.poisson",
             lambda mu: _each(st.poisson, ("logcdf", "sf", "logsf"), 2.0, mu), UNARY,
             (0.3, 6.0), variant="logcdf, sf in mu",
             jax=lambda mu: (jnp.log(jst.poisson.cdf(2.0, mu)), jsp.gammainc(3.0, mu),
                             jnp.log(jsp.gammainc(3.0, mu)))),
        Spec("scipy.stats.multivariate_normal",
             lambda x, mean, a: (st.multivariate_normal.logpdf(x, mean, _sym(a)),
                                 st.multivariate_normal.pdf(x[0], mean, _sym(a))),
             (((4, 3), (3,), (3, 3)),), ((-2.0, 2.0), (-1.0, 1.0), (-1.0, 1.0)),
             jax=lambda x, mean, a: (jst.multivariate_normal.logpdf(x, mean, _jsym(a)),
                                     jst.multivariate_normal.pdf(x[0], mean, _jsym(a)))),
        # allow_singular=True takes the pseudo-inverse route (the same numbers for a
        # positive definite Σ; its rank is decided on the value, so not under
        # dualad_gpu); entropy has no JAX counterpart (½ log det(2πe Σ) is).
        Spec("scipy.stats.multivariate_normal",
             lambda x, mean, a: st.multivariate_normal.logpdf(x, mean, _sym(a),
                                                              allow_singular=True),
             (((4, 3), (3,), (3, 3)),), ((-2.0, 2.0), (-1.0, 1.0), (-1.0, 1.0)),
             variant="allow_singular", gpu=False,
             jax=lambda x, mean, a: jst.multivariate_normal.logpdf(x, mean, _jsym(a))),
        Spec("scipy.stats.multivariate_normal",
             lambda a: st.multivariate_normal.entropy(cov=_sym(a)), (((3, 3),),), (-1.0, 1.0),
             variant="entropy",
             jax=lambda a: 0.5 * jnp.linalg.slogdet(2.0 * jnp.pi * jnp.e * _jsym(a))[1]),
        # -- scipy.linalg --------------------------------------------------------
        Spec("scipy.linalg.solve_triangular",
             lambda a, b: (sl.solve_triangular(a, b), sl.solve_triangular(a, b, lower=True),
                           sl.solve_triangular(a, b, trans=1, unit_diagonal=True),
                           sl.solve_triangular(a, b, trans="T", lower=True)),
             (((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2))), (matrices, (-1.0, 1.0)),
             jax=lambda a, b: (jsl.solve_triangular(a, b), jsl.solve_triangular(a, b, lower=True),
                               jsl.solve_triangular(a, b, trans=1, unit_diagonal=True),
                               jsl.solve_triangular(a, b, trans="T", lower=True))),
        Spec("scipy.linalg.cho_solve",
             lambda a, b: (sl.cho_solve(sl.cho_factor(_sym(a)), b),
                           sl.cho_solve(sl.cho_factor(_sym(a), lower=True), b),
                           np.triu(sl.cho_factor(_sym(a))[0])),
             (((3, 3), (3,)), ((3, 3), (3, 2))), (-1.0, 1.0),
             jax=lambda a, b: (jsl.cho_solve(jsl.cho_factor(_jsym(a)), b),
                               jsl.cho_solve(jsl.cho_factor(_jsym(a), lower=True), b),
                               jnp.triu(jsl.cho_factor(_jsym(a))[0]))),
        Spec("scipy.linalg.cho_factor", lambda a: sl.cho_factor(a, lower=True)[0], MATRIX, spd,
             variant="one triangle read"),
        Spec("scipy.linalg.lu_solve",
             lambda a, b: (sl.lu_factor(a)[0], sl.lu_solve(sl.lu_factor(a), b),
                           sl.lu_solve(sl.lu_factor(a), b, trans=1)),
             (((3, 3), (3,)), ((4, 4), (4, 2))), (pivoting, (-1.0, 1.0)),
             jax=lambda a, b: (jsl.lu_factor(a)[0], jsl.lu_solve(jsl.lu_factor(a), b),
                               jsl.lu_solve(jsl.lu_factor(a), b, trans=1))),
        Spec("scipy.linalg.lu_factor", lambda a: sl.lu_factor(a)[0], (((3, 3),),), pivoting,
             jax=lambda a: jsl.lu_factor(a)[0]),
        Spec("scipy.linalg.expm", sl.expm, (((3, 3),), ((2, 2, 2),)), small_matrices,
             jax=jsl.expm),
        Spec("scipy.linalg.sqrtm", sl.sqrtm, (((3, 3),),), spd),
        Spec("scipy.linalg.solve_sylvester", sl.solve_sylvester,
             (((3, 3), (2, 2), (3, 2)),), (positive, positive, (-1.0, 1.0))),
        Spec("scipy.linalg.solve_banded",
             lambda ab, b: sl.solve_banded((1, 1), ab, b), (((3, 5), (5,)), ((3, 4), (4, 2))),
             (banded, (-1.0, 1.0)),
             jax=lambda ab, b: jnp.linalg.solve(_dense_of_band(ab), b)),
        # -- scipy.signal --------------------------------------------------------
        Spec("scipy.signal.convolve",
             lambda a, v: (sg.convolve(a, v), sg.convolve(a, v, "same"),
                           sg.convolve(a, v, mode="valid"), sg.convolve(v, a, mode="valid")),
             (((6,), (3,)), ((4, 5), (2, 3))), (-2.0, 2.0),
             jax=lambda a, v: (jsg.convolve(a, v), jsg.convolve(a, v, "same"),
                               jsg.convolve(a, v, mode="valid"), jsg.convolve(v, a, mode="valid"))),
        # -- scipy.sparse: a constant operator solved against (on the host under
        # dualad_gpu; its products: tests/test_scipy_sparse.py) -------------------
        Spec("scipy.sparse.linalg.spsolve", lambda b: spla.spsolve(_OPERATOR, b),
             (((5,),), ((5, 2),), ((5, 1),)), gpu=False,
             jax=lambda b: jnp.linalg.solve(_DENSE, b).reshape(
                 b.shape[:1] if b.ndim == 2 and b.shape[1] == 1 else b.shape)),
    ]
