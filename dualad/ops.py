"""Every primitive of the rule table in one namespace (the counterpart of ``jax.lax``).

Rules are written with these functions rather than with ``numpy``: on plain
arrays each runs its NumPy kernel; on Duals it applies its derivative rule.
"""

from .rules.elementwise import *  # noqa: F401,F403
from .rules.linalg import (adjugate, det, eigh_vectors, eigvalsh, einsum, inv,  # noqa: F401
                           log_abs_det, matmul, sign_of_det, solve)
from .rules.reductions import amax, amin, cumprod, cumsum, l2_norm, prod, sum_  # noqa: F401
from .rules.shape import (batched_getitem, batched_index_add, broadcast_to,  # noqa: F401
                          concatenate, getitem, index_add, reshape, transpose)
from .rules.special import *  # noqa: F401,F403  (scipy.special primitives when scipy imports)
