"""The snapshots docs/performance.md reads: ``python -m dualad bench --json``,
``python -m dualad.bench.solvers --json``, and the files in docs/data/ (every table row
the page gives is in its snapshot, every snapshot names its commit and date)."""

import json
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from dualad import bench  # noqa: E402
from dualad.bench import solvers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"
PAGE = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
SNAPSHOTS = {"bench": "bench.json", "interpreter": "bench-interpreter.json",
             "scipy": "bench-scipy.json", "solvers": "bench-solvers.json"}
FIELDS = {"schema", "command", "commit", "commit_date", "dirty", "machine", "python",
          "libraries", "replay", "run_started", "run_finished", "runs", "problems"}


def load(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_bench_json_has_medians_runs_and_where_they_were_measured(tmp_path):
    out = tmp_path / "bench.json"
    status = bench.main(["--only", "jacfwd_textbook", "--peers", "none", "--repeat", "1",
                         "--min-time", "0.001", "--runs", "2", "--json", str(out)])
    assert status == 0
    snap = json.loads(out.read_text(encoding="utf-8"))
    assert FIELDS <= set(snap)
    assert snap["commit"] == head() and re.fullmatch(r"\d{4}-\d\d-\d\dT.*", snap["commit_date"])
    assert snap["command"].startswith("python -m dualad bench --only jacfwd_textbook")
    assert snap["runs"] == 2 and snap["replay"] is True
    entry = snap["problems"]["jacfwd_textbook"]
    assert len(entry["ratio_runs"]["dualad"]) == 2
    assert min(entry["ratio_runs"]["dualad"]) <= entry["ratio"]["dualad"] \
        <= max(entry["ratio_runs"]["dualad"])
    assert entry["seconds"]["primal"] > 0 and entry["target"]["dualad"] == 20
    assert entry["met"]["dualad"] == (entry["ratio"]["dualad"] <= 20)


def test_solvers_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(solvers, "PROBLEMS", {"exponential decay": solvers.decay})
    monkeypatch.setattr(solvers, "WAYS", ("dualad", "finite differences"))
    out = tmp_path / "solvers.json"
    solvers.main(["--runs", "1", "--json", str(out)])
    snap = json.loads(out.read_text(encoding="utf-8"))
    assert FIELDS <= set(snap) and snap["command"].startswith("python -m dualad.bench.solvers")
    entry = snap["problems"]["exponential decay"]
    assert set(entry["seconds"]) >= {"dualad", "finite differences"}
    assert entry["solutions_differ_by"] < 1e-6
    assert "| exponential decay |" in capsys.readouterr().out


@pytest.mark.parametrize("key", SNAPSHOTS)
def test_every_snapshot_says_where_and_when_it_was_measured(key):
    snap = load(SNAPSHOTS[key])
    assert FIELDS <= set(snap)
    assert re.fullmatch(r"[0-9a-f]{40}", snap["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", snap["commit_date"])
    assert snap["problems"]
    # the page prints it beside its figures
    assert f"{{glue:text}}`{key}_stamp`" in PAGE
    assert snap["replay"] is (key != "interpreter")


def test_every_row_of_the_replay_tables_is_in_its_snapshot():
    rows = re.search(r"REPLAY_ROWS = \[(.*?)\]\n\n", PAGE, flags=re.S).group(1)
    named = set(re.findall(r'"(\w+)"', rows)) - {"dualad", "dualad-fwd", "dualad-rev"}
    assert named and named <= set(bench.PROBLEMS)
    for key in ("bench", "interpreter"):
        missing = {n for n in named if not n.endswith("_inline")} - set(
            load(SNAPSHOTS[key])["problems"])
        assert not missing, (key, missing)
    assert {n for n in named if n.endswith("_inline")} <= set(load("bench.json")["problems"])
    scipy = {n for n, p in bench.PROBLEMS.items() if p.group in ("scipy_ivp", "scipy_root")}
    assert scipy <= set(load("bench-scipy.json")["problems"])
    assert set(load("bench-solvers.json")["problems"]) == set(solvers.PROBLEMS)


def test_the_page_types_no_table_and_no_figure_of_a_run_by_hand():
    prose = re.sub(r"```.*?```", "", PAGE, flags=re.S)
    assert not [line for line in prose.splitlines() if line.startswith("|")]
    # a time or a measured ratio typed in the text (a goal, "≤ 20×", is not a measurement)
    typed = re.findall(r"(?<![≤<\w.])\d+(?:\.\d+)?\s?(?:×|µs|ms|ns)(?!\w)", prose)
    assert not typed, typed
