"""The workload registry as plain data: every workload's name, in the order pages show
them, and the module attribute that defines it. Standard library only, so the report can
order workloads by `ORDER` without importing torch; `bench.workloads` builds `WORKLOADS`
from `ENTRIES` and checks that each name matches its definition."""

from __future__ import annotations

ENTRIES: tuple[tuple[str, str], ...] = (
    ("trivial-call", "bench.workloads.launch:TRIVIAL_CALL"),
    ("launch-chain-10", "bench.workloads.launch:LAUNCH_CHAIN_10"),
    ("launch-chain-100", "bench.workloads.launch:LAUNCH_CHAIN_100"),
    ("launch-chain-1000", "bench.workloads.launch:LAUNCH_CHAIN_1000"),
    ("matmul-128", "bench.workloads.matmul:MATMUL_128"),
    ("matmul-512", "bench.workloads.matmul:MATMUL_512"),
    ("matmul-sweep", "bench.workloads.matmul_sweep:MATMUL_SWEEP"),
    ("matmul-softmax", "bench.workloads.matmul_softmax:MATMUL_SOFTMAX"),
    ("elementwise-chain", "bench.workloads.elementwise:ELEMENTWISE_CHAIN"),
    ("entropy", "bench.workloads.entropy:ENTROPY"),
    ("mlp", "bench.workloads.mlp:MLP"),
    ("dynamic-mlp", "bench.workloads.dynamic:DYNAMIC_MLP"),
    ("train-mlp", "bench.workloads.train:TRAIN_MLP"),
    ("conv2d-block", "bench.workloads.conv:CONV2D_BLOCK"),
    ("vit16x6x384", "bench.workloads.vit:VIT_SMALL"),
    ("vit32x12x768", "bench.workloads.vit:VIT_MEDIUM"),
    ("vit32x18x1024", "bench.workloads.vit:VIT_LARGE"),
    ("warmup-vit16x6x384", "bench.workloads.warmup:WARMUP_VIT_SMALL"),
    ("train-vit16x6x384", "bench.workloads.train:TRAIN_VIT_SMALL"),
    # Real models from timm and transformers, an optional install (bench/workloads/optional.py).
    ("resnet50", "bench.workloads.models:RESNET50"),
    ("vit-base16", "bench.workloads.models:VIT_BASE16"),
    ("bert-base", "bench.workloads.models:BERT_BASE"),
    ("gpt2-small", "bench.workloads.models:GPT2_SMALL"),
    ("llama-small", "bench.workloads.models:LLAMA_SMALL"),
    ("train-resnet50", "bench.workloads.models:TRAIN_RESNET50"),
    ("train-bert-base", "bench.workloads.models:TRAIN_BERT_BASE"),
    # Shape streams (bench/shapes): the MLP's cycle, and the real models as a service sees them.
    ("mlp-batches", "bench.workloads.streams:MLP_BATCHES"),
    ("gpt2-small-prompts", "bench.workloads.streams:GPT2_PROMPTS"),
    ("bert-base-prompts", "bench.workloads.streams:BERT_PROMPTS"),
    ("llama-small-prompts", "bench.workloads.streams:LLAMA_PROMPTS"),
    ("resnet50-batches", "bench.workloads.streams:RESNET50_BATCHES"),
    ("vit-base16-batches", "bench.workloads.streams:VIT_BASE16_BATCHES"),
)

# The precisions a case may run in (CaseKey.dtype), float32 first: every workload runs in
# it; bfloat16 only where a workload states a tolerance for it (Workload.bfloat16_tolerance).
DTYPES: tuple[str, ...] = ("float32", "bfloat16")

ORDER: tuple[str, ...] = tuple(name for name, _ in ENTRIES)
# The real models (family "model"), which need the optional models group: the report lists
# them on its model page, measured or not.
MODELS: tuple[str, ...] = tuple(name for name, where in ENTRIES
                                if where.startswith("bench.workloads.models:"))
# The shape streams (family STREAM_FAMILY), which their own page shows (report/pages/shapes.py).
STREAM_FAMILY = "shapes"
STREAMS: tuple[str, ...] = tuple(name for name, where in ENTRIES
                                 if where.startswith("bench.workloads.streams:"))


class UnknownWorkload(ValueError):
    """A workload name or `package.module:factory` spec that names no usable workload.
    The message is one line, fit to print after `error:`."""


def unknown_name(name: str) -> UnknownWorkload:
    return UnknownWorkload(f"unknown workload {name!r} (valid: {', '.join(ORDER)}; or a "
                           f"package.module:factory of your own)")
