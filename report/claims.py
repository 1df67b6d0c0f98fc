"""Claims people repeat about torch.compile and CUDA graphs, as testable hypotheses.

A claim is data: which cases it is about, which mode it compares with which baseline,
and the speedup (baseline median / mode median) it predicts. The thresholds below are
the claims' own predictions, never measurements; every measured figure on the claims
page comes from the records.
"""

from __future__ import annotations

from dataclasses import dataclass

from report import metrics
from report.dataset import Dataset, Environment
from report.load import Result

COMPILED_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# Every family but the launch-overhead microbenchmarks, which compute nothing worth tuning.
COMPUTE_FAMILIES = ("vit", "mlp", "conv", "elementwise", "entropy", "matmul", "matmul-softmax")


@dataclass(frozen=True)
class Claim:
    slug: str
    said: str  # the claim as it circulates, in this project's words
    families: tuple[str, ...] = ()  # workload families it is about (empty: use workloads)
    workloads: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    baseline: str = "eager"
    at_least: float | None = None  # it holds where speedup >= at_least ...
    below: float | None = None  # ... or where speedup < below
    largest_only: bool = False  # only the largest workload of its families

    def predicts(self, speedup: float) -> bool:
        if self.at_least is not None:
            return speedup >= self.at_least
        return speedup < self.below


CLAIMS = (
    Claim("small-ops-slower",
          "For small operations, a compiled function is slower than eager PyTorch.",
          workloads=("trivial-call", "matmul-128", "matmul-softmax"), modes=COMPILED_MODES,
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
          families=("vit",), modes=("default",), below=1.0 + metrics.MEANINGFUL_GAIN),
    Claim("reduce-overhead-beats-default",
          "reduce-overhead is faster than the default mode, because it adds CUDA graphs.",
          families=COMPUTE_FAMILIES,
          modes=("reduce-overhead",), baseline="default",
          at_least=1.0 + metrics.MEANINGFUL_GAIN),
    Claim("autotuning-beats-default",
          # Without CUDA graphs on either side, the kernel search is all that differs.
          "max-autotune's kernel search makes a model faster than the default mode.",
          families=COMPUTE_FAMILIES, modes=("max-autotune-no-cudagraphs",), baseline="default",
          at_least=1.0 + metrics.MEANINGFUL_GAIN),
    Claim("large-models-no-gain",
          "Large models gain nothing from torch.compile or CUDA graphs.",
          families=("vit",), largest_only=True,
          modes=("default", "reduce-overhead", "max-autotune", "cuda-graph"),
          below=1.0 + metrics.MEANINGFUL_GAIN),
)


@dataclass(frozen=True)
class Comparison:
    workload: str
    batch: int | None
    mode: str
    baseline: Result | None
    result: Result | None
    speedup: float | None
    agrees: bool | None  # None: not both measured
    # A repeated measurement of either side (another tag) gives the other answer.
    flips_on_rerun: bool = False


def claim_workloads(claim: Claim, data: Dataset) -> list[str]:
    names = [w for w in data.workloads
             if w in claim.workloads or data.family(w) in claim.families]
    if claim.largest_only and names:
        names = [max(names, key=lambda w: (data.workload_info(w) or {}).get("parameters") or 0)]
    return names


def compare(claim: Claim, data: Dataset, env: Environment) -> list[Comparison]:
    rows = []
    for workload in claim_workloads(claim, data):
        for batch in data.batches(workload):
            baseline = data.get(env.env_id, workload, claim.baseline, batch)
            for mode in claim.modes:
                result = data.get(env.env_id, workload, mode, batch)
                if result is None and baseline is None:
                    continue
                speedup = metrics.speedup(baseline, result)
                agrees = None if speedup is None else claim.predicts(speedup)
                rows.append(Comparison(
                    workload, batch, mode, baseline, result, speedup, agrees,
                    agrees is not None and rerun_disagrees(claim, data, env, workload, mode,
                                                           batch, agrees)))
    return rows


def rerun_disagrees(claim: Claim, data: Dataset, env: Environment, workload: str, mode: str,
                    batch: int | None, agrees: bool) -> bool:
    """Whether pairing a rerun of either side (another tag) with the other side's runs
    gives the answer opposite to `agrees`: the rerun is as much a draw as `main`."""
    def runs(of_mode: str) -> list[Result]:
        main = data.get(env.env_id, workload, of_mode, batch)
        return [r for r in (main, *data.repeats(env.env_id, workload, of_mode, batch)) if r]

    return any(claim.predicts(s) != agrees for b in runs(claim.baseline) for r in runs(mode)
               if (s := metrics.speedup(b, r)) is not None)


def verdict(rows: list[Comparison]) -> str:
    judged = [row.agrees for row in rows if row.agrees is not None]
    if not judged:
        return "not measured"
    if all(judged):
        return "holds"
    if not any(judged):
        return "does not hold"
    return "holds in part"
