"""``python -m dualad bench``: parse the arguments, measure, print the tables."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

import dualad

from . import snapshot
from .registry import GROUP_NOTES, GROUPS, ON_REQUEST, PEER_NAMES, PROBLEMS, SIZE_LABELS
from .report import format_group_table, format_table, format_times, run


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m dualad bench``: measure and print the table.

    Returns 0, or 1 with ``--check`` when dualad misses a target.
    """
    parser = argparse.ArgumentParser(
        prog="python -m dualad bench",
        description="Time dualad's transforms against the NumPy primal and peer libraries "
                    "(jax, autograd, num-dual, numdifftools, torch when installed), "
                    "in one process: a table of problems, then one per group "
                    "(helmholtz: a size sweep; compiled: dualad_gpu against jax.jit). "
                    f"The groups {', '.join(ON_REQUEST)} run only when named by --only, "
                    "or with --all.")
    parser.add_argument("--only", action="append", choices=sorted([*PROBLEMS, *GROUPS]),
                        metavar="NAME",
                        help="run only this problem, or this group of problems (repeatable): "
                             f"{', '.join([*PROBLEMS, *GROUPS])}")
    parser.add_argument("--all", action="store_true",
                        help="run every problem, also the groups run only on request: "
                             f"{', '.join(ON_REQUEST)} (several minutes)")
    parser.add_argument("--peers", default="all",
                        help="comma-separated peers to include, 'all' (default) or 'none'; "
                             f"known: {', '.join(PEER_NAMES)}")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timing loops per implementation; the best is kept (default 5)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds each timing loop lasts at least (default 0.02)")
    parser.add_argument("--times", action="store_true",
                        help="also list every implementation's absolute time")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 if dualad misses a target")
    parser.add_argument("--profile", type=int, default=0, metavar="CALLS",
                        help="instead of timing, profile dualad's implementations of the "
                             "problems over CALLS calls each (after five calls, so that the "
                             "replay runs; DUALAD_REPLAY=0 profiles the interpreter) and print "
                             "the functions with the most own time")
    parser.add_argument("--slow", type=float, default=1.0,
                        help="time once, not in loops, what takes this many seconds per "
                             "call (default 1)")
    parser.add_argument("--runs", type=int, default=1,
                        help="measure every problem this many times (one after the other) "
                             "and print the median times (default 1)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the results to PATH as JSON: the commit, date, "
                             "machine and libraries, and per problem the median ratios and "
                             "times and every run's ratios (the snapshot docs/performance.md "
                             "reads, docs/data/bench*.json)")
    args = parser.parse_args(argv)

    if args.peers == "all":
        peers = None
    elif args.peers == "none":
        peers = []
    else:
        peers = [p.strip() for p in args.peers.split(",") if p.strip()]
        unknown = sorted(set(peers) - set(PEER_NAMES))
        if unknown:
            parser.error(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEER_NAMES)}")
    default = [name for name, p in PROBLEMS.items() if args.all or p.group not in ON_REQUEST]
    selected = dict.fromkeys(
        p.name for name in (args.only or default)
        for p in ([q for q in PROBLEMS.values() if q.group == name] if name in GROUPS
                  else [PROBLEMS[name]]))
    problems = [PROBLEMS[name] for name in selected]

    if args.profile:
        for problem in problems:
            profile(problem, args.profile)
        return 0
    started = snapshot.now()
    runs = [run(problems, peers=peers, repeat=args.repeat, min_time=args.min_time,
                slow=args.slow) for _ in range(max(1, args.runs))]
    results = snapshot.medians(runs)
    if args.json:
        snapshot.write(args.json, {
            **snapshot.metadata(parser.prog, argv), "run_started": started,
            "run_finished": snapshot.now(), "runs": len(runs), "repeat": args.repeat,
            "min_time": args.min_time,
            "peers": "all" if peers is None else peers,
            "problems": snapshot.problem_results(runs)})
    print(f"dualad {dualad.__version__}, numpy {np.__version__}, Python "
          f"{sys.version.split()[0]}; best of {args.repeat} loops of >= {args.min_time:g} s "
          f"(one call when a call takes >= {args.slow:g} s)"
          + (f"; median times of {len(runs)} runs" if len(runs) > 1 else ""))
    single = [r for r in results if r.problem.group is None]
    if single:
        print()
        print(format_table(single))
    for group in dict.fromkeys(r.problem.group for r in results if r.problem.group):
        members = [r for r in results if r.problem.group == group]
        sweep = all(r.problem.size is not None for r in members)
        print()
        options = {"size_label": SIZE_LABELS.get(group, "n")} if sweep else {}
        print((format_group_table if sweep else format_table)(
            members, title=GROUPS.get(group, group), notes=GROUP_NOTES.get(group, ()),
            **options))
    if args.times:
        print()
        print(format_times(results))
    missed = [r.problem.name for r in results if r.met is False]
    return 1 if args.check and missed else 0



def profile(problem, calls: int, top: int = 8) -> None:
    """Print where dualad's implementations of ``problem`` spend ``calls`` calls:
    cProfile's functions with the most own time, per implementation."""
    import cProfile
    import io
    import pstats

    for name in problem.own:
        thunk = problem.factories[name]()
        for _ in range(5):
            thunk()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            thunk()
        profiler.disable()
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("tottime").print_stats(top)
        lines = [line for line in text.getvalue().splitlines()
                 if line.strip() and not line.lstrip().startswith(("Ordered by", "List reduced"))]
        print(f"\n{problem.name} / {name}, {calls} calls:")
        print("\n".join(lines))
