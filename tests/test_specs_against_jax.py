"""Every spec row with a JAX counterpart (``Spec.jax``): dualad's Jacobians (forward
and reverse) and Hessians (hyper-dual and forward-over-reverse) equal JAX's, in
float64 and in float32 (at float32 precision)."""

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose

import dualad
from specs import SPECS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

ROWS = [spec for spec in SPECS if spec.jax is not None]
TOLERANCE = {np.float64: 1e-9, np.float32: 2e-3}


def draw(spec, shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        args = spec.draw(rng, shapes)
        if spec.avoid is None or not spec.avoid(*args):
            return tuple(a.astype(dtype) for a in args)
    pytest.fail(f"{spec.id}: no point away from kinks in 50 draws")


def float_leaves(out):
    return [leaf for leaf in optree.tree_leaves(out)
            if np.issubdtype(getattr(leaf, "dtype", None) or np.asarray(leaf).dtype,
                             np.floating)]


def total(*leaves):
    """A scalar of every floating output, weighted so that no entry cancels another."""
    return sum(np.sum(leaf * np.cos(np.arange(np.size(leaf)).reshape(np.shape(leaf))))
               for leaf in leaves)


def jax_total(*leaves):
    return sum(jnp.sum(leaf * jnp.cos(jnp.arange(jnp.size(leaf)).reshape(jnp.shape(leaf))))
               for leaf in leaves)


def jax_reference(transform, g, args):
    """``transform(g)`` at ``args``, compiled whole (one XLA compilation, where JAX's
    eager mode compiles each operation for its shapes); eagerly where ``g`` decides
    on values in Python."""
    try:
        return jax.jit(transform(g))(*args)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError):
        return transform(g)(*args)


def jax_hessian(g, argnums):
    """JAX's Hessian (forward over reverse); forward over forward where JAX's reverse
    mode refuses a loop of dynamic length (its complex loggamma)."""
    def hessian(*args):
        try:
            return jax.hessian(g, argnums=argnums)(*args)
        except ValueError as error:
            if "Reverse-mode differentiation does not work" not in str(error):
                raise
            return jax.jacfwd(jax.jacfwd(g, argnums=argnums), argnums=argnums)(*args)
    return hessian


def check(ours, theirs, dtype, spec):
    scale = max(1.0, max((float(np.max(np.abs(t))) for t in optree.tree_leaves(theirs)
                          if np.size(t)), default=1.0))
    for a, b in zip(optree.tree_leaves(ours), optree.tree_leaves(theirs)):
        assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                        rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * scale,
                        err_msg=spec.id)


# One shape set per row, and one JAX computation for both dtypes: JAX compiles every
# operation anew for each shape and dtype, which is nearly all of this file's time.
# The inputs are rounded to float32, so that JAX's float64 Jacobian at them is the
# reference for dualad's float64 Jacobian and, at float32 precision, its float32 one;
# the property tests cover the other shapes.
@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.id)
def test_jacobians_match_jax(spec):
    for shapes in spec.shapes[:1]:
        args = tuple(a.astype(np.float32).astype(np.float64)
                     for a in draw(spec, shapes, np.float64))
        every = tuple(range(len(args)))
        f = lambda *a: float_leaves(spec.fun(*a))  # noqa: E731
        g = lambda *a: float_leaves(spec.jax(*a))  # noqa: E731
        theirs = jax_reference(lambda g: jax.jacfwd(g, argnums=every), g,
                               [jnp.asarray(a) for a in args])
        for dtype in (np.float64, np.float32):
            typed = tuple(a.astype(dtype) for a in args)
            for transform in (dualad.jacfwd, dualad.jacrev):
                check(transform(f, argnums=every)(*typed), theirs, dtype, spec)


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.id)
def test_hessians_match_jax(spec):
    for shapes in spec.shapes[:1]:
        args = draw(spec, shapes, np.float64, seed=1)
        every = tuple(range(len(args)))
        f = lambda *a: total(*float_leaves(spec.fun(*a)))  # noqa: E731
        g = lambda *a: jax_total(*float_leaves(spec.jax(*a)))  # noqa: E731
        theirs = jax_reference(lambda g: jax_hessian(g, every), g,
                               [jnp.asarray(a) for a in args])
        for mode in ("hyperdual", "fwd-rev"):
            check(dualad.hessian(f, argnums=every, mode=mode)(*args), theirs, np.float64,
                  spec)
