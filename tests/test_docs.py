"""The documentation builds, offline, with warnings as errors, and runs every example.

The pages are MyST-NB notebooks in text form: building them executes each code
cell (an exception that a cell does not declare fails the build), so a page
whose example has rotted fails this test. Docstring examples run under pytest's
doctest (``--doctest-modules``).
"""

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dualad
import dualad.testing
import dualad_gpu

DOCS = Path(__file__).resolve().parent.parent / "docs"

pytest.importorskip("sphinx", reason="the docs extra is part of the test extra")

# Every test of this module on one xdist worker (--dist loadgroup): one build of the docs.
pytestmark = pytest.mark.xdist_group("docs")


def sphinx(*args: str, log: Path, tries: int = 2) -> int:
    """Run sphinx-build with ``args``, its output to the file ``log``; its exit status.

    Not through pipes, and every process it leaves is killed: sphinxcontrib-katex starts
    a node server that inherits sphinx's output, stopped at exit, which a failed start
    skips (a pipe then stays open and the test waits forever, as a CI run once did).
    That start can fail on a loaded machine (it connects once the socket file exists,
    maybe before the server listens: ConnectionRefusedError): the build is run again."""
    with open(log, "w", encoding="utf-8") as out:
        build = subprocess.Popen([sys.executable, "-m", "sphinx", *args], stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = build.wait(timeout=1200)
        finally:
            try:
                os.killpg(build.pid, signal.SIGKILL)  # (sphinx's session: what it left)
            except ProcessLookupError:
                pass
    text = log.read_text(encoding="utf-8", errors="replace")
    if status and tries > 1 and "katex" in text and "ConnectionRefusedError" in text:
        return sphinx(*args, log=log, tries=tries - 1)
    return status


@pytest.fixture(scope="module")
def html(tmp_path_factory, worker_id) -> Path:
    """The docs built once per test run: xdist's workers share the build (a file lock)."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # (this run's, all workers')
    out, built = shared / "docs-html", shared / "docs-html.built"
    with open(shared / "docs-html.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            status = sphinx("-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out),
                            log=shared / "docs-html.log")
            log = "\n".join(line for line in (shared / "docs-html.log").read_text().splitlines()
                            if "IPKernelApp" not in line and "traitlets" not in line)
            assert status == 0, f"sphinx-build -W failed:\n{log[-6000:]}"
            built.touch()
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


def test_the_performance_page_names_each_snapshots_commit_and_date(html):
    # Every figure of docs/performance.md comes from a snapshot in docs/data/, and the page
    # prints the commit (short hash) and the commit's date of each snapshot it reads.
    import json

    text = re.sub(r"<[^>]+>", "", (html / "performance.html").read_text(encoding="utf-8"))
    for name in ("benchmarks.json", "bench.json", "bench-interpreter.json",
                 "bench-scipy.json", "bench-solvers.json"):
        snap = json.loads((DOCS / "data" / name).read_text(encoding="utf-8"))
        assert f"commit {snap['commit'][:7]} of {snap['commit_date'][:10]}" in text, name
    # goals are met or missed by the snapshot's figures, computed while the page is built
    assert "(met)" in text or "(missed)" in text


def test_code_that_readers_copy_has_no_glue(html):
    # glue(…) puts a value computed on the page into its text; those calls sit in cells
    # tagged remove-cell, not in the examples a reader copies (shown or behind a toggle).
    found = []
    for page in sorted(html.glob("*.html")):
        for block in re.findall(r"<pre>(.*?)</pre>", page.read_text(encoding="utf-8"), re.S):
            code = re.sub(r"<[^>]+>", "", block)
            if re.search(r"\bglue\(|myst_nb", code):
                found.append(f"{page.name}: {code.strip()[:120]}")
    assert not found, "\n".join(found)


def built_pages(html: Path) -> list[Path]:
    """Every HTML page of the build: the guide, the reference, the source listings, the index."""
    return sorted(p for p in html.rglob("*.html") if not {"_static", "_sources"} & set(p.parts))


# A URL that leaves the site: http(s)://… or protocol-relative //…
OFF_SITE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
LINK_RELS_THAT_LOAD = re.compile(r"stylesheet|preload|prefetch|modulepreload|icon|preconnect|"
                                 r"dns-prefetch|manifest", re.I)


def test_pages_load_nothing_off_site(html):
    # Offline (and behind a firewall) a page must read the same: no script, stylesheet,
    # font or image from a CDN. Links to other sites in the text are fine.
    found = []
    for page in built_pages(html):
        text = page.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link|img|iframe|source|embed|object)\b[^>]*>",
                              text, re.I):
            if tag[:5].lower() == "<link":
                rel = re.search(r"""\brel\s*=\s*["']([^"']*)""", tag, re.I)
                if not (rel and LINK_RELS_THAT_LOAD.search(rel.group(1))):
                    continue
            for url in re.findall(r"""\b(?:src|href|data)\s*=\s*["']([^"']*)""", tag, re.I):
                if OFF_SITE.match(url):
                    found.append(f"{page.relative_to(html)}: {tag}")
    for sheet in (html / "_static").rglob("*.css"):
        for url in re.findall(r"""(?:url\(|@import)\s*["']?([^"')\s;]+)""",
                              sheet.read_text(encoding="utf-8", errors="replace")):
            if OFF_SITE.match(url):
                found.append(f"{sheet.relative_to(html)}: {url}")
    assert not found, "\n".join(found)


# A math node of Sphinx's HTML: <span class="math">…</span>, <div class="… math">…</div>
MATH_NODE = r"""<(span|div) class="(?:[^"]*\s)?math(?:\s[^"]*)?"[^>]*>(.*?)</\1>"""


def test_math_is_rendered_into_the_pages(html):
    # KaTeX renders each formula at build time into MathML, which browsers draw by
    # themselves: no formula is left as TeX for a script to typeset in the browser.
    unrendered, pages_with_math = [], set()
    for page in built_pages(html):
        text = page.read_text(encoding="utf-8")
        for node in re.finditer(MATH_NODE, text, re.S):
            if "<math" in node.group(2):
                pages_with_math.add(page.stem)
            else:
                unrendered.append(f"{page.relative_to(html)}: {node.group(0)[:200]}")
        if "katex-error" in text:
            unrendered.append(f"{page.relative_to(html)}: KaTeX could not parse a formula")
    assert not unrendered, "\n".join(unrendered)
    assert {"how-it-works", "conventions", "sparse"} <= pages_with_math, sorted(pages_with_math)
    page = (html / "how-it-works.html").read_text(encoding="utf-8")
    assert re.search(r"""<math[^>]*display="block".*?</math>""", page, re.S)  # $$…$$


def test_dollar_math_and_amsmath_environments_render_offline(tmp_path):
    # The guide's own configuration on a page of each kind of math that MyST reads.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.md").write_text(textwrap.dedent(r"""
        # Math

        Inline $\partial f / \partial x_1$ and display math:

        $$
        f(x) = \sum_{k=0}^{n} \frac{f^{(k)}(a)}{k!} (x - a)^k
        $$ (taylor)

        \begin{align}
        \dot x &= \alpha x - \beta x y \\
        \dot y &= \delta x y - \gamma y
        \end{align}

        Equation {eq}`taylor` is numbered.
        """), encoding="utf-8")
    status = sphinx("-W", "-q", "-b", "html", "-c", str(DOCS), str(tmp_path / "src"),
                    str(tmp_path / "html"), log=tmp_path / "log")
    assert status == 0, (tmp_path / "log").read_text()
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    maths = re.findall(r"<math\b.*?</math>", page, re.S)
    assert len(maths) == 3, maths
    assert 'display="block"' in maths[1] and "<mfrac>" in maths[1]
    assert 'display="block"' in maths[2] and "<mtable" in maths[2]  # the align environment
    text = re.sub(r"<annotation.*?</annotation>", "", page.split("<article", 1)[1], flags=re.S)
    assert "$" not in text and "\\begin" not in text  # no TeX left for a script to typeset


# The width of a laptop's screen; furo shows the text column between both sidebars.
LAPTOP = {"width": 1366, "height": 900}

# Returns, for the page in the browser, what runs off the page, is cut off, or runs out
# of the text column's area (into the sidebar) without a box that scrolls sideways: a wide
# table, formula or listing must scroll.
OVERFLOW_JS = """() => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth)
    problems.push(`the page is ${root.scrollWidth}px wide, wider than the window`);
  const column = document.querySelector("article[role=main]") || document.body;
  // the column with its gutter (furo's div.content): a heading's or a table wrapper's
  // few pixels into the gutter are furo's layout, not an overflow
  const columnRight = (column.closest(".content") || column).getBoundingClientRect().right;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className.trim()
       ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const flagged = [];  // an element reported, whose descendants go unreported
  const report = (el, problem) => {
    if (!flagged.some((f) => f.contains(el))) { flagged.push(el); problems.push(problem); }
  };
  for (const el of column.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    // The first ancestor that does not let its content overflow decides.
    let up = el.parentElement, fate = null;
    for (; up && up !== column; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === "auto" || overflow === "scroll") { fate = "scrolls"; break; }
      if (overflow === "hidden" || overflow === "clip") {
        fate = box.right > up.getBoundingClientRect().right + 1 ? "cut off" : "inside";
        break;
      }
    }
    if (fate === "cut off")
      report(el, `${name(el)} is cut off by ${name(up)}`);
    else if (fate === null && box.right > columnRight + 1)
      report(el, `${name(el)} runs ${Math.round(box.right - columnRight)}px into the sidebar`);
  }
  for (const table of column.querySelectorAll("table")) {
    let box = table.parentElement;
    while (box !== column && !scrolls(box)) box = box.parentElement;
    if ((box === column ? table : box).getBoundingClientRect().right > columnRight + 1)
      problems.push(box === column
        ? `a table (${name(table)}) is wider than the text column and does not scroll`
        : `the box in which a table scrolls (${name(box)}) runs into the sidebar`);
  }
  return problems;
}"""


def system_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


def test_every_page_fits_a_laptop_screen(html, tmp_path):
    # Opens each built page in a headless Chromium at a laptop's width: nothing runs off
    # the page or out of the text column unless it sits in a box that scrolls sideways,
    # and the page requests nothing from the network. A screenshot of each page is left
    # in tmp_path/screenshots for a look (pytest --basetemp=DIR keeps them in DIR).
    from playwright.sync_api import sync_playwright

    shots = tmp_path / "screenshots"
    problems, off_site = [], []
    with sync_playwright() as playwright:
        executable = system_chromium()
        if executable is None and not Path(playwright.chromium.executable_path).is_file():
            pytest.skip("no Chromium found: install one with `apt-get install chromium` "
                        "(or `python -m playwright install chromium`)")
        # with the scrollbars that a desktop browser draws (playwright hides them)
        browser = playwright.chromium.launch(executable_path=executable,
                                             ignore_default_args=["--hide-scrollbars"])
        page = browser.new_page(viewport=LAPTOP)

        def offline(route):
            off_site.append(f"{page.url}: {route.request.url}")
            route.abort()

        page.route(re.compile(r"^https?://"), offline)
        for path in built_pages(html):
            where = path.relative_to(html)
            page.goto(path.as_uri(), wait_until="load")
            problems += [f"{where}: {problem}" for problem in page.evaluate(OVERFLOW_JS)]
            shot = shots / where.with_suffix(".png")
            shot.parent.mkdir(parents=True, exist_ok=True)
            # the whole of a page of the guide; the first screen of the others (the
            # reference, the source listings), which would take minutes whole
            page.screenshot(path=shot, full_page=len(where.parts) == 1)
        browser.close()
    assert not off_site, "pages requested off-site resources:\n" + "\n".join(off_site)
    assert not problems, "\n".join(problems)


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
