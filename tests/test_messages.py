"""The "no derivative rule" error names the function as the user types it, with the fix.

Every name printed must evaluate back to the very function (``numpy.emath.log10``,
not ``numpy.log10``); a function that is not elementwise is shown
``register_function`` first, a ufunc a ``defprimitive`` with one partial per
argument.
"""

import importlib
import re
import sys

import numpy as np
import pytest

import dualad
from dualad.primitive import qualified_name

scipy = pytest.importorskip("scipy")
import scipy.fft  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402

X = np.array([0.3, 0.5, 0.7])

# (what the user calls, the name to print, a call on a vector Dual that reaches it)
UNREGISTERED_FUNCTIONS = [
    (np.sort_complex, "numpy.sort_complex", lambda x: np.sort_complex(x)),
    (np.fix, "numpy.fix", lambda x: np.fix(x)),
    (np.emath.log10, "numpy.emath.log10", lambda x: np.emath.log10(x)),
    (np.emath.power, "numpy.emath.power", lambda x: np.emath.power(x, 2.0)),
    (np.emath.log, "numpy.emath.log", lambda x: np.emath.log(x)),
    (np.emath.logn, "numpy.emath.logn", lambda x: np.emath.logn(2.0, x)),
    (np.emath.arcsin, "numpy.emath.arcsin", lambda x: np.emath.arcsin(x)),
    (np.emath.sqrt, "numpy.emath.sqrt", lambda x: np.emath.sqrt(x)),
    (np.lib.stride_tricks.sliding_window_view, "numpy.lib.stride_tricks.sliding_window_view",
     lambda x: np.lib.stride_tricks.sliding_window_view(x, 2)),
]

UNREGISTERED_UFUNCS = [
    (scipy.special.ellipk, "scipy.special.ellipk", lambda x: scipy.special.ellipk(x)),
    (scipy.special.ellipe, "scipy.special.ellipe", lambda x: scipy.special.ellipe(x)),
    (scipy.special.ellipkinc, "scipy.special.ellipkinc",
     lambda x: scipy.special.ellipkinc(x, 0.5)),
    (scipy.special.struve, "scipy.special.struve", lambda x: scipy.special.struve(1.0, x)),
]


def resolve(name):
    """The object a dotted name such as ``numpy.fft.rfft`` stands for."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def message_of(call, transform=dualad.jacfwd):
    with pytest.raises(TypeError) as info:
        transform(call)(X)
    return str(info.value)


def code_lines(message):
    """The lines of the message that are Python to type (indented by four spaces)."""
    return [line for line in message.splitlines() if line.startswith("    ")]


@pytest.mark.parametrize("func, name, call", UNREGISTERED_FUNCTIONS + UNREGISTERED_UFUNCS,
                         ids=lambda v: v if isinstance(v, str) else "")
def test_the_name_is_the_one_the_user_types(func, name, call):
    assert qualified_name(func) == name
    assert resolve(name) is func
    assert message_of(call).startswith(f"{name} has no dualad derivative rule")


@pytest.mark.parametrize("func, name", [
    (np.add, "numpy.add"),
    (np.matmul, "numpy.matmul"),
    (np.linalg.matmul, "numpy.linalg.matmul"),
    (np.linalg.solve, "numpy.linalg.solve"),
    (np.linalg.norm, "numpy.linalg.norm"),
    (np.polynomial.polynomial.polyval, "numpy.polynomial.polynomial.polyval"),
    (np.polynomial.hermite.hermval, "numpy.polynomial.hermite.hermval"),
    (np.random.normal, "numpy.random.normal"),
    (np.random.default_rng, "numpy.random.default_rng"),
    (np.trapezoid, "numpy.trapezoid"),
    (scipy.special.gamma, "scipy.special.gamma"),
    (scipy.special.zeta, "scipy.special.zeta"),
    (scipy.special.logsumexp, "scipy.special.logsumexp"),
    (scipy.linalg.expm, "scipy.linalg.expm"),
    (scipy.linalg.solve, "scipy.linalg.solve"),
    (scipy.fft.fft, "scipy.fft.fft"),
    (scipy.signal.convolve, "scipy.signal.convolve"),
    (scipy.integrate.trapezoid, "scipy.integrate.trapezoid"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_qualified_name_evaluates_back_to_the_function(func, name):
    # functions whose __module__ is private (scipy.linalg._basic) or absent (ufuncs)
    assert qualified_name(func) == name
    resolved = resolve(name)
    assert resolved is func or resolved == func  # np.random.normal: a bound method


def test_a_ufunc_another_library_imports_keeps_scipy_s_name(monkeypatch):
    """A ufunc names no module: lmfit.lineshapes imports scipy.special.wofz, and the
    message still names SciPy's (a library sorting before "scipy" included)."""
    import types

    for library in ("aaa_lineshapes", "lmfit"):
        module = types.ModuleType(f"{library}.shapes")
        module.wofz = scipy.special.wofz
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(sys.modules, library, types.ModuleType(library))
        assert qualified_name(scipy.special.wofz) == "scipy.special.wofz"


@pytest.mark.parametrize("func, name, call", UNREGISTERED_FUNCTIONS,
                         ids=lambda v: v if isinstance(v, str) else "")
def test_a_function_that_is_not_elementwise_leads_with_register_function(func, name, call):
    message = message_of(call)
    first = code_lines(message)[0]
    assert first == f"    dualad.register_function({name}, lambda *args, **kwargs: ...)"
    assert "partials" not in message  # no elementwise template for an FFT or a QR
    compile(first.strip(), "message", "eval")


@pytest.mark.parametrize("func, name, call", UNREGISTERED_UFUNCS,
                         ids=lambda v: v if isinstance(v, str) else "")
def test_a_ufunc_gets_the_elementwise_template(func, name, call):
    message = message_of(call)
    lines = code_lines(message)
    assert lines[0] == "    dualad.defprimitive("
    end = lines.index(f"        numpy_function={name})")
    template = "\n".join(line[4:] for line in lines[:end + 1])
    code = compile(template, "message", "eval")  # valid Python
    partials = re.search(r"partials=(\[.*\]),", template).group(1)
    rows = eval(partials)  # one lambda per argument, one row per output
    rows = rows if func.nout > 1 else [rows]
    assert len(rows) == func.nout
    assert all(len(row) == func.nin for row in rows)
    assert all(p.__code__.co_argcount == func.nin + 1 for row in rows for p in row)
    assert resolve(name) is func and "numpy_function=" + name in template
    assert code.co_names[0] == "dualad"
    assert message.index("defprimitive") < message.index("register_function")


def test_an_internal_function_is_named_with_its_public_caller():
    # scipy.special.ellip_harm calls a private ufunc; the user typed its public name
    message = message_of(lambda x: scipy.special.ellip_harm(5.0, 2.0, 1, 1, x + 2.0))
    head = message.splitlines()[0]
    assert head.startswith("scipy.special.ellip_harm calls scipy.special.")
    internal = head.split(" calls ")[1].split(",")[0]
    assert isinstance(resolve(internal), np.ufunc)  # the name to register is real
    assert f"numpy_function={internal})" in message


@pytest.mark.parametrize("transform", [dualad.grad, dualad.hessian, dualad.jacrev],
                         ids=["grad", "hessian", "jacrev"])
def test_every_mode_names_the_function(transform):
    message = message_of(lambda x: np.sum(np.sort_complex(x).real), transform)
    assert message.startswith("numpy.sort_complex has no dualad derivative rule")
