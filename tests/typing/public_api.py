"""A user's strictly typed script: ``tests/test_typing.py`` runs ``mypy --strict`` on it
against dualad's annotations (``py.typed``). The lines marked ``type: ignore[...]`` are
misuses the annotations must catch (mypy --strict reports an ignore that is not used)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

import dualad

Array = npt.NDArray[np.float64]


def model(x: Array) -> Any:
    return np.tanh(np.cumsum(x)) * x[0]


def energy(x: Array) -> Any:
    return np.sum(np.cos(x) * x ** 2)


@dataclasses.dataclass
class Params:
    w: Array
    b: float


x = np.linspace(0.1, 1.0, 4)
jac: Callable[..., Any] = dualad.jacfwd(model, argnums=0, chunk_size=2, progress=False)
J = jac(x)
g = dualad.grad(energy)(x)
value, gradient = dualad.value_and_grad(energy, has_aux=False)(x)
H = dualad.hessian(energy, mode="hyperdual")(x)
y, t = dualad.jvp(model, (x,), (np.ones(4),))
out, pullback = dualad.vjp(model, x)
cotangents = pullback(np.ones(4))
primal, f_jvp = dualad.linearize(model, x)
d = dualad.derivative(np.sin, order=2)(0.5)
series = dualad.jet(np.exp, (0.0,), ([1.0, 0.0],))
lap = dualad.laplacian(energy, method="exact")(x)
S = dualad.sparse_jacobian(model)(x)
with ThreadPoolExecutor(2) as pool:
    many = dualad.ensemble(dualad.jacfwd(model), np.ones((3, 4)), executor=pool, min_seconds=0)
p = dualad.register_dataclass(Params)
kept = dualad.stop_gradient(x)



def misuses() -> None:
    """Never called (importing this module runs the rest)."""
    dualad.jacfwd(model, argnums="0")  # type: ignore[arg-type]
    dualad.grad(energy, has_aux="no")  # type: ignore[arg-type]
    dualad.jvp(model, x, 1.0)  # type: ignore[arg-type]
    dualad.hessian(energy, chunk_size=2.5)  # type: ignore[arg-type]
