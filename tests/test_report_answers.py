"""Quick answers on the home page: each comes from the records, names its conditions and
its evidence, and says "not measured" or "unsettled" where the records cannot answer."""

from __future__ import annotations

import dataclasses
import re

import pytest
from fixtures import make_results as fx

from report import analysis, answers


def data_of(tmp_path, records) -> analysis.Data:
    fx.write(tmp_path / "results" / "r.jsonl", records)
    return analysis.Data(analysis.load(tmp_path / "results"))


def timed(env, mode: str, median_s: float, repeat: int = 0, repeats: int = 1):
    made = fx.ok_record(env, "vit16x6x384", mode, 1, repeat=repeat, repeats=repeats)
    return dataclasses.replace(made, timing=fx.timing(median_s, 0.01, env.backend == "cpu"))


def test_fastest_answer_names_the_fastest_mode_and_its_speedup_over_eager(tmp_path):
    data = data_of(tmp_path, [timed(fx.ENV_A, "eager", 4e-3), timed(fx.ENV_A, "default", 2e-3),
                              timed(fx.ENV_A, "reduce-overhead", 1e-3)])
    (part,) = answers.fastest_at(data, "vit16x6x384", 1, "cuda")
    assert (part["device"], part["mode"]) == ("NVIDIA H100 80GB HBM3", "reduce-overhead")
    assert part["speedup"] == pytest.approx(4.0)


def test_a_point_without_records_has_no_answer(tmp_path):
    data = data_of(tmp_path, [timed(fx.ENV_A, "eager", 4e-3), timed(fx.ENV_A, "default", 2e-3)])
    assert answers.fastest_at(data, "vit16x6x384", 32, "cuda") == []
    assert answers.fastest_at(data, "vit16x6x384", 1, "cpu") == []


def test_a_lead_inside_the_spread_between_processes_is_unsettled(tmp_path):
    records = [timed(fx.ENV_A, mode, median, r, 2)
               for mode, medians in (("eager", (4e-3, 4e-3)), ("default", (2.0e-3, 2.2e-3)),
                                     ("reduce-overhead", (1.9e-3, 2.3e-3)))
               for r, median in enumerate(medians)]
    (part,) = answers.fastest_at(data_of(tmp_path, records), "vit16x6x384", 1, "cuda")
    assert part["unsettled"] and {part["mode"], part["runner_up"]} == {"default", "reduce-overhead"}


def test_a_speedup_whose_processes_disagree_by_a_factor_of_ten_is_an_outlier():
    assert answers.outlier(0.13, 6.96)
    assert not answers.outlier(1.9, 2.3)
    assert not answers.outlier(None, None)


def test_home_page_opens_with_quick_answers_that_link_to_their_evidence(fixture_root):
    home = (fixture_root / "docs" / "index.md").read_text("utf-8")  # rendered from RESULTS
    quick = home[home.index("## Quick answers"):home.index("## Reproduce")]
    assert home.index("## Quick answers") < home.index("## Speedup over eager")
    questions = [line for line in quick.splitlines() if line.startswith("**") and "?**" in line]
    assert 8 <= len(questions) <= 12
    # Every answer is followed by its evidence link, or says the records cannot answer.
    for block in quick.split("\n\n"):
        if "?**" in block:
            assert "](" in block, block


def test_a_paired_answer_counts_its_paired_processes_not_the_isolated_ones(tmp_path):
    from fixtures import model_records as mx

    isolated_once = [r for r in mx.records() if r.process.timing == "paired"
                     or (r.key.workload == "resnet50" and r.process.repeat == 0)]
    data = data_of(tmp_path, isolated_once)
    (part,) = answers.fastest_at(data, "resnet50", 1, "cuda")
    assert part["paired"] and part["processes"] == 3
    assert part["mode"] == "reduce-overhead"


def test_no_verdict_on_the_home_page_appears_without_its_region(fixture_root):
    """Issue 49: quick answer 10 and the claims table give each verdict with where it holds,
    never bare."""
    from report import ledger

    home = (fixture_root / "docs" / "index.md").read_text("utf-8")
    quick = home[home.index("## Quick answers"):home.index("## Reproduce")]
    claim = next(b for b in quick.split("\n\n") if "reduce-overhead gives 2–4×" in b)
    answer = claim.splitlines()[1]
    verdicts = "|".join(ledger.VERDICTS)
    after = re.split(r"\*\*(?:" + verdicts + r")\*\*", answer)[1:]
    assert after, claim
    for text in after:  # up to the next device: the verdict's regions, or why it has none
        assert re.match(r"( \([^)]*environments?\))?(: \S+ (exceeds|holds|fails) | \(.+\))",
                        text), (text, claim)
    table = home[home.index("## Claims at a glance"):home.index("## Speedup over eager")]
    cells = [c.strip() for line in table.splitlines() if line.startswith("| [")
             for c in line.split(" | ")[1:]]
    verdict_cells = [c for c in cells if c.strip(" |") not in ("—", "")]
    assert verdict_cells
    for cell in verdict_cells:
        found = re.fullmatch(r"\*\*(" + "|".join(ledger.VERDICTS) + r")\*\*<br><small>(.+)</small> ?\|?",
                             cell)
        assert found and found.group(2).strip(), cell


def test_the_claim_answer_carries_each_verdicts_region(tmp_path):
    from fixtures import model_records as mx

    data = data_of(tmp_path, mx.records())
    claims = answers.judged(data)
    found = answers.claim_verdicts(data, claims, answers.CLAIM_RO_2_4X)
    assert found and found["devices"]
    for device in found["devices"]:
        assert sum(n for _, n in device["verdict_counts"]) == device["environments"]
        assert device["shown"] or device["reason"], device
        for region in device["shown"]:
            assert region["text"].startswith(region["outcome"]), region
    assert "resnet50" in found["scope"]["models"]


def test_a_claim_about_models_in_general_is_judged_on_the_real_models(tmp_path):
    # The ledger was written before the real models were measured: "reduce-overhead gives
    # 2-4x for inference" was judged on the synthetic workloads alone.
    from fixtures import model_records as mx

    claims = answers.judged(data_of(tmp_path, mx.records()))
    for claim_id in ("inference-ro-2-4x", "ro-2-3x", "default-1-3-1-8x", "serving-prefers-ro"):
        (judgement,) = next(r for r in claims if r.claim.id == claim_id).judgements
        assert "resnet50" in {r.workload for r in judgement.regions}, (claim_id, judgement.reason)


def test_the_language_models_size_in_its_question_is_the_recorded_one(tmp_path, fixture_root):
    from fixtures import model_records as mx

    data = data_of(tmp_path, mx.records())  # its gpt2-small records say 110,000,000
    question = answers.answers(data, answers.judged(data))[2]["question"]
    assert question.startswith("A real language model (GPT-2 small, 110M parameters)"), question
    home = (fixture_root / "docs" / "index.md").read_text("utf-8")  # no gpt2-small record
    assert "**3. A real language model (GPT-2 small) at batch 1 on a GPU?**" in home


def test_the_home_page_says_its_devices_answers_are_not_paired_before_it_answers(fixture_root):
    home = (fixture_root / "docs" / "index.md").read_text("utf-8")
    intro = home[:home.index("## Quick answers")]
    assert "different hosts" in intro and "(analysis/gpu-types.md)" in intro
    assert (fixture_root / "site" / "analysis" / "gpu-types" / "index.html").is_file()


def test_a_question_about_a_model_not_measured_asks_at_a_batch_size(fixture_root):
    # No ViT-Base records at all left the second question "at batch None?".
    home = (fixture_root / "docs" / "index.md").read_text("utf-8")
    assert "**2. The same model at batch 32?**" in home
    assert "None" not in home


def test_the_pays_back_answer_splits_each_devices_points_among_the_fastest_modes(fixture_root):
    home = (fixture_root / "docs" / "index.md").read_text("utf-8")
    answer = next(line for line in home.splitlines()
                  if line.startswith("Points where a torch.compile mode is fastest once paid"))
    parts = re.findall(r"\*\*([^*]+)\*\* (\d+) of (\d+) "
                       r"\((?:hand-captured CUDA graph (\d+), )?eager (\d+)\)", answer)
    assert parts, answer
    for device, compiled, points, graph, eager in parts:
        assert int(compiled) + int(graph or 0) + int(eager) == int(points), device


@pytest.mark.parametrize("h200_torch", ["2.11.0", "2.12.0"])
def test_a_torch_release_every_device_shares_is_named_once_in_an_answers_conditions(
        tmp_path, h200_torch):
    """The conditions line names each device's environment; a release they all share is
    said once, before them, so that the quick answers fit two screens (issue 93)."""
    from test_home_precision import MODEL, record

    from report.pages import overview
    from report.site import Site

    h200 = dataclasses.replace(fx.environment("h200-a", "cuda", "NVIDIA H200", "570.86"),
                               torch=h200_torch, torch_requested=h200_torch)
    records = [record("float32", mode, r, env=env) for env in (fx.ENV_A, h200)
               for mode in ("eager", "reduce-overhead") for r in range(3)]
    overview.render(Site(data_of(tmp_path, records), tmp_path / "docs"))
    home = (tmp_path / "docs" / "index.md").read_text("utf-8").replace("\N{NO-BREAK SPACE}", " ")
    (said,) = [line for line in home.splitlines()
               if line.startswith(f"<small>[{MODEL}](workloads/{MODEL}.md), batch 1, float32: ")]
    if h200_torch == "2.11.0":
        assert "float32: torch 2.11.0: h100-a · 2026-11-20, 3 proc.; h200-a · " in said, said
    else:
        assert ("float32: torch 2.11.0 · h100-a · 2026-11-20, 3 proc.; torch 2.12.0 · h200-a · "
                in said), said
