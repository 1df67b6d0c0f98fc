"""One process of the independent host check (issue 90): a transformers model at batch 1,
eager against torch.compile(mode="reduce-overhead") in paired rounds, with a host probe
timed in every round. It prints one JSON line and appends it to --out.

Written apart from the project's timing code on purpose: it imports torch, transformers and
the standard library only (tests/test_independent_check.py scans its imports), so a figure
it measures tests the host model with code the model was never fitted on.

    python examples/independent-check/measure.py --model gpt2-small --out measured.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import socket
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch
import transformers

BATCH, SEQUENCE, TINY_SEQUENCE = 1, 128, 16
TOKEN_SEED, WEIGHT_SEED = 7, 0  # any fixed seeds: the timing does not depend on the values
TINY_VOCAB = 128
# Compiled against eager in float32: the same maths in another kernel order, so a relative
# L2 error of a few 1e-6; 1e-3 is far above that and far below a wrong output.
TOLERANCE = 1e-3
PROBE_CHUNK = 100  # probe calls between two reads of the clock

# The configuration values of the project's workloads of the same names, copied from
# bench/workloads/models.py (bert_config, gpt2_config, LLAMA and TINY_LLAMA) so that the model
# is the one the host model was fitted on: BERT-base and GPT-2 small are their config classes'
# defaults; llama-small is a Llama decoder of GPT-2 small's depth and width. Only the values
# are shared, never the code. Every model runs without a KV cache and with attention "sdpa".
MODELS = {
    # name: (config class, auto class, output field, config values, tiny config values)
    "gpt2-small": ("GPT2Config", "AutoModelForCausalLM", "logits", {},
                   dict(n_embd=32, n_layer=2, n_head=2, vocab_size=TINY_VOCAB, n_positions=64,
                        bos_token_id=TINY_VOCAB - 1, eos_token_id=TINY_VOCAB - 1)),
    "bert-base": ("BertConfig", "AutoModel", "last_hidden_state", {},
                  dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, vocab_size=TINY_VOCAB, max_position_embeddings=64)),
    "llama-small": ("LlamaConfig", "AutoModelForCausalLM", "logits",
                    dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                         num_attention_heads=12, num_key_value_heads=4, vocab_size=32000,
                         max_position_embeddings=2048, tie_word_embeddings=False),
                    dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, vocab_size=TINY_VOCAB,
                         max_position_embeddings=64, tie_word_embeddings=False)),
}


class Field(torch.nn.Module):
    """The model called on token ids, returning one tensor of its output."""

    def __init__(self, model: torch.nn.Module, field: str) -> None:
        super().__init__()
        self.model, self.field = model, field

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(input_ids=ids), self.field)


def build(name: str, tiny: bool, device: torch.device) -> tuple[Field, torch.Tensor]:
    config_class, auto_class, field, values, tiny_values = MODELS[name]
    config = getattr(transformers, config_class)(use_cache=False, **(tiny_values if tiny else values))
    torch.manual_seed(WEIGHT_SEED)
    model = getattr(transformers, auto_class).from_config(config, attn_implementation="sdpa")
    model = Field(model.to(device=device, dtype=torch.float32).eval(), field).eval()
    generator = torch.Generator(device="cpu").manual_seed(TOKEN_SEED)
    # From 1: token id 0 is often padding, and all-zero inputs can take faster paths.
    ids = torch.randint(1, config.vocab_size, (BATCH, TINY_SEQUENCE if tiny else SEQUENCE),
                        generator=generator)
    return model, ids.to(device)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def per_call_s(call, calls: int, device: torch.device) -> float:
    """Seconds per call of `calls` calls in a row. The device is drained before the clock
    starts (no earlier work is counted) and after it stops (all of this work is)."""
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        call()
    synchronize(device)
    return (time.perf_counter() - start) / calls


def probe_us(x: torch.Tensor, block_s: float, device: torch.device) -> float:
    """The host's cost of one eager op, in microseconds: an in-place add on a 16-element
    tensor, repeated for at least `block_s` seconds. Its kernel is far shorter than its
    launch, so the loop runs at the speed the host dispatches ops (Python, dispatcher,
    launch), the quantity `python -m bench host --op-us` takes. A block of tens of
    milliseconds keeps the preemptions a time-sliced host deals, as a model's block does."""
    synchronize(device)
    start = time.perf_counter()
    calls = 0
    while time.perf_counter() - start < block_s:
        for _ in range(PROBE_CHUNK):
            x.add_(1.0)  # in place: no allocation in the loop
        calls += PROBE_CHUNK
    synchronize(device)
    return (time.perf_counter() - start) / calls * 1e6


def relative_error(expected: torch.Tensor, found: torch.Tensor) -> float:
    expected, found = expected.double(), found.double()
    return float(torch.linalg.vector_norm(found - expected) / torch.linalg.vector_norm(expected))


def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def measure(args: argparse.Namespace) -> dict:
    device = torch.device(args.device)
    model, ids = build(args.model, args.tiny, device)
    mode = "reduce-overhead" if args.compile_backend == "inductor" else None
    compiled = torch.compile(model, backend=args.compile_backend, mode=mode)
    calls = {"eager": lambda: model(ids), "compiled": lambda: compiled(ids)}
    x = torch.ones(16, device=device)

    # Warm-up: the first compiled call compiles (timed on its own, never in a round); CUDA
    # graph trees record on a later call and replay from then on; clocks ramp up.
    synchronize(device)
    start = time.perf_counter()
    compiled(ids)
    synchronize(device)
    compile_s = time.perf_counter() - start
    for _ in range(args.warmup):
        for call in calls.values():
            call()
    probe_us(x, args.probe_block_s, device)
    # Calls per block: enough for each block to last about --block-s.
    per_block = {name: max(1, min(100_000, math.ceil(args.block_s / per_call_s(call, 3, device))))
                 for name, call in calls.items()}

    times: dict[str, list[float]] = {"eager": [], "compiled": []}
    probes: list[float] = []
    members = ["eager", "compiled", "probe"]
    for number in range(args.rounds):
        # Each member takes each position in turn, so none always follows another.
        shift = number % len(members)
        for member in members[shift:] + members[:shift]:
            if member == "probe":
                probes.append(probe_us(x, args.probe_block_s, device))
            else:
                times[member].append(per_call_s(calls[member], per_block[member], device))

    # Checked after the rounds, when the other mode's calls ran between the compiled ones.
    expected = calls["eager"]().detach().clone()
    found = calls["compiled"]().detach().clone()
    error = relative_error(expected, found)
    if not error <= TOLERANCE:
        raise SystemExit(f"measure.py: error: {args.model}: compiled output differs from eager "
                         f"(relative L2 error {error:.2e} > {TOLERANCE:.0e}); no line written")

    eager_s, compiled_s = statistics.median(times["eager"]), statistics.median(times["compiled"])
    round_ratios = [e / c for e, c in zip(times["eager"], times["compiled"], strict=True)]
    return {
        "schema": "independent-check/1",
        "model": args.model, "tiny": args.tiny, "batch_size": BATCH,
        "sequence": TINY_SEQUENCE if args.tiny else SEQUENCE, "dtype": "float32",
        "device_type": device.type,
        "gpu_name": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "compile_backend": args.compile_backend, "compile_mode": mode,
        # reduce-overhead's speedup over eager: eager's median per-call time over the
        # compiled one's, the direction `python -m bench host` predicts.
        "ratio": eager_s / compiled_s,
        "round_ratio_median": statistics.median(round_ratios),
        "probe_us": statistics.median(probes),
        "eager_s": eager_s, "compiled_s": compiled_s, "compile_s": compile_s,
        "rounds": args.rounds, "calls_per_block": per_block,
        "eager_round_s": times["eager"], "compiled_round_s": times["compiled"],
        "probe_round_us": probes, "probe_block_s": args.probe_block_s,
        "relative_error": error,
        "torch": torch.__version__, "transformers": transformers.__version__,
        "python": platform.python_version(), "hostname": socket.gethostname(),
        "boot_id": boot_id(), "timestamp": datetime.now(timezone.utc).isoformat(),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, choices=sorted(MODELS))
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--tiny", action="store_true",
                        help="two layers of width 32 and 16 tokens: a smoke test, not a figure")
    parser.add_argument("--compile-backend", default="inductor", choices=("inductor", "aot_eager"),
                        help="inductor compiles with mode reduce-overhead (the check); aot_eager "
                             "(no code generation) only keeps a CPU smoke test short")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5, help="calls of each mode after compiling")
    parser.add_argument("--block-s", type=float, default=0.1, help="seconds per timed block of a mode")
    parser.add_argument("--probe-block-s", type=float, default=0.05,
                        help="seconds per probe block (the project's host model uses 0.05)")
    parser.add_argument("--out", type=Path, help="append the JSON line to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0 or args.block_s <= 0 or args.probe_block_s <= 0:
        parser.error("--rounds must be at least 1, --warmup at least 0, block times positive")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("CUDA is not available here; use --device cpu for a smoke test")
    with torch.no_grad():
        line = json.dumps(measure(args), sort_keys=True)
    print(line, flush=True)
    if args.out is not None:
        with args.out.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
