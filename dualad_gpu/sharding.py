"""Sharding the seed axis across devices.

The seed axis is the leading axis of every tangent: K directions carried side
by side, independent of each other. Constraining the seed blocks of a
``jacfwd``/``jacrev``/``hessian`` to be split along a mesh axis lets XLA run
each device's seeds locally; the Jacobian comes back as a sharded jax Array.

Several processes (several hosts, or several processes on one host): call
``jax.distributed.initialize(...)`` in each, then pass ``mesh=global_mesh()``
(a ``Mesh`` over ``jax.devices()``, every process's devices) to the transform,
in every process, with the same function and the same arguments. Each process
computes its devices' share of the seeds; the result is a global jax Array
that no single process holds whole (``np.asarray`` refuses it):
``jax.experimental.multihost_utils.process_allgather(J, tiled=True)`` gives
every process the whole of it. On JAX's CPU backend the processes exchange
data with its Gloo collectives (``jax_cpu_collectives_implementation``,
``"gloo"`` by default in recent JAX); tests/test_gpu_multiprocess.py runs this
with two local processes and compares it with one process.

The default mesh stays **local** (``jax.local_devices()``) even after
``jax.distributed.initialize``; spreading over the other processes is asked
for with ``global_mesh()``. A global mesh asks more of the caller than the
default can assume: every process must make the same call (a process that
does not leaves the others waiting in a collective), with equal arguments
(NumPy arguments are taken as replicated: each process feeds its own copy to
its own devices, and copies that differ mix silently), and it must gather a
result it wants whole. With the local default, a multi-process program in
which each process differentiates its own inputs keeps working unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def default_mesh() -> Mesh | None:
    """All local devices on one axis named ``"seeds"``, or None with a single device.

    Local also after ``jax.distributed.initialize``: see :func:`global_mesh`."""
    return _seed_mesh(jax.local_devices())


def global_mesh() -> Mesh | None:
    """The devices of every process (``jax.devices()``) on one axis named
    ``"seeds"``, or None with a single device.

    After ``jax.distributed.initialize`` in each process, ``mesh=global_mesh()``
    spreads a transform's seeds over all of them; every process makes the same
    call with equal arguments, and the result is a global jax Array
    (``jax.experimental.multihost_utils.process_allgather(J, tiled=True)``
    gathers it). With one process it is :func:`default_mesh`.

    Examples
    --------
    >>> import numpy as np, dualad_gpu
    >>> from jax.experimental.multihost_utils import process_allgather
    >>> J = dualad_gpu.jacfwd(np.sin, mesh=dualad_gpu.sharding.global_mesh())(np.zeros(2))
    >>> process_allgather(J, tiled=True)  # the whole Jacobian, in every process
    array([[1., 0.],
           [0., 1.]])
    """
    return _seed_mesh(jax.devices())


def _seed_mesh(devices: list) -> Mesh | None:
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
