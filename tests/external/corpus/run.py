"""Run the corpus cases of one package through dualad, JAX, autograd and central differences.

Usage::

    python tests/external/corpus/run.py PACKAGE [--limit N] [--out DIR]

PACKAGE is one of ``opfunu``, ``pymoo``, ``lmfit``, ``pvlib``, ``filterpy``. Each
case is checked by :func:`harness.run_case` (with the case's function swapped to
``jax.numpy`` and, if autograd is installed, to ``autograd.numpy``: the JAX and
autograd columns) and written as one JSON line to
``DIR/PACKAGE.jsonl`` (pymoo's cases on a 2-D row go to ``DIR/pymoo-2d.jsonl``);
``DIR`` is ``./corpus-results`` by default. ``--limit N`` stops after the first N
cases. A line per case is printed as it finishes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
import warnings
from pathlib import Path

# One BLAS thread, set before NumPy loads: runs of several packages side by side
# do not compete for cores, and the timings are comparable.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import cases_filterpy
import cases_lmfit
import cases_opfunu
import cases_pvlib
import cases_pymoo
from harness import Case, run_case, short_message

try:
    from autograd_swap import AUTOGRAD
except ImportError:  # no autograd: its column stays empty (ag_ok None)
    AUTOGRAD = None

PACKAGES = {
    "opfunu": cases_opfunu.cases,
    "pymoo": cases_pymoo.cases,
    "lmfit": cases_lmfit.cases,
    "pvlib": cases_pvlib.cases,
    "filterpy": cases_filterpy.cases,
}
DEFAULT_OUT = Path("corpus-results")


def check(case: Case) -> dict:
    """The record of one case; a case that cannot be built is skipped."""
    try:
        f, x, make_jax = case.make()
    except Exception as exc:
        return {"pkg": case.package, "name": case.name, "status": "skip",
                "why": "setup: " + short_message(exc)}
    jax_f = swap_error = None
    try:
        jax_f = make_jax() if make_jax else None
    except Exception as exc:
        swap_error = short_message(exc)
    ag_f = ag_swap_error = None
    try:
        ag_f = make_jax(AUTOGRAD) if make_jax and AUTOGRAD else None
    except Exception as exc:
        ag_swap_error = short_message(exc)
    try:
        rec = run_case(case.package, case.name, f, x, jax_f, ag_f=ag_f)
    except Exception as exc:
        rec = {"pkg": case.package, "name": case.name, "status": "skip",
               "why": "harness: " + short_message(exc)}
    if swap_error:
        rec["jax_ok"] = False
        rec["jax_err"] = "swap: " + swap_error
    if ag_swap_error:
        rec["ag_ok"] = False
        rec["ag_err"] = "swap: " + ag_swap_error
    return rec


def _progress_line(elapsed: float, rec: dict) -> str:
    exc = rec.get("exc")
    exc_text = exc.get("exc", "") if isinstance(exc, dict) else ""
    return (f"[{elapsed:6.1f}s] {rec['name']:50s} {rec['status']:6s} {rec.get('t', '')} "
            f"jax={rec.get('jax_ok')} ag={rec.get('ag_ok')} {exc_text} {rec.get('why', '')} "
            f"{rec.get('wrong', '')}")


def main(package: str, out_dir: Path, limit: int | None) -> None:
    warnings.filterwarnings("ignore")
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.time()
    with contextlib.ExitStack() as stack:
        files = {package: stack.enter_context(open(out_dir / f"{package}.jsonl", "w"))}
        for i, case in enumerate(PACKAGES[package]()):
            if limit and i >= limit:
                break
            rec = check(case)
            if case.package not in files:
                path = out_dir / f"{case.package}.jsonl"
                files[case.package] = stack.enter_context(open(path, "w"))
            files[case.package].write(json.dumps(rec, default=str) + "\n")
            files[case.package].flush()
            print(_progress_line(time.time() - start, rec), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", choices=sorted(PACKAGES))
    parser.add_argument("--limit", type=int, default=None, help="stop after N cases")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder for the results (default ./{DEFAULT_OUT})")
    args = parser.parse_args()
    main(args.package, args.out, args.limit)
