"""The rule table, grouped by family.

Importing this package declares every primitive and registers the NumPy
functions built on them; ``dualad.ops`` gathers the primitives in one
namespace for rules to call.
"""

from . import elementwise, linalg, reductions, shape  # noqa: F401
from . import determinants  # noqa: E402,F401,I001  (on linalg)
from . import special  # noqa: E402,F401,I001  (scipy.special's rules: once it is imported)
from .. import ops as _ops
from ..dual import Dual as _Dual
from ..operands import object_loop_method as _object_loop_method
from ..primitive import UFUNC_HANDLERS as _UFUNC_HANDLERS


def _fill_ops() -> None:
    """Gather the primitives in :mod:`dualad.ops`, and give the Dual a method for each
    ufunc with a rule so far (``x.sin()`` of an object array of Duals)."""
    names = {name: getattr(elementwise, name) for name in elementwise.__all__}
    names.update({name: getattr(linalg, name) for name in (
        "eigh_vectors", "eigvalsh", "einsum", "inv", "matmul", "solve")})
    names.update({name: getattr(determinants, name) for name in (
        "adjugate", "det", "log_abs_det", "sign_of_det")})
    names.update({name: getattr(reductions, name) for name in (
        "amax", "amin", "cumprod", "cumsum", "l2_norm", "prod", "sum_")})
    names.update({name: getattr(shape, name) for name in (
        "batched_getitem", "batched_index_add", "broadcast_to", "concatenate", "getitem",
        "index_add", "reshape", "transpose")})
    names.update({name: getattr(special, name) for name in special.__all__})
    vars(_ops).update(names)
    for ufunc in list(_UFUNC_HANDLERS):
        if not hasattr(_Dual, ufunc.__name__):
            setattr(_Dual, ufunc.__name__, _object_loop_method(ufunc))


_fill_ops()  # (before the families below, as when dualad.dual loaded dualad.ops)
from . import building, calculus, decompositions, norms, statistics  # noqa: E402,F401,I001
from . import indexing, inspection, linalg_namespace, polynomials  # noqa: E402,F401,I001
from . import scipy_functions  # noqa: E402,F401,I001  (SciPy's functions; imports no SciPy)
from . import scipy_linalg, scipy_stats  # noqa: E402,F401,I001  (they declare their rules with it)
from . import scipy_distributions, scipy_matrices, scipy_signal, scipy_special  # noqa: E402,F401,I001
from . import scipy_distributions_extra, scipy_sparse  # noqa: E402,F401,I001
scipy_functions.install_all()  # (SciPy's solvers: dualad.solvers, above the transforms)
from . import complex_numbers  # noqa: E402,F401,I001  (after selection: np.real, np.abs, ...)
from . import fft  # noqa: E402,F401,I001  (np.fft)
