"""The words the analysis layer shares: the baseline, the case and point keys, thresholds, and the
workload registry's order."""

from __future__ import annotations

import dataclasses
import math
import re

# The GPU busy-fraction bands, defined once where `python -m bench host` needs them too.
from bench.host.model import DEVICE_BOUND, LAUNCH_BOUND  # noqa: F401 (re-exported)
from bench.modes import MODES
from bench.records import Environment as RecordEnvironment
from bench.workloads import registry  # imports no torch (bench/workloads/__init__.py)

BASELINE = "eager"  # the mode every "speedup" is measured against
EXTERNAL_FAMILY = "external"  # WorkloadInfo.family of a workload given as package.module:factory
MODEL_FAMILY = "model"  # WorkloadInfo.family of the real models (timm, transformers)
# Cases carry paired ratios against these two always, and against any other mode that a
# paired process timed beside them (claims compare max-autotune with reduce-overhead, say).
PAIRED_BASELINES = ("eager", "default")
SHOWN_SHAPES = "seed"  # "tiny" records are test-sized runs, counted and left out
BACKENDS = ("cuda", "cpu", "mps")  # every backend gets a tab, measured or not
PROCESS_TAGS = re.compile(r"^(main|rerun-\d+)$")  # records under these tags are processes of one case
ALONE_TAG = "alone"  # the concurrency check's subset, measured with one worker (`--gpus 1`)
BUSY_TAG = "busy"  # the same subset on the same GPU while another runner keeps the rest busy
CONCURRENT_SIDES = ("busy", "main")  # what `concurrency` sets against the alone side
# CaseKey.dtype (the precision the case ran in) becomes the column DTYPE: the workload
# section already has a `dtype`. Records from before it ran in DEFAULT_DTYPE.
DTYPE, DEFAULT_DTYPE = "case_dtype", "float32"
CASE = ["env_id", "workload", "mode", "batch_size", "shapes", DTYPE]
POINT = ["env_id", "workload", "batch_size", "shapes", DTYPE]  # a case without its mode
ENV_FIELDS = tuple(f.name for f in dataclasses.fields(RecordEnvironment))
RENAMED = {("key", "dtype"): DTYPE, ("mode_traits", "description"): "mode_description",
           ("warmup", "latencies_s"): "warmup_s",
           ("process", "timing"): "process_timing", ("host", "cpu_model"): "host_cpu_model"}
MEANINGFUL_GAIN = 0.05  # gains below this are not called wins
MOVED = 0.10  # a case whose process medians differ by more than this moved
UNSTABLE_IQR_RATIO = 0.10  # in-run IQR / median above this marks a process unstable
NEVER = math.inf  # break-even when the mode is not faster than eager
# A speedup whose lowest and highest process pairing differ by more than this factor rests
# on a process that a quiet rerun would contradict (a loaded machine): it answers nothing.
OUTLIER_SPREAD = 10.0


def outlier(lo: float | None, hi: float | None) -> bool:
    """Whether a speedup's range says one of its processes was far off (OUTLIER_SPREAD)."""
    return (lo is not None and hi is not None and not (lo != lo or hi != hi) and lo > 0
            and hi / lo > OUTLIER_SPREAD)


# The one sort key for workloads, and the real models the model page lists, measured or not.
WORKLOAD_ORDER: tuple[str, ...] = registry.ORDER
MODEL_WORKLOADS: tuple[str, ...] = registry.MODELS
MODE_ORDER = tuple(MODES)  # bench/modes.py's order; only for sorting


class ResultsError(ValueError):
    """A results folder that cannot be read; the message is one line naming file:line."""
