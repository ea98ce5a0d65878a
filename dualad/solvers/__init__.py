"""SciPy's solvers differentiated: root finding and minimisation (``scipy.optimize``),
ODEs and quadratures (``scipy.integrate``).

Each solver is a primitive whose kernel is SciPy's own; its JVP differentiates the
user's callback with the transforms (the implicit-function theorem, the sensitivity
system), so these rules sit above :mod:`dualad.forward` and :mod:`dualad.reverse`
and register with the rule table's SciPy dispatch (:mod:`dualad.rules.scipy_functions`)
when dualad is imported.
"""

from . import scipy_integrate, scipy_optimize  # noqa: F401
from . import scipy_ivp, scipy_minimize, scipy_quadrature  # noqa: F401,I001  (after scipy_optimize)
from ..rules.scipy_functions import install_all

install_all()  # the dispatchers of the solvers declared above
