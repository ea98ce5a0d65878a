"""Spec rows: Polynomials and numpy.linalg's other names.

Rows as in ``specs.py`` (which adds them to ``SPECS``).
"""

from __future__ import annotations

from specs import Spec  # noqa: F401

ROWS: list[Spec] = []
