"""The small ViT at batch 1, recording the latency of each call after the compiling one.

The curve shows how many calls each mode needs before it runs at its steady speed:
cudagraph recording, lazy initialisation and allocator growth all show up in it.
"""

from bench.workloads.base import Workload
from bench.workloads.vit import HEAD_DIM, vit_builder

CURVE_CALLS = 2000
# A 2-core CPU takes about 35 ms per call: 300 calls keep the curve near 10 s.
CPU_CURVE_CALLS = 300

WARMUP_VIT_SMALL = Workload(
    "warmup-vit16x6x384", "warmup",
    f"vit16x6x384 inference at batch 1 (16x16 patches, 6 blocks, width 384, {384 // HEAD_DIM} "
    f"heads): latency of each of the first {CURVE_CALLS} calls after the compiling one "
    f"({CPU_CURVE_CALLS} on CPU)",
    vit_builder(16, 6, 384), batch_sizes=(1,), tolerance=2e-3,
    warmup_curve_calls=CURVE_CALLS, warmup_curve_calls_on={"cpu": CPU_CURVE_CALLS})
