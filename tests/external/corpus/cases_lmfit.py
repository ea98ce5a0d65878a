"""lmfit's lineshapes, each differentiated with respect to x and to its parameters.

With respect to x: at five positive points (lognormal and powerlaw need x > 0), at
the parameters of :data:`PARAMETERS`. With respect to the parameters: at those
parameters, on the same five points. Lineshapes with a ``form`` argument give a
pair of cases per form.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from harness import Case
from jax_swap import JAX, swap_func

POINTS = np.array([0.35, 0.9, 1.6, 2.3, 3.1])

PARAMETERS = {
    "gaussian": [1.3, 0.2, 0.9],
    "gaussian2d": [0.3, 1.3, 0.2, -0.1, 0.9, 1.1],
    "lorentzian": [1.3, 0.2, 0.9],
    "voigt": [1.3, 0.2, 0.9, 0.7],
    "pvoigt": [1.3, 0.2, 0.9, 0.4],
    "moffat": [1.3, 0.2, 0.9, 1.2],
    "pearson4": [1.3, 0.2, 0.9, 1.5, 0.3],
    "pearson7": [1.3, 0.2, 0.9, 1.5],
    "breit_wigner": [1.3, 0.2, 0.9, 1.1],
    "damped_oscillator": [1.3, 1.1, 0.3],
    "dho": [1.3, 1.1, 0.9, 0.7],
    "logistic": [1.3, 0.2, 0.9],
    "lognormal": [1.3, 0.2, 0.9],
    "students_t": [1.3, 0.2, 0.9],
    "expgaussian": [1.3, 0.2, 0.9, 1.1],
    "doniach": [1.3, 0.2, 0.9, 0.3],
    "skewed_gaussian": [1.3, 0.2, 0.9, 0.5],
    "skewed_voigt": [1.3, 0.2, 0.9, 0.7, 0.5],
    "thermal_distribution": [1.3, 0.2, 0.9],
    "bose": [1.3, 0.2, 0.9],
    "fermi": [1.3, 0.2, 0.9],
    "step": [1.3, 0.2, 0.9],
    "rectangle": [1.3, 0.2, 0.9, 2.1, 0.8],
    "exponential": [1.3, 0.9],
    "powerlaw": [1.3, 1.7],
    "linear": [1.3, 0.2],
    "parabolic": [0.5, 1.3, 0.2],
    "sine": [1.3, 0.8, 0.2],
    "expsine": [1.3, 0.8, 0.2, 0.3],
    "split_lorentzian": [1.3, 0.2, 0.9, 0.6],
}

FORMS = {
    "step": ["linear", "atan", "erf", "logistic"],
    "rectangle": ["linear", "atan", "erf", "logistic"],
    "thermal_distribution": ["bose", "maxwell", "fermi"],
}


def cases() -> Iterator[Case]:
    import lmfit.lineshapes

    for name in lmfit.lineshapes.functions:
        lineshape = getattr(lmfit.lineshapes, name)
        for form in FORMS.get(name, [None]):
            kwargs = {} if form is None else {"form": form}
            params = np.array(PARAMETERS[name])
            tag = name + ("" if form is None else f"[{form}]")

            def make_wrt_x(lineshape=lineshape, params=params, kwargs=kwargs):
                def make_jax(backend=JAX):
                    swapped = swap_func(lineshape, "lmfit", {}, backend)
                    return lambda z: swapped(z, *params, **kwargs)
                return (lambda z: lineshape(z, *params, **kwargs)), POINTS.copy(), make_jax

            def make_wrt_params(lineshape=lineshape, params=params, kwargs=kwargs):
                def make_jax(backend=JAX):
                    swapped = swap_func(lineshape, "lmfit", {}, backend)
                    return lambda p: swapped(backend.numpy.asarray(POINTS), *p, **kwargs)
                return (lambda p: lineshape(POINTS, *p, **kwargs)), params.copy(), make_jax

            yield Case("lmfit", tag + " wrt x", make_wrt_x)
            yield Case("lmfit", tag + " wrt params", make_wrt_params)
