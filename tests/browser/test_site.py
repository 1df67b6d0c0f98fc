"""The built site works in a real browser: pages, images, links, search and tabs."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pytest

pytestmark = pytest.mark.browser

# Talk to the local server directly, whatever proxy the environment names.
_LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _status(url: str) -> int:
    try:
        with _LOCAL.open(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _page_key(url: str) -> str:
    """The crawl's key for a link target: no fragment, no trailing index.html."""
    url = urllib.parse.urldefrag(url).url
    return url.removesuffix("index.html")


# Issue 19: no page's HTML above 300 KB, so that a page opens in one go on a slow link. The
# executed notebook is the exception: its outputs are the point of it.
MAX_PAGE_BYTES = 300_000


def test_every_page_but_the_notebook_is_at_most_300_kb(site_dir):
    sizes = {html.relative_to(site_dir).as_posix(): html.stat().st_size
             for html in site_dir.rglob("*.html") if "notebooks" not in html.parts}
    assert sizes, f"no HTML page under {site_dir}"
    heavy = {page: size for page, size in sizes.items() if size > MAX_PAGE_BYTES}
    assert not heavy, f"pages over {MAX_PAGE_BYTES:,} bytes: {heavy}"


def test_crawl_found_the_home_page_and_more(crawl, base_url):
    assert base_url in crawl, f"no index.html at the site root; pages: {sorted(crawl)}"
    assert len(crawl) > 1, "the site has a single page; the crawl found nothing else"


def test_every_page_loads_without_console_errors(crawl):
    failures = {url: visit.errors for url, visit in crawl.items() if visit.errors}
    assert not failures, "pages with console errors, uncaught exceptions or failed loads:\n" + (
        "\n".join(f"{url}\n    " + "\n    ".join(errors) for url, errors in failures.items())
    )


def test_no_table_outside_a_details_block_scrolls_sideways(crawl):
    """At 1280 px wide, narrower than the 1440 the issue asked for: result tables fit the
    content column, so the answer column is never off to the side."""
    wide = {url: visit.wide_tables for url, visit in crawl.items() if visit.wide_tables}
    assert not wide, wide


def test_every_image_on_every_page_loads(crawl, base_url):
    broken = [
        f"{url}: {src}" + ("" if src.startswith(base_url) else " (not served by the site)")
        for url, visit in crawl.items()
        for src, loaded in visit.images
        if not loaded
    ]
    assert not broken, "images that did not load (naturalWidth 0):\n" + "\n".join(broken)


def _anchors_on_reload(context, url: str) -> frozenset[str]:
    """The ids of `url` read again in a page of its own, after its load event: the crawl
    reads pages four at a time, and on a loaded machine one has been read short of its ids."""
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        return frozenset(page.evaluate(
            '() => [...document.querySelectorAll("[id], a[name]")].map((e) => e.id || e.name)'))
    finally:
        page.close()


def test_every_internal_link_resolves(crawl, base_url, context):
    links = {
        (page, link)
        for page, visit in crawl.items()
        for link in visit.links
        if link.startswith(base_url)
    }
    statuses = {target: _status(target) for target in {_page_key(link) for _, link in links}}
    failures = [
        f"{page} -> {link} (HTTP {statuses[_page_key(link)]})"
        for page, link in sorted(links)
        if statuses[_page_key(link)] != 200
    ]
    reloaded: dict[str, frozenset[str]] = {}
    for page, link in sorted(links):
        fragment = urllib.parse.unquote(urllib.parse.urldefrag(link).fragment)
        target = crawl.get(_page_key(link))
        if fragment and target is not None and fragment not in target.anchors:
            key = _page_key(link)
            if key not in reloaded:
                reloaded[key] = _anchors_on_reload(context, key)
            if fragment not in reloaded[key]:
                failures.append(f"{page} -> {link} (no element with id {fragment!r})")
    assert not failures, "internal links that do not resolve:\n" + "\n".join(failures)


def test_site_search_finds_reduce_overhead(context, base_url):
    page = context.new_page()
    page.goto(base_url)
    query = page.locator("input.md-search__input")
    assert query.count() == 1, "no search box: enable the mkdocs `search` plugin"
    query.click()
    query.press_sequentially("reduce-overhead", delay=20)
    # Results are redrawn after every keystroke, so the first item may still belong to a
    # prefix of the query when it appears: wait for the answer to the whole query.
    from playwright.sync_api import expect  # only where the browser tests run

    first = page.locator(".md-search-result__item").first
    expect(first).to_contain_text("overhead", ignore_case=True, timeout=15_000)
    page.close()


def test_second_content_tab_shows_its_own_content(context, crawl):
    tabbed = [url for url, visit in crawl.items() if visit.tab_labels >= 2]
    assert tabbed, (
        "no page has a content tab with two labels "
        "(pymdownx.tabbed with alternate_style: true renders .tabbed-labels)"
    )
    page = context.new_page()
    page.goto(tabbed[0])
    tab_set = page.locator(".tabbed-set:has(> .tabbed-labels > label:nth-child(2))").first
    labels = tab_set.locator(":scope > .tabbed-labels > label")
    blocks = tab_set.locator(":scope > .tabbed-content > .tabbed-block")
    shown_before = blocks.nth(0).inner_text()
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()

    labels.nth(1).click()

    blocks.nth(1).wait_for(state="visible")
    assert not blocks.nth(0).is_visible()
    assert blocks.nth(1).inner_text() != shown_before
    page.close()


def test_every_workload_page_shows_its_fastest_mode_in_the_first_screen(context, crawl):
    # A reader who came to choose a mode for a workload finds a measured answer, with its
    # spread, without scrolling: the first row of the "At a glance" table is in the first
    # 900 pixels at 1440 wide.
    pages = sorted(url for url in crawl if "/workloads/" in url
                   and not url.rstrip("/").endswith("/workloads"))
    assert len(pages) >= 20, pages
    page = context.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    late = []
    for url in pages:
        page.goto(url)
        first = page.locator("h2#at-a-glance ~ .tabbed-set .tabbed-block:visible tbody tr").first
        box = first.bounding_box() if first.count() else None
        if box is None or box["y"] + box["height"] > 900 or "×" not in first.inner_text():
            late.append(f"{url}: {box}")
    page.close()
    assert not late, "workload pages whose first answer is not in the first screen:\n" + "\n".join(late)


def test_the_cold_start_page_answers_in_the_first_screen(context, base_url):
    # A reader whose first call is too slow finds each rung's measured cost for the real
    # models without scrolling: the first row of the ladder at a glance ends within the first
    # 900 pixels at 1440 wide, its warm rung in seconds. The per-model table (30 rows of 10
    # columns) once filled the first three screens.
    page = context.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{base_url}analysis/cold-start/")
    first = page.locator("h2#which-rung ~ * table tbody tr").first
    box = first.bounding_box()
    cells = first.locator("td").all_inner_texts()
    page.close()
    assert box is not None and box["y"] + box["height"] <= 900, box
    assert cells[3].endswith("\u00a0s"), cells
