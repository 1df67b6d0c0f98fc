"""The plain-text hook only skips work: every page converts to the same HTML with it."""

from __future__ import annotations

import markdown
import pytest
import yaml

from report.mkdocs_plain_text import PlainText

SAMPLE = """# Heading with `code` and plain words

| workload | speedup | note |
|---|---|---|
| [vit-base16](workloads/vit-base16.md) | 1.53× (1.47–1.55, 3 paired proc.) | plain cell |
| matmul_128 | **2.0×** | *leans* holds &amp; fails <small>small</small> |
| a\\*b | ![chart](c.svg) | <https://example.org> and <me@example.org> |

A line with a hard break  
and a second line. Plain, with 10 < 20 > 5 and `x_y`.

!!! note "Admonition"
    Plain text inside, and _emphasis_.

=== "cuda"

    Tabbed plain text.
"""


def _extensions():
    with open("mkdocs.yml", encoding="utf-8") as handle:
        config = yaml.load(handle, Loader=yaml.BaseLoader)
    names, configs = [], {}
    for entry in config["markdown_extensions"]:
        name, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        names.append(name)
        configs[name] = {k: v == "true" if v in ("true", "false") else v
                         for k, v in (options or {}).items()}
    return names, configs


@pytest.mark.parametrize("text", [SAMPLE, SAMPLE.replace("|", " ")])
def test_the_site_extensions_give_the_same_html_with_plain_text_marked(text):
    names, configs = _extensions()
    plain = markdown.markdown(text, extensions=names, extension_configs=configs)
    marked = markdown.markdown(text, extensions=[*names, PlainText()], extension_configs=configs)
    assert "<table>" in plain or "<table" not in text
    assert marked == plain
