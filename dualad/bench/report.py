"""Measuring problems together (:func:`run`) and printing the results as tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .core import PeerUnavailable, Problem, Thunk, measure, peak_memory
from .second_order import NUMPY_LEVEL_PEERS


# -- one process, one table ------------------------------------------------------------


@dataclass
class Result:
    """The measurements of one problem: seconds per call, or why a peer is missing,
    and for a problem with :attr:`Problem.memory` the peak bytes allocated by one
    call of the primal and of dualad's implementations."""

    problem: Problem
    times: dict[str, float]
    missing: dict[str, str]
    peaks: dict[str, int] = field(default_factory=dict)

    def ratio(self, impl: str) -> float:
        return self.times[impl] / self.times["primal"]

    def target_of(self, impl: str | None = None) -> tuple[float | None, str | None]:
        """The target ratio to the primal in this run of one of dualad's
        implementations (the first by default), and the peer that set it (if one
        did): a peer to beat (:attr:`Problem.beat`), or the :attr:`Problem.versus`
        peer, whose ratio times :attr:`Problem.versus_target` is the target."""
        impl = self.problem.own[0] if impl is None else impl
        target, by = self.problem.target_of(impl), None
        for peer in self.problem.beat:
            if peer in self.times and (target is None or self.ratio(peer) < target):
                target, by = self.ratio(peer), peer
        versus, factor = self.problem.versus, self.problem.versus_target
        if factor is not None and impl in self.problem.own and versus in self.times:
            scaled = factor * self.ratio(versus)
            if target is None or scaled < target:
                target, by = scaled, versus
        return target, by

    @property
    def target(self) -> tuple[float | None, str | None]:
        """dualad's target ratio in this run, and the peer that set it (if one did)."""
        return self.target_of()

    def met_of(self, impl: str | None = None) -> bool | None:
        """Whether ``impl`` (dualad's first implementation by default) met its target
        (``<=`` a fixed one or a multiple of the ``versus`` peer, ``<`` a peer to
        beat); ``None`` when there is none, or ``impl`` did not run."""
        impl = self.problem.own[0] if impl is None else impl
        target, by = self.target_of(impl)
        if target is None or impl not in self.times:
            return None
        r = self.ratio(impl)
        return r < target if by in self.problem.beat else r <= target

    @property
    def met(self) -> bool | None:
        """Whether every dualad implementation met its target; ``None`` when none has one."""
        mets = [m for m in map(self.met_of, self.problem.own) if m is not None]
        return all(mets) if mets else None

    def cell(self, impl: str) -> str:
        """``impl``'s ratio for a table: ``n/a`` when it is missing, ``-`` when not tried."""
        if impl in self.times:
            return _fmt_ratio(self.ratio(impl))
        return "n/a" if impl in self.missing else "-"

    def versus_cell(self, impl: str | None = None) -> str:
        """time(``impl``) / time of the :attr:`Problem.versus` peer, for a table."""
        impl = self.problem.own[0] if impl is None else impl
        versus = self.problem.versus
        if versus is None:
            return "-"
        if impl in self.times and versus in self.times:
            return _fmt_ratio(self.times[impl] / self.times[versus])
        return "n/a"

    def target_text(self, impl: str | None = None) -> str:
        target, by = self.target_of(impl)
        if by is not None and by not in self.problem.beat:
            return f"<= {self.problem.versus_target:g}x {by}"
        if target is None and self.problem.versus_target is not None:
            return f"<= {self.problem.versus_target:g}x {self.problem.versus} (not run)"
        if target is None:
            return "report"
        return f"< {_fmt_ratio(target)} {by}" if by else f"<= {target:g}x"


def run(problems: Iterable[Problem], *, peers: Sequence[str] | None = None,
        repeat: int = 5, min_time: float = 0.02, slow: float = 1.0) -> list[Result]:
    """Measure each problem's primal, dualad and peers (all, or those named) together."""
    results = []
    for problem in problems:
        thunks: dict[str, Thunk] = {}
        missing: dict[str, str] = {}
        for impl in ["primal", *problem.own, *problem.peers]:
            ours = impl == "primal" or impl in problem.own
            if not ours and peers is not None and impl not in peers:
                continue
            try:
                thunks[impl] = problem.make(impl)
            except PeerUnavailable as exc:
                missing[impl] = str(exc)
            except Exception as exc:  # a broken peer must not hide dualad's numbers
                if ours:
                    raise
                missing[impl] = f"failed: {type(exc).__name__}: {exc}"
        times = measure(thunks, repeat=repeat, min_time=min_time, slow=slow)
        peaks = {impl: peak_memory(thunks[impl]) for impl in ["primal", *problem.own]
                 if problem.memory and impl in thunks}
        results.append(Result(problem, times, missing, peaks))
    return results


def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _fmt_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _fmt_ratio(r: float) -> str:
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x" if r >= 100 else f"{r:.1f}x"


def _reference_rows(problem: Problem) -> list[tuple[str, dict[str, float]]]:
    """The problem's reference ratios, labelled: published figures, then the ratios
    measured on another machine when the targets were set."""
    return [*problem.published.items(), ("reference", problem.reference)]


def _reference_cells(refs: dict[str, float], columns: Sequence[str]) -> list[str]:
    """A reference row's cells: the ratio quoted for each column, or blank."""
    return [_fmt_ratio(refs[k]) if k in refs else "" for k in columns]


def _peer_columns(results: Sequence[Result]) -> list[str]:
    """The peers tried (measured, or missing) for any of ``results``, in table order."""
    tried = {k for r in results for k in (*r.times, *r.missing)}
    return [k for k in dict.fromkeys(k for r in results for k in r.problem.peers) if k in tried]


def _missing_lines(results: Sequence[Result]) -> list[str]:
    """Why peers are ``n/a``, one line per peer and reason (a group's problems merged)."""
    why: dict[tuple[str, str], list[Problem]] = {}
    for r in results:
        for peer, reason in r.missing.items():
            why.setdefault((peer, reason), []).append(r.problem)
    lines = []
    for (peer, reason), problems in why.items():
        group = problems[0].group
        where = ", ".join(p.name for p in problems)
        if len(problems) > 1 and group and all(p.group == group for p in problems):
            if all(p.size is not None for p in problems):  # a size sweep
                where = f"{group} (n={','.join(str(p.size) for p in problems)})"
            elif len(problems) == sum(r.problem.group == group for r in results):
                where = group  # every problem of the group
        lines.append(f"  {where} / {peer}: {reason}")
    if lines:
        lines.insert(0, "'n/a': not installed, or failed:")
    return lines


def _layout(head: Sequence[str], rows: Sequence[Sequence[str]], left: set[int]) -> list[str]:
    """``head``, a rule and ``rows`` in aligned columns (those in ``left`` left-justified);
    a short row (a target's) is padded, so that it cuts no column off."""
    rows = [[*r, *[""] * (len(head) - len(r))] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(head), "  ".join("-" * w for w in widths), *map(line, rows)]


def format_table(results: Sequence[Result], *, reference: bool = True,
                 title: str | None = None, notes: Sequence[str] = ()) -> str:
    """The results as a plain-text table (ASCII only, safe on any terminal).

    One row per problem; the dualad column is each problem's first dualad
    implementation (a size sweep reads better as :func:`format_group_table`),
    headed by its name when every row has the same one. When a problem has a
    :attr:`Problem.versus` peer, a column ``vs PEER`` divides dualad's time by
    that peer's. ``notes`` replace the default lines under the table.
    """
    peers = _peer_columns(results)
    owns = {r.problem.own[0] for r in results}
    versus = list(dict.fromkeys(r.problem.versus for r in results if r.problem.versus))
    vs_head = [f"vs {versus[0]}" if len(versus) == 1 else "vs peer"] if versus else []
    head = ["benchmark", "primal", owns.pop() if len(owns) == 1 else "dualad", "ratio",
            *vs_head, "target", "", *peers]
    rows = []
    for r in results:
        p = r.problem
        ours = p.own[0]
        met = r.met_of(ours)
        named = f" {p.versus}" if len(versus) > 1 and p.versus else ""
        vs = [r.versus_cell(ours) + named] if versus else []
        rows.append([p.title, _fmt_time(r.times["primal"]),
                     _fmt_time(r.times[ours]) if ours in r.times else "n/a", r.cell(ours),
                     *vs, r.target_text(ours),
                     "" if met is None else "ok" if met else "MISS", *map(r.cell, peers)])
        for label, refs in _reference_rows(p) if reference else ():
            if any(k in refs for k in peers):
                rows.append([f"  ({label})", "", "", "", *([""] * len(vs)), "", "",
                             *_reference_cells(refs, peers)])
    out = [title, ""] if title else []
    out += _layout(head, rows, left={0})
    out.append("")
    out += notes or [
        "ratio = time / time of the NumPy primal, both measured in this process; peer columns",
        "are ratios to the same primal; '-': not a peer for this benchmark. target '< R peer':",
        "faster than the best of " + ", ".join(NUMPY_LEVEL_PEERS)
        + " (NumPy level) in this run; 'report': no target."]
    if not notes and reference and any(any(k in r.problem.reference for k in peers)
                                       for r in results):
        out.append("(reference): the peers' ratios measured on another machine when the "
                   "targets were set.")
    out += _missing_lines(results)
    return "\n".join(out)


def format_group_table(results: Sequence[Result], *, title: str | None = None,
                       notes: Sequence[str] = (), reference: bool = True,
                       size_label: str = "n") -> str:
    """A size sweep (problems of one ``group``) as a table: one row per size (the
    first column, headed ``size_label``), one column per implementation, dualad's
    first; each cell a ratio to the primal. Peak memory, when measured
    (:attr:`Problem.memory`), follows as columns ``peak X``.

    Targets follow as rows ``target, n=N`` (with ``ok`` or ``MISS``), then the
    published and reference ratios (:attr:`Problem.reference`).
    """
    results = sorted(results, key=lambda r: r.problem.size or 0)
    own = list(dict.fromkeys(k for r in results for k in r.problem.own))
    columns = [*own, *_peer_columns(results)]
    peaks = list(dict.fromkeys(k for r in results for k in r.peaks))
    head = [size_label, "primal", *columns, *(f"peak {k}" for k in peaks)]
    rows = []
    for r in results:
        rows.append([str(r.problem.size), _fmt_time(r.times["primal"]), *map(r.cell, columns),
                     *(_fmt_bytes(r.peaks[k]) if k in r.peaks else "-" for k in peaks)])
    for r in results:
        targets = {i: r.target_of(i)[0] for i in r.problem.own}
        if any(t is not None for t in targets.values()):
            rows.append([f"target, {size_label}={r.problem.size}", "", *(
                f"{r.target_text(i)} {'ok' if r.met_of(i) else 'MISS'}"
                if targets.get(i) is not None else "" for i in columns)])
    for r in results if reference else ():
        for label, refs in _reference_rows(r.problem):
            if any(k in refs for k in columns):
                rows.append([f"({label}, {size_label}={r.problem.size})", "",
                             *_reference_cells(refs, columns)])
    out = [title, ""] if title else []
    out += _layout(head, rows, left={0})
    out.append("")
    out += notes or ["Each cell: time / time of the NumPy primal (column 'primal'), "
                     "both measured in this process."]
    out += _missing_lines(results)
    return "\n".join(out)


def format_times(results: Sequence[Result]) -> str:
    lines = []
    for r in results:
        lines.append(f"{r.problem.name}:")
        for impl, t in r.times.items():
            lines.append(f"  {impl:<12} {_fmt_time(t):>10}  {_fmt_ratio(r.ratio(impl)):>8}")
    return "\n".join(lines)
