"""Sharding the seed axis across devices.

The seed axis is the leading axis of every tangent: K directions carried side
by side, independent of each other. Constraining the seed blocks of a
``jacfwd``/``jacrev``/``hessian`` to be split along a mesh axis lets XLA run
each device's seeds locally; the Jacobian comes back as a sharded jax Array.

On several hosts, call ``jax.distributed.initialize()`` on each first and
pass a ``Mesh`` over ``jax.devices()`` (all hosts' devices); every host then
runs the same program on its share of the seeds.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def default_mesh() -> Mesh | None:
    """All local devices on one axis named ``"seeds"``, or None with a single device."""
    devices = jax.local_devices()
    if len(devices) < 2:
        return None
    return Mesh(np.array(devices), ("seeds",))


def seed_placement(mesh: Mesh | None) -> Callable | None:
    """A function constraining a seed block to be split along ``mesh``'s first axis."""
    if mesh is None:
        return None
    axis = mesh.axis_names[0]

    def place(seeds):
        spec = PartitionSpec(axis, *([None] * (np.ndim(seeds) - 1)))
        return jax.lax.with_sharding_constraint(jnp.asarray(seeds), NamedSharding(mesh, spec))

    return place
