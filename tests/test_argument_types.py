"""Every NumPy function of the spec table with arguments of every type NumPy accepts.

Beside the Duals being differentiated, a user passes lists, tuples, Python floats,
NumPy scalars, 0-d arrays and size-0 arrays. For every row of ``tests/specs.py``
whose function is a NumPy callable itself, hypothesis picks which arguments are
differentiated and how each of the others (and each scalar one being differentiated)
is given; the value must equal plain NumPy's, and ``jvp``/``jacfwd`` and
``grad``/``jacrev``/``vjp`` must equal what the same call gives on proper arrays.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
import optree
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import dualad
from specs import SPECS, Spec

# ---------------------------------------------------------------------------
# The rows: those whose ``fun`` is the NumPy callable itself (not a lambda, whose
# constants are built from ``x.shape``)
# ---------------------------------------------------------------------------

DIRECT = [spec for spec in SPECS if getattr(spec.fun, "__name__", "") != "<lambda>"
          and (isinstance(spec.fun, np.ufunc) or spec.fun.__module__ is None
               or spec.fun.__module__.startswith(("numpy", "scipy", "_operator")))]
CASES = [pytest.param(spec, shapes, id=f"{spec.id}-{'x'.join(map(str, shapes))}")
         for spec in DIRECT for shapes in spec.shapes]

#: How a constant (not differentiated) argument of a shape may be given.
CONSTANT_KINDS = {0: ("array", "float", "numpy scalar", "0-d array"),
                  1: ("array", "list", "tuple")}
#: How a differentiated argument may be given (a list would be a pytree of scalars).
VARIABLE_KINDS = {0: ("array", "float", "numpy scalar"), 1: ("array",)}


def given_as(x: np.ndarray, kind: str):
    """``x`` as a value of ``kind``."""
    if kind == "array":
        return x
    if kind == "float":
        return float(x)
    if kind == "numpy scalar":
        return x.dtype.type(x)
    if kind == "0-d array":
        return np.asarray(x)
    if kind == "list":
        return x.tolist()
    if kind == "tuple":
        return optree.tree_map(lambda v: v, _tuples(x.tolist()), none_is_leaf=True)
    raise ValueError(kind)


def _tuples(v):
    return tuple(_tuples(i) for i in v) if isinstance(v, list) else v


def kinds_for(shape, table) -> tuple[str, ...]:
    return table[min(len(shape), 1)]


def float_leaves(tree) -> list:
    return [np.asarray(leaf) for leaf in optree.tree_leaves(tree)
            if np.asarray(leaf).dtype.kind == "f"]


def assert_same(actual, expected, what: str) -> None:
    actual, expected = optree.tree_leaves(actual), optree.tree_leaves(expected)
    assert len(actual) == len(expected), what
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}"
        assert_allclose(a, e, rtol=1e-13, atol=1e-13, err_msg=what)


def check_call(spec: Spec, arrays: tuple, given_args: tuple, argnums: tuple, seed: int):
    """Values against NumPy's, and every transform against the one on arrays."""
    fun = spec.fun
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's own warnings on extreme inputs
        expected_value = fun(*given_args)
        assert_same(fun(*arrays), expected_value, "plain NumPy on arrays vs given types")

        # forward: jvp along random directions, and jacfwd
        tangents = tuple(rng.uniform(-1, 1, np.shape(arrays[i])) for i in argnums)

        def with_args(args):
            def of_variables(*xs):
                full = list(args)
                for i, x in zip(argnums, xs):
                    full[i] = x
                return fun(*full)
            return of_variables

        of_variables, of_variables_arrays = with_args(given_args), with_args(arrays)

        variables = tuple(given_args[i] for i in argnums)
        variable_arrays = tuple(arrays[i] for i in argnums)
        out, t = dualad.jvp(of_variables, variables, tangents)
        out_a, t_a = dualad.jvp(of_variables_arrays, variable_arrays, tangents)
        assert_same(out, expected_value, "jvp value vs NumPy")
        assert_same(t, t_a, "jvp tangent vs arrays")
        every = tuple(range(len(argnums)))
        assert_same(dualad.jacfwd(of_variables, argnums=every)(*variables),
                    dualad.jacfwd(of_variables_arrays, argnums=every)(*variable_arrays),
                    "jacfwd vs arrays")

        # reverse: jacrev, vjp and, for a scalar output, grad, of the float outputs
        # (grad refuses integer outputs such as frexp's exponent)
        def floats_only(f):
            return lambda *xs: tuple(o for o in optree.tree_leaves(f(*xs))
                                     if np.asarray(dualad.primal_value(o)).dtype.kind == "f")

        of_variables, of_variables_arrays = map(floats_only, (of_variables,
                                                              of_variables_arrays))
        expected_value = float_leaves(expected_value)
        assert_same(dualad.jacrev(of_variables, argnums=every)(*variables),
                    dualad.jacrev(of_variables_arrays, argnums=every)(*variable_arrays),
                    "jacrev vs arrays")
        out_v, pullback = dualad.vjp(of_variables, *variables)
        _, pullback_a = dualad.vjp(of_variables_arrays, *variable_arrays)
        assert_same(out_v, expected_value, "vjp value vs NumPy")
        cotangent = optree.tree_map(lambda o: rng.normal(size=np.shape(o)), out_v)
        assert_same(pullback(cotangent), pullback_a(cotangent), "vjp vs arrays")
        if len(out_v) == 1 and np.shape(out_v[0]) == ():
            assert_same(dualad.grad(lambda *xs: of_variables(*xs)[0], argnums=every)(
                *variables), dualad.grad(lambda *xs: of_variables_arrays(*xs)[0],
                                         argnums=every)(*variable_arrays), "grad vs arrays")


@pytest.mark.parametrize("spec, shapes", CASES)
@settings(max_examples=5)
@given(data=st.data())
def test_arguments_of_every_type(spec, shapes, data):
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    arrays = spec.draw(rng, shapes)
    if spec.avoid is not None:
        assume(not spec.avoid(*arrays))
    n = len(arrays)
    argnums = tuple(i for i in range(n) if data.draw(st.booleans(), label=f"vary {i}"))
    assume(argnums)
    kinds = [data.draw(st.sampled_from(kinds_for(shapes[i], VARIABLE_KINDS if i in argnums
                                                  else CONSTANT_KINDS)), label=f"kind {i}")
             for i in range(n)]
    given_args = tuple(given_as(x, k) for x, k in zip(arrays, kinds))
    check_call(spec, arrays, given_args, argnums, seed)


# ---------------------------------------------------------------------------
# Size-0 arrays through the elementwise ufuncs and the reductions that allow them
# ---------------------------------------------------------------------------

UFUNCS = [spec for spec in DIRECT if isinstance(spec.fun, np.ufunc) and spec.fun.signature is None
          and not spec.variant]
EMPTY_SHAPES = [(0,), (2, 0)]


@pytest.mark.parametrize("spec", UFUNCS, ids=[s.id for s in UFUNCS])
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_size_zero_arrays_through_ufuncs(spec, shape):
    arrays = tuple(np.zeros(shape) for _ in range(spec.arity))
    for argnums in {(0,), tuple(range(spec.arity))}:
        check_call(spec, arrays, arrays, argnums, 0)


@pytest.mark.parametrize("fun", [np.sum, np.cumsum, np.ravel, np.transpose, np.sort,
                                 lambda x: np.sum(x, axis=0), lambda x: x @ np.ones((0, 2)),
                                 lambda x: np.concatenate([x, x]), lambda x: x[:0]],
                         ids=["sum", "cumsum", "ravel", "transpose", "sort", "sum axis 0",
                              "matmul", "concatenate", "getitem"])
def test_size_zero_arrays_through_functions(fun):
    x = np.zeros((2, 0)) if fun is not np.sum else np.zeros((0,))
    spec = Spec("size 0", fun, ())
    check_call(spec, (x,), (x,), (0,), 0)


# ---------------------------------------------------------------------------
# Constants of every type next to a Dual in the calls users write
# ---------------------------------------------------------------------------

CONSTANT_CALLS = {
    "dot list": (lambda x: np.dot(x, [1.0, 2.0]), (2,)),
    "dot tuple first": (lambda x: np.dot((1.0, -2.0), x), (2,)),
    "matmul operator list": (lambda x: x @ [1, 2], (3, 2)),
    "rmatmul operator list": (lambda x: [1.0, 2.0, 3.0] @ x, (3, 2)),
    "matmul list": (lambda x: np.matmul(x, [[1.0], [2.0]]), (3, 2)),
    "inner list": (lambda x: np.inner(x, [1.0, 2.0]), (2,)),
    "solve list": (lambda a: np.linalg.solve(a, [1.0, 2.0]), "matrix"),
    "solve list matrix": (lambda b: np.linalg.solve([[3.0, 1.0], [1.0, 2.0]], b), (2,)),
    "add list": (lambda x: x + [1.0, 2.0], (2,)),
    "multiply tuple": (lambda x: np.multiply((1.0, 2.0), x), (2,)),
    "where list": (lambda x: np.where([True, False], x, [0.0, 1.0]), (2,)),
    "maximum float": (lambda x: np.maximum(x, 0.5), (3,)),
    "arctan2 numpy scalar": (lambda x: np.arctan2(np.float64(0.5), x), (3,)),
    "power 0-d": (lambda x: np.power(x, np.asarray(2.0)), (3,)),
    "outer list": (lambda x: np.outer(x, [1.0, 2.0]), (3,)),
    "tensordot list": (lambda x: np.tensordot(x, [1.0, 2.0], axes=1), (3, 2)),
    "einsum list": (lambda x: np.einsum("ij,j->i", x, [1.0, 2.0]), (3, 2)),
    "concatenate list": (lambda x: np.concatenate([x, [1.0, 2.0]]), (2,)),
    "stack list": (lambda x: np.stack([x, [1.0, 2.0]]), (2,)),
    "clip list": (lambda x: np.clip(x, [0.0, -1.0], 1.0), (2,)),
    "vdot list": (lambda x: np.vdot(x, [1.0, 2.0]), (2,)),
    "kron-like multiply.outer": (lambda x: np.multiply.outer(x, [1.0, 2.0]), (2,)),
}


def _variable(shape):
    if shape == "matrix":
        return np.array([[3.0, 1.0], [0.5, 2.0]])
    return np.random.default_rng(0).uniform(0.5, 1.5, shape)


@pytest.mark.parametrize("name", list(CONSTANT_CALLS))
def test_constants_of_every_type_beside_a_dual(name):
    fun, shape = CONSTANT_CALLS[name]
    x = _variable(shape)
    spec = Spec(name, fun, ())
    check_call(spec, (x,), (x,), (0,), 0)
    assert_array_equal(dualad.jvp(fun, (x,), (np.ones_like(x),))[0], fun(x))


def test_operator_rows_are_covered():
    assert any(spec.fun is operator.matmul for spec in DIRECT)
