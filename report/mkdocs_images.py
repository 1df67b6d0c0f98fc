"""MkDocs hook: chart images load when they come into view, at a size known in advance.

The home page holds a heat map per environment, one per content tab, and the browser
fetched all of them on a cold load though only the first tab shows: most of the page's
bytes. `loading="lazy"` leaves an image alone until it nears the screen, and an image in a
hidden tab never does. The width and height, read from the SVG, reserve the chart's box
before it arrives: without them every lazy image is 0 px tall, all of them are "near the
screen" at once, and the page jumps as each one lands.
"""

from __future__ import annotations

import functools
import posixpath
import re
from pathlib import Path

IMG = re.compile(r"<img\b([^>]*?)\s*/?>")
SRC = re.compile(r'\bsrc="([^"]+\.svg)"')
# Matplotlib writes the size in points; a CSS pixel is 3/4 of a point.
SVG_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)pt"[^>]*?\bheight="([\d.]+)pt"')


@functools.cache
def _pixel_size(svg: Path) -> tuple[int, int] | None:
    try:
        with open(svg, encoding="utf-8") as file:
            found = SVG_SIZE.search(file.read(2048))
    except OSError:
        return None
    return (round(float(found[1]) * 4 / 3), round(float(found[2]) * 4 / 3)) if found else None


def _lazy(tag: re.Match, page_dir: str, files) -> str:
    attributes = tag[1]
    src = SRC.search(attributes)
    if src is None or "loading=" in attributes or "://" in src[1]:
        return tag[0]
    extra = ' loading="lazy" decoding="async"'
    target = files.get_file_from_path(posixpath.normpath(posixpath.join(page_dir, src[1])))
    size = _pixel_size(Path(target.abs_src_path)) if target is not None else None
    if size is not None and "width=" not in attributes:
        extra += f' width="{size[0]}" height="{size[1]}"'
    return f"<img{attributes}{extra} />"


def on_page_content(html, page, config, files):
    # MkDocs has made an image's src relative to the page's URL (a folder: analysis/guide/);
    # a chart's path in the site is its path under docs/.
    page_dir = page.url if page.url.endswith("/") else posixpath.dirname(page.url)
    return IMG.sub(lambda tag: _lazy(tag, page_dir, files), html)
