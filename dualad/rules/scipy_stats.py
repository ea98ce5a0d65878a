"""scipy.stats called unchanged: the distribution machinery, norm, t, gamma, beta,
poisson, multivariate_normal, and the statistics sem, mode, rankdata.

The methods ``logpdf``/``pdf``/``cdf``/``logcdf``/``sf``/``logsf``/``ppf``/``isf`` of
continuous distributions (``logpmf``/``pmf``/... of discrete ones) are replaced on SciPy's
base classes by dispatchers (see :mod:`dualad.rules.scipy_functions`); with a Dual among
the arguments they evaluate the distribution's formula (registered here or with
:func:`register_distribution`, as :mod:`dualad.rules.scipy_distributions` does) on the
standardized variable ``z = (x - loc) / scale``, so derivatives flow in ``x``, ``loc``,
``scale`` and the shape parameters; ``ppf``/``isf`` return ``loc + scale·`` the
standardized quantile. The support is SciPy's own (``_support_mask``), the parameter
checks those of ``_argcheck`` (:data:`ARGCHECKS`), both decided on the values: outside the
support the result is SciPy's constant (``-inf``, 0 or 1, derivative 0), for invalid
parameters nan. Frozen distributions (``norm(0, 2).logpdf(x)``) call the same methods.

Derivatives a formula cannot give raise a TypeError from the special function's rule
(``t.cdf`` in ``df``: JAX has no ``t.cdf`` at all); a method with no formula raises one
naming those there are. A discrete distribution's argument ``k`` is a point of the
lattice: its derivative is 0, and its ``ppf``/``isf`` give values only, as do ``mode`` and
``rankdata`` (primitives without a derivative).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import FUNCTION_HANDLERS, Primitive
from .elementwise import (
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    where,
)
from .decompositions import _mirror, pinv
from .reductions import sum_
from .scipy_functions import scipy_rule
from .scipy_linalg import solve_triangular
from .shape import reshape, shape_of

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _sc():
    """dualad's scipy.special primitives (they run on JAX arrays too, unlike SciPy's)."""
    from . import special
    return special


# Each distribution: method -> formula in (z, *shape parameters); logpdf also gives
# pdf = exp(logpdf) (logpmf, pmf for discrete ones). log of cdf/sf where SciPy takes it.
_CONTINUOUS = {
    "norm": {
        "logpdf": lambda z: -0.5 * (z * z) - _LOG_SQRT_2PI,
        "cdf": lambda z: _sc().ndtr(z),
        "logcdf": lambda z: _sc().log_ndtr(z),
        "sf": lambda z: _sc().ndtr(-z),
        "logsf": lambda z: _sc().log_ndtr(-z),
        "ppf": lambda q: _sc().ndtri(q),
        "isf": lambda q: -_sc().ndtri(q),
    },
    "t": {
        "logpdf": lambda z, df: (_sc().gammaln(0.5 * (df + 1.0)) - _sc().gammaln(0.5 * df)
                                 - 0.5 * log(df * math.pi)
                                 - 0.5 * (df + 1.0) * log1p(z * z / df)),
        "cdf": lambda z, df: _sc().stdtr(df, z),
        "sf": lambda z, df: _sc().stdtr(df, -z),
    },
    "gamma": {
        "logpdf": lambda z, a: _sc().xlogy(a - 1.0, z) - z - _sc().gammaln(a),
        "cdf": lambda z, a: _sc().gammainc(a, z),
        "sf": lambda z, a: _sc().gammaincc(a, z),
    },
    "beta": {
        "logpdf": lambda z, a, b: (_sc().xlog1py(b - 1.0, -z) + _sc().xlogy(a - 1.0, z)
                                   - _sc().betaln(a, b)),
        "cdf": lambda z, a, b: _sc().betainc(a, b, z),
        "sf": lambda z, a, b: _sc().betaincc(a, b, z),
    },
}

_DISCRETE = {
    "poisson": {
        "logpmf": lambda k, mu: _sc().xlogy(k, mu) - _sc().gammaln(k + 1.0) - mu,
        "cdf": lambda k, mu: _sc().pdtr(k, mu),
        "sf": lambda k, mu: _sc().pdtrc(k, mu),
    },
}

#: Distribution name -> SciPy's parameter check, written with primitives (SciPy's own
#: converts with np.asarray); absent: every shape parameter positive.
ARGCHECKS: dict[str, Callable[..., object]] = {
    "poisson": lambda mu: greater_equal(mu, 0.0),
}


#: Distribution name -> its support (lo, hi) of the standardized variable, written with
#: primitives, where SciPy's _get_support converts its parameters with np.asarray (which
#: dualad_gpu's traced values refuse); absent: SciPy's _get_support and _support_mask.
SUPPORTS: dict[str, Callable[..., tuple]] = {}


def _support(dist, zv, values) -> tuple:
    """(lo, hi, whether zv is in the support) of ``dist`` with parameters ``values``."""
    support = SUPPORTS.get(dist.name)
    if support is None:
        lo, hi = dist._get_support(*values)
        return lo, hi, dist._support_mask(zv, *values)
    lo, hi = support(*values)
    return lo, hi, less_equal(lo, zv) & less_equal(zv, hi)


def _argcheck(dist, values) -> object:
    """SciPy's parameter check of ``dist`` on the parameters' values."""
    check = ARGCHECKS.get(dist.name)
    if check is not None:
        return check(*values)
    good = True
    for v in values:
        good = good & greater(v, 0.0)
    return good


SUPPORTED = sorted(_CONTINUOUS) + sorted(_DISCRETE) + ["multivariate_normal"]


def register_distribution(name: str, formulas: dict[str, Callable] | None = None,
                          discrete: bool = False,
                          argcheck: Callable[..., object] | None = None,
                          support: Callable[..., tuple] | None = None) -> None:
    """Differentiate the scipy.stats distribution ``name`` by ``formulas`` (method ->
    function of the standardized variable and the shape parameters; for discrete
    distributions of ``k - loc``), with SciPy's parameter check ``argcheck`` and, for a
    continuous one whose support depends on its parameters, SciPy's closed support
    ``support`` (parameters -> (lo, hi)). Without formulas (a multivariate distribution
    with its own dispatchers): only listed."""
    if formulas is not None:
        (_DISCRETE if discrete else _CONTINUOUS)[name] = formulas
    if argcheck is not None:
        ARGCHECKS[name] = argcheck
    if support is not None:
        SUPPORTS[name] = support
    if name not in SUPPORTED:
        SUPPORTED.append(name)


_COMPLEMENT = {"cdf": "sf", "sf": "cdf", "ppf": "isf", "isf": "ppf"}


def _formula(dist, method: str, table: dict):
    """The formula of ``dist.method``: given, or the log or exp of a given one, or
    from the complement (sf = 1 - cdf, isf(q) = ppf(1 - q))."""
    formulas = table.get(dist.name)
    if formulas is None:
        raise TypeError(
            f"scipy.stats.{dist.name}.{method} has no dualad rule, so it cannot be applied "
            f"to a Dual; dualad differentiates the distributions {', '.join(SUPPORTED)}. "
            "Write the density with scipy.special and NumPy functions instead.")
    found = _derived(formulas, method)
    if found is None:
        log_of = method.removeprefix("log")
        other = _derived(formulas, _COMPLEMENT.get(log_of, ""))
        if other is not None and log_of in ("ppf", "isf"):
            found = lambda q, *a: other(1.0 - q, *a)
        elif other is not None:
            found = (lambda *a: log1p(-other(*a))) if method != log_of else (
                lambda *a: 1.0 - other(*a))
    if found is None:
        raise TypeError(
            f"scipy.stats.{dist.name}.{method} has no dualad rule (dualad differentiates "
            f"{', '.join(sorted(formulas))} of {dist.name}), so it cannot be applied to a "
            "Dual.")
    return found


def _derived(formulas: dict, method: str):
    """``formulas[method]``, or the log or exp of another entry; None if neither."""
    log_of = method.removeprefix("log")
    if method in formulas:
        return formulas[method]
    if method.startswith("log") and log_of in formulas:
        return lambda *a: log(formulas[log_of](*a))
    if "log" + method in formulas:
        return lambda *a: exp(formulas["log" + method](*a))
    return None


def _inside_point(lo, hi):
    """A point of each support [lo, hi], where formulas are evaluated off the support
    (primitives: the bounds are JAX values under dualad_gpu when they are parameters)."""
    lo_finite = greater(lo, -np.inf) & less(lo, np.inf)
    hi_finite = greater(hi, -np.inf) & less(hi, np.inf)
    with np.errstate(invalid="ignore"):
        return where(lo_finite & hi_finite, 0.5 * (lo + hi),
                     where(lo_finite, lo + 1.0, where(hi_finite, hi - 1.0, 0.0)))


_OUTSIDE = {  # SciPy's value off the support: (below it, above it)
    "logpdf": (-np.inf, -np.inf), "pdf": (0.0, 0.0), "logpmf": (-np.inf, -np.inf),
    "pmf": (0.0, 0.0), "cdf": (0.0, 1.0), "logcdf": (-np.inf, 0.0), "sf": (1.0, 0.0),
    "logsf": (0.0, -np.inf),
}

# The masks are computed on values with primitives (comparisons, floor, where), so
# that they run on JAX tracers under dualad_gpu as well as on NumPy arrays.


def _continuous(method: str):
    def implementation(self, x, *args, **kwds):
        formula = _formula(self, method, _CONTINUOUS)
        shape, loc, scale = self._parse_args(*args, **kwds)
        shape = tuple(as_operand(s) for s in shape)
        z = (as_operand(x) - as_operand(loc)) / as_operand(scale)
        values = [primal_value(s) for s in shape]
        zv = primal_value(z)
        good = (_argcheck(self, values) & greater(primal_value(scale), 0.0)) & equal(zv, zv)
        lo, hi, mask = _support(self, zv, values)
        inside = good & mask
        if method in ("cdf", "logcdf", "sf", "logsf"):  # the ends of the support are exact
            inside = inside & less(lo, zv) & less(zv, hi)
        z = where(inside, z, _inside_point(lo + 0.0, hi + 0.0))
        shape = tuple(where(good, s, 1.0) for s in shape)  # refused parameters: nan below
        with np.errstate(all="ignore"):
            out = formula(z, *shape)
            if method == "logpdf":
                out = out - log(scale)
            elif method == "pdf":
                out = out / scale
        below, above = _OUTSIDE[method]
        out = where(inside, out, where(less_equal(zv, lo), below, above))
        return where(good, out, np.nan)

    implementation.__name__ = method
    return implementation


def _discrete(method: str):
    def implementation(self, k, *args, **kwds):
        formula = _formula(self, method, _DISCRETE)
        shape, loc, _ = self._parse_args(*args, **kwds)
        shape = tuple(as_operand(s) for s in shape)
        values = [primal_value(s) for s in shape]
        # k is a point of the lattice: a constant (its derivative is 0).
        k = primal_value(as_operand(k)) - primal_value(as_operand(loc)) + 0.0
        good = _argcheck(self, values) & equal(k, k)
        lo, hi = self._get_support(*values)
        if method in ("logpmf", "pmf"):
            inside = good & less_equal(lo, k) & less_equal(k, hi) & equal(floor(k), k)
        else:
            k = floor(k)
            inside = good & less_equal(lo, k) & less(k, hi)
        below_support = less(k, lo)
        k = where(inside, k, lo if np.isfinite(lo) else 0.0)
        shape = tuple(where(good, s, 1.0) for s in shape)
        with np.errstate(all="ignore"):
            out = formula(k, *shape)
        below, above = _OUTSIDE[method]
        out = where(inside, out, where(below_support, below, above))
        return where(good, out, np.nan)

    implementation.__name__ = method
    return implementation


def _quantile(method: str):
    """ppf/isf: loc + scale · the standardized quantile; SciPy's support ends at q = 0
    and 1 (reversed for isf), nan outside [0, 1]."""
    def implementation(self, q, *args, **kwds):
        formula = _formula(self, method, _CONTINUOUS)
        shape, loc, scale = self._parse_args(*args, **kwds)
        shape = tuple(as_operand(s) for s in shape)
        q = as_operand(q)
        values = [primal_value(s) for s in shape]
        qv = primal_value(q)
        good = ((_argcheck(self, values) & greater(primal_value(scale), 0.0))
                & less_equal(0.0, qv) & less_equal(qv, 1.0))
        inside = good & less(0.0, qv) & less(qv, 1.0)
        q = where(inside, q, 0.5)
        shape = tuple(where(good, s, 1.0) for s in shape)
        lo, hi, _ = _support(self, qv, values)
        lo, hi = lo + np.float64(0.0), hi + np.float64(0.0)  # SciPy's quantiles are float64
        if method == "isf":
            lo, hi = hi, lo
        with np.errstate(all="ignore"):
            out = where(inside, formula(q, *shape), where(equal(qv, 0.0), lo, hi))
            out = as_operand(loc) + as_operand(scale) * out
        return where(good, out, np.nan)

    implementation.__name__ = method
    return implementation


def _discrete_quantile(method: str):
    """ppf/isf of a discrete distribution: a point of the lattice, a step function of q
    and the parameters: values only (no derivative)."""
    def implementation(self, q, *args, **kwds):
        formula = _formula(self, method, _DISCRETE)
        shape, loc, _ = self._parse_args(*args, **kwds)
        values = [primal_value(as_operand(s)) for s in shape]
        qv = primal_value(as_operand(q)) + 0.0
        good = _argcheck(self, values) & less_equal(0.0, qv) & less_equal(qv, 1.0)
        inside = good & less(0.0, qv) & less(qv, 1.0)
        lo, hi = self._get_support(*values)
        first, last = (lo - 1.0, hi) if method == "ppf" else (hi, lo - 1.0)
        with np.errstate(all="ignore"):
            out = formula(where(inside, qv, 0.5), *(where(good, v, 1.0) for v in values))
            out = where(inside, out, where(equal(qv, 0.0), first, last))
        return where(good, out + primal_value(as_operand(loc)), np.nan)

    implementation.__name__ = method
    return implementation


_INFRASTRUCTURE = "scipy.stats._distn_infrastructure"
for _method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    scipy_rule(_INFRASTRUCTURE, f"rv_continuous.{_method}")(_continuous(_method))
for _method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
    scipy_rule(_INFRASTRUCTURE, f"rv_discrete.{_method}")(_discrete(_method))
for _method in ("ppf", "isf"):
    scipy_rule(_INFRASTRUCTURE, f"rv_continuous.{_method}")(_quantile(_method))
    scipy_rule(_INFRASTRUCTURE, f"rv_discrete.{_method}")(_discrete_quantile(_method))


# ---------------------------------------------------------------------------
# multivariate_normal: -½ (d log 2π + log det Σ + |L⁻¹(x - μ)|²), Σ = L Lᵀ
# ---------------------------------------------------------------------------


def _log_pdet_kernel(cov, rcond):
    s = np.linalg.eigvalsh(cov)
    keep = s > rcond * np.max(np.abs(s), axis=-1, keepdims=True)
    return np.sum(np.log(np.where(keep, s, 1.0)), axis=-1)


def _log_pdet_jax(cov, rcond):
    import jax.numpy as jnp
    s = jnp.linalg.eigvalsh(cov)
    keep = s > rcond * jnp.max(jnp.abs(s), axis=-1, keepdims=True)
    return jnp.sum(jnp.log(jnp.where(keep, s, 1.0)), axis=-1)


def _log_pdet_jvp(primals, tangents, ans, rcond):
    # d log pdet Σ = tr(Σ⁺ dΣ) wherever the rank stays, dΣ read from the lower triangle
    # as SciPy's eigh reads Σ: no eigenvector derivatives, so repeated (zero)
    # eigenvalues are harmless.
    (cov,), (t,) = primals, (_mirror(tangents[0]),)
    p = pinv(cov, rcond=rcond, hermitian=True)
    p = reshape(p, shape=(1,) + tuple(shape_of(p)))  # before the seed axis of t
    product = p * t
    ndim = len(shape_of(product))  # the primitive takes axes counted from the front
    return sum_(product, axis=(ndim - 2, ndim - 1), keepdims=False)


#: The log pseudo-determinant of a symmetric positive semidefinite matrix: the sum of
#: the logs of its eigenvalues above ``rcond`` times the largest (SciPy's _PSD).
log_pdet = Primitive("log_pdet", _log_pdet_kernel, jvp=_log_pdet_jvp)
log_pdet.kernels["jax"] = _log_pdet_jax


def _psd_cutoff(cov) -> float:
    """SciPy's relative cutoff of the eigenvalues of a covariance (_eigvalsh_to_eps)."""
    dtype = np.dtype(getattr(primal_value(cov), "dtype", np.float64))
    return {"f": 1e3, "d": 1e6}.get(dtype.char.lower(), 1e6) * np.finfo(
        dtype if dtype.kind == "f" else np.float64).eps


def _mvn_parameters(mean, cov):
    """(dim, mean as a vector, cov as a matrix) as SciPy's _process_parameters."""
    if type(cov).__name__ == "Covariance" or type(cov).__module__.endswith("_covariance"):
        raise TypeError("multivariate_normal with a Covariance object is not supported on "
                        "Duals; give the covariance matrix")
    cov = as_operand(cov)
    cov_ndim = np.ndim(primal_value(cov))
    if mean is None:
        dim = 1 if cov_ndim == 0 else np.shape(primal_value(cov))[0]
        mean = np.zeros(dim)
    mean = as_operand(mean)
    dim = int(np.size(primal_value(mean)))
    mean = np.reshape(mean, (dim,))
    if cov_ndim < 2:  # a scalar, or the diagonal given as a vector
        cov = cov * np.eye(dim)
    return dim, mean, cov


def _singular(cov, allow_singular: bool, cutoff: float):
    """The eigenvalues and vectors of the covariance's value, after SciPy's checks."""
    value = primal_value(cov)
    if not isinstance(value, np.ndarray):
        raise TypeError("multivariate_normal(allow_singular=True) on Duals decides the "
                        "rank from the covariance's value, which dualad_gpu traces; "
                        "give a positive definite covariance there")
    s, u = np.linalg.eigh(value)
    eps = cutoff * np.max(np.abs(s))
    if np.min(s) < -eps:
        raise ValueError("The input matrix must be symmetric positive semidefinite.")
    if np.any(s <= eps) and not allow_singular:
        raise np.linalg.LinAlgError("When `allow_singular is False`, the input matrix must "
                                    "be symmetric positive definite.")
    return s, u, eps


def _mvn_logpdf(self, x, mean=None, cov=1, allow_singular=False):
    dim, mean, cov = _mvn_parameters(mean, cov)
    x = as_operand(x)
    x_ndim = np.ndim(primal_value(x))
    if x_ndim == 0:
        x = np.reshape(x, (1, 1))
    elif x_ndim == 1:  # (as SciPy: x[:, None] if dim == 1 else x[None, :])
        x = np.reshape(x, (-1, 1) if dim == 1 else (1, -1))
    dev = x - mean
    if not allow_singular:
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(
                "When `allow_singular is False`, the input matrix must be symmetric "
                "positive definite.") from None
        z = solve_triangular(chol, np.swapaxes(dev, -1, -2), trans=0, lower=True,
                             unit_diagonal=False)
        maha = np.sum(z * z, axis=-2)
        log_det = 2.0 * np.sum(log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        return np.squeeze(-0.5 * (dim * 2.0 * _LOG_SQRT_2PI + log_det + maha))
    # Singular: the pseudo-inverse and pseudo-determinant over the covariance's range
    # (its rank decided on the value, as SciPy's _PSD); -inf off that range.
    cutoff = _psd_cutoff(cov)
    s, u, eps = _singular(cov, True, cutoff)
    rank = int(np.sum(s > eps))
    maha = np.sum(np.matmul(dev, np.linalg.pinv(cov, rcond=cutoff, hermitian=True)) * dev,
                  axis=-1)
    out = -0.5 * (rank * 2.0 * _LOG_SQRT_2PI + log_pdet(cov, rcond=cutoff) + maha)
    residual = np.linalg.norm(primal_value(dev) @ u[:, s <= eps], axis=-1)
    return np.squeeze(where(residual < 1e3 * eps, out, -np.inf))


def _mvn_pdf(self, x, mean=None, cov=1, allow_singular=False):
    return exp(_mvn_logpdf(self, x, mean, cov, allow_singular))


def _mvn_entropy(self, mean=None, cov=1):
    # ½ (rank (log 2π + 1) + log pdet Σ); SciPy's entropy takes no allow_singular (its
    # _PSD allows a singular Σ there).
    dim, mean, cov = _mvn_parameters(mean, cov)
    cutoff = _psd_cutoff(cov)
    value = primal_value(cov)
    if isinstance(value, np.ndarray):
        s, _, eps = _singular(cov, True, cutoff)
        rank = int(np.sum(s > eps))
    else:  # traced by dualad_gpu: the rank of a positive definite covariance
        rank = dim
    return 0.5 * (rank * (2.0 * _LOG_SQRT_2PI + 1.0) + log_pdet(cov, rcond=cutoff))


scipy_rule("scipy.stats._multivariate", "multivariate_normal_gen.entropy")(_mvn_entropy)
scipy_rule("scipy.stats._multivariate", "multivariate_normal_gen.logpdf")(_mvn_logpdf)
scipy_rule("scipy.stats._multivariate", "multivariate_normal_gen.pdf")(_mvn_pdf)


def _register_distributions(module) -> None:
    """Record the distributions in FUNCTION_HANDLERS (the registry), as freezing them."""
    for name in SUPPORTED:
        dist = getattr(module, name)
        FUNCTION_HANDLERS[dist] = dist


scipy_rule("scipy.stats", "")(_register_distributions)


# ---------------------------------------------------------------------------
# Statistics: sem (differentiable); mode and rankdata (values: ties and counts)
# ---------------------------------------------------------------------------


@scipy_rule("scipy.stats", "sem")
def _sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """``scipy.stats.sem``: std(a, ddof) / sqrt(n) along ``axis``."""
    a = as_operand(a)
    if not np.issubdtype(primal_value(a).dtype, np.inexact):
        a = a + 0.0
    if axis is None:
        a, axis = np.ravel(a), 0
    if nan_policy == "raise":  # decided on NumPy values (a JAX value is not known yet)
        value = primal_value(a)
        if isinstance(value, np.ndarray | np.generic) and np.any(np.isnan(value)):
            raise ValueError("The input contains nan values")
    if nan_policy == "omit":
        n = primal_value(np.nansum(a * 0.0 + 1.0, axis=axis, keepdims=keepdims))  # non-nan
        return np.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(n)
    if nan_policy not in ("propagate", "raise"):
        raise ValueError("nan_policy must be one of {'propagate', 'omit', 'raise'}")
    n = np.shape(primal_value(a))[axis]
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(n)  # keeps float32


def _values_only(name: str) -> Primitive:
    """A statistic whose values are integers or decided by ties: a primitive with no
    derivative, SciPy's own on NumPy values and JAX's under dualad_gpu."""

    def kernel(a, *args, **kwargs):
        import scipy.stats._stats_py as stats_py
        return getattr(stats_py, name)(a, *args, **kwargs)

    def jax_kernel(a, *args, **kwargs):
        import jax.scipy.stats as jax_stats
        return getattr(jax_stats, name)(a, *args, **kwargs)

    primitive = Primitive(name, kernel)
    primitive.kernels["jax"] = jax_kernel
    return primitive


scipy_rule("scipy.stats", "mode")(_values_only("mode"))
scipy_rule("scipy.stats", "rankdata")(_values_only("rankdata"))
