"""Hypothesis strategies for property tests of derivative rules.

Requires `hypothesis <https://hypothesis.readthedocs.io>`_ (``pip install
hypothesis``); dualad itself does not, and ``import dualad`` never loads this
module.

Two kinds of array strategies, for two purposes:

* :func:`arrays` is hypothesis-native: elements shrink to simple values and may
  repeat or sit on the ends of the domain. Use it to hunt edge cases (ties,
  zeros, boundaries) in a rule's conventions.
* :func:`points` draws *generic* points: hypothesis draws a seed and the array is
  sampled from the domain by NumPy (uniform for an interval, or your own
  sampler), so elements are distinct and away from the domain's ends. Use it
  to compare a rule with finite differences, as :func:`dualad.testing.check_grads`
  does, where ties and kinks would give false failures.

Examples
--------
>>> import numpy as np
>>> from hypothesis import given, settings
>>> from dualad.testing import check_grads, strategies as dst
>>> @settings(max_examples=5, deadline=None)
... @given(x=dst.points((0.1, 3.0), dst.shapes(max_dims=2)))
... def test_log_rule(x):
...     check_grads(np.log, (x,), order=2)
>>> test_log_rule()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # pragma: no cover - hypothesis is a test dependency
    raise ImportError("dualad.testing.strategies needs hypothesis: pip install hypothesis") \
        from e

__all__ = ["arrays", "broadcastable_shapes", "points", "shapes"]

Shape = tuple[int, ...]
#: ``(lo, hi)`` for uniform draws, or a sampler ``(rng, shape) -> array``.
Domain = Union[tuple[float, float], Callable[[np.random.Generator, Shape], Any]]


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
           max_side: int = 4) -> st.SearchStrategy[Shape]:
    """Array shapes, including ``()`` when ``min_dims`` is 0.

    >>> from hypothesis import given, settings
    >>> from dualad.testing.strategies import shapes
    >>> @settings(max_examples=10, deadline=None)
    ... @given(shapes(max_dims=2))
    ... def test_shapes(shape):
    ...     assert len(shape) <= 2 and all(1 <= n <= 4 for n in shape)
    >>> test_shapes()
    """
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcastable_shapes(n: int, min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
                         max_side: int = 4) -> st.SearchStrategy[tuple[Shape, ...]]:
    """Tuples of ``n`` shapes that broadcast together (sides of 1, missing axes).

    >>> import numpy as np
    >>> from hypothesis import given, settings, strategies as st
    >>> from dualad.testing import check_grads
    >>> from dualad.testing.strategies import broadcastable_shapes, points
    >>> @settings(max_examples=5, deadline=None)
    ... @given(broadcastable_shapes(2).flatmap(
    ...     lambda s: st.tuples(points((0.5, 2.0), s[0]), points((-1.0, 1.0), s[1]))))
    ... def test_power(xy):
    ...     check_grads(np.power, xy, order=1)
    >>> test_power()
    """
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=min_side,
        max_side=max_side).map(lambda b: tuple(b.input_shapes))


def arrays(shape: Shape | st.SearchStrategy[Shape] | None = None, min_value: float = -2.0,
           max_value: float = 2.0, dtype: Any = np.float64, *, exclude_min: bool = False,
           exclude_max: bool = False, unique: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Float arrays with finite elements in ``[min_value, max_value]``, hypothesis-native.

    ``shape`` is a shape, a strategy of shapes, or None for :func:`shapes`.
    Elements shrink towards simple values and may repeat (set ``unique``) or sit
    on the ends of the domain (set ``exclude_min``/``exclude_max``, e.g. for
    ``np.log`` on ``(0, 10]``). For float32, the ends are rounded inwards to
    float32 numbers.

    >>> import numpy as np
    >>> from hypothesis import given, settings
    >>> from dualad.testing.strategies import arrays
    >>> @settings(max_examples=10, deadline=None)
    ... @given(arrays((2, 3), 0.0, 1.0, np.float32, exclude_min=True))
    ... def test_arrays(x):
    ...     assert x.shape == (2, 3) and x.dtype == np.float32
    ...     assert np.all((x > 0) & (x <= 1))
    >>> test_arrays()
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"arrays draws float arrays, got dtype {dtype}")
    if not min_value <= max_value:
        raise ValueError(f"empty domain [{min_value}, {max_value}]")
    lo, hi = _inward(min_value, max_value, dtype)
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                         allow_subnormal=False, exclude_min=exclude_min,
                         exclude_max=exclude_max, width=8 * dtype.itemsize)
    return hnp.arrays(dtype, shapes() if shape is None else shape, elements=elements,
                      unique=unique)


def points(domain: Domain = (-2.0, 2.0), shape: Shape | st.SearchStrategy[Shape] = (), *,
           dtype: Any = np.float64,
           avoid: Callable[[np.ndarray], bool] | None = None) -> st.SearchStrategy[np.ndarray]:
    """Generic points of ``domain``: float arrays sampled by NumPy from a drawn seed.

    ``domain`` is an open interval ``(lo, hi)`` (uniform draws) or a sampler
    ``(rng, shape) -> array`` — e.g. well-conditioned matrices for
    ``np.linalg.solve``. ``shape`` is a shape or a strategy of shapes.
    ``avoid(x)`` returning True rejects a point (too close to a kink or a tie).
    Examples shrink towards seed 0, not towards simple values.

    >>> import numpy as np
    >>> from hypothesis import given, settings
    >>> from dualad.testing import check_grads
    >>> from dualad.testing.strategies import points
    >>> def spd(rng, shape):
    ...     a = rng.standard_normal(shape)
    ...     return a @ a.T + shape[-1] * np.eye(shape[-1])
    >>> @settings(max_examples=5, deadline=None)
    ... @given(a=points(spd, (3, 3)), b=points((-1.0, 1.0), (3,)))
    ... def test_solve(a, b):
    ...     check_grads(np.linalg.solve, (a, b))
    >>> test_solve()
    """
    dtype = np.dtype(dtype)
    if not callable(domain):
        lo, hi = (float(d) for d in domain)
        if not lo < hi:
            raise ValueError(f"empty domain ({lo}, {hi})")
    shape_st = shape if isinstance(shape, st.SearchStrategy) else st.just(tuple(shape))

    def sample(pair) -> np.ndarray:
        seed, shp = pair
        rng = np.random.default_rng(seed)
        if callable(domain):
            x = domain(rng, shp)
        else:
            x = rng.uniform(lo, hi, shp)
            x = np.where(x <= lo, np.nextafter(lo, hi), x)  # keep the interval open
        return np.asarray(x, dtype)

    drawn = st.tuples(st.integers(0, 2**32 - 1), shape_st).map(sample)
    return drawn if avoid is None else drawn.filter(lambda x: not avoid(x))


def _inward(lo: float, hi: float, dtype: np.dtype) -> tuple[float, float]:
    """``[lo, hi]`` shrunk to the nearest numbers representable in ``dtype``."""
    lo_d, hi_d = dtype.type(lo), dtype.type(hi)
    if float(lo_d) < lo:
        lo_d = np.nextafter(lo_d, dtype.type(np.inf))
    if float(hi_d) > hi:
        hi_d = np.nextafter(hi_d, dtype.type(-np.inf))
    return float(lo_d), float(hi_d)
