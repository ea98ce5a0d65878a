"""Spec rows: SciPy functions called unchanged (special, stats, linalg, signal).

Rows as in ``specs.py`` (which adds them to ``SPECS``); give each row its
``jax=`` counterpart where JAX has the function.
"""

from specs import Spec  # noqa: F401

ROWS: list[Spec] = []
