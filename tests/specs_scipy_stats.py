"""Spec rows: scipy.stats distributions and scipy.signal beyond specs_scipy.py.

Rows as in ``specs.py`` (which adds them to ``SPECS``).
"""

from __future__ import annotations

from specs import Spec  # noqa: F401

ROWS: list[Spec] = []
