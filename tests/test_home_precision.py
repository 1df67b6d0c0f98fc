"""Issue 52: the home page says in what precision each device was measured, counted from
the published table, shows a failed bfloat16 case as failed with its reason, and states how
bfloat16 moves reduce-overhead over eager on gpt2-small at batch 1 from one environment."""

from __future__ import annotations

import dataclasses

import pytest
from fixtures import make_results as fx

from report import analysis, answers
from report.pages import overview
from report.site import Site

MODEL = answers.LANGUAGE_MODEL
# median latency per (dtype, mode): bfloat16 shortens eager's kernels less than its launches
MEDIANS = {("float32", "eager"): 6e-3, ("float32", "reduce-overhead"): 2e-3,
           ("bfloat16", "eager"): 5e-3, ("bfloat16", "reduce-overhead"): 5e-4}
LITE_REASON = "during first calls: TypeError: expected Tensor() for op: attention"


def record(dtype: str, mode: str, repeat: int, env=fx.ENV_A, workload: str = MODEL):
    made = fx.ok_record(env, "vit16x6x384", mode, 1, repeat=repeat, repeats=3)
    return dataclasses.replace(
        made, key=dataclasses.replace(made.key, workload=workload, dtype=dtype),
        workload_info=dataclasses.replace(made.workload_info, family="models",
                                          description=workload, dtype=dtype),
        timing=fx.timing(MEDIANS[dtype, mode] * (1 + 0.01 * repeat), 0.01, False))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    records = [record(dtype, mode, r) for dtype, mode in MEDIANS for r in range(3)]
    lite = fx.failed(fx.ENV_A, "vit16x6x384", "lite", 1, "error", LITE_REASON)
    records.append(dataclasses.replace(
        lite, key=dataclasses.replace(lite.key, workload=MODEL, dtype="bfloat16"),
        workload_info=records[-1].workload_info))
    folder = tmp_path_factory.mktemp("results")
    fx.write(folder / "r.jsonl", records)
    return analysis.Data(analysis.load(folder))


def test_precision_counts_each_dtype_and_keeps_the_failure(data):
    (device,) = answers.precision(data)["devices"]
    by_dtype = {t["dtype"]: t for t in device["dtypes"]}
    assert list(by_dtype) == ["float32", "bfloat16"]
    bf16 = by_dtype["bfloat16"]
    assert (bf16["workloads"], bf16["batches"], bf16["cases"], bf16["timed"]) == ([MODEL], [1], 3, 2)
    assert bf16["failed"] == [{"mode": "lite", "status": "error", "reason": LITE_REASON,
                               "cases": [f"{MODEL} at batch 1"]}]


def test_a_failure_at_several_batches_names_its_workload_once(tmp_path):
    lite = fx.failed(fx.ENV_A, "vit16x6x384", "lite", 1, "error", LITE_REASON)
    records = [dataclasses.replace(lite, key=dataclasses.replace(lite.key, batch_size=b,
                                                                 dtype="bfloat16"))
               for b in (32, 1, 8)]
    fx.write(tmp_path / "r.jsonl", records)
    (device,) = answers.precision(analysis.Data(analysis.load(tmp_path)))["devices"]
    (failed,) = device["dtypes"][0]["failed"]
    assert failed["cases"] == ["vit16x6x384 at batch 1, 8 and 32"]


def test_the_move_reads_both_figures_from_the_published_table_of_one_environment(data):
    (device,) = answers.precision(data)["devices"]
    (move,) = device["moves"]
    for dtype in ("float32", "bfloat16"):
        row = analysis.row_of(data.published, move["env"].env_id, MODEL, 1, "reduce-overhead", dtype)
        assert move[dtype]["speedup"] == pytest.approx(row["speedup"])
    assert move["float32"]["speedup"] < move["bfloat16"]["speedup"]


def test_the_home_page_states_the_precision_and_the_move(data, tmp_path):
    overview.render(Site(data, tmp_path))
    home = (tmp_path / "index.md").read_text("utf-8")
    said = next(line for line in home.splitlines() if line.startswith("**Precision measured:**"))
    assert f"bfloat16 for {MODEL} at batch 1" in said and "2 of 3 cases timed" in said
    assert f"failed: lite on {MODEL} at batch 1 (error: {LITE_REASON})" in said
    (move,) = answers.precision(data)["devices"][0]["moves"]
    moved = next(line for line in home.splitlines()
                 if line.startswith("Reduce-overhead over eager on gpt2-small at batch 1"))
    f32, bf16 = (f"{move[d]['speedup']:.2f}×" for d in ("float32", "bfloat16"))
    assert f"{f32} (" in moved and f"{bf16} (" in moved
    assert moved.index(f32) < moved.index("in float32 against") < moved.index(bf16)
    # One paragraph: the move follows the statement of what was measured.
    assert home.index(said) + len(said) + 1 == home.index(moved)
    assert "separate processes on one environment" in moved


def test_a_device_whose_language_model_dtypes_ran_on_two_hosts_compares_another_workload(tmp_path):
    """gpt2-small in float32 on one environment and bfloat16 on another is never set side by
    side; llama-small, timed in both on one environment, is, and the page says why."""
    records = [record("float32", mode, r, fx.ENV_A) for mode in ("eager", "reduce-overhead")
               for r in range(3)]
    records += [record(dtype, mode, r, fx.ENV_B, workload)
                for workload, dtypes in ((MODEL, ("bfloat16",)),
                                         ("llama-small", ("float32", "bfloat16")))
                for dtype in dtypes for mode in ("eager", "reduce-overhead") for r in range(3)]
    fx.write(tmp_path / "results" / "r.jsonl", records)
    data = analysis.Data(analysis.load(tmp_path / "results"))
    (device,) = answers.precision(data)["devices"]
    (move,) = device["moves"]
    assert (move["workload"], move["env"].env_id) == ("llama-small", fx.ENV_B.env_id())
    labels = {e.env_id: e.label for e in data.envs("cuda")}
    assert device["apart"] == {"workload": MODEL, "float32": [labels[fx.ENV_A.env_id()]],
                               "bfloat16": [labels[fx.ENV_B.env_id()]]}
    overview.render(Site(data, tmp_path / "docs"))
    home = " ".join((tmp_path / "docs" / "index.md").read_text("utf-8").split())
    assert "Reduce-overhead over eager on llama-small at batch 1 on the NVIDIA H100" in home
    assert (f"{MODEL} ran in float32 on {labels[fx.ENV_A.env_id()]} and in bfloat16 on "
            f"{labels[fx.ENV_B.env_id()]}: different hosts, so its two figures are not "
            "compared.") in home
    assert f"Reduce-overhead over eager on {MODEL}" not in home


def test_the_language_model_answer_is_given_per_dtype_each_from_its_own_figures(data, tmp_path):
    (answer,) = [a for a in answers.answers(data, []) if a.get("workload") == MODEL]
    (f32,), (bf16,) = answer["parts"], answer["lower"]
    for part, dtype in ((f32, "float32"), (bf16, "bfloat16")):
        row = analysis.row_of(data.published, part["env"].env_id, MODEL, 1, part["mode"], dtype)
        assert part["speedup"] == pytest.approx(row["speedup"])
    assert f32["speedup"] != pytest.approx(bf16["speedup"])
    overview.render(Site(data, tmp_path))
    home = (tmp_path / "index.md").read_text("utf-8")
    # float32 in the quick answers, whose first two screens have no room for a second
    # dtype; bfloat16 in a section of its own below them, its figures and conditions apart
    quick, lower = home.split("### The GPU answers in bfloat16", 1)
    asked = quick[quick.index("A real language model (GPT-2 small"):].splitlines()
    assert f"{f32['speedup']:.2f}×" in asked[1] and f"{bf16['speedup']:.2f}×" not in quick
    assert f"[{MODEL}](workloads/{MODEL}.md), batch 1, float32:" in asked[2] and "bfloat16" not in asked[2]
    again = lower[lower.index("A real language model (GPT-2 small"):].splitlines()
    assert f"{bf16['speedup']:.2f}×" in again[1] and f"{f32['speedup']:.2f}×" not in again[1]
    assert f"[{MODEL}](workloads/{MODEL}.md), batch 1, bfloat16:" in again[2]
    assert "[above](#bfloat16-answers)" in home
