"""Writing output that may already hold links planted by someone else, and swapping a
freshly rendered tree in whole.

Nothing here writes through a symbolic link: a file is written as a fresh temporary file
beside its target and renamed over it, which replaces a link instead of following it, and
folders are created only where no link stands. A render goes into a fresh folder inside
docs/ and is swapped in by renames under a lock, so that a reader, a second render or a
crash finds the old tree or the new one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

STAGING_PREFIX = ".render-"  # docs/.render-<pid>-XXXX: dot paths are not published
RENAME_EXCHANGE = 2  # linux/fs.h


class UnsafeOutput(OSError):
    """A path to write that is no plain folder or file of ours; the message is one line."""


def check_folder(folder: Path) -> None:
    """`folder`, and every folder above it that exists, must be a folder; `folder` itself
    must not be a link (a dangling link, or one planted to send the output elsewhere)."""
    if folder.is_symlink():
        raise UnsafeOutput(errno.ELOOP, f"{folder} is a symbolic link; output is never "
                           f"written through links: remove it, or choose another folder")
    for above in (folder, *folder.parents):
        if above.exists() and not above.is_dir():
            raise UnsafeOutput(errno.ENOTDIR, f"{above} is not a folder")


def make_folders(root: Path, relative: Path) -> Path:
    """`root/relative` as a folder, created part by part; a part that is a link or a file is
    refused, so a link planted inside `root` cannot send a write elsewhere."""
    check_folder(root)
    root.mkdir(parents=True, exist_ok=True)
    here = root
    for part in relative.parts:
        here = here / part
        try:
            os.mkdir(here)
        except FileExistsError:
            mode = os.lstat(here).st_mode
            if not stat.S_ISDIR(mode):
                raise UnsafeOutput(errno.ENOTDIR, f"{here} is a "
                                   f"{'symbolic link' if stat.S_ISLNK(mode) else 'file'}, "
                                   f"not a folder; output is never written through links") from None
    return here


def read_plain(root: Path, relative: Path) -> tuple[os.stat_result, bytes] | None:
    """The stat and bytes of `root/relative` if every part of it below `root` is a plain
    folder or, the last, a plain file: never through a link; None otherwise."""
    here = root
    for part in relative.parts[:-1]:
        here = here / part
        try:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return None
        except OSError:
            return None
    try:
        fd = os.open(root / relative, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            return found, file.read()
    finally:
        os.close(fd)


def _same_file_content(path: Path, data: bytes) -> os.stat_result | None:
    """The stat of `path` if it is a plain file (not a link) holding exactly `data`."""
    found = read_plain(path.parent, Path(path.name))
    return found[0] if found is not None and found[1] == data else None


def write_bytes(target: Path, data: bytes, previous: Path | None = None) -> None:
    """`data` into `target`, by a fresh file renamed over it: a link at `target` is
    replaced, never followed. Where `previous` (default: `target`) is a plain file with the
    same content, the new file keeps its modification time, so `mkdocs serve` does not
    rebuild for nothing."""
    same = _same_file_content(previous or target, data)
    if same is not None and previous is None:
        return  # already there, as a plain file
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:100]}.")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(temporary, 0o644)
        if same is not None:
            os.utime(temporary, ns=(same.st_atime_ns, same.st_mtime_ns))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---- a render swapped in whole ------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` itself (flock works on a folder's descriptor), with
    SIGINT, SIGTERM and SIGHUP held back until the block ends."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    finally:
        os.close(fd)


def remove_abandoned_staging(docs: Path) -> list[Path]:
    """Staging folders of renders that no longer run (killed): their pid is in the name."""
    removed = []
    for folder in docs.glob(f"{STAGING_PREFIX}*"):
        owner = folder.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def staging(docs: Path) -> Iterator[Path]:
    """A fresh private folder inside `docs` to render into; removed when the block ends,
    whatever was in it (after `publish`, the tree it replaced)."""
    check_folder(docs)
    docs.mkdir(parents=True, exist_ok=True)
    remove_abandoned_staging(docs)
    folder = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=docs))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100
    if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS):
        return False
    raise OSError(code, os.strerror(code), str(b))


def publish(staged: Path, docs: Path, names: Iterable[str]) -> None:
    """Move each of `names` from `staged` into `docs`; what stood there (a folder, a file
    or a link planted in its place) moves into `staged`, whose removal ends it without
    following any link. Under a lock on `docs`, so two renders swap one after the other."""
    with _locked(docs):
        for name in names:
            new, old = staged / name, docs / name
            if os.path.lexists(new) and os.path.lexists(old):
                if not _exchange(new, old):
                    os.rename(old, staged / f".old-{name}")
                    os.rename(new, old)
            elif os.path.lexists(new):
                os.rename(new, old)
            elif os.path.lexists(old):
                os.rename(old, new)  # a generated path this render no longer has
