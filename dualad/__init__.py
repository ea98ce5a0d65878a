"""dualad: exact derivatives of the NumPy code you already write.

Forward mode evaluates your function on :class:`Dual` arrays
(``a + b·ε``, ``ε² = 0``), second derivatives come from :class:`HyperDual`
arrays, and reverse mode transposes the linear part of the same evaluation;
every NumPy call is a primitive of one rule table. See the README for a tour.

Examples
--------
>>> import numpy as np, dualad
>>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
>>> dualad.jacfwd(f, argnums=(0, 1))(2.0, 5.0)
(array(5.5), array(1.71633781))
"""

from .dual import Dual, primal_value, stop_gradient
from . import rules  # noqa: F401,I001  (declares the primitives, fills dualad.ops)
from . import solvers  # noqa: F401,I001  (SciPy's solvers' rules: they use the transforms)
from .custom import custom_jvp, defprimitive
from .forward import DEFAULT_CHUNK_BYTES, derivative, jacfwd, jacobian, jvp
from .hyperdual import HyperDual
from .reverse import grad, jacrev, linearize, value_and_grad, vjp
from .second_order import hessian, hvp, second_derivative
from .taylor import jet
from .tensors import derivative_tensor
from .operators import biharmonic, divergence, hessian_trace, laplacian
from .ensembles import ensemble
from .for_scipy import with_derivatives
from .pytrees import register_dataclass, register_pytree_node
from . import testing  # noqa: E402,I001  (dualad.testing.check_grads; hypothesis stays optional)
from .primitive import Primitive, Tag, register_function

__version__ = "0.1.0"

__all__ = [
    "biharmonic",
    "Dual",
    "HyperDual",
    "Primitive",
    "Tag",
    "custom_jvp",
    "defprimitive",
    "DEFAULT_CHUNK_BYTES",
    "derivative",
    "derivative_tensor",
    "divergence",
    "ensemble",
    "grad",
    "hessian",
    "hessian_trace",
    "hvp",
    "jacfwd",
    "jacrev",
    "jacobian",
    "jet",
    "jvp",
    "laplacian",
    "linearize",
    "hessian_sparsity",
    "jacobian_sparsity",
    "primal_value",
    "register_dataclass",
    "register_pytree_node",
    "register_function",
    "second_derivative",
    "sparse_hessian",
    "sparse_jacobian",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "with_derivatives",
]

_SPARSE = ("jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian")


def _sparse_attribute(package: str, name: str, names: tuple[str, ...]):
    """``package.name`` for a sparse transform (or ``package.sparse``), imported on first
    use: they need SciPy."""
    if name not in names and name != "sparse":
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    import importlib
    try:
        module = importlib.import_module(f"{package}.sparse")
        return module if name == "sparse" else getattr(module, name)
    except ImportError as error:
        raise ImportError(f"{package}.{name} needs SciPy: pip install dualad[sparse]"
                          ) from error


def __getattr__(name: str):
    return _sparse_attribute("dualad", name, _SPARSE)
