"""Second-order problems: the Hessian and a Hessian-vector product of Rosenbrock's
function."""

from __future__ import annotations

import functools
import itertools

import numpy as np

import dualad

from .core import (APPROX_RTOL, EXACT_RTOL, Problem, checked, import_jax, require,
                   warmed_up)


# -- problems 3 and 4: Hessian and Hessian-vector product of Rosenbrock ------------------


def rosenbrock(x, xp=np):
    """``sum(100·(x[1:] − x[:-1]²)² + (1 − x[:-1])²)``, as ``scipy.optimize.rosen``.

    Written once for every array namespace (``xp=np``, ``jnp``, ``anp``, ``torch``).
    """
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _rosenbrock_num_dual(x):
    """:func:`rosenbrock` in num-dual's idiom: a Python loop over its dual scalars."""
    s = 0.0
    for a, b in itertools.pairwise(x):
        s = s + 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2
    return s


@functools.lru_cache(maxsize=4)
def _rosen_inputs(n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A point, a direction and the value of :func:`rosenbrock` there (scipy's)."""
    from scipy.optimize import rosen

    rng = np.random.default_rng(20240603 + n)
    x = rng.uniform(-2.0, 2.0, n)
    v = rng.standard_normal(n)
    return x, v, float(rosen(x))


#: The peers that evaluate the function at NumPy level (no compiler): dualad's
#: Hessian must beat every one of them.
NUMPY_LEVEL_PEERS = ("num-dual", "jax", "torch", "autograd", "numdifftools")

#: The sizes of the Hessian problems in :data:`PROBLEMS` (and the asv ``params``).
HESSIAN_SIZES = (10, 100)

#: Fixed targets of the Hessian problems, by n (≤ 200× at n = 100, with
#: ``hessian``'s automatic choice of mode); at every n dualad must also beat the
#: NumPy-level peers.
HESSIAN_TARGETS = {100: 200.0}

#: The peers' Hessian ratios to the primal, by n, measured on another machine when
#: the targets were set (the table's reference rows).
_HESSIAN_REFERENCE = {
    10: {"num-dual": 11.0, "jax": 2460.0, "jax.jit": 6.0, "torch": 448.0, "autograd": 377.0},
    100: {"num-dual": 1633.0, "jax": 1768.0, "jax.jit": 18.0, "torch": 519.0,
          "autograd": 1620.0},
}


def hessian_rosenbrock(n: int = 10) -> Problem:
    """The Hessian of :func:`rosenbrock` in ``n`` variables (n = 10 and 100).

    dualad's target is to be faster than every NumPy-level peer
    (:data:`NUMPY_LEVEL_PEERS`), and at n = 100 also ≤ 200× the primal
    (:data:`HESSIAN_TARGETS`), with ``hessian``'s automatic mode.
    """

    def expected():
        from scipy.optimize import rosen_hess

        return rosen_hess(_rosen_inputs(n)[0])

    def primal():
        x, _, y = _rosen_inputs(n)
        return checked(functools.partial(rosenbrock, x), y, what="primal")

    def dual():
        x = _rosen_inputs(n)[0]
        return checked(functools.partial(dualad.hessian(rosenbrock), x), expected(),
                       what="dualad.hessian", rtol=EXACT_RTOL, scaled=True)

    def num_dual():
        nd = require("num_dual")
        x = _rosen_inputs(n)[0]
        return checked(functools.partial(nd.hessian, _rosenbrock_num_dual, x), expected(),
                       read=lambda r: r[2], what="num_dual.hessian", rtol=EXACT_RTOL,
                       scaled=True)

    def jax_hessian(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            hess = jax.hessian(functools.partial(rosenbrock, xp=jnp))
            hess = jax.jit(hess) if jit else hess
            xj = jax.device_put(_rosen_inputs(n)[0])
            return checked(lambda: jax.block_until_ready(hess(xj)), expected(),
                           what="jax.jit(jax.hessian)" if jit else "jax.hessian",
                           rtol=EXACT_RTOL, scaled=True)

        return factory

    def torch_func():
        torch = require("torch")
        from torch.func import hessian

        xt = torch.from_numpy(_rosen_inputs(n)[0])
        hess = hessian(functools.partial(rosenbrock, xp=torch))
        return checked(warmed_up(functools.partial(hess, xt)), expected(), read=lambda r: r.numpy(),
                       what="torch.func.hessian", rtol=EXACT_RTOL, scaled=True)

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        x = _rosen_inputs(n)[0]
        hess = ag.hessian(functools.partial(rosenbrock, xp=anp))
        return checked(functools.partial(hess, x), expected(), what="autograd.hessian",
                       rtol=EXACT_RTOL, scaled=True)

    def numdifftools():
        ndt = require("numdifftools")
        x = _rosen_inputs(n)[0]
        return checked(functools.partial(ndt.Hessian(rosenbrock), x), expected(),
                       what="numdifftools.Hessian", rtol=APPROX_RTOL, scaled=True)

    reference = _HESSIAN_REFERENCE.get(n, {})
    return Problem(
        name=f"hessian_rosenbrock_{n}",
        title=f"hessian rosenbrock, n={n}",
        target=HESSIAN_TARGETS.get(n),
        factories={"primal": primal, "dualad": dual, "num-dual": num_dual,
                   "jax": jax_hessian(jit=False), "jax.jit": jax_hessian(jit=True),
                   "torch": torch_func, "autograd": autograd, "numdifftools": numdifftools},
        reference=reference,
        beat=NUMPY_LEVEL_PEERS,
    )


def hvp_rosenbrock(n: int = 10**4) -> Problem:
    """A Hessian-vector product of :func:`rosenbrock` along a random ``v`` (n = 10⁴).

    Reported, no target. The peers do forward-over-reverse (jax eager and under
    ``jax.jit``, torch) or reverse-over-reverse (autograd), O(n); so does
    ``dualad.hvp`` since it has reverse mode, where its hyper-dual passes over
    chunks of unit vectors were O(n²), seconds per call at this size (hence
    :func:`measure`'s ``slow``). num-dual (no Hessian-vector product; its Hessian
    at n = 10⁴ is 10⁸ hyper-dual scalars) and numdifftools (the same, by finite
    differences) are not peers here.
    """

    def expected():
        from scipy.optimize import rosen_hess_prod

        x, v, _ = _rosen_inputs(n)
        return rosen_hess_prod(x, v)

    def primal():
        x, _, y = _rosen_inputs(n)
        return checked(functools.partial(rosenbrock, x), y, what="primal")

    def dual():
        x, v, _ = _rosen_inputs(n)
        return checked(functools.partial(dualad.hvp, rosenbrock, (x,), (v,)), expected(),
                       read=lambda r: r[0], what="dualad.hvp", rtol=EXACT_RTOL, scaled=True)

    def jax_hvp(jit: bool):
        def factory():
            jax = import_jax()
            import jax.numpy as jnp

            grad = jax.grad(functools.partial(rosenbrock, xp=jnp))
            hvp = lambda x, v: jax.jvp(grad, (x,), (v,))[1]
            hvp = jax.jit(hvp) if jit else hvp
            x, v, _ = _rosen_inputs(n)
            xj, vj = jax.device_put(x), jax.device_put(v)
            return checked(lambda: jax.block_until_ready(hvp(xj, vj)), expected(),
                           what="jax.jit(jvp of grad)" if jit else "jax.jvp of jax.grad",
                           rtol=EXACT_RTOL, scaled=True)

        return factory

    def autograd():
        ag = require("autograd")
        anp = require("autograd.numpy")
        x, v, _ = _rosen_inputs(n)
        hvp_at = ag.make_hvp(functools.partial(rosenbrock, xp=anp))  # (vjp of grad, grad)
        return checked(lambda: hvp_at(x)[0](v), expected(), what="autograd.make_hvp",
                       rtol=EXACT_RTOL, scaled=True)

    def torch_func():
        torch = require("torch")
        from torch.func import grad, jvp

        x, v, _ = _rosen_inputs(n)
        xt, vt = torch.from_numpy(x), torch.from_numpy(v)
        g = grad(functools.partial(rosenbrock, xp=torch))
        return checked(warmed_up(lambda: jvp(g, (xt,), (vt,))[1]), expected(),
                       read=lambda r: r.numpy(), what="torch.func (jvp of grad)",
                       rtol=EXACT_RTOL, scaled=True)

    return Problem(
        name="hvp_rosenbrock",
        title=f"hvp rosenbrock, n={n:.0e}".replace("e+0", "e"),
        target=None,
        factories={"primal": primal, "dualad": dual, "jax.jit": jax_hvp(jit=True),
                   "jax": jax_hvp(jit=False), "torch": torch_func, "autograd": autograd},
    )
