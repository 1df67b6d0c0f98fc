"""Content tabs never open on a backend with no results (issue 93: 238 empty *mps* tabs, and
one click on *mps* made every later page open on "Not measured")."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = ("", "analysis/guide/", "analysis/models/", "analysis/cold-start/",
         "analysis/break-even/", "analysis/claims/", "analysis/all-results/")

# Per tab set: the label of the tab shown, whether it only says "Not measured" while another
# tab holds results, and the labels a reader can see.
_TABS_JS = r"""
() => [...document.querySelectorAll(".tabbed-set")].map((set) => {
  const blocks = [...set.querySelectorAll(":scope > .tabbed-content > .tabbed-block")];
  const labels = [...set.querySelectorAll(":scope > .tabbed-labels > label")];
  const empty = blocks.map((b) => /^Not measured: there are no /.test(b.textContent.trim()));
  const shown = blocks.findIndex((b) => b.offsetParent !== null);
  return {shown: shown >= 0 ? labels[shown].textContent.trim() : null,
          emptyShown: shown >= 0 && empty[shown] && empty.includes(false),
          visibleEmpty: labels.filter((l, i) => empty[i] && !l.hidden && empty.includes(false))
                              .map((l) => l.textContent.trim())};
})
"""


def test_no_page_opens_on_an_empty_tab_even_after_a_tab_choice(context, base_url):
    page = context.new_page()
    try:
        page.goto(base_url + "analysis/guide/", wait_until="load")
        page.wait_for_timeout(100)
        choices = [None, *dict.fromkeys(
            label.inner_text().strip() for label in page.locator(
                ".tabbed-set > .tabbed-labels > label:visible").all())]
        checked = 0
        for choice in choices:
            if choice is not None:  # the theme carries a clicked tab's label to every page
                page.goto(base_url + "analysis/guide/", wait_until="load")
                page.locator(".tabbed-set > .tabbed-labels > label:visible",
                             has_text=choice).first.click()
            for path in PAGES:
                page.goto(base_url + path, wait_until="load")
                page.wait_for_timeout(100)
                sets = page.evaluate(_TABS_JS)
                wrong = [s for s in sets if s["emptyShown"] or s["visibleEmpty"]]
                assert not wrong, (choice, path, wrong[:3])
                checked += len(sets)
        assert checked >= 20, checked
    finally:
        page.close()
