"""A package's function with ``numpy`` swapped for ``autograd.numpy``: the autograd column.

The same swap as :mod:`jax_swap` (whose machinery does the work) with other
replacement modules: NumPy and ``numpy.linalg`` become ``autograd.numpy`` and
``autograd.numpy.linalg``; ``scipy.special``, ``scipy.linalg`` and ``scipy.stats``
become ``autograd.scipy.special``, ``autograd.scipy.linalg`` and
``autograd.scipy.stats``; a NumPy or SciPy function imported by name becomes
autograd's function of the same name where there is one. As under JAX, code that
writes into an array, calls ``float()`` or ``math``, or converts with ``np.array``
fails on autograd's boxes, and the case is not counted as run by autograd.

A case's ``make_jax(backend)`` builds its function for either backend: ``make_jax()``
for JAX, ``make_jax(AUTOGRAD)`` here.
"""

from __future__ import annotations

import autograd.numpy as anp
import autograd.scipy.linalg as asl
import autograd.scipy.special as ass
import autograd.scipy.stats as ast

import jax_swap
from jax_swap import Backend

AUTOGRAD = Backend("autograd", anp, ass, asl, ast, "_autograd")


def swap_func(fn, root: str, memo: dict):
    """``fn`` with ``autograd.numpy`` globals (:func:`jax_swap.swap_func`)."""
    return jax_swap.swap_func(fn, root, memo, AUTOGRAD)


def swap_class(cls: type, root: str, memo: dict) -> type:
    """A subclass of ``cls`` with ``autograd.numpy`` methods (:func:`jax_swap.swap_class`)."""
    return jax_swap.swap_class(cls, root, memo, AUTOGRAD)


def swap_instance(obj, root: str, memo: dict | None = None):
    """A copy of ``obj`` with ``autograd.numpy`` methods (:func:`jax_swap.swap_instance`)."""
    return jax_swap.swap_instance(obj, root, memo, AUTOGRAD)
