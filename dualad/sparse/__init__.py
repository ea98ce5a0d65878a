"""Sparse Jacobians and Hessians: detect the pattern, colour it, compute only the nonzeros.

* :func:`jacobian_sparsity`, :func:`hessian_sparsity` — the pattern, found by
  running the function once on Duals whose tangents are dependency sets
  (:mod:`dualad.sparse.patterns`), from the same rule table as every mode;
* :mod:`dualad.sparse.coloring` — column, row, star and distance-1 colourings, and
  the decompressions;
* :func:`sparse_jacobian`, :func:`sparse_hessian` — ``scipy.sparse`` results
  from one pass per colour;
* :mod:`dualad.sparse.laplacian` — ``dualad.laplacian(f, method="sparse")``, one
  direction per colour of the Hessian's graph.

Needs SciPy (``pip install dualad[sparse]``).
"""

from .coloring import column_coloring, distance1_coloring, row_coloring, star_coloring
from .detection import hessian_sparsity, jacobian_sparsity
from .patterns import ValueDependentError
from .transforms import (PatternChanged, SparseHessian, SparseJacobian, sparse_hessian,
                         sparse_jacobian)

__all__ = [
    "jacobian_sparsity",
    "hessian_sparsity",
    "sparse_jacobian",
    "sparse_hessian",
    "SparseJacobian",
    "SparseHessian",
    "column_coloring",
    "row_coloring",
    "star_coloring",
    "distance1_coloring",
    "ValueDependentError",
    "PatternChanged",
]
