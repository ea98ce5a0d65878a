"""The documentation builds, offline, with warnings as errors, and runs every example.

The pages are MyST-NB notebooks in text form: building them executes each code
cell (an exception that a cell does not declare fails the build), so a page
whose example has rotted fails this test. Docstring examples run under pytest's
doctest (``--doctest-modules``).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dualad
import dualad.testing
import dualad_gpu

DOCS = Path(__file__).resolve().parent.parent / "docs"

pytest.importorskip("sphinx", reason="the docs extra is part of the test extra")


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(out)],
        capture_output=True, text=True)
    log = "\n".join(line for line in (build.stdout + build.stderr).splitlines()
                    if "IPKernelApp" not in line and "traitlets" not in line)
    assert build.returncode == 0, f"sphinx-build -W failed:\n{log[-6000:]}"
    return out


def test_every_page_of_the_guide_is_built(html):
    toctree = (DOCS / "index.md").read_text()
    pages = re.findall(r"^([a-z][\w-]*)$", toctree, flags=re.M)
    assert len(pages) >= 10
    for page in pages:
        assert (html / f"{page}.html").is_file(), page


def test_every_public_name_has_a_reference_page(html):
    reference = (DOCS / "api.rst").read_text()
    names = ([f"dualad.{n}" for n in dualad.__all__]
             + [f"dualad.testing.{n}" for n in dualad.testing.__all__]
             + [f"dualad_gpu.{n}" for n in dualad_gpu.__all__])
    for name in names:
        short = name.rsplit(".", 1)[1]
        assert re.search(rf"^\s+{re.escape(short)}$", reference, flags=re.M), name
        assert (html / "generated" / f"{name}.html").is_file(), name


def test_the_figures_are_generated_in_the_build(html):
    # the FD-vs-AD error plot, chunking, Robertson, the Helmholtz ratio plot at least
    assert len(list((html / "_images").glob("*.png"))) >= 4


def test_executed_outputs_are_on_the_pages(html):
    quickstart = (html / "quickstart.html").read_text()
    assert "5.5" in quickstart and "1.71633781" in quickstart  # ∂f/∂x1, ∂f/∂x2 at (2, 5)


def test_prose_figures_of_the_scipy_page_are_the_executed_ones(html):
    # The BFGS paragraph quotes the finite-difference run's function calls; they must be
    # the nfev of the table above it (the prose once said 1684 beside a table of 1221).
    text = re.sub(r"<[^>]+>", "", (html / "scipy.html").read_text(encoding="utf-8"))
    row = re.search(r"BFGS, finite differences\s+(\d+)\s+(\d+)", text)
    prose = re.search(r"with finite differences it needs\s+(\d+)\s+function calls", text, re.I)
    assert row and prose, "the BFGS table row or its sentence is gone"
    assert prose.group(1) == row.group(2)


USER_FACING = ["README.md", "docs", "dualad", "dualad_gpu", "asv_benches"]


def test_no_internal_ticket_numbers_in_user_facing_text():
    # Write for users: name the problem and the goal, not the ticket that asked for it.
    root = DOCS.parent
    pattern = re.compile(r"\b(issues? #?\d+|task \d+)", re.I)
    found = []
    for top in USER_FACING:
        paths = [root / top] if (root / top).is_file() else (root / top).rglob("*")
        for path in paths:
            if path.suffix in {".py", ".md", ".rst", ".json"} and "_build" not in path.parts:
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line):
                        found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
