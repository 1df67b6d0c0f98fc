"""Records of A/B groups with effects chosen here (tests/test_report_ab.py and others).

`group_records` writes what `python -m bench.ab` leaves: per label, one isolated process
per case and `repeats` paired processes, tagged `ab-<group>-<label>`, on one host.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bench.ab import tag
from bench.modes import MODES
from bench.records import (
    CaseKey,
    Environment,
    Host,
    PairedRounds,
    Process,
    Record,
    Timing,
    WorkloadInfo,
)
from bench.stats import summarize

WORKLOADS = {"matmul-128": 2.0e-5, "mlp": 1.0e-3}
MODES_HERE = ("eager", "default")
START = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def environment(torch: str, machine: str = "ab-cpu") -> Environment:
    return Environment(
        machine=machine, backend="cpu", os="Linux-6.8", python="3.11.7", torch=torch,
        torch_requested=torch.split("+")[0], triton=None, cuda_runtime=None, cudnn=None,
        driver=None, device_name="Fixture CPU", gpu_sm_count=None, gpu_memory_bytes=None,
        cpu_model="Fixture CPU", cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
        cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None, git_commit=None, git_dirty=None)


def host(hostname: str = "quiet", boot: str = "boot-1", probe_s: float = 2.5e-6) -> Host:
    return Host(hostname=hostname, boot_id=boot, cpu_model="Fixture CPU", cpu_mhz=None,
                cpus_available=2, load_before=(0.1, 0.1, 0.1), load_after=(0.1, 0.1, 0.1),
                gpu_sm_clock_mhz=None, gpu_memory_clock_mhz=None, op_s=(probe_s,) * 3)


def _timing(median: float) -> Timing:
    samples = (median * 0.99, median, median, median * 1.01, median)
    return Timing(samples=samples, calls_per_sample=1, warmup_calls=1, wall_per_call_s=median,
                  timer="perf-counter", **summarize(samples))


def record(env: Environment, workload: str, mode: str, median: float, *, the_tag: str,
           repeat: int, paired: bool, started: datetime, the_host: Host,
           group: str = "g") -> Record:
    rounds = (median,) * 5
    return Record(
        key=CaseKey("cpu", workload, mode, None, "seed", the_tag), status="ok", reason=None,
        profile="quick", env=env, env_id=env.env_id(), started_at=started.isoformat(),
        duration_s=2.0,
        process=Process(repeat=repeat, repeats=repeat + 1 if paired else 1, run_id="r", gpu=None,
                        workers=1, parent_import_s=None, cache="warm" if paired else "cold",
                        timing="paired" if paired else "isolated"),
        mode_traits=MODES[mode].traits,
        workload_info=WorkloadInfo("fixture", workload, ((8, 8),), "float32", None, None, 0),
        timing=_timing(median), host=the_host,
        paired=PairedRounds(group=group, modes=MODES_HERE, build_position=MODES_HERE.index(mode),
                            rounds_planned=5, calls_per_block=10, round_s=rounds,
                            round_position=(0,) * 5) if paired else None)


def group_records(group: str, labels: dict[str, str], effects: dict | None = None,
                  noise: dict | None = None, repeats: int = 3, the_host: Host | None = None,
                  machine: str = "ab-cpu", start: datetime = START) -> list[Record]:
    """`labels` maps each label to its torch release, in run order. A case's median on a
    label is its base time x effects[(release, workload, mode)] (1.0 if absent) x, in repeat
    r, noise[(label, r)] (1.0 if absent); turns alternate ABBA as bench.ab runs them."""
    effects, noise = effects or {}, noise or {}
    the_host = the_host or host()
    order = list(labels)
    clock = [start]

    def tick() -> datetime:
        clock[0] += timedelta(seconds=5)
        return clock[0]

    out = []
    for workload, base in WORKLOADS.items():
        for repeat in range(repeats):
            for label in order if repeat % 2 == 0 else order[::-1]:
                env = environment(labels[label], machine)
                the_tag = tag(group, label)
                factor = noise.get((label, repeat), 1.0)
                medians = {m: base * (0.8 if m == "default" else 1.0)
                           * effects.get((labels[label], workload, m), 1.0) * factor for m in MODES_HERE}
                if repeat == 0:
                    out += [record(env, workload, m, medians[m], the_tag=the_tag, repeat=0,
                                   paired=False, started=tick(), the_host=the_host)
                            for m in MODES_HERE]
                started = tick()
                out += [record(env, workload, m, medians[m], the_tag=the_tag, repeat=repeat,
                               paired=True, started=started, the_host=the_host,
                               group=f"{group}-{label}-{workload}-{repeat}")
                        for m in MODES_HERE]
    return out
