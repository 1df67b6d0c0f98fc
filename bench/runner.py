"""Plan cases, run each in its own process, and append one record per case."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench.modes import MODES
from bench.records import CaseKey, Environment, Record, append_record, read_records, record_from_dict
from bench.workloads import WORKLOADS

REPO = Path(__file__).resolve().parent.parent
TIMING_BUDGET_S = {"quick": 0.3, "full": 0.6}
STDERR_TAIL_LINES = 15


@dataclass(frozen=True)
class RunConfig:
    profile: str
    shapes: str
    tag: str
    force: bool
    timeout_s: float
    budget_s: float
    results_dir: Path
    max_minutes: float | None


def plan(backend: str, workloads: Iterable[str], modes: Iterable[str], profile: str,
         batch_sizes: set[int] | None, shapes: str, tag: str) -> list[CaseKey]:
    cases = []
    for name in dict.fromkeys(workloads):  # a name given twice is still one case
        for batch in WORKLOADS[name].sizes(profile, backend):
            if batch_sizes and batch not in batch_sizes:
                continue
            cases.extend(CaseKey(backend, name, mode, batch, shapes, tag)
                         for mode in dict.fromkeys(modes))
    return cases


def results_path(results_dir: Path, env: Environment) -> Path:
    slug = re.sub(r"[^a-z0-9.]+", "-", f"{env.backend}-{env.machine}-torch{env.torch}".lower())
    return results_dir / f"{slug.strip('-')}-{env.env_id()}.jsonl"


def measured_keys(path: Path, env_id: str) -> set[CaseKey]:
    if not path.exists():
        return set()
    return {r.key for r in read_records(path) if r.env_id == env_id}


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _tail(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:]
    except OSError:
        return []


def _kill_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited meanwhile
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


class OutOfTime(Exception):
    """The run's --max-minutes ran out while a case was still running."""


def run_in_subprocess(key: CaseKey, config: RunConfig, deadline: float = float("inf")) -> dict:
    """The child's result dict, or a status that says how the child failed.

    A case cut off by the run's deadline rather than its own timeout raises OutOfTime: it did
    not fail, so it gets no record and the next run measures it.
    """
    with tempfile.TemporaryDirectory(prefix="atlas-case-") as scratch:
        scratch_dir = Path(scratch)
        spec_path, result_path, log_path = (scratch_dir / n for n in ("spec.json", "result.json",
                                                                       "log.txt"))
        spec_path.write_text(json.dumps(key.__dict__ | {"budget_s": config.budget_s}))
        env = os.environ | {
            # A fresh, empty cache per case makes the first call a cold compile.
            "TORCHINDUCTOR_CACHE_DIR": str(scratch_dir / "inductor"),
            "TRITON_CACHE_DIR": str(scratch_dir / "triton"),
            "PYTHONUNBUFFERED": "1",
        }
        with open(log_path, "wb") as log:
            child = subprocess.Popen(
                [sys.executable, "-m", "bench.case", str(spec_path), str(result_path)],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,  # so a timeout can kill its compile workers too
            )
            cut_by_deadline = deadline - time.monotonic() < config.timeout_s
            try:
                code = child.wait(timeout=max(0.0, min(config.timeout_s,
                                                       deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                _kill_group(child)
                if cut_by_deadline:
                    raise OutOfTime from None
                return {"status": "timeout", "reason": f"no result within {config.timeout_s:g} s",
                        "extra": {"log_tail": _tail(log_path)}}
            except BaseException:
                # Its own session shields the case from the terminal's Ctrl-C; stop it here
                # so it cannot go on disturbing whatever is timed next.
                _kill_group(child)
                raise
        if result_path.exists():
            result = json.loads(result_path.read_text())
            if result["status"] != "ok":
                result["extra"] = {"log_tail": _tail(log_path)}
            return result
        how = f"killed by {_signal_name(code)}" if code < 0 else f"exited with code {code}"
        last = next((line for line in reversed(_tail(log_path)) if line.strip()), "")
        return {"status": "error", "reason": f"case process {how} before writing a result"
                + (f": {last[:300]}" if last else ""), "extra": {"log_tail": _tail(log_path)}}


def to_record(key: CaseKey, result: dict, env: Environment, profile: str, started_at: str,
              duration_s: float) -> Record:
    extra = dict(result.get("extra", {}))
    if result.get("stage_s"):
        extra["stage_s"] = result["stage_s"]
    if result.get("probes"):
        extra["probes"] = result["probes"]
    return record_from_dict({
        "schema_version": 1, "key": key.__dict__, "status": result["status"],
        "reason": result.get("reason"), "profile": profile, "env": env.__dict__,
        "env_id": env.env_id(), "started_at": started_at, "duration_s": duration_s,
        "extra": extra,
        **{name: result.get(name) for name in ("workload_info", "timing", "compile", "memory",
                                               "activity", "dynamo", "correctness")},
    })


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _print_stop(elapsed: float, left: int, out) -> None:
    print(f"stopping after {_clock(elapsed)}: {left} case(s) left; run again to resume",
          file=out, flush=True)


def describe(record: Record) -> str:
    if record.status != "ok":
        return f"{record.status}: {record.reason}"
    text = f"ok  median {record.timing.median_s * 1e6:,.1f} us"
    if record.compile and record.compile.cold_first_call_s is not None:
        text += f"  first call {record.compile.cold_first_call_s:.2f} s"
    if record.correctness and not record.correctness.passed:
        text += f"  WRONG rel.err {record.correctness.rel_error:.1e}"
    return text


def run(cases: list[CaseKey], env: Environment, config: RunConfig, out=sys.stdout) -> Path:
    path = results_path(config.results_dir, env)
    done = set() if config.force else measured_keys(path, env.env_id())
    todo = [case for case in cases if case not in done]
    print(f"{env.backend}: {len(todo)} case(s) to measure, {len(cases) - len(todo)} already in "
          f"{path} (--force re-measures)", file=out, flush=True)
    began = time.monotonic()
    deadline = began + config.max_minutes * 60 if config.max_minutes else float("inf")
    longest_s = 0.0
    for number, key in enumerate(todo, start=1):
        elapsed = time.monotonic() - began
        left_s = deadline - time.monotonic()
        if left_s < longest_s:
            # A case started now would most likely be cut off, and its device time wasted.
            print(f"not starting another case: {max(left_s, 0):.0f} s left, and the longest case "
                  f"so far took {longest_s:.0f} s", file=out, flush=True)
            _print_stop(elapsed, len(todo) - number + 1, out)
            break
        batch = "-" if key.batch_size is None else key.batch_size
        print(f"[{number}/{len(todo)} {_clock(elapsed)}] {key.backend} {key.workload} {key.mode} "
              f"bs={batch} ...", file=out, flush=True)
        started_at, start = _now(), time.monotonic()
        reason = MODES[key.mode].unsupported_reason(key.backend)
        try:
            result = ({"status": "unsupported", "reason": reason} if reason
                      else run_in_subprocess(key, config, deadline))
        except OutOfTime:
            print("    stopped unfinished at --max-minutes; not recorded", file=out, flush=True)
            _print_stop(time.monotonic() - began, len(todo) - number + 1, out)
            break
        duration_s = time.monotonic() - start
        longest_s = max(longest_s, duration_s)
        record = to_record(key, result, env, config.profile, started_at, duration_s)
        append_record(path, record)
        print(f"    {describe(record)}", file=out, flush=True)
    return path
