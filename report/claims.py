"""Claims people repeat about torch.compile and CUDA graphs, as testable hypotheses.

A claim is data: which cases it is about, which mode it compares with which baseline,
and the speedup (baseline median / mode median) it predicts. The thresholds below are
the claims' own predictions, never measurements; every measured figure on the claims
page comes from the records.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from report import analysis
from report.analysis import Data, Environment, rows

COMPILED = "compiled"  # in Claim.modes: every mode whose traits say it compiles (not dynamic)
# Every family but the launch-overhead microbenchmarks, which compute nothing worth tuning.
COMPUTE_FAMILIES = ("vit", "mlp", "conv", "elementwise", "entropy", "matmul", "matmul-softmax")


@dataclass(frozen=True)
class Claim:
    slug: str
    said: str  # the claim as it circulates, in this project's words
    families: tuple[str, ...] = ()  # workload families it is about (empty: use workloads)
    workloads: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    baseline: str = analysis.BASELINE
    at_least: float | None = None  # it holds where speedup >= at_least ...
    below: float | None = None  # ... or where speedup < below
    largest_only: bool = False  # only the largest workload of its families

    def predicts(self, speedup: float) -> bool:
        if self.at_least is not None:
            return speedup >= self.at_least
        return speedup < self.below


GAIN = 1.0 + analysis.MEANINGFUL_GAIN
CLAIMS = (
    Claim("small-ops-slower",
          "For small operations, a compiled function is slower than eager PyTorch.",
          workloads=("trivial-call", "matmul-128", "matmul-softmax"), modes=(COMPILED,),
          below=1.0),
    Claim("graphs-cut-launch-cost",
          "Replaying kernels from a CUDA graph cuts the cost of each launch about tenfold "
          "(tens of microseconds down to a few).",
          workloads=("launch-chain-1000",), modes=("cuda-graph",), at_least=10.0),
    Claim("vit-advanced-modes",
          "On ViT inference, reduce-overhead and max-autotune make a model 30-40% faster "
          "than eager.",
          families=("vit",), modes=("reduce-overhead", "max-autotune"), at_least=1.3),
    Claim("vit-default-minimal",
          "On ViT inference, torch.compile's default mode brings little or nothing.",
          families=("vit",), modes=("default",), below=GAIN),
    Claim("reduce-overhead-beats-default",
          "reduce-overhead is faster than the default mode, because it adds CUDA graphs.",
          families=COMPUTE_FAMILIES, modes=("reduce-overhead",), baseline="default",
          at_least=GAIN),
    Claim("autotuning-beats-default",
          # Without CUDA graphs on either side, the kernel search is all that differs.
          "max-autotune's kernel search makes a model faster than the default mode.",
          families=COMPUTE_FAMILIES, modes=("max-autotune-no-cudagraphs",), baseline="default",
          at_least=GAIN),
    Claim("large-models-no-gain",
          "Large models gain nothing from torch.compile or CUDA graphs.",
          families=("vit",), largest_only=True,
          modes=("default", "reduce-overhead", "max-autotune", "cuda-graph"), below=GAIN),
)


def claim_modes(claim: Claim, data: Data) -> list[str]:
    compiled = [m for m, t in data.traits.items() if t["compiled"] and not t["dynamic"]]
    return [m for name in claim.modes for m in (compiled if name == COMPILED else [name])]


def claim_workloads(claim: Claim, data: Data) -> list[str]:
    names = [w for w in data.workloads
             if w in claim.workloads or data.family(w) in claim.families]
    if claim.largest_only and names:
        names = [max(names, key=lambda w: (data.workload_info(w) or {}).get("parameters") or 0)]
    return names


def compare(claim: Claim, data: Data) -> list[dict]:
    """Every comparison the claim implies, in every environment (`analysis.compare` rows):
    `holds` is whether it agrees with the claim, `settled` whether every pairing of
    processes does."""
    cases = data.cases[data.cases["workload"].isin(claim_workloads(claim, data))]
    found = [analysis.compare(cases, mode, claim.baseline, at_least=claim.at_least,
                              below=claim.below) for mode in claim_modes(claim, data)]
    found = [f for f in found if not f.empty]
    if not found:
        return []
    return rows(analysis.ordered(pd.concat(found, ignore_index=True), batch_first=True))


def verdict(comparisons: list[dict]) -> str:
    judged = [row["holds"] for row in comparisons if row["holds"] is not None]
    if not judged:
        return "not measured"
    if all(judged):
        return "holds"
    if not any(judged):
        return "does not hold"
    return "holds in part"


def sections(data: Data, by_backend) -> list[dict]:
    """One section per claim: the workloads it covers and its verdict per environment."""
    found = []
    for claim in CLAIMS:
        every = compare(claim, data)

        def build(env: Environment, every=every):
            comparisons = [row for row in every if row["env_id"] == env.env_id]
            if not comparisons:
                return None
            judged = [row for row in comparisons if row["holds"] is not None]
            return {"rows": comparisons, "verdict": verdict(comparisons), "judged": len(judged),
                    "agree": sum(row["holds"] for row in judged),
                    "unsettled": sum(not row["settled"] for row in judged)}

        found.append({"claim": claim, "modes": claim_modes(claim, data),
                      "workloads": claim_workloads(claim, data), "backends": by_backend(build)})
    return found


def verdict_table(data: Data, found: list[dict]) -> dict:
    """Claims by environment label (from `sections`): the summary tables on the site."""
    table = [{"claim": s["claim"],
              "verdicts": {view["env"].label: view["verdict"]
                           for backend in s["backends"] for view in backend["envs"]}}
             for s in found]
    labels = [env.label for backend in data.backends for env in data.envs(backend)]
    return {"rows": table, "labels": labels}
