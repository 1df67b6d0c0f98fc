"""A site built from hostile records runs none of their markup: every HTML page, parsed, holds
no script but the theme's own, no event attribute and no javascript: URL.

The records (tests/fixtures/hostile.py) carry script, event attributes, Markdown links,
images, autolinks and attr_lists in every string field the reader accepts.
"""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest
from fixtures.hostile import PAYLOAD, accepted_fields

from report import markdown_text
from report.site import template_environment

pytestmark = pytest.mark.slow


class Page(html.parser.HTMLParser):
    """What a page would run: its scripts, event attributes and URLs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.events: list[str] = []
        self.urls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.events.append(f"<{tag} {name}={value!r}>")
            if value and name.lower() in ("href", "src", "action", "formaction", "data",
                                          "xlink:href", "poster"):
                self.urls.append(value)
        if tag == "script":
            src = dict(attrs).get("src")
            self.scripts.append(f"src:{src}" if src else "inline:")
            self._in_script = src is None

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def read(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def scripts_of(site: Path) -> set[str]:
    return {script for html in site.rglob("*.html") for script in read(html).scripts}


def test_the_payload_reaches_every_field_the_issue_names():
    fields = accepted_fields()
    for name in ("env.cpu_model", "env.machine", "key.tag", "workload_info.libraries",
                 "reason", "log_tail", "env.device_name"):
        assert name in fields


def test_the_hostile_records_reach_the_pages(hostile_site):
    text = "\n".join(p.read_text(encoding="utf-8") for p in hostile_site.rglob("*.html"))
    assert 'alert("script")' in text  # shown as text, so the checks below saw it
    assert (hostile_site / "workloads" / "x_onerror:alert.1-" / "index.html").is_file()


def test_no_page_runs_a_script_the_theme_does_not(hostile_site, fixture_site):
    theme = scripts_of(fixture_site)
    foreign = {f"{html.relative_to(hostile_site)}: {script[:120]}"
               for html in hostile_site.rglob("*.html") for script in read(html).scripts
               if script not in theme}
    assert not foreign


def test_no_page_has_an_event_attribute(hostile_site):
    found = [f"{html.relative_to(hostile_site)}: {event}" for html in hostile_site.rglob("*.html")
             for event in read(html).events]
    assert not found


def test_no_page_links_to_a_javascript_url(hostile_site):
    found = [f"{html.relative_to(hostile_site)}: {url}" for html in hostile_site.rglob("*.html")
             for url in read(html).urls
             if url.strip().lower().replace("\t", "").replace("\n", "").startswith(
                 ("javascript:", "vbscript:", "data:text/html"))]
    assert not found


def test_no_svg_chart_holds_markup_from_a_record(hostile_site):
    for svg in hostile_site.rglob("*.svg"):
        page = read(svg)
        assert not page.scripts and not page.events, svg


# ---- the escape itself ------------------------------------------------------------------

def test_a_record_string_renders_as_the_text_it_is():
    template = template_environment().from_string("{{ value }}")
    assert template.render(value=PAYLOAD).count("<") == 0
    assert template.render(value="[x](javascript:1)") == "\\[x\\](javascript:1)"


def test_markup_a_template_builds_passes_through_unescaped():
    environment = template_environment()
    template = environment.from_string(
        "{% macro link(t) %}[{{ t }}](page.md){% endmacro %}{{ link(value) }}")
    assert template.render(value="<b>") == "[&lt;b&gt;](page.md)"


@pytest.mark.parametrize("expression", ["values | join(', ')", "'%s!' | format(values[0])",
                                        "values[0] | replace('a', 'b')", "values[0] ~ '!'",
                                        "values | first | cell", "{'k': values[0]} | value"])
def test_filters_that_would_escape_for_html_alone_escape_for_markdown(expression):
    template = template_environment().from_string("{{ " + expression + " }}")
    rendered = template.render(values=["[x](javascript:1) {: onclick=1 }", "<b>"])
    assert not re.search(r"(?<!\\)[\[\]{}<]", rendered), rendered


def test_text_escape_keeps_a_value_on_one_line():
    assert "\n" not in markdown_text.text("a\n\n<b>\r\nc")


def test_text_in_a_fenced_block_cannot_close_the_fence():
    import markdown

    template = template_environment().from_string("```text\n{{ value | code_block }}\n```\n")
    page = markdown.markdown(template.render(value=f"ok\n```\n{PAYLOAD}\n  ~~~\n<b>x</b>"),
                             extensions=["pymdownx.superfences", "attr_list", "md_in_html"])
    assert "<script" not in page and "<b>" not in page and "onerror=" not in page.replace(
        "&lt;img src=x onerror=", "")
    assert page.count("<pre") == 1
