"""The guide's decision flow renders in the browser from the site's own copy of mermaid,
with no request leaving the site."""

from __future__ import annotations

import contextlib

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

pytestmark = pytest.mark.browser

GUIDE = "analysis/guide/"
MERMAID = "javascripts/mermaid.min.js"
RENDER_TIMEOUT_MS = 30_000

# Material draws each diagram into a closed shadow root, which no test can look into;
# opened, the same SVG becomes visible to the page's locators. Nothing else changes.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attach.call(this, Object.assign({}, init, {mode: "open"}));
};
"""


@pytest.fixture(scope="module")
def guide(context, base_url):
    page = context.new_page()
    page.add_init_script(OPEN_SHADOW_ROOTS)
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.goto(base_url + GUIDE)
    svg = page.locator("div.mermaid svg").first
    # A diagram that never renders fails the test that looks for it, not every test here.
    with contextlib.suppress(PlaywrightTimeout):
        svg.wait_for(state="visible", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_load_state("networkidle")
    yield {"page": page, "svg": svg, "requests": requests, "errors": errors}
    page.close()


def test_guide_flowchart_renders_as_an_svg(guide):
    assert guide["svg"].count() == 1, (
        f"no <svg> in the .mermaid element after {RENDER_TIMEOUT_MS} ms: mermaid did not render "
        "the flowchart (is the mermaid fence in mkdocs.yml, and mermaid.min.js loaded?)")
    box = guide["svg"].bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 200, box
    text = guide["svg"].text_content()
    for label in ("Which device?", "A training step?", "Do input shapes vary between calls?"):
        assert label in text, f"{label!r} missing from the rendered flowchart"


def test_guide_flowchart_uses_the_sites_own_mermaid(guide, base_url):
    assert base_url + MERMAID in guide["requests"], (
        "mermaid was not loaded from the site: list it in mkdocs.yml's extra_javascript")


def test_guide_page_makes_no_request_outside_the_site(guide, base_url):
    outside = [url for url in guide["requests"]
               if not url.startswith(base_url) and not url.startswith(("data:", "blob:"))]
    assert not outside, "requests that left the site:\n" + "\n".join(outside)


def test_guide_page_renders_without_errors(guide):
    assert not guide["errors"], "\n".join(guide["errors"])
