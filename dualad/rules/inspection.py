"""Functions of an array's dtype, shape or printed form, and the savers.

None of these has a derivative. The dtype, shape and memory queries
(``np.result_type``, ``np.can_cast``, ``np.common_type``, ``np.tril_indices_from``,
``np.einsum_path``, ``np.shares_memory``, ...) and the printers (``np.array_str``,
``np.array_repr``) are evaluated on the value, as JAX evaluates them on a tracer's
abstract value. The savers (``np.save``,
``np.savez``, ``np.savetxt``, ...) refuse a Dual: they would store the value and
silently drop the derivative.
"""

from __future__ import annotations

import numpy as np

from ..primitive import register_function
from .shape import _on_primal

for _func in (np.result_type, np.can_cast, np.min_scalar_type, np.array_repr, np.array_str,
              np.diag_indices_from, np.tril_indices_from, np.triu_indices_from,
              np.einsum_path, np.ix_, np.packbits, np.unpackbits, np.ravel_multi_index,
              np.unravel_index, np.common_type, np.may_share_memory, np.shares_memory):
    _on_primal(_func)


def _refuse_saving(func):
    name = f"numpy.{func.__name__}"

    def implementation(*args, **kwargs):
        raise TypeError(
            f"{name} would store only the value of a Dual and drop its derivative. "
            f"Save dualad.primal_value(x) if the value is what you mean, or save "
            f"outside the differentiated function.")

    implementation.__name__ = func.__name__
    register_function(func, implementation)


for _func in (np.save, np.savez, np.savez_compressed, np.savetxt):
    _refuse_saving(_func)
