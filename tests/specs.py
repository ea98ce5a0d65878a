"""The test spec table: one row per primitive (or per distinct code path of one).

A row names the NumPy callable it exercises, gives a function of arrays that
calls NumPy the way users do, the argument shapes to try (several sets, with
broadcasting ones for binary elementwise ops), the domain of each argument,
an optional ``avoid`` predicate that rejects inputs too close to a kink or a
tie for finite differences, and the tolerances. ``tests/test_rules.py`` turns
every row into property tests; ``tests/test_coverage.py`` checks every row's
name is a registered NumPy function.

Constants a function needs besides its differentiated arguments (indices,
masks, integer exponents) are built inside ``fun`` from the arguments' shapes,
so every argument of ``fun`` is a float array that gets a tangent.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Shape = tuple[int, ...]


class LazyModule:
    """A JAX module, imported when a row's ``jax=`` counterpart first runs."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name):
        return getattr(importlib.import_module(self._name), name)


jnp = LazyModule("jax.numpy")
# A domain is (lo, hi) for uniform draws, or a function (rng, shape) -> array.
Domain = tuple[float, float] | Callable[[np.random.Generator, Shape], np.ndarray]

# The distance from a kink or tie that ``avoid`` predicates keep: comfortably
# more than the 2·STEP·|tangent| ≤ 2e-4 the central differences of
# test_rules.py move an input (predicates on sums or ratios scale it up).
GAP = 1e-3


@dataclass(frozen=True)
class Spec:
    """One row of the table."""

    name: str  # the NumPy callable: "sin", "linalg.solve", or "getitem" for x[...]
    fun: Callable[..., Any]
    shapes: tuple[tuple[Shape, ...], ...]  # argument shape sets; all of one arity
    domain: Domain | tuple[Domain, ...] = (-2.0, 2.0)  # one for all, or per argument
    avoid: Callable[..., bool] | None = None  # True: too close to a kink, redraw
    rtol: float = 1e-6
    atol: float = 1e-6  # scaled by max(1, max |derivative|)
    variant: str = ""  # tells rows of one name apart
    # The same function written with jax.numpy / jax.scipy, for the JAX cross-check
    # (tests/test_specs_against_jax.py) in first and second order.
    jax: Callable[..., Any] | None = None
    # False where no JAX kernel computes the function under dualad_gpu (an output shape
    # that depends on the values, as jax.jit refuses it; SciPy's solvers, run on the
    # host): the coverage table and the GPU tests of JAX kernels skip it.
    gpu: bool = True
    # True for adaptive solvers (solve_ivp, odeint): their error control spans every
    # seed of a batch, so a batch, a chunk and single seeds agree to the row's
    # tolerance, not to rounding.
    adaptive: bool = False

    @property
    def id(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    @property
    def arity(self) -> int:
        return len(self.shapes[0])

    def domain_of(self, i: int) -> Domain:
        d = self.domain
        per_argument = isinstance(d, tuple) and len(d) > 0 and not isinstance(
            d[0], (int, float))
        return d[i] if per_argument else d

    def draw(self, rng: np.random.Generator, shapes: tuple[Shape, ...]) -> tuple:
        """Float64 arguments of the given shapes, each drawn from its domain."""
        args = []
        for i, shape in enumerate(shapes):
            d = self.domain_of(i)
            x = d(rng, shape) if callable(d) else rng.uniform(d[0], d[1], shape)
            args.append(np.asarray(x, dtype=np.float64))
        return tuple(args)


def target(name: str) -> Any:
    """The NumPy callable a spec row's name stands for."""
    if name == "getitem":
        return operator.getitem
    obj: Any = np
    if name.startswith("scipy."):
        import scipy.special
        obj, name = scipy, name.removeprefix("scipy.")
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------------------
# Domains and predicates
# ---------------------------------------------------------------------------


def nonzero(lo: float, hi: float) -> Domain:
    """|x| uniform in [lo, hi] with a random sign."""
    def draw(rng, shape):
        return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)
    return draw


def with_zeros(lo: float, hi: float, count: int = 1) -> Domain:
    """Uniform in [lo, hi] with ``count`` elements set to exactly 0."""
    def draw(rng, shape):
        x = rng.uniform(lo, hi, shape)
        if x.size:
            x.flat[rng.choice(x.size, min(count, x.size), replace=False)] = 0.0
        return x
    return draw


def matrices(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Well-conditioned square matrices; about half have a negative determinant."""
    n = shape[-1]
    a = rng.uniform(-1.0, 1.0, shape) + 2.0 * np.sqrt(n) * np.eye(n)
    flip = rng.choice([-1.0, 1.0], shape[:-2] + (1, 1))
    a[..., :1, :] *= flip
    return a


def near_integer(r, gap: float = GAP) -> bool:
    r = np.asarray(r)
    return bool(np.any(np.abs(r - np.round(r)) < gap))


def near_integer_ratio(x, y) -> bool:
    """x/y near a jump of floor(x/y): a step moves x/y by up to 2h(1 + |x/y|)/|y| ≈ 4e-3."""
    return near_integer(x / y, 10 * GAP)


def near_power_of_two(x) -> bool:
    """|x| near a jump of frexp: closer than the steps of test_rules.py and of
    check_grads, which scales its step by max(1, max |x|)."""
    x = np.abs(np.asarray(x))
    power = 2.0 ** np.round(np.log2(x))
    return bool(np.any(np.abs(x - power) < 5 * GAP * max(1.0, float(np.max(x, initial=0)))))


def near(a, b) -> bool:
    return bool(np.any(np.abs(np.asarray(a) - np.asarray(b)) < GAP))


def small(*xs) -> bool:
    return any(bool(np.any(np.abs(x) < GAP)) for x in xs)


def ties(x, axis=None, gap: float = GAP) -> bool:
    """Two elements (along ``axis``, or anywhere) closer than ``gap``."""
    x = np.asarray(x)
    if axis is None:
        x, axis = x.ravel(), 0
    s = np.sort(x, axis=axis)
    return bool(np.any(np.diff(s, axis=axis) < gap))


def sum_ties(x, sum_axis: int, axis=None) -> bool:
    """Ties among sums of |x| (matrix norms), which a step moves by up to n·2h each."""
    return ties(np.abs(x).sum(sum_axis), axis, gap=10 * GAP)


def close_eigenvalues(a, uplo: str = "L") -> bool:
    """Eigenvalues (of the triangle eigh reads) closer than 0.05: eigenvectors are
    ill-conditioned there, and the finite differences with them."""
    return ties(np.linalg.eigvalsh(a, UPLO=uplo), axis=-1, gap=0.05)


def singular_matrices(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Square matrices of rank n - 1 (det = 0, the adjugate nonzero)."""
    a = rng.uniform(-1.0, 1.0, shape)
    u, s, vh = np.linalg.svd(a)
    s[..., -1] = 0.0
    return (u * s[..., None, :]) @ vh


def signed_vectors(v):
    """Eigenvectors with the sign of each one's first entry taken out: locally constant,
    so central differences see the derivative of the vectors NumPy returned."""
    return v * np.sign(v[..., :1, :])


def close_singular_values(x) -> bool:
    """Singular values of x (over its first and last axes) closer than 0.05, or near 0."""
    s = np.linalg.svd(np.moveaxis(x, (0, 2), (-2, -1)), compute_uv=False)
    return ties(s, axis=-1, gap=0.05) or bool(np.any(s < 0.05))


def abs_ties(x, axis=None) -> bool:
    x = np.asarray(x)
    return small(x) or ties(np.abs(x), axis)


# ---------------------------------------------------------------------------
# Shape sets
# ---------------------------------------------------------------------------

UNARY = (((),), ((5,),), ((2, 3),))
BINARY = (((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 2)), ((3,), ()))
TERNARY = (((5,), (), ()), ((2, 3), (3,), (2, 1)), ((4,), (4,), (4,)))
MATRIX = (((3, 3),), ((2, 3, 3),))
ARRAY3 = (((2, 3, 4),),)
ARRAY2 = (((3, 4),),)


def _mask(shape: Shape) -> np.ndarray:
    return (np.arange(int(np.prod(shape, dtype=int))).reshape(shape) % 3) != 1


def _ints(shape: Shape, lo: int = -2, hi: int = 3) -> np.ndarray:
    return np.arange(int(np.prod(shape, dtype=int))).reshape(shape) % (hi - lo) + lo


# ---------------------------------------------------------------------------
# Elementwise ufuncs
# ---------------------------------------------------------------------------

POSITIVE = (0.1, 4.0)
UNIT = (-0.9, 0.9)

ELEMENTWISE = [
    # arithmetic
    Spec("add", np.add, BINARY),
    Spec("subtract", np.subtract, BINARY),
    Spec("multiply", np.multiply, BINARY),
    Spec("divide", np.divide, BINARY, ((-2.0, 2.0), nonzero(0.3, 2.0))),
    Spec("true_divide", lambda x, y: x / y, BINARY, ((-2.0, 2.0), nonzero(0.3, 2.0)),
         variant="operator"),
    Spec("floor_divide", np.floor_divide, BINARY, ((-4.0, 4.0), nonzero(0.5, 2.0)),
         avoid=near_integer_ratio),
    Spec("remainder", np.remainder, BINARY, ((-4.0, 4.0), nonzero(0.5, 2.0)),
         avoid=near_integer_ratio),
    Spec("remainder", lambda x, y: x % y, BINARY, ((-4.0, 4.0), nonzero(0.5, 2.0)),
         avoid=near_integer_ratio, variant="operator"),
    Spec("fmod", np.fmod, BINARY, ((-4.0, 4.0), nonzero(0.5, 2.0)),
         avoid=near_integer_ratio),
    Spec("power", np.power, BINARY, ((0.2, 3.0), (-2.0, 2.0))),
    Spec("power", lambda x: x ** 3, UNARY, variant="x**3"),
    Spec("power", lambda x: np.power(x, -2), UNARY, nonzero(0.3, 2.0), variant="x**-2"),
    Spec("power", lambda x: x ** 0.5, UNARY, POSITIVE, variant="x**0.5"),
    Spec("power", lambda y: np.power(2.5, y), UNARY, variant="2.5**y"),
    Spec("float_power", np.float_power, BINARY, ((0.2, 3.0), (-2.0, 2.0))),
    Spec("float_power", lambda x: np.float_power(x, 3), UNARY, variant="x**3"),
    Spec("negative", np.negative, UNARY),
    Spec("negative", lambda x: -x, UNARY, variant="operator"),
    Spec("positive", np.positive, UNARY),
    Spec("conjugate", np.conjugate, UNARY),
    Spec("absolute", np.absolute, UNARY, avoid=small),
    Spec("absolute", abs, UNARY, avoid=small, variant="builtin"),
    Spec("fabs", np.fabs, UNARY, avoid=small),
    Spec("square", np.square, UNARY),
    Spec("sqrt", np.sqrt, UNARY, POSITIVE),
    Spec("cbrt", np.cbrt, UNARY, nonzero(0.1, 3.0)),
    Spec("reciprocal", np.reciprocal, UNARY, nonzero(0.2, 2.0)),
    Spec("copysign", np.copysign, BINARY, avoid=small),
    Spec("ldexp", lambda x: np.ldexp(x, _ints(x.shape)), UNARY),
    # exponentials and logarithms
    Spec("exp", np.exp, UNARY, (-3.0, 3.0)),
    Spec("exp2", np.exp2, UNARY, (-3.0, 3.0)),
    Spec("expm1", np.expm1, UNARY, (-3.0, 3.0)),
    Spec("log", np.log, UNARY, POSITIVE),
    Spec("log2", np.log2, UNARY, POSITIVE),
    Spec("log10", np.log10, UNARY, POSITIVE),
    Spec("log1p", np.log1p, UNARY, (-0.9, 3.0)),
    Spec("logaddexp", np.logaddexp, BINARY, (-5.0, 5.0)),
    Spec("logaddexp2", np.logaddexp2, BINARY, (-5.0, 5.0)),
    # trigonometric and hyperbolic
    Spec("sin", np.sin, UNARY, (-4.0, 4.0)),
    Spec("cos", np.cos, UNARY, (-4.0, 4.0)),
    Spec("tan", np.tan, UNARY, (-1.3, 1.3)),
    Spec("arcsin", np.arcsin, UNARY, UNIT),
    Spec("arccos", np.arccos, UNARY, UNIT),
    Spec("arctan", np.arctan, UNARY, (-3.0, 3.0)),
    Spec("arctan2", np.arctan2, BINARY,
         avoid=lambda y, x: small(np.hypot(x, y)) or bool(np.any((x < 0) & (np.abs(y) < GAP)))),
    Spec("hypot", np.hypot, BINARY, avoid=lambda x, y: small(np.hypot(x, y))),
    Spec("sinh", np.sinh, UNARY, (-3.0, 3.0)),
    Spec("cosh", np.cosh, UNARY, (-3.0, 3.0)),
    Spec("tanh", np.tanh, UNARY, (-3.0, 3.0)),
    Spec("arcsinh", np.arcsinh, UNARY, (-3.0, 3.0)),
    Spec("arccosh", np.arccosh, UNARY, (1.1, 4.0)),
    Spec("arctanh", np.arctanh, UNARY, UNIT),
    Spec("deg2rad", np.deg2rad, UNARY, (-200.0, 200.0)),
    Spec("rad2deg", np.rad2deg, UNARY),
    Spec("degrees", np.degrees, UNARY),
    Spec("radians", np.radians, UNARY, (-200.0, 200.0)),
    # kinks
    Spec("maximum", np.maximum, BINARY, avoid=near),
    Spec("minimum", np.minimum, BINARY, avoid=near),
    Spec("fmax", np.fmax, BINARY, avoid=near),
    Spec("fmin", np.fmin, BINARY, avoid=near),
    Spec("clip", np.clip, TERNARY, ((-2.0, 2.0), (-1.5, -0.5), (0.5, 1.5)),
         avoid=lambda x, lo, hi: near(x, lo) or near(x, hi)),
    Spec("clip", lambda x: np.clip(x, -1.0, 1.0), UNARY, avoid=lambda x: near(np.abs(x), 1.0),
         variant="constant bounds"),
    Spec("clip", lambda x, hi: np.clip(x, None, hi), BINARY, avoid=near, variant="a_min=None"),
    Spec("clip", lambda x: x.clip(min=-1.0), UNARY, avoid=lambda x: near(x, -1.0),
         variant="method"),
    # two outputs
    Spec("modf", np.modf, UNARY, (-4.0, 4.0), avoid=lambda x: near_integer(x)),
    Spec("divmod", np.divmod, BINARY, ((-4.0, 4.0), nonzero(0.5, 2.0)),
         avoid=near_integer_ratio),
    Spec("frexp", np.frexp, UNARY, nonzero(0.1, 9.0), avoid=near_power_of_two),
]

# ---------------------------------------------------------------------------
# Products: matmul and the gufuncs, dot, einsum, ...
# ---------------------------------------------------------------------------

MATMUL_SHAPES = (
    ((3, 4), (4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
    ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
    ((3, 4), (2, 4, 2)),
)

PRODUCTS = [
    Spec("matmul", np.matmul, MATMUL_SHAPES),
    Spec("matmul", operator.matmul, MATMUL_SHAPES, variant="operator"),
    Spec("linalg.matmul", np.linalg.matmul, (((3, 4), (4, 2)),)),
    Spec("vecdot", np.vecdot, (((4,), (4,)), ((2, 3), (3,)), ((2, 1, 3), (4, 3)))),
    Spec("linalg.vecdot", lambda a, b: np.linalg.vecdot(a, b, axis=0), (((3, 2), (3, 1)),)),
    Spec("matvec", np.matvec, (((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)))),
    Spec("vecmat", np.vecmat, (((3,), (3, 4)), ((2, 3), (3, 4)), ((3,), (2, 3, 4)))),
    Spec("dot", np.dot, (((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((3,), (3, 2)),
                         ((), (3,)), ((2, 3, 4), (4, 2)), ((2, 3, 4), (5, 4, 2)))),
    Spec("dot", lambda a: a.dot(a.T), (((2, 3),),), variant="method"),
    Spec("vdot", np.vdot, (((3,), (3,)), ((2, 3), (3, 2)))),
    Spec("inner", np.inner, (((3,), (3,)), ((2, 3), (4, 3)), ((), (3,)), ((2, 3, 4), (4,)))),
    Spec("outer", np.outer, (((3,), (4,)), ((2, 2), (3,)))),
    Spec("multiply", lambda a, b: np.multiply.outer(a, b), (((3,), (2, 2)), ((), (3,))),
         variant="outer"),
    Spec("subtract", lambda b: np.subtract.outer(np.arange(3.0), b), (((2,),),),
         variant="outer, constant first"),
    Spec("tensordot", np.tensordot, (((2, 3, 4), (3, 4, 2)),), variant="axes=2"),
    Spec("tensordot", lambda a, b: np.tensordot(a, b, axes=([1, 0], [2, 0])),
         (((3, 2, 4), (3, 5, 2)),), variant="axes pairs"),
    Spec("tensordot", lambda a, b: np.tensordot(a, b, axes=0), (((2, 3), (3,)),),
         variant="axes=0"),
    Spec("tensordot", lambda a, b: np.tensordot(a, b, axes=(-1, 0)), (((2, 3), (3, 4)),),
         variant="axes ints"),
    Spec("einsum", lambda a, b: np.einsum("ij,jk->ik", a, b), (((2, 3), (3, 4)),),
         variant="ij,jk->ik"),
    Spec("einsum", lambda a, b: np.einsum("ij,jk", a, b), (((2, 3), (3, 4)),),
         variant="implicit ij,jk"),
    Spec("einsum", lambda a: np.einsum("ii", a), (((3, 3),),), variant="trace ii"),
    Spec("einsum", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
         (((2, 3), (3, 4)),), variant="sublists",
         jax=lambda a, b: jnp.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    Spec("einsum", lambda a, b: np.einsum(a, [Ellipsis, 0], b, [0]),
         (((2, 3), (3,)), ((3,), (3,))), variant="sublists ...",
         jax=lambda a, b: jnp.einsum(a, [Ellipsis, 0], b, [0])),
    Spec("einsum", lambda a: np.einsum("ii->i", a), (((3, 3),),), variant="diag ii->i"),
    Spec("einsum", lambda a: np.einsum("ijk->kj", a), ARRAY3, variant="ijk->kj"),
    Spec("einsum", lambda a: np.einsum("ba", a), ARRAY2, variant="implicit transpose"),
    Spec("einsum", lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
         (((2, 2, 3), (2, 3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 2))),
         variant="...ij,...jk->...ik"),
    Spec("einsum", lambda a, b: np.einsum("...i,...i", a, b), (((2, 3), (2, 3)),),
         variant="implicit ..."),
    Spec("einsum", lambda a, b, c: np.einsum("i,ij,j->", a, b, c),
         (((3,), (3, 4), (4,)),), variant="i,ij,j->"),
    Spec("einsum", lambda a, b: np.einsum("i,j", a, b), (((3,), (4,)),), variant="outer i,j"),
    Spec("einsum", lambda a: np.einsum("ij->", a), ARRAY2, variant="sum ij->"),
    # '...' of different lengths in the operands, empty in one of them
    Spec("einsum", lambda a, b: np.einsum("j...k,lj...->lk...", a, b),
         (((3, 2, 4), (5, 3)), ((3, 4), (5, 3, 2)), ((3, 1, 4), (5, 3, 2))),
         variant="j...k,lj...->lk..."),
    Spec("einsum", lambda a, b: np.einsum("jk...,lj...->lk...", a, b),
         (((3, 4, 2), (5, 3)), ((3, 4, 1), (5, 3, 2))), variant="jk...,lj...->lk..."),
    Spec("einsum", lambda a, b: np.einsum("jk,lj...->lk...", a, b), (((3, 4), (5, 3, 2)),),
         variant="jk,lj...->lk..."),
]

# ---------------------------------------------------------------------------
# Reductions and scans
# ---------------------------------------------------------------------------

REDUCE = (((5,),), ((3, 4),), ((2, 3, 4),))


def _axes_variants(f):
    """f over all elements, the first axis, and the last axis with keepdims."""
    return lambda x: (f(x), f(x, axis=0), f(x, axis=-1, keepdims=True))


REDUCTIONS = [
    Spec("sum", _axes_variants(np.sum), REDUCE),
    Spec("sum", lambda x: np.sum(x, axis=(0, 2)), ARRAY3, variant="axis=(0, 2)"),
    Spec("sum", lambda x: x.sum(1), ARRAY2, variant="method"),
    Spec("add", lambda x: (np.add.reduce(x), np.add.reduce(x, axis=None),
                           np.add.accumulate(x, axis=1)), REDUCE[1:], variant="reduce, accumulate"),
    Spec("multiply", lambda x: (np.multiply.reduce(x, axis=-1), np.multiply.accumulate(x, axis=0)),
         REDUCE[1:], (-1.5, 1.5), variant="reduce, accumulate"),
    Spec("prod", _axes_variants(np.prod), REDUCE, (-1.5, 1.5)),
    Spec("prod", _axes_variants(np.prod), REDUCE, with_zeros(-1.5, 1.5), variant="one zero"),
    Spec("prod", lambda x: (np.prod(x), np.prod(x, axis=1)), ARRAY2, with_zeros(-1.5, 1.5, 2),
         variant="two zeros"),
    Spec("prod", lambda x: np.prod(x, axis=(0, 2)), ARRAY3, (-1.5, 1.5), variant="axis=(0, 2)"),
    Spec("mean", _axes_variants(np.mean), REDUCE),
    Spec("sum", lambda x: (np.sum(x, where=_mask(x.shape), axis=1), np.sum(x, initial=2.0),
                           np.sum(x, where=_mask(x.shape[1:]), axis=0, keepdims=True)),
         ARRAY2, variant="where, initial"),
    Spec("prod", lambda x: (np.prod(x, where=_mask(x.shape), axis=0),
                            np.prod(x, initial=-3.0, axis=1)),
         ARRAY2, (-1.5, 1.5), variant="where, initial"),
    Spec("mean", lambda x: (np.mean(x, where=_mask(x.shape), axis=1),
                            np.mean(x, where=_mask(x.shape[1:]), keepdims=True)),
         ARRAY2, variant="where"),
    Spec("max", lambda x: (np.max(x, initial=0.5, axis=1),
                           np.max(x, where=_mask(x.shape), initial=-9.0, axis=0)),
         ARRAY2, avoid=lambda x: ties(x) or bool(np.any(np.abs(x - 0.5) < 1e-3)),
         variant="where, initial"),
    Spec("min", lambda x: np.min(x, where=_mask(x.shape), initial=0.5),
         ARRAY2, avoid=lambda x: ties(x) or bool(np.any(np.abs(x - 0.5) < 1e-3)),
         variant="where, initial"),
    Spec("var", _axes_variants(np.var), REDUCE),
    Spec("var", lambda x: np.var(x, axis=1, ddof=1), ARRAY2, variant="ddof=1"),
    # std of two elements is |a - b|/2: keep away from its kink.
    Spec("std", _axes_variants(np.std), REDUCE, avoid=lambda x: small(np.std(x, axis=0))),
    Spec("std", lambda x: np.std(x, axis=0, ddof=1), ARRAY2, variant="ddof=1"),
    # over one element, var and std are constant 0: derivative 0 (not 0·∞)
    Spec("var", lambda x: (np.var(x, axis=1), np.var(x, axis=(1, 2), keepdims=True)),
         (((3, 1, 1),),), variant="axis of length 1"),
    Spec("std", lambda x: (np.std(x, axis=1), np.std(x, axis=-1, keepdims=True)),
         (((3, 1, 1),),), variant="axis of length 1"),
    Spec("std", np.std, (((),), ((1,),)), variant="one element"),
    Spec("max", _axes_variants(np.max), REDUCE, avoid=ties),
    Spec("min", _axes_variants(np.min), REDUCE, avoid=ties),
    Spec("amax", lambda x: np.amax(x, axis=(0, 2)), ARRAY3, avoid=ties),
    Spec("amin", lambda x: np.amin(x, axis=1), ARRAY2, avoid=ties),
    Spec("maximum", lambda x: np.maximum.reduce(x, axis=1), ARRAY2, avoid=ties,
         variant="reduce"),
    Spec("fmin", lambda x: np.fmin.reduce(x), ARRAY2, avoid=ties, variant="reduce"),
    Spec("cumsum", lambda x: (np.cumsum(x), np.cumsum(x, axis=0), np.cumsum(x, axis=-1)),
         REDUCE),
    Spec("cumprod", lambda x: (np.cumprod(x), np.cumprod(x, axis=0), np.cumprod(x, axis=-1)),
         REDUCE, (-1.5, 1.5)),
    Spec("cumprod", lambda x: (np.cumprod(x), np.cumprod(x, axis=-1)), REDUCE,
         with_zeros(-1.5, 1.5, 2), variant="zeros"),
    Spec("trace", np.trace, (((3, 3),), ((3, 4),), ((3, 3, 2),))),
    Spec("trace", lambda a: np.trace(a, offset=1, axis1=1, axis2=2), ARRAY3, variant="offset"),
]

# ---------------------------------------------------------------------------
# Shape, joining, indexing
# ---------------------------------------------------------------------------


def _advanced_index(x):
    return (x[np.array([2, 0, 2])], x[:, [1, 3]], x[[0, 1], [3, 2]])


SHAPE = [
    Spec("reshape", lambda x: (np.reshape(x, (4, -1)), x.reshape(2, 2, 3), x.reshape(-1)),
         ARRAY2),
    Spec("ravel", np.ravel, ARRAY3),
    Spec("transpose", lambda x: (np.transpose(x), np.transpose(x, (1, 0, 2)), x.T,
                                 x.transpose(-1, 0, 1)), ARRAY3),
    Spec("permute_dims", lambda x: np.permute_dims(x, (2, 0, 1)), ARRAY3),
    Spec("swapaxes", lambda x: np.swapaxes(x, 0, -1), ARRAY3),
    Spec("moveaxis", lambda x: (np.moveaxis(x, 0, -1), np.moveaxis(x, [0, 1], [2, 0])), ARRAY3),
    Spec("squeeze", lambda x: (np.squeeze(x), np.squeeze(x, axis=2)), (((3, 1, 1, 2),),)),
    Spec("expand_dims", lambda x: (np.expand_dims(x, 0), np.expand_dims(x, (0, -1))), ARRAY2),
    Spec("atleast_1d", np.atleast_1d, (((),), ((3,),), ((2, 3),))),
    Spec("atleast_2d", np.atleast_2d, (((),), ((3,),), ((2, 3),))),
    Spec("atleast_3d", np.atleast_3d, (((),), ((3,),), ((2, 3),))),
    Spec("broadcast_to", lambda x: np.broadcast_to(x, (2, 3, 4)), (((4,),), ((3, 1),), ((),))),
    Spec("concatenate", lambda a, b: (np.concatenate([a, b]), np.concatenate([a, b], axis=1),
                                      np.concatenate((a, b), axis=None)),
         (((2, 3), (2, 3)), ((1, 3), (1, 3)))),
    Spec("concatenate", lambda a, b, c: np.concatenate([a, b, c], axis=-1),
         (((2, 1), (2, 3), (2, 2)),), variant="three"),
    Spec("stack", lambda a, b: (np.stack([a, b]), np.stack([a, b], axis=-1)),
         (((3,), (3,)), ((2, 3), (2, 3)), ((), ()))),
    Spec("hstack", lambda a, b: np.hstack([a, b]), (((3,), (2,)), ((2, 3), (2, 1)), ((), ()))),
    Spec("vstack", lambda a, b: np.vstack([a, b]), (((3,), (3,)), ((2, 3), (1, 3)))),
    Spec("split", lambda x: (np.split(x, 2), np.split(x, [1, 3], axis=1)), (((4, 4),),)),
    Spec("array_split", lambda x: np.array_split(x, 3, axis=-1), (((4, 4),),)),
    Spec("where", lambda x, y: np.where(_mask(np.broadcast_shapes(x.shape, y.shape)), x, y),
         BINARY),
    Spec("where", lambda x: np.where(_mask(x.shape), x, 0.5), UNARY, variant="constant"),
    Spec("take", lambda x: (np.take(x, [0, 3, 3]), np.take(x, [2, 0, 2], axis=1),
                            np.take(x, np.array([[1, 0], [0, 0]]), axis=0)), ARRAY2),
    Spec("tile", lambda x: (np.tile(x, 2), np.tile(x, (2, 1, 2))), (((3,),), ((2, 3),))),
    Spec("repeat", lambda x: (np.repeat(x, 2), np.repeat(x, [1, 0, 3], axis=-1)),
         (((3,),), ((2, 3),))),
    Spec("flip", lambda x: (np.flip(x), np.flip(x, 1), np.flip(x, (0, 2))), ARRAY3),
    Spec("fliplr", np.fliplr, ARRAY2),
    Spec("flipud", np.flipud, ARRAY2),
    Spec("roll", lambda x: (np.roll(x, 2), np.roll(x, -1, axis=1), np.roll(x, (1, 2), (0, 2))),
         ARRAY3),
    Spec("pad", lambda x: (np.pad(x, 1), np.pad(x, ((1, 0), (0, 2)), constant_values=(2.0, 3.0)),
                           np.pad(x, 2, mode="edge"), np.pad(x, (1, 2), mode="reflect"),
                           np.pad(x, 1, mode="symmetric"), np.pad(x, 3, mode="wrap")),
         (((3, 4),),)),
    Spec("sort", lambda x: (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None)),
         (((5,),), ((3, 4),)), avoid=ties),
    Spec("take_along_axis",
         lambda x: (np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
                    np.take_along_axis(x, _ints((2, x.shape[1]), 0, 3), axis=0),
                    np.take_along_axis(x, np.array([5, 0, -1]), axis=None)),
         (((3, 4),),), avoid=lambda x: ties(x, 1)),
    Spec("diagonal", lambda x: (np.diagonal(x), np.diagonal(x, 1), np.diagonal(x, -1)),
         (((3, 3),), ((3, 4),), ((4, 2),))),
    Spec("diagonal", lambda x: (np.diagonal(x, 0, 1, 2), np.diagonal(x, -1, 2, 0)), ARRAY3,
         variant="axes"),
    Spec("diag", lambda v: (np.diag(v), np.diag(v, 1), np.diag(v, -2)),
         (((3,),), ((3, 3),), ((3, 4),))),
    Spec("getitem", lambda x: (x[1], x[-1, 1:3], x[::2, ::-1], x[None, 1, ..., None]), ARRAY3,
         variant="basic"),
    Spec("getitem", _advanced_index, (((3, 4),),), variant="integer arrays"),
    Spec("getitem", lambda x: (x[_mask(x.shape)], x[_mask(x.shape[:1])],
                               x[:, _mask(x.shape[1:2])]), (((4, 3),),), variant="boolean mask"),
    Spec("getitem", lambda x: (x[[0, 1], :, [2, 0]], x[..., [1, 0]], x[1, :, [0, 3]],
                               x[None, [1, 0], ..., 2]), ARRAY3,
         variant="advanced separated by a slice"),
]

# ---------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------

LINALG = [
    Spec("linalg.solve", np.linalg.solve,
         (((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 3, 3), (3,)),
          ((2, 3, 3), (3, 2)),
          ((2, 3, 3), (2, 1, 3, 1))),
         (matrices, (-2.0, 2.0)), rtol=1e-5),
    Spec("linalg.inv", np.linalg.inv, MATRIX, matrices, rtol=1e-5),
    Spec("linalg.det", np.linalg.det, MATRIX, matrices, rtol=1e-5),
    Spec("linalg.det", np.linalg.det, MATRIX, singular_matrices, rtol=1e-5, variant="singular"),
    Spec("linalg.slogdet", lambda a: np.linalg.slogdet(a)[1], MATRIX, matrices, rtol=1e-5),
    Spec("linalg.slogdet", lambda a: np.linalg.slogdet(a).logabsdet, MATRIX, matrices,
         rtol=1e-5, variant="named"),
    Spec("linalg.norm", lambda x: (np.linalg.norm(x), np.linalg.norm(x, 1),
                                   np.linalg.norm(x, np.inf), np.linalg.norm(x, 3),
                                   np.linalg.norm(x, -np.inf), np.linalg.norm(x, -1),
                                   np.linalg.norm(x, -2), np.linalg.norm(x, 0.5),
                                   np.linalg.norm(x, 0)),
         (((5,),),), nonzero(0.1, 2.0), avoid=abs_ties, variant="vector"),
    Spec("linalg.norm", lambda x: (np.linalg.norm(x), np.linalg.norm(x, "fro"),
                                   np.linalg.norm(x, 1), np.linalg.norm(x, np.inf),
                                   np.linalg.norm(x, -1)),
         (((3, 4),),), nonzero(0.1, 2.0),
         avoid=lambda x: sum_ties(x, 0) or sum_ties(x, 1), variant="matrix"),
    Spec("linalg.norm", lambda x: (np.linalg.norm(x, axis=1), np.linalg.norm(x, 2, axis=0,
                                                                             keepdims=True),
                                   np.linalg.norm(x, axis=(1, 2)),
                                   np.linalg.norm(x, np.inf, axis=(0, 2), keepdims=True),
                                   np.linalg.norm(x, keepdims=True)),
         ARRAY3, nonzero(0.1, 2.0),
         avoid=lambda x: sum_ties(x, 2, axis=0),
         variant="axis, keepdims"),
    Spec("linalg.norm", lambda x: (np.linalg.norm(x, 2), np.linalg.norm(x, -2),
                                   np.linalg.norm(x, "nuc")),
         (((4, 3),), ((2, 4),)), (-2.0, 2.0),
         avoid=lambda x: close_singular_values(x[:, None, :]), variant="spectral"),
    Spec("linalg.norm", lambda x: (np.linalg.norm(x, 2, axis=(2, 0), keepdims=True),
                                   np.linalg.norm(x, "nuc", axis=(0, 2))),
         (((3, 4, 3),),), (-2.0, 2.0), avoid=close_singular_values,
         variant="spectral, axis"),
    Spec("linalg.eigvalsh", np.linalg.eigvalsh, MATRIX, (-2.0, 2.0),
         avoid=lambda a: close_eigenvalues(a)),
    Spec("linalg.eigh", lambda a: (np.linalg.eigh(a).eigenvalues,
                                   np.linalg.eigh(a, UPLO="U").eigenvectors ** 2),
         MATRIX, (-2.0, 2.0), avoid=lambda a: close_eigenvalues(a, "U")),
    Spec("linalg.eigh", lambda a: (signed_vectors(np.linalg.eigh(a, "U").eigenvectors),
                                   signed_vectors(np.linalg.eigh(a).eigenvectors)),
         MATRIX, (-2.0, 2.0), variant="signed vectors",
         avoid=lambda a: close_eigenvalues(a) or close_eigenvalues(a, "U") or small(
             np.linalg.eigh(a)[1][..., 0, :], np.linalg.eigh(a, "U")[1][..., 0, :])),
]

# ---------------------------------------------------------------------------
# Special functions: np.sinc, scipy.special (when scipy imports), softmax family.
# polygamma, logsumexp, softmax and log_softmax convert arguments with np.asarray in
# scipy, so their rows call dualad's equivalents (registered under scipy's names).
# ---------------------------------------------------------------------------

SPECIAL = [
    Spec("sinc", np.sinc, UNARY, (-3.0, 3.0)),
    Spec("sinc", np.sinc, UNARY, (-0.2, 0.2), variant="near 0"),
]

try:
    import scipy.special as sc
except ImportError:  # scipy is optional
    sc = None

if sc is not None:
    from dualad import ops

    _SOFT = (((5,),), ((3, 4),), ((2, 3, 4),))
    _jsp = LazyModule("jax.scipy.special")
    SPECIAL += [
        Spec("scipy.special.erf", sc.erf, UNARY),
        Spec("scipy.special.erfc", sc.erfc, UNARY),
        Spec("scipy.special.erfcx", sc.erfcx, UNARY),
        Spec("scipy.special.erfinv", sc.erfinv, UNARY, UNIT),
        Spec("scipy.special.ndtr", sc.ndtr, UNARY, (-3.0, 3.0)),
        Spec("scipy.special.log_ndtr", sc.log_ndtr, UNARY, (-6.0, 3.0)),
        Spec("scipy.special.ndtri", sc.ndtri, UNARY, (0.05, 0.95)),
        Spec("scipy.special.expit", sc.expit, UNARY, (-6.0, 6.0)),
        Spec("scipy.special.logit", sc.logit, UNARY, (0.05, 0.95)),
        Spec("scipy.special.log_expit", sc.log_expit, UNARY, (-6.0, 6.0)),
        Spec("scipy.special.xlogy", sc.xlogy, BINARY, (0.1, 4.0)),
        Spec("scipy.special.xlog1py", sc.xlog1py, BINARY, ((-2.0, 2.0), (-0.5, 3.0))),
        Spec("scipy.special.gammaln", sc.gammaln, UNARY, (0.5, 4.0)),
        # between the poles (its ψ by reflection): JAX's gammaln is log|Γ| too
        Spec("scipy.special.gammaln", sc.gammaln, UNARY, (-2.95, -2.05), variant="x < 0",
             jax=lambda x: _jsp.gammaln(x)),
        Spec("scipy.special.digamma", sc.digamma, UNARY, (0.5, 4.0)),
        Spec("scipy.special.polygamma", lambda x: (ops.polygamma(1, x), ops.polygamma(2, x)),
             UNARY, (0.5, 4.0)),
        Spec("scipy.special.gamma", sc.gamma, UNARY, (0.5, 4.0)),
        Spec("scipy.special.gamma", sc.gamma, UNARY, (-2.95, -2.05), variant="x < 0",
             jax=lambda x: _jsp.gammasgn(x) * jnp.exp(_jsp.gammaln(x))),
        Spec("scipy.special.beta", sc.beta, BINARY, (0.5, 4.0)),
        Spec("scipy.special.betaln", sc.betaln, BINARY, (0.5, 4.0)),
        Spec("scipy.special.i0", sc.i0, UNARY, (-3.0, 3.0)),
        Spec("scipy.special.i1", sc.i1, UNARY, (-3.0, 3.0)),
        Spec("scipy.special.i1", sc.i1, UNARY, with_zeros(-3.0, 3.0), variant="at 0"),
        # exp(-|x|) makes i0e and i1e kinked at 0.
        Spec("scipy.special.i0e", sc.i0e, UNARY, (-3.0, 3.0), avoid=small),
        Spec("scipy.special.i1e", sc.i1e, UNARY, (-3.0, 3.0), avoid=small),
        Spec("scipy.special.j0", sc.j0, UNARY, (-5.0, 5.0)),
        Spec("scipy.special.j1", sc.j1, UNARY, (-5.0, 5.0)),
        Spec("scipy.special.j1", sc.j1, UNARY, with_zeros(-5.0, 5.0), variant="at 0"),
        Spec("scipy.special.y0", sc.y0, UNARY, (0.5, 5.0)),
        Spec("scipy.special.y1", sc.y1, UNARY, (0.5, 5.0)),
        Spec("scipy.special.logsumexp",
             lambda x: (ops.logsumexp(x), ops.logsumexp(x, axis=0),
                        ops.logsumexp(x, axis=-1, keepdims=True)), _SOFT, (-5.0, 5.0)),
        Spec("scipy.special.softmax", lambda x: (ops.softmax(x), ops.softmax(x, axis=-1)),
             _SOFT, (-5.0, 5.0)),
        Spec("scipy.special.log_softmax",
             lambda x: (ops.log_softmax(x), ops.log_softmax(x, axis=0)), _SOFT, (-5.0, 5.0)),
    ]

SPECS: list[Spec] = ELEMENTWISE + PRODUCTS + REDUCTIONS + SHAPE + LINALG + SPECIAL

# Families with rows of their own module (each imports Spec and the helpers above).
from specs_arrays import ROWS as ARRAYS  # noqa: E402
from specs_decompositions import ROWS as DECOMPOSITIONS  # noqa: E402
from specs_scipy import ROWS as SCIPY  # noqa: E402
from specs_statistics import ROWS as STATISTICS  # noqa: E402
from specs_polynomials import ROWS as POLYNOMIALS  # noqa: E402
from specs_scipy_linalg import ROWS as SCIPY_LINALG  # noqa: E402
from specs_scipy_stats import ROWS as SCIPY_STATS  # noqa: E402
from specs_special import ROWS as SPECIAL_MORE  # noqa: E402
from specs_special_extra import ROWS as SPECIAL_EXTRA  # noqa: E402
from specs_complex import ROWS as COMPLEX  # noqa: E402
from specs_scipy_optimize import ROWS as SCIPY_OPTIMIZE  # noqa: E402

SPECS += ARRAYS + STATISTICS + DECOMPOSITIONS + SCIPY
SPECS += POLYNOMIALS + SCIPY_LINALG + SPECIAL_MORE + SCIPY_STATS + COMPLEX + SCIPY_OPTIMIZE
SPECS += SPECIAL_EXTRA


#: Rows whose third derivative has no rule (gammainc's in ``a``): Taylor mode checks
#: them to order 2, and from order 3 on a TypeError says why.
TWICE_IN_A = ("scipy.special.gammainc", "scipy.special.gammaincc", "scipy.stats.chi2",
              "scipy.stats.gamma", "scipy.stats.gennorm")


def jet_order(spec: Spec) -> int:
    """The order to which tests/test_taylor.py checks a row through ``dualad.jet``
    against nested derivatives (the coverage table's *jet* column: 3 and more)."""
    if spec.adaptive or spec.name.startswith(("scipy.optimize", "scipy.integrate")):
        return 3  # (the nested reference solves 2^order times)
    if "gammainc" in spec.name or (spec.name.startswith(TWICE_IN_A) and "cdf" in spec.id):
        return 2
    return 4
