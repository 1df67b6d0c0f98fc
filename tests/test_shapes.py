"""Shape streams and the strategies that meet them (bench/shapes), on tiny shapes on a CPU.

The strategies are Dynamo's business (when it compiles, what it marks dynamic, when it gives
up at the recompile limit), so most tests here trace with the aot_eager backend, which runs
the same graphs without Inductor's C++ compiles; one case process runs the real thing,
Inductor and all, to the recompile limit and into a record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import torch

from bench.backends import CPU
from bench.modes import MODES
from bench.records import CaseKey, StreamRun, record_from_dict
from bench.shapes.measure import StreamCalls
from bench.shapes.strategies import STRATEGIES, mode_name
from bench.shapes.streams import Cycle, LogNormal, Stream, Uniform
from bench.workloads import WORKLOADS, optional
from bench.workloads.registry import STREAMS

ROOT = Path(__file__).resolve().parents[1]
# Three distinct sizes, one of them again; no 1 (Dynamo specializes sizes 0 and 1).
SIZES = (3, 5, 3, 9)
SHORT = Stream("test", "batch", Cycle(SIZES), tiny=Cycle(SIZES), tiny_calls=len(SIZES))
MLP = replace(WORKLOADS["mlp-batches"], stream=SHORT)
KEY = CaseKey("cpu", "mlp-batches", "default", None, "tiny")


def build(workload, key=KEY, reference=False):
    from bench import core

    return core.build(workload, torch.device("cpu"), key, reference=reference)


def served(workload, strategy: str, key=KEY) -> tuple[StreamCalls, dict, dict]:
    """A fresh Dynamo, the stream's first pass in `strategy` (default mode, aot_eager),
    then the float64 check: the calls, the stream section and the correctness section."""
    torch._dynamo.reset()
    from torch._dynamo.utils import counters

    counters.clear()
    mode = MODES[mode_name("default", strategy)]
    with torch.no_grad():
        calls = StreamCalls(workload, mode, build(workload, key), CPU, key, compiler="aot_eager")
        run = calls.first_pass()
        checked = calls.check(build(workload, key, reference=True),
                              workload.tolerance_for("float32"))
    return calls, run, checked


def graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


# ---- streams ----------------------------------------------------------------------------

REPLAY = ("import json; from bench.workloads import WORKLOADS; from bench.workloads.registry "
          "import STREAMS; print(json.dumps({n: WORKLOADS[n].stream.sizes('cuda', False) "
          "for n in STREAMS}))")


def test_a_stream_replayed_from_its_seed_in_another_process_gives_the_same_sizes():
    here = {n: list(WORKLOADS[n].stream.sizes("cuda", False)) for n in STREAMS}
    there = subprocess.run([sys.executable, "-c", REPLAY], cwd=ROOT, capture_output=True,
                           text=True, timeout=120, check=True,
                           env=os.environ | {"PYTHONHASHSEED": "12345"})
    assert json.loads(there.stdout) == here
    # The prompts as drawn when the stream was defined: a change of draw shows here.
    assert here["gpt2-small-prompts"][:6] == [107, 132, 257, 116, 526, 28]


def test_a_stream_is_its_distribution_and_seed_and_a_shorter_one_is_its_start():
    prompts = WORKLOADS["gpt2-small-prompts"].stream
    assert prompts.sizes("cpu", False) == prompts.sizes("cuda", False)[:len(
        prompts.sizes("cpu", False))]
    other_seed = replace(prompts, seed=1)
    assert other_seed.sizes("cuda", False) != prompts.sizes("cuda", False)
    assert all(16 <= n <= 1024 for n in prompts.sizes("cuda", False))
    assert len(set(prompts.sizes("cuda", False))) > 20  # a stream, not a handful of shapes
    batches = WORKLOADS["resnet50-batches"].stream
    assert all(1 <= n <= 64 for n in batches.sizes("cuda", False))
    assert all(1 <= n <= 16 for n in batches.sizes("cpu", False))  # what a CPU can serve
    assert batches.describe("cpu", False) == "batch uniform whole numbers 1-16"
    assert WORKLOADS["mlp-batches"].stream.sizes("cuda", False)[:6] == WORKLOADS[
        "dynamic-mlp"].batch_cycle


@pytest.mark.parametrize("tiny", [False, True])
def test_every_prompt_of_a_text_stream_fits_its_models_positions(tiny):
    """BERT-base takes 512 positions: the 1,024-token clip of the decoders' prompts made its
    every process fail, eager included, at the first longer prompt (CPU, tenth session)."""
    transformers = pytest.importorskip("transformers")
    from bench.workloads.models import bert_config, gpt2_config, llama_config

    configs = {"gpt2-small-prompts": gpt2_config, "bert-base-prompts": bert_config,
               "llama-small-prompts": llama_config}
    for name, config in configs.items():
        positions = config(transformers, tiny).max_position_embeddings
        for backend in ("cpu", "cuda"):
            stream = WORKLOADS[name].stream
            assert stream.drawn_from(backend, tiny).bounds[1] <= positions, (name, backend)
            longest = max(stream.sizes(backend, tiny))
            for strategy in STRATEGIES.values():  # padded up to its bucket, too
                assert strategy.padded(longest) <= positions, (name, backend, strategy.name)
    assert max(WORKLOADS["gpt2-small-prompts"].stream.sizes("cuda", False)) == 1024


def test_a_distribution_says_in_words_what_it_draws():
    assert LogNormal(128, 1.0, 16, 1024).describe() == (
        "log-normal, median 128, sigma 1 (of the logarithm), clipped to 16-1024")
    assert Uniform(1, 64).describe() == "uniform whole numbers 1-64"


# ---- strategies, one by one ---------------------------------------------------------------

def test_static_compiles_a_graph_per_size():
    _, run, checked = served(MLP, "static")
    assert graphs() == len(set(SIZES))
    assert run["run_sizes"] == list(SIZES)
    assert not any(cost["fell_back"] for cost in run["per_size"])
    assert checked["passed"]


def test_automatic_dynamic_turns_symbolic_at_the_first_recompile():
    _, run, checked = served(MLP, "automatic-dynamic")
    assert graphs() == 2
    assert run["guard_failures"] == 1 and "size mismatch" in run["guard_failure_reasons"][0]
    assert checked["passed"]


@pytest.mark.parametrize("strategy", ["dynamic", "mark-dynamic", "mark-unbacked",
                                      "shapes-spec"])
def test_a_strategy_dynamic_from_the_start_compiles_one_graph(strategy):
    if STRATEGIES[strategy].lacks():
        pytest.skip(STRATEGIES[strategy].lacks())
    _, run, checked = served(MLP, strategy)
    assert graphs() == 1
    assert run["guard_failures"] == 0
    assert run["strategy"] == strategy and run["compile_mode"] == "default"
    assert checked["passed"]


@pytest.mark.parametrize(("strategy", "buckets"), [("pad-pow2", (4, 8, 4, 16)),
                                                   ("pad64", (64, 64, 64, 64))])
def test_padding_runs_each_bucket_once_and_compares_no_padding(strategy, buckets):
    calls, run, checked = served(MLP, strategy)
    assert tuple(run["run_sizes"]) == buckets
    assert graphs() == len(set(buckets))
    assert [cost["size"] for cost in run["per_size"]] == list(dict.fromkeys(buckets))
    with torch.no_grad():
        assert calls.call(5).shape[0] == 5  # cut back to the request
    assert checked["passed"] and checked["rel_error"] < 1e-5


def test_the_recompile_limit_leaves_later_sizes_eager_and_says_which():
    with torch._dynamo.config.patch(recompile_limit=2):
        _, run, checked = served(MLP, "static")
    fell = {cost["size"]: cost["fell_back"] for cost in run["per_size"]}
    assert fell == {3: False, 5: False, 9: True}  # two graphs, then eager
    assert run["recompile_limit"] == 2
    assert checked["passed"]


def text_model_or_skip() -> None:
    gone = optional.missing(("transformers",))
    if gone:
        pytest.skip(f"needs {optional.needs(gone)}")


def test_padded_attention_keeps_bert_right_through_its_mask():
    """BERT attends both ways: without the mask, padding would change every real token's
    output. Compared against float64 at the requested length, padding cut off first."""
    text_model_or_skip()
    bert = replace(WORKLOADS["bert-base-prompts"], stream=replace(
        SHORT, name="short-prompts", dim="sequence", distribution=Cycle((5, 11)),
        tiny=Cycle((5, 11)), tiny_calls=2))
    key = CaseKey("cpu", "bert-base-prompts", "default", 2, "tiny")
    calls, run, checked = served(bert, "pad64", key)
    assert run["run_sizes"] == [64, 64]
    with torch.no_grad():
        out = calls.call(5)
        assert out.shape[:2] == (2, 5)
        unmasked = calls.call_fn(*calls._padded(calls.sized.request(5), 5, 64)[:1])
    assert checked["passed"]
    assert not torch.allclose(unmasked[:, :5], out, atol=1e-4)  # the mask is what keeps it


# ---- one case process, Inductor and all ------------------------------------------------------

CHILD = ("import sys, torch; torch._dynamo.config.recompile_limit = 1; import bench.case as case; "
         "sys.exit(case.main(sys.argv[1:]))")


def test_a_case_process_records_the_sizes_that_fell_back_at_the_limit(tmp_path):
    spec = {"backend": "cpu", "workload": "mlp-batches", "mode": "default-static",
            "batch_size": None, "shapes": "tiny", "tag": "main", "budget_s": 0.01}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = os.environ | {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "spec.json"),
                           str(tmp_path / "result.json")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "ok", result.get("reason")
    record = record_from_dict(_record(spec, result))
    run: StreamRun = record.stream
    assert run.recompile_limit == 1 and run.strategy == "static" and run.caches_off
    assert [c.fell_back for c in run.per_size] == [False, True, True, True, True, True]
    assert run.sizes == WORKLOADS["mlp-batches"].stream.sizes("cpu", True)
    assert record.correctness.passed
    assert len(record.timing.samples) >= len(run.sizes)
    assert all(c.cudagraph_recordings is None and c.reserved_growth_bytes is None
               for c in run.per_size)  # not applicable on a CPU


def _record(spec: dict, result: dict) -> dict:
    from bench.environment import collect
    from bench.records import MEASURED_SECTIONS, SCHEMA_VERSION, Process

    env = collect("cpu", "test")
    key = CaseKey(**{k: spec[k] for k in ("backend", "workload", "mode", "batch_size", "shapes",
                                          "tag")})
    return {"schema_version": SCHEMA_VERSION, "key": asdict(key), "status": result["status"],
            "reason": result.get("reason"), "profile": "full", "env": asdict(env),
            "env_id": env.env_id(), "started_at": "2026-12-06T00:00:00+00:00",
            "duration_s": result["duration_s"],
            "process": asdict(Process(0, 1, None, None, 1, None, "cold")),
            "mode_traits": asdict(MODES[spec["mode"]].traits),
            **{k: result[k] for k in MEASURED_SECTIONS if result.get(k) is not None}}


def test_a_paired_process_refuses_a_stream():
    from bench import core

    reason = core.unsupported(WORKLOADS["mlp-batches"], MODES["default"])
    assert "--timing isolated" in reason
    assert core.unsupported(WORKLOADS["mlp-batches"], MODES["default"], alone=True) is None


def test_stream_modes_apply_to_streams_alone():
    static = MODES["default-static"]
    assert static.applies_to(WORKLOADS["mlp-batches"].varying_shapes)
    assert not static.applies_to(WORKLOADS["dynamic-mlp"].varying_shapes)
    assert not static.applies_to(WORKLOADS["mlp"].varying_shapes)
    assert MODES["default"].applies_to(WORKLOADS["mlp-batches"].varying_shapes)


def test_cuda_graph_recordings_count_every_node_of_torch_2_11s_trees(monkeypatch):
    """torch 2.11's get_manager takes the device index with no default (2.15 has one): called
    without it, the first H100 streams recorded "not applicable" for reduce-overhead. A
    manager of that signature, two roots and a child of one, counts 3."""
    from types import SimpleNamespace

    from torch._inductor import cudagraph_trees

    from bench.shapes import measure

    leaf = SimpleNamespace(children={})
    roots = [SimpleNamespace(children={"f": [leaf]}), SimpleNamespace(children={})]
    manager = SimpleNamespace(get_roots=lambda: iter(roots))

    def get_manager(device_index, create_if_none_exists=True):  # torch 2.11.0's signature
        assert device_index == 0 and create_if_none_exists is False
        return manager

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(cudagraph_trees, "get_manager", get_manager)
    assert measure.cudagraph_recordings() == 3
    monkeypatch.setattr(cudagraph_trees, "get_manager", lambda device_index, **_: None)
    assert measure.cudagraph_recordings() == 0
