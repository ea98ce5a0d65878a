"""Special functions: the ufuncs of ``scipy.special`` and ``np.sinc``, plus stable
``logsumexp``, ``softmax`` and ``log_softmax``.

The ufuncs are declared like those of ``elementwise``: one row of partials,
written with primitives. Where a partial is another special function, that
function is a primitive too (``digamma' = polygamma(1, x)``, ``i0' = i1``), so
every row can be differentiated again. scipy is optional, and importing dualad does
not import it: ``sinc`` and the softmax family are declared at once, the ufuncs'
primitives when scipy.special is imported (:func:`declare_scipy_rules`, run by the
import hook of :mod:`dualad.rules.scipy_functions`; ``np.i0`` imports it on use).

``scipy.special.polygamma``, ``logsumexp``, ``softmax``, ``log_softmax`` and
``multigammaln`` are Python functions that convert their arguments with
``np.asarray``, so NumPy's protocols never hand them a Dual: dualad installs
dispatchers for them in ``scipy.special`` (:mod:`dualad.rules.scipy_functions`),
which call the implementations here when an argument is a Dual.

Some partials have no closed form. gammainc/gammaincc in ``a``: ∂P/∂a and ∂²P/∂a²
are primitives (``gammainc_da``, ``gammainc_da2``) computed on the values by P's series
(x < a + 1) or the continued fraction of Q = 1 - P (above), each term carrying its
derivatives in a, so every mode and second order work (a third derivative in a
raises); under dualad_gpu ∂P/∂a is JAX's own (``lax.igamma_grad_a``), ∂²P/∂a² the
NumPy kernel on the host. betainc in ``a`` and ``b``, the Bessel functions in their
order ``v`` and stdtr in ``df`` raise a TypeError when that argument carries a
derivative (``_no_partial``): JAX differentiates none of them either (it has no iv, jv, kv or
stdtr at all). Where JAX has no kernel (betaincc, stdtr, rgamma and the Bessel
functions of any order), dualad_gpu calls SciPy's on the host (jax.pure_callback).
More scipy.special functions are in :mod:`dualad.rules.scipy_special` and
:mod:`dualad.rules.scipy_special_extra`.
"""

from __future__ import annotations

import importlib
import math
import sys

import numpy as np

from ..dual import primal_value
from ..primitive import (UFUNC_HANDLERS, Over, Primitive, qualified_name, refresh_backends,
                         register_function)
from .elementwise import (_sech_squared, absolute, broadcast_shape_rule, cos, elementwise,
                          equal, exp, floor, greater, log, log1p, remainder, rint, safe_divide,
                          sign, sin, tanh, where)
from .reductions import amax, normalize_axes, sum_
from .shape import broadcast_to, reshape, shape_of


class _Ufuncs:
    """scipy.special, imported on first use, with its ufuncs themselves: under
    SCIPY_ARRAY_API=1 SciPy wraps each in a Python function that dispatches on the array
    namespace."""

    def __getattr__(self, name):
        f = getattr(sys.modules.get("scipy.special") or importlib.import_module("scipy.special"),
                    name)
        inner = getattr(f, "__wrapped__", None)
        return inner if isinstance(inner, np.ufunc) else f


sc = _Ufuncs()

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_PI = math.pi


# I1(x)/x = ½ Σₖ (x²/4)ᵏ / (k!(k+1)!), and J1(x)/x the same series in -x²/4: used for
# |x| < 1, where the derivatives of f(x)/x cancel (nine terms leave < 1e-17 there).
_BESSEL_OVER_X = [0.5 / (math.factorial(k) * math.factorial(k + 1) * 4 ** k) for k in range(9)]


def _polygamma(n, x):
    """scipy.special.polygamma, written as SciPy does but with ufuncs on the arrays
    given (SciPy's np.asarray would hide them from a replay's recording); of complex
    ``x`` too (:func:`_complex_polygamma`), which SciPy's is not."""
    n, x = np.asanyarray(n), np.asanyarray(x)
    if x.dtype.kind == "c":
        return _complex_polygamma(n, x)
    fac2 = (-1.0) ** (n + 1) * sc.gamma(n + 1.0) * sc.zeta(n + 1, x)
    return np.where(n == 0, sc.psi(x), fac2)


# The Bernoulli numbers B₂, B₄, ..., B₂₀ of the asymptotic series.
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330]
_ASYMPTOTIC_FROM = 20.0  # the real part the recurrence lifts z to
_MOST_STEPS = 10_000  # further left (Re z < -10⁴) the result is nan, not a long loop


def _complex_polygamma(n, z):
    """ψ⁽ⁿ⁾(z) of complex z (n = 0 is SciPy's complex digamma): the recurrence
    ψ⁽ⁿ⁾(z) = ψ⁽ⁿ⁾(z + 1) + (-1)ⁿ⁺¹ n!/zⁿ⁺¹ lifts Re z to 20 or more, where the
    asymptotic series (-1)ⁿ⁺¹ [(n-1)!/wⁿ + n!/(2wⁿ⁺¹) + Σₖ B₂ₖ (2k+n-1)!/((2k)! w²ᵏ⁺ⁿ)]
    has converged to rounding with ten terms (mpmath agrees to ~1e-15, relative)."""
    n, z = np.broadcast_arrays(n, z)
    out = np.empty(z.shape, dtype=z.dtype)
    digamma = n == 0
    out[digamma] = sc.psi(z[digamma])
    order, z = n[~digamma].astype(float), z[~digamma]
    steps = np.maximum(np.ceil(_ASYMPTOTIC_FROM - z.real), 0.0)
    bad = ~(np.isfinite(z) & (steps <= _MOST_STEPS))  # nan, inf, far left: nan
    z, steps = np.where(bad, _ASYMPTOTIC_FROM, z), np.where(bad, 0.0, steps)
    lifted = np.zeros_like(z)
    for k in range(int(steps.max(initial=0.0))):
        lifted += np.where(k < steps, (z + k) ** -(order + 1.0), 0.0)
    w = z + steps
    series = sc.gamma(order) / w ** order + sc.gamma(order + 1.0) / (2.0 * w ** (order + 1.0))
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b * sc.gamma(2 * k + order) / (math.factorial(2 * k) * w ** (2 * k + order))
    value = (-1.0) ** (order + 1.0) * (series + sc.gamma(order + 1.0) * lifted)
    out[~digamma] = np.where(bad, np.nan, value)
    return out


def _over_x(f, x, sign: float = 1.0):
    """f(x)/x for f = I1 (``sign`` 1) or J1 (``sign`` -1), by its series near 0."""
    near = greater(1.0, absolute(x))
    u = sign * (x * x)
    series = _BESSEL_OVER_X[-1]
    for c in reversed(_BESSEL_OVER_X[:-1]):
        series = series * u + c
    xs = where(near, 1.0, x)
    return where(near, series, f(xs) / xs)


# ---------------------------------------------------------------------------
# sinc (NumPy): sin(πx)/(πx), an array function rather than a ufunc
# ---------------------------------------------------------------------------

# sinc'(x) = π·Σₖ (-1)ᵏ 2k·u^(2k-1)/(2k+1)!, u = πx: used for |x| < 0.1, where
# (cos πx - sinc x)/x cancels; six terms leave < 1e-16 relative there.
_SINC_SERIES = [(-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(1, 7)]


def _sinc_partial(ans, x):
    small = greater(0.1, absolute(x))
    u = _PI * x
    u2 = u * u
    series = _SINC_SERIES[-1]
    for c in reversed(_SINC_SERIES[:-1]):
        series = series * u2 + c
    xs = where(small, 1.0, x)
    return where(small, _PI * u * series, (cos(_PI * xs) - sinc(xs)) / xs)


sinc = Primitive("sinc", np.sinc, partials=(_sinc_partial,), shape_rule=broadcast_shape_rule)
register_function(np.sinc, sinc)

# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax: everything is shifted by m = max(a), taken
# as a constant (its derivative cancels exactly), so no exp overflows and no
# derivative of max (with its ties) is ever taken.
# ---------------------------------------------------------------------------


def _shifted(a, axis):
    """(a - m, axes) with m = max(a) along ``axis`` (kept dims), taken as a constant."""
    if not hasattr(a, "shape"):
        a = np.asarray(a, dtype=float)
    axes = normalize_axes(axis, len(shape_of(a)))
    m = amax(primal_value(a), axis=axes, keepdims=True)
    m = where(greater(m, -np.inf), m, 0.0)  # all -inf: the sum is then 0, its log -inf
    return a - m, m, axes


def _log_sum_exp(shifted, axes):
    with np.errstate(divide="ignore"):
        return log(sum_(exp(shifted), axis=axes, keepdims=True))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log Σ b·exp(a) along ``axis``, as ``scipy.special.logsumexp``: differentiable
    in ``a`` and in the weights ``b``; a negative sum is nan, or with
    ``return_sign=True`` gives ``(log |Σ|, sign)``."""
    if b is None and not return_sign:
        shifted, m, axes = _shifted(a, axis)
        return _drop_axes(_log_sum_exp(shifted, axes) + m, axes, keepdims)
    if not hasattr(a, "shape"):
        a = np.asarray(a, dtype=float)
    if b is None:
        b = np.ones((), _float_dtype(a))
    elif not hasattr(b, "shape"):
        b = np.asarray(b, dtype=float)
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    a, b = broadcast_to(a, shape=shape), broadcast_to(b, shape=shape)
    axes = normalize_axes(axis, len(shape))
    # The shift: the largest a where b ≠ 0 (SciPy's), a constant as in _shifted.
    m = amax(where(equal(primal_value(b), 0.0), -np.inf, primal_value(a)), axis=axes,
             keepdims=True)
    m = where(greater(m, -np.inf), m, 0.0)
    total = sum_(b * exp(a - m), axis=axes, keepdims=True)
    sign_ = sign(primal_value(total))
    with np.errstate(divide="ignore"):
        out = log(absolute(total)) + m
    if not return_sign:
        return _drop_axes(where(greater(0.0, sign_), np.nan, out), axes, keepdims)
    return _drop_axes(out, axes, keepdims), _drop_axes(sign_, axes, keepdims)


def _float_dtype(a):
    dtype = np.result_type(primal_value(a))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _drop_axes(out, axes, keepdims: bool):
    if keepdims:
        return out
    return reshape(out, shape=tuple(n for i, n in enumerate(shape_of(out)) if i not in axes))


def softmax(x, axis=None):
    """exp(x) / Σ exp(x) along ``axis``, as ``scipy.special.softmax``."""
    shifted, _, axes = _shifted(x, axis)
    e = exp(shifted)
    return e / sum_(e, axis=axes, keepdims=True)


def log_softmax(x, axis=None):
    """x - logsumexp(x) along ``axis``, as ``scipy.special.log_softmax``."""
    shifted, _, axes = _shifted(x, axis)
    return shifted - _log_sum_exp(shifted, axes)


# ---------------------------------------------------------------------------
# scipy.special ufuncs
# ---------------------------------------------------------------------------


def _no_partial(name: str, argument: str):
    """The partial of an argument no closed form differentiates (an order, a shape
    parameter): evaluated only when that argument carries a derivative, it raises."""

    def partial(ans, *args):
        raise TypeError(
            f"scipy.special.{name} is differentiated in its last argument only, not in "
            f"{argument!r}: dualad has no rule for that derivative. Pass {argument} as a "
            "constant (dualad.primal_value) or differentiate it by finite differences.")

    return partial


def _host_kernel(ufunc):
    """A JAX kernel for a scipy.special ufunc that JAX lacks: SciPy's own, called
    from the compiled program (jax.pure_callback, on the host)."""

    def kernel(*args):
        import jax
        import jax.numpy as jnp
        args = [jnp.asarray(a) for a in args]
        dtype = jnp.result_type(*args, jnp.float32)
        out = jax.ShapeDtypeStruct(jnp.broadcast_shapes(*(a.shape for a in args)), dtype)
        return jax.pure_callback(lambda *a: np.asarray(ufunc(*a), dtype), out, *args,
                                 vmap_method="broadcast_all")

    return kernel


# ---------------------------------------------------------------------------
# ∂/∂a of the regularized incomplete gamma function P(a, x), to second order
# ---------------------------------------------------------------------------

_EPS = 1e-17
_MAX_TERMS = 200_000


def _gammainc_series(a, x):
    """(P', P'') in a by P = e^L·Σₙ tₙ, L = a·log x - x - log Γ(a+1), tₙ = Πₖ≤ₙ x/(a+k)
    (x < a + 1): each term carries its derivatives in a, until none moves the sums."""
    lx = np.log(x)
    e = np.exp(a * lx - x - sc.gammaln(a + 1.0))
    l1 = lx - sc.digamma(a + 1.0)
    e1, e2 = e * l1, e * (l1 * l1 - sc.polygamma(1, a + 1.0))
    t, d1, d2 = np.ones_like(x), np.zeros_like(x), np.zeros_like(x)  # log t in a: d1, d2
    s0, s1, s2 = np.ones_like(x), np.zeros_like(x), np.zeros_like(x)
    for n in range(1, _MAX_TERMS):
        r = 1.0 / (a + n)
        t = t * (x * r)
        d1, d2 = d1 - r, d2 + r * r
        s0, s1, s2 = s0 + t, s1 + t * d1, s2 + t * (d1 * d1 + d2)
        if np.all((t <= _EPS * s0) & (t * -d1 <= _EPS * -s1) & (t * (d1 * d1 + d2) <= _EPS * s2)):
            break
    return e1 * s0 + e * s1, e2 * s0 + 2.0 * e1 * s1 + e * s2


def _gammaincc_fraction(a, x):
    """(Q', Q'') in a by Legendre's continued fraction (x ≥ a + 1): Q = e^L/f,
    L = a·log x - x - log Γ(a), f = b₀ + c₁/(b₁ + c₂/(b₂ + ...)), bₙ = x + 2n + 1 - a,
    cₙ = n(a - n). Its length is Lentz's on the values, doubled: evaluated from the
    tail, each level carries its derivatives in a."""
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = np.full_like(x, 1.0 / tiny), 1.0 / b
    done = np.zeros(x.shape, bool)
    n = 1
    while not np.all(done) and n < _MAX_TERMS:
        an = n * (a - n)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        done |= np.abs(d * c - 1.0) < _EPS
        n += 1
    n = 2 * n + 10
    f, f1, f2 = x + 2.0 * n + 1.0 - a, -np.ones_like(x), np.zeros_like(x)
    for k in range(n, 0, -1):
        q = (k * (a - k)) / f  # cₖ/fₖ and its derivatives: cₖ' = k, cₖ'' = 0
        q1 = (k - q * f1) / f
        q2 = (-2.0 * q1 * f1 - q * f2) / f
        f, f1, f2 = x + 2.0 * (k - 1) + 1.0 - a + q, q1 - 1.0, q2
    h = 1.0 / f
    h1, h2 = -f1 * h * h, (2.0 * f1 * f1 * h - f2) * h * h
    lx = np.log(x)
    e = np.exp(a * lx - x - sc.gammaln(a))
    l1 = lx - sc.digamma(a)
    e1, e2 = e * l1, e * (l1 * l1 - sc.polygamma(1, a))
    return e1 * h + e * h1, e2 * h + 2.0 * e1 * h1 + e * h2


def _gammainc_a_derivatives(a, x):
    """(∂P/∂a, ∂²P/∂a²) of P = gammainc(a, x) on arrays: the series below a + 1, the
    continued fraction of Q = 1 - P above; 0 at x = 0 and x = inf, nan off the domain."""
    a = a if isinstance(a, (float, int)) else np.asarray(a)  # (keeps Python scalars weak)
    x = x if isinstance(x, (float, int)) else np.asarray(x)
    dtype = np.result_type(a, x, np.float32)
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    interior = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
    lower = interior & (x < a + 1.0)
    upper = interior & ~lower
    d1, d2 = np.zeros(a.shape), np.zeros(a.shape)
    with np.errstate(all="ignore"):
        if np.any(lower):
            d1[lower], d2[lower] = _gammainc_series(a[lower], x[lower])
        if np.any(upper):
            q1, q2 = _gammaincc_fraction(a[upper], x[upper])
            d1[upper], d2[upper] = -q1, -q2
    off = ~((a > 0) & (x >= 0))
    d1[off] = d2[off] = np.nan
    return d1.astype(dtype)[()], d2.astype(dtype)[()]


def _igamma_grad_a(a, x):
    """JAX's own ∂P/∂a (the kernel of its gammainc's derivative in a)."""
    import jax.numpy as jnp
    from jax import lax
    a, x = jnp.asarray(a), jnp.asarray(x)
    dtype = jnp.result_type(a, x, jnp.float32)
    a, x = jnp.broadcast_arrays(a.astype(dtype), x.astype(dtype))
    return lax.igamma_grad_a(a, x)


def _declare_ufuncs() -> None:
    """Declare the primitives of scipy.special's ufuncs (:func:`declare_scipy_rules`)."""
    from . import scipy_special as _far  # (the asymptotic series of large arguments)
    # Error function and normal distribution
    erf = elementwise(sc.erf, lambda ans, x: _TWO_OVER_SQRT_PI * exp(-(x * x)))
    erfc = elementwise(sc.erfc, lambda ans, x: -_TWO_OVER_SQRT_PI * exp(-(x * x)))
    # erfcx = exp(x²)·erfc(x): 2x·erfcx - 2/√π, by its asymptotic series for x > 20.
    erfcx = elementwise(sc.erfcx, _far._erfcx_partial)
    erfinv = elementwise(sc.erfinv, lambda ans, x: _SQRT_PI_OVER_TWO * exp(ans * ans))
    ndtr = elementwise(sc.ndtr, lambda ans, x: exp(-0.5 * (x * x)) / _SQRT_2PI)
    log_ndtr = elementwise(sc.log_ndtr, _far._log_ndtr_partial)
    ndtri = elementwise(sc.ndtri, lambda ans, x: _SQRT_2PI * exp(0.5 * (ans * ans)))

    # Logistic
    # s(1 - s) as sech²(x/2)/4: its derivative has no 1 - 2s, which cancels near 0.
    expit = elementwise(sc.expit, lambda ans, x: 0.25 * _sech_squared(0.5 * x, tanh(0.5 * x)))
    logit = elementwise(sc.logit, lambda ans, x: Over(x * (1.0 - x)))
    log_expit = elementwise(sc.log_expit, lambda ans, x: expit(-x))
    # x·log y is 0 at x = 0 for every y: ∂y = 0 there (no 0/0); ∂x = log 0 = -inf at y = 0.
    xlogy = elementwise(sc.xlogy, lambda ans, x, y: log(y),
                        lambda ans, x, y: safe_divide(x, y), nonfinite=True)
    xlog1py = elementwise(sc.xlog1py, lambda ans, x, y: log1p(y),
                          lambda ans, x, y: safe_divide(x, 1.0 + y), nonfinite=True)

    # Gamma and related; polygamma's order n is an integer argument.
    polygamma = Primitive("polygamma", _polygamma,
                          partials=(None, lambda ans, n, x: polygamma(n + 1, x)),
                          shape_rule=broadcast_shape_rule)
    digamma = elementwise(sc.digamma, lambda ans, x: polygamma(1, x))
    polygamma.complex_ok = digamma.complex_ok = True  # holomorphic (poles aside)
    # (ψ by _far._psi: SciPy's psi loses digits next to its poles 0, -1, -2, …)
    gammaln = elementwise(sc.gammaln, lambda ans, x: _far._psi(x))
    gamma = elementwise(sc.gamma, lambda ans, x: ans * _far._psi(x))
    betaln = elementwise(sc.betaln, lambda ans, a, b: digamma(a) - digamma(a + b),
                         lambda ans, a, b: digamma(b) - digamma(a + b))
    beta = elementwise(sc.beta, lambda ans, a, b: ans * (digamma(a) - digamma(a + b)),
                       lambda ans, a, b: ans * (digamma(b) - digamma(a + b)))

    # Bessel functions: derivatives by the recurrences, f(x)/x taken at 0 by its limit.
    i0 = elementwise(sc.i0, lambda ans, x: i1(x))
    i1 = elementwise(sc.i1, lambda ans, x: i0(x) - _over_x(i1, x))
    # i0e = exp(-|x|)·i0: at x = 0 the kink's midpoint is i1e(0) = 0. For |x| > 50,
    # where i1e - i0e cancels, the asymptotic series.
    i0e = elementwise(sc.i0e, lambda ans, x: where(
        greater(absolute(x), _far._BESSEL_FAR), sign(x) * _far._ie_derivative(0, x),
        i1e(x) - sign(x) * ans))
    i1e = elementwise(sc.i1e, lambda ans, x: where(
        greater(absolute(x), _far._BESSEL_FAR), _far._ie_derivative(1, x),
        i0e(x) - sign(x) * ans - _i1e_over_x(x)))

    def _i1e_over_x(x):
        """exp(-|x|)·I1(x)/x, finite at any x (I1 alone overflows from x ≈ 713 on)."""
        near = greater(1.0, absolute(x))
        xs = where(near, 1.0, x)
        return where(near, exp(-absolute(x)) * _over_x(i1, where(near, x, 0.0)), i1e(xs) / xs)

    j0 = elementwise(sc.j0, lambda ans, x: -j1(x))
    j1 = elementwise(sc.j1, lambda ans, x: j0(x) - _over_x(j1, x, -1.0))
    y0 = elementwise(sc.y0, lambda ans, x: -y1(x))
    y1 = elementwise(sc.y1, lambda ans, x: y0(x) - y1(x) / x)

    # Incomplete gamma and beta functions, their distributions (t, Poisson), Bessel
    # functions of any order, erfcinv and rgamma. Orders and shape parameters that no
    # closed form differentiates get a partial that raises (_no_partial).
    def _gamma_density(a, x):  # x^(a-1) e^(-x) / Γ(a), the derivative of gammainc in x
        return exp(xlogy(a - 1.0, x) - x - gammaln(a))

    def _beta_density(a, b, x):  # the derivative of betainc in x
        return exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b))

    def _poisson_pmf(k, m):  # the derivative of pdtrc in m (pdtr floors k)
        k = floor(primal_value(k))
        return exp(xlogy(k, m) - m - gammaln(k + 1.0))

    def _t_density(df, t):  # the derivative of stdtr in t
        return exp(gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * log(df * _PI)
                   - 0.5 * (df + 1.0) * log1p(t * t / df))

    # gammainc in a: ∂P/∂a and ∂²P/∂a² are primitives (series / continued fraction,
    # _gammainc_a_derivatives); their partials in x differentiate the density in a.
    def _gamma_density_da(a, x, order: int):  # ∂^order/∂a^order of the density
        density = _gamma_density(a, x)
        u = log(x) - digamma(a)
        if order == 1:
            return where(equal(x, 0.0), 0.0, density * u)
        return where(equal(x, 0.0), 0.0, density * (u * u - polygamma(1, a)))

    def _third_in_a(ans, a, x):
        raise TypeError("scipy.special.gammainc/gammaincc: dualad differentiates them at "
                        "most twice in 'a' (a third derivative in a has no rule)")

    gammainc_da2 = Primitive("gammainc_da2", lambda a, x: _gammainc_a_derivatives(a, x)[1],
                             partials=(_third_in_a,
                                       lambda ans, a, x: _gamma_density_da(a, x, 2)),
                             shape_rule=broadcast_shape_rule)
    gammainc_da = Primitive("gammainc_da", lambda a, x: _gammainc_a_derivatives(a, x)[0],
                            partials=(lambda ans, a, x: gammainc_da2(a, x),
                                      lambda ans, a, x: _gamma_density_da(a, x, 1)),
                            shape_rule=broadcast_shape_rule)
    gammainc_da.kernels["jax"] = _igamma_grad_a
    gammainc_da2.kernels["jax"] = _host_kernel(gammainc_da2.kernels["numpy"])
    gammainc = elementwise(sc.gammainc, lambda ans, a, x: gammainc_da(a, x),
                           lambda ans, a, x: _gamma_density(a, x))
    gammaincc = elementwise(sc.gammaincc, lambda ans, a, x: -gammainc_da(a, x),
                            lambda ans, a, x: -_gamma_density(a, x))
    betainc = elementwise(sc.betainc, _no_partial("betainc", "a"),
                          _no_partial("betainc", "b"),
                          lambda ans, a, b, x: _beta_density(a, b, x))
    betaincc = elementwise(sc.betaincc, _no_partial("betaincc", "a"),
                           _no_partial("betaincc", "b"),
                           lambda ans, a, b, x: -_beta_density(a, b, x))
    stdtr = elementwise(sc.stdtr, _no_partial("stdtr", "df"),
                        lambda ans, df, t: _t_density(df, t))
    # pdtr(k, m) = Σ_{j ≤ k} Poisson pmf: a step function of k (derivative 0).
    pdtr = elementwise(sc.pdtr, None, lambda ans, k, m: -_poisson_pmf(k, m))
    pdtrc = elementwise(sc.pdtrc, None, lambda ans, k, m: _poisson_pmf(k, m))
    # erfc(ans) = y, so dy = -2/√π exp(-ans²) d ans.
    erfcinv = elementwise(sc.erfcinv, lambda ans, y: -_SQRT_PI_OVER_TWO * exp(ans * ans))
    # rgamma = 1/Γ: -ψ(x)/Γ(x), but within ¼ of 0, -1, -2, … (rgamma's zeros, ψ's poles)
    # the reflection 1/Γ(x) = sin(πx)Γ(1 - x)/π, whose derivative
    # Γ(1 - x)(cos πx - sin πx·ψ(1 - x)/π) has no pole; πx is taken as nπ + π(x - n), n
    # the nearest integer (x - n exact), so that sin πx keeps its digits next to n.
    def _rgamma_partial(ans, x):
        n = rint(x)
        near = where(greater(0.5, x), greater(0.25, absolute(x - n)), False)
        xn, nn, xf = where(near, x, 0.0), where(near, n, 0.0), where(near, 1.0, x)
        turn = _PI * (xn - nn)
        parity = 1.0 - 2.0 * remainder(nn, 2.0)  # cos nπ
        return where(near, parity * gamma(1.0 - xn)
                     * (cos(turn) - sin(turn) * digamma(1.0 - xn) / _PI),
                     -ans * digamma(xf))

    rgamma = elementwise(sc.rgamma, _rgamma_partial)
    iv = elementwise(sc.iv, _no_partial("iv", "v"),
                     lambda ans, v, x: 0.5 * (iv(v - 1.0, x) + iv(v + 1.0, x)))
    # ive = iv·exp(-|x|); for large |x| the asymptotic series (_far._ive_far).
    def _ive_partial(ans, v, x):
        far, series = _far._ive_far(v, x)
        near = 0.5 * (ive(v - 1.0, x) + ive(v + 1.0, x)) - sign(x) * ans
        return where(far, series, near)

    ive = elementwise(sc.ive, _no_partial("ive", "v"), _ive_partial)
    jv = elementwise(sc.jv, _no_partial("jv", "v"),
                     lambda ans, v, x: 0.5 * (jv(v - 1.0, x) - jv(v + 1.0, x)))
    kv = elementwise(sc.kv, _no_partial("kv", "v"),
                     lambda ans, v, x: -0.5 * (kv(v - 1.0, x) + kv(v + 1.0, x)))
    yn = elementwise(sc.yn, _no_partial("yn", "n"),
                     lambda ans, n, x: 0.5 * (yn(n - 1, x) - yn(n + 1, x)))
    yv = elementwise(sc.yv, _no_partial("yv", "v"),
                     lambda ans, v, x: 0.5 * (yv(v - 1.0, x) - yv(v + 1.0, x)))
    for _prim in (betaincc, stdtr, rgamma, iv, ive, jv, kv, yn, yv):  # JAX has none of these
        _prim.kernels["jax"] = _host_kernel(_prim.kernels["numpy"])
    erfcinv.kernels["jax"] = lambda y: (-__import__("jax").scipy.special.ndtri(0.5 * y)
                                        / math.sqrt(2.0))
    pdtr.kernels["jax"] = lambda k, m: __import__("jax").scipy.special.gammaincc(
        __import__("jax").numpy.floor(k) + 1.0, m)
    pdtrc.kernels["jax"] = lambda k, m: __import__("jax").scipy.special.gammainc(
        __import__("jax").numpy.floor(k) + 1.0, m)

    register_function(np.i0, i0)
    # Recorded as the dualad equivalents of these scipy functions, which convert
    # their arguments with np.asarray and so never reach a Dual themselves.
    register_function(sc.polygamma, polygamma)
    register_function(sc.logsumexp, logsumexp)
    register_function(sc.softmax, softmax)
    register_function(sc.log_softmax, log_softmax)
    from .scipy_functions import scipy_rule
    scipy_rule("scipy.special", "polygamma")(polygamma)
    globals().update(locals())


_IMPORTED = ("absolute", "cos", "equal", "exp", "floor", "greater", "log", "log1p", "remainder",
             "rint", "sign", "sin", "where", "amax", "sum_", "reshape")
__all__ = [name for name, value in list(globals().items())
           if isinstance(value, Primitive) and not name.startswith("_") and name not in _IMPORTED]
__all__ += ["logsumexp", "softmax", "log_softmax"]

# ---------------------------------------------------------------------------
# Declared when scipy.special is imported, not before: importing dualad does not
# import SciPy (the import hook of dualad.rules.scipy_functions runs this)
# ---------------------------------------------------------------------------

_declared = False


def declare_scipy_rules(module: object = None) -> None:
    """Declare the primitives of scipy.special's ufuncs, here and in
    :mod:`dualad.rules.scipy_special` and :mod:`dualad.rules.scipy_special_extra`, once
    scipy.special is imported (before or after dualad); then give them what dualad's
    import gave the others (idempotent)."""
    global __all__, _declared
    if _declared:
        return
    _declared = True
    before, names = set(UFUNC_HANDLERS), set(globals())
    _declare_ufuncs()
    from . import scipy_special
    scipy_special.declare()
    from . import scipy_special_extra
    scipy_special_extra.declare()
    declared = [name for name, value in list(globals().items())
                if isinstance(value, Primitive) and name not in names and name[0] != "_"]
    __all__ += declared
    ops = sys.modules.get("dualad.ops")  # (it imported the names of __all__ declared so far)
    for name in declared if ops is not None else ():
        setattr(ops, name, globals()[name])
    from ..dual import Dual
    from ..operands import object_loop_method
    complex_numbers = sys.modules.get("dualad.rules.complex_numbers")
    for ufunc in [u for u in UFUNC_HANDLERS if u not in before]:
        if not hasattr(Dual, ufunc.__name__):
            setattr(Dual, ufunc.__name__, object_loop_method(ufunc))
        handler = UFUNC_HANDLERS[ufunc]
        # complex_numbers wraps the compositions declared before it (fresnel, sici)
        if not isinstance(handler, Primitive) and hasattr(complex_numbers, "_refusing_complex"):
            UFUNC_HANDLERS[ufunc] = complex_numbers._refusing_complex(
                qualified_name(ufunc), handler)
    refresh_backends()  # dualad_gpu came first: its JAX kernels for these primitives


def _i0(x):
    """np.i0 on a Dual: scipy.special.i0's primitive (i0' = i1), declared when
    scipy.special is imported (here, if it was not yet)."""
    try:
        import scipy.special  # noqa: F401  (the import hook declares i0 and registers it)
    except ImportError:  # pragma: no cover - scipy is an optional dependency
        raise TypeError("np.i0 is differentiated with scipy.special.i1: install SciPy "
                        "to differentiate it") from None
    return globals()["i0"](x)


register_function(np.i0, _i0)


def __getattr__(name: str):
    """A scipy.special primitive asked for before scipy.special is imported: imports it."""
    if not name.startswith("_") and not _declared:
        try:
            import scipy.special  # noqa: F401  (the import hook declares the primitives)
        except ImportError:  # pragma: no cover - scipy is an optional dependency
            pass
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
