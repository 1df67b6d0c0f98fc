"""Real models, built offline from their configurations with random weights.

timm builds the vision models (`create_model(name, pretrained=False)`) and transformers
the text models (`from_config` with the configuration written out here), so nothing is
downloaded. Both are optional packages (bench/workloads/optional.py): this module imports
them only inside a builder, so the registry lists these workloads without them.

What changes the results is pinned and recorded in each record's `workload_info.settings`:
eval mode and no autograd for inference (the case runs inference under torch.no_grad()),
no KV cache, and the attention kernel, read back from the built model rather than assumed.
`workload_info.libraries` holds the versions of timm or transformers. Dropout is 0 in the
training steps, so that the float64 reference can take exactly the same steps.

Text inputs are random token ids from a fixed seed, never all zeros. Tiny shapes
(`--shapes tiny`) keep each architecture with a few layers of width 32, for tests.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from bench.workloads import optional
from bench.workloads.base import (
    BFLOAT16_DEEP_TOLERANCE,
    Built,
    Workload,
    count_parameters,
    module_bytes,
    random,
    seeded_module,
    tensor_bytes,
)
from bench.workloads.train import (
    LABEL_SMOOTHING,
    MOMENTUM,
    TRAIN_FLOPS_PER_FORWARD,
    TRAIN_PARAMETER_PASSES,
    mixed_precision,
    sgd_step,
)

FAMILY = "model"
BATCHES = (1, 8, 32)
# Two CPU cores take seconds per call beyond batch 1 for these models.
CPU_BATCHES = (1,)
TRAIN_BATCH, CPU_TRAIN_BATCH = 32, 1
IMAGE, TINY_IMAGE = 224, 64  # tiny: large enough that ResNet's last stage is still 2x2
SEQUENCE, TINY_SEQUENCE = 128, 16
TINY_VOCAB = 128
ATTENTION = "sdpa"  # torch's scaled_dot_product_attention, what transformers picks by default
TOKEN_SEED, LABEL_SEED = 2, 5
# Relative L2 error against float64. cuDNN runs float32 convolutions in TF32 by default
# (the record's env.cudnn_allow_tf32), which costs a conv net more digits than a transformer.
CONV_TOLERANCE, TRANSFORMER_TOLERANCE = 5e-3, 2e-3


class OneOutput(nn.Module):
    """A transformers model called on token ids, returning one field of its output."""

    def __init__(self, model: nn.Module, field: str, **call: object) -> None:
        super().__init__()
        self.model, self.field, self.call = model, field, call

    def forward(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """`mask`: the attention mask of padded ids (bench/shapes), 1 where a token is real."""
        return getattr(self.model(input_ids=ids, attention_mask=mask, **self.call), self.field)


def _one_sample(model: nn.Module, x: torch.Tensor, batch: int) -> tuple[int | None, int]:
    """Forward FLOPs at `batch` and the bytes of the output there, from one call on one
    sample: these models' work and output grow linearly with the batch. FLOPs are counted
    by torch's FlopCounterMode (matmuls, convolutions, attention); None if it cannot count
    this model on this torch."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad():
        try:
            with FlopCounterMode(display=False) as counter:
                out = model(x[:1])
            flops = int(counter.get_total_flops()) * batch or None
        except Exception:  # noqa: BLE001 - FLOPs are secondary; the case goes on without
            out, flops = model(x[:1]), None
    return flops, batch * out.numel() * out.element_size()


def _settings(training: bool, **more: object) -> dict[str, str]:
    settings = {"mode": "train" if training else "eval",
                "grad": "enabled (a training step)" if training else "torch.no_grad()"}
    return settings | {name: str(value) for name, value in more.items()}


def _tokens(batch: int, sequence: int, vocab: int, device: torch.device) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(TOKEN_SEED)
    return torch.randint(1, vocab, (batch, sequence), generator=generator).to(device)


def _labels(batch: int, classes: int, device: torch.device) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(LABEL_SEED)
    return torch.randint(0, classes, (batch,), generator=generator).to(device)


def _smoothed_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, labels, label_smoothing=LABEL_SMOOTHING)


def _built(call: nn.Module, model: nn.Module, inputs: torch.Tensor, flops: int | None,
           out_bytes: int, settings: dict, libraries: dict,
           labels: torch.Tensor | None = None, autocast: torch.dtype | None = None) -> Built:
    """Inference of `call` on `inputs`, or with `labels` one training step of it (its
    weights are `model`'s): FLOPs, bytes and parameters as the other workloads count them."""
    if labels is None:
        return Built(call, (inputs,), flops=flops,
                     bytes_moved=tensor_bytes(inputs) + module_bytes(model) + out_bytes,
                     parameters=count_parameters(model), settings=settings, libraries=libraries)
    step, steps = sgd_step(call, _smoothed_cross_entropy, labels, autocast)
    return Built(step, (inputs,), flops=flops and TRAIN_FLOPS_PER_FORWARD * flops,
                 bytes_moved=tensor_bytes(inputs, labels) + TRAIN_PARAMETER_PASSES * module_bytes(model),
                 parameters=count_parameters(model), steps=steps, settings=settings,
                 libraries=libraries)


# ---- timm -----------------------------------------------------------------------------------

def _timm_model(name: str, tiny: dict, is_tiny: bool) -> tuple[Callable[[], nn.Module], dict]:
    timm = optional.load("timm")
    kwargs = _accepted(timm, name, tiny) if is_tiny else {}
    return (lambda: timm.create_model(name, pretrained=False, **kwargs)), {"timm": timm.__version__}


def _accepted(timm, name: str, kwargs: dict) -> dict:
    """The tiny-shape arguments this timm's model class takes: timm's ResNet takes
    `channels` and so narrower stages from timm 1.0 on; before, tiny keeps the widths."""
    import inspect

    model_class = {"resnet50": timm.models.resnet.ResNet}.get(name)
    if model_class is None:
        return kwargs
    taken = inspect.signature(model_class.__init__).parameters
    return {key: value for key, value in kwargs.items() if key in taken}


def timm_builder(name: str, tiny: dict, training: bool = False):
    def build(device: torch.device, batch_size: int | None, is_tiny: bool,
              dtype: torch.dtype) -> Built:
        make, libraries = _timm_model(name, tiny, is_tiny)
        dtype, autocast = mixed_precision(dtype) if training else (dtype, None)
        batch, side = batch_size or 1, TINY_IMAGE if is_tiny else IMAGE
        model = seeded_module(make, device, dtype).eval()
        images = random((batch, 3, side, side), device, dtype)
        flops, out_bytes = _one_sample(model, images, batch)
        settings = _settings(training, model=f"timm {name}", image=f"{side}x{side}")
        labels = _labels(batch, model.num_classes, device) if training else None
        return _built(model, model, images, flops, out_bytes, settings, libraries, labels, autocast)

    return build


# ---- transformers ---------------------------------------------------------------------------

def _attention(model: nn.Module) -> str:
    """The attention kernel the built model uses, as transformers records it."""
    config = model.config
    return str(getattr(config, "_attn_implementation", None)
               or getattr(config, "attn_implementation", None) or "not reported")


def text_builder(make_config: Callable[[object, bool], object], auto_class: str, field: str,
                 training: bool = False, classes: int = 2, **call: object):
    """A transformers model from `make_config(transformers, tiny)`, built by
    `transformers.<auto_class>.from_config`, called with `call` as keyword arguments and
    returning `field` of its output. Training: a sequence-classification step on fixed
    labels (`classes` of them)."""
    def build(device: torch.device, batch_size: int | None, is_tiny: bool,
              dtype: torch.dtype) -> Built:
        transformers = optional.load("transformers")
        dtype, autocast = mixed_precision(dtype) if training else (dtype, None)
        config = make_config(transformers, is_tiny)
        auto = getattr(transformers, auto_class)
        batch, sequence = batch_size or 1, TINY_SEQUENCE if is_tiny else SEQUENCE
        model = seeded_module(lambda: auto.from_config(config, attn_implementation=ATTENTION),
                              device, dtype).eval()
        wrapped = OneOutput(model, field, **call).eval()
        ids = _tokens(batch, sequence, config.vocab_size, device)
        flops, out_bytes = _one_sample(wrapped, ids, batch)
        settings = _settings(training, model=f"transformers {type(model).__name__}",
                             sequence=sequence, attn_implementation=_attention(model),
                             use_cache=getattr(model.config, "use_cache", "not used"))
        libraries = {"transformers": transformers.__version__}
        labels = None
        if training:
            settings["dropout"] = "0 (so that the float64 reference takes the same steps)"
            labels = _labels(batch, classes, device)
        return _built(wrapped, model, ids, flops, out_bytes, settings, libraries, labels, autocast)

    return build


def bert_config(transformers, tiny: bool, dropout: float | None = None):
    """BERT-base: BertConfig's defaults (12 layers, width 768, 12 heads, 30,522 tokens)."""
    sizes = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                 vocab_size=TINY_VOCAB, max_position_embeddings=64) if tiny else {}
    drop = {} if dropout is None else dict(hidden_dropout_prob=dropout,
                                          attention_probs_dropout_prob=dropout)
    return transformers.BertConfig(use_cache=False, **sizes, **drop)


def bert_training_config(transformers, tiny: bool):
    return bert_config(transformers, tiny, dropout=0.0)


def gpt2_config(transformers, tiny: bool):
    """GPT-2 small: GPT2Config's defaults (12 layers, width 768, 12 heads, 50,257 tokens)."""
    sizes = dict(n_embd=32, n_layer=2, n_head=2, vocab_size=TINY_VOCAB, n_positions=64,
                 bos_token_id=TINY_VOCAB - 1, eos_token_id=TINY_VOCAB - 1) if tiny else {}
    return transformers.GPT2Config(use_cache=False, **sizes)


# A Llama-architecture decoder (RMSNorm, rotary positions, SwiGLU, grouped-query attention)
# of GPT-2 small's depth and width: LlamaConfig's defaults are the 7B model.
LLAMA = dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
             num_attention_heads=12, num_key_value_heads=4, vocab_size=32000,
             max_position_embeddings=2048, tie_word_embeddings=False)
TINY_LLAMA = dict(LLAMA, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, vocab_size=TINY_VOCAB,
                  max_position_embeddings=64)


def llama_config(transformers, tiny: bool):
    return transformers.LlamaConfig(use_cache=False, **(TINY_LLAMA if tiny else LLAMA))


# ---- the workloads ----------------------------------------------------------------------------

# Not in the quick profile (no quick_batch_sizes): on a 2-core CPU that profile already runs
# longer than the five minutes within which these models could have joined it.
def _inference(name: str, description: str, build, requires: str, tolerance: float) -> Workload:
    return Workload(name, FAMILY, description, build, batch_sizes=BATCHES,
                    batch_sizes_on={"cpu": CPU_BATCHES}, autotune_batch_sizes=(1,),
                    requires=(requires,), tolerance=tolerance,
                    bfloat16_tolerance=BFLOAT16_DEEP_TOLERANCE)


def _training(name: str, description: str, build, requires: str, tolerance: float) -> Workload:
    # No autotuning modes: autotuning forward and backward of a whole model is the longest
    # compile there is, and the inference workloads already measure what autotuning gives.
    return Workload(name, FAMILY, description, build, batch_sizes=(TRAIN_BATCH,),
                    batch_sizes_on={"cpu": (CPU_TRAIN_BATCH,)}, autotune_batch_sizes=(),
                    requires=(requires,), tolerance=tolerance, training=True,
                    bfloat16_tolerance=BFLOAT16_DEEP_TOLERANCE)


_TINY_RESNET = dict(layers=(1, 1, 1, 1), channels=(8, 16, 32, 64), stem_width=8, num_classes=10)
_TINY_VIT = dict(img_size=TINY_IMAGE, patch_size=16, embed_dim=32, depth=2, num_heads=2,
                 num_classes=10)
_TEXT = f"random token ids, sequence length {SEQUENCE}, attention {ATTENTION}, no KV cache"

RESNET50 = _inference(
    "resnet50", "timm resnet50 inference, random weights, 224x224 images, 1000 classes",
    timm_builder("resnet50", _TINY_RESNET), "timm", CONV_TOLERANCE)
VIT_BASE16 = _inference(
    "vit-base16", "timm vit_base_patch16_224 inference (ViT-B/16), random weights, 224x224 "
    "images, 1000 classes", timm_builder("vit_base_patch16_224", _TINY_VIT), "timm",
    TRANSFORMER_TOLERANCE)
BERT_BASE = _inference(
    "bert-base", f"transformers BertModel from BertConfig() (BERT-base), last hidden state; {_TEXT}",
    text_builder(bert_config, "AutoModel", "last_hidden_state"), "transformers",
    TRANSFORMER_TOLERANCE)
GPT2_SMALL = _inference(
    "gpt2-small", f"transformers GPT2LMHeadModel from GPT2Config() (GPT-2 small), logits; {_TEXT}",
    text_builder(gpt2_config, "AutoModelForCausalLM", "logits", use_cache=False), "transformers",
    TRANSFORMER_TOLERANCE)
LLAMA_SMALL = _inference(
    "llama-small", f"transformers LlamaForCausalLM from a LlamaConfig of {LLAMA['num_hidden_layers']} "
    f"layers, width {LLAMA['hidden_size']}, {LLAMA['num_attention_heads']} heads "
    f"({LLAMA['num_key_value_heads']} key/value heads), SwiGLU width {LLAMA['intermediate_size']}, "
    f"{LLAMA['vocab_size']} tokens, untied output layer; logits; {_TEXT}",
    text_builder(llama_config, "AutoModelForCausalLM", "logits", use_cache=False), "transformers",
    TRANSFORMER_TOLERANCE)
TRAIN_RESNET50 = _training(
    "train-resnet50", "training step of timm resnet50, random weights, 224x224 images: "
    f"cross-entropy with label smoothing {LABEL_SMOOTHING} on fixed labels, backward, SGD with "
    f"momentum {MOMENTUM}", timm_builder("resnet50", _TINY_RESNET, training=True), "timm", CONV_TOLERANCE)
TRAIN_BERT_BASE = _training(
    "train-bert-base", "training step of transformers BertForSequenceClassification from "
    f"BertConfig() with dropout 0, 2 classes, {_TEXT}: cross-entropy with label smoothing "
    f"{LABEL_SMOOTHING} on fixed labels, backward, SGD with momentum {MOMENTUM}",
    text_builder(bert_training_config, "AutoModelForSequenceClassification", "logits",
                 training=True), "transformers", TRANSFORMER_TOLERANCE)
