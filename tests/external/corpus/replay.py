"""Replay sweep: each transform called 12 times at the same point, each call against the first.

Usage::

    python tests/external/corpus/replay.py PACKAGE [--out DIR]

PACKAGE is a package of ``run.py`` or ``pymoo-2d``. ``run.py`` calls each transform
three times, all of them interpreted: dualad records a trace only after
``dualad.replay.cache.RECORD_AFTER`` (8) interpreted calls and replays it from then
on. This sweep reaches the replay: for every case of ``DIR/PACKAGE.jsonl`` that
was not skipped and each transform whose first call returned, it calls the same
transform 12 times and compares calls 2 to 12 with call 1, which ran with the
replay off (interpreted). A call differs when it is not bit-for-bit equal to
call 1 (NaN equal to NaN); its line says whether it is within rtol 1e-10
("differs in last bits") and whether it brought NaN in. A call that raises ends
its transform's sweep. One JSON line per case, with the transform's counts of
interpreted, recorded, replayed and continued calls, goes to
``DIR/replay_PACKAGE.jsonl``; the cases with findings are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # as in run.py

import numpy as np

import dualad
from harness import TRANSFORMS, Case, Timeout, close, short_message, time_limit
from run import DEFAULT_OUT, PACKAGES

CALLS = 12
TIMEOUT_S = 30


def _transform(kind: str, f):
    if kind == "jacfwd":
        return dualad.jacfwd(f)
    if kind == "jacrev":
        return dualad.jacrev(f)
    return dualad.hessian(lambda z: np.sum(f(z)))


def _sweep(kind: str, f, x, rec: dict) -> None:
    """Call one transform :data:`CALLS` times; append each finding to ``rec["bad"]``."""
    transform = _transform(kind, f)
    first = None
    for k in range(CALLS):
        try:
            value = np.array(transform(x), dtype=float)
        except Exception as exc:
            rec["bad"].append(f"{kind}#{k + 1} raised {short_message(exc)}")
            break
        if first is None:
            first = value
            continue
        if not np.array_equal(value, first, equal_nan=True):
            ok, err = close(value, first, 1e-10, 1e-12)
            nan = "NaN " if np.isnan(value).any() and not np.isnan(first).any() else ""
            how = "differs" if not ok else "differs in last bits"
            rec["bad"].append(f"{kind}#{k + 1} {nan}{how} (max diff {err:.3g})")
    rec[kind + "_counts"] = getattr(transform, "counts", None)


def sweep_case(case: Case, first_run: dict) -> dict | None:
    """The sweep's record of one case, or None when the case cannot be built."""
    try:
        f, x, _ = case.make()
    except Exception:
        return None
    calls = first_run.get("calls", {})
    rec = {"pkg": case.package, "name": case.name, "bad": []}
    try:
        with time_limit(TIMEOUT_S):
            for kind in TRANSFORMS:
                if calls.get(kind) and calls[kind][0] == "ok":
                    _sweep(kind, f, x, rec)
    except Timeout:
        rec["timeout"] = True
    return rec


def main(package: str, out_dir: Path) -> None:
    warnings.filterwarnings("ignore")
    with open(out_dir / f"{package}.jsonl") as results:
        first_runs = {rec["name"]: rec for rec in map(json.loads, results)}
    start = time.time()
    with open(out_dir / f"replay_{package}.jsonl", "w") as out:
        for case in PACKAGES[package.split("-")[0]]():
            first_run = first_runs.get(case.name)
            if case.package != package or not first_run or first_run["status"] == "skip":
                continue
            rec = sweep_case(case, first_run)
            if rec is None:
                continue
            out.write(json.dumps(rec, default=str) + "\n")
            out.flush()
            if rec["bad"] or rec.get("timeout"):
                timeout = "TIMEOUT" if rec.get("timeout") else ""
                print(f"[{time.time() - start:6.1f}s] {case.name:45s} {rec['bad'][:4]} {timeout}",
                      flush=True)
    print("done", time.time() - start)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", choices=sorted([*PACKAGES, "pymoo-2d"]))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder of run.py's results (default ./{DEFAULT_OUT})")
    args = parser.parse_args()
    main(args.package, args.out)
