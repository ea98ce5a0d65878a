"""The coverage table in the docs is the one the code gives (docs/data/coverage.json)."""

import functools
import json
import subprocess
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("scipy")

import coverage_table  # noqa: E402


@functools.cache
def fresh_table() -> dict:
    """The table as a new process computes it: registrations made by other tests or
    doctests of this process (register_function examples) do not count."""
    out = subprocess.run([sys.executable, coverage_table.__file__, "--print"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_docs_coverage_table_matches_the_code():
    """Exactly, with the library versions the table was computed with. With others
    (a function added or removed by NumPy, SciPy or JAX, a function JAX gained), dualad's
    columns of the functions both versions have."""
    computed = dict(fresh_table())
    stored = json.loads(coverage_table.OUTPUT.read_text())
    here, made_with = computed.pop(coverage_table.VERSIONS), stored.pop(coverage_table.VERSIONS)
    same = here == made_with
    ours = (lambda entry: entry) if same else (
        lambda entry: {k: v for k, v in entry.items() if k != "jax"})
    changed = sorted(f"{module}.{name}: docs say {stored.get(module, {}).get(name)}, "
                     f"the code gives {entry}"
                     for module, entries in computed.items()
                     for name, entry in entries.items()
                     if (same or name in stored.get(module, {}))
                     and ours(stored.get(module, {}).get(name) or {}) != ours(entry))
    gone = sorted(f"{module}.{name}" for module, entries in stored.items()
                  for name in entries if same and name not in computed.get(module, {}))
    assert not changed and not gone, (
        f"docs/data/coverage.json ({made_with}) is out of date; rewrite it with "
        f"`python tests/coverage_table.py` ({here}):\n" + "\n".join(changed[:40] + gone[:40]))


def test_the_table_counts_what_it_says():
    table = fresh_table()
    numpy = table["numpy"]
    assert numpy["sin"] == {"dualad": "rule", "jax": True, "tested": True,
                            "jax_checked": numpy["sin"]["jax_checked"], "dualad_gpu": True,
                            "jet": True}
    assert not table["scipy.special"]["gammainc"]["jet"]  # no third derivative in a
    assert numpy["argmax"]["dualad"] == "value"
    assert table["numpy.fft"]["fft"]["dualad"] == "rule" and table["numpy.fft"]["fft"]["jax_checked"]
    assert numpy["zeros"]["dualad"] == "n/a"  # NumPy never hands it a Dual
    assert numpy["save"]["dualad"] == "n/a"  # refuses a Dual
    assert table["scipy.linalg"]["hilbert"]["dualad"] == "n/a"  # an integer argument
