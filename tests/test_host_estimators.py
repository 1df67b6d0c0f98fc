"""Issue 90: the host model's estimator is chosen per GPU type by how it predicts leases it
never saw; a pooled slope lets a case with few processes borrow from the others, and loses
where the cases do not share one. Made-up rows as bench/host/model.py reads them (`row_of`),
never results."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bench.host import model as host_model

GPU = "GPU Pooled"
GRAPH_S = 400e-6
NOISE = (0.01, -0.01, 0.005, -0.005, 0.0, 0.008, -0.008, 0.003)
START = datetime(2026, 11, 20, tzinfo=timezone.utc)


def row(workload: str, mode: str, *, timing: str, busy: float | None = None, lease: str = "",
        probe_s: float = 0.0, median_s: float = 0.0, group: str | None = None, day: int = 0,
        ops: float | None = None) -> dict:
    return {"env_id": "env-pooled", "device_name": GPU, "backend": "cuda", "torch": "2.15.0",
            "machine": "box", "workload": workload, "batch_size": 1, "shapes": "seed",
            "case_dtype": "float32", "mode": mode, "tag": "main", "status": "ok",
            "process_timing": timing, "repeat": 0, "repeats": 1,
            "started_at": START + timedelta(days=day), "duration_s": 1.0,
            "busy_fraction": busy, "hostname": "gpu-box", "boot_id": lease or None,
            "op_s": (probe_s * 0.99, probe_s, probe_s * 1.01) if probe_s else (),
            "group": group, "round_s": (median_s,) * 5, "median_s": median_s,
            "cpu_ops_per_call": ops}


def case(workload: str, eager, leases: dict[str, tuple[float, ...]], ops: float | None = None,
         day: dict[str, int] | None = None) -> list[dict]:
    """A host-dependent case: eager host-bound at eager(probe) (off by NOISE in turn), the
    graph mode device-bound at GRAPH_S, one paired process per probe of each lease."""
    out = [row(workload, "eager", timing="isolated", busy=0.25, ops=ops),
           row(workload, "reduce-overhead", timing="isolated", busy=0.9)]
    n = 0
    for lease, probes in leases.items():
        for probe_s in probes:
            group = f"{workload}-{lease}-{n}"
            at = (day or {}).get(lease, 0)
            out += [row(workload, "eager", timing="paired", lease=lease, probe_s=probe_s,
                        median_s=eager(probe_s) * (1 + NOISE[n % len(NOISE)]), group=group,
                        day=at, ops=ops),
                    row(workload, "reduce-overhead", timing="paired", lease=lease,
                        probe_s=probe_s, median_s=GRAPH_S, group=group, day=at)]
            n += 1
    return out


FOUR = {"boot-1": (6.0e-6, 6.4e-6), "boot-2": (7.0e-6, 7.4e-6), "boot-3": (8.0e-6, 8.4e-6),
        "boot-4": (9.0e-6, 9.6e-6)}
# A case measured little: three processes on one lease, two on another.
FEW = {"boot-1": (6.1e-6, 6.3e-6, 6.5e-6), "boot-3": (8.1e-6, 8.3e-6)}


def proportional(per_op_ops: float):
    """Eager time proportional to the probe: every case the same elasticity, 1."""
    return lambda probe_s: per_op_ops * probe_s


def test_a_shared_slope_wins_where_every_case_follows_the_probe_alike():
    rows = (case("model-a", proportional(300), FOUR) + case("model-b", proportional(500), FOUR)
            + case("model-c", proportional(400), FEW))
    fitted = host_model.fit(rows)
    scores = {s.estimator: s for s in fitted.scores if s.device_name == GPU}
    line, pooled = scores[host_model.LINE], scores[host_model.ELASTICITY]
    # The case of five processes has no line of its own (MIN_PROCESSES), but a pooled model,
    # and its held-out lease is checked too.
    assert line.models == 2 and pooled.models == 3
    assert pooled.processes > line.processes
    assert line.meets and pooled.meets
    assert fitted.estimator[GPU] == host_model.ELASTICITY
    few = [m for m in fitted.models if m.workload == "model-c"]
    assert len(few) == 1 and few[0].estimator == host_model.ELASTICITY
    # Its prediction on a host faster than any it was measured on, inside the GPU type's
    # probes, is the proportional line's.
    found = few[0].at(9.5e-6)
    assert found.speedup == pytest.approx(400 * 9.5e-6 / GRAPH_S, rel=0.03)
    assert found.low < 400 * 9.5e-6 / GRAPH_S < found.high
    # Without profiled op counts the ops estimator models nothing and is never chosen.
    assert scores[host_model.OPS].models == 0


def test_the_ops_estimator_scales_the_slope_by_each_cases_eager_ops():
    rows = (case("model-a", proportional(300), FOUR, ops=150)
            + case("model-b", proportional(500), FOUR, ops=250)
            + case("model-c", proportional(400), FEW, ops=200))
    fitted = host_model.fit(rows)
    ops = [m for m in fitted.every[host_model.OPS] if m.workload == "model-c"]
    assert len(ops) == 1
    # 2 probe ops' worth of host time per eager op: slope = 2 x 200 ops
    assert ops[0].base.slope == pytest.approx(400, rel=0.02)
    assert ops[0].base.freedom == 8 + 8 + 5 - 3 - 1


def test_the_case_own_line_wins_where_the_cases_follow_the_probe_differently():
    # model-a's eager grows faster than in proportion to the probe, model-b's hardly moves:
    # one shared relative slope misses both at either end of the probes.
    rows = (case("model-a", lambda p: -2000e-6 + 500 * p, FOUR)
            + case("model-b", lambda p: 2000e-6 + 20 * p, FOUR))
    fitted = host_model.fit(rows)
    scores = {s.estimator: s for s in fitted.scores if s.device_name == GPU}
    line, pooled = scores[host_model.LINE], scores[host_model.ELASTICITY]
    assert line.processes == pooled.processes == 16
    assert line.centre_error < pooled.centre_error
    assert fitted.estimator[GPU] == host_model.LINE
    assert {m.estimator for m in fitted.models} == {host_model.LINE}
    assert all(c.model.estimator == host_model.LINE for c in fitted.held_out)


def test_the_rule_prefers_reaching_the_goal_then_more_processes_then_smaller_error():
    def score(name, processes, inside, error):
        return host_model.Score(GPU, name, models=1, processes=processes, inside=inside,
                                centre_error=error)
    assert host_model.chosen([score("line", 20, 19, 0.02),
                              score("ops", 40, 35, 0.01)]) == {GPU: "line"}  # 87.5%: below
    assert host_model.chosen([score("line", 20, 19, 0.02),
                              score("elasticity", 40, 37, 0.05)]) == {GPU: "elasticity"}
    assert host_model.chosen([score("line", 20, 19, 0.02),
                              score("elasticity", 20, 20, 0.05)]) == {GPU: "line"}
    assert host_model.chosen([score("line", 20, 15, 0.02),
                              score("elasticity", 20, 17, 0.05)]) == {GPU: "elasticity"}


def test_fresh_leases_are_checked_against_models_fitted_before_the_cutoff():
    later = {"boot-3": 10, "boot-4": 10}  # days after START
    rows = (case("model-a", proportional(300), FOUR, day=later)
            + case("model-b", proportional(500), FOUR, day=later))
    checks, fresh = host_model.fresh(rows, START + timedelta(days=5))
    assert fresh == {"gpu-box/boot-3", "gpu-box/boot-4"}
    assert {c.lease for c in checks} == fresh
    # Before the cut-off each case had 4 processes: no line of its own, a pooled one.
    assert {c.model.estimator for c in checks} == {host_model.ELASTICITY}
    assert sum(c.processes for c in checks) == 8
    assert sum(c.processes_inside for c in checks) == 8
