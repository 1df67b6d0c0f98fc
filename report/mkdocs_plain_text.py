"""MkDocs hook: text without Markdown syntax skips Python-Markdown's inline patterns.

The generated pages hold about 150,000 table cells of plain figures, and Python-Markdown
tried each of its fourteen inline patterns on every one of them: most of the site build.
A text with none of the characters those patterns start at (backtick, backslash, bracket,
exclamation mark, angle bracket, ampersand, asterisk, underscore, a hard line break) comes
out of them unchanged, so it is marked atomic, which they pass over. The HTML is the same.
"""

from __future__ import annotations

import re

from markdown import Extension
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString

# Where an inline pattern of this site's extensions can match, and Python-Markdown's own
# placeholders (STX, ETX).
SYNTAX = re.compile(r"[`\\\[\]!<>&*_\x02\x03]|  \n")


class _MarkPlainText(Treeprocessor):
    def run(self, root):
        for element in root.iter():
            for side in ("text", "tail"):
                value = getattr(element, side)
                if value and not isinstance(value, AtomicString) and not SYNTAX.search(value):
                    setattr(element, side, AtomicString(value))


class PlainText(Extension):
    def extendMarkdown(self, md):
        md.treeprocessors.register(_MarkPlainText(md), "plain-text", 21)  # before "inline" (20)


def on_config(config):
    config.markdown_extensions.append(PlainText())
    return config
