"""Compiled problems: ``dualad_gpu``, dualad's transforms compiled with ``jax.jit``,
against JAX's own transforms compiled the same way.

Each problem has one dualad implementation, ``"dualad_gpu"``, and two peers:
``"jax.jit"`` (JAX's transform of the same function written with ``jax.numpy``,
compiled) and ``"dualad-numpy"`` (dualad's uncompiled transform, NumPy arrays:
what compiling buys). The goal is to cost no more than JAX compiling its own
transforms, so the targets are ratios to ``jax.jit``'s time
(:attr:`Problem.versus_target`), except Helmholtz's, a ratio to the NumPy primal
like the uncompiled problems'. All six form the group ``compiled``
(``--only compiled``); :func:`device_problems`, the group ``device``, are the same
at an accelerator's sizes.

Both compiled implementations get their arrays already on the device
(``jax.device_put``) and are timed to ``jax.block_until_ready``; each factory
compiles (warms up) and checks once before timing. The primal, the ``jax.jit``
peer and the ``dualad-numpy`` peer are the factories of the uncompiled problems
of the same function (:mod:`~dualad.bench.forward`, :mod:`~dualad.bench.jacobians`,
:mod:`~dualad.bench.second_order`, :mod:`~dualad.bench.reverse`). Without jax (or
without ``dualad_gpu``) ``dualad_gpu`` and ``jax.jit`` raise
:class:`PeerUnavailable`: the rows show ``n/a`` and asv skips them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from .core import EXACT_RTOL, Factory, Problem, checked, import_jax, require
from .forward import (TEXTBOOK_GRADIENT, TEXTBOOK_POINT, jacfwd_textbook, jvp_sum_sin_exp,
                      sum_sin_exp, sum_sin_exp_inputs, textbook)
from .jacobians import _tanh_layer_inputs, jacfwd_tanh, tanh_layer
from .reverse import _helmholtz_inputs, helmholtz, helmholtz_problem
from .second_order import _rosen_inputs, hessian_rosenbrock, rosenbrock
from .taylor import laplacian_case, laplacian_problem

#: The size of the compiled Jacobian problem, n = 1000.
TANH_LAYER_SIZE = 1000


def compiled_factory(transform: Callable[[Any], Callable], inputs: Callable[[], tuple],
                     expected: Callable[[], Any], what: str, **check: Any) -> Factory:
    """A factory of ``dualad_gpu``'s thunk: ``transform(dualad_gpu)`` called on
    ``inputs()`` (NumPy arrays put on the device first, Python floats as they are),
    compiled by a first call checked against ``expected()`` (``check``: the
    options of :func:`checked`)."""

    def factory():
        jax = import_jax()
        dualad_gpu = require("dualad_gpu")
        call = transform(dualad_gpu)
        args = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in inputs()]
        return checked(lambda: jax.block_until_ready(call(*args)), expected(), what=what,
                       **check)

    return factory


def compiled_problem(name: str, title: str, compiled: Factory, base: dict[str, Factory],
                     numpy: str = "dualad", jit: str = "jax.jit", **fields: Any) -> Problem:
    """A problem of the ``compiled`` group: ``dualad_gpu`` is ``compiled``; the primal
    is ``base``'s, ``jax.jit`` is ``base[jit]``, ``dualad-numpy`` is ``base[numpy]``
    (``base``: the factories of the uncompiled problem of the same function).
    ``fields`` go to :class:`Problem`."""
    return Problem(
        name=name, title=title,
        factories={"primal": base["primal"], "dualad_gpu": compiled,
                   "jax.jit": base[jit], "dualad-numpy": base[numpy]},
        own=("dualad_gpu",), versus="jax.jit", group="compiled", **fields)


# -- 1: jacfwd of a dense layer, n = 1000 ------------------------------------------------


def compiled_jacfwd_tanh(n: int = TANH_LAYER_SIZE) -> Problem:
    """The Jacobian of :func:`tanh_layer` by ``dualad_gpu.jacfwd`` (all n seeds in one
    pass), against ``jax.jit(jax.jacfwd)``: n = 1000, target ≤ 1.2× ``jax.jit``."""
    compiled = compiled_factory(lambda dg: dg.jacfwd(tanh_layer),
                                lambda: _tanh_layer_inputs(n)[:2],
                                lambda: _tanh_layer_inputs(n)[3], "dualad_gpu.jacfwd",
                                rtol=EXACT_RTOL, scaled=True)
    return compiled_problem(
        f"compiled_jacfwd_tanh_{n}", f"jacfwd tanh(Wx)+x^3, n={n}", compiled,
        jacfwd_tanh(n).factories, target=None, versus_target=1.2)


# -- 2: JVP of the 10⁶-element sum of jvp_sum_sin_exp ----------------------------------


def compiled_jvp_sum_sin_exp(n: int = 10**6) -> Problem:
    """:func:`sum_sin_exp`'s JVP by ``dualad_gpu.jvp``: target ≤ 1.15× ``jax.jit(jax.jvp)``."""
    compiled = compiled_factory(lambda dg: lambda x, t: dg.jvp(sum_sin_exp, (x,), (t,)),
                                lambda: sum_sin_exp_inputs(n)[:2],
                                lambda: sum_sin_exp_inputs(n)[2:], "dualad_gpu.jvp")
    return compiled_problem(
        "compiled_jvp_sum_sin_exp" + ("" if n == 10**6 else f"_{n:.0e}".replace("e+0", "e")),
        f"jvp sum(sin(x)exp(-x^2)+log1p(x^2)), n={n:.0e}".replace("e+0", "e"), compiled,
        jvp_sum_sin_exp(n).factories, target=None, versus_target=1.15)


# -- 3: Hessian of Rosenbrock, n = 100 --------------------------------------------------


def compiled_hessian_rosenbrock(n: int = 100) -> Problem:
    """:func:`rosenbrock`'s Hessian by ``dualad_gpu.hessian`` (automatic mode): target
    ≤ 1.5× ``jax.jit(jax.hessian)``."""

    def expected():
        from scipy.optimize import rosen_hess

        return rosen_hess(_rosen_inputs(n)[0])

    compiled = compiled_factory(lambda dg: dg.hessian(rosenbrock),
                                lambda: _rosen_inputs(n)[:1], expected, "dualad_gpu.hessian",
                                rtol=EXACT_RTOL, scaled=True)
    return compiled_problem(
        f"compiled_hessian_rosenbrock_{n}", f"hessian rosenbrock, n={n}", compiled,
        hessian_rosenbrock(n).factories, target=None, versus_target=1.5)


# -- 4: gradient of the Helmholtz free energy, n = 50 ----------------------------------


def compiled_helmholtz(n: int = 50) -> Problem:
    """:func:`helmholtz`'s gradient by ``dualad_gpu.grad``: target ≤ 1.96× the NumPy
    primal (DiffSharp's published reverse-mode figure); ``jax.jit(jax.grad)`` for
    comparison (1.8× the primal in the reference measurement)."""
    compiled = compiled_factory(lambda dg: dg.grad(helmholtz),
                                lambda: _helmholtz_inputs(n)[:3],
                                lambda: _helmholtz_inputs(n)[4], "dualad_gpu.grad",
                                rtol=1e-11, scaled=True)
    return compiled_problem(
        f"compiled_helmholtz_{n}", f"grad helmholtz, n={n}", compiled,
        helmholtz_problem(n).factories, numpy="dualad-rev", target=1.96,
        reference={"jax.jit": 1.8})


# -- 5: per-call overhead of a compiled 2-variable gradient ---------------------------


def compiled_grad_textbook() -> Problem:
    """:func:`textbook`'s gradient at (2, 5), Python floats in, by
    ``dualad_gpu.grad(f, argnums=(0, 1))``: the per-call overhead of a compiled
    derivative, reported against ``jax.jit(jax.grad)`` (no target)."""
    compiled = compiled_factory(lambda dg: dg.grad(textbook, argnums=(0, 1)),
                                lambda: TEXTBOOK_POINT, lambda: TEXTBOOK_GRADIENT,
                                "dualad_gpu.grad")
    return compiled_problem(
        "compiled_grad_textbook", "grad ln(x1)+x1*x2-sin(x2), per call", compiled,
        jacfwd_textbook().factories, target=None)


# -- 6: the forward Laplacian of a tanh MLP --------------------------------------------


def compiled_laplacian_mlp() -> Problem:
    """:func:`~dualad.bench.taylor.mlp`'s Laplacian by ``dualad_gpu.laplacian`` (the
    collapsed forward Laplacian), against ``jax.jit`` of JAX's Hessian trace; no target."""
    f, x, reference = laplacian_case()
    compiled = compiled_factory(lambda dg: dg.laplacian(f), lambda: (x,), reference,
                                "dualad_gpu.laplacian", rtol=1e-9)
    return compiled_problem("compiled_laplacian_mlp", f"Laplacian of a tanh MLP, D={x.size}",
                            compiled, laplacian_problem().factories, jit="jax-hessian",
                            target=None)


# -- the same at an accelerator's sizes ----------------------------------------------


def device_problems() -> list[Problem]:
    """The group ``device`` (run on request, ``--only device``): the compiled problems
    at the sizes an accelerator is made for, to run where JAX has a GPU. Their names
    begin with ``device_`` instead of ``compiled_``."""
    problems = [compiled_jacfwd_tanh(4000), compiled_jvp_sum_sin_exp(10**7),
                compiled_hessian_rosenbrock(1000), compiled_helmholtz(1000),
                compiled_laplacian_mlp(), compiled_grad_textbook()]
    return [replace(p, name=p.name.replace("compiled_", "device_", 1), group="device")
            for p in problems]
