"""The one boundary where a string from a record becomes Markdown text.

Records are untrusted (pull requests, CI artifacts, other people's machines), and the pages
are Markdown that may hold raw HTML, so a record string could carry a live `<script>`, a
`[link](javascript:…)` or an attr_list `{: onclick=…}`. The template environment
(report/site.py) autoescapes every `{{ value }}` with `Markdown.escape`: text stays text,
whatever template or page shows it. What a template or page deliberately builds as markup
is a `Markdown` (or markupsafe `Markup`) and passes through as it is.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from markupsafe import Markup

# What makes HTML (< > &) or a link, image, attribute list or code span ([ ] { } `) out of
# text, with the backslash that would undo an escape and the pipe that splits a table cell.
# Each escape renders as the character itself. Emphasis (* _) is no danger and is left alone,
# so that names like `device_name` read the same inside a code span; `| cell` escapes it.
_ESCAPES = str.maketrans({
    "&": "&amp;", "<": "&lt;", ">": "&gt;",
    "\\": "\\\\", "`": "\\`", "[": "\\[", "]": "\\]", "{": "\\{", "}": "\\}",
    "|": "\\|",
})
# A line break in a value would end a table row or start a block of its own.
_LINE_BREAK = re.compile(r"\s*[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def text(value: Any) -> str:
    """`value` as Markdown that renders exactly its characters, on one line."""
    return _LINE_BREAK.sub(" ", str(value)).translate(_ESCAPES)


class Markdown(Markup):
    """Markup whose escape is Markdown's: joining, formatting or adding plain strings to it
    escapes them for Markdown and HTML both."""

    __slots__ = ()

    @classmethod
    def escape(cls, s: Any, /) -> Markdown:
        if hasattr(s, "__html__"):
            return cls(s.__html__())
        return cls(text(s))


def finalize(value: Any) -> Any:
    """Jinja's finalize hook: every `{{ value }}` that is not markup becomes escaped text."""
    return value if hasattr(value, "__html__") else Markdown.escape(value)


# Jinja's own filters of these names escape with HTML's rules only when autoescaping; these
# keep plain strings plain, so that the finalize hook escapes them once, for Markdown.
def join(value, separator: str = "", attribute=None):
    items = [getattr(item, attribute) if attribute else item for item in value]
    if any(hasattr(item, "__html__") for item in [separator, *items]):
        return Markdown(Markdown.escape(separator).join(items))
    return str(separator).join(str(item) for item in items)


def replace(value, old: str, new: str, count: int = -1):
    if hasattr(value, "__html__"):
        return Markdown(value).replace(old, new, count)
    return str(value).replace(old, new, count)


def format_(value, *args, **kwargs):
    if hasattr(value, "__html__"):
        return Markdown(value) % (args or kwargs)
    return str(value) % (args or kwargs)


_FENCE_LINE = re.compile(r"^(\s*)(`{3,}|~{3,})", re.M)


def code_block(value) -> Markdown:
    """Text for the inside of a fenced code block, where Markdown reads nothing but a line
    that closes the fence: such a line is broken with a zero-width space. The rest stays as
    it is, line breaks included (the block escapes < and & itself)."""
    return Markdown(_FENCE_LINE.sub("\\1\u200b\\2", str(value)))


FILTERS = {"join": join, "replace": replace, "format": format_, "code_block": code_block}


# ---- page titles ----------------------------------------------------------------------------
# MkDocs takes a page's title from its first heading, and the theme writes it into <title>
# after `striptags`, which turns &lt; back into <: a record string in a heading would be live
# there. Such a page gets its title in front matter, with nothing the theme can unescape.
_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)---\n", re.S)
_HEADING = re.compile(r"^# (.*)$", re.M)
_ESCAPED = ("&lt;", "&gt;", "&amp;")
_TITLE_SAFE = str.maketrans({"<": "\u2039", ">": "\u203a", "&": "\uff06"})


def theme_safe_title(page: str) -> str:
    """`page` with a front-matter title where its first heading holds escaped text."""
    front = _FRONT_MATTER.match(page)
    body_at = front.end() if front else 0
    heading = _HEADING.search(page, body_at)
    if heading is None or not any(e in heading.group(1) for e in _ESCAPED):
        return page
    plain = re.sub(r"\s*\{\s*#[^}]*\}\s*$", "", heading.group(1))  # a { #anchor }
    plain = html.unescape(re.sub(r"\\(.)", r"\1", plain)).replace("`", "").replace("**", "")
    title = f"title: {json.dumps(plain.translate(_TITLE_SAFE))}\n"  # JSON is YAML
    if front:
        return f"---\n{front.group(1)}{title}---\n{page[body_at:]}"
    return f"---\n{title}---\n{page}"
