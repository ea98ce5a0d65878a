"""Elementwise primitives: one row of partial derivatives per ufunc.

Each row gives ``∂ans/∂argᵢ`` as a function of ``(ans, *args)`` written with
primitives of the table and Python operators (which are primitives on Duals
and go straight to NumPy on plain arrays), so the row can itself be
differentiated. ``ONE`` and ``MINUS_ONE`` mark constant partials that need no
multiply, and ``Over(d)`` a partial 1/d applied as one division.

Conventions at points where a function is not differentiable (see
docs/conventions): the derivative at a kink is the midpoint of the one-sided
derivatives, i.e. the centre of the subdifferential. So ``abs'(0) = 0``, a
tie of ``maximum``/``minimum`` splits ½/½, and step functions (``floor``,
``sign``, ``round``…) have derivative 0 everywhere. Where a partial is
infinite at a finite value (``sqrt`` at 0) the derivative is ``inf`` in any
direction that moves the input, and exactly 0 along a zero tangent.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np

from ..dual import primal_value
from ..tangents import align_tangent, fit_tangent
from ..primitive import (MINUS_ONE, NON_DIFFERENTIABLE, ONE, UFUNC_HANDLERS, Over, Primitive,
                         implements, register_function)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def elementwise(ufunc: np.ufunc, *partials, nonfinite: bool = False,
                transpose=None, linear=None, operator=None) -> Primitive:
    """Declare the primitive of ``ufunc`` by its row of partials and register it.

    The few elementwise primitives that tangent rules apply to tangents (add,
    multiply, ...) also give their transpose for reverse mode; those Python has an
    ``operator`` for compute with it (see :func:`by_operator`).
    """
    if len(partials) != ufunc.nin:
        raise ValueError(f"{ufunc.__name__} takes {ufunc.nin} arguments, "
                         f"got {len(partials)} partials")
    kernel = ufunc if operator is None else by_operator(ufunc, operator)
    prim = Primitive(ufunc.__name__, kernel, partials=partials, nonfinite_partials=nonfinite,
                     transpose=transpose, linear=linear, shape_rule=broadcast_shape_rule)
    register_function(ufunc, prim)
    return prim


def by_operator(ufunc: np.ufunc, function: Callable) -> Callable:
    """``ufunc``, called through its Python operator when given only its operands:
    the same bits, and on NumPy scalars their own arithmetic (a tenth of the ufunc's
    time; its warnings say "scalar multiply"). Operands are NumPy values here (a
    Dual's primal, a tangent), so the result stays a NumPy value."""

    def kernel(*args, **params):
        if params or len(args) != ufunc.nin:
            return ufunc(*args, **params)
        out = function(*args)
        # 1j * np.float64(2): Python's complex takes NumPy's float64 (a float) itself,
        # and gives a Python complex; NumPy's ufunc gives its complex128.
        return ufunc(*args) if type(out) is complex else out

    kernel.__name__ = kernel.__qualname__ = ufunc.__name__
    kernel.__wrapped__ = ufunc
    return kernel


def broadcast_shape_rule(*args, **params):
    """Shape and dtype of an elementwise result, from the arguments' alone."""
    shapes = [getattr(a, "shape", ()) for a in args]
    dtypes = [getattr(a, "dtype", a) for a in args]
    return np.broadcast_shapes(*shapes), np.result_type(*dtypes)


def _transposes(*per_argument):
    """A transpose rule from one cotangent map per argument: ``(ct, *args) -> ct_i``."""

    def rule(ct, args, linear):
        return tuple(unbroadcast(f(ct, *args), args[i].shape) if linear[i] and f else None
                     for i, f in enumerate(per_argument))

    return rule


def nondifferentiable(ufunc: np.ufunc) -> Primitive:
    """Declare a ufunc whose result carries no derivative (a step or a predicate)."""
    prim = Primitive(ufunc.__name__, ufunc)
    register_function(ufunc, prim)
    NON_DIFFERENTIABLE.add(ufunc)
    return prim


def tie_weight(x, y):
    """1 where x > y, ½ where x == y, 0 elsewhere: ∂max(x, y)/∂x by our convention."""
    dtype = np.result_type(x.dtype if hasattr(x, "dtype") else x,
                           y.dtype if hasattr(y, "dtype") else y)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    return greater(x, y).astype(dtype) + 0.5 * equal(x, y).astype(dtype)


def safe_divide(x, y):
    """x / y with 0 where y == 0 (the midpoint convention at a cone's tip)."""
    zero = equal(y, 0)
    return where(zero, 0, divide(x, where(zero, 1, y)))


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------

add = elementwise(np.add, ONE, ONE, linear="all", operator=operator.add,
                  transpose=_transposes(lambda ct, x, y: ct, lambda ct, x, y: ct))
subtract = elementwise(np.subtract, ONE, MINUS_ONE, linear="all", operator=operator.sub,
                       transpose=_transposes(lambda ct, x, y: ct, lambda ct, x, y: -ct))
multiply = elementwise(np.multiply, lambda ans, x, y: y, lambda ans, x, y: x, linear="one",
                       operator=operator.mul,
                       transpose=_transposes(lambda ct, x, y: ct * y, lambda ct, x, y: x * ct))
divide = elementwise(np.divide, lambda ans, x, y: Over(y),
                     lambda ans, x, y: -(ans / y), linear=(0,), operator=operator.truediv,
                     transpose=_transposes(lambda ct, x, y: ct / y, None))
negative = elementwise(np.negative, MINUS_ONE, linear="all", operator=operator.neg,
                       transpose=_transposes(lambda ct, x: -ct))
positive = elementwise(np.positive, ONE, linear="all", transpose=_transposes(lambda ct, x: ct))
# conj is ℝ-linear, not ℂ-linear: its tangent is conj(t), its transpose conj(ct).
conjugate = Primitive("conjugate", np.conjugate,
                      jvp=lambda primals, tangents, ans: conjugate(tangents[0]),
                      linear="all", complex_ok=True, shape_rule=broadcast_shape_rule,
                      transpose=lambda ct, args, linear: (conjugate(ct),))
register_function(np.conjugate, conjugate)


def _scale_kernel(p, t):
    with np.errstate(invalid="ignore"):
        return np.where(t == 0, 0, p * t)


# scale(p, t) = p·t with 0·∞ = 0: how a partial that may be infinite multiplies a
# tangent (or, in reverse, a cotangent) that may be zero.
scale = Primitive("scale", _scale_kernel, partials=(lambda ans, p, t: t, lambda ans, p, t: p),
                  nonfinite_partials=True, linear=(1,), shape_rule=broadcast_shape_rule,
                  transpose=_transposes(None, lambda ct, p, t: scale(p, ct)))


def _weighted(weight, ct, safe: bool):
    if weight is ONE:
        return ct
    if weight is MINUS_ONE:
        return -ct
    if type(weight) is Over:
        return scale(weight.reciprocal(), ct) if safe else ct / weight.denominator
    return scale(weight, ct) if safe else ct * weight


def _combine_kernel(*terms, weights, safe):
    total = _weighted(weights[0], terms[0], safe)
    for weight, t in zip(weights[1:], terms[1:]):
        total = total + _weighted(weight, t, safe)
    return total


# combine(t₁, …, tₙ; w₁, …, wₙ) = Σ wᵢ·tᵢ: an elementwise rule's tangent recorded as one
# node of a reverse-mode tape; its transpose is unbroadcast(ct·wᵢ) for each tᵢ.
combine = Primitive(
    "combine", _combine_kernel, linear="all",
    transpose=lambda ct, terms, linear, weights, safe: tuple(
        unbroadcast(_weighted(w, ct, safe), t.shape) for w, t in zip(weights, terms)),
)
remainder = elementwise(np.remainder, ONE, lambda ans, x, y: negative(floor(divide(x, y))))
fmod = elementwise(np.fmod, ONE, lambda ans, x, y: negative(trunc(divide(x, y))))
square = elementwise(np.square, lambda ans, x: 2 * x)
reciprocal = elementwise(np.reciprocal, lambda ans, x: -(ans * ans))
absolute = elementwise(np.absolute, lambda ans, x: sign(x))
fabs = elementwise(np.fabs, lambda ans, x: sign(x))
# copysign(x, y) = |x|·s(y): ∂x = sign(x)·s(y), so 0 at x = 0 as for abs.
copysign = elementwise(np.copysign, lambda ans, x, y: sign(x) * copysign(1.0, y), None)
ldexp = elementwise(np.ldexp, lambda ans, x, i: ldexp(np.ones((), x.dtype), i), None)


def _power_base(pow_, x, y):
    # y·x^(y-1), with 0 for y == 0 (x⁰ is constant) instead of 0·0⁻¹; the
    # exponent is made 1 there so that 0^(0-1) is not even computed.
    constant = equal(y, 0)
    return where(constant, 0, y * pow_(x, where(constant, 1, y) - 1))


def _power_exponent(ans, x, y):
    # ans·log x, with 0 at x == 0 where x^y is constant (0) in y > 0.
    return ans * log(where(equal(x, 0), 1, x))


power = elementwise(np.power, lambda ans, x, y: _power_base(power, x, y), _power_exponent,
                    nonfinite=True)
float_power = elementwise(np.float_power, lambda ans, x, y: _power_base(float_power, x, y),
                          _power_exponent, nonfinite=True)

# ---------------------------------------------------------------------------
# Roots, exponentials and logarithms
# ---------------------------------------------------------------------------

sqrt = elementwise(np.sqrt, lambda ans, x: 0.5 / ans, nonfinite=True)
cbrt = elementwise(np.cbrt, lambda ans, x: 1.0 / (3.0 * (ans * ans)), nonfinite=True)
exp = elementwise(np.exp, lambda ans, x: ans)
exp2 = elementwise(np.exp2, lambda ans, x: ans * _LN2)
# exp(x), not ans + 1, which is 0 (and so is its derivative) from x ≈ -37 down.
expm1 = elementwise(np.expm1, lambda ans, x: exp(x))
log = elementwise(np.log, lambda ans, x: Over(x))
log2 = elementwise(np.log2, lambda ans, x: Over(x * _LN2))
log10 = elementwise(np.log10, lambda ans, x: Over(x * _LN10))
log1p = elementwise(np.log1p, lambda ans, x: Over(x + 1.0))


def _share(exp_, x, y):
    """The share of x in logaddexp, eˣ/(eˣ + eʸ) = 1/(1 + e^(y-x)), as a logistic
    function of x - y: exp(x - ans) would make its derivative 1 - share, which is 0
    from x - y ≈ 37 on. Never overflows (e ≤ 1). At x = y = ±∞ it is ½ (a tie, as for
    maximum); at one infinite argument the limit, 1 or 0."""
    tie = isinf(x) & equal(x, y)
    z = where(tie, 0.0, x) - where(tie, 0.0, y)
    ahead = greater_equal(z, 0.0)
    e = exp_(where(ahead, -z, z))
    return where(tie, 0.5, where(ahead, 1.0 / (1.0 + e), e / (1.0 + e)))


logaddexp = elementwise(np.logaddexp, lambda ans, x, y: _share(exp, x, y),
                        lambda ans, x, y: _share(exp, y, x))
logaddexp2 = elementwise(np.logaddexp2, lambda ans, x, y: _share(exp2, x, y),
                         lambda ans, x, y: _share(exp2, y, x))

# ---------------------------------------------------------------------------
# Trigonometric and hyperbolic
# ---------------------------------------------------------------------------

sin = elementwise(np.sin, lambda ans, x: cos(x))
cos = elementwise(np.cos, lambda ans, x: -sin(x))
tan = elementwise(np.tan, lambda ans, x: 1.0 + ans * ans)


def _one_minus_square(x):
    """1 - x², as (1 - x)(1 + x) near ±1, where 1 - x² cancels, but as 1 - x·x for
    |x| < ½, where the derivative of the product, (1 - x) - (1 + x), cancels instead."""
    return where(greater(0.5, absolute(primal_value(x))), 1.0 - x * x, (1.0 - x) * (1.0 + x))


arcsin = elementwise(np.arcsin, lambda ans, x: 1.0 / sqrt(_one_minus_square(x)),
                     nonfinite=True)
arccos = elementwise(np.arccos, lambda ans, x: -1.0 / sqrt(_one_minus_square(x)),
                     nonfinite=True)


def _scale(*values):
    """max |v| over the values (primal values: a constant), or 1 where that is 0 or
    not finite: x/s and y/s square without overflow or underflow."""
    m = absolute(primal_value(values[0]))
    for v in values[1:]:
        m = maximum(m, absolute(primal_value(v)))
    return where(greater(m, 0.0) & ~isinf(m), m, 1.0)


def _arctan_partial(ans, x):
    # 1/(1 + x²) = (1/s²)/((1/s)² + (x/s)²), s = max(|x|, 1): x² and the derivatives'
    # (1 + x²)² would overflow from |x| ≈ 1e77 on, where the values are still normal.
    s = _scale(x, 1.0)
    a, b = x / s, 1.0 / s
    return 1.0 / (a * a + b * b) / s / s


def _arctan2_partials(ans, y, x):
    # (x, -y)/(x² + y²), scaled by s = max(|x|, |y|) as for arctan.
    s = _scale(x, y)
    a, b = x / s, y / s
    q = 1.0 / (a * a + b * b) / s
    return a * q, -(b * q)


arctan = elementwise(np.arctan, _arctan_partial)
arctan2 = elementwise(np.arctan2, lambda ans, y, x: _arctan2_partials(ans, y, x)[0],
                      lambda ans, y, x: _arctan2_partials(ans, y, x)[1])


def _hypot_partial(ans, x, y):
    # x/ans, as sign(x)/√(1 + r²) with r = y/x where |x| ≥ |y|, else r·sign(y)/√(1 + r²)
    # with r = x/y: the derivative of x/ans itself, 1/ans - x²/ans³, cancels for |x| ≫ |y|.
    # 0 at x = y = 0 (the cone's tip); where ans = ∞ the limit: ±1 for an infinite x
    # (1/√2 if y is infinite too), 0 for a finite one.
    at_inf = isinf(ans)
    count = isinf(x).astype(ans.dtype) + isinf(y).astype(ans.dtype)
    limit = where(isinf(x), sign(x) / sqrt(where(at_inf, count, 1.0)), 0.0)
    tip = equal(ans, 0.0)
    plain = ~(at_inf | tip)
    xs, ys = where(plain, x, 1.0), where(plain, y, 1.0)
    x_ahead = greater_equal(absolute(primal_value(xs)), absolute(primal_value(ys)))
    r = where(x_ahead, ys, xs) / where(x_ahead, xs, ys)
    root = sqrt(1.0 + r * r)
    finite = where(x_ahead, sign(xs) / root, r * sign(ys) / root)
    return where(at_inf, limit, where(tip, 0.0, finite))


hypot = elementwise(np.hypot, _hypot_partial, lambda ans, x, y: _hypot_partial(ans, y, x))
sinh = elementwise(np.sinh, lambda ans, x: cosh(x))
cosh = elementwise(np.cosh, lambda ans, x: sinh(x))


def _sech_squared_kernel(x, tanh_x):
    # 4t/(1 + t)², t = e^(−2|x|): not 1 - tanh², which is 0 from |x| ≈ 19 on and loses
    # digits before, nor 1/cosh², whose cosh overflows from |x| ≈ 710 (within 3 ulp,
    # 0.4 on average; it underflows to 0 as 1/cosh² does, from |x| ≈ 354).
    t = np.exp(-2.0 * np.absolute(x))
    return 4.0 * t / np.square(1.0 + t)


#: sech²x, tanh's derivative over the reals, as one primitive of x (and tanh x, which
#: its derivative −2·tanh x·sech²x reads; sech² itself does not move with it): the
#: derivatives of tanh′ then cost a few NumPy calls, not the twenty of its formula's.
sech_squared = Primitive("sech_squared", _sech_squared_kernel,
                         partials=(lambda ans, x, tanh_x: -2.0 * tanh_x * ans, None),
                         shape_rule=broadcast_shape_rule)


def _sech_squared(x, tanh_x):
    """sech²x, given tanh x (tanh's derivative)."""
    if np.iscomplexobj(primal_value(x)):
        sech = 1.0 / cosh(x)
        return sech * sech
    return sech_squared(x, tanh_x)


tanh = elementwise(np.tanh, lambda ans, x: _sech_squared(x, ans))
arcsinh = elementwise(np.arcsinh, lambda ans, x: Over(sqrt(1.0 + x * x))
                      if np.iscomplexobj(primal_value(x)) else Over(hypot(x, 1.0)))
# 1/(√(z-1)·√(z+1)), over ℂ the derivative of NumPy's branch: 1/√(z²-1) (JAX's) has the
# wrong sign in the left half-plane, and over ℝ (x - 1)(x + 1) overflows from 1.3e154 on.
arccosh = elementwise(np.arccosh, lambda ans, x: 1.0 / (sqrt(x - 1.0) * sqrt(x + 1.0)),
                      nonfinite=True)
arctanh = elementwise(np.arctanh, lambda ans, x: Over(_one_minus_square(x)), nonfinite=True)
deg2rad = elementwise(np.deg2rad, lambda ans, x: math.pi / 180.0)
rad2deg = elementwise(np.rad2deg, lambda ans, x: 180.0 / math.pi)
register_function(np.radians, deg2rad)
register_function(np.degrees, rad2deg)

# ---------------------------------------------------------------------------
# Kinks: maximum, minimum, clip
# ---------------------------------------------------------------------------

maximum = elementwise(np.maximum, lambda ans, x, y: tie_weight(x, y),
                      lambda ans, x, y: tie_weight(y, x))
minimum = elementwise(np.minimum, lambda ans, x, y: tie_weight(y, x),
                      lambda ans, x, y: tie_weight(x, y))


def _unless_nan(weight, other):
    """``weight``, but 1 where ``other`` is NaN: fmax/fmin ignore a NaN argument,
    so the other one takes the whole derivative."""
    return where(isnan(other), 1.0, weight)


fmax = elementwise(np.fmax, lambda ans, x, y: _unless_nan(tie_weight(x, y), y),
                   lambda ans, x, y: _unless_nan(tie_weight(y, x), x))
fmin = elementwise(np.fmin, lambda ans, x, y: _unless_nan(tie_weight(y, x), y),
                   lambda ans, x, y: _unless_nan(tie_weight(x, y), x))


def _clip_weights(x, lo, hi):
    # clip = min(max(x, lo), hi): chain the two tie weights.
    w_lo = tie_weight(x, lo)
    w_hi = tie_weight(hi, maximum(x, lo))
    return w_lo, w_hi


def _clip_x(ans, x, lo, hi):
    w_lo, w_hi = _clip_weights(x, lo, hi)
    return w_lo * w_hi


def _clip_lo(ans, x, lo, hi):
    w_lo, w_hi = _clip_weights(x, lo, hi)
    return (1.0 - w_lo) * w_hi


def _clip_hi(ans, x, lo, hi):
    return 1.0 - _clip_weights(x, lo, hi)[1]


clip = elementwise(np._core.umath.clip, _clip_x, _clip_lo, _clip_hi)


@implements(np.clip)
def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    if out is not None or kwargs:
        raise TypeError("np.clip on Duals supports neither out= nor ufunc keywords")
    lo = min if a_min is None else a_min
    hi = max if a_max is None else a_max
    return clip(a, -np.inf if lo is None else lo, np.inf if hi is None else hi)


# ---------------------------------------------------------------------------
# where: a select, whose tangent is a select of the tangents. Selecting (rather
# than multiplying by a 0/1 mask) keeps an unselected inf or nan out.
# ---------------------------------------------------------------------------


def _where_jvp(primals, tangents, ans):
    cond, _, _ = primals
    _, tx, ty = tangents
    ndim = ans.ndim
    tx = 0 if tx is None else align_tangent(tx, ndim)
    ty = 0 if ty is None else align_tangent(ty, ndim)
    return fit_tangent(where(cond, tx, ty), ans.shape)


where = Primitive("where", np.where, jvp=_where_jvp, linear=(1, 2),
                  shape_rule=broadcast_shape_rule,
                  transpose=_transposes(None, lambda ct, c, x, y: where(c, ct, 0),
                                        lambda ct, c, x, y: where(c, 0, ct)))
def _convert_kernel(x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real  # the real part: what a cotangent of a real value keeps
    return x.astype(dtype)


convert = Primitive(
    "convert", _convert_kernel,
    jvp=lambda primals, tangents, ans, dtype: convert(tangents[0], dtype=dtype),
    linear="all", shape_rule=lambda x, dtype: (x.shape, np.dtype(dtype)),
    transpose=lambda ct, args, linear, dtype: (convert(ct, dtype=args[0].dtype),),
)

# ---------------------------------------------------------------------------
# Not differentiable: steps, predicates, integer and bit operations
# ---------------------------------------------------------------------------

floor = nondifferentiable(np.floor)
ceil = nondifferentiable(np.ceil)
trunc = nondifferentiable(np.trunc)
rint = nondifferentiable(np.rint)
sign = nondifferentiable(np.sign)
floor_divide = nondifferentiable(np.floor_divide)
greater = nondifferentiable(np.greater)
greater_equal = nondifferentiable(np.greater_equal)
less = nondifferentiable(np.less)
less_equal = nondifferentiable(np.less_equal)
equal = nondifferentiable(np.equal)
not_equal = nondifferentiable(np.not_equal)
isnan = nondifferentiable(np.isnan)
isinf = nondifferentiable(np.isinf)
for _ufunc in (np.signbit, np.heaviside, np.nextafter, np.spacing,
               np.isfinite, np.isnat, np.logical_and, np.logical_or, np.logical_xor,
               np.logical_not, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
               np.bitwise_count, np.invert, np.left_shift, np.right_shift, np.gcd,
               np.lcm, np._core.umath._ones_like):
    nondifferentiable(_ufunc)
del _ufunc

# The string ufuncs of numpy.strings never meet a Dual's float values.
for _ufunc in vars(np._core.umath).values():
    if (isinstance(_ufunc, np.ufunc) and _ufunc not in UFUNC_HANDLERS
            and all(set(sig) & set("OSUT") for sig in _ufunc.types)):
        nondifferentiable(_ufunc)
del _ufunc

# ---------------------------------------------------------------------------
# Ufuncs with two outputs: the differentiable output is written with the rows above.
# ---------------------------------------------------------------------------


def _modf(x):
    whole = trunc(x)
    return x - whole, whole


def _divmod(x, y):
    return floor_divide(x, y), remainder(x, y)


def _frexp(x):
    mantissa, exponent = np.frexp(primal_value(x))
    return x * ldexp(np.ones((), mantissa.dtype), -exponent), exponent


register_function(np.modf, _modf)
register_function(np.divmod, _divmod)
register_function(np.frexp, _frexp)

__all__ = [name for name, value in globals().items()
           if isinstance(value, Primitive) and not name.startswith("_")]

from . import reductions  # noqa: E402  (reductions build on this module: bound late)


def unbroadcast(ct, shape: tuple):
    return reductions.unbroadcast(ct, shape)
