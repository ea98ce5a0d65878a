"""dualad_gpu: dualad's transforms compiled with ``jax.jit`` (GPU where present).

No derivative is implemented twice: importing this package registers JAX
kernels for the primitives of dualad's rule table and makes Dual and HyperDual
JAX pytrees; the transforms are dualad's own, traced and compiled. Functions
written with plain NumPy calls (``np.sin(x)``, ``W @ x``, ``np.linalg.solve``)
compile through the Duals' NumPy protocols, on the differentiated arguments
and the others alike.

``sparse_jacobian`` and ``sparse_hessian`` (:mod:`dualad_gpu.sparse`, needing
SciPy) prepare the pattern and its colouring with dualad's NumPy path, outside
the trace, and compile the compressed passes and the decompression, returning
a ``jax.experimental.sparse.BCOO`` or a SciPy CSR array.

Plain ``jax.numpy`` functions refuse Duals (JAX offers no protocol through
which a Dual could take part): ``jnp.sin(x)`` on a differentiated argument
raises a ``TypeError``. Write ``import dualad_gpu.numpy as jnp`` instead, the
same names made to accept Duals (:mod:`dualad_gpu.numpy`).

Examples
--------
>>> import numpy as np, dualad_gpu
>>> f = lambda x: np.sum(np.sin(x) * x)
>>> dualad_gpu.grad(f)(np.array([0.0, 1.0]))
Array([0.        , 1.38177329], dtype=float64)
>>> import dualad_gpu.numpy as djnp
>>> dualad_gpu.grad(lambda x: djnp.sum(djnp.sin(x) * x))(np.array([0.0, 1.0]))
Array([0.        , 1.38177329], dtype=float64)
>>> import jax.numpy as jnp
>>> try:
...     dualad_gpu.grad(lambda x: jnp.sum(jnp.sin(x) * x))(np.array([0.0, 1.0]))
... except TypeError as error:
...     print(str(error).splitlines()[0])
sin requires ndarray or scalar arguments, ...got <class 'dualad.dual.Dual'> at position 0.
"""

try:
    import jax  # noqa: F401
except ImportError as error:  # jax, or a jaxlib it needs, is missing
    raise ImportError(
        f"dualad_gpu needs JAX, which could not be imported ({error}). Install it with:\n"
        f'    pip install "dualad[jax]"\n'
        "dualad itself (the NumPy path) works without it.") from error

from dualad import _sparse_attribute  # noqa: E402
from . import kernels, pytrees, sharding  # noqa: E402
from .transforms import (biharmonic, derivative_tensor, divergence, grad,  # noqa: E402
                         hessian, hessian_trace, hvp, jacfwd, jacobian, jacrev, jet, jvp,
                         laplacian, value_and_grad, vjp)

kernels.register()
pytrees.register()

__all__ = ["jvp", "jacfwd", "jacobian", "hessian", "hvp", "grad", "value_and_grad", "vjp",
           "jacrev", "jet", "derivative_tensor", "laplacian", "hessian_trace", "divergence",
           "biharmonic", "sparse_jacobian", "sparse_hessian"]

_SPARSE = ("sparse_jacobian", "sparse_hessian")  # imported on first use: they need SciPy


def __getattr__(name: str):
    return _sparse_attribute("dualad_gpu", name, _SPARSE)
