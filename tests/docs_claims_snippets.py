"""What the rows of tests/test_docs_claims.py share: the row type, the values and the
snippets that do what a page says (kept apart from the table, which stays readable)."""


import math  # noqa: F401 (for the table)
import subprocess
import sys
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats
from numpy import zeros
from numpy import zeros as z

import dualad
import dualad.progress
import dualad.sparse

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Claim:
    page: str                          # README.md or docs/<page>.md
    quote: str                         # the claim, as on the page (line breaks aside)
    run: Callable[[], Any]             # does what the claim says
    raises: type[BaseException] | None = None   # None: ``run`` must succeed
    match: str | None = None           # a regular expression the error message matches
    check: Callable[[Any], Any] | None = None   # what ``run`` returns, when it succeeds
    needs: str | None = None           # a module the row needs (skipped without it)
    bug: str | None = None             # the code does not keep the claim yet


# -- what the snippets share -------------------------------------------------------------

X2 = np.array([0.5, 2.0])
X3 = np.array([0.5, 1.0, 2.0])
X4 = np.array([1.0, 2.0, 3.0, 4.0])
S = np.array([[2.0, 0.5], [0.5, 1.0]])
OUTSIDE = np.zeros(2)                  # a float array made outside any transform
DUAL = dualad.Dual(X2, np.ones(2))


class Opaque:
    """A class no pytree opens."""


def close(expected) -> Callable[[Any], bool]:
    return lambda got: np.allclose(np.asarray(got), expected)


def seen_inside(probe: Callable[[Any], Any], x=X2) -> Any:
    """What ``probe(x)`` answers inside a transform (the derivative is thrown away)."""
    answers = []

    def f(x):
        answers.append(probe(x))
        return x * 1.0

    dualad.jacfwd(f)(x)
    return answers[0]


def cause_of(run: Callable[[], Any]) -> type[BaseException] | None:
    """The type of the cause of the ValueError ``run`` raises."""
    with pytest.raises(ValueError) as info:
        run()
    return type(info.value.__cause__)


def with_warnings(run: Callable[[], Any]) -> tuple[Any, set[type[Warning]]]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        result = run()
    return result, {w.category for w in said}


def rhs(y):
    return np.array([y[1], -y[0]])


def rhs_filled(y):
    dy = np.zeros(2)
    dy[0] = y[1]
    dy[1] = -y[0]
    return dy


def rhs_from_numpy_import(y):
    dy = zeros(2)
    dy[0] = y[1]
    return dy


def rhs_other_name(y):
    dy = z(2)
    dy[0] = y[1]
    return dy


# The conventions page: code run by exec gets NumPy's arrays, not arrays made to be filled.
EXECED: dict = {"np": np}
exec(  # noqa: S102
    "def rhs_execed(y):\n    dy = np.zeros(2)\n    dy[0] = y[1]\n    return dy\n", EXECED)


def write_outside_whole(x):
    OUTSIDE[:] = x
    return x


def write_outside_element(x):
    OUTSIDE[0] = x[0]
    return x


def write_into_transposed_view(x):
    out = np.zeros((2, 2))
    view = out.T
    view[0, 1] = x[0]
    return out


def write_twice(x):
    out = np.zeros_like(x)
    out[[0, 0]] = x[:2]
    return out


def aliasing(x):
    y = x * 1.0
    z = y
    z += 1
    return y


def caller_array_after_a_write() -> np.ndarray:
    u = np.array([1.0, 2.0])

    def f(v):
        v[0] = 5 * v[1]
        return v

    dualad.jacfwd(f)(u)
    return u


def kept_and_used_again():
    kept = {}

    def f(x):
        if "scale" not in kept:
            kept["scale"] = np.sum(x ** 2)
        return kept["scale"] * x[0]

    dualad.grad(f)(X2)
    return dualad.grad(f)(X2)


def out_comparison_mask() -> np.ndarray:
    mask = np.zeros(2, dtype=bool)
    dualad.jacfwd(lambda x: (np.greater_equal(x, 1.5, out=mask), x * 1.0)[1])(X2)
    return mask


def object_array_det(x):
    m = np.empty((2, 2), dtype=object)
    m[0, 0], m[0, 1], m[1, 0], m[1, 1] = x[0], 0.1, 0.1, x[1]
    return np.linalg.det(m)


def singular_root(p):
    def residual(x):
        return np.array([x[0] + x[1] - p[0], 2 * x[0] + 2 * x[1] - 2 * p[0]])

    return scipy.optimize.root(residual, np.zeros(2)).x


def one_bfgs_step(p):
    return scipy.optimize.minimize(lambda x: np.sum((x - p) ** 2) + np.sum(x ** 4),
                                   np.zeros(2), method="BFGS", options={"maxiter": 1}).x


def nan_safe_where_log() -> np.ndarray:
    with np.errstate(divide="ignore"):   # log(0) in the branch not taken
        return dualad.grad(lambda x: np.sum(np.where(x > 0, np.log(x), 0.0)),
                           nan_safe=True)(np.array([0.0, 2.0]))


def pull_back_twice():
    _, pullback = dualad.vjp(np.sin, X2)
    return pullback(np.ones(2))[0], pullback(2 * np.ones(2))[0]


def passes_of_jacfwd(n: int, **options) -> int:
    """How many times ``jacfwd`` runs a function of ``n`` inputs."""
    calls = []

    def f(x):
        calls.append(1)
        return np.tanh(x)

    dualad.jacfwd(f, **options)(np.linspace(0.1, 1.0, n))
    return len(calls)


def on_two_threads_and_serially(**options) -> tuple[np.ndarray, np.ndarray]:
    def f(x):
        return np.tanh(np.outer(x, x) @ x)

    x = np.linspace(0.1, 1.0, 12)
    with ThreadPoolExecutor(2) as pool:
        spread = dualad.jacfwd(f, chunk_size=3, executor=pool, **options)(x)
    return spread, dualad.jacfwd(f, chunk_size=3)(x)


def replayed_and_interpreted() -> tuple[np.ndarray, np.ndarray]:
    def f(x):
        return np.sum(np.exp(np.sin(x) * x[::-1])) / np.linalg.norm(x)

    x = np.linspace(0.1, 1.0, 5)
    grad = dualad.grad(f)
    results = [grad(x) for _ in range(5)]        # recorded, then replayed
    return results[-1], dualad.grad(f, replay=False)(x)


def imported_scipy_modules() -> str:
    script = "import sys, dualad; print([m for m in sys.modules if m.startswith('scipy')])"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout.strip()


def root_and_scipy_root() -> tuple[np.ndarray, np.ndarray]:
    def solution(p):
        return scipy.optimize.root(lambda x: x ** 3 + x - p, np.ones(2), tol=1e-8).x

    p = np.array([2.0, 10.0])
    value, _ = dualad.jvp(solution, (p,), (np.ones(2),))
    return value, solution(p)


def branch_on_value(x):
    if np.max(x) > 1:
        return x ** 2
    return x


def pattern_changed_since_prepare():
    couple = [False]

    def f(u):
        return u ** 2 + u[::-1] if couple[0] else u ** 2

    u = np.arange(1.0, 5.0)
    prepared = dualad.sparse_jacobian(f).prepare(u)
    couple[0] = True
    return prepared(u)


def inner_executor(min_seconds: float | None):
    options = {} if min_seconds is None else {"min_seconds": min_seconds}
    with ThreadPoolExecutor(2) as pool:
        def outer(p):
            jac = dualad.jacfwd(lambda x: np.sin(p * x), executor=pool, chunk_size=1,
                                **options)
            return np.sum(jac(np.ones(3)))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return dualad.grad(outer)(0.7)


def jnp_sin(x):
    import jax.numpy as jnp
    return jnp.sin(x)


def gpu(transform: str, f: Callable, *args, **options):
    import dualad_gpu
    return getattr(dualad_gpu, transform)(f, **options)(*args)


def ivp_end(p):
    return scipy.integrate.solve_ivp(lambda t, y: -p * y, (0.0, 1.0), np.ones(2),
                                     rtol=1e-10, atol=1e-12).y[:, -1]


def x64_after_a_call() -> bool:
    """In a fresh interpreter: other tests turn JAX's x64 on for their whole process."""
    script = ("import numpy as np, jax, dualad_gpu\n"
              "dualad_gpu.jacfwd(np.sin)(np.array([0.5, 2.0]))\n"
              "print(jax.config.jax_enable_x64)")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    return run.stdout.strip() == "True"


BAD_SHAPE = dualad.defprimitive("docs_claims_bad_shape", lambda x: 2.0 * x,
                                jvp=lambda primals, tangents, ans: tangents[0][..., :1])
NESTED_REFUSED = "Dual of an enclosing transform"

# -- the claims ---------------------------------------------------------------------------
