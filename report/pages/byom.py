"""Bring your own model: how to measure a model of one's own, the worked example, and for
every such model in the records ("external" workloads) the guide's recommendation at
each measured point, by the same rules as the guide (report/guide_rules.py)."""

from __future__ import annotations

from pathlib import Path

from report import guide_rules
from report.analysis import EXTERNAL_FAMILY, Environment, rows
from report.markdown_text import Markdown
from report.site import Site

EXAMPLE_SPEC = "examples.byom.tiny_models:factory"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "byom" / "tiny_models.py"
PAGE = "analysis/bring-your-own-model.md"


def run_times(data) -> list[dict]:
    """Per backend: how long measuring one model at one batch size takes, from the records'
    own durations: the median case of each mode (its child process from start to record)
    summed over the modes, with the number of modes and of cases it rests on."""
    timed = data.shown[data.shown["duration_s"].notna()]
    out = []
    for backend in data.backends:
        here = timed[timed["backend"] == backend]
        if here.empty:
            continue
        per_mode = here.groupby("mode")["duration_s"].median()
        out.append({"backend": backend, "seconds": float(per_mode.sum()),
                    "modes": len(per_mode), "cases": len(here)})
    return out


def render(site: Site) -> None:
    data = site.data
    models = [w for w in data.workloads if data.family(w) == EXTERNAL_FAMILY]
    cases = data.cases[data.cases["workload"].isin(models)]
    recs, _ = guide_rules.for_workloads(data.cases, models, data.published)

    def model_view(workload: str) -> list[dict]:
        def build(env: Environment):
            here = recs[(recs["env_id"] == env.env_id) & (recs["workload"] == workload)]
            if here.empty:
                return None
            of = cases[(cases["env_id"] == env.env_id) & (cases["workload"] == workload)]
            return {"points": [{"batch_size": r["batch_size"], "rec": r["recommendation"]}
                               for r in rows(here)],
                    "others": int((data.cases["env_id"] == env.env_id).sum() - len(of)),
                    "tolerance": of["tolerance"].dropna().max() if of["tolerance"].notna().any()
                    else None,
                    "failed": rows(of[~of["ok"]])}
        return site.by_backend(build)

    site.page(PAGE, "byom.md.j2", spec=EXAMPLE_SPEC, family=EXTERNAL_FAMILY,
              # The project's own example file, shown as it is in a code block.
              example=(Markdown(EXAMPLE.read_text(encoding="utf-8")) if EXAMPLE.is_file()
                       else None),
              models=[{"workload": w, "info": data.workload_info(w), "backends": model_view(w)}
                      for w in models],
              leaves=guide_rules.LEAVES, run_times=run_times(data))
