"""Publish the asv dashboard and check in headless Chromium that its pages draw.

From ``asv_benches/``, after ``asv run`` has written some results::

    python check_dashboard.py                        # publish, vendor, serve, check
    python check_dashboard.py --screenshot /tmp/dash # and keep a PNG of every page
    python check_dashboard.py --no-publish --bench 'jvp|helmholtz'

Steps:

1. Installs what it needs when it is missing: Debian's ``chromium``
   (``apt-get install``; ``apt-get update`` only if that fails), the Python
   ``playwright`` package (pip; Playwright's own browser download is never
   used: it drives ``/usr/bin/chromium``), and ``npm`` (apt) for step 3.
2. ``asv publish``: the HTML dashboard in ``html/``.
3. Vendors asv's JavaScript and CSS. asv's ``index.html`` loads jQuery, flot,
   bootstrap, blueimp-md5 and stupidtable from public CDNs, which this machine
   cannot reach (the page then redirects to ``error.html``). The same versions
   are taken from the npm registry (``npm pack``, cached in
   ``~/.cache/dualad-asv-vendor``), copied to ``html/vendor/`` and
   ``index.html`` is rewritten to load them from there, so the dashboard is
   self-contained (``asv preview`` works offline afterwards). Two files are
   not on npm byte for byte: cdnjs's minified flot 0.8.3 (the unminified files
   of npm's flot 0.8.3 stand in) and stupidtable 1.0.1 (npm has 1.1.3); the
   others are the CDN's exact files (their SRI hashes match, and are printed).
4. Serves ``html/`` with the standard library's ``http.server`` on a free
   port of 127.0.0.1, in a thread.
5. Loads, in headless Chromium, the benchmark grid (``index.html``), the
   benchmark list and the regressions page, and the graph page of every
   benchmark in the published ``index.json`` (asv's hash routes,
   ``index.html#jvp.JVPSumSinExpRatio.track_ratio_to_primal``), and checks on
   each: the page loads; no uncaught exception (``pageerror``), no console
   error, no failed request, no HTTP status >= 400, no request leaving
   127.0.0.1 (blocked and reported); and on a graph page, that flot drew the
   graph: a ``canvas.flot-base`` of non-zero size in ``#main-graph``, flot's
   series holding data points, and coloured (series) pixels on the canvas,
   not only the grey axes. A benchmark without published results (not run, or
   changed since its run: asv publishes an empty graph and its pages request
   files that do not exist) is listed and its graph page skipped, and those
   expected 404s are not counted; ``--require-all`` makes it a failure.

Prints a line per page and a summary; exits 1 if any page fails, or if no graph
page could be checked.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
VENDOR_CACHE = Path.home() / ".cache" / "dualad-asv-vendor"

#: asv 0.6's CDN assets -> (npm package@version, file in the package). The
#: versions are the ones asv pins; see the module docstring for the two stand-ins.
VENDOR: dict[str, tuple[str, str]] = {
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery@3.3.1", "dist/jquery.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js":
        ("flot@0.8.3", "jquery.flot.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js":
        ("flot@0.8.3", "jquery.flot.time.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js":
        ("flot@0.8.3", "jquery.flot.selection.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js":
        ("flot@0.8.3", "jquery.flot.categories.js"),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        ("flot-orderbars@1.0.0", "js/jquery.flot.orderBars.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        ("stupid-table-plugin@1.1.3", "stupidtable.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        ("blueimp-md5@2.19.0", "js/md5.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js":
        ("bootstrap@3.1.1", "dist/js/bootstrap.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        ("bootstrap@3.1.1", "dist/css/bootstrap.min.css"),
}
#: Files a vendored file refers to (bootstrap.min.css: ../fonts/...).
VENDOR_EXTRA: dict[str, tuple[str, ...]] = {
    "bootstrap@3.1.1": tuple(f"dist/fonts/glyphicons-halflings-regular.{ext}"
                             for ext in ("eot", "svg", "ttf", "woff")),
}

# JavaScript run in the page: what flot drew in the canvas matching a selector. "coloured"
# counts pixels of a series colour, as opposed to the grey grid and text. (No // comments:
# Playwright's wait_for_function does not keep the newlines.)
CANVAS_STATS = """(sel) => {
    const c = document.querySelector(sel);
    if (!c) return null;
    const box = c.getBoundingClientRect();
    let painted = 0, coloured = 0;
    if (c.width > 0 && c.height > 0) {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 0; i < d.length; i += 4) {
            if (d[i + 3] === 0) continue;
            painted++;
            const hi = Math.max(d[i], d[i + 1], d[i + 2]), lo = Math.min(d[i], d[i + 1], d[i + 2]);
            if (hi - lo > 60) coloured++;
        }
    }
    let series = null, points = 0;
    const plot = window.jQuery && jQuery(c).closest('#main-graph, .benchmark-plot').data('plot');
    if (plot) {
        series = plot.getData().length;
        for (const s of plot.getData())
            for (const p of s.data) if (p && p[1] !== null && Number.isFinite(p[1])) points++;
    }
    return {width: c.width, height: c.height, cssWidth: box.width, cssHeight: box.height,
            painted, coloured, series, points};
}"""


# -- installing what is missing ---------------------------------------------------------


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **{"check": False, **kwargs})


def apt_install(*packages: str) -> None:
    """``apt-get install -y`` non-interactively; ``apt-get update`` and retry only on failure."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    install = [*sudo, "apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
    if _run(install, env=env).returncode != 0:
        _run([*sudo, "apt-get", "update", "-q"], env=env, check=True)
        _run(install, env=env, check=True)


def ensure_chromium() -> None:
    if not CHROMIUM.exists():
        apt_install("chromium")


def ensure_playwright() -> None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _run([sys.executable, "-m", "pip", "install", "-q", "playwright"], check=True)


def ensure_npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        apt_install("npm")
        npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is not available")
    return npm


# -- asv publish and vendoring ---------------------------------------------------------


def publish() -> None:
    _run([sys.executable, "-m", "asv", "publish"], cwd=HERE, check=True)


def _npm_package(spec: str) -> Path:
    """The unpacked npm package ``name@version`` (its ``package/`` directory), cached."""
    target = VENDOR_CACHE / spec
    if not (target / "package").is_dir():
        npm = ensure_npm()
        with tempfile.TemporaryDirectory() as tmp:
            _run([npm, "pack", "--silent", "--pack-destination", tmp, spec], check=True,
                 stdout=subprocess.DEVNULL)
            (tarball,) = Path(tmp).glob("*.tgz")
            part = target.with_name(target.name + ".part")
            shutil.rmtree(part, ignore_errors=True)
            with tarfile.open(tarball) as tar:
                tar.extractall(part, filter="data")
            shutil.rmtree(target, ignore_errors=True)
            part.rename(target)
    return target / "package"


def _sri_matches(data: bytes, integrity: str) -> bool:
    algo, _, digest = integrity.partition("-")
    return base64.b64encode(hashlib.new(algo, data).digest()).decode() == digest


def vendor(html_dir: Path) -> None:
    """Copy asv's CDN assets into ``html_dir/vendor`` and point ``index.html`` at them."""
    index = html_dir / "index.html"
    text = index.read_text(encoding="utf-8")
    tag = re.compile(r'<(script|link)\b[^>]*?\b(?:src|href)="(https?://[^"]+)"[^>]*>')
    for spec, extra in VENDOR_EXTRA.items():
        for rel in extra:
            _copy(_npm_package(spec) / rel, html_dir / "vendor" / spec / rel)

    def local(match: re.Match) -> str:
        element, url = match.group(0), match.group(2)
        if url not in VENDOR:
            return element                  # left alone: the browser check reports it
        spec, rel = VENDOR[url]
        source = _npm_package(spec) / rel
        _copy(source, html_dir / "vendor" / spec / rel)
        integrity = re.search(r'\bintegrity="([^"]+)"', element)
        same = integrity is not None and _sri_matches(source.read_bytes(), integrity.group(1))
        print(f"  {f'vendor/{spec}/{rel}':<52} "
              f"{'the CDN file (SRI matches)' if same else 'stands in for ' + url}")
        element = element.replace(url, f"vendor/{spec}/{rel}")
        return re.sub(r'\s+(?:integrity|crossorigin|referrerpolicy)="[^"]*"', "", element)

    print("vendoring asv's CDN assets into html/vendor:")
    text = tag.sub(local, text)
    index.write_text(text, encoding="utf-8")
    remote = [m.group(2) for m in tag.finditer(text)]
    for url in remote:
        print(f"  warning: not vendored (asv changed its assets?): {url}")


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


# -- serving ----------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # http.server's signature
        pass


def serve(directory: Path) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``directory`` on a free port of 127.0.0.1 in a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_QuietHandler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, name="dashboard-http", daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


# -- checking pages ---------------------------------------------------------------------


@dataclass
class PageResult:
    name: str
    route: str
    problems: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0


def _watch(page, base: str, problems: list[str], missing: frozenset[str]) -> None:
    """Record the page's errors in ``problems``; block requests that leave ``base``.

    asv's pages request ``graphs/.../<benchmark>.json`` also for the benchmarks it
    has no results for, and publish writes no such file: those 404s (and their
    console messages) are expected for the benchmarks in ``missing``.
    """
    def expected(url: str) -> bool:
        path = url.split("?")[0]
        return "/graphs/" in path and path.rsplit("/", 1)[-1].removesuffix(".json") in missing

    def console(msg):
        if msg.type == "error" and not expected(msg.location.get("url", "")):
            problems.append(f"console error: {msg.text}")

    def response(resp):
        if resp.status >= 400 and not (resp.status == 404 and expected(resp.url)):
            problems.append(f"HTTP {resp.status}: {resp.url}")

    def request_failed(req):
        if not req.url.startswith(base):
            return                      # reported by the route below
        problems.append(f"request failed: {req.url} ({req.failure})")

    def route(r):
        problems.append(f"external request blocked: {r.request.url}")
        r.abort()

    page.on("console", console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("response", response)
    page.on("requestfailed", request_failed)
    page.route(lambda url: not url.startswith(base), route)


try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:                     # installed by ensure_playwright() before any check
    PlaywrightError = Exception


def check_page(context, base: str, name: str, route: str, kind: str, timeout_ms: float,
               screenshot_dir: Path | None, expected: int = 0,
               missing: frozenset[str] = frozenset()) -> PageResult:
    result = PageResult(name, route)
    start = time.perf_counter()
    page = context.new_page()
    _watch(page, base, result.problems, missing)
    url = base + "index.html" + (f"#{route}" if route else "")
    try:
        page.goto(url, wait_until="load", timeout=timeout_ms)
        if "error.html" in page.url:
            result.problems.append(f"redirected to {page.url}: a script failed to load")
        elif kind == "graph":
            _check_graph(page, result, timeout_ms)
        elif kind == "grid":
            _check_grid(page, result, timeout_ms, expected)
        elif kind == "list":
            page.wait_for_selector("#summarylist-body table tbody tr", timeout=timeout_ms)
            rows = page.locator("#summarylist-body table tbody tr").count()
            result.detail = f"{rows} rows"
        else:
            page.wait_for_selector("#regressions-body > *", state="attached", timeout=timeout_ms)
            result.detail = "rendered"
        page.wait_for_load_state("networkidle", timeout=timeout_ms)
        if screenshot_dir is not None:
            page.screenshot(path=str(screenshot_dir / f"{name}.png"))
    except PlaywrightError as exc:  # a timeout or a navigation error: report, go on
        result.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        if screenshot_dir is not None:
            try:
                page.screenshot(path=str(screenshot_dir / f"{name}.FAILED.png"))
            except PlaywrightError as exc:
                result.problems.append(f"no screenshot: {exc}")
    finally:
        page.close()
    result.seconds = time.perf_counter() - start
    return result


def _check_graph(page, result: PageResult, timeout_ms: float) -> None:
    canvas = "#main-graph canvas.flot-base"
    try:  # flot draws once asv has fetched the graph's JSON; wait for series pixels
        page.wait_for_function(f"(sel) => {{ const s = ({CANVAS_STATS})(sel); "
                               "return s !== null && s.coloured > 0; }", arg=canvas,
                               timeout=timeout_ms)
    except PlaywrightError:
        pass                            # reported from the statistics below
    stats = page.evaluate(CANVAS_STATS, canvas)
    if stats is None:
        result.problems.append("no flot canvas in #main-graph")
        return
    if not (stats["width"] and stats["height"] and stats["cssWidth"] and stats["cssHeight"]):
        result.problems.append(f"flot canvas has zero size: {stats}")
    if not stats["points"]:
        result.problems.append(f"flot has no data points: {stats['series']} series")
    if stats["coloured"] == 0:
        result.problems.append(f"canvas shows no series: {stats['painted']} grey pixels only")
    title = page.locator("#title").inner_text().strip()
    if title and title.split()[0] not in result.route:
        result.problems.append(f"title {title!r} is not the benchmark's")
    result.detail = (f"canvas {stats['width']}x{stats['height']}, {stats['series']} series, "
                     f"{stats['points']} points, {stats['coloured']} series pixels")


def _check_grid(page, result: PageResult, timeout_ms: float, expected: int) -> None:
    page.wait_for_selector("#summarygrid-display .benchmark-container", timeout=timeout_ms)
    boxes = page.locator("#summarygrid-display .benchmark-container").count()
    page.wait_for_selector("#summarygrid-display .benchmark-plot canvas.flot-base",
                           state="attached", timeout=timeout_ms)
    drawn = page.locator("#summarygrid-display .benchmark-plot canvas.flot-base").count()
    if boxes != expected:
        result.problems.append(f"{boxes} benchmarks in the grid, index.json has {expected}")
    result.detail = f"{boxes} benchmarks, {drawn} summary plots drawn (those in view)"


def has_results(html_dir: Path, benchmark: str) -> bool:
    """Whether asv published data for ``benchmark``: its summary graph has points."""
    summary = html_dir / "graphs" / "summary" / f"{benchmark}.json"
    try:
        return bool(json.loads(summary.read_text()))
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-publish", action="store_true",
                        help="check html/ as it is (it must have been vendored before)")
    parser.add_argument("--no-vendor", action="store_true",
                        help="keep asv's CDN links (needs the internet; blocked here)")
    parser.add_argument("--bench", default="",
                        help="only the graph pages of benchmarks matching this regex")
    parser.add_argument("--screenshot", metavar="DIR", type=Path,
                        help="save a PNG of every page checked in DIR")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per page")
    parser.add_argument("--require-all", action="store_true",
                        help="fail if a benchmark has no results (after a full asv run)")
    parser.add_argument("--html-dir", type=Path, default=HERE / "html")
    args = parser.parse_args(argv)

    ensure_chromium()
    ensure_playwright()
    if not args.no_publish:
        publish()
        if not args.no_vendor:
            vendor(args.html_dir)
    index_json = args.html_dir / "index.json"
    if not index_json.exists():
        print(f"{index_json} is missing: run `asv run` and `asv publish` first", file=sys.stderr)
        return 1
    benchmarks = sorted(json.loads(index_json.read_text())["benchmarks"])
    missing = frozenset(b for b in benchmarks if not has_results(args.html_dir, b))
    graphs = [b for b in benchmarks if re.search(args.bench, b) and b not in missing]
    if missing:
        print(f"{len(missing)} of {len(benchmarks)} benchmarks have no results for the published "
              f"commits (not run, or changed since), their graph pages are not checked: "
              f"{', '.join(sorted(missing))}")
    if args.screenshot is not None:
        args.screenshot.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    server, base = serve(args.html_dir)
    print(f"serving {args.html_dir} at {base}; checking {len(graphs)} graph pages", flush=True)
    pages = [("grid", "", "grid"), ("summarylist", "/summarylist", "list"),
             ("regressions", "/regressions", "regressions"),
             *((name, name, "graph") for name in graphs)]
    results = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                        headless=True)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            for name, route, kind in pages:
                r = check_page(context, base, name, route, kind, args.timeout * 1000,
                               args.screenshot, expected=len(benchmarks), missing=missing)
                results.append(r)
                status = "ok  " if not r.problems else "FAIL"
                print(f"{status} {r.seconds:5.1f}s {name}: {r.detail}", flush=True)
                for problem in dict.fromkeys(r.problems):
                    print(f"         {html_lib.unescape(problem)}", flush=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    failed = [r for r in results if r.problems]
    print(f"\n{len(results) - len(failed)} of {len(results)} pages ok"
          + (f"; failed: {', '.join(r.name for r in failed)}" if failed else "")
          + (f"; {len(missing)} benchmarks without results" if missing else ""))
    if args.screenshot is not None:
        print(f"screenshots in {args.screenshot}")
    if not graphs:
        print("no graph page checked: no benchmark with results matches", file=sys.stderr)
    return 1 if failed or not graphs or (args.require_all and missing) else 0


if __name__ == "__main__":
    sys.exit(main())
