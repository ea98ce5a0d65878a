"""Check one function of a package: dualad's derivatives against references.

A case is a function ``f`` of a 1-D float64 vector ``x`` (a point inside its
domain). :func:`run_case` calls ``dualad.jacfwd(f)``, ``dualad.jacrev(f)`` and
``dualad.hessian(sum f)`` three times each at ``x`` and gives one of four verdicts:

- ``right``: every call returned, the first call of each transform matches a
  reference and the later calls match the first (rtol 1e-12);
- ``wrong``: a result does not match (dualad may also have raised on other calls);
- ``raised``: dualad raised on some call and every result it returned matched;
- ``skip``: ``f(x)`` itself fails or is not finite, so there is nothing to check.

The reference for a first call is JAX, when the function with ``numpy`` swapped
for ``jax.numpy`` (:mod:`jax_swap`) gives NumPy's value: ``jax.jacfwd`` and
``jax.hessian`` at rtol 1e-6. Otherwise it is central differences at five step
sizes (rtol 1e-5, atol 1e-7 times the largest entry); for a Hessian, central
differences of dualad's own gradient (or, if no gradient call worked, of a
central-difference gradient at rtol 1e-3).

The autograd column (:func:`_autograd_column`) leaves the verdict alone: the
function with ``numpy`` swapped for ``autograd.numpy`` (:mod:`autograd_swap`)
counts as run by autograd when it gives NumPy's value and ``autograd.jacobian``
and ``autograd.hessian`` (of its sum) return results that match a reference at
JAX's tolerance (rtol 1e-6): JAX, dualad's first call, or central differences.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import scipy

import dualad

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # the autograd column is left empty
    autograd = anp = None

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

TRANSFORMS = ("jacfwd", "jacrev", "hessian")
CALLS_PER_TRANSFORM = 3
TIMEOUT_S = 20
FD_STEPS = (1e-6, 1e-5, 1e-7, 1e-4, 1e-8)

# Frames in these folders are not the failing line of the package's own code.
_LIBRARY_DIRS = tuple(str(Path(module.__file__).parent) + os.sep
                      for module in (dualad, np, jax, jaxlib, scipy, autograd)
                      if module is not None)
_HARNESS_DIR = str(Path(__file__).parent) + os.sep
_REPOSITORY_ROOT = str(Path(dualad.__file__).parent.parent) + os.sep


class Case(NamedTuple):
    """One function of a package, built on demand.

    ``make()`` returns ``(f, x, make_jax)``: ``f`` maps a 1-D float vector to an
    array, ``x`` is the point, and ``make_jax()`` (or None) returns ``f`` with
    ``numpy`` swapped for ``jax.numpy``; ``make_jax(autograd_swap.AUTOGRAD)``
    swaps in ``autograd.numpy`` instead (any :class:`jax_swap.Backend`).
    """

    package: str
    name: str
    make: Callable[[], tuple[Callable, np.ndarray, Callable | None]]


class Timeout(Exception):
    """A case ran past its time limit."""


def _raise_timeout(signum, frame):
    raise Timeout("per-function timeout")


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise :class:`Timeout` in the block after ``seconds`` (SIGALRM, main thread)."""
    previous = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def short_message(exc: BaseException) -> str:
    """The exception's type and first line, addresses and numbers normalised.

    Equal messages group the failures of one cause across cases.
    """
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    line = re.sub(r"0x[0-9a-f]+", "0x..", line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    return f"{type(exc).__name__}: {line[:160]}"


def _frame_text(frame: traceback.FrameSummary) -> str:
    path = frame.filename.split("site-packages/")[-1]
    return f"{path}:{frame.lineno}: {(frame.line or '').strip()[:150]}"


def failure_site(tb) -> dict:
    """Where an exception came from, as ``'file:line: code'`` strings.

    ``site``: the innermost frame outside dualad, NumPy, SciPy, JAX and this
    harness (the package's line that tripped); ``inner``: the innermost frame.
    """
    frames = traceback.extract_tb(tb)
    out = {}
    outside = [frame for frame in frames
               if not frame.filename.startswith(_LIBRARY_DIRS + (_HARNESS_DIR,))]
    if outside:
        out["site"] = _frame_text(outside[-1])
    if frames:
        out["inner"] = _frame_text(frames[-1]).replace(_REPOSITORY_ROOT, "")
    return out


def _failure(exc: BaseException) -> dict:
    return {"exc": short_message(exc), "raw": f"{type(exc).__name__}: {str(exc)[:300]}",
            **failure_site(exc.__traceback__)}


# ---------------------------------------------------------------- comparisons

def fd_jacobian(f: Callable, x: np.ndarray, rel_step: float) -> np.ndarray:
    """Central-difference Jacobian, shape ``f(x).shape + (x.size,)``."""
    f0 = np.asarray(f(x), dtype=float)
    jac = np.zeros(f0.shape + (x.size,))
    for i in range(x.size):
        h = rel_step * max(1.0, abs(x[i]))
        up = x.copy()
        up[i] += h
        down = x.copy()
        down[i] -= h
        jac[..., i] = (np.asarray(f(up), float) - np.asarray(f(down), float)) / (2 * h)
    return jac


def close(a, b, rtol: float, atol: float) -> tuple[bool, float | str]:
    """Whether ``a`` matches ``b`` (atol scaled by max(1, max|b|)), and the largest error.

    ``a`` is reshaped to ``b``'s shape when the sizes agree; otherwise the error is
    a string naming both shapes.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        if a.size != b.size:
            return False, f"shape {a.shape} vs {b.shape}"
        a = a.reshape(b.shape)
    scale = max(1.0, np.nanmax(np.abs(b)) if b.size else 1.0)
    ok = np.allclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True)
    err = np.nanmax(np.abs(a - b)) if a.size else 0.0
    return ok, float(err)


def fd_match(jac, f: Callable, x: np.ndarray, rtol: float = 1e-5, atol: float = 1e-7):
    """Whether ``jac`` matches central differences of ``f`` at any of :data:`FD_STEPS`.

    Returns ``(ok, err, fd_jac)``: on no match, the step with the smallest error.
    """
    best = None
    for rel_step in FD_STEPS:
        try:
            fd = fd_jacobian(f, x, rel_step)
        except Exception:
            continue
        ok, err = close(jac, fd, rtol, atol)
        if best is None or (isinstance(err, float)
                            and (not isinstance(best[1], float) or err < best[1])):
            best = (ok, err, fd)
        if ok:
            return True, err, fd
    return False, (best[1] if best else None), (best[2] if best else None)


# ---------------------------------------------------------------- the three stages

def _call_transform(kind: str, f: Callable, x: np.ndarray):
    if kind == "jacfwd":
        return dualad.jacfwd(f)(x)
    if kind == "jacrev":
        return dualad.jacrev(f)(x)
    return dualad.hessian(lambda z: np.sum(f(z)))(x)


def _dualad_calls(f: Callable, x: np.ndarray, timeout: int) -> tuple[dict, dict | None]:
    """Each transform called :data:`CALLS_PER_TRANSFORM` times.

    Returns ``{kind: [array or failure dict, ...]}`` (a transform cut off by the
    time limit is left out) and the first failure, with the call that raised it.
    """
    calls: dict[str, list] = {}
    first_failure = None
    try:
        with time_limit(timeout):
            for kind in TRANSFORMS:
                results = []
                for k in range(CALLS_PER_TRANSFORM):
                    try:
                        results.append(np.array(_call_transform(kind, f, x), dtype=float))
                    except Timeout:
                        raise
                    except Exception as exc:
                        failure = _failure(exc)
                        results.append(failure)
                        if first_failure is None:
                            first_failure = dict(failure, call=f"{kind}#{k + 1}")
                calls[kind] = results
    except Timeout:
        first_failure = first_failure or {"exc": "Timeout: per-function timeout", "call": "?"}
    return calls, first_failure


def _jax_reference(jax_f: Callable, x: np.ndarray, f0: np.ndarray, rec: dict, timeout: int):
    """JAX's Jacobian and Hessian of the swapped function, or ``(None, None)``.

    Sets ``rec["jax_ok"]``; on failure also ``jax_err`` and ``jax_site``.
    """
    try:
        with time_limit(timeout):
            xj = jnp.asarray(x)
            value = np.asarray(jax_f(xj), float)
            if value.size == f0.size:
                value = value.reshape(f0.shape)
            if not close(value, f0, 1e-9, 1e-12)[0]:
                raise ValueError("JAX-swapped value differs from NumPy value")
            jac = np.asarray(jax.jacfwd(jax_f)(xj), float)
            hess = np.asarray(jax.hessian(lambda z: jnp.sum(jax_f(z)))(xj), float)
    except Exception as exc:
        rec["jax_ok"] = False
        rec["jax_err"] = short_message(exc)
        rec["jax_site"] = failure_site(exc.__traceback__).get("site")
        return None, None
    rec["jax_ok"] = True
    return jac, hess


def _autograd_matches(result: np.ndarray, refs: list, x: np.ndarray) -> str | None:
    """The name of the first reference in ``refs`` that ``result`` matches, or None.

    ``refs`` is ``[(name, ref)]``; ``ref`` is None (skipped), an array (rtol 1e-6,
    atol 1e-9, as JAX against dualad) or a function, whose central differences
    are the reference (:func:`fd_match`, rtol 1e-5).
    """
    for name, ref in refs:
        if ref is None:
            continue
        if callable(ref):
            if fd_match(result, ref, x)[0]:
                return name
        elif ref.size == result.size and close(result, ref.reshape(result.shape),
                                               1e-6, 1e-9)[0]:
            return name
    return None


def _autograd_column(ag_f: Callable, f: Callable, x: np.ndarray, f0: np.ndarray, rec: dict,
                     timeout: int, calls: dict, jax_jac, jax_hess) -> None:
    """Whether autograd differentiates the swapped function ``ag_f``: ``rec["ag_ok"]``.

    As for JAX, the swapped value must equal NumPy's (rtol 1e-9) and
    ``autograd.jacobian`` and ``autograd.hessian`` (of the sum) must return, within
    ``timeout``. Then each result must match a reference (:func:`_autograd_matches`,
    within ``3 * timeout``): the Jacobian JAX's, dualad's first ``jacfwd`` (or
    ``jacrev``), or central differences of ``f``; the Hessian JAX's, dualad's first
    ``hessian``, or central differences of autograd's gradient.

    Sets ``ag_ok`` and, when it ran, ``ag_ref`` (the references matched) and
    ``ag_dualad`` (whether autograd's Jacobian equals dualad's first one, rtol
    1e-6); when not, ``ag_err``, ``ag_stage`` (value, jacobian, hessian or check)
    and ``ag_site``. autograd's warning that the Jacobian's output does not depend
    on the input (its trace was cut and it returns zeros) is kept in ``ag_note``.
    """
    stage = "value"
    t0 = time.time()
    try:
        with time_limit(timeout):
            value = np.asarray(ag_f(x.copy()), float)
            if value.size == f0.size:
                value = value.reshape(f0.shape)
            if not close(value, f0, 1e-9, 1e-12)[0]:
                raise ValueError("autograd-swapped value differs from NumPy value")
            stage = "jacobian"
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                jac = np.asarray(autograd.jacobian(ag_f)(x), float)
            notes = {str(w.message) for w in caught if "independent of input" in str(w.message)}
            if notes:
                rec["ag_note"] = "jacobian: " + sorted(notes)[0]
            stage = "hessian"
            hess = np.asarray(autograd.hessian(lambda z: anp.sum(ag_f(z)))(x), float)
    except Exception as exc:
        rec.update(ag_ok=False, ag_err=short_message(exc), ag_stage=stage,
                   ag_site=failure_site(exc.__traceback__).get("site"),
                   t_autograd=round(time.time() - t0, 2))
        return

    def first(kind):
        results = calls.get(kind) or [None]
        return results[0] if isinstance(results[0], np.ndarray) else None

    def autograd_gradient(z):
        return np.asarray(autograd.grad(lambda w: anp.sum(ag_f(w)))(z), float)

    dualad_jac = first("jacfwd") if first("jacfwd") is not None else first("jacrev")
    shaped = jac.reshape(f0.shape + (x.size,)) if jac.size == f0.size * x.size else jac
    try:
        with time_limit(timeout * 3):
            if dualad_jac is not None:
                rec["ag_dualad"] = _autograd_matches(jac, [("dualad", dualad_jac)], x) is not None
            jac_ref = _autograd_matches(shaped, [("jax", jax_jac), ("dualad", dualad_jac),
                                                 ("fd", f)], x)
            hess_ref = _autograd_matches(hess, [("jax", jax_hess), ("dualad", first("hessian")),
                                                ("fd", autograd_gradient)], x)
    except Exception as exc:
        rec.update(ag_ok=False, ag_err="check: " + short_message(exc), ag_stage="check",
                   t_autograd=round(time.time() - t0, 2))
        return
    rec["t_autograd"] = round(time.time() - t0, 2)
    if jac_ref is None or hess_ref is None:
        what = "Jacobian" if jac_ref is None else "Hessian"
        rec.update(ag_ok=False, ag_stage="check",
                   ag_err=f"autograd's {what} matches no reference (JAX, dualad, FD)")
        return
    rec.update(ag_ok=True, ag_ref=f"jac:{jac_ref},hess:{hess_ref}")


def _check_jacobian(kind, k, result, f, x, f0, jax_jac) -> str | None:
    ref = jax_jac
    if ref is not None:
        ref_shaped = ref.reshape(result.shape) if ref.size == result.size else ref
        if close(result, ref_shaped, 1e-6, 1e-9)[0]:
            return None
    shaped = (result.reshape(f0.shape + (x.size,)) if result.size == f0.size * x.size
              else result)
    ok, err, _ = fd_match(shaped, f, x)
    if ok:
        return None
    jax_err = (close(result, ref.reshape(result.shape), 0, 0)[1]
               if ref is not None and ref.size == result.size else None)
    return f"{kind}#{k + 1}: mismatch vs FD (max abs err {err}) and vs JAX ({jax_err})"


def _check_hessian(k, result, summed, x, calls, jax_hess) -> str | None:
    ref = jax_hess
    if ref is not None and close(result, ref, 1e-6, 1e-9)[0]:
        return None

    def fd_gradient(z):
        return fd_jacobian(summed, z, 1e-5)

    # dualad's gradient (a fresh transform per evaluation), from a transform that worked.
    source = next((kind for kind in ("jacrev", "jacfwd")
                   if calls.get(kind) and isinstance(calls[kind][0], np.ndarray)), None)
    if source is None:
        ok, err, _ = fd_match(result, fd_gradient, x, rtol=1e-3, atol=1e-5)
    else:
        transform = getattr(dualad, source)

        def exact_gradient(z):
            return np.asarray(transform(summed)(z), float)
        try:
            ok, err, _ = fd_match(result, exact_gradient, x)
        except Exception:
            ok, err, _ = fd_match(result, fd_gradient, x, rtol=1e-3, atol=1e-5)
    if ok:
        return None
    jax_err = close(result, ref, 0, 0)[1] if ref is not None and ref.size == result.size else None
    return f"hessian#{k + 1}: mismatch vs FD-of-gradient (max abs err {err}) and vs JAX ({jax_err})"


def _collect_wrong(wrong: list[str], calls, f, x, f0, jax_jac, jax_hess) -> None:
    """Append to ``wrong`` a line per call whose result matches no reference.

    Appends as it goes: lines found before a time-out or an error are kept.
    """
    # One function object for every Hessian check of the case: dualad keeps a
    # transform's replay state per function.
    def summed(z):
        return np.sum(np.asarray(f(z), float))

    for kind in TRANSFORMS:
        results = calls.get(kind, [])
        for k, result in enumerate(results):
            if isinstance(result, dict):
                continue
            if k > 0 and isinstance(results[0], np.ndarray):
                if not close(result, results[0], 1e-12, 1e-14)[0]:
                    diff = close(result, results[0], 0, 0)[1]
                    wrong.append(f"{kind}#{k + 1} differs from {kind}#1 (max diff {diff:.3g})")
                continue
            if kind == "hessian":
                line = _check_hessian(k, result, summed, x, calls, jax_hess)
            else:
                line = _check_jacobian(kind, k, result, f, x, f0, jax_jac)
            if line:
                wrong.append(line)


def run_case(package: str, name: str, f: Callable, x, jax_f: Callable | None = None,
             timeout: int = TIMEOUT_S, ag_f: Callable | None = None) -> dict:
    """The record of one case: its verdict (``status``) and what led to it.

    ``timeout`` bounds dualad's calls, JAX's and autograd's; the reference checks
    get three times it. ``ag_f`` (the function swapped to ``autograd.numpy``), if
    given, fills the autograd column after the verdict (:func:`_autograd_column`).
    """
    rec = {"pkg": package, "name": name, "n": int(x.size)}
    x = np.asarray(x, dtype=np.float64)
    t0 = time.time()
    try:
        f0 = np.asarray(f(x), dtype=float)
    except Exception as exc:
        rec.update(status="skip", why="base eval: " + short_message(exc))
        return rec
    if not np.all(np.isfinite(f0)):
        rec.update(status="skip", why="non-finite value at point")
        return rec
    rec["m"] = int(f0.size)

    calls, first_failure = _dualad_calls(f, x, timeout)
    rec["t_dualad"] = round(time.time() - t0, 2)

    jax_jac = jax_hess = None
    rec["jax_ok"] = None
    if jax_f is not None:
        jax_jac, jax_hess = _jax_reference(jax_f, x, f0, rec, timeout)

    wrong = []
    try:
        with time_limit(timeout * 3):
            _collect_wrong(wrong, calls, f, x, f0, jax_jac, jax_hess)
    except Timeout:
        rec["ref_timeout"] = True
    except Exception as exc:
        rec["ref_error"] = short_message(exc)

    rec["calls"] = {kind: ["ok" if isinstance(r, np.ndarray) else r["exc"] for r in results]
                    for kind, results in calls.items()}
    if wrong:
        rec["status"] = "wrong"
        rec["wrong"] = wrong
        if first_failure:
            rec["exc"] = first_failure
    elif first_failure:
        rec["status"] = "raised"
        rec["exc"] = first_failure
    else:
        rec["status"] = "right"
    rec["t"] = round(time.time() - t0, 2)
    rec["ag_ok"] = None
    if ag_f is not None and autograd is not None:
        _autograd_column(ag_f, f, x, f0, rec, timeout, calls, jax_jac, jax_hess)
    return rec
