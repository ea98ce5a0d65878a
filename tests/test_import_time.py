"""``import dualad`` imports no SciPy module; scipy.special's rules appear when it is.

The rules of scipy.special's ufuncs are declared when scipy.special is imported, before
or after dualad (the import hook of :mod:`dualad.rules.scipy_functions` runs
:func:`dualad.rules.special.declare_scipy_rules`), and under dualad_gpu their JAX
kernels are registered then. Each import order runs in a fresh process: what is
checked is which modules are imported, not how long it takes.

Measured with ``python -X importtime -c "import dualad"`` (the cumulative time of
``dualad``, NumPy's import included, median of 3, on a 2-core machine running another
test suite at the same time): 663 ms before (scipy.special and, through SciPy's
array-API layer, numpy.testing and numpy.f2py imported), 439 ms after.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

X = [0.4, 1.3, 2.5]

# The checked function: its gradient and Hessian (diagonal) have closed forms below.
F = "lambda x: np.sum(sp.erf(x) + sp.i0e(x) + sp.gammaln(x))"


def _expected() -> dict:
    x = np.array(X)
    derf = 2.0 / math.sqrt(math.pi) * np.exp(-x * x)
    di0e = sc.i1e(x) - np.sign(x) * sc.i0e(x)
    # i1e' = i0e - sign(x)·i1e - i1e/x
    d2i0e = (sc.i0e(x) - np.sign(x) * sc.i1e(x) - sc.i1e(x) / x) - np.sign(x) * di0e
    grad = derf + di0e + sc.digamma(x)
    hessian = np.diag(-2.0 * x * derf + d2i0e + sc.polygamma(1, x))
    return {"grad": grad, "hessian": hessian, "erf": derf}


def _run(script: str, **env: str) -> dict:
    """Run ``script`` in a fresh interpreter; it prints one JSON object."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                         check=False, text=True, timeout=300, env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


_SCIPY_MODULES = "sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')"


def test_import_dualad_imports_no_scipy():
    found = _run(f"""
        import json, sys
        import dualad
        heavy = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'unittest')
                 and m.split('.')[:2] in (['numpy', 'testing'], ['numpy', 'f2py'], ['unittest'])]
        bench = sorted(m for m in sys.modules if m.startswith('dualad.bench'))
        print(json.dumps({{"scipy": {_SCIPY_MODULES}, "heavy": heavy, "bench": bench}}))
    """)
    # (the benchmark harness is for `python -m dualad bench` and asv only: issue 29, 17)
    assert found == {"scipy": [], "heavy": [], "bench": []}


# Each order: what runs before the transforms (which import scipy.special if not yet).
ORDERS = {
    "dualad first": "import dualad\nimport scipy.special as sp\n",
    "scipy first": "import scipy.special as sp\nimport dualad\n",
    "scipy.stats first": "import scipy.stats\nimport dualad\nimport scipy.special as sp\n",
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_scipy_special_rules_whatever_the_import_order(order):
    result = _run(ORDERS[order] + f"""
import json, sys
import numpy as np
from dualad import ops
from dualad.primitive import FUNCTION_HANDLERS
f = {F}
x = np.array({X})
print(json.dumps({{
    "grad": dualad.grad(f)(x).tolist(),
    "jacfwd": dualad.jacfwd(f)(x).tolist(),
    "hessian": dualad.hessian(f)(x).tolist(),
    "erf": dualad.jacfwd(lambda x: sp.erf(x))(x).diagonal().tolist(),
    "erf_rev": dualad.jacrev(lambda x: sp.erf(x))(x).diagonal().tolist(),
    "polygamma": FUNCTION_HANDLERS[sp.polygamma] is ops.polygamma is FUNCTION_HANDLERS[
        sp.polygamma.__wrapped__],
    "ops": all(hasattr(ops, n) for n in ("erf", "i0e", "gammaln", "polygamma", "i0")),
    "logsumexp": dualad.grad(lambda x: sp.logsumexp(x))(x).tolist(),
    "zeta": float(dualad.derivative(lambda q: sp.zeta(3.0, q))(2.0)),
}}))
""")
    expected = _expected()
    np.testing.assert_allclose(result["grad"], expected["grad"], rtol=1e-12)
    np.testing.assert_allclose(result["jacfwd"], expected["grad"], rtol=1e-12)
    np.testing.assert_allclose(result["hessian"], expected["hessian"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(result["erf"], expected["erf"], rtol=1e-14)
    np.testing.assert_allclose(result["erf_rev"], expected["erf"], rtol=1e-14)
    assert result["polygamma"] and result["ops"]
    x = np.array(X)
    np.testing.assert_allclose(result["logsumexp"], np.exp(x) / np.sum(np.exp(x)), rtol=1e-14)
    assert result["zeta"] == pytest.approx(-3.0 * sc.zeta(4.0, 2.0), rel=1e-13)


def test_np_i0_imports_scipy_special_on_use():
    result = _run(f"""
        import json, sys
        import numpy as np
        import dualad
        before = {_SCIPY_MODULES}
        d = dualad.derivative(lambda x: np.i0(x))(1.5)
        print(json.dumps({{"before": before, "d": float(d)}}))
    """)
    assert result["before"] == []
    assert result["d"] == pytest.approx(sc.i1(1.5), rel=1e-14)


def test_dualad_gpu_before_scipy_registers_its_kernels():
    pytest.importorskip("jax")
    result = _run(f"""
        import json, sys
        import numpy as np
        import dualad_gpu
        before = {_SCIPY_MODULES}
        import scipy.special as sp
        from dualad import ops
        f = {F}
        x = np.array({X})
        print(json.dumps({{
            "before": before,
            "kernels": all("jax" in p.kernels for p in (ops.erf, ops.i0e, ops.gammaln,
                                                        ops.polygamma, ops.i1e, ops.i0)),
            "grad": np.asarray(dualad_gpu.grad(f)(x)).tolist(),
            "jacfwd": np.asarray(dualad_gpu.jacfwd(f)(x)).tolist(),
            "hessian": np.asarray(dualad_gpu.hessian(f)(x)).tolist(),
            "i0": np.asarray(dualad_gpu.grad(lambda x: np.sum(np.i0(x)))(x)).tolist(),
        }}))
    """, JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1")
    assert result["before"] == [] and result["kernels"]
    expected = _expected()
    np.testing.assert_allclose(result["grad"], expected["grad"], rtol=1e-12)
    np.testing.assert_allclose(result["jacfwd"], expected["grad"], rtol=1e-12)
    np.testing.assert_allclose(result["hessian"], expected["hessian"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(result["i0"], sc.i1(np.array(X)), rtol=1e-12)


def test_without_scipy_numpy_rules_stay():
    result = _run("""
        import json, sys
        class Block:
            def find_spec(self, name, path, target=None):
                if name == 'scipy' or name.startswith('scipy.'):
                    raise ImportError('no scipy')
        sys.meta_path.insert(0, Block())
        import numpy as np, dualad
        from dualad import ops
        d = dualad.derivative(lambda x: np.sinc(x) + ops.logsumexp(np.stack([x, 2 * x])))(0.5)
        try:
            dualad.derivative(lambda x: np.i0(x))(0.5)
        except TypeError as error:
            message = str(error)
        print(json.dumps({"d": float(d), "i0": message, "erf": hasattr(ops, "erf")}))
    """)
    x = 0.5
    sinc = (math.cos(math.pi * x) - math.sin(math.pi * x) / (math.pi * x)) / x
    softmax = np.exp([x, 2 * x]) / np.sum(np.exp([x, 2 * x]))
    assert result["d"] == pytest.approx(sinc + softmax[0] + 2 * softmax[1], rel=1e-13)
    assert "SciPy" in result["i0"] and not result["erf"]
