"""Export the newest asv results to the snapshot the docs read, ``docs/data/benchmarks.json``.

From ``asv_benches/``, after an ``asv run``::

    python export_results.py                     # newest commit of the only machine
    python export_results.py --machine vm --commit 9f3e5d3 --output /tmp/b.json

It reads ``results/benchmarks.json`` and ``results/<machine>/<commit>-<env>.json``
through asv's own reader (:mod:`asv.results`) and writes one small JSON file:
the machine, the commit and its date, when the run started, the Python and the
versions of the benchmarked libraries, and per benchmark its type, unit,
parameters and values, nested by parameter (``values[n][impl]`` for a size
sweep, ``values[impl]`` otherwise; ``null`` where asv recorded no value: a peer
not installed, a failure), with the number of samples behind each value. Each
benchmark also names its :data:`dualad.bench.PROBLEMS` entry (by size when it is
a sweep), read from the asv classes, so that the docs can look up titles and
targets.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import functools
import importlib
import importlib.metadata
import json
import math
import subprocess
import sys
from pathlib import Path

from asv import results as asv_results
from asv import util as asv_util

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE.parent / "docs" / "data" / "benchmarks.json"
#: Libraries whose versions are recorded (as installed when exporting, which for asv's
#: "existing" environment is what the run measured unless something was upgraded since).
LIBRARIES = ("dualad", "numpy", "scipy", "jax", "jaxlib", "autograd", "torch", "num-dual",
             "numdifftools", "asv")
#: Benchmark types exported (asv's "type" of a benchmark).
TYPES = ("time", "track", "peakmemory", "memory")


def _iso(ms: float | None) -> str | None:
    """asv's millisecond timestamps as ISO 8601, UTC."""
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="seconds")


def _param(text: str):
    """An asv parameter repr (``"'dualad'"``, ``"50"``) as the value it stands for, as a string
    key (JSON keys are strings)."""
    try:
        return str(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


def _number(x):
    """A finite value to four significant digits (more is noise), or None."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(f"{x:.4g}")


def _nest(params: list[list[str]], flat: list) -> dict | object:
    """asv's flat list of values (itertools.product order of ``params``) as nested dicts."""
    if not params:
        return flat[0] if isinstance(flat, list) else flat
    (first, *rest), stride = params, math.prod(len(p) for p in params[1:])
    return {_param(v): _nest(rest, flat[i * stride:(i + 1) * stride]) for i, v in enumerate(first)}


def _problems(name: str) -> dict[str, str] | str | None:
    """The :data:`dualad.bench.PROBLEMS` name(s) behind an asv benchmark ``module.Class.method``,
    from the class's ``problems`` attribute (``benchmarks/common.py``), or None."""
    module, cls_name, _ = name.split(".")
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    try:
        cls = getattr(importlib.import_module(f"benchmarks.{module}"), cls_name)
        problems = cls.problems
    except Exception:                       # not made by benchmark_classes, or renamed
        return None
    if list(problems) == [()]:
        return problems[()]
    return {str(size[0]): problem for size, problem in problems.items()}


def _python_version(python: str | None) -> str | None:
    """The version of the interpreter asv recorded (an existing environment records its
    path), or what asv recorded when that interpreter cannot be run."""
    if python and Path(python).is_file():
        try:
            code = "import platform; print(platform.python_version())"
            return subprocess.run([python, "-c", code], capture_output=True, text=True,
                                  check=True, timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return python


def newest(results_dir: Path, machine: str, commit: str | None) -> list[asv_results.Results]:
    """The result files of the newest commit (by commit date, then run time), or of ``commit``."""
    found = list(asv_results.iter_results_for_machine(str(results_dir), machine))
    if commit is not None:
        found = [r for r in found if r.commit_hash.startswith(commit)]
    if not found:
        raise SystemExit(f"no asv results for machine {machine!r}"
                         + (f" and commit {commit}" if commit else "") + f" in {results_dir}")
    latest = max(found, key=lambda r: (r.date or 0, max(r.started_at.values(), default=0)))
    return [r for r in found if r.commit_hash == latest.commit_hash]


def export(results_dir: Path, machine: str | None = None, commit: str | None = None) -> dict:
    machines = sorted(p.name for p in results_dir.iterdir() if (p / "machine.json").exists())
    if machine is None:
        if len(machines) != 1:
            raise SystemExit(f"several machines in {results_dir} ({', '.join(machines)}): "
                             "pass --machine")
        machine = machines[0]
    machine_info = asv_util.load_json(str(results_dir / machine / "machine.json"))
    machine_info.pop("version", None)
    benchmarks = asv_util.load_json(str(results_dir / "benchmarks.json"))
    runs = newest(results_dir, machine, commit)

    exported: dict[str, dict] = {}
    started, durations = [], []
    for run in sorted(runs, key=lambda r: r.env_name):
        for key in sorted(run.get_result_keys(benchmarks)):
            meta = benchmarks[key]
            if meta["type"] not in TYPES or key in exported:
                continue
            params = run.get_result_params(key)
            values = [_number(v) for v in run.get_result_value(key, params)]
            stats = run.get_result_stats(key, params)
            samples = [None if s is None else s.get("repeat") for s in stats]
            entry = {
                "type": meta["type"],
                "unit": meta["unit"],
                "param_names": meta["param_names"],
                "params": [[_param(v) for v in p] for p in params],
                "values": _nest(params, values),
                "samples": _nest(params, samples),
                "started_at": _iso(run.started_at.get(key)),
            }
            problems = _problems(key)
            if problems is not None:
                entry["problem" if isinstance(problems, str) else "problems"] = problems
            exported[key] = entry
            started.append(run.started_at.get(key))
            durations.append(run.duration.get(key) or 0.0)

    first = runs[0]
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = None
    started = [s for s in started if s is not None]
    return {
        "schema": 1,
        "generated_by": "asv_benches/export_results.py",
        "machine": {"name": machine, **machine_info},
        "python": _python_version(first.params.get("python")),
        "environments": sorted(r.env_name for r in runs),
        "commit": first.commit_hash,
        "commit_date": _iso(first.date),
        "run_started": _iso(min(started)) if started else None,
        "run_finished": _iso(max(started)) if started else None,
        "run_seconds": round(sum(durations), 1),
        "libraries": versions,
        "benchmarks": exported,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=HERE / "results",
                        help="asv's results directory (default: %(default)s)")
    parser.add_argument("--machine", help="machine name (default: the only one)")
    parser.add_argument("--commit", help="commit hash or prefix (default: the newest)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help="the snapshot to write (default: %(default)s)")
    args = parser.parse_args(argv)

    snapshot = export(args.results, args.machine, args.commit)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(_dumps(snapshot), encoding="utf-8")
    n = len(snapshot["benchmarks"])
    missing = sum(1 for b in snapshot["benchmarks"].values()
                  if all(v is None for v in _leaves(b["values"])))
    print(f"wrote {args.output}: {n} benchmarks ({missing} without any value), commit "
          f"{snapshot['commit'][:8]} of {snapshot['commit_date']}, machine "
          f"{snapshot['machine']['name']}")
    return 0


def _dumps(snapshot: dict) -> str:
    """JSON with a line per top-level field and per benchmark (compact, and a refresh
    diffs benchmark by benchmark)."""
    line = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)
    fields = [f"  {line(k)}: {line(v)}" for k, v in snapshot.items() if k != "benchmarks"]
    benchmarks = [f"    {line(k)}: {line(v)}" for k, v in snapshot["benchmarks"].items()]
    return ("{\n" + ",\n".join(fields) + ',\n  "benchmarks": {\n' + ",\n".join(benchmarks)
            + "\n  }\n}\n")


def _leaves(values):
    if isinstance(values, dict):
        for v in values.values():
            yield from _leaves(v)
    else:
        yield values


if __name__ == "__main__":
    sys.exit(main())
