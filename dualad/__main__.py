"""``python -m dualad``: the textbook forward-mode trace, a gradient and a Jacobian.

``python -m dualad bench`` runs the benchmark table instead (see dualad.bench).
"""

from __future__ import annotations

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


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        from .bench import main as bench_main

        bench_main(argv[1:])
    else:
        demo()


if __name__ == "__main__":
    main()
