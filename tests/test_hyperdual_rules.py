"""Every primitive on hyper-duals, driven by the rows of ``tests/specs.py``.

Evaluating f at x + ε1·u + ε2·v must give, for every spec row,

* an ε1 part equal to the Dual JVP along u and an ε2 part equal to it along v,
* an ε1ε2 part equal to forward-over-forward (jacfwd of jacfwd contracted with
  u and v) to rounding — the second-order chain rule coming out of each rule
  with no second formula.
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
from dualad import HyperDual
from specs import SPECS

CASES = [pytest.param(spec, shapes, id=f"{spec.id}-{i}")
         for spec in SPECS for i, shapes in enumerate(spec.shapes)]


def _float_leaves(tree) -> list:
    return [leaf for leaf in optree.tree_leaves(tree)
            if np.asarray(dualad.primal_value(leaf)).dtype.kind == "f"]


def _part(out, name: str, shape) -> np.ndarray:
    if isinstance(out, HyperDual):
        return getattr(out, name)
    return np.zeros(shape)  # an output that does not depend on the input


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=PER_ROW_EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_hyperdual_parts_match_forward_over_forward(spec, shapes, seed):
    rng = np.random.default_rng(seed)
    args = spec.draw(rng, shapes)
    if spec.avoid is not None:
        assume(not spec.avoid(*args))
    us = [rng.normal(size=a.shape) for a in args]
    vs = [rng.normal(size=a.shape) for a in args]

    first = HyperDual(args[0], us[0], vs[0])
    hyper = [first] + [HyperDual(a, u, v, tags=first.tags)
                       for a, u, v in zip(args[1:], us[1:], vs[1:])]
    outs = _float_leaves(spec.fun(*hyper))

    jvp_u = _float_leaves(dualad.jvp(spec.fun, args, us)[1])
    jvp_v = _float_leaves(dualad.jvp(spec.fun, args, vs)[1])

    def along_v(*xs):
        return dualad.jvp(spec.fun, xs, vs)[1]

    second = _float_leaves(dualad.jvp(along_v, args, us)[1])

    for out, tu, tv, t2 in zip(outs, jvp_u, jvp_v, second):
        shape = np.shape(dualad.primal_value(out))
        scale = max(1.0, float(np.max(np.abs(t2), initial=0.0)))
        assert_allclose(_part(out, "eps1", (1,) + shape)[0], tu, rtol=1e-12, atol=1e-12)
        assert_allclose(_part(out, "eps2", (1,) + shape)[0], tv, rtol=1e-12, atol=1e-12)
        assert_allclose(_part(out, "eps1eps2", (1, 1) + shape)[0, 0], t2,
                        rtol=1e-11, atol=1e-11 * scale)
