"""Spread across processes and leases: which figures carry over to another process or
another machine of the same type, and which depend on the host they were measured on.

The page sums each environment up; the cases behind each summary are on one page per
environment (listing every case on one page outgrew 300 KB of HTML as the paired GPU
profiles filled in)."""

from __future__ import annotations

import re

import pandas as pd

from bench.host import model as host_model
from report import analysis
from report.analysis import Environment, host, of_env, ordered, processes, rows
from report.releases import ab
from report.site import Site

PAGE = "analysis/stability.md"
SECTIONS = ("cross_lease", "paired_isolated", "spread", "unstable", "host_model")

AGREE = 0.02  # paired and isolated times of a device-bound case should agree this closely
# The worst few unstable processes per environment make the point; the count says how many
# more there are, and every process is on the environment's all-results page.
UNSTABLE_SHOWN = 20
# Likewise the cases whose process medians moved most.
SPREAD_SHOWN = 40


def env_page(env_id: str) -> str:
    return f"analysis/stability/{env_id}.md"


def cpu_page(env_id: str) -> str:
    """A CPU environment's cases timed both isolated and paired: a page of its own, since
    with page faults and two-mode groups it would take the environment's page past 300 KB."""
    return f"analysis/stability/{env_id}-paired.md"


def _by_case(table: pd.DataFrame) -> list[dict]:
    """One entry per case, its leases in order: the cross-lease table's rows."""
    out = []
    for _, group in table.groupby([*analysis.CASE], dropna=False, sort=False):
        first = rows(group.head(1))[0]
        out.append({**first, "leases": rows(group.sort_values("number", kind="stable"))})
    return out


def _transfer_summary(table: pd.DataFrame) -> list[dict]:
    """Per ratio class: cases, how many paired ratios and isolated medians stay within
    analysis.TRANSFERS across leases, and the median move of each."""
    per_case = table.drop_duplicates(analysis.CASE)
    per_case = per_case[per_case["mode"] != analysis.BASELINE]
    out = []
    for bound, group in per_case.groupby("ratio_bound", sort=True):
        ratio = group["speedup_move"].dropna()
        median = group["median_move"].dropna()
        out.append({"bound": bound, "cases": len(group),
                    "ratio_transfers": int((ratio <= analysis.TRANSFERS).sum()),
                    "ratio_cases": len(ratio), "ratio_move": ratio.median() if len(ratio) else None,
                    "median_transfers": int((median <= analysis.TRANSFERS).sum()),
                    "median_cases": len(median),
                    "median_move": median.median() if len(median) else None})
    return out


# The case's own runs and every A/B group's sides: a release compared in an A/B group rests on
# its paired processes there, which may disagree with its isolated ones as the main run's may.
AGREEMENT_TAGS = re.compile(rf"{analysis.PROCESS_TAGS.pattern}|^ab-.+$")


def cpu_agreement(data: analysis.Data) -> list[dict]:
    """Per CPU environment with paired processes: every case timed both ways on one lease,
    its isolated and paired medians (`analysis.paired_against_isolated`), and how many
    agree within MOVED: a CPU figure one process cannot carry shows here first."""
    table = analysis.paired_against_isolated(analysis.latest(data.records), data.cases,
                                             AGREEMENT_TAGS)
    out = []
    for env in sorted((e for e in data.environments.values() if e.backend == "cpu"),
                      key=lambda e: e.label):
        here = of_env(table, env.env_id)
        if len(here):
            out.append({"env": env, "rows": rows(here), "cases": len(here),
                        "within": int((here["agreement"].abs() <= analysis.MOVED).sum()),
                        "two_modes": int(here["two_modes"].notna().sum())})
    return out


def _agreement_summary(table: pd.DataFrame) -> list[dict]:
    out = []
    for bound, group in table.groupby("bound", sort=True):
        size = group["agreement"].abs()
        out.append({"bound": bound, "cases": len(group), "within": int((size <= AGREE).sum()),
                    "median": size.median(), "largest": size.max()})
    return out


def _numbered(checks: pd.DataFrame, leases: pd.DataFrame) -> pd.DataFrame:
    """Checks with their lease's ordinal among the environment's leases (`number`; none for
    a lease measured under another tag only, such as a slowed host)."""
    found = checks.merge(leases[["env_id", "lease", "number"]], on=["env_id", "lease"], how="left")
    return ordered(found, "number", batch_first=True).reset_index(drop=True)


def _host_model(data, env: Environment, leases: pd.DataFrame, held_out: pd.DataFrame,
                slowed: pd.DataFrame) -> dict | None:
    """The host model's section: the fitted lines, the speedups they predict, and the
    predictions set against a held-out lease and against slowed hosts (`held_out` and
    `slowed`: every environment's checks, as report.analysis.host gives them)."""
    modelled = of_env(host.models(data), env.env_id)
    if modelled.empty:
        return None
    held = _numbered(of_env(held_out, env.env_id), leases)
    slowed = _numbered(of_env(slowed, env.env_id), leases)
    return {"fits": rows(of_env(host.fits(data), env.env_id)),
            "models": host.page_rows(data, env.env_id),
            "held_out": rows(held), "held_summary": host.summary(held),
            "held_by_case": host.coverage_by_case(held),
            "slowed": rows(slowed), "slowed_summary": host.summary(slowed),
            "not_predictable": rows(host.not_predictable(slowed)),
            "time_sliced": host.time_sliced(slowed),
            "extrapolated_misses": host.extrapolated_misses(slowed),
            "slowed_unmeasured": rows(host.unchecked(modelled, slowed))}


def render(site: Site) -> None:
    data = site.data
    repeated = analysis.spreads(data.cases)
    procs = processes(data.shown)
    procs = procs[procs["ok"]].assign(ratio=lambda d: d["iqr_s"] / d["median_s"])
    across = analysis.across_leases(data.records, data.speedups)
    leases = analysis.leases(data.records)
    agreement = analysis.paired_against_isolated(analysis.latest(data.records), data.cases)
    held_out, slowed = host.held_out(data), host.slowed(data)
    on_cpu = {a["env"].env_id: a for a in cpu_agreement(data)}
    for env_id, a in on_cpu.items():
        site.page(cpu_page(env_id), "stability-paired-cpu.md.j2", a=a, moved=analysis.MOVED)

    def spread(env: Environment):
        here = of_env(repeated, env.env_id)
        if here.empty:
            return None
        widest = here["spread"].reset_index(drop=True).sort_values(
            ascending=False, kind="stable").head(SPREAD_SHOWN).index
        return {"rows": rows(here.iloc[sorted(widest)]), "cases": len(here),
                "summary": analysis.move_summary(here), "by_mode": rows(analysis.by_mode(here))}

    def unstable(env: Environment):
        here = of_env(procs, env.env_id)
        if here.empty:
            return None
        flagged = here[here["ratio"] > analysis.UNSTABLE_IQR_RATIO]
        flagged = ordered(flagged, "tag", "repeat").sort_values("ratio", ascending=False,
                                                                kind="stable")
        return {"rows": rows(flagged.head(UNSTABLE_SHOWN)), "flagged": len(flagged),
                "timed": len(here)}

    def cross_lease(env: Environment):
        here = of_env(across, env.env_id)
        if here.empty:
            return None
        return {"cases": _by_case(here), "summary": _transfer_summary(here),
                "leases": rows(of_env(leases, env.env_id))}

    def paired_isolated(env: Environment):
        here, cpu = of_env(agreement, env.env_id), on_cpu.get(env.env_id)
        if here.empty:  # an environment of A/B runs alone: the methodology page links its page
            return None
        if cpu is not None:  # the CPU's own page has these rows and more
            cpu = {**cpu, "page": cpu_page(env.env_id).removeprefix("analysis/stability/")}
        return {"rows": rows(here), "summary": _agreement_summary(here), "cpu": cpu}

    compared = ab.site_other_runs(data)
    against = ab.speedups_against_other_runs(compared)

    def other_runs(env: Environment):
        here = of_env(compared, env.env_id)
        if here.empty:
            return None
        speedups = of_env(against, env.env_id)
        return {"latencies": rows(here[here["beyond"]]), "compared": len(here),
                "groups": sorted(set(here["group"])),
                "speedups": rows(speedups[speedups["beyond"]]), "speedups_compared": len(speedups)}

    def sections(env: Environment) -> dict | None:
        found = {"other_runs": other_runs(env),
                 "cross_lease": cross_lease(env), "paired_isolated": paired_isolated(env),
                 "spread": spread(env), "unstable": unstable(env),
                 "host_model": _host_model(data, env, leases, held_out, slowed)}
        if all(view is None for view in found.values()):
            return None
        site.page(env_page(env.env_id), "stability-env.md.j2", env=env, **found,
                  coverage_goal=host.COVERAGE_GOAL, moved=analysis.MOVED,
                  transfers=analysis.TRANSFERS, agree=AGREE, band=host_model.BAND,
                  least=host_model.MIN_PROCESSES, slowed_tag=host_model.SLOWED_TAG,
                  near=host_model.NEAR)
        return found

    found = {env.env_id: sections(env) for backend in site.data.backends
             for env in site.data.envs(backend)}

    def section(name: str):
        def view(env: Environment) -> dict | None:
            shown = (found[env.env_id] or {}).get(name)
            if shown is None:
                return None
            return {**shown, "page": env_page(env.env_id).removeprefix("analysis/")}
        return site.by_backend(view)

    site.page(PAGE, "stability.md.j2", **{name: section(name) for name in SECTIONS},
              held_overall=host.summary(held_out),
              held_by_gpu=host.coverage_by_gpu(held_out), coverage_goal=host.COVERAGE_GOAL,
              estimators=host.estimator_comparison(host.of(data)),
              fresh=host.fresh_check(host.of(data)), fresh_cutoff=host.FRESH_CUTOFF,
              fresh_leases=len(host.of(data).fresh_leases),
              slowed_overall=host.summary(slowed),
              transfers=analysis.TRANSFERS, agree=AGREE, band=host_model.BAND,
              least=host_model.MIN_PROCESSES, slowed_tag=host_model.SLOWED_TAG, near=host_model.NEAR)
