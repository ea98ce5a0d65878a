"""Summarise the results of run.py and replay.py as Markdown.

Usage::

    python tests/external/corpus/summarize.py [--out DIR] [--examples N]

Reads every ``DIR/*.jsonl`` (``./corpus-results`` by default) and prints:

- per package, the cases tried (not skipped) and their verdicts, the cases
  skipped, and those whose JAX swap gave a reference; the total leaves out
  ``pymoo-2d``, which differentiates the same problems as ``pymoo``;
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
from collections import Counter, defaultdict
from pathlib import Path

# Call np.random inside f: no derivative to check.
RANDOMISED = {"name_based.Quartic", "name_based.XinSheYang01", "cec.F42005", "cec.F172005"}
# Flagged by central differences alone, right on inspection: Weierstrass terms with
# frequencies up to 3**20 (CEC2005 F11, CEC2017 F18 and F29, checked against JAX and
# complex step); an FD step far above the saturation current I0 = 1e-9 (v_from_i);
# the FD-of-gradient reference calling the transform past RECORD_AFTER (perez).
# The CEC composition functions (Weierstrass, Katsuura and Schwefel terms), differentiated
# since arrays made with np.zeros can be filled: long-double central differences
# (verify_fd.py) converge to dualad's value as the step goes to 1e-12.
FD_FALSE_POSITIVES = {"cec.F112005", "cec.F182017", "cec.F292017", "irradiance.perez",
                      "irradiance.get_total_irradiance [perez]",
                      "pvsystem.v_from_i [lambertw]"} | {
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


def print_table(records: list[dict]) -> None:
    packages = [p for p in PACKAGE_ORDER if any(r["pkg"] == p for r in records)]
    packages += sorted({r["pkg"] for r in records} - set(PACKAGE_ORDER))
    print("| package | tried | right | wrong | raised | skipped (setup) | JAX-swap ok |")
    print("|---|---|---|---|---|---|---|")
    total = Counter()
    for package in packages:
        of_package = [r for r in records if r["pkg"] == package]
        tried = [r for r in of_package if r["status"] != "skip"]
        verdicts = Counter(r["status"] for r in tried)
        skipped = sum(r["status"] == "skip" for r in of_package)
        jax_ok = sum(bool(r.get("jax_ok")) for r in tried)
        print(f"| {package} | {len(tried)} | {verdicts['right']} | {verdicts['wrong']} | "
              f"{verdicts['raised']} | {skipped} | {jax_ok} |")
        if package != "pymoo-2d":
            total.update(tried=len(tried), right=verdicts["right"], wrong=verdicts["wrong"],
                         raised=verdicts["raised"], skip=skipped, jax=jax_ok)
    print(f"| **all (excl. pymoo-2d)** | {total['tried']} | {total['right']} | {total['wrong']} | "
          f"{total['raised']} | {total['skip']} | {total['jax']} |")


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
