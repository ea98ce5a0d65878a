"""Check a ``wrong`` verdict by central differences in long double, with steps down to 1e-12.

Central differences in float64 with the harness's step cannot follow functions whose
terms oscillate at frequencies up to 3**20 (Weierstrass) or 2**32 (Katsuura): they
flag exact derivatives as wrong. In long double (19 digits) the difference quotient
can take steps far below those periods; as the step shrinks it converges to the
exact directional derivative. This prints, for each case named, dualad's ``∇f·v``
(or ``H·v``) and the quotients at steps 1e-9 to 1e-12, at the point the harness used.

    python verify_fd.py opfunu cec.F152005 cec.F162005
    python verify_fd.py opfunu --hessian cec.F162017
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import dualad
from run import PACKAGES

STEPS = (1e-9, 1e-10, 1e-11, 1e-12)


def gradient_check(f, x: np.ndarray, v: np.ndarray) -> str:
    exact = dualad.grad(f, replay=False)(x) @ v
    xl, vl = x.astype(np.longdouble), v.astype(np.longdouble)
    quotients = [float((f(xl + h * vl) - f(xl - h * vl)) / (2 * h)) for h in STEPS]
    return f"∇f·v = {exact:.10g}; long-double quotients: " + ", ".join(
        f"{q:.10g}" for q in quotients)


def hessian_check(f, x: np.ndarray, v: np.ndarray) -> str:
    exact = dualad.hessian(f, replay=False)(x) @ v
    grad = dualad.grad(f, replay=False)
    xl, vl = x.astype(np.longdouble), v.astype(np.longdouble)
    errors = [float(np.max(np.abs((grad(xl + h * vl) - grad(xl - h * vl)) / (2 * h) - exact))
                    / np.max(np.abs(exact))) for h in STEPS]
    return f"max|H·v| = {np.max(np.abs(exact)):.3g}; relative error of the quotients: " + \
        ", ".join(f"{e:.2g}" for e in errors)


def main(package: str, names: list[str], hessian: bool) -> None:
    warnings.filterwarnings("ignore")
    wanted = set(names)
    for case in PACKAGES[package]():
        f, x, _ = case.make()  # every case: the points are drawn in the order of the cases
        if case.name in wanted:
            v = np.random.default_rng(1).standard_normal(np.size(x))
            check = hessian_check if hessian else gradient_check
            print(f"{case.name}: {check(f, np.asarray(x, dtype=float), v)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package")
    parser.add_argument("names", nargs="+")
    parser.add_argument("--hessian", action="store_true", help="check H·v instead of ∇f·v")
    arguments = parser.parse_args()
    main(arguments.package, arguments.names, arguments.hessian)
