"""Dense Jacobians: ``jacfwd`` and ``jacrev`` of a dense layer
``tanh(W x) + x³`` at n = 10, 100 and 1000, and a sweep of ``jacfwd``'s
``chunk_size`` at n = 1000, timed and (peak) memory measured.

The layer is the function of the compiled Jacobian
(:func:`~dualad.bench.compiled.compiled_jacfwd_tanh`), here uncompiled: NumPy
arrays in, every implementation checked once against the Jacobian derived by
hand, ``diag(1 − tanh²(Wx))·W + diag(3x²)``. The problems form three groups:
``jacfwd_tanh`` and ``jacrev_tanh`` (size sweeps over n) and
``jacfwd_chunk_size`` (a sweep over the chunk size, its ``size``).
"""

from __future__ import annotations

import functools

import numpy as np

import dualad

from .core import (APPROX_RTOL, EXACT_RTOL, Factory, PeerUnavailable, Problem, checked,
                   import_jax, require, warmed_up)

#: The sizes of the dense Jacobian problems (the asv ``params``).
JACOBIAN_SIZES = (10, 100, 1000)

#: The chunk sizes of the ``jacfwd`` sweep at n = :data:`CHUNK_SWEEP_SIZE` (``None``
#: in ``dualad.jacfwd`` picks one pass within ``DEFAULT_CHUNK_BYTES``: 1000 here).
CHUNK_SIZES = (1, 10, 100, 1000)
CHUNK_SWEEP_SIZE = 1000

#: The largest n at which the slow peers are timed, by peer, and why (a call at
#: n = 1000, on a 2-core machine): numdifftools' central differences with
#: Richardson extrapolation (about 2 minutes), num-dual's Python loops over its
#: dual scalars (n² of them), and, in the ``jacfwd`` group, autograd's Jacobian,
#: which is reverse mode (about 4 s; timed at every n in the ``jacrev`` group).
SLOW_PEER_MAX_SIZE = {"numdifftools": 100, "num-dual": 100, "autograd-fwd": 100}


def tanh_layer(x, W, xp=np):
    """``tanh(W x) + x³``, written once for every array namespace.

    ``W`` is an argument, not a constant: closed over, it would be folded into the
    compiled program with the seeds (dualad_gpu 3x *faster* than jax.jit, a measure of
    XLA's constant folding rather than of the derivative).
    """
    return xp.tanh(W @ x) + x**3


def _tanh_layer_num_dual(x, W):
    """:func:`tanh_layer` in num-dual's idiom: Python loops over its dual scalars
    (``W`` a nested list of floats)."""
    out = []
    for xi, row in zip(x, W):
        s = x[0] * row[0]
        for xj, w in zip(x[1:], row[1:]):
            s = s + xj * w
        out.append(s.tanh() + xi**3)
    return out


@functools.lru_cache(maxsize=len(JACOBIAN_SIZES))
def tanh_layer_point(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``x ~ N(0, 1)`` and ``W ~ N(0, 1/n)``, made without temporaries the size of
    ``W`` (the peak-memory benchmarks call this in their ``setup``)."""
    rng = np.random.default_rng(20240605 + n)
    x = rng.standard_normal(n)
    W = rng.standard_normal((n, n))
    W /= np.sqrt(n)
    return x, W


@functools.lru_cache(maxsize=len(JACOBIAN_SIZES))
def _tanh_layer_inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tanh_layer_point`, the value, and the Jacobian derived by hand:
    ``diag(1 − tanh²(Wx))·W + diag(3x²)``."""
    x, W = tanh_layer_point(n)
    t = np.tanh(W @ x)
    return x, W, t + x**3, (1.0 - t * t)[:, None] * W + np.diag(3.0 * x * x)


def _capped(peer: str, n: int) -> None:
    """Raise :class:`PeerUnavailable` when ``peer`` is too slow to time at ``n``."""
    limit = SLOW_PEER_MAX_SIZE[peer]
    if n > limit:
        raise PeerUnavailable(f"timed at n <= {limit} only (see bench.SLOW_PEER_MAX_SIZE)")


def _check(n: int, thunk, what: str, read=lambda r: r, rtol: float = EXACT_RTOL):
    return checked(thunk, _tanh_layer_inputs(n)[3], read=read, what=what, rtol=rtol,
                   scaled=True)


def _primal(n: int) -> Factory:
    def factory():
        x, W, y, _ = _tanh_layer_inputs(n)
        return checked(functools.partial(tanh_layer, x, W), y, what="primal")

    return factory


def _jax_transform(name: str, n: int, jit: bool) -> Factory:
    """``jax.NAME`` (``jacfwd`` or ``jacrev``) of the layer, eager or under ``jax.jit``."""

    def factory():
        jax = import_jax()
        import jax.numpy as jnp

        jac = getattr(jax, name)(functools.partial(tanh_layer, xp=jnp))
        jac = jax.jit(jac) if jit else jac
        x, W = map(jax.device_put, tanh_layer_point(n))
        return _check(n, lambda: jax.block_until_ready(jac(x, W)),
                      f"jax.jit(jax.{name})" if jit else f"jax.{name}")

    return factory


def _torch_transform(name: str, n: int) -> Factory:
    """``torch.func.NAME`` (``jacfwd`` or ``jacrev``) of the layer."""

    def factory():
        torch = require("torch")
        func = require("torch.func")

        jac = getattr(func, name)(functools.partial(tanh_layer, xp=torch))
        x, W = map(torch.from_numpy, tanh_layer_point(n))
        return _check(n, warmed_up(functools.partial(jac, x, W)), f"torch.func.{name}",
                      read=lambda r: r.numpy())

    return factory


def _autograd_jacobian(n: int, cap: str | None = None) -> Factory:
    """``autograd.jacobian`` of the layer: one forward pass, n backward passes."""

    def factory():
        ag = require("autograd")
        anp = require("autograd.numpy")
        if cap:
            _capped(cap, n)
        x, W = tanh_layer_point(n)
        return _check(n, functools.partial(ag.jacobian(functools.partial(tanh_layer, xp=anp)),
                                           x, W), "autograd.jacobian")

    return factory


def jacfwd_tanh(n: int) -> Problem:
    """The Jacobian of :func:`tanh_layer` by ``dualad.jacfwd`` (its default chunk: all
    n seeds in one pass at these sizes), n × n (n = 10, 100, 1000; reported, no target).

    Peers: ``jax.jacfwd`` eager (``jax``) and under ``jax.jit``,
    ``torch.func.jacfwd`` (``torch``), ``autograd.jacobian`` (reverse mode, autograd
    has no forward Jacobian), ``numdifftools.Jacobian`` (finite differences, checked
    to :data:`APPROX_RTOL`) and ``num_dual.jacobian`` (Python loops over its dual
    scalars); the slow ones at n ≤ 100 only (:data:`SLOW_PEER_MAX_SIZE`).
    """

    def dual():
        x, W = tanh_layer_point(n)
        return _check(n, functools.partial(dualad.jacfwd(tanh_layer), x, W), "dualad.jacfwd")

    def numdifftools():
        ndt = require("numdifftools")
        _capped("numdifftools", n)
        x, W = tanh_layer_point(n)
        jac = ndt.Jacobian(lambda v: tanh_layer(v, W))
        return _check(n, functools.partial(jac, x), "numdifftools.Jacobian", rtol=APPROX_RTOL)

    def num_dual():
        nd = require("num_dual")
        _capped("num-dual", n)
        x, W = tanh_layer_point(n)
        rows = W.tolist()
        return _check(n, functools.partial(nd.jacobian, lambda v: _tanh_layer_num_dual(v, rows),
                                           x.tolist()),
                      "num_dual.jacobian", read=lambda r: r[1])

    return Problem(
        name=f"jacfwd_tanh_{n}",
        title=f"jacfwd tanh(Wx)+x^3, n={n}",
        target=None,
        factories={"primal": _primal(n), "dualad": dual,
                   "jax.jit": _jax_transform("jacfwd", n, jit=True),
                   "jax": _jax_transform("jacfwd", n, jit=False),
                   "torch": _torch_transform("jacfwd", n),
                   "autograd": _autograd_jacobian(n, cap="autograd-fwd"),
                   "numdifftools": numdifftools, "num-dual": num_dual},
        group="jacfwd_tanh",
        size=n,
    )


def jacrev_tanh(n: int) -> Problem:
    """The Jacobian of :func:`tanh_layer` by ``dualad.jacrev`` (one forward pass, the n
    output directions in one backward pass), n × n (n = 10, 100, 1000;
    reported, no target).

    Peers: ``jax.jacrev`` eager (``jax``) and under ``jax.jit``, ``torch.func.jacrev``
    (``torch``), ``autograd.jacobian`` (one backward pass per output).
    """

    def dual():
        x, W = tanh_layer_point(n)
        return _check(n, functools.partial(dualad.jacrev(tanh_layer), x, W), "dualad.jacrev")

    return Problem(
        name=f"jacrev_tanh_{n}",
        title=f"jacrev tanh(Wx)+x^3, n={n}",
        target=None,
        factories={"primal": _primal(n), "dualad": dual,
                   "jax.jit": _jax_transform("jacrev", n, jit=True),
                   "jax": _jax_transform("jacrev", n, jit=False),
                   "torch": _torch_transform("jacrev", n),
                   "autograd": _autograd_jacobian(n)},
        group="jacrev_tanh",
        size=n,
    )


def jacfwd_chunk(chunk_size: int, n: int = CHUNK_SWEEP_SIZE) -> Problem:
    """``dualad.jacfwd(tanh_layer, chunk_size=c)`` at ``n`` (c = 1, 10, 100, 1000 at
    n = 1000): ``n / c`` passes of ``c`` seeds each; the time and the peak
    memory of a call (:attr:`Problem.memory`), reported."""

    def dual():
        x, W = tanh_layer_point(n)
        return _check(n, functools.partial(dualad.jacfwd(tanh_layer, chunk_size=chunk_size),
                                           x, W), f"dualad.jacfwd(chunk_size={chunk_size})")

    return Problem(
        name=f"jacfwd_tanh_{n}_chunk_{chunk_size}",
        title=f"jacfwd tanh(Wx)+x^3, n={n}, chunk_size={chunk_size}",
        target=None,
        factories={"primal": _primal(n), "dualad": dual},
        group="jacfwd_chunk_size",
        size=chunk_size,
        memory=True,
    )
