"""Quick answers: the questions a reader deciding on `torch.compile` asks first, each
answered from the records in one line, with its conditions and where the evidence is.

Every answer is a dict the home page's template words (`report/templates/index.md.j2`):
`kind` picks the sentence, the other keys are figures from the records. Where the records
cannot answer, `parts` is empty (the page says "not measured"), and where the spread
between processes cannot tell two modes apart the part is marked `unsettled`.

- `fastest_at(data, workload, batch, backend)`: per device (GPU type, or CPU model), the
  fastest mode at one point, its speedup over eager with the spread, and how busy eager
  keeps the device.
- `answers(data, claims)`: the questions, in the order the home page asks them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from report import analysis, history, ledger
from report.analysis import BASELINE, Data

VIT_BASE = "vit32x12x768"  # ViT-Base's width and depth (768 wide, 12 blocks)
SMALL_MLP, ELEMENTWISE = "mlp", "elementwise-chain"
LANGUAGE_MODEL = "gpt2-small"  # a real model (bench/workloads/models.py), built from its config
CALLS_ASKED = 200  # "I call it 200 times per process": the question's number, not a result
CLAIM_RO_2_4X = "inference-ro-2-4x"
OUTLIER_SPREAD, outlier = analysis.OUTLIER_SPREAD, analysis.outlier


def device_of(env: analysis.Environment) -> str:
    """What a reader calls the device: the GPU type, or the CPU model with its cores."""
    return dict(env.fields)["device_name"][0] if env.backend != "cpu" else env.label.split(" · ")[0]


def _envs_by_device(data: Data, backend: str) -> dict[str, list[analysis.Environment]]:
    found: dict[str, list[analysis.Environment]] = {}
    for env in data.envs(backend):
        found.setdefault(device_of(env), []).append(env)
    return found


def _newest(envs: list[analysis.Environment]) -> list[analysis.Environment]:
    """Environments in the order an answer prefers them: the newest torch release first,
    then the one with the most records."""
    def key(env):
        return (history.release_key(_release(env)), env.record_count)
    return sorted(envs, key=key, reverse=True)


def _release(env: analysis.Environment) -> str:
    return dict(env.fields)["torch"][0]


def fastest_at(data: Data, workload: str, batch: int | None, backend: str
               ) -> list[dict[str, Any]]:
    """Per device of `backend`, the fastest mode at (workload, batch) in the newest torch
    release that timed it, from the environment of that release whose figure rests on
    paired processes, then on the most processes: mode, speedup over eager with its range
    over processes, processes, runner-up, whether the lead is inside the spread
    (`unsettled`) and eager's busy fraction (GPU only)."""
    best = data.fastest()
    out = []
    for device, envs in _envs_by_device(data, backend).items():
        found = [part for env in _newest(envs)
                 if (part := _fastest_in(data, best, env, device, workload, batch))]
        if found:
            newest = [p for p in found if _release(p["env"]) == _release(found[0]["env"])]
            out.append(max(newest, key=lambda p: (p["paired"], p["processes"])))
    return out


def _fastest_in(data: Data, best: pd.DataFrame, env: analysis.Environment, device: str,
                workload: str, batch: int | None) -> dict[str, Any] | None:
    at = _at(best, env.env_id, workload, batch)
    if at.empty:
        return None
    row = analysis.rows(at)[0]
    here = _at(data.speedups, env.env_id, workload, batch)
    mine = here[here["mode"] == row["mode"]]
    eager = here[here["mode"] == BASELINE]
    s = analysis.rows(mine)[0] if len(mine) else {}
    busy = analysis.rows(eager)[0].get("busy_fraction") if len(eager) else None
    return {
        "device": device, "env": env, "mode": row["mode"],
        "speedup": s.get("speedup"), "lo": s.get("speedup_lo"), "hi": s.get("speedup_hi"),
        # A paired speedup rests on its paired processes, not the isolated ones.
        "processes": int(s["pairings"]) if s.get("paired") else row["n_processes"],
        "paired": bool(s.get("paired")), "runner_up": row.get("mode_runner_up"),
        "host_us": s.get("host_probe_us") if s.get("ratio_bound") == "host-dependent"
        else None,
        "unsettled": bool(row.get("tie")) and row.get("mode_runner_up") is not None,
        "outlier": outlier(s.get("speedup_lo"), s.get("speedup_hi")),
        "busy": busy,
        "bound": analysis.boundedness(pd.Series([busy])).iloc[0] if busy is not None else None,
        "cold_s": row.get("cold_first_call_s") if row["mode"] != BASELINE else None,
        "break_even": _break_even(row, s) if row["mode"] != BASELINE else None}


def _at(table: pd.DataFrame, env_id: str, workload: str, batch: int | None) -> pd.DataFrame:
    """The rows of `table` at one point (env, workload, batch; None: unbatched)."""
    here = table[(table["env_id"] == env_id) & (table["workload"] == workload)]
    return here[here["batch_size"].isna()] if batch is None else here[here["batch_size"] == batch]


def _break_even(row: dict, s: dict) -> float | None:
    if not s or s.get("saving_s") is None or row.get("cold_first_call_s") is None:
        return None
    calls = analysis.break_even(pd.Series([row["cold_first_call_s"]]),
                                pd.Series([s["saving_s"]])).iloc[0]
    return None if pd.isna(calls) else float(calls)


def pays_within(data: Data, calls: int) -> list[dict[str, Any]]:
    """Per device of every backend, over the points of the newest environment: at how many
    the fastest compiled mode's cold first call is paid back within `calls` calls, of how
    many points a compiled mode was fastest, and the median break-even."""
    best = data.fastest()
    out = []
    for backend in data.backends:
        for device, envs in _envs_by_device(data, backend).items():
            env = _newest(envs)[0]
            here = best[(best["env_id"] == env.env_id) & (best["mode"] != BASELINE)
                        & best["cold_first_call_s"].notna()]
            saving = data.speedups[data.speedups["env_id"] == env.env_id][
                [*analysis.POINT, "mode", "saving_s"]]
            here = here.merge(saving, on=[*analysis.POINT, "mode"])
            if here.empty:
                continue
            even = analysis.break_even(here["cold_first_call_s"], here["saving_s"])
            out.append({"device": device, "env": env, "points": len(here),
                        "pays": int((even <= calls).sum()), "median": float(even.median())})
    return out


def trust(data: Data, difference: float) -> dict[str, Any] | None:
    """How often a case's median moved by more than `difference` from one process to the
    next, over every case measured in two or more processes."""
    spread = analysis.spreads(data.cases, data.paired)
    if spread.empty:
        return None
    return {"cases": len(spread), "moved": int((spread["spread"] > difference).sum()),
            "median": float(spread["spread"].median()), "difference": difference}


def release_changes(data: Data) -> dict[str, Any] | None:
    """The newest release measured after another on one machine: how many of its cases got
    faster or slower beyond the spread, against the release before (report/history.py)."""
    found = history.site_changes(data)
    if found.empty:
        return None
    newest = history.sort_releases(found["new_release"].unique())[-1]
    at = found[found["new_release"] == newest]
    significant = at[at["significant"].astype(bool)]
    return {"release": newest, "old": history.sort_releases(at["old_release"].unique()),
            "compared": int(at["timed"].astype(bool).sum()),
            "faster": int((significant["direction"] == "faster").sum()),
            "slower": int((significant["direction"] == "slower").sum()),
            "machines": sorted(set(at["machine"]))}


def judged(data: Data) -> list[ledger.ClaimResult]:
    """Every claim of report/claims.yaml judged against `data`, once per site build."""
    return ledger.results_for(data)


def verdict_table(data: Data) -> dict[str, Any]:
    """Verdicts per environment label, for the home page's summary; a claim that is not
    judged on an environment's backend has no entry there (the page shows a dash)."""
    labels = [env.label for backend in data.backends for env in data.envs(backend)]
    rows = [{"claim": {"said": r.claim.paraphrase, "slug": r.claim.id},
             "verdicts": {j.label: j.verdict for j in r.judgements if j.env_id}}
            for r in judged(data) if any(j.env_id for j in r.judgements)]
    return {"rows": rows, "labels": labels}


def claim_verdicts(claims: list, claim_id: str) -> dict[str, Any] | None:
    """One claim's verdict in every environment that judged it (`ledger.judge` results)."""
    found = next((r for r in claims if r.claim.id == claim_id), None)
    if found is None:
        return None
    return {"id": claim_id, "said": found.claim.paraphrase,
            "verdicts": [{"label": j.label, "verdict": j.verdict} for j in found.judgements]}


def conditions(data: Data) -> dict[str, Any]:
    """What every GPU figure was measured under, from the CUDA records: torch releases,
    dtypes and the TF32 switches."""
    gpu = data.shown[data.shown["backend"] == "cuda"]
    def values(column):
        return sorted({str(v) for v in gpu[column].dropna()})
    return {"torch": history.sort_releases({r.split("+")[0] for r in values("torch")}),
            "dtypes": [d.removeprefix("torch.") for d in values("dtype")],
            "tf32": values("cuda_matmul_allow_tf32"),
            "devices": sorted({device_of(e) for e in data.envs("cuda")}),
            "measured": not gpu.empty}


def answers(data: Data, claims: list) -> list[dict[str, Any]]:
    """The home page's questions, each with its answer's figures (see the module doc)."""
    vit = data.batches(VIT_BASE)
    large = max((b for b in vit if b is not None), default=None)
    return [
        {"kind": "fastest", "question": "A ViT-Base-sized model at batch 1 on a GPU: which mode, "
         "and how much faster than eager?", "workload": VIT_BASE, "batch": 1,
         "parts": fastest_at(data, VIT_BASE, 1, "cuda")},
        {"kind": "fastest", "question": f"The same model at batch {32 if 32 in vit else large}?",
         "workload": VIT_BASE, "batch": 32 if 32 in vit else large,
         "parts": fastest_at(data, VIT_BASE, 32 if 32 in vit else large, "cuda")},
        {"kind": "fastest", "question": "A real language model (GPT-2 small, 124M parameters) "
         "at batch 1 on a GPU?", "workload": LANGUAGE_MODEL, "batch": 1,
         "parts": fastest_at(data, LANGUAGE_MODEL, 1, "cuda")},
        {"kind": "pays", "question": f"I call the model {CALLS_ASKED} times per process: "
         "does compiling pay?", "calls": CALLS_ASKED, "parts": pays_within(data, CALLS_ASKED)},
        {"kind": "fastest", "question": "A small MLP on a CPU, one sample at a time?",
         "workload": SMALL_MLP, "batch": 1, "parts": fastest_at(data, SMALL_MLP, 1, "cpu")},
        {"kind": "fastest", "question": "A chain of element-wise operations on a large tensor, "
         "on a CPU?", "workload": ELEMENTWISE, "batch": None,
         "parts": fastest_at(data, ELEMENTWISE, None, "cpu")},
        {"kind": "fastest", "question": "A training step of a small ViT on a GPU (batch 32)?",
         "workload": "train-vit16x6x384", "batch": 32,
         "parts": fastest_at(data, "train-vit16x6x384", 32, "cuda")},
        {"kind": "changes", "question": "What changed in the newest torch release?",
         "found": release_changes(data)},
        {"kind": "trust", "question": "Can I trust a 10% difference between two figures?",
         "found": trust(data, 0.10)},
        {"kind": "claim", "question": "Is \"reduce-overhead gives 2–4× for inference\" true?",
         "found": claim_verdicts(claims, CLAIM_RO_2_4X)},
        {"kind": "byom", "question": "How do I measure my own model?"},
    ]
