"""The analysis layer: every record in one DataFrame, and the table operations pages need.

Records are read through `bench.records`, the one definition of a record, and each
becomes one row with flattened columns: a section's fields keep their own names
(`median_s`, `cold_first_call_s`, `busy_fraction`, `machine`, `repeat`, `compiled`, ...),
so a field added to a record appears here as a column without any change. Two names
change: `ModeTraits.description` becomes `mode_description` (`description` is the
workload's) and `WarmupCurve.latencies_s` becomes `warmup_s`.

The layers, each a function of the one before:

- `load(results_dir)`: every record, one row each, with `source` ("file:line").
- `latest(records)`: what the site shows: seed shapes only, and of a process measured
  twice (same case, tag and repeat index) the newest record.
- `cases(latest)`: one row per case (env, workload, mode, batch, shapes). A case's
  processes are its records under tag `main` and `rerun-N` (v1 reruns were exactly
  that: the same case in another process) and every repeat of a v2 run. The published
  figure is the median of the per-process medians (`median_s`), with their minimum and
  maximum (`lo_s`, `hi_s`) and their number (`n_processes`).
  Records under any other tag are not processes of the case: `alone` and `busy` hold
  the concurrency check's subset, measured with one worker with the host's other GPUs
  idle and busy, and set against each other and against the case's processes by
  `concurrency`.
- `compare`, `spreads`, `crossovers`, `compile_summary`, `boundedness`,
  `concurrency`: derived tables, each documented where it is defined.

Nothing here lists modes or their traits: they come from the records' `mode_traits`
columns. Workloads follow the registry's order (`workload_rank`).
"""

from __future__ import annotations

from report.analysis.bundle import (
    UNPROFILED,
    Data,
)
from report.analysis.choice import (
    CALLS_ANSWERED,
    CALLS_STEPS,
    CHOICE,
    calls_step,
    choose,
    chosen_in,
)
from report.analysis.derived import (
    TRAITS,
    TRANSFERS,
    TRIVIAL,
    across_leases,
    boundedness,
    break_even,
    break_even_calls,
    by_mode,
    chains,
    compare,
    compile_summary,
    concurrency,
    crossovers,
    graph_pairs,
    headline_per_kernel,
    leases,
    mode_with,
    modes_traits,
    move_summary,
    one_timing,
    paired_against_isolated,
    per_kernel,
    probe_value,
    probes,
    ranges_overlap,
    run_costs,
    speedups,
    spreads,
    two_modes,
    with_break_even,
)
from report.analysis.environment import (
    Environment,
    environments,
)
from report.analysis.loading import (
    COLUMNS,
    PROCESS,
    ROWS_CACHE,
    ROWS_CACHE_DAYS,
    TIE_RULE,
    _is_section,
    frame,
    load,
    load_file,
)
from report.analysis.ordering import (
    _plain,
    by_env,
    env_rows,
    mode_rank,
    of_env,
    ordered,
    rows,
    workload_rank,
)
from report.analysis.published import (
    FIGURES,
    PUBLISHED_LATENCY,
    PUBLISHED_RULE,
    published,
    published_cases,
    publishes_paired,
    row_of,
)
from report.analysis.shown import (
    ISOLATED,
    LATENCY,
    RATIO_BOUND,
    SAVING,
    bound_of,
    built_headers,
    cases,
    counted_cold,
    fixed_seed,
    isolated,
    kept_beside_header_builds,
    latest,
    lease_of,
    paired_latencies,
    paired_processes,
    paired_speedups,
    probe_us,
    processes,
    ratio_bound,
    round_ratios,
    shown_round_ratios,
    side_bound,
    with_paired,
    with_paired_latencies,
    without_header_builds,
)
from report.analysis.vocabulary import (
    ALONE_TAG,
    BACKENDS,
    BASELINE,
    BUSY_TAG,
    CASE,
    CONCURRENT_SIDES,
    DEFAULT_DTYPE,
    DEVICE_BOUND,
    DTYPE,
    ENV_FIELDS,
    EXTERNAL_FAMILY,
    LAUNCH_BOUND,
    MEANINGFUL_GAIN,
    MODE_ORDER,
    MODEL_FAMILY,
    MODEL_WORKLOADS,
    MOVED,
    NEVER,
    OUTLIER_SPREAD,
    PAIRED_BASELINES,
    POINT,
    PROCESS_TAGS,
    RENAMED,
    SHOWN_SHAPES,
    UNSTABLE_IQR_RATIO,
    WORKLOAD_ORDER,
    ResultsError,
    outlier,
)

# Every name other modules import from `report.analysis`, whichever module defines it.
__all__ = [
    'UNPROFILED', 'Data', 'CALLS_ANSWERED', 'CALLS_STEPS', 'CHOICE', 'calls_step', 'choose', 'chosen_in',
    'TRAITS', 'TRANSFERS', 'TRIVIAL', 'across_leases', 'boundedness', 'break_even',
    'break_even_calls', 'by_mode', 'chains', 'compare', 'compile_summary', 'concurrency',
    'crossovers', 'graph_pairs', 'headline_per_kernel', 'leases', 'mode_with',
    'modes_traits', 'move_summary', 'one_timing', 'paired_against_isolated', 'per_kernel', 'probe_value',
    'probes', 'ranges_overlap', 'run_costs', 'speedups', 'spreads', 'two_modes', 'with_break_even',
    'Environment', 'environments', 'COLUMNS', 'PROCESS', 'ROWS_CACHE', 'ROWS_CACHE_DAYS',
    'TIE_RULE', '_is_section', 'frame', 'load', 'load_file', '_plain', 'by_env', 'mode_rank',
    'env_rows', 'of_env', 'ordered', 'rows', 'workload_rank', 'FIGURES', 'PUBLISHED_LATENCY',
    'PUBLISHED_RULE',
    'published', 'published_cases', 'publishes_paired', 'row_of', 'ISOLATED', 'isolated',
    'LATENCY', 'RATIO_BOUND',
    'SAVING', 'bound_of', 'built_headers', 'cases', 'counted_cold', 'fixed_seed', 'kept_beside_header_builds',
    'latest', 'lease_of',
    'paired_latencies', 'paired_processes',
    'probe_us',
    'paired_speedups', 'processes', 'ratio_bound', 'round_ratios', 'shown_round_ratios',
    'side_bound', 'with_paired', 'with_paired_latencies', 'without_header_builds',
    'ALONE_TAG', 'BACKENDS', 'BASELINE',
    'BUSY_TAG', 'CASE', 'CONCURRENT_SIDES', 'DEFAULT_DTYPE', 'DEVICE_BOUND', 'DTYPE', 'ENV_FIELDS',
    'EXTERNAL_FAMILY', 'LAUNCH_BOUND', 'MEANINGFUL_GAIN', 'MODE_ORDER', 'MODEL_FAMILY',
    'MODEL_WORKLOADS', 'MOVED', 'NEVER', 'OUTLIER_SPREAD', 'PAIRED_BASELINES', 'POINT',
    'PROCESS_TAGS', 'RENAMED', 'SHOWN_SHAPES', 'UNSTABLE_IQR_RATIO', 'WORKLOAD_ORDER',
    'ResultsError', 'outlier',
]
