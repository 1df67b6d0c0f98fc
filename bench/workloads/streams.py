"""Shape streams on the real models and the MLP: each workload takes its inputs from a
recorded stream of sizes (bench/shapes/streams.py) rather than from one shape.

Prompts for the language models vary in length like a chat or retrieval service's, at a
fixed batch (the case's batch size); images for the vision models and rows for the MLP
vary in batch, as a server's dynamic batching closes batches at any fill. The builders
are those of bench/workloads/models.py and dynamic.py, with inputs at any size
(`Sized`): token ids drawn per length, images and rows cut from the largest batch.
"""

from __future__ import annotations

import torch

from bench.shapes.streams import Cycle, LogNormal, Stream, Uniform
from bench.workloads import optional
from bench.workloads.base import Built, Sized, Workload, count_parameters, random, seeded_module
from bench.workloads.dynamic import CYCLE
from bench.workloads.mlp import mlp
from bench.workloads.models import (
    _TINY_RESNET,
    _TINY_VIT,
    ATTENTION,
    CONV_TOLERANCE,
    IMAGE,
    TINY_IMAGE,
    TRANSFORMER_TOLERANCE,
    OneOutput,
    _attention,
    _settings,
    _timm_model,
    _tokens,
    bert_config,
    gpt2_config,
    llama_config,
)
from bench.workloads.registry import STREAM_FAMILY

FAMILY = STREAM_FAMILY
# Prompt lengths: most a few hundred tokens or fewer, a few up to the clip (median 128,
# a quarter above 250, one in fifty at 1,024). Tiny models take 64 positions at most.
# A CPU takes the first 16 prompts, and batches of 1 to 16: two cores take tenths of a second
# per image for these models at batch 1 (their CPU records), so seconds to tens of seconds
# for a batch of 64.
PROMPTS = Stream("prompts", "sequence", LogNormal(median=128, sigma=1.0, low=16, high=1024),
                 tiny=LogNormal(median=12, sigma=0.6, low=4, high=48), calls_on={"cpu": 16})
# BERT-base takes 512 positions (its max_position_embeddings): its inputs draw from the same
# distribution, clipped there (the 1,024 clip gave a request its embeddings cannot index).
ENCODER_PROMPTS = Stream("prompts-512", "sequence",
                         LogNormal(median=128, sigma=1.0, low=16, high=512), tiny=PROMPTS.tiny,
                         calls_on=PROMPTS.calls_on)
BATCHES = Stream("batches", "batch", Uniform(1, 64), tiny=Uniform(1, 8), calls_on={"cpu": 16},
                 distribution_on={"cpu": Uniform(1, 16)})
MLP_CYCLE = Stream("batch-cycle", "batch", Cycle(CYCLE), tiny=Cycle(CYCLE), calls=60,
                   tiny_calls=12)
# The real models are measured at these batches; a CPU takes batch 1 alone.
TEXT_BATCHES, CPU_TEXT_BATCHES = (1, 8), (1,)


def _cached(make):
    """`make(n)` once per size: the same request objects every time a size comes back."""
    made: dict[int, tuple[torch.Tensor, ...]] = {}

    def request(size: int) -> tuple[torch.Tensor, ...]:
        if size not in made:
            made[size] = make(size)
        return made[size]

    return request


def _first(stream: Stream, device: torch.device, tiny: bool) -> int:
    return stream.sizes(device.type, tiny)[0]


def text_stream(make_config, auto_class: str, field: str, stream: Stream,
                **call: object):
    """A transformers model as in models.text_builder, on prompts of `stream`'s lengths
    at the case's batch; padded requests carry an attention mask."""
    def build(device: torch.device, batch_size: int | None, tiny: bool,
              dtype: torch.dtype) -> Built:
        transformers = optional.load("transformers")
        config = make_config(transformers, tiny)
        auto = getattr(transformers, auto_class)
        model = seeded_module(lambda: auto.from_config(config, attn_implementation=ATTENTION),
                              device, dtype).eval()
        wrapped = OneOutput(model, field, **call).eval()
        batch = batch_size or 1
        request = _cached(lambda n: (_tokens(batch, n, config.vocab_size, device),))
        settings = _settings(False, model=f"transformers {type(model).__name__}",
                             attn_implementation=_attention(model),
                             use_cache=getattr(model.config, "use_cache", "not used"),
                             padding="right, attention mask 1 for a real token")
        return Built(wrapped, request(_first(stream, device, tiny)), flops=None,
                     bytes_moved=None, parameters=count_parameters(model), settings=settings,
                     libraries={"transformers": transformers.__version__},
                     sized=Sized(dim=1, out_dim=1, request=request, masked=True))

    return build


def vision_stream(name: str, tiny_kwargs: dict):
    """A timm model as in models.timm_builder, on batches of the stream's sizes cut from
    one batch of the largest size."""
    def build(device: torch.device, batch_size: int | None, tiny: bool,
              dtype: torch.dtype) -> Built:
        make, libraries = _timm_model(name, tiny_kwargs, tiny)
        model = seeded_module(make, device, dtype).eval()
        side = TINY_IMAGE if tiny else IMAGE
        images = random((BATCHES.drawn_from(device.type, tiny).bounds[1], 3, side, side),
                        device, dtype)
        request = _cached(lambda n: (images[:n],))
        settings = _settings(False, model=f"timm {name}", image=f"{side}x{side}")
        return Built(model, request(_first(BATCHES, device, tiny)), flops=None,
                     bytes_moved=None, parameters=count_parameters(model), settings=settings,
                     libraries=libraries, sized=Sized(dim=0, out_dim=0, request=request))

    return build


def mlp_stream(device: torch.device, batch_size: int | None, tiny: bool,
               dtype: torch.dtype) -> Built:
    """dynamic-mlp's weights and rows, the rows cut from one batch of the largest size."""
    width, hidden = (16, 32) if tiny else (1024, 4096)
    w1 = random((width, hidden), device, dtype, generator_seed=2, scale=width**-0.5)
    w2 = random((hidden, width), device, dtype, generator_seed=3, scale=hidden**-0.5)
    rows = random((max(CYCLE), width), device, dtype, generator_seed=1)
    request = _cached(lambda n: (rows[:n], w1, w2))
    return Built(mlp, request(_first(MLP_CYCLE, device, tiny)), flops=None, bytes_moved=None,
                 parameters=w1.numel() + w2.numel(),
                 sized=Sized(dim=0, out_dim=0, request=request, varying=(0,)))


_TEXT = f"random token ids, attention {ATTENTION}, no KV cache"


def _text(name: str, description: str, make_config, auto_class: str, field: str,
          stream: Stream = PROMPTS, **call: object) -> Workload:
    """A text stream workload; its stream is named once, for the builder and the record."""
    build = text_stream(make_config, auto_class, field, stream, **call)
    return Workload(name, FAMILY, description, build, batch_sizes=TEXT_BATCHES,
                    batch_sizes_on={"cpu": CPU_TEXT_BATCHES}, autotune_batch_sizes=(1,),
                    requires=("transformers",), tolerance=TRANSFORMER_TOLERANCE, stream=stream)


def _vision(name: str, description: str, build, tolerance: float) -> Workload:
    return Workload(name, FAMILY, description, build, requires=("timm",), tolerance=tolerance,
                    stream=BATCHES)


GPT2_PROMPTS = _text(
    "gpt2-small-prompts", f"gpt2-small (transformers GPT-2 small, logits) on prompts of "
    f"varying length; {_TEXT}",
    gpt2_config, "AutoModelForCausalLM", "logits", use_cache=False)
BERT_PROMPTS = _text(
    "bert-base-prompts", f"bert-base (transformers BERT-base, last hidden state) on inputs of "
    f"varying length, up to its 512 positions; {_TEXT}",
    bert_config, "AutoModel", "last_hidden_state", stream=ENCODER_PROMPTS)
LLAMA_PROMPTS = _text(
    "llama-small-prompts", f"llama-small (the Llama-architecture decoder of GPT-2 small's "
    f"size, logits) on prompts of varying length; {_TEXT}",
    llama_config, "AutoModelForCausalLM", "logits", use_cache=False)
RESNET50_BATCHES = _vision(
    "resnet50-batches", "resnet50 (timm, random weights, 224x224 images) on batches of "
    "varying size", vision_stream("resnet50", _TINY_RESNET), CONV_TOLERANCE)
VIT_BASE16_BATCHES = _vision(
    "vit-base16-batches", "vit-base16 (timm vit_base_patch16_224, random weights) on batches "
    "of varying size", vision_stream("vit_base_patch16_224", _TINY_VIT), TRANSFORMER_TOLERANCE)
MLP_BATCHES = Workload(
    "mlp-batches", FAMILY, "dynamic-mlp's relu(x @ w1) @ w2, 1024 -> 4096 -> 1024, on its "
    "batch cycle as a stream", mlp_stream, stream=MLP_CYCLE)
