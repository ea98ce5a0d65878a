"""Time to solution of SciPy solvers given dualad's derivatives, warm-up included.

``python -m dualad.bench.solvers`` runs five problems from scratch, in one
process, each solved three ways: with dualad's exact derivatives (fresh
transforms of fresh functions, so the first calls interpret and record), with
SciPy's own finite differences, and with ``jax.jit`` of JAX's transforms of the
same model written in ``jax.numpy`` (compilation included). It prints the median
of three runs of each and the solutions' agreement. dualad runs twice: as it
comes, and with ``replay=False`` (the interpreter alone, for comparison):

* a Weibull maximum-likelihood fit (500 points, two parameters) by
  ``minimize(method="trust-exact")`` with ``grad`` and ``hessian`` (finite
  differences: BFGS with SciPy's differences, as a user without derivatives
  would);
* Robertson's stiff chemical kinetics by ``solve_ivp(method="BDF")`` with
  ``jacfwd`` of the right-hand side over t in [0, 10⁵];
* the stiff Van der Pol oscillator (μ = 1000, t in [0, 3000]) the same way: a
  longer solve, with about a hundred Jacobians;
* a forced Van der Pol oscillator (μ = 100, forcing 5 sin(0.7 t), t in [0, 300]):
  its right-hand side computes a float from ``t`` at every call;
* an exponential-decay ``least_squares`` fit (200 points, three parameters)
  with ``jacfwd`` of the residual ("2-point" differences otherwise).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

import dualad

__all__ = ["main", "PROBLEMS"]


def _weibull_data() -> np.ndarray:
    rng = np.random.default_rng(7)
    return 2.0 * rng.weibull(1.7, 500)


def _weibull(np_):
    data = _weibull_data()

    def nll(p):  # p = (log k, log scale)
        k, lam = np_.exp(p[0]), np_.exp(p[1])
        z = data / lam
        return -np_.sum(np_.log(k) - np_.log(lam) + (k - 1.0) * np_.log(z) - z ** k)

    return nll


def weibull(how: str) -> np.ndarray:
    from scipy.optimize import minimize
    x0 = np.array([0.1, 0.1])
    if how.startswith("dualad"):
        nll, replay = _weibull(np), _replays(how)
        return minimize(nll, x0, jac=dualad.grad(nll, replay=replay),
                        hess=dualad.hessian(nll, replay=replay), method="trust-exact").x
    if how == "finite differences":
        return minimize(_weibull(np), x0, method="BFGS").x
    import jax
    import jax.numpy as jnp
    nll = _weibull(jnp)
    value, gradient, hess = jax.jit(nll), jax.jit(jax.grad(nll)), jax.jit(jax.hessian(nll))
    return minimize(lambda p: float(value(p)), x0, jac=lambda p: np.asarray(gradient(p)),
                    hess=lambda p: np.asarray(hess(p)), method="trust-exact").x


def _robertson(np_):
    def rhs(t, y):
        return np_.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                          0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                          3e7 * y[1] ** 2])
    return rhs


def _stiff_solve(model: Callable, y0: np.ndarray, span: tuple, atol: float,
                 how: str) -> np.ndarray:
    """The final state of ``solve_ivp(method="BDF")`` on ``model(np_)``'s right-hand
    side, its Jacobian found ``how``."""
    from scipy.integrate import solve_ivp
    options = {"method": "BDF", "rtol": 1e-6, "atol": atol}
    if how.startswith("dualad"):
        rhs = model(np)
        jac = dualad.jacfwd(rhs, argnums=1, replay=_replays(how))
        return solve_ivp(rhs, span, y0, jac=jac, **options).y[:, -1]
    if how == "finite differences":
        return solve_ivp(model(np), span, y0, **options).y[:, -1]
    import jax
    import jax.numpy as jnp
    rhs = model(jnp)
    f, jac = jax.jit(rhs), jax.jit(jax.jacfwd(rhs, argnums=1))
    return solve_ivp(lambda t, y: np.asarray(f(t, y)), span, y0,
                     jac=lambda t, y: np.asarray(jac(t, y)), **options).y[:, -1]


def robertson(how: str) -> np.ndarray:
    return _stiff_solve(_robertson, np.array([1.0, 0.0, 0.0]), (0.0, 1e5), 1e-10, how)


def _van_der_pol(np_):
    def rhs(t, y, mu=1000.0):
        return np_.array([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]])
    return rhs


def van_der_pol(how: str) -> np.ndarray:
    return _stiff_solve(_van_der_pol, np.array([2.0, 0.0]), (0.0, 3000.0), 1e-9, how)


def _forced_van_der_pol(np_):
    def rhs(t, y, mu=100.0):  # the forcing is a float computed from t at every call
        return np_.array([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]
                          + 5.0 * np_.sin(0.7 * t)])
    return rhs


def forced_van_der_pol(how: str) -> np.ndarray:
    return _stiff_solve(_forced_van_der_pol, np.array([2.0, 0.0]), (0.0, 300.0), 1e-9, how)


def _decay_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 5.0, 200)
    return t, 2.5 * np.exp(-1.3 * t) + 0.4 + 0.02 * rng.standard_normal(t.size)


def _decay(np_):
    t, y = _decay_data()

    def residual(p):
        return p[0] * np_.exp(-p[1] * t) + p[2] - y

    return residual


def decay(how: str) -> np.ndarray:
    from scipy.optimize import least_squares
    x0 = np.array([1.0, 1.0, 0.0])
    if how.startswith("dualad"):
        residual = _decay(np)
        return least_squares(residual, x0, jac=dualad.jacfwd(residual, replay=_replays(how))).x
    if how == "finite differences":
        return least_squares(_decay(np), x0).x
    import jax
    import jax.numpy as jnp
    residual = _decay(jnp)
    f, jac = jax.jit(residual), jax.jit(jax.jacfwd(residual))
    return least_squares(lambda p: np.asarray(f(p)), x0, jac=lambda p: np.asarray(jac(p))).x


PROBLEMS: dict[str, Callable[[str], np.ndarray]] = {
    "Weibull MLE, minimize(trust-exact)": weibull,
    "Robertson, solve_ivp(BDF)": robertson,
    "Van der Pol (mu = 1000), solve_ivp(BDF)": van_der_pol,
    "forced Van der Pol (mu = 100, 5 sin 0.7t), solve_ivp(BDF)": forced_van_der_pol,
    "exponential decay, least_squares": decay,
}
WAYS = ("dualad", "dualad, replay=False", "finite differences", "jax.jit")


def _replays(how: str) -> bool:
    return how != "dualad, replay=False"


def measure(runs: int = 3, ways: tuple[str, ...] | None = None) -> dict[str, dict]:
    """Per problem: every way's median time to solution over ``runs`` runs, each run's
    times, and the largest relative difference of a way's solution from dualad's."""
    if ways is None:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            ways = WAYS
        except ImportError:
            ways = WAYS[:3]
    out = {}
    for title, solve in PROBLEMS.items():
        times, solutions = {}, {}
        for how in ways:
            measured = []
            for _ in range(runs):
                start = time.perf_counter()
                solutions[how] = solve(how)
                measured.append(time.perf_counter() - start)
            times[how] = measured
        spread = max(float(np.max(np.abs(solutions[how] - solutions["dualad"])
                                  / np.maximum(1e-300, np.abs(solutions["dualad"]))))
                     for how in ways)
        out[title] = {"seconds": {how: float(f"{statistics.median(t):.4g}")
                                  for how, t in times.items()},
                      "seconds_runs": {how: [float(f"{x:.4g}") for x in t]
                                       for how, t in times.items()},
                      "solutions_differ_by": float(f"{spread:.3g}")}
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the table: median time to solution of each way, and the largest
    difference of its solution from dualad's; with ``--json PATH``, also write it
    (with the commit, date, machine and libraries) for the docs' performance page."""
    import argparse

    from . import snapshot

    parser = argparse.ArgumentParser(prog="python -m dualad.bench.solvers",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    started = snapshot.now()
    results = measure(args.runs)
    ways = list(next(iter(results.values()))["seconds"])
    print("| problem | " + " | ".join(ways) + " | solutions differ by |")
    print("|---|" + "---:|" * len(ways) + "---:|")
    for title, r in results.items():
        cells = [f"{r['seconds'][how] * 1e3:.1f} ms" for how in ways]
        print(f"| {title} | " + " | ".join(cells)
              + f" | {r['solutions_differ_by']:.1e} (relative) |")
    if args.json:
        snapshot.write(args.json, {**snapshot.metadata(parser.prog, argv), "run_started": started,
                                   "run_finished": snapshot.now(), "runs": args.runs,
                                   "ways": ways, "problems": results})


if __name__ == "__main__":
    main()
