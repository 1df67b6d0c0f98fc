"""Portable cache bundles are untrusted input: checked before torch sees a byte of them.

A bundle (`torch.compiler.save_cache_artifacts`) holds compiled code and pickles, and loading
it writes each artifact to a path built from the artifact's key. So loading one is running
code: a bundle is loaded only when the sha256 of its bytes is one the user trusts (given with
`--bundle-sha256`, recorded in a description under the results folder, or saved by this run),
and only when every key stays inside the process's own cache folders. The checks read the
bytes once and hand the same bytes to the loader, so nothing can change between the two.

The layout read here is torch's AppendingByteSerializer (torch/utils/_appending_byte_serializer.py,
torch/compiler/_cache.py): a CRC32, a version, then per cache layer its type, a count and
(key, content) pairs, strings base64-encoded, every length a big-endian uint64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import posixpath
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

ENCODING_VERSION = 1
# A key is one or two plain names (autotune keys are "ab/abcdef.best_config"): no absolute
# path, no "..", no backslash, nothing but letters, digits and . _ - + = : in each part.
_PART = re.compile(r"[A-Za-z0-9_+=:.-]{1,255}")
MAX_KEY_PARTS = 2


class BundleRefused(Exception):
    """A bundle that must not be loaded; the message says why, in one line."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_key(key: str) -> None:
    parts = key.split("/")
    if (not key or key.startswith("/") or len(parts) > MAX_KEY_PARTS
            or any(p in (".", "..") or not _PART.fullmatch(p) for p in parts)
            or posixpath.normpath(key) != key):
        raise BundleRefused(f"artifact key {key[:80]!r} is not a plain name inside the cache "
                            f"folder (an absolute path, '..' or an odd character)")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 4

    def uint64(self) -> int:
        if self.at + 8 > len(self.data):
            raise BundleRefused("truncated bundle")
        value = int.from_bytes(self.data[self.at:self.at + 8], "big")
        self.at += 8
        return value

    def raw(self) -> bytes:
        size = self.uint64()
        if self.at + size > len(self.data):
            raise BundleRefused("truncated bundle")
        self.at += size
        return self.data[self.at - size:self.at]

    def text(self) -> str:
        try:
            return base64.b64decode(self.raw(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise BundleRefused("a name in the bundle is not base64-encoded UTF-8") from None


def artifact_keys(data: bytes) -> list[tuple[str, str]]:
    """Every (cache layer, key) of a bundle, in order; BundleRefused if it is not one."""
    if len(data) < 12:
        raise BundleRefused("not a cache bundle (too short)")
    if zlib.crc32(data[4:]).to_bytes(4, "big") != data[:4]:
        raise BundleRefused("not a cache bundle (its checksum does not match)")
    reader = _Reader(data)
    if (version := reader.uint64()) != ENCODING_VERSION:
        raise BundleRefused(f"bundle encoding version {version}, expected {ENCODING_VERSION}")
    found = []
    while reader.at < len(data):
        layer = reader.text()
        for _ in range(reader.uint64()):
            found.append((layer, reader.text()))
            reader.raw()  # the content, loaded by torch only once the keys pass
    return found


def checked(data: bytes, trusted: Iterable[str]) -> str:
    """The sha256 of `data` once it is trusted and every key is plain; else BundleRefused."""
    digest = sha256(data)
    if digest not in set(trusted):
        raise BundleRefused(f"sha256 {digest} is not one you trust (give it with "
                            f"--bundle-sha256, or keep the bundle's description in the results "
                            f"folder)")
    for _, key in artifact_keys(data):
        check_key(key)
    return digest


def check_file(path: Path, trusted: Iterable[str]) -> str:
    """`checked` on a file's bytes, the refusal naming the file."""
    try:
        return checked(path.read_bytes(), trusted)
    except BundleRefused as error:
        raise BundleRefused(f"{path}: refused: {error}") from None
