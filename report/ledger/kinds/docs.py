"""What PyTorch documents each mode to set (report/mode-options.yaml, read from the wheel
of each release): a claim of the documentation is judged on the options of the
environment's own torch release. With a baseline, the mode's options must be exactly the
baseline's plus `option`; without, `option` must be on."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from report.ledger.comparison import Comparison, judged
from report.ledger.schema import mode_problems

OPTIONS = Path(__file__).resolve().parents[2] / "mode-options.yaml"
WORDS = "whether torch's list_mode_options() for {mode} sets {option}"


def problems(test: dict) -> list[str]:
    if not isinstance(test.get("option"), str) or not test["option"]:
        return ["mode-option needs `option`, the Inductor option the documentation names"]
    return mode_problems(test, "baseline") if "baseline" in test else []


@cache
def documented(path: Path = OPTIONS) -> dict[str, dict[str, dict]]:
    """Per release ("2.15"), per mode, the options torch documents."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["releases"]


def release(torch_version: str) -> str:
    return ".".join(torch_version.split("+")[0].split(".")[:2])


def option(judge, here, env_id, test, agrees) -> list[Comparison]:
    env = judge.data.environments[env_id]
    version = release(env.field("torch"))
    comparison = Comparison(workload=f"torch {version} mode options", batch=None, axis="batch",
                            family="documentation", flops=None,
                            evidence=("analysis/claims/rules.md", "the-documentation"))
    modes = documented().get(version)
    if modes is None or test.mode not in modes:
        comparison.note = f"the mode options of torch {version} were not read"
        return [comparison]
    mine = modes[test.mode]
    if test.baseline:
        figure = mine == {**modes.get(test.baseline, {}), test.option: True}
    else:
        figure = mine.get(test.option) is True
    comparison.figure, comparison.n = float(figure), 1  # a document: no processes
    judged(comparison, [float(figure)], agrees)
    return [comparison]
