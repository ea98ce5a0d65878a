"""Pytrees of the user's own classes (:mod:`dualad.pytrees`): dataclasses taken as
containers of their fields in every transform (as JAX's ``register_dataclass`` makes
them), ``register_dataclass`` with fields that are not differentiated,
``register_pytree_node`` for any class, the replay with them, ``dualad_gpu``, the error
for an object no pytree opens, and registrations kept out of optree's global namespace."""

from __future__ import annotations

import dataclasses

import numpy as np
import optree
import pytest
from numpy.testing import assert_allclose

import dualad


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: np.ndarray
    scale: float


def loss(p):
    return np.sum(np.tanh(p.w) ** 2) * p.b + p.b ** 3


P = Params(np.array([0.3, -1.2, 0.7]), 1.5)


def expected_grad(p):
    return Params(2 * np.tanh(p.w) * (1 - np.tanh(p.w) ** 2) * p.b,
                  np.sum(np.tanh(p.w) ** 2) + 3 * p.b ** 2)


def fields_close(a, b):
    assert type(a) is type(b)
    for field in dataclasses.fields(a):
        assert_allclose(getattr(a, field.name), getattr(b, field.name), rtol=1e-13)


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev"])
def test_a_dataclass_input_is_a_container_of_its_fields(transform):
    g = getattr(dualad, transform)(loss)(P)
    fields_close(g, expected_grad(P))


def test_jvp_vjp_and_hessian_of_a_dataclass():
    tangent = Params(np.ones(3), 0.5)
    value, t = dualad.jvp(loss, (P,), (tangent,))
    e = expected_grad(P)
    assert_allclose(t, np.sum(e.w) + 0.5 * e.b, rtol=1e-13)
    _, pullback = dualad.vjp(loss, P)
    fields_close(pullback(1.0)[0], e)
    H = dualad.hessian(loss)(P)
    assert type(H) is Params and type(H.w) is Params and type(H.b) is Params
    assert_allclose(H.b.b, 6 * P.b, rtol=1e-13)  # ∂²/∂b²
    assert_allclose(H.w.b, 2 * np.tanh(P.w) * (1 - np.tanh(P.w) ** 2), rtol=1e-13)


def test_a_dataclass_output_and_a_frozen_dataclass():
    J = dualad.jacfwd(lambda f: Frozen(f.x ** 2, f.scale * 3.0))(Frozen(np.ones(2), 2.0))
    assert type(J) is Frozen and type(J.x) is Frozen
    assert_allclose(J.x.x, 2 * np.eye(2))
    assert_allclose(J.scale.scale, 3.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        J.scale = 0.0  # (rebuilt without __init__, it is still frozen)


def test_replayed_calls_with_dataclasses_are_the_interpreter_s():
    replayed, interpreted = dualad.grad(loss), dualad.grad(loss, replay=False)
    for k in range(40):
        p = Params(P.w * (1 + k / 40), P.b)
        a, b = replayed(p), interpreted(p)
        assert a.w.tobytes() == b.w.tobytes() and np.asarray(a.b).tobytes() == \
            np.asarray(b.b).tobytes()
    assert replayed.counts["replayed"] > 0


def test_register_dataclass_with_fields_that_are_not_differentiated():
    @dualad.register_dataclass
    @dataclasses.dataclass
    class Layer:
        weights: np.ndarray
        activation: str

    dualad.register_dataclass(Layer, data_fields=["weights"], meta_fields=["activation"])
    act = {"tanh": np.tanh, "sin": np.sin}
    f = lambda layer: np.sum(act[layer.activation](layer.weights))  # noqa: E731
    g = dualad.grad(f)(Layer(np.zeros(2), "sin"))
    assert g.activation == "sin"
    assert_allclose(g.weights, np.ones(2))
    with pytest.raises(ValueError, match="every field of Layer"):
        dualad.register_dataclass(Layer, data_fields=["weights"])
    with pytest.raises(TypeError, match="dataclass"):
        dualad.register_dataclass(int)


def test_register_pytree_node_for_any_class():
    class Segment:
        def __init__(self, start, end, label):
            self.start, self.end, self.label = start, end, label

    dualad.register_pytree_node(Segment, lambda s: ((s.start, s.end), s.label),
                                lambda label, children: Segment(*children, label))
    length = lambda s: np.linalg.norm(s.end - s.start)  # noqa: E731
    g = dualad.grad(length)(Segment(np.zeros(2), np.array([3.0, 4.0]), "a"))
    assert type(g) is Segment and g.label == "a"
    assert_allclose(g.end, [0.6, 0.8])
    assert_allclose(g.start, [-0.6, -0.8])


def test_registrations_stay_in_dualad_s_namespace():
    @dataclasses.dataclass
    class Local:
        x: np.ndarray

    dualad.grad(lambda s: np.sum(s.x))(Local(np.ones(2)))
    assert optree.tree_leaves(Local(np.ones(2)))[0].__class__ is Local  # a leaf elsewhere
    assert len(optree.tree_leaves(Local(np.ones(2)), namespace=dualad.pytrees.NAMESPACE)) == 1


def test_an_object_no_pytree_opens_names_the_way_to_register_it():
    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"a Opaque: .*register_pytree_node.*register_dataclass"):
        dualad.grad(lambda o: 1.0)(Opaque())


def test_dataclasses_under_dualad_gpu():
    jax = pytest.importorskip("jax")
    import dualad_gpu

    @dataclasses.dataclass
    class Fresh:  # first met by dualad_gpu: registered with JAX too
        w: np.ndarray
        b: float

    with jax.enable_x64(True):
        g = dualad_gpu.grad(loss)(Fresh(P.w, P.b))
    assert type(g) is Fresh
    e = expected_grad(P)
    assert_allclose(np.asarray(g.w), e.w, rtol=1e-13)
    assert_allclose(np.asarray(g.b), e.b, rtol=1e-13)


def test_the_gradient_of_a_dataclass_matches_jax_s_register_dataclass():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    @dataclasses.dataclass
    class Theirs:
        w: object
        b: object

    jax.tree_util.register_dataclass(Theirs, data_fields=["w", "b"], meta_fields=[])
    with jax.enable_x64(True):
        theirs = jax.grad(lambda p: jnp.sum(jnp.tanh(p.w) ** 2) * p.b + p.b ** 3)(
            Theirs(jnp.asarray(P.w), jnp.asarray(P.b)))
    ours = dualad.grad(loss)(P)
    assert_allclose(ours.w, np.asarray(theirs.w), rtol=1e-13)
    assert_allclose(ours.b, np.asarray(theirs.b), rtol=1e-13)
