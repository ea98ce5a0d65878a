"""Every primitive of the rule table in one namespace (the counterpart of ``jax.lax``).

Rules are written with these functions rather than with ``numpy``: on plain
arrays each runs its NumPy kernel; on Duals it applies its derivative rule.

This module imports nothing: the rule table fills it as it loads
(:mod:`dualad.rules`), so the number types below the table (the Dual's operators,
the tangents' helpers) call the primitives through it, at call time, without
importing the table.
"""

import typing as _typing


def __getattr__(name: str) -> _typing.Any:
    raise AttributeError(f"dualad.ops has no primitive {name!r}: the rule table "
                         "(dualad.rules) declares the primitives when dualad is imported")
