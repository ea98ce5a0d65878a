"""Snapshots of ``python -m dualad bench`` and ``python -m dualad.bench.solvers``: JSON
files that the docs' performance page reads (``docs/data/bench*.json``).

A snapshot carries what ``docs/data/benchmarks.json`` (asv's results, exported by
``asv_benches/export_results.py``) carries — the commit (and whether the working tree had
uncommitted changes), its date, when the run started and ended, the machine, the Python
and the libraries' versions — plus the command that made it, and per problem the median
over ``runs`` runs of each implementation's ratio to the primal and of its seconds per
call, with every run's ratios.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .report import Result

#: Libraries whose versions are recorded (those of ``asv_benches/export_results.py``).
LIBRARIES = ("dualad", "numpy", "scipy", "jax", "jaxlib", "autograd", "torch", "num-dual",
             "numdifftools")


def now() -> str:
    """The time, UTC, in ISO 8601 to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _git(*args: str) -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def metadata(prog: str, argv: Sequence[str] | None) -> dict:
    """The command (``prog`` and ``argv``, by default this process's arguments after
    ``prog``'s), the commit, the machine (and the accelerator the compiled problems ran
    on), the Python and the libraries of this process."""
    from ..replay import REPLAY_BY_DEFAULT

    commit = _git("rev-parse", "HEAD")
    # (the snapshots themselves change nothing measured)
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  ":(exclude)docs/data")
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = None
    return {
        "schema": 1,
        "command": " ".join([prog, shlex.join(_arguments(prog, argv))]),
        "commit": commit,
        "commit_date": _git("show", "-s", "--format=%cI", "HEAD") if commit else None,
        "dirty": None if status is None else bool(status),
        "machine": {"name": platform.node(), "arch": platform.machine(), "cpu": _cpu(),
                    "num_cpu": os.cpu_count(), "os": f"{platform.system()} {platform.release()}",
                    "ram": _ram()},
        "accelerator": _accelerator(),
        "python": platform.python_version(),
        "libraries": versions,
        "replay": REPLAY_BY_DEFAULT,
        "environment": {k: v for k, v in os.environ.items()
                        if k.startswith("DUALAD_") or k.endswith("_NUM_THREADS")},
    }


def _accelerator() -> str | None:
    """The kind of JAX's default device where that is not the CPU (the compiled problems
    ran on it), when the run imported jax; else None."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    device = jax.devices()[0]
    return None if device.platform == "cpu" else device.device_kind


def _arguments(prog: str, argv: Sequence[str] | None) -> list[str]:
    if argv is not None:
        return list(argv)
    args, words = sys.argv[1:], prog.split()
    return args[1:] if args[:1] == words[-1:] else args   # "python -m dualad bench ..."


def _number(x: float | None) -> float | None:
    """Four significant digits (more is noise)."""
    return None if x is None else float(f"{x:.4g}")


def medians(runs: Sequence[Sequence[Result]]) -> list[Result]:
    """One :class:`~dualad.bench.Result` per problem from several runs of the same problems:
    each implementation's median time (over the runs that timed it every time)."""
    return [Result(first.problem, {i: statistics.median(r.times[i] for r in results)
                                   for i in first.times if all(i in r.times for r in results)},
                   dict(first.missing), dict(first.peaks))
            for results in zip(*runs) for first in results[:1]]


def problem_results(runs: Sequence[Sequence[Result]]) -> dict[str, dict]:
    """Per problem, from the :class:`~dualad.bench.Result` lists of several runs of the same
    problems: the medians of each implementation's ratio to the primal and seconds, every
    run's ratios, and dualad's targets in this run (the peer that set one, if one did) and
    whether the median times met them."""
    out: dict[str, dict] = {}
    for results, median in zip(zip(*runs), medians(runs)):
        problem = median.problem
        ratios = {i: [r.ratio(i) for r in results] for i in median.times if i != "primal"}
        target = {i: median.target_of(i) for i in problem.own}
        out[problem.name] = {
            "title": problem.title,
            "group": problem.group,
            "size": problem.size,
            "ratio": {i: _number(statistics.median(v)) for i, v in ratios.items()},
            "ratio_runs": {i: [_number(x) for x in v] for i, v in ratios.items()},
            "seconds": {i: _number(t) for i, t in median.times.items()},
            "target": {i: _number(t) for i, (t, _) in target.items()},
            "target_by": {i: by for i, (_, by) in target.items() if by is not None},
            "met": {i: median.met_of(i) for i in problem.own},
            "missing": dict(median.missing),
            "peak_bytes": dict(median.peaks),
        }
    return out


def write(path: str | os.PathLike, snapshot: dict) -> None:
    """``snapshot`` as JSON, a line per problem (a refresh diffs problem by problem)."""
    line = json.dumps
    fields = [f"  {line(k)}: {line(v, ensure_ascii=False)}"
              for k, v in snapshot.items() if k != "problems"]
    problems = [f"    {line(k)}: {line(v, ensure_ascii=False, allow_nan=False)}"
                for k, v in snapshot.get("problems", {}).items()]
    text = "{\n" + ",\n".join(fields) + ',\n  "problems": {\n' + ",\n".join(problems) + "\n  }\n}\n"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")
    print(f"wrote {path}: {len(problems)} problems, commit {(snapshot['commit'] or '?')[:10]}"
          f"{' (with uncommitted changes)' if snapshot.get('dirty') else ''}", file=sys.stderr)
