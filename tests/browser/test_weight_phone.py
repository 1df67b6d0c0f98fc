"""Issue 48, weight and phone: the home page's cold load, chart text size, and the first
table of every page on a phone, measured in Chromium at 1440x900 and 390x844."""

from __future__ import annotations

import functools
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser.conftest import page_urls, read_in_tabs

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
MAX_HOME_BYTES = 1_000_000
SEARCH_FETCH_POLLS = 150  # 15 s of 100 ms waits
MIN_CHART_TEXT_PX = {"desktop": 9.0, "phone": 7.0}
TABS = 4

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
  return {charts, first};
}
"""


@dataclass(frozen=True)
class Measured:
    charts: tuple[tuple[str, float], ...]  # (src, drawn width in CSS px)
    first_tables: tuple[dict, ...]  # the first outside <details>, then each <details>' first


def _no_network(context, base_url: str) -> None:
    context.route(lambda url: not url.startswith(base_url), lambda route: route.fulfill(body=""))


def _measure_every_page(browser, site_dir: Path, base_url: str, viewport,
                        charted_only: bool = False) -> dict[str, Measured]:
    """Every page at `viewport`; with `charted_only`, only those whose HTML shows a chart
    of the site's own (the rest have no chart text to measure)."""
    context = browser.new_context(viewport=viewport, service_workers="block")
    context.set_default_timeout(30_000)
    _no_network(context, base_url)
    # The index is not what these checks are about; an empty one keeps the pages light.
    context.route(base_url + "search/search_index.json",
                  lambda route: route.fulfill(body='{"config": {"lang": ["en"], "separator": "[\\\\s]+", '
                                                  '"pipeline": []}, "docs": []}',
                                              content_type="application/json"))
    pages = [context.new_page() for _ in range(TABS)]
    urls = page_urls(site_dir, base_url, keep=lambda html: not charted_only
                     or CHART_IMAGE.search(html.read_text("utf-8")) is not None)

    def measure(page, url) -> Measured:
        page.wait_for_load_state("load")
        seen = page.evaluate(_MEASURE_JS)
        return Measured(charts=tuple((chart["src"], chart["width"]) for chart in seen["charts"]),
                        first_tables=tuple(seen["first"]))

    try:
        measured = read_in_tabs(pages, urls, lambda page, url: page.goto(url, wait_until="commit"),
                                measure)
    finally:
        context.close()
    return measured


# A chart is an <img> of an SVG under a charts/ folder (report/charts.py writes them there).
CHART_IMAGE = re.compile(r'<img[^>]+src="[^"]*charts/[^"]*\.svg"')


@pytest.fixture(scope="module")
def desktop(browser, site_dir, base_url):
    # The desktop width is measured for chart text alone: the pages without a chart of their
    # own (about three in four) are left out, which takes about 80 s off every CI run.
    return _measure_every_page(browser, site_dir, base_url, DESKTOP, charted_only=True)


@pytest.fixture(scope="module")
def phone(browser, site_dir, base_url):
    return _measure_every_page(browser, site_dir, base_url, PHONE)


FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")
VIEW_BOX = re.compile(r'viewBox="[\d.\s-]*?\s([\d.]+)\s+[\d.]+"')


@functools.cache
def _smallest_text(svg: Path) -> tuple[float, float]:
    """(smallest font size, width of the drawing), both in the SVG's own units."""
    text = svg.read_text("utf-8")
    sizes = [float(size) for size in FONT_SIZE.findall(text)]
    assert sizes, f"{svg}: no <text> with a font size; is text drawn as paths (svg.fonttype)?"
    view = VIEW_BOX.search(text)
    assert view, f"{svg}: no viewBox"
    return min(sizes), float(view[1])


def _svg_file(site_dir: Path, base_url: str, src: str) -> Path:
    return site_dir / urllib.parse.unquote(src.removeprefix(base_url))


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_chart_text_is_large_enough(screen, request, site_dir, base_url):
    measured = request.getfixturevalue(screen)
    floor = MIN_CHART_TEXT_PX[screen]
    drawn, small = 0, []
    for url, visit in measured.items():
        for src, width in visit.charts:
            assert width > 0, f"{url}: chart {src} is not drawn even with every tab shown"
            font, view_width = _smallest_text(_svg_file(site_dir, base_url, src))
            pixels = font * width / view_width
            drawn += 1
            if pixels < floor:
                small.append(f"{url}: {src.rsplit('/', 1)[-1]} {font:g} units at {width:.0f} px "
                             f"of {view_width:g}: {pixels:.1f} px")
    assert drawn >= 10, f"only {drawn} charts found on the whole site"
    assert not small, f"chart text under {floor} px at {screen} width:\n" + "\n".join(small)


def test_first_table_of_every_page_fits_a_phone(phone):
    """Every cell of a page's first table (and of the first table in each <details>, once
    opened), the answer column among them, lies on the 390 px screen, and nothing around
    the table scrolls sideways."""
    tables = [(url, table) for url, visit in phone.items() for table in visit.first_tables]
    assert len({url for url, _ in tables}) >= 10, sorted({url for url, _ in tables})
    empty = [(url, table["head"]) for url, table in tables if not table["cells"]]
    assert not empty, f"first tables with no cell shown: {empty}"
    off = [(url, table) for url, table in tables if table["offCount"] or table["scrolls"]]
    assert not off, "first tables that do not fit a 390 px screen:\n" + "\n".join(
        f"{url} ({table['head']!r}): {table['offCount']} cells off screen {table['off']}"
        f"{'; scrolls: ' + table['scrolls'] if table['scrolls'] else ''}"
        for url, table in off)


class _Transfer:
    """Bytes that came over the network for one page, cache disabled (DevTools' count)."""

    def __init__(self, context, page):
        self.bytes = 0
        self.urls: list[str] = []
        self._requests: dict[str, str] = {}
        self.session = context.new_cdp_session(page)
        self.session.send("Network.enable")
        self.session.send("Network.setCacheDisabled", {"cacheDisabled": True})
        self.session.on("Network.requestWillBeSent", self._sent)
        self.session.on("Network.loadingFinished", self._finished)

    def _sent(self, event) -> None:
        self._requests[event["requestId"]] = event["request"]["url"]

    def _finished(self, event) -> None:
        self.bytes += event["encodedDataLength"]
        self.urls.append(self._requests.get(event["requestId"], "?"))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_home_cold_load_is_at_most_1_mb_and_leaves_the_search_index(browser, base_url, viewport):
    context = browser.new_context(viewport=viewport, service_workers="block")
    _no_network(context, base_url)
    page = context.new_page()
    transfer = _Transfer(context, page)
    try:
        page.goto(base_url, wait_until="load")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)  # lazy images near the screen
        assert base_url + "assets/javascripts/bundle." in " ".join(transfer.urls), transfer.urls
        index = [url for url in transfer.urls if url.endswith("search/search_index.json")]
        assert not index, "the search index was fetched before search was opened"
        assert transfer.bytes <= MAX_HOME_BYTES, (
            f"cold load of the home page: {transfer.bytes:,} bytes\n" + "\n".join(transfer.urls))
        # Opening search (the box on a large screen, the magnifier on a phone) fetches it.
        phone = 'label.md-header__button[for="__search"]'
        page.locator("input.md-search__input" if viewport is DESKTOP else phone).click()
        # the search worker starts the fetch when it gets to it, late on a loaded machine
        for _ in range(SEARCH_FETCH_POLLS):
            index = [url for url in transfer.urls if url.endswith("search/search_index.json")]
            if index:
                break
            page.wait_for_timeout(100)
        assert index, "opening search did not fetch the search index"
    finally:
        context.close()
