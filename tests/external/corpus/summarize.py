"""Summarise the results of run.py and replay.py as Markdown.

Usage::

    python tests/external/corpus/summarize.py [--out DIR] [--examples N]

Reads every ``DIR/*.jsonl`` (``./corpus-results`` by default) and prints:

- per package, the cases tried (not skipped) and their verdicts, the cases
  skipped, and those tried whose JAX swap ran (gave a reference) and whose
  autograd swap ran (``ag_ok``: its Jacobian and Hessian returned and matched a
  reference), and those where either ran; the total leaves out ``pymoo-2d``,
  which differentiates the same problems as ``pymoo``;
- every case where dualad raised or was wrong but the JAX or the autograd swap
  ran, with dualad's first exception (normalised) and the package's line that
  tripped it;
- dualad's raised cases by cause (:data:`CAUSES`: whether a value leaves NumPy
  or something else), each cause with its messages and their counts;
- the causes of errors: the first exception of each raised or wrong case,
  grouped by its normalised message, most frequent first, with up to N examples
  (4 by default) at distinct sites in the package's code;
- the wrong cases, the skipped cases, and the replay sweep's findings (per
  package, with the kind of each: raise, timeout, NaN or wrong value).

Two corrections, checked by hand, are applied to the records as they are read
(the files are left as run.py wrote them): the functions of :data:`RANDOMISED`
draw random numbers inside ``f`` and count as skipped; for those of
:data:`FD_FALSE_POSITIVES`, a ``wrong`` verdict (no JAX reference, central
differences off) is counted as right.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

# Call np.random inside f: no derivative to check.
RANDOMISED = {"name_based.Quartic", "name_based.XinSheYang01", "cec.F42005", "cec.F172005"}
# Flagged by central differences alone, right on inspection: Weierstrass terms with
# frequencies up to 3**20 (CEC2005 F11, CEC2017 F18 and F29, checked against JAX and
# complex step); an FD step far above the saturation current I0 = 1e-9 (v_from_i; and
# singlediode by Newton, where every step of the harness makes I0 negative: central
# differences with steps scaled to each input agree to 1e-6 on every entry above
# 1e-8 of the largest);
# the FD-of-gradient reference calling the transform past RECORD_AFTER (perez).
# The CEC composition functions (Weierstrass, Katsuura and Schwefel terms), differentiated
# since arrays made with np.zeros can be filled: long-double central differences
# (verify_fd.py) converge to dualad's value as the step goes to 1e-12.
FD_FALSE_POSITIVES = {"cec.F112005", "cec.F182017", "cec.F292017", "irradiance.perez",
                      "irradiance.get_total_irradiance [perez]",
                      "pvsystem.v_from_i [lambertw]", "pvsystem.singlediode [newton]"} | {
    f"cec.F{n}2005" for n in range(15, 26) if n != 17} | {
    "cec.F162017", "cec.F192017", "cec.F282017", "cec.F72022", "cec.F82022"}
PACKAGE_ORDER = ["opfunu", "pymoo", "pymoo-2d", "lmfit", "pvlib", "filterpy"]
DEFAULT_OUT = Path("corpus-results")


def read_records(out_dir: Path) -> list[dict]:
    """run.py's records, with the corrections applied."""
    records = []
    for path in sorted(out_dir.glob("*.jsonl")):
        if "replay_" in path.name:
            continue
        with open(path) as lines:
            for rec in map(json.loads, lines):
                if rec["name"] in RANDOMISED:
                    rec["status"] = "skip"
                    rec["why"] = "randomized (np.random inside f)"
                if rec["name"] in FD_FALSE_POSITIVES and rec["status"] == "wrong":
                    rec["status"] = "right"
                    rec["note"] = "FD false positive, verified"
                records.append(rec)
    return records


def _packages(records: list[dict]) -> list[str]:
    packages = [p for p in PACKAGE_ORDER if any(r["pkg"] == p for r in records)]
    return packages + sorted({r["pkg"] for r in records} - set(PACKAGE_ORDER))


def print_table(records: list[dict]) -> None:
    columns = ["tried", "right", "wrong", "raised", "skip", "jax", "autograd", "either"]
    print("| package | tried | right | wrong | raised | skipped (setup) | JAX-swap ran "
          "| autograd-swap ran | JAX or autograd ran |")
    print("|---" * (len(columns) + 1) + "|")
    total = Counter()
    for package in _packages(records):
        of_package = [r for r in records if r["pkg"] == package]
        tried = [r for r in of_package if r["status"] != "skip"]
        verdicts = Counter(r["status"] for r in tried)
        row = Counter(tried=len(tried), right=verdicts["right"], wrong=verdicts["wrong"],
                      raised=verdicts["raised"],
                      skip=sum(r["status"] == "skip" for r in of_package),
                      jax=sum(bool(r.get("jax_ok")) for r in tried),
                      autograd=sum(bool(r.get("ag_ok")) for r in tried),
                      either=sum(bool(r.get("jax_ok") or r.get("ag_ok")) for r in tried))
        print(f"| {package} | " + " | ".join(str(row[c]) for c in columns) + " |")
        if package != "pymoo-2d":
            total.update(row)
    print("| **all (excl. pymoo-2d)** | " + " | ".join(f"**{total[c]}**" for c in columns) + " |")


def print_others_ran(records: list[dict]) -> None:
    """Every case where dualad raised or was wrong but the JAX or autograd swap ran.

    Cases of one package with the same verdict, the same backends that ran and the
    same first exception share a line: each case's name, then the package's line
    that tripped dualad.
    """
    groups = defaultdict(list)
    for rec in records:
        if rec["status"] in ("raised", "wrong") and (rec.get("jax_ok") or rec.get("ag_ok")):
            ran = " and ".join(name for name, key in (("JAX", "jax_ok"), ("autograd", "ag_ok"))
                               if rec.get(key))
            exc = rec.get("exc") or {}
            what = f"`{exc['exc']}`" if exc else ""
            if rec["status"] == "wrong":
                what = "wrong: " + "; ".join(rec["wrong"][:2]) + (
                    f" (first raised {what})" if what else "")
            groups[(rec["pkg"], rec["status"], ran, what)].append(rec)
    if not groups:
        print("(none)")
    order = {package: i for i, package in enumerate(_packages(records))}
    for (package, status, ran, what), recs in sorted(groups.items(),
                                                     key=lambda item: order[item[0][0]]):
        print(f"- {package}, {len(recs)} {status}, {ran} ran: {what}")
        for rec in recs:
            exc = rec.get("exc") or {}
            print(f"  - `{rec['name']}` ({exc.get('call')}) at `{exc.get('site')}`")


# dualad's first exception of a raised case, by cause: (cause, whether a value leaves
# NumPy there: True, False, or None where it depends on the site; a test on the
# normalised message, the package's line and the innermost line). The first match
# wins. The specific ones were read off this corpus's sites (pvlib's _calc_taud,
# pymoo's Problem.evaluate, filterpy's `from numpy import zeros`) and checked on
# small functions.
CAUSES = [
    ("math module on a Dual (math.exp(x), math.sqrt(x), ...)", True,
     lambda m, site, inner: "float() of a dualad.Dual" in m and re.search(r"\bmath\.", site)),
    ("float() on a Dual in the package's line", True,
     lambda m, site, inner: "float() of a dualad.Dual" in m and re.search(r"\bfloat\(", site)),
    ("float() elsewhere (a Dual stored into a float array, or converted by a library)", None,
     lambda m, site, inner: "float() of a dualad.Dual" in m),
    ("Dual.item() or .tolist()", True, lambda m, site, inner: "item()" in m or "tolist()" in m),
    ("compiled library code takes the Dual (SciPy ndimage, interpolate, fitpack)", True,
     lambda m, site, inner: "converts its argument with np.asarray" in m
     or inner.startswith("scipy/")),
    ("pandas takes the Dual (Series, arrays)", True,
     lambda m, site, inner: site.startswith("pandas/") or inner.startswith("pandas/")),
    ("writes into an array made by `zeros` imported by name (`from numpy import zeros`), "
     "which the transform does not make fillable", False,
     lambda m, site, inner: re.search(r"\]\s*=[^=]", site)
     and ("setting an array element with a sequence" in m
          or "Converting a dualad.Dual to a NumPy array" in m)),
    ("a plain ndarray's method given a Dual (`ndarray.dot(dual)`)", False,
     lambda m, site, inner: "Converting a dualad.Dual to a NumPy array" in m
     and ".dot(" in site),
    ("other conversions of a Dual to a NumPy array", None,
     lambda m, site, inner: "Converting a dualad.Dual to a NumPy array" in m),
    ("len() of a 0-d Dual: `np.isscalar` is False for it, so a scalar takes the array "
     "branch (pvlib `_calc_taud`)", False,
     lambda m, site, inner: "has no len()" in m),
    ("shape or index error: pymoo's `Problem.evaluate` makes x 2-D only if "
     "`isinstance(x, np.ndarray)`, False for a Dual", False,
     lambda m, site, inner: site.startswith("pymoo/") and re.match(
         r"(IndexError|AxisError|ValueError: not enough values to unpack)", m)),
    ("no dualad rule for the operation", False, lambda m, site, inner: "has no rule" in m),
    ("timeout", False, lambda m, site, inner: m.startswith("Timeout")),
    ("other", None, lambda m, site, inner: True),
]


def cause_of(rec: dict) -> tuple[str, bool | None]:
    """The cause of a raised case's first exception (see :data:`CAUSES`)."""
    exc = rec.get("exc") or {}
    message, site, inner = exc.get("exc", ""), exc.get("site") or "", exc.get("inner") or ""
    for cause, leaves, test in CAUSES:
        if test(message, site, inner):
            return cause, leaves
    raise AssertionError("the last cause matches everything")


def print_raised_causes(records: list[dict]) -> None:
    """dualad's raised cases (pymoo-2d left out) by cause, each with its messages."""
    by_cause = defaultdict(list)
    for rec in records:
        if rec["status"] == "raised" and rec["pkg"] != "pymoo-2d":
            by_cause[cause_of(rec)].append(rec)
    if not by_cause:
        print("(none)")
    leaves_text = {True: "a value leaves NumPy", False: "not a value leaving NumPy",
                   None: "leaves NumPy or not: see the sites"}
    for (cause, leaves), recs in sorted(by_cause.items(), key=lambda item: -len(item[1])):
        others = sum(bool(r.get("jax_ok") or r.get("ag_ok")) for r in recs)
        print(f"- **{len(recs)}** {cause} ({leaves_text[leaves]}; JAX or autograd ran on "
              f"{others}) {dict(Counter(r['pkg'] for r in recs))}")
        messages = Counter(r["exc"]["exc"][:110] for r in recs)
        for message, count in messages.most_common():
            sites = sorted({r["exc"].get("site") or "-" for r in recs
                            if r["exc"]["exc"][:110] == message})
            print(f"  - {count} `{message}`: e.g. `{sites[0]}`"
                  + (f" (+{len(sites) - 1} other sites)" if len(sites) > 1 else ""))


def print_causes(records: list[dict], examples: int) -> None:
    causes = defaultdict(list)
    for rec in records:
        if rec["status"] in ("raised", "wrong") and rec.get("exc"):
            causes[rec["exc"]["exc"][:110]].append(rec)
    if not causes:
        print("(none)")
    for cause, recs in sorted(causes.items(), key=lambda item: -len(item[1])):
        by_package = dict(Counter(r["pkg"] for r in recs))
        print(f"- **{len(recs)}** `{cause}` {by_package}")
        sites = set()
        for rec in recs:
            site = rec["exc"].get("site")
            if site in sites:
                continue
            sites.add(site)
            print(f"  - {rec['pkg']}:{rec['name']} [{rec['exc'].get('call')}] site={site} "
                  f"| inner={rec['exc'].get('inner')}")
            if len(sites) >= examples:
                break


def _replay_kind(rec: dict) -> str:
    bad = rec["bad"]
    if any("raised" in b and "Timeout" not in b for b in bad):
        return "raise"
    if rec.get("timeout") or any("Timeout" in b for b in bad):
        return "timeout"
    if any("NaN" in b for b in bad):
        return "NaN"
    return "wrong value"


def print_replay(out_dir: Path) -> None:
    swept, failing, kinds = Counter(), Counter(), Counter()
    lines = []
    for path in sorted(out_dir.glob("replay_*.jsonl")):
        with open(path) as records:
            for rec in map(json.loads, records):
                if rec["name"] in RANDOMISED:
                    continue
                swept[rec["pkg"]] += 1
                if rec["bad"] or rec.get("timeout"):
                    failing[rec["pkg"]] += 1
                    kind = _replay_kind(rec)
                    kinds[(rec["pkg"], kind)] += 1
                    lines.append(f"- {rec['pkg']} {rec['name']}: {kind} {rec['bad'][:2]}")
    if not swept:
        print("No replay results (run replay.py).")
        return
    names = ["raise", "timeout", "NaN", "wrong value"]
    print("| package | swept | failing | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for package in swept:
        counts = " | ".join(str(kinds[(package, name)]) for name in names)
        print(f"| {package} | {swept[package]} | {failing[package]} | {counts} |")
    print()
    print("\n".join(lines) or "(no findings)")


def main(out_dir: Path, examples: int) -> None:
    records = read_records(out_dir)
    print("## Verdicts (3 calls of each transform)\n")
    print_table(records)
    print("\n## dualad raised or was wrong, the JAX or autograd swap ran\n")
    print_others_ran(records)
    print("\n## dualad's raised cases by cause (excl. pymoo-2d)\n")
    print_raised_causes(records)
    print("\n## Causes of errors (first exception of each raised or wrong case)\n")
    print_causes(records, examples)
    print("\n## Wrong\n")
    print("\n".join(f"- {rec['pkg']} {rec['name']}: {rec['wrong']} {rec.get('calls')}"
                    for rec in records if rec["status"] == "wrong") or "(none)")
    print("\n## Skipped\n")
    print("\n".join(f"- {rec['pkg']} {rec['name']}: {rec.get('why')}"
                    for rec in records if rec["status"] == "skip") or "(none)")
    print("\n## Replay sweep (12 calls, each against call 1)\n")
    print_replay(out_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder of the results (default ./{DEFAULT_OUT})")
    parser.add_argument("--examples", type=int, default=4,
                        help="example cases shown per cause (default 4)")
    args = parser.parse_args()
    main(args.out, args.examples)
