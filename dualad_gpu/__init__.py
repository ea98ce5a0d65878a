"""dualad_gpu: dualad's transforms compiled with ``jax.jit`` (GPU where present).

No derivative is implemented twice: importing this package registers JAX
kernels for the primitives of dualad's rule table and makes Dual and HyperDual
JAX pytrees; the transforms are dualad's own, traced and compiled. Functions
written with plain NumPy calls (``np.sin(x)``, ``W @ x``, ``np.linalg.solve``)
compile through the Duals' NumPy protocols, and so do functions written with
``jax.numpy`` calls on the arguments.

Examples
--------
>>> import numpy as np, dualad_gpu
>>> f = lambda x: np.sum(np.sin(x) * x)
>>> dualad_gpu.grad(f)(np.array([0.0, 1.0]))
Array([0.        , 1.38177329], dtype=float64)
"""

from . import kernels, pytrees, sharding
from .transforms import (grad, hessian, hvp, jacfwd, jacobian, jacrev, jvp, value_and_grad,
                         vjp)

kernels.register()
pytrees.register()

__all__ = ["jvp", "jacfwd", "jacobian", "hessian", "hvp", "grad", "value_and_grad", "vjp",
           "jacrev"]
