"""The varying-shapes page (report/pages/shapes.py) on stream records made here: it picks
the soonest and the steadiest case that passed its float64 check, per device, and says
"not measured" where no record is."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fixtures import make_results as fx

from bench.records import (
    CaseKey,
    Correctness,
    DynamoCounters,
    Memory,
    ShapeCost,
    StreamRun,
    append_records,
)
from bench.stats import summarize
from report.analysis import Data
from report.analysis.loading import load
from report.pages import shapes as page
from report.shapes import data as shapes
from report.site import Site

SIZES = (16, 40, 16, 100)
WORKLOAD = "gpt2-small-prompts"


def stream_record(env, mode: str, strategy: str, first_pass: tuple[float, ...], steady: float,
                  *, repeat: int = 0, passed: bool = True, grown: int | None = None,
                  fell_back: bool = False, run_sizes: tuple[int, ...] = SIZES):
    base = fx.ok_record(env, "trivial-call", "eager" if mode == "eager" else "default", None,
                        repeat=repeat, repeats=3)
    samples = tuple(steady * (1 + i / 100) for i in range(len(SIZES)))
    timing = replace(base.timing, samples=samples, calls_per_sample=1,
                     wall_per_call_s=steady, **summarize(samples))
    seen = tuple(dict.fromkeys(run_sizes))
    cuda = env.backend == "cuda"
    run = StreamRun(
        stream="prompts", distribution="sequence log-normal, median 128, sigma 1 (of the "
        "logarithm), clipped to 16-1024", seed=0, varying_dim="sequence", sizes=SIZES,
        strategy=strategy, compile_mode=None if mode == "eager" else "default",
        run_sizes=run_sizes, first_pass_s=first_pass, recompile_limit=8, guard_failures=0,
        guard_failure_reasons=(),
        per_size=tuple(ShapeCost(size=s, calls=run_sizes.count(s),
                                 first_call_s=first_pass[run_sizes.index(s)],
                                 fell_back=fell_back and s == seen[-1],
                                 cudagraph_recordings=1 if grown is not None else None,
                                 reserved_growth_bytes=grown if cuda else None)
                       for s in seen))
    return replace(base, key=CaseKey(env.backend, WORKLOAD, mode, 1, "seed"), timing=timing,
                   duration_s=sum(first_pass) + sum(samples) + 10,
                   stream=run, warmup=None,
                   memory=Memory(peak_device_bytes=None, peak_rss_bytes=900_000_000),
                   dynamo=DynamoCounters(0, 0, 1, 0) if mode != "eager" else None,
                   correctness=Correctness("float64", 1e-7 if passed else 0.5, 2e-3, passed))


@pytest.fixture
def page_text(tmp_path):
    records = []
    for repeat in range(3):
        records += [
            stream_record(fx.ENV_A, "eager", "eager", (5.0, 5.0, 5.0, 5.0), 5.0, repeat=repeat),
            stream_record(fx.ENV_A, "default", "automatic-dynamic", (9.0, 5.0, 0.01, 0.02),
                          0.01, repeat=repeat),
            stream_record(fx.ENV_A, "reduce-overhead-pad-pow2", "pad-pow2",
                          (8.0, 4.0, 0.005, 4.0), 0.004, repeat=repeat, grown=3 << 20,
                          run_sizes=(16, 64, 16, 128)),
            # Fastest of all, but wrong: never picked.
            stream_record(fx.ENV_A, "default-dynamic", "dynamic", (1.0, 0.001, 0.001, 0.001),
                          0.001, repeat=repeat, passed=False),
        ]
    append_records(tmp_path / "results" / "cuda.jsonl", records)
    site = Site(Data(load(tmp_path / "results")), tmp_path / "docs")
    page.render(site)
    return (tmp_path / "docs" / page.PAGE).read_text()


def test_the_answer_picks_the_soonest_and_steadiest_cases_that_passed(page_text):
    answer = page_text.split("## Every strategy")[0]
    row = next(line for line in answer.splitlines() if f"| {WORKLOAD}, batch 1" in line)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    assert cells[0].endswith("sequence 16–100, 4 calls")
    assert cells[1] == "`default`"  # 14.03 s, against 16.0 s padded and 20 s eager
    assert cells[4] == "`reduce-overhead-pad-pow2`"  # the lowest p99 that passed
    assert cells[8] == "3.00\u00a0MiB"  # its memory per size it ran at
    assert cells[7] == "3"  # its running total first at or below eager's: 12.0 s against 15 s


def test_a_device_and_a_stream_without_records_read_not_measured(page_text):
    assert "Not measured: there are no shape-stream results from a cpu or mps machine yet." in page_text
    assert "| resnet50-batches | not measured |" in page_text


def test_break_even_is_the_first_call_at_which_the_running_total_is_no_more_than_eager():
    eager = {"ok": True, "calls": 4, "running_s": [1.0, 2.0, 3.0, 4.0]}
    assert shapes.break_even({"ok": True, "calls": 4, "running_s": [5.0, 5.1, 5.2, 5.3]},
                             eager) is None
    assert shapes.break_even({"ok": True, "calls": 4, "running_s": [1.5, 2.5, 2.9, 3.0]},
                             eager) == 3
