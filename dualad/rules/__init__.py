"""The rule table, grouped by family.

Importing this package declares every primitive and registers the NumPy
functions built on them; ``dualad.ops`` gathers the primitives in one
namespace for rules to call.
"""

from . import elementwise, linalg, reductions, shape  # noqa: F401
from . import building, calculus, decompositions, norms, statistics  # noqa: F401,I001
from . import indexing, inspection, linalg_namespace, polynomials  # noqa: F401,I001
from . import special  # noqa: F401,I001  (scipy.special's rules: once it is imported)
from . import scipy_functions  # noqa: F401,I001  (SciPy's functions; imports no SciPy)
from . import complex_numbers  # noqa: F401,I001  (after selection: np.real, np.abs, ...)
from . import fft  # noqa: F401,I001  (np.fft)
