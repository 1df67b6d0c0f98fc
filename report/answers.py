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

import dataclasses
import math
from collections import Counter
from typing import Any

import pandas as pd

from report import analysis, formatting, ledger
from report.analysis import BASELINE, Data, host
from report.ledger.words import region_words
from report.releases import ab, vocabulary

# The real ViT-B/16 (timm, bench/workloads/models.py), not the synthetic ViT of its width and
# depth (vit32x12x768), whose 32-pixel patches give a quarter of the tokens.
VIT_BASE = "vit-base16"
SMALL_MLP, ELEMENTWISE = "mlp", "elementwise-chain"
LANGUAGE_MODEL = "gpt2-small"  # a real model (bench/workloads/models.py), built from its config
CALLS_ASKED = 200  # "I call it 200 times per process": the question's number, not a result
CALLS_ANSWERED = analysis.CALLS_ANSWERED  # the calls per process "which mode" answers are for
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
        return (vocabulary.release_key(_release(env)), env.record_count)
    return sorted(envs, key=key, reverse=True)


def _release(env: analysis.Environment) -> str:
    return dict(env.fields)["torch"][0]


def fastest_at(data: Data, workload: str, batch: int | None, backend: str,
               calls: int = CALLS_ANSWERED,
               dtype: str = analysis.DEFAULT_DTYPE) -> list[dict[str, Any]]:
    """Per device of `backend`: `analysis.choose` at (workload, batch) within `calls` calls
    per process, the answer the chooser gives for the same inputs. The environment is the
    newest torch release that timed the point, and of that release the one whose figure
    rests on paired processes, then on the most processes; the device's other environments
    that timed the point are listed under `others` with their own answer, so that a device
    measured on several hosts says how far they differ. Every figure is of `dtype`."""
    out = []
    for device, envs in _envs_by_device(data, backend).items():
        found = [part for env in _newest(envs)
                 if (part := _choice_in(data, env, device, workload, batch, calls, dtype))]
        if not found:
            continue
        newest = [p for p in found if _release(p["env"]) == _release(found[0]["env"])]
        chosen = max(newest, key=lambda p: (p["paired"], p["processes"]))
        chosen["others"] = [{"env": p["env"], "mode": p["mode"], "speedup": p["speedup"]}
                            for p in found if p is not chosen]
        out.append(chosen)
    return out


def published_rows(data: Data) -> dict[tuple, dict[str, Any]]:
    """Every row of the published table by (env_id, workload, batch_size, mode, dtype), the
    first where two shapes share one: built once, so that an answer looks a case up. A scan
    of the table per environment made the home page's time grow with the square of the
    environments (issue 94, fault f)."""
    def index() -> dict[tuple, dict[str, Any]]:
        found: dict[tuple, dict[str, Any]] = {}
        for r in analysis.rows(data.published):
            found.setdefault((r["env_id"], r["workload"], r["batch_size"], r["mode"],
                              r[analysis.DTYPE]), r)
        return found
    return data.memo("answers-published-rows", index)


def _choices(data: Data, workload: str, batch: int | None, dtype: str,
             calls: int) -> dict[str, dict[str, Any]]:
    """`analysis.choose` at one point (workload, batch; None: unbatched) in one dtype, of
    every environment at once, by env_id: an answer never sets two dtypes side by side."""
    def choose() -> dict[str, dict[str, Any]]:
        table = data.published
        here = table[(table["workload"] == workload) & (table[analysis.DTYPE] == dtype)]
        here = here[here["batch_size"].isna()] if batch is None else here[here["batch_size"] == batch]
        found: dict[str, dict[str, Any]] = {}
        for r in analysis.rows(analysis.choose(here, calls)):
            found.setdefault(r["env_id"], r)
        return found
    return data.memo(("answers-choices", workload, batch, dtype, calls), choose)


def _choice_in(data: Data, env: analysis.Environment, device: str, workload: str,
               batch: int | None, calls: int, dtype: str) -> dict[str, Any] | None:
    row = _choices(data, workload, batch, dtype, calls).get(env.env_id)
    if row is None:
        return None
    published = published_rows(data)
    eager = published.get((env.env_id, workload, batch, BASELINE, dtype)) or {}
    chosen = published.get((env.env_id, workload, batch, row["mode"], dtype)) or {}
    # A host-dependent figure leads at its GPU type's reference host where its model
    # predicts there (`at_reference`); the figure as measured follows it.
    host_at = (host_prediction(data, env.env_id, workload, batch, row["mode"], chosen)
               if row["host_dependent"] else None)
    return {
        "device": device, "env": env, "mode": row["mode"], "calls": calls,
        # The environment's label without the device, which the answer names already.
        "where": env.label.removeprefix(device).removeprefix(" · "),
        "release": f"torch {env.field('torch')}",  # how `where` begins
        "speedup": row["speedup"], "lo": row["speedup_lo"], "hi": row["speedup_hi"],
        "processes": int(row["processes"]), "paired": row["timing"] == "paired",
        "runner_up": row.get("mode_runner_up"), "runner_up_speedup": row.get("speedup_runner_up"),
        "margin": row.get("margin"), "unsettled": bool(row["tie"]),
        # Where set, the margin is head to head: the processes that timed both modes.
        "margin_processes": row.get("margin_processes"),
        "compiling": bool(row["compiling"]), "graph": bool(row["cuda_graphs"]) and not row["compiling"],
        "host_dependent": bool(row["host_dependent"]),
        "host_us": chosen.get("host_probe_us") if row["host_dependent"] else None,
        "host": host_at,
        "reference": reference_host(data, env) if row["host_dependent"] else None,
        "at_reference": bool(host_at and host_at["reference"] and host_at["speedup"] is not None),
        "outlier": outlier(row["speedup_lo"], row["speedup_hi"]),
        # Another run of the environment (an A/B group) contradicts it beyond the A/A floor.
        "noisy": dtype == analysis.DEFAULT_DTYPE and ab.noisy(data, env.env_id, workload, batch,
                                                               row["mode"]),
        "bound": eager.get("bound"),
        "cold_s": chosen.get("cold_compile_s") if row["mode"] != BASELINE else None,
        "break_even": row["cold_calls"] if row["mode"] != BASELINE else None,
        "not_paid": [{"mode": m, "speedup": sp, "calls": c} for m, sp, c in row["not_paid"]]}


def reference_host(data: Data, env: analysis.Environment) -> dict[str, Any] | None:
    """The reference host of the environment's GPU type (`host.reference_of`): the median
    lease's eager-op cost, the fastest and slowest lease's, how many leases; None where no
    lease timed the probe."""
    found = host.reference_of(data, dict(env.fields)["device_name"][0])
    if found is None:
        return None
    return {"device": found.device_name, "probe_us": found.probe_s * 1e6,
            "lo_us": found.lo_s * 1e6, "hi_us": found.hi_s * 1e6, "leases": found.leases}


def host_prediction(data: Data, env_id: str, workload: str, batch: int | None, mode: str,
                    row: dict[str, Any], probe_us: float | None = None) -> dict[str, Any] | None:
    """A host-dependent speedup predicted by its host model (`host.model_for`) at
    `probe_us`, by default the GPU type's reference host (`host_reference_us` of its
    published row; the median measured host, `host_probe_median_us`, where there is none),
    with the probes the model was fitted on; None where no model was fitted. Outside those
    probes `outside_us` is how far, and the answer refuses to predict. `reference`: whether
    the probe is the reference host's."""
    model = host.model_for(data, env_id, workload, batch, mode,
                           row.get(analysis.DTYPE) or analysis.DEFAULT_DTYPE)
    median, reference = row.get("host_probe_median_us"), row.get("host_reference_us")
    if model is None or median is None or median != median:
        return None
    known = reference is not None and reference == reference
    if probe_us is None:
        probe_us = reference if known else median
    lo, hi = model.probe_range_s
    outside = model.outside(probe_us * 1e-6)  # first: far outside, the band overflows a float
    found = None if outside else model.at(probe_us * 1e-6)
    return {"probe_us": probe_us, "median_us": median, "lo_us": lo * 1e6, "hi_us": hi * 1e6,
            "reference": known and probe_us == reference,
            "outside_us": outside * 1e6, "speedup": found.speedup if found else None,
            "low": found.low if found else None,
            "high": None if found is None or math.isinf(found.high) else found.high,
            "processes": model.processes}


def pays_within(data: Data, calls: int) -> list[dict[str, Any]]:
    """Per device of every backend, over the points of its newest environment (the one with
    the most records of the newest release): at how many `analysis.choose` within `calls`
    picks a mode that compiles (torch.compile), at how many the hand-captured CUDA graph
    (no compiling) and at how many eager."""
    out = []
    for backend in data.backends:
        for device, envs in _envs_by_device(data, backend).items():
            env = _newest(envs)[0]
            table = data.published[data.published["env_id"] == env.env_id]
            found = analysis.choose(table, calls)
            if found.empty:
                continue
            graph = found["cuda_graphs"].astype(bool) & ~found["compiling"].astype(bool)
            out.append({"device": device, "env": env, "points": len(found),
                        "where": env.label.removeprefix(device).removeprefix(" · "),
                        "compiled": int(found["compiling"].astype(bool).sum()),
                        "graph": int(graph.sum()),
                        "eager": int((found["mode"] == BASELINE).sum()),
                        "processes": int(table.loc[table["ok"].eq(True), "processes"].min())
                        if table["ok"].any() else 0})
    return out


def trust(data: Data, difference: float) -> dict[str, Any] | None:
    """How often a case's median moved by more than `difference` from one process to the
    next, over every case measured in two or more processes."""
    spread = analysis.spreads(data.cases)
    if spread.empty:
        return None
    return {"cases": len(spread), "moved": int((spread["spread"] > difference).sum()),
            "median": float(spread["spread"].median()), "difference": difference,
            "environments": int(spread["env_id"].nunique()),
            "workloads": int(spread["workload"].nunique())}


def release_changes(data: Data) -> dict[str, Any] | None:
    """What the newest release changed, from every A/B group that measured it (`ab.release_answer`):
    the figures the changes page and the history page show, or None where no A/B group
    holds two releases (single runs on different hosts are never compared)."""
    return ab.release_answer(data)


def judged(data: Data) -> list[ledger.ClaimResult]:
    """Every claim of report/claims.yaml judged against `data`, once per site build."""
    return ledger.results_for(data)


def verdict_table(data: Data) -> dict[str, Any]:
    """Verdicts per environment label with their regions (`ledger.verdict_table`: each
    row's `where[label]` is `ledger.where` of that verdict), for the home page's summary."""
    return ledger.verdict_table(data, judged(data))


def claim_verdicts(data: Data, claims: list, claim_id: str) -> dict[str, Any] | None:
    """One claim's verdicts grouped by device (`devices`): per device how many environments
    judged it and their verdicts (`verdict_counts`); of the newest release, the environment
    that judged it on the most workloads (`where`), with its verdict, the regions that show
    each answer (`shown`: `_regions_shown`) and how many more the claim's page lists
    (`more`). `scope`: the measured workloads the claim is judged on, and the real models
    among them."""
    found = next((r for r in claims if r.claim.id == claim_id), None)
    if found is None:
        return None
    workloads = ledger.Judge.of(data).workloads(found.claim)
    by_env = {j.env_id: j for j in found.judgements}
    devices = []
    for device, envs in _envs_by_device(data, found.claim.backend).items():
        judged_here = [by_env[e.env_id] for e in _newest(envs) if e.env_id in by_env]
        if not judged_here:
            continue
        # Of the newest release, the environment that judged the claim on the most workloads.
        release = _release(data.environments[judged_here[0].env_id])
        newest = [j for j in judged_here if _release(data.environments[j.env_id]) == release]
        first = max(newest, key=lambda j: len({r.workload for r in j.regions}))
        shown = _regions_shown(first)
        counts = Counter(j.verdict for j in judged_here)
        devices.append({"device": device, "environments": len(judged_here),
                        "verdict_counts": counts.most_common(), "verdict": first.verdict,
                        "where": first.label.removeprefix(device).removeprefix(" · "),
                        "shown": shown, "more": len(first.regions) - len(shown),
                        "reason": first.reason or first.condition})
    return {"id": claim_id, "said": found.claim.paraphrase, "devices": devices,
            "scope": {"backend": found.claim.backend, "training": found.claim.training,
                      "workloads": workloads,
                      "models": [w for w in workloads if w in analysis.MODEL_WORKLOADS]}}


def _regions_shown(j) -> list[dict[str, Any]]:
    """`ledger.shown_regions`, the rule of the claims tables, as {workload, outcome, text}."""
    # The host model's regions stay on the claim's page: a line has no room for them.
    return [{"workload": r.workload, "outcome": r.outcome,
             "text": region_words(dataclasses.replace(r, host_regions=()), j.unit, with_host=False)}
            for r in ledger.shown_regions(j)]


def conditions(data: Data) -> dict[str, Any]:
    """What every GPU figure was measured under, from the CUDA records: torch releases,
    dtypes and, per distinct setting, how many records ran with each TF32 switch
    (`torch.backends.cuda.matmul.allow_tf32`, `torch.backends.cudnn.allow_tf32`) and
    `torch.get_float32_matmul_precision()`."""
    gpu = data.shown[data.shown["backend"] == "cuda"]
    def values(column):
        return sorted({str(v) for v in gpu[column].dropna()})
    settings = ["cuda_matmul_allow_tf32", "cudnn_allow_tf32", "float32_matmul_precision"]
    tf32 = (gpu[settings].astype(object).where(gpu[settings].notna(), "not recorded")
            .astype(str).value_counts().reset_index(name="records"))
    return {"torch": vocabulary.sort_releases({r.split("+")[0] for r in values("torch")}),
            "dtypes": [d.removeprefix("torch.") for d in values("dtype")],
            "tf32": [{"matmul": r["cuda_matmul_allow_tf32"], "cudnn": r["cudnn_allow_tf32"],
                      "precision": r["float32_matmul_precision"], "records": int(r["records"])}
                     for r in tf32.sort_values("records", ascending=False).to_dict("records")],
            "records": len(gpu),
            "devices": sorted({device_of(e) for e in data.envs("cuda")}),
            "measured": not gpu.empty}


LOWER_PRECISION = "bfloat16"
PRECISION_MODE = "reduce-overhead"  # the mode whose lead over eager a lower precision moves most
# The workloads whose move is shown, in order of preference: the language model first, then
# the next one an environment timed in both dtypes, so that a device whose language model's
# two dtypes ran on different hosts still gets a comparison made on one.
MOVED_WORKLOADS = (LANGUAGE_MODEL, "llama-small", "bert-base", VIT_BASE, "vit16x6x384",
                   "vit32x12x768", "vit32x18x1024", "resnet50")


def precision(data: Data) -> dict[str, Any]:
    """What precision each device was measured in, counted from the published table, and per
    device with bfloat16 points how bfloat16 moves one answer: PRECISION_MODE over eager at
    batch 1, float32 against bfloat16 in the same environment (separate processes; `_moves`
    says on which workload). A bfloat16 case that failed keeps its status and reason."""
    table = data.published
    devices = []
    for backend in data.backends:
        for device, envs in _envs_by_device(data, backend).items():
            ids = [e.env_id for e in envs]
            here = table[table["env_id"].isin(ids)]
            if here.empty:
                continue
            dtypes = [_dtype_counts(here, dtype) for dtype in sorted(
                here[analysis.DTYPE].unique(), key=lambda d: (d != analysis.DEFAULT_DTYPE, d))]
            devices.append({"device": device, "backend": backend, "dtypes": dtypes,
                            **_moves(published_rows(data), envs)})
    return {"devices": devices, "lower": LOWER_PRECISION, "mode": PRECISION_MODE,
            "workload": LANGUAGE_MODEL}


def _dtype_counts(here: pd.DataFrame, dtype: str) -> dict[str, Any]:
    of = here[here[analysis.DTYPE] == dtype]
    timed = of[of["ok"].astype(bool)]
    failed = of[~of["ok"].astype(bool)]
    batches = sorted({int(b) for b in of["batch_size"].dropna()})
    return {"dtype": dtype, "cases": len(of), "timed": len(timed),
            "workloads": analysis.ordered(of.drop_duplicates("workload"))["workload"].tolist(),
            "batches": batches, "modes": sorted(set(of["mode"]), key=analysis.mode_rank),
            "failed": _failures(failed)}


def _failures(failed: pd.DataFrame) -> list[dict[str, Any]]:
    """Failed cases grouped by mode, status and the first line of their reason, each workload
    once with its batches ("gpt2-small at batch 1, 8 and 32"): one failure at every batch of six
    workloads would otherwise list eighteen cases."""
    found: dict[tuple, dict[str, list[int]]] = {}
    for r in analysis.rows(analysis.ordered(failed)):
        key = (r["mode"], r["status"], _first_line(r["reason"]))
        batches = found.setdefault(key, {}).setdefault(r["workload"], [])
        if r["batch_size"] is not None:
            batches.append(int(r["batch_size"]))
    return [{"mode": mode, "status": status, "reason": reason,
             "cases": [f"{workload} at batch {_and(sorted(batches))}" if batches else workload
                       for workload, batches in workloads.items()]}
            for (mode, status, reason), workloads in found.items()]


def _and(values: list) -> str:
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _first_line(reason: Any, most: int = 120) -> str | None:
    if not isinstance(reason, str) or not reason:
        return None
    line = reason.strip().splitlines()[0]
    return line if len(line) <= most else line[:most - 1] + "…"


def _moves(published: dict[tuple, dict[str, Any]],
           envs: list[analysis.Environment]) -> dict[str, Any]:
    """PRECISION_MODE over eager at batch 1, float32 against bfloat16, in each environment of
    the device that timed one of MOVED_WORKLOADS in both (the first such, LANGUAGE_MODEL where
    it can), as `moves`, each looked up in `published` (`published_rows`); and, where
    LANGUAGE_MODEL's two dtypes were timed only in different environments of the device,
    which ones (`apart`): those are not compared."""
    def both(env, workload):
        return {dtype: published.get((env.env_id, workload, 1, PRECISION_MODE, dtype))
                for dtype in (analysis.DEFAULT_DTYPE, LOWER_PRECISION)}

    moves = []
    for env in envs:
        found = next((found for found in ((w, both(env, w)) for w in MOVED_WORKLOADS)
                      if all(r is not None for r in found[1].values())), None)
        if found is None:
            continue
        workload, rows = found
        moves.append({"env": env, "where": env.label, "workload": workload, **{
            key: {"ok": bool(r["ok"]), "status": r["status"],
                  "speedup": r["speedup"] if r["ok"] else None,
                  "lo": r["speedup_lo"], "hi": r["speedup_hi"],
                  "processes": int(r["processes"]), "timing": r["timing"]}
            for key, r in (("float32", rows[analysis.DEFAULT_DTYPE]),
                           ("bfloat16", rows[LOWER_PRECISION]))}})
    where = {dtype: [e.label for e in envs if both(e, LANGUAGE_MODEL)[dtype] is not None]
             for dtype in (analysis.DEFAULT_DTYPE, LOWER_PRECISION)}
    paired = any(m["workload"] == LANGUAGE_MODEL for m in moves)
    apart = ({"workload": LANGUAGE_MODEL, "float32": where[analysis.DEFAULT_DTYPE],
              "bfloat16": where[LOWER_PRECISION]} if all(where.values()) and not paired else None)
    return {"moves": moves, "apart": apart}


def answers(data: Data, claims: list) -> list[dict[str, Any]]:
    """The home page's questions, each with its answer's figures (see the module doc)."""
    vit = data.batches(VIT_BASE)
    large = max((b for b in vit if b is not None), default=None)
    def fastest(question: str, workload: str, batch: int | None, backend: str) -> dict:
        """A "fastest" answer in float32, and on a GPU the same question in bfloat16 where
        it was measured (`lower`, empty where not), each from figures of its dtype alone."""
        return {"kind": "fastest", "question": question, "workload": workload, "batch": batch,
                "dtype": analysis.DEFAULT_DTYPE, "parts": fastest_at(data, workload, batch, backend),
                "lower": fastest_at(data, workload, batch, backend, dtype=LOWER_PRECISION)
                if backend == "cuda" else []}

    at_large = 32 if 32 in vit or large is None else large
    parameters = (data.workload_info(LANGUAGE_MODEL) or {}).get("parameters")
    size = f", {formatting.millions(parameters)} parameters" if parameters else ""
    return [
        fastest("A ViT-Base model (ViT-B/16) at batch 1 on a GPU: which mode, and how much "
                "faster than eager?", VIT_BASE, 1, "cuda"),
        fastest(f"The same model at batch {at_large}?", VIT_BASE, at_large, "cuda"),
        fastest(f"A real language model (GPT-2 small{size}) at batch 1 on a GPU?",
                LANGUAGE_MODEL, 1, "cuda"),
        {"kind": "pays", "question": f"I call the model {CALLS_ASKED} times per process: "
         "does compiling pay?", "calls": CALLS_ASKED, "parts": pays_within(data, CALLS_ASKED)},
        fastest("A small MLP on a CPU, one sample at a time?", SMALL_MLP, 1, "cpu"),
        fastest("A chain of element-wise operations on a large tensor, on a CPU?", ELEMENTWISE,
                None, "cpu"),
        fastest("A training step of a small ViT on a GPU (batch 32)?", "train-vit16x6x384", 32,
                "cuda"),
        {"kind": "changes", "question": "What changed in the newest torch release?",
         "found": release_changes(data)},
        {"kind": "trust", "question": "Can I trust a 10% difference between two figures?",
         "found": trust(data, 0.10)},
        {"kind": "claim", "question": "Is \"reduce-overhead gives 2–4× for inference\" true?",
         "found": claim_verdicts(data, claims, CLAIM_RO_2_4X)},
    ]
