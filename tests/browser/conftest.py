"""Fixtures for the browser tests: build the real site once, serve it, drive Chromium.

Chromium is Debian's (`apt-get install chromium`) and Playwright is only the Python
package: `playwright install` downloads a browser and is never needed here.
Without either one the tests skip, unless ATLAS_REQUIRE_BROWSER=1 (set in CI), which
turns a missing browser into a failure so that the tests cannot silently skip there.

Environment:
    ATLAS_CHROMIUM          Chromium executable (default /usr/bin/chromium)
    ATLAS_REQUIRE_BROWSER   "1": fail instead of skip when the browser is missing
    ATLAS_SITE_DIR          a site that is already built; skips the build
"""

from __future__ import annotations

import collections
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures import ROOT

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Pages that never finish loading are failures, not hangs.
NAVIGATION_TIMEOUT_MS = 30_000
CRAWL_TABS = 4
# The crawl opens each page at CRAWL_VIEWPORT, then measures it at the phone's width and, where
# it has a chart of its own, at the desktop's: one load per page for every check.
CRAWL_VIEWPORT = {"width": 1280, "height": 900}
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}

# Waits for every <img> to settle (load or error) and reads what the checks need.
# Lazy images are switched to eager first: headless pages never scroll to them.
_READ_PAGE_JS = """
async () => {
  const images = [...document.images];
  for (const img of images) img.loading = "eager";
  await Promise.all(images.map((img) => img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done, {once: true});
    img.addEventListener("error", done, {once: true});
    setTimeout(done, 10000);
  })));
  return {
    images: images.map((img) => ({
      src: img.currentSrc || img.src,
      ok: img.complete && img.naturalWidth > 0,
    })),
    links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
    anchors: [...document.querySelectorAll("[id], a[name]")].map((e) => e.id || e.name),
    tab_labels: document.querySelectorAll(".tabbed-labels > label").length,
    // Tables that scroll sideways, measured with every tab shown; a collapsed <details>
    // holds secondary tables, which may.
    wide_tables: (() => {
      const style = document.createElement("style");
      style.textContent = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }";
      document.head.append(style);
      const wide = [...document.querySelectorAll("article table")]
        .filter((t) => !t.closest("details") && t.scrollWidth > t.clientWidth + 1)
        .map((t) => `${(t.rows[0] || {innerText: "table"}).innerText.slice(0, 60)}: `
                    + `${t.scrollWidth} px in ${t.clientWidth}`);
      style.remove();
      return wide;
    })(),
  };
}
"""


# Every tab shown and every <details> open, so that every chart is laid out as a reader who
# opens it sees it; lazy images loaded at once. Reads each chart's drawn width, then where
# the cells of the page's first tables are.
_MEASURE_JS = """
async () => {
  const style = document.createElement("style");
  style.textContent = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }";
  document.head.append(style);
  document.querySelectorAll("article details").forEach((d) => { d.open = true; });
  const images = [...document.querySelectorAll("article img")];
  for (const img of images) img.loading = "eager";
  await Promise.all(images.map((img) => img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done, {once: true});
    img.addEventListener("error", done, {once: true});
    setTimeout(done, 10000);
  })));
  const charts = images.filter((img) => /\\.svg$/.test(new URL(img.src).pathname))
    .map((img) => ({src: img.src, width: img.getBoundingClientRect().width}));
  // Every table outside a <details>, in every tab: whether it or its edge runs past the screen.
  const screenWidth = document.documentElement.clientWidth;
  document.querySelectorAll("article details").forEach((d) => { d.open = false; });
  const wide = [...document.querySelectorAll("article table")].filter((t) => !t.closest("details"))
    .filter((t) => t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > screenWidth + 1)
    .map((t) => `${(t.rows[0] || {innerText: "table"}).innerText.slice(0, 60)}: ${t.scrollWidth} px`);
  const tableCount = document.querySelectorAll("article table").length;
  document.querySelectorAll("article details").forEach((d) => { d.open = true; });
  style.remove();
  // The first table outside <details> as the page opens, and the first of each <details>
  // opened (the first a reader meets there), each measured alone.
  const details = [...document.querySelectorAll("article details")];
  details.forEach((d) => { d.open = false; });
  const tables = [...document.querySelectorAll("article table")];
  const firsts = [tables.find((t) => !t.closest("details")),
                  ...details.map((d) => tables.find((t) => t.closest("details") === d))];
  const screen = document.documentElement.clientWidth;
  const measure = (table) => {
    const cells = [...table.querySelectorAll("tbody td")].filter((td) => td.getClientRects().length);
    const off = cells.filter((td) => {
      const box = td.getBoundingClientRect();
      return box.left < -0.5 || box.right > screen + 0.5;
    });
    return {
      head: (table.rows[0] || {innerText: ""}).innerText.slice(0, 80),
      cells: cells.length,
      off: off.slice(0, 3).map((td) => `${td.innerText.slice(0, 30)} ends at `
                                        + `${Math.round(td.getBoundingClientRect().right)} px`),
      offCount: off.length,
      // The table itself, or a box around it that scrolls, or the page: wider than shown.
      scrolls: (() => {
        for (let e = table; e; e = e.parentElement) {
          const sideways = e === document.documentElement
            || e === table || /auto|scroll/.test(getComputedStyle(e).overflowX);
          if (sideways && e.scrollWidth > e.clientWidth + 1)
            return `${e.tagName}.${e.className}: ${e.scrollWidth} px in ${e.clientWidth}`;
        }
        return "";
      })(),
    };
  };
  const first = [];
  firsts.forEach((table, index) => {
    if (!table) return;
    // A <details> inside another opens with the ones around it.
    for (let d = index > 0 ? details[index - 1] : null; d; d = d.parentElement.closest("details"))
      d.open = true;
    first.push(measure(table));
    details.forEach((d) => { d.open = false; });
  });
  // A figure whose unit went to the next line ("32" above "µs"), in any table cell shown.
  const splitFigures = [];
  const walker = document.createTreeWalker(document.querySelector("article"), NodeFilter.SHOW_TEXT,
    {acceptNode: (n) => n.parentElement.closest("td") ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP});
  const figure = /\\d\\s(?:ns|µs|ms|s|KiB|MiB|GiB|proc\\.)(?!\\w)/g;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(figure)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0)
                                                      .map((r) => Math.round(r.bottom)));
      if (lines.size > 1) splitFigures.push(node.textContent.trim().slice(0, 60));
    }
  }
  // A stacked cell (a phone's first table) whose content runs under its column's name.
  const underName = [...document.querySelectorAll("article table[data-atlas-stack] td")]
    .filter((td) => td.getClientRects().length && td.dataset.label)
    .filter((td) => {
      const box = td.getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(td);
      return [...range.getClientRects()].some((r) => r.width > 0 && r.left < box.left + 0.3 * box.width);
    })
    .map((td) => `${td.dataset.label}: ${td.innerText.slice(0, 40)}`);
  return {charts, first, splitFigures, underName, wide, tableCount};
}
"""


def _unavailable(reason: str) -> None:
    if os.environ.get("ATLAS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (ATLAS_REQUIRE_BROWSER=1 forbids skipping)", pytrace=False)
    pytest.skip(reason)


def _run(command: list[str]) -> None:
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-4000:]
        pytest.fail(f"`{' '.join(command)}` exited {done.returncode}:\n{output}", pytrace=False)


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is missing: pip install playwright")
    chromium = shutil.which(os.environ.get("ATLAS_CHROMIUM", "/usr/bin/chromium"))
    if chromium is None:
        _unavailable("Chromium not found: apt-get install chromium, or point ATLAS_CHROMIUM at one")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """The project's real site, built once with the project's own build commands."""
    prebuilt = os.environ.get("ATLAS_SITE_DIR")
    if prebuilt:
        site = Path(prebuilt).resolve()
        if not (site / "index.html").is_file():
            pytest.fail(f"ATLAS_SITE_DIR={prebuilt} has no index.html", pytrace=False)
        return site
    site = tmp_path_factory.mktemp("atlas") / "site"
    _run([sys.executable, "-m", "report", "--results", "results", "--docs", "docs"])
    _run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)])
    return site


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site under the path of its site_url, where the host serves it.

    mkdocs writes 404.html with absolute links under that path, so a site meant for
    https://example.org/atlas/ only works when it is served at /atlas/.
    """

    site_prefix = "/"

    def translate_path(self, path):
        if not path.startswith(self.site_prefix):
            return str(Path(self.directory) / "__outside_the_site__")
        return super().translate_path("/" + path[len(self.site_prefix) :])

    def log_message(self, format, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # The browser drops keep-alive connections at will; a broken pipe is not a
        # site defect, and real failures show up as HTTP statuses in the tests.
        pass


def _site_prefix(site: Path) -> str:
    """The path part of site_url, read from the home page's canonical link."""
    canonical = re.search(
        r'<link rel="canonical" href="([^"]+)"', (site / "index.html").read_text("utf-8")
    )
    path = urllib.parse.urlsplit(canonical.group(1)).path if canonical else "/"
    return path if path.endswith("/") else path + "/"


@pytest.fixture(scope="session")
def base_url(site_dir: Path):
    handler_class = type("Handler", (_SiteHandler,), {"site_prefix": _site_prefix(site_dir)})
    handler = functools.partial(handler_class, directory=str(site_dir))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}{handler_class.site_prefix}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="session")
def context(browser, base_url: str):
    """One browser context for every test. Third-party requests get an empty answer.

    The machine has no network, and the site must not depend on one: web fonts or
    scripts from a CDN would fail differently on every machine. Stubbing keeps the
    console checks about this site. Images are checked separately and must be local.
    """
    ctx = browser.new_context(viewport=CRAWL_VIEWPORT, service_workers="block")
    ctx.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    ctx.set_default_timeout(15_000)
    ctx.route(lambda url: not url.startswith(base_url), lambda route: route.fulfill(body=""))
    yield ctx
    ctx.close()


@dataclass(frozen=True)
class Measured:
    charts: tuple[tuple[str, float], ...]  # (src, drawn width in CSS px)
    first_tables: tuple[dict, ...]  # the first outside <details>, then each <details>' first
    split_figures: tuple[str, ...]  # table cells where a figure and its unit are on two lines
    under_name: tuple[str, ...]  # stacked cells whose content runs under the column's name
    wide_tables: tuple[str, ...] = ()  # tables outside <details>, any tab, past the screen
    tables: int = 0


@dataclass(frozen=True)
class PageVisit:
    """What one page showed when loaded: its errors, images, links and anchors, and what
    _MEASURE_JS read of it at the phone's width and (with a chart of its own) the desktop's."""

    url: str
    errors: tuple[str, ...]
    images: tuple[tuple[str, bool], ...]  # (src, loaded)
    links: tuple[str, ...]  # absolute hrefs, as the browser resolved them
    anchors: frozenset[str]  # ids and names, the targets of #fragments
    tab_labels: int
    wide_tables: tuple[str, ...] = ()  # tables outside <details> that scroll sideways
    phone: Measured | None = None
    desktop: Measured | None = None  # only where the page shows a chart of its own


def read_in_tabs(tabs, urls, start, finish) -> dict:
    """`finish(tab, url)` of every url, each page opened by `start(tab, url)` in one of
    `tabs`. A tab opens its next page as soon as it has read one: batches of a page per tab
    left every tab idle while the slowest page of the batch loaded."""
    queue, loading, read = iter(urls), collections.deque(), {}

    def open_next(tab) -> None:
        url = next(queue, None)
        if url is not None:
            start(tab, url)
            loading.append((tab, url))

    for tab in tabs:
        open_next(tab)
    while loading:
        tab, url = loading.popleft()
        read[url] = finish(tab, url)
        open_next(tab)
    return read


def page_urls(site: Path, base_url: str) -> list[str]:
    """Every HTML page of the built site, as the URL a reader would use."""
    urls = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        if relative == "index.html":
            relative = ""
        elif relative.endswith("/index.html"):
            relative = relative.removesuffix("index.html")
        urls.append(base_url + relative)
    return urls


# A chart of the site's own: an SVG under a charts/ folder (report/charts.py writes them there).
CHART_IMAGE = re.compile(r"/charts/[^?#]*\.svg$")


class _Tab:
    """A browser tab that records the errors of the page it shows."""

    def __init__(self, page, base_url: str):
        self.page = page
        self.errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("response", lambda response: self._on_response(response, base_url))
        page.on("requestfailed", lambda request: self._on_request_failed(request, base_url))

    def _on_console(self, message) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location.get('url', '')})")

    def _on_response(self, response, base_url: str) -> None:
        if response.url.startswith(base_url) and response.status >= 400:
            self.errors.append(f"HTTP {response.status}: {response.url}")

    def _on_request_failed(self, request, base_url: str) -> None:
        # ERR_ABORTED is the browser cancelling a fetch itself (a favicon load, when
        # tabs load side by side); a file the site lacks shows up as an HTTP 404 above.
        if request.url.startswith(base_url) and request.failure != "net::ERR_ABORTED":
            self.errors.append(f"request failed ({request.failure}): {request.url}")

    def start(self, url: str) -> None:
        self.errors.clear()
        self.page.set_viewport_size(CRAWL_VIEWPORT)
        self.page.goto(url, wait_until="commit")

    def measure(self, viewport) -> Measured:
        self.page.set_viewport_size(viewport)
        seen = self.page.evaluate(_MEASURE_JS)
        return Measured(charts=tuple((chart["src"], chart["width"]) for chart in seen["charts"]),
                        first_tables=tuple(seen["first"]),
                        split_figures=tuple(seen["splitFigures"]),
                        under_name=tuple(seen["underName"]),
                        wide_tables=tuple(seen["wide"]), tables=seen["tableCount"])

    def finish(self, url: str) -> PageVisit:
        # networkidle: late requests (the search index, scripts loaded by scripts)
        # have to finish inside the visit so that their errors are counted.
        # load first: networkidle can come while a long page is still being parsed, and its
        # later headings (and their ids) are then missing from what is read.
        self.page.wait_for_load_state("load")
        self.page.wait_for_load_state("networkidle")
        seen = self.page.evaluate(_READ_PAGE_JS)
        charted = any(CHART_IMAGE.search(image["src"]) for image in seen["images"])
        return PageVisit(
            url=url,
            errors=tuple(self.errors),
            images=tuple((image["src"], image["ok"]) for image in seen["images"]),
            links=tuple(seen["links"]),
            anchors=frozenset(seen["anchors"]),
            tab_labels=seen["tab_labels"],
            wide_tables=tuple(seen["wide_tables"]),
            phone=self.measure(PHONE),
            desktop=self.measure(DESKTOP) if charted else None,
        )


def _light_search_index(tabs: list[_Tab], site: Path, base_url: str) -> None:
    """Every page's search worker fetches the whole index and builds it, seconds of CPU per
    page that were half of the crawl. The crawl serves the index with its real config and
    no entries, at its own URL only: each page still has to ask for it at the right place
    (a wrong URL reaches the server and fails), and the worker still starts. The full index
    is loaded and searched by test_site_search_finds_reduce_overhead."""
    index = site / "search" / "search_index.json"
    if not index.is_file():
        return  # no search plugin: each page's request for it fails, and says so
    body = json.dumps({"config": json.loads(index.read_text("utf-8"))["config"], "docs": []})
    for tab in tabs:
        tab.page.route(base_url + "search/search_index.json",
                       lambda route: route.fulfill(body=body, content_type="application/json"))


@pytest.fixture(scope="session")
def crawl(context, site_dir: Path, base_url: str) -> dict[str, PageVisit]:
    """Load every page once and record what the checks need.

    A few tabs load pages side by side, so that their waits for the network to go
    quiet overlap instead of adding up.
    """
    tabs = [_Tab(context.new_page(), base_url) for _ in range(CRAWL_TABS)]
    _light_search_index(tabs, site_dir, base_url)
    urls = page_urls(site_dir, base_url)
    visits = read_in_tabs(tabs, urls, _Tab.start, _Tab.finish)
    for tab in tabs:
        tab.page.close()
    return visits
