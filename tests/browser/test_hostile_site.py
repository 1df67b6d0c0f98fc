"""A site built from hostile records, in Chromium: pages that show every poisoned field, and the
guide's chooser fed with them, open no dialog (every payload calls alert())."""

from __future__ import annotations

import functools
import threading

import pytest

from tests.browser.conftest import _QuietServer, _site_prefix, _SiteHandler

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The raw rows of the poisoned environment (every string field), and the home page (labels,
# tags and libraries in tables, headings, chart captions and the navigation).
PAGES = ("", "analysis/all-results/")


@pytest.fixture(scope="module")
def hostile_base_url(hostile_site, browser):
    handler_class = type("Handler", (_SiteHandler,), {"site_prefix": _site_prefix(hostile_site)})
    server = _QuietServer(("127.0.0.1", 0),
                          functools.partial(handler_class, directory=str(hostile_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}{handler_class.site_prefix}", hostile_site
    server.shutdown()
    server.server_close()
    thread.join()


def poisoned_env_page(site) -> str:
    """The all-results page of an environment whose fields hold the payload."""
    for page in sorted((site / "analysis" / "results").glob("*/index.html")):
        if 'alert("script")' in page.read_text(encoding="utf-8"):
            return f"analysis/results/{page.parent.name}/"
    raise AssertionError("no all-results page shows the poisoned environment")


def test_pages_of_hostile_records_open_no_dialog(browser, hostile_base_url):
    base_url, site = hostile_base_url
    context = browser.new_context(service_workers="block")
    context.route(lambda url: not url.startswith(base_url), lambda route: route.fulfill(body=""))
    dialogs: list[str] = []
    try:
        for path in (*PAGES, poisoned_env_page(site)):
            page = context.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(base_url + path, wait_until="networkidle")
            # Hover and click what a reader would: the payloads' event attributes and links.
            for selector in ("h1", "table td", "nav a"):
                shown = [e for e in page.locator(selector).all()[:40] if e.is_visible()]
                for element in shown[:20]:
                    element.hover(timeout=2000)
            assert 'alert("script")' in page.content()  # the payload is on the page, as text
            page.close()
    finally:
        context.close()
    assert dialogs == []

