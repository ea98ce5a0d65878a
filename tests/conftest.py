"""Hypothesis profiles for the property tests.

"ci" (loaded when $CI is set) is derandomized, so a run is reproducible; "dev"
(the default) draws fresh examples each run; "thorough" is for bug hunting:
``pytest --hypothesis-profile=thorough``.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import settings

import dualad.replay.cache

# The suite records a signature at its second call (users' default: after
# RECORD_AFTER interpreted calls) and compiles it after its first replay (users':
# after COMPILE_AFTER), so that every test exercises the replay in a few calls, the
# third call by the recorded calls run directly, the later ones by the compiled
# code; test_replay.py tests the defaults as they are.
DEFAULT_RECORD_AFTER = dualad.replay.cache.RECORD_AFTER
DEFAULT_COMPILE_AFTER = dualad.replay.cache.COMPILE_AFTER
dualad.replay.cache.RECORD_AFTER = 1
dualad.replay.cache.COMPILE_AFTER = 1

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=10,
                          print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=15, print_blob=True)
settings.register_profile("thorough", deadline=None, max_examples=200, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
#: Examples of each property of each spec row (test_rules, test_reverse_rules,
#: test_hyperdual_rules: over 14,000 row-property pairs, half the suite's time at the
#: profile's size): half the profile's, each a fresh random point of the row's domain.
PER_ROW_EXAMPLES = max(1, settings.default.max_examples // 2)

# Hypothesis (6.170) links the settings of each parametrized case of a @given test to
# those of the case before (settings.default._fallback grows by one per case), and
# reads them recursively: a test function with over ~950 cases in one process (the
# spec-row tests have more) would exceed Python's default recursion limit of 1000.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

# Spec rows of a family live in tests/specs_<family>.py and are imported by specs.py
# (importing one first would be a cycle): not modules to collect doctests from.
collect_ignore_glob = ["specs_*.py"]
# The coverage table's generator is run by test_coverage_table.py (and by hand);
# external/ runs other projects' test suites through dualad, by hand.
collect_ignore = ["coverage_table.py", "external"]


@pytest.fixture
def on_four_devices(tmp_path):
    """A runner of a script in a fresh process with four host devices (JAX's CPU
    backend): the script saves its arrays with ``np.savez(OUT, ...)``; the runner
    returns them."""
    def run(script: str):
        out = tmp_path / "four_devices.npz"
        env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
                   JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + script], env=env,
                       check=True, timeout=600)
        return np.load(out)

    return run
