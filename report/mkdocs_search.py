"""MkDocs hook: the search index holds a page's prose and headings, not its tables.

The generated pages are mostly tables of figures. Indexed, their cells made the search
index about 2 MB, which every reader downloads, and a search for a workload or a mode
found hundreds of table rows before the paragraph about it. Parsing them was also a
third of the site build. The theme's search plugin reads `page.content` in its
`on_page_context`; this hook hands it the page without tables and puts the tables back
before the page is written.

The theme also fetches the index on every page load, searched or not. Each page gets
docs/javascripts/search-on-demand.js just before the theme's bundle, which holds that
request until the reader opens search.
"""

from __future__ import annotations

import re

from mkdocs.plugins import CombinedEvent, event_priority

TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL)
# The theme's script, whose src starts with the way from the page to the site root.
BUNDLE = re.compile(r'<script src="([^"]*)assets/javascripts/bundle\.[0-9a-f]+\.min\.js"></script>')
ON_DEMAND = "javascripts/search-on-demand.js"
_whole: dict[str, str] = {}


@event_priority(100)  # before the search plugin (priority 0)
def _hide_tables(context, page, config, nav):
    _whole[page.file.src_uri] = page.content
    page.content = TABLE.sub("", page.content or "")
    return context


@event_priority(-100)  # after it
def _restore_tables(context, page, config, nav):
    page.content = _whole.pop(page.file.src_uri)
    return context


on_page_context = CombinedEvent(_hide_tables, _restore_tables)


def on_post_page(output, page, config):
    if not {"search", "material/search"} & set(config.plugins):
        return output
    found = BUNDLE.search(output)
    if found is None:
        raise ValueError(f"{page.file.src_uri}: no theme bundle <script> to put {ON_DEMAND} before; "
                         "has the theme's base.html changed?")
    hold = f'<script src="{found[1]}{ON_DEMAND}"></script>'
    return output[:found.start()] + hold + output[found.start():]
