"""A mode the quick profile left to its twin (bench/modes.py): the report says it was not
measured separately, where and why, and never shows a figure for it."""

from __future__ import annotations

from test_ledger import CPU, CUDA, claim, data_of, only, record, twice

from bench.modes import MODES, not_separately
from report.site import template_environment

RO_LINE = not_separately("reduce-overhead", MODES["reduce-overhead"].twin_on("cpu"))
RO_OVER_EAGER = {"kind": "speedup", "mode": "reduce-overhead", "baseline": "eager",
                 "about": 0.42, "tolerance": 0.25}


def quick_cpu_records(env, modes=("eager", "default")):
    return [r for mode in modes for r in twice(record, env, "matmul-128", mode, None, 1e-5)]


def test_a_cpu_environment_names_each_mode_left_to_its_measured_twin(tmp_path):
    data = data_of(tmp_path, quick_cpu_records(CPU))
    [env] = data.envs("cpu")
    # max-autotune's twin was not measured either: it is plainly not measured.
    assert env.not_separately == (("reduce-overhead", RO_LINE),)
    assert "builds the same kernels as default" in RO_LINE


def test_a_gpu_environment_or_a_measured_mode_names_none(tmp_path):
    data = data_of(tmp_path, quick_cpu_records(CUDA)
                   + quick_cpu_records(CPU, ("eager", "default", "reduce-overhead")))
    assert [e.not_separately for e in data.envs("cuda") + data.envs("cpu")] == [(), ()]


def test_a_claim_on_the_left_out_twin_says_it_was_not_measured_separately(tmp_path):
    c = claim(RO_OVER_EAGER, backend="cpu", workloads=("matmul-128",))
    j = only(data_of(tmp_path, quick_cpu_records(CPU)), c)
    assert (j.verdict, j.reason) == ("not measured", RO_LINE)
    assert j.comparisons == [] or all(x.figure is None for x in j.comparisons)
    # Without default's records the twin stands for nothing: plainly not measured.
    k = only(data_of(tmp_path / "eager", quick_cpu_records(CPU, ("eager",))), c)
    assert k.verdict == "not measured" and k.reason != RO_LINE


def test_every_environment_block_states_the_modes_left_to_twins(tmp_path):
    [env] = data_of(tmp_path, quick_cpu_records(CPU)).envs("cpu")
    page = template_environment().from_string(
        '{% import "_macros.md.j2" as m %}'
        '{% call(view) m.backend_tabs(backends) %}table{% endcall %}')
    text = page.render(backends=[{"name": "cpu", "envs": [{"env": env}]}])
    assert f"<small>{RO_LINE}.</small>" in text
    assert text.index(env.label) < text.index(RO_LINE) < text.index("table")
