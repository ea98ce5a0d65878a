"""Tools to test derivatives: :func:`check_grads`, and hypothesis strategies.

:func:`check_grads` checks a function's forward and reverse derivatives, to any
order, against finite differences and the adjoint identity; use it on the
functions you differentiate and on the primitives you register.
:mod:`dualad.testing.strategies` draws inputs for property tests of your own
rules; it needs `hypothesis <https://hypothesis.readthedocs.io>`_, which dualad
itself does not (import it explicitly: ``from dualad.testing import strategies``).

Examples
--------
>>> import numpy as np
>>> from dualad.testing import check_grads
>>> check_grads(np.tanh, (np.linspace(-1.0, 1.0, 5),), order=2)
"""

from ._check_grads import check_grads

__all__ = ["check_grads"]
