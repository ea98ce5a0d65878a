"""opfunu's benchmark functions: every named one, and CEC 2005, 2017 and 2022 at D=10.

Each is evaluated at a random point in the middle 40% of its box (seeded, drawn in
the order of the cases).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from harness import Case
from jax_swap import JAX, swap_instance

CEC_YEARS = ("2005", "2017", "2022")
CEC_DIMENSION = 10


def cases() -> Iterator[Case]:
    import opfunu

    rng = np.random.default_rng(12345)
    functions = [("name_based." + cls.__name__, cls, None)
                 for cls in sorted(opfunu.get_all_name_based_functions(),
                                   key=lambda c: c.__name__)]
    functions += [("cec." + cls.__name__, cls, CEC_DIMENSION)
                  for cls in opfunu.get_all_cec_based_functions()
                  if cls.__name__[-4:] in CEC_YEARS]
    for name, cls, ndim in functions:
        def make(cls=cls, ndim=ndim):
            problem = cls(ndim=ndim) if ndim else cls()
            lb, ub = problem.lb, problem.ub
            x = lb + (ub - lb) * rng.uniform(0.3, 0.7, size=lb.size)

            def make_jax(backend=JAX):
                swapped = swap_instance(problem, "opfunu", backend=backend)
                return lambda z: swapped.evaluate(z)
            return (lambda z: problem.evaluate(z)), x, make_jax
        yield Case("opfunu", name, make)
