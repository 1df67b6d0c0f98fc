"""A node's side of a fleet run: one Ray task starts one child, as the local runner does.

bench/fleet/launcher.py submits `run_child` as a Ray task with `max_calls=1`, so every case gets a
fresh worker. The task is a small local runner for one child: it ends what dead workers
left on this node (the keeper's cleanup, bench/pool.py), makes a private scratch folder,
writes the files the driver wrote for the child there, starts the child through
`pool.Launcher("spawn")` (the keeper, its process group, PR_SET_PDEATHSIG to this worker),
enforces the timeout, and hands back what the child wrote. It imports the standard library
and bench.pool only, never ray or torch; the child imports what the case needs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
from pathlib import Path

from bench import pool

LOG_TAIL_BYTES = 64 * 1024  # of the child's output, enough for the record's log_tail
# Where compile caches go on a node that cannot create the driver's --cache-dir.
FALLBACK_CACHE_ROOT = Path.home() / ".cache" / "torch-compile-atlas" / "bench-cache"


def _cache_root(driver_root: str) -> Path:
    """The driver's --cache-dir where this node can write it (one host, or a shared
    layout), else a folder of this user's own."""
    with contextlib.suppress(OSError):
        Path(driver_root).mkdir(parents=True, exist_ok=True)
        if os.access(driver_root, os.W_OK):
            return Path(driver_root)
    return FALLBACK_CACHE_ROOT


def _moved(value: str, old: str, new: Path | str) -> str:
    """`value` with the folder `old` it lies in swapped for `new`; else as it was."""
    if value == old or value.startswith(old.rstrip("/") + "/"):
        return str(Path(new) / Path(value).relative_to(old))
    return value


def _gpu() -> int | None:
    """The GPU Ray gave this task (it sets CUDA_VISIBLE_DEVICES for a task with num_gpus)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else None


def run_child(target: list[str], inputs: dict[str, str], driver_scratch: str, driver_cache: str,
              env: dict[str, str], threads: int | None, timeout_s: float,
              caches: pool.Caches | None) -> dict:
    """Run `target` in a child on this node. Paths in `target` under `driver_scratch` are
    the driver's files: those named in `inputs` (by name, with their text) are written here
    first, and every other one the child writes is handed back in `outputs`."""
    pool.end_stale_case_groups()
    pool.remove_stale_scratch()
    scratch = pool.new_scratch()
    try:
        for name, text in inputs.items():
            (scratch / name).write_text(text)
        node_cache = _cache_root(driver_cache)
        env = {name: _moved(value, driver_cache, node_cache) for name, value in env.items()}
        if caches is not None:
            caches = pool.Caches(_moved(caches.folder, driver_cache, node_cache),
                                 caches.empty_first,
                                 tuple(_moved(m, driver_cache, node_cache) for m in caches.merge))
        here = [_moved(arg, driver_scratch, scratch) for arg in target]
        launcher = pool.Launcher("spawn")
        child = launcher.start(here, pool.ChildSetup(os.getpid(), env, threads),
                               scratch / "log.txt", caches=caches)
        deadline = time.monotonic() + timeout_s
        while child.poll() is None and time.monotonic() < deadline:
            pool.wait_any([child], deadline - time.monotonic())
        timed_out = child.poll() is None
        if timed_out:
            child.kill()
        outputs = {}
        for arg, mine in zip(target, here, strict=True):
            name = Path(mine).name
            if mine != arg and name not in inputs and Path(mine).is_file():
                outputs[name] = Path(mine).read_text(errors="replace")
        log_text = ""
        with contextlib.suppress(OSError), open(scratch / "log.txt", "rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - LOG_TAIL_BYTES))
            log_text = log.read().decode(errors="replace")
        return {"returncode": child.returncode, "timed_out": timed_out, "outputs": outputs,
                "log": log_text, "cache": child.cache, "gpu": _gpu(),
                "hostname": socket.gethostname()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
