"""``check_grads``: a derivative checker for functions and rules, after JAX's and autograd's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..pytrees import tree_leaves, tree_map, tree_structure
from ..forward import jvp
from ..reverse import vjp

__all__ = ["check_grads"]

#: Default step of the five-point central difference (JAX's default ``eps`` too).
#: Its error is O(h⁴) truncation plus O(ε_machine / h) rounding, about 1e-12
#: relative in float64, so it stays far below the default tolerance; the step
#: is multiplied by ``max(1, max |x|)`` so large inputs are moved visibly.
DEFAULT_EPS = 1e-4

#: Default ``atol`` and ``rtol`` by the lowest precision among the inputs
#: (derivatives in float32 carry float32 rounding; finite differences never do).
DEFAULT_TOLERANCE = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 1e-3,
                     np.dtype(np.float16): 1e-2, np.dtype(np.complex128): 1e-5,
                     np.dtype(np.complex64): 1e-3}

_MODES = ("fwd", "rev")


def check_grads(f: Callable, args: Sequence, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), eps: float | None = None,
                atol: float | None = None, rtol: float | None = None, *,
                seed: int = 0) -> None:
    """Check the derivatives of ``f`` at ``args`` up to ``order``, like JAX's ``check_grads``.

    * ``"fwd"``: :func:`dualad.jvp` along a random direction ``v`` must match the
      five-point central difference ``(-f(x+2hv) + 8f(x+hv) - 8f(x-hv) + f(x-2hv)) / 12h``,
      evaluated in float64 (float32 inputs are promoted for the differences).
    * ``"rev"``: :func:`dualad.vjp` must satisfy the adjoint identity
      ``⟨u, J v⟩ = ⟨Jᵀu, v⟩`` for random ``u`` and ``v``, both with ``J v`` from
      :func:`dualad.jvp` (which catches a wrong transpose rule) and with ``J v``
      from the central difference (which, as in JAX, catches a wrong rule even
      when forward and reverse mode share it). For complex values the pairing is
      JAX's, ``⟨u, w⟩ = Re Σ u·w``, and the directions are complex.
    * ``order > 1``: the same checks, to ``order - 1``, of the derivative
      functions ``x ↦ jvp(f, x, v)[1]`` (for ``"fwd"``) and ``x ↦ vjp(f, x)[1](u)``
      (for ``"rev"``), each with both modes: order 2 covers forward over forward,
      reverse over forward, forward over reverse and reverse over reverse.

    Parameters
    ----------
    f:
        The function to check, written with NumPy; arguments and result may be
        pytrees of float or complex arrays (other output leaves are ignored).
    args:
        A tuple or list of the positional arguments of ``f``, each a pytree of
        float or complex arrays (or Python floats).
    order:
        Highest order of derivative to check (1 or more).
    modes:
        ``"fwd"``, ``"rev"`` or both.
    eps:
        Step of the finite differences; default ``1e-4``, multiplied by
        ``max(1, max |x|)`` over all input leaves.
    atol, rtol:
        Tolerances of each comparison, ``|actual - expected| ≤ atol + rtol·|expected|``
        elementwise (for inner products, ``|expected|`` is the sum of the absolute
        values of the products). Default ``1e-5`` for float64 inputs, ``1e-3`` if
        any input is float32.
    seed:
        Seed of the random directions and cotangents: a call is deterministic.

    Raises
    ------
    AssertionError
        On the first failing check, naming the mode, the order, the function,
        the largest absolute and relative errors and the tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.testing import check_grads
    >>> a = np.array([[3.0, 1.0], [0.5, 2.0]])
    >>> check_grads(lambda a, x: np.sin(a @ x), (a, np.array([0.3, -0.7])), order=2)
    >>> check_grads(lambda p: {"y": p["w"] * np.exp(p["b"])},
    ...             ({"w": np.ones(3), "b": np.linspace(0.0, 1.0, 3)},), modes=("rev",))

    A rule with a wrong derivative is caught:

    >>> import dualad
    >>> wrong_sin = dualad.Primitive("wrong_sin", np.sin,
    ...                              partials=(lambda ans, x: 1.01 * np.cos(x),))
    >>> check_grads(wrong_sin, (np.array([0.1, 0.5]),), order=1, modes=("fwd",))
    Traceback (most recent call last):
        ...
    AssertionError: check_grads: mode 'fwd', order 1 of 1, ...
    """
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"check_grads expects args as a tuple or list of arguments, got "
                        f"{type(args).__name__}")
    if int(order) != order or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    bad = [m for m in modes if m not in _MODES]
    if bad or not modes:
        raise ValueError(f"modes must be a non-empty selection of {_MODES}, got {modes!r}")
    args = tuple(tree_map(_as_float, tuple(args)))
    leaves = tree_leaves(args)
    if atol is None or rtol is None:
        default = max((DEFAULT_TOLERANCE.get(x.dtype, 1e-5) for x in leaves), default=1e-5)
        atol = default if atol is None else atol
        rtol = default if rtol is None else rtol
    if eps is None:
        scale = max((float(np.max(np.abs(x))) for x in leaves if x.size), default=0.0)
        eps = DEFAULT_EPS * max(1.0, scale)
    checker = _Checker(modes, float(eps), float(atol), float(rtol),
                       np.random.default_rng(seed), int(order))
    checker.check(f, args, int(order), _name(f))


class _Checker:
    """The state of one ``check_grads`` call: options and the random stream."""

    def __init__(self, modes, eps, atol, rtol, rng, total_order):
        self.modes, self.eps, self.atol, self.rtol = modes, eps, atol, rtol
        self.rng, self.total_order = rng, total_order

    def check(self, f: Callable, args: tuple, order: int, what: str) -> None:
        level = self.total_order - order + 1
        if "fwd" in self.modes:
            v = self.like(args)
            self.check_jvp(f, args, v, level, what)
            if order > 1:
                def f_jvp(*xs, f=f, v=v):
                    return jvp(f, xs, v)[1]
                self.check(f_jvp, args, order - 1, f"x ↦ jvp({what}, x, v)[1]")
        if "rev" in self.modes:
            v = self.like(args)
            out = f(*args)
            u = self.like(out)
            self.check_vjp(f, args, u, v, level, what)
            if order > 1:
                def f_vjp(*xs, f=f, u=u):
                    return vjp(f, *xs)[1](u)
                self.check(f_vjp, args, order - 1, f"x ↦ vjp({what}, x)[1](u)")

    # -- the two checks ------------------------------------------------------

    def check_jvp(self, f, args, v, level, what) -> None:
        _, tangent = jvp(f, args, v)
        expected = self.central_difference(f, args, v)
        actual = _float_leaves(tangent, like=expected)
        self.compare(actual, expected, "fwd", level, what, "jvp vs central differences")

    def check_vjp(self, f, args, u, v, level, what) -> None:
        out, pullback = vjp(f, *args)
        ct = pullback(u)
        v_leaves = tree_leaves(v)
        ct_leaves = _cotangent_leaves(ct, args)
        ip_rev, mag_rev = _inner(ct_leaves, v_leaves)          # ⟨Jᵀu, v⟩
        u_leaves = tree_leaves(u)
        _, tangent = jvp(f, args, v)
        jv = _float_leaves(tangent, like=u_leaves, out=out)
        ip_fwd, mag_fwd = _inner(u_leaves, jv)                   # ⟨u, J v⟩ by jvp
        jv_num = self.central_difference(f, args, v)
        ip_num, mag_num = _inner(u_leaves, jv_num)               # ⟨u, J v⟩ by differences
        self.compare([ip_rev], [ip_fwd], "rev", level, what,
                     "adjoint identity ⟨Jᵀu, v⟩ = ⟨u, J v⟩ (vjp vs jvp)",
                     scale=max(mag_rev, mag_fwd))
        self.compare([ip_rev], [ip_num], "rev", level, what,
                     "⟨Jᵀu, v⟩ (vjp) vs ⟨u, J v⟩ (central differences)",
                     scale=max(mag_rev, mag_num))

    # -- helpers -------------------------------------------------------------

    def like(self, tree: Any) -> Any:
        """A random pytree shaped like ``tree``: normal entries in each float leaf's dtype.

        Leaves that are not float (integer outputs) get zeros: they carry no derivative.
        """
        def draw(x):
            x = np.asarray(x)
            if x.dtype.kind == "c":
                parts = self.rng.standard_normal((2,) + x.shape)
                return np.asarray(parts[0] + 1j * parts[1], x.dtype)
            if x.dtype.kind != "f":
                return np.zeros(x.shape)
            return np.asarray(self.rng.standard_normal(x.shape), x.dtype)
        return tree_map(draw, tree)

    def central_difference(self, f, args, v) -> list:
        """The five-point central difference of every float output leaf, in float64
        (complex128 for complex leaves)."""
        x64 = tree_leaves(tree_map(_to64, args))
        v64 = tree_leaves(tree_map(_to64, v))
        treedef = tree_structure(args)
        h = self.eps

        def at(s):
            moved = treedef.unflatten([x + s * t for x, t in zip(x64, v64)])
            return [_to64(y) if _is_float(y) else None for y in tree_leaves(f(*moved))]

        f2, f1, m1, m2 = (at(k * h) for k in (2, 1, -1, -2))
        return [None if a is None else (-a + 8 * b - 8 * c + d) / (12 * h)
                for a, b, c, d in zip(f2, f1, m1, m2)]

    def compare(self, actual, expected, mode, level, what, check, scale=None) -> None:
        worst = None  # (excess, abs error, rel error, leaf, index)
        if len(actual) != len(expected):
            raise AssertionError(f"check_grads: mode {mode!r}, order {level} of "
                                 f"{self.total_order}, function {what}: {check}: "
                                 f"{len(actual)} output leaves, expected {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            if e is None:
                continue
            a, e = _to64(a), _to64(e)
            if a.shape != e.shape:
                raise AssertionError(f"check_grads: mode {mode!r}, order {level} of "
                                     f"{self.total_order}, function {what}: {check}: "
                                     f"output leaf {i} has shape {a.shape}, expected {e.shape}")
            if not a.size:
                continue
            ref = np.abs(e) if scale is None else np.full(e.shape, scale)
            err = np.abs(a - e)
            err = np.where(np.isnan(a) & np.isnan(e), 0.0, err)  # nan where both are
            bound = self.atol + self.rtol * ref
            with np.errstate(divide="ignore", invalid="ignore"):
                excess = np.where(np.isnan(err), np.inf,
                                  np.where(err == 0, 0.0, err / bound))
                rel = err / np.where(ref > 0, ref, np.inf)
            k = int(np.argmax(excess))
            if worst is None or excess.flat[k] > worst[0]:
                worst = (excess.flat[k], float(np.max(err)), float(np.nanmax(rel)), i,
                         np.unravel_index(k, e.shape) if e.ndim else (), a.flat[k], e.flat[k])
        if worst is not None and not worst[0] <= 1.0:
            _, abs_err, rel_err, leaf, index, a, e = worst
            raise AssertionError(
                f"check_grads: mode {mode!r}, order {level} of {self.total_order}, function "
                f"{what}: {check} differ: max abs error {abs_err:.3g}, max rel error "
                f"{rel_err:.3g} (tolerance atol={self.atol:g}, rtol={self.rtol:g}); worst at "
                f"output leaf {leaf}, index {tuple(int(j) for j in index)}: got {a:.10g}, "
                f"expected {e:.10g}")


def _as_float(x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind in "fc":
        return a
    if a.dtype.kind in "iub" and not isinstance(x, np.ndarray):
        return np.asarray(x, np.float64)  # a Python or NumPy scalar number
    raise TypeError(f"check_grads differentiates float and complex arrays only, got an "
                    f"argument leaf of dtype {a.dtype}")


def _to64(x: Any) -> np.ndarray:
    """In double precision: float64, or complex128 for complex values."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _is_float(y: Any) -> bool:
    return np.asarray(y).dtype.kind in "fc"


def _float_leaves(tree: Any, like: list, out: Any = None) -> list:
    """Leaves of ``tree``; None where ``like`` (or the primal output ``out``) has no float."""
    leaves = tree_leaves(tree)
    if out is not None:
        mask = [_is_float(y) for y in tree_leaves(out)]
    else:
        mask = [e is not None for e in like]
    if len(mask) != len(leaves):
        return leaves
    return [t if keep else None for t, keep in zip(leaves, mask)]


def _cotangent_leaves(ct: Any, args: tuple) -> list:
    """Leaves of the input cotangents, with zeros for any left out (None)."""
    ct_leaves = tree_leaves(ct, none_is_leaf=True)
    arg_leaves = tree_leaves(args)
    if len(ct_leaves) != len(arg_leaves):
        raise AssertionError(f"check_grads: vjp returned {len(ct_leaves)} cotangent leaves "
                             f"for {len(arg_leaves)} input leaves")
    return [np.zeros(np.shape(x)) if c is None else c for c, x in zip(ct_leaves, arg_leaves)]


def _inner(xs: list, ys: list) -> tuple[float, float]:
    """Re Σ x·y over matching leaves (the pairing of a cotangent with a tangent, JAX's
    for complex values), and Σ |x·y| (the scale of its rounding)."""
    total, magnitude = 0.0, 0.0
    for x, y in zip(xs, ys):
        if x is None or y is None:
            continue
        p = _to64(x) * _to64(y)
        total += float(np.sum(p.real))
        magnitude += float(np.sum(np.abs(p)))
    return total, magnitude


def _name(f: Callable) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "name", None) or repr(f)
