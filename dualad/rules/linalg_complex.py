"""Complex matrices in the linear-algebra rules: conjugates, real parts, and the
Hermitian matrix LAPACK reads from one triangle.

Each helper is the identity on real values (no primitive is recorded), so a rule
written with ``mH`` where the real rule had a transpose is the real rule for real
matrices and JAX's rule for complex ones.
"""

from __future__ import annotations

import numpy as np

from ..operands import is_complex
from .elementwise import absolute as _real_absolute
from .elementwise import conjugate, where
from .shape import _swapaxes, shape_of


def conj(x):
    """``x̄`` for complex ``x``; ``x`` itself for real (no primitive recorded)."""
    return conjugate(x) if is_complex(x) else x


def mH(x):
    """The conjugate transpose of the last two axes (the transpose for real ``x``)."""
    return _swapaxes(conj(x), -1, -2)


def real(x):
    """Re ``x`` for complex ``x`` (an ℝ-linear primitive); ``x`` itself for real."""
    if not is_complex(x):
        return x
    from .complex_numbers import real as real_part  # declared after the rule table
    return real_part(x)


def absolute(x):
    """|x|, of complex x too (hypot of its parts)."""
    if not is_complex(x):
        return _real_absolute(x)
    from .complex_numbers import absolute as complex_absolute  # declared after the table
    return complex_absolute(x)


def imag(x):
    """Im ``x`` of complex ``x`` (an ℝ-linear primitive)."""
    from .complex_numbers import imag as imaginary_part
    return imaginary_part(x)


def hermitian_part(a, lower: bool = True):
    """The symmetric (Hermitian) matrix LAPACK reads from ``a`` for eigh, cholesky, ...:
    its lower (or upper) triangle, mirrored (conjugated, with the real part of the
    diagonal, for complex ``a``)."""
    n = shape_of(a)[-1]
    part = np.tril if lower else np.triu
    inside, strictly = part(np.ones((n, n), dtype=bool)), part(np.ones((n, n), dtype=bool),
                                                               -1 if lower else 1)
    off = where(strictly, a, 0.0)
    if is_complex(a):
        return real(where(np.eye(n, dtype=bool), a, 0.0)) + off + mH(off)
    return where(inside, a, 0.0) + _swapaxes(off, -1, -2)
