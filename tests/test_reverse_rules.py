"""Reverse mode of every primitive, driven by the rows of ``tests/specs.py``.

For each row, hypothesis draws inputs, a tangent v and a cotangent u, and
checks the adjoint identity ⟨u, J v⟩ = ⟨Jᵀu, v⟩ between ``jvp`` and ``vjp``
(so every transpose rule agrees with the forward rules), and that ``jacrev``
equals ``jacfwd``.
"""

from __future__ import annotations

import numpy as np
import optree
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import dualad
from conftest import PER_ROW_EXAMPLES
from specs import SPECS

CASES = [pytest.param(spec, shapes, id=f"{spec.id}-{i}")
         for spec in SPECS for i, shapes in enumerate(spec.shapes)]


def _float_leaves(tree) -> list:
    return [np.asarray(leaf) for leaf in optree.tree_leaves(tree)
            if np.asarray(leaf).dtype.kind == "f"]


def _floats_only(fun):
    """``fun`` with its integer and boolean outputs left out: ``jacrev`` refuses them,
    as JAX's does."""
    def floats(*args):
        return tuple(leaf for leaf in optree.tree_leaves(fun(*args))
                     if np.asarray(dualad.primal_value(leaf)).dtype.kind in "fc")
    return floats


def _draw(spec, shapes, seed):
    rng = np.random.default_rng(seed)
    args = spec.draw(rng, shapes)
    if spec.avoid is not None:
        assume(not spec.avoid(*args))
    return rng, args


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_adjoint_identity(spec, shapes, seed):
    rng, args = _draw(spec, shapes, seed)
    vs = tuple(rng.normal(size=a.shape) for a in args)
    out, jv = dualad.jvp(spec.fun, args, vs)
    out2, pullback = dualad.vjp(spec.fun, *args)
    us = optree.tree_map(lambda o: rng.normal(size=np.shape(o)), out)
    jtu = pullback(us)
    lhs = sum(float(np.sum(u * t)) for u, t in zip(_float_leaves(us), _float_leaves(jv)))
    rhs = sum(float(np.sum(c * v)) for c, v in zip(jtu, vs))
    scale = sum(float(np.sum(np.abs(u * t))) for u, t in zip(_float_leaves(us),
                                                            _float_leaves(jv)))
    assert abs(lhs - rhs) <= (spec.rtol if spec.adaptive else 1e-10) * max(1.0, scale)
    for a, b in zip(_float_leaves(out), _float_leaves(out2)):
        assert_allclose(a, b)


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_jacrev_equals_jacfwd(spec, shapes, seed):
    _, args = _draw(spec, shapes, seed)
    every = tuple(range(len(args)))
    fun = _floats_only(spec.fun)
    forward = _float_leaves(dualad.jacfwd(fun, argnums=every)(*args))
    reverse = _float_leaves(dualad.jacrev(fun, argnums=every)(*args))
    assert len(forward) == len(reverse)
    tol = spec.rtol if spec.adaptive else 1e-11  # (adjoint and sensitivity solves)
    for f, r in zip(forward, reverse):
        assert_allclose(r, f, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(f),
                                                                          initial=0))))


@pytest.mark.parametrize("spec, shapes", CASES)
def test_linearize_equals_jvp(spec, shapes):
    """``linearize``'s function (the tape run forward) gives ``jvp``'s tangent, for two
    tangents at one point (one draw per row: the tape is the one vjp transposes)."""
    rng = np.random.default_rng(0)
    args = spec.draw(rng, shapes)
    while spec.avoid is not None and spec.avoid(*args):  # (a draw outside the row's domain)
        args = spec.draw(rng, shapes)
    out, f_jvp = dualad.linearize(spec.fun, *args)
    tol = spec.rtol if spec.adaptive else 1e-12
    for _ in range(2):
        vs = tuple(rng.normal(size=a.shape) for a in args)
        expected = _float_leaves(dualad.jvp(spec.fun, args, vs)[1])
        got = _float_leaves(f_jvp(*vs))
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_allclose(g, e, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(e),
                                                                             initial=0))))
    for a, b in zip(_float_leaves(out), _float_leaves(spec.fun(*args))):
        assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b), initial=0))))
