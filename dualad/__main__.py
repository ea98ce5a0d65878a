"""``python -m dualad``: the textbook forward-mode trace, a gradient and a Jacobian.

``python -m dualad bench`` runs the benchmark table instead (see dualad.bench),
``python -m dualad --help`` prints the usage. ``forward_trace`` and
``reverse_trace`` also give the trace tables of docs/how-it-works.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata

import numpy as np

import dualad
from dualad import Dual


def textbook(x1, x2):
    """f(x1, x2) = ln(x1) + x1·x2 − sin(x2), the worked example of AD textbooks."""
    return np.log(x1) + x1 * x2 - np.sin(x2)


def forward_trace(x1: float = 2.0, x2: float = 5.0) -> list[tuple[str, str, float, str, float]]:
    """Each step of ``textbook`` evaluated on Duals seeded with ẋ1 = 1, ẋ2 = 0.

    Returns rows ``(variable, expression, value, tangent expression, tangent)``,
    every number computed by dualad itself.
    """
    v_1 = Dual(x1, 1.0)
    v0 = Dual(x2, 0.0, tag=v_1.tag)  # the same perturbation: ∂/∂x1
    v1 = np.log(v_1)
    v2 = v_1 * v0
    v3 = np.sin(v0)
    v4 = v1 + v2
    v5 = v4 - v3

    def row(name, expr, dual, t_expr):
        return name, expr, float(dual.primal), t_expr, float(dual.tangent[0])

    return [
        row("v₋₁", "x1", v_1, "ẋ1"),
        row("v₀", "x2", v0, "ẋ2"),
        row("v₁", "ln v₋₁", v1, "v̇₋₁ / v₋₁"),
        row("v₂", "v₋₁ × v₀", v2, "v̇₋₁·v₀ + v₋₁·v̇₀"),
        row("v₃", "sin v₀", v3, "cos v₀ · v̇₀"),
        row("v₄", "v₁ + v₂", v4, "v̇₁ + v̇₂"),
        row("v₅", "v₄ − v₃", v5, "v̇₄ − v̇₃"),
        row("y", "v₅", v5, "v̇₅"),
    ]


def _bar(name: str) -> str:
    """The adjoint's name: v₋₁ → v̄₋₁, x1 → x̄1."""
    return name[0] + "\u0304" + name[1:]


def reverse_trace(x1: float = 2.0, x2: float = 5.0) -> list[tuple[str, str, str, float]]:
    """The adjoints v̄ᵢ = ∂y/∂vᵢ of ``textbook``, one reverse sweep over its steps.

    The forward sweep evaluates each elementary step with :func:`dualad.vjp`
    and keeps its pullback; the reverse sweep starts from ȳ = v̄₅ = 1 and
    pulls the adjoint of each step's output back to its inputs, adding up the
    contributions to a variable used twice (v₋₁ and v₀). Returns rows
    ``(adjoint, chain rule, local partial, value)``, every number computed by
    dualad itself.

    Examples
    --------
    >>> rows = reverse_trace()
    >>> rows[-2:]
    [('x̄1', 'v̄₋₁', '', 5.5), ('x̄2', 'v̄₀', '', 1.7163378145367738)]
    """
    # textbook as a Wengert list: output, operation, inputs, ∂output/∂input as text.
    steps = [
        ("v₁", np.log, ("v₋₁",), ("1/v₋₁",)),
        ("v₂", np.multiply, ("v₋₁", "v₀"), ("v₀", "v₋₁")),
        ("v₃", np.sin, ("v₀",), ("cos v₀",)),
        ("v₄", np.add, ("v₁", "v₂"), ("1", "1")),
        ("v₅", np.subtract, ("v₄", "v₃"), ("1", "(−1)")),
    ]
    value = {"v₋₁": x1, "v₀": x2}
    pullback = {}
    for out, op, ins, _ in steps:  # forward sweep
        value[out], pullback[out] = dualad.vjp(op, *(value[v] for v in ins))

    adjoint = {"v₅": 1.0}  # ȳ = 1
    rows = [(_bar("v₅"), "ȳ", "", 1.0)]
    for out, _, ins, partials in reversed(steps):  # reverse sweep
        contributions = pullback[out](adjoint[out])  # v̄_out · ∂out/∂v, for each input v
        for v, partial, contribution in zip(ins, partials, contributions):
            term, local = f"{_bar(out)} ∂{out}/∂{v}", f"{_bar(out)} × {partial}"
            if v in adjoint:
                adjoint[v] = adjoint[v] + contribution
                term, local = f"{_bar(v)} + {term}", f"{_bar(v)} + {local}"
            else:
                adjoint[v] = contribution
            rows.append((_bar(v), term, local, float(adjoint[v])))
    rows.append((_bar("x1"), _bar("v₋₁"), "", float(adjoint["v₋₁"])))
    rows.append((_bar("x2"), _bar("v₀"), "", float(adjoint["v₀"])))
    return rows


def _pad(text: str, width: int) -> str:
    """Left-justify ``text`` to ``width`` columns, not counting combining marks."""
    return text + " " * (width - sum(not unicodedata.combining(c) for c in text))


def demo() -> None:
    print("dualad", dualad.__version__, "— forward mode on dual numbers\n")
    print("f(x1, x2) = ln(x1) + x1·x2 − sin(x2) at (x1, x2) = (2, 5), seeded ẋ1 = 1, ẋ2 = 0\n")
    header = f"{'Forward primal trace':<34}{'Forward tangent (derivative) trace'}"
    print(header)
    print("─" * 80)
    for name, expr, value, t_expr, tangent in forward_trace():
        dot_name = "ẏ" if name == "y" else name.replace("v", "v̇", 1)
        left = f"{_pad(name, 4)} = {_pad(expr, 9)} = {value:9.4f}"
        right = f"{_pad(dot_name, 4)} = {_pad(t_expr, 18)} = {tangent:8.4f}"
        print(f"{_pad(left, 34)}{right}")
    print("─" * 80)

    grad = dualad.jacfwd(textbook, argnums=(0, 1))(2.0, 5.0)
    print(f"\nf(2, 5)            = {textbook(2.0, 5.0)!r}")
    print(f"∇f(2, 5)           = ({float(grad[0])!r}, {float(grad[1])!r})"
          "   (both seeds in one pass)")

    def polar(r_theta):
        r, theta = r_theta[0], r_theta[1]
        return np.stack([r * np.cos(theta), r * np.sin(theta)])

    point = np.array([2.0, np.pi / 6])
    print("\nJacobian of (r, θ) ↦ (r cos θ, r sin θ) at r = 2, θ = π/6:")
    print(dualad.jacfwd(polar)(point))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dualad",
        usage="python -m dualad [-h] [demo | bench [OPTIONS]]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            f"dualad {dualad.__version__}: exact derivatives of NumPy code on dual numbers.\n\n"
            "commands:\n"
            "  demo           (the default) the textbook forward-mode trace of\n"
            "                 f(x1, x2) = ln(x1) + x1·x2 − sin(x2), its gradient and a Jacobian\n"
            "  bench          time dualad's transforms against the NumPy primal and peer\n"
            "                 libraries; its options: python -m dualad bench --help"))
    parser.add_argument("command", nargs="?", default="demo", choices=["demo"],
                        help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``python -m dualad [demo | bench ...]``; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        try:
            from .bench import main as bench_main
        except ModuleNotFoundError as error:  # (dualad itself needs numpy and optree only)
            missing = (error.name or "a package").partition(".")[0]
            print(f"usage: python -m dualad bench [--help] [--only GROUP ...]\n\nThe "
                  f"benchmarks need packages dualad itself does not: {missing} is not "
                  f"installed. Install them with\n\n    pip install 'dualad[bench]'\n",
                  file=sys.stderr)
            return 2
        return bench_main(argv[1:])
    _parser().parse_args(argv)  # --help, or an unknown command: usage and exit
    demo()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader left (python -m dualad | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (Python's recipe)
        sys.exit(1)
