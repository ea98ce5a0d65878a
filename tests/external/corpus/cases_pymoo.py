"""pymoo's test problems (those ``get_problem`` builds without arguments).

Each problem gives two cases: ``problem.evaluate(x)`` on a 1-D ``x`` (package
``pymoo``), and ``problem.evaluate(x[None, :])`` on one row of a population
(package ``pymoo-2d``, written to its own results file). The output is F, then G
and H where the problem has constraints, concatenated. The JAX reference calls
the swapped ``_evaluate`` on a row directly, with pymoo's lazy ``anp`` backend
replaced by ``jax.numpy`` (``autograd.numpy`` for the autograd column), because
``Problem.evaluate`` converts its output with ``np.array``.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Iterator

import numpy as np

from harness import Case
from jax_swap import JAX, swap_instance

# Knapsack and MODAct need constructor arguments; ZDT5 is a problem of bit strings.
SKIPPED = {"knp", "zdt5", "modact"}


def _problem_names() -> list[str]:
    from pymoo.problems import get_problem

    source = inspect.getsource(get_problem)
    return re.findall(r'^\s+"([a-z0-9_^\-]+)":', source, re.M)


def cases() -> Iterator[Case]:
    from pymoo.problems import get_problem

    rng = np.random.default_rng(12345)

    def make(name):
        problem = get_problem(name)
        xl, xu = np.asarray(problem.xl, float), np.asarray(problem.xu, float)
        xl = np.where(np.isfinite(xl), xl, -5.0)
        xu = np.where(np.isfinite(xu), xu, 5.0)
        x = xl + (xu - xl) * rng.uniform(0.3, 0.7, size=xl.size)

        def f(z):
            out = problem.evaluate(z)
            if isinstance(out, tuple):
                out = np.concatenate([np.ravel(a) for a in out])
            return out

        def make_jax(backend=JAX):
            xnp = backend.numpy
            memo = {}
            swapped = swap_instance(problem, "pymoo", memo, backend)
            for original, copied in list(memo.items()):
                if isinstance(original, types.FunctionType):
                    for key, value in original.__globals__.items():
                        if type(value).__name__ == "LazyBackend":
                            copied.__globals__[key] = xnp

            def g(z):
                out = {}
                swapped._evaluate(z[None, :], out)
                keys = (["F"] + (["G"] if problem.n_ieq_constr > 0 else [])
                        + (["H"] if problem.n_eq_constr > 0 else []))
                # xnp.array, not asarray: autograd has no derivative for asarray.
                return xnp.concatenate([xnp.ravel(xnp.array(out[k])) for k in keys])
            return g
        return f, x, make_jax

    def make_2d(name):
        f, x, make_jax = make(name)
        return (lambda z: f(z[None, :])), x, make_jax

    for name in _problem_names():
        if name in SKIPPED:
            continue
        yield Case("pymoo", name, lambda name=name: make(name))
        yield Case("pymoo-2d", name + " [evaluate(x[None,:])]", lambda name=name: make_2d(name))
