"""The demo (``python -m dualad``) and the trace tables the docs print from it."""

import doctest
import subprocess
import sys

from numpy.testing import assert_allclose

import dualad
import dualad.__main__ as demo


def test_demo_prints_the_trace_gradient_and_jacobian():
    out = subprocess.run([sys.executable, "-m", "dualad"], capture_output=True, text=True,
                         check=True).stdout
    assert "Forward primal trace" in out
    assert "11.6521" in out and "5.5" in out  # f(2, 5) and ∂f/∂x1


def test_traces_agree_with_the_transforms():
    forward = demo.forward_trace()
    assert_allclose(forward[-1][2], demo.textbook(2.0, 5.0))
    assert_allclose(forward[-1][4], 5.5)
    adjoints = {row[0]: row[3] for row in demo.reverse_trace()}
    gradient = dualad.grad(demo.textbook, argnums=(0, 1))(2.0, 5.0)
    assert_allclose([adjoints["x̄1"], adjoints["x̄2"]], gradient)


def test_doctests_of_the_demo_module():
    # pytest's --doctest-modules does not collect __main__.py
    result = doctest.testmod(demo, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
