"""HIPS/autograd's own test suite, run on plain NumPy through dualad.

autograd's tests call ``autograd.numpy``, ``autograd.scipy``, ``grad``,
``jacobian`` and ``autograd.test_util.check_grads``. This module installs an
``autograd`` package in ``sys.modules`` whose ``numpy`` and ``scipy`` are the real
NumPy and SciPy, whose transforms are dualad's, and whose ``check_grads`` checks
dualad's forward (``jvp``) and reverse (``vjp``) derivatives against central
differences to autograd's order and tolerances (1e-6): a test passes only if
dualad differentiates the unmodified NumPy/SciPy calls. autograd's internals
(``primitive``, ``defvjp``, boxes, vspaces) are not provided: tests of them fail
at import and do not count as applicable.

Used by ``run_autograd_suite.py``; import it before the tests are collected.
"""

from __future__ import annotations

import functools
import itertools
import sys
import types

import numpy as np
import optree
import scipy
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import dualad

TOL = RTOL = 1e-6
EPS = 1e-6


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def _leaves(tree):
    return optree.tree_flatten(tree, none_is_leaf=False)


def _randn_like(tree, rng):
    leaves, spec = _leaves(tree)
    return optree.tree_unflatten(
        spec, [rng.standard_normal(np.shape(leaf)) + (0j if np.iscomplexobj(leaf) else 0)
               for leaf in leaves])


def _inner(a, b) -> float:
    return sum(float(np.real(np.sum(np.asarray(x) * np.conj(np.asarray(y)))))
               for x, y in zip(_leaves(a)[0], _leaves(b)[0], strict=True))


def _axpy(alpha, x, y):
    return optree.tree_map(lambda u, v: np.asarray(v) + alpha * np.asarray(u), x, y)


def scalar_close(a, b) -> bool:
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _numerical_jvp(f, x, v):
    return optree.tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / EPS,
                           f(_axpy(EPS / 2, v, x)), f(_axpy(-EPS / 2, v, x)))


def _check_jvp(f, x, rng):
    v = _randn_like(x, rng)
    exact = dualad.jvp(f, (x,), (v,))[1]
    numeric = _numerical_jvp(f, x, v)
    w = _randn_like(numeric, rng)
    assert scalar_close(_inner(exact, w), _inner(numeric, w)), (exact, numeric)


def _check_vjp(f, x, rng):
    y, pullback = dualad.vjp(f, x)
    u, w = _randn_like(x, rng), _randn_like(y, rng)
    (x_bar,) = pullback(w)
    assert scalar_close(_inner(u, x_bar), _inner(w, _numerical_jvp(f, x, u)))


def _unary(f, argnum, args, kwargs):
    def unary(x):
        call = list(args)
        if isinstance(argnum, int):
            call[argnum] = x
        else:
            for i, xi in zip(argnum, x, strict=True):
                call[i] = xi
        return f(*call, **kwargs)

    x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
    return unary, x


def check_grads(f, argnum=0, modes=None, order=2):
    modes = ["fwd", "rev"] if modes is None else modes

    def check(*args, **kwargs):
        unary, x = _unary(f, argnum, args, kwargs)
        _check(unary, x, modes, order, np.random.default_rng(0))

    return check


def _check(f, x, modes, order, rng):
    x = optree.tree_map(lambda leaf: np.asarray(leaf, dtype=np.result_type(leaf, float)), x)
    if "fwd" in modes:
        _check_jvp(f, x, rng)
        if order > 1:
            v = _randn_like(x, rng)
            _check(lambda xv: dualad.jvp(f, (xv[0],), (xv[1],))[1], (x, v), modes, order - 1,
                   rng)
    if "rev" in modes:
        _check_vjp(f, x, rng)
        if order > 1:
            w = _randn_like(f(x), rng)
            _check(lambda xw: dualad.vjp(f, xw[0])[1](xw[1])[0], (x, w), modes, order - 1, rng)


def combo_check(fun, *args, **kwargs):
    def run(*arg_lists, **kwarg_lists):
        pairs = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
        for call in itertools.product(*arg_lists):
            for kw in itertools.product(*pairs):
                check_grads(functools.partial(fun, **dict(kw)), *args, **kwargs)(*call)

    return run


def check_equivalent(x, y):
    np.testing.assert_allclose(_leaves(x)[0], _leaves(y)[0], rtol=RTOL, atol=TOL)


def _argnum_transform(transform):
    def make(fun, argnum=0, *args, **kwargs):
        return transform(fun, argnum, *args, **kwargs)

    return make


def elementwise_grad(fun, argnum=0):
    def gradient(*args, **kwargs):
        y, pullback = dualad.vjp(lambda x: fun(*args[:argnum], x, *args[argnum + 1:],
                                               **kwargs), args[argnum])
        return pullback(np.ones_like(y))[0]

    return gradient


def deriv(fun, argnum=0):
    return dualad.derivative(fun, argnum)


def make_vjp(fun, x):
    y, pullback = dualad.vjp(fun, x)
    return (lambda w: pullback(w)[0]), y


def make_jvp(fun, argnum=0):
    def at(*args):
        unary, x = _unary(fun, argnum, args, {})
        return lambda v: dualad.jvp(unary, (x,), (v,))

    return at


def install() -> None:
    autograd = _module(
        "autograd", grad=_argnum_transform(dualad.grad),
        value_and_grad=_argnum_transform(dualad.value_and_grad),
        jacobian=_argnum_transform(dualad.jacobian),
        hessian=_argnum_transform(dualad.hessian),
        elementwise_grad=elementwise_grad, egrad=elementwise_grad, deriv=deriv,
        make_vjp=make_vjp, make_jvp=make_jvp, tuple=tuple, list=list, dict=dict,
        isinstance=isinstance)
    autograd.numpy = np
    autograd.scipy = scipy
    sys.modules.update({"autograd.numpy": np, "autograd.numpy.random": np.random,
                        "autograd.numpy.linalg": np.linalg, "autograd.numpy.fft": np.fft,
                        "autograd.scipy": scipy, "autograd.scipy.special": scipy.special,
                        "autograd.scipy.linalg": scipy.linalg,
                        "autograd.scipy.signal": scipy.signal,
                        "autograd.scipy.integrate": scipy.integrate,
                        "autograd.scipy.stats": scipy.stats})
    for name in dir(scipy.stats):
        obj = getattr(scipy.stats, name)
        if hasattr(obj, "logpdf") or hasattr(obj, "logpmf"):
            sys.modules[f"autograd.scipy.stats.{name}"] = obj
    _module("autograd.scipy.misc", logsumexp=scipy.special.logsumexp)
    _module("autograd.test_util", check_grads=check_grads, combo_check=combo_check,
            scalar_close=scalar_close, check_equivalent=check_equivalent)
