"""The architecture's layers are the layers of the imports (issue 29, point 16).

``.importlinter`` at the repository root lists them, top to bottom: the consumers
(bench, dualad_gpu, sparse, ...), the transforms, the rule table, the number types,
and the ground (primitive, ops, pytrees, the replay's machinery). A module may import
only from its own layer or those below; an import inside a function counts like one
at the top of a module (import-linter sees both), so a lower layer reaches a higher
one only through what the higher one registers with it when it loads.
"""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("importlinter")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_each_layer_imports_only_the_layers_below_it():
    # In its own process: import-linter's logging set-up disables the loggers that
    # exist (dualad's, which the progress tests read).
    script = ("from importlinter.cli import lint_imports\n"
              "raise SystemExit(lint_imports(config_filename='.importlinter', no_cache=True,"
              " no_logo=True))")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr
