"""Sets the processes measure.py measured beside what the project's host model predicts at
each one's own probe, against issue 90's criteria: at least 80% inside the predicted band,
and the prediction's centre within 15% of the measured ratio in the median.

For each JSON line it runs, from the repository root,
    python -m bench host --device "<gpu_name>" --op-us <probe_us> --json
and takes the case of the same model at batch 1, float32, mode reduce-overhead. A process
whose case the command does not predict (outside the probes fitted, or no host model)
counts as outside its band: a reader on that host gets no figure. The command reads a copy
of the results without any record of the leases checked (`unseen`): the project's own runs
may later measure the same lease, and the model must not have seen the host it predicts.

Standard library only: it reads the project's predictions through the command, as a
reader would, and imports nothing of bench/ or report/.

    python examples/independent-check/check.py measured.jsonl [more.jsonl ...] [--json]

Exit status: 0 when both criteria are met, 1 when not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSIDE_GOAL, CENTRE_GOAL = 0.80, 0.15  # issue 90's "Done when"
CASE = {"batch_size": 1, "dtype": "float32", "mode": "reduce-overhead"}
NEEDED = ("model", "gpu_name", "probe_us", "ratio", "torch", "boot_id")


class BadInput(Exception):
    pass


def read_lines(paths: list[Path]) -> list[dict]:
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise BadInput(f"cannot read {path}: {error.strerror}") from error
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            where = f"{path}:{number}"
            try:
                line = json.loads(raw)
            except json.JSONDecodeError as error:
                raise BadInput(f"{where}: not JSON ({error.msg})") from error
            if not isinstance(line, dict) or line.get("schema") != "independent-check/1":
                raise BadInput(f"{where}: not a line measure.py wrote (schema independent-check/1)")
            missing = [key for key in NEEDED if line.get(key) is None]
            if missing:
                raise BadInput(f"{where}: no {', '.join(missing)}")
            if line.get("tiny") or line.get("compile_mode") != "reduce-overhead":
                raise BadInput(f"{where}: a smoke-test line (--tiny or another compile backend), "
                               f"not a measurement to check")
            found.append(line | {"where": where})
    if not found:
        raise BadInput("no measured line in the files given")
    return found


def unseen(results: Path, boot_ids: set[str], into: Path) -> Path:
    """A copy of the results folder `results` under `into` without a record of the leases
    checked (their boot ids), so that the host model predicts hosts it has not seen, even
    where the project's own runs later measured the same lease. Other lines are copied as
    they are."""
    for source in sorted([*results.rglob("*.jsonl"), *results.rglob("*.jsonl.gz")]):
        if not source.is_file():
            continue
        opener = gzip.open if source.name.endswith(".gz") else open
        target = into / source.relative_to(results).with_name(source.name.removesuffix(".gz"))
        target.parent.mkdir(parents=True, exist_ok=True)
        with opener(source, "rt", encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as kept:
            for raw in lines:
                try:
                    boot_id = (json.loads(raw).get("host") or {}).get("boot_id")
                except (json.JSONDecodeError, AttributeError):
                    boot_id = None
                if boot_id not in boot_ids:
                    kept.write(raw)
    return into


def predictions(device: str, op_us: float, results: Path) -> dict:
    """What `python -m bench host --json` predicts for `device` at `op_us`."""
    command = [sys.executable, "-m", "bench", "host", "--device", device, "--op-us", repr(op_us),
               "--json", "--results", str(results)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BadInput(f"`{' '.join(command[1:])}` exited {done.returncode}: {last}")
    return json.loads(done.stdout)


def the_case(answer: dict, line: dict) -> dict | None:
    """The case of the line's model at batch 1, float32, reduce-overhead: of several (one
    per environment), the one measured with the line's torch, else the one fitted on the
    most processes."""
    cases = [case for case in answer["cases"] if case["workload"] == line["model"]
             and all(case[key] == value for key, value in CASE.items())]
    if not cases:
        return None
    same_torch = [case for case in cases if case["torch"] == line["torch"]]
    return max(same_torch or cases, key=lambda case: case["processes"] or 0)


def judge(line: dict, case: dict | None) -> dict:
    """One process against its prediction: inside the band or not, and the centre's error."""
    verdict = {"where": line["where"], "model": line["model"], "gpu_name": line["gpu_name"],
               "lease": f"{line.get('hostname')}/{line['boot_id']}", "probe_us": line["probe_us"],
               "measured": line["ratio"], "torch": line["torch"], "status": "no host model",
               "predicted": None, "low": None, "high": None, "inside": False,
               "centre_error": None, "model_torch": None}
    if case is None:
        return verdict
    verdict.update(status=case["status"], model_torch=case["torch"])
    if case["status"] != "predicted":
        return verdict
    high = float("inf") if case["high"] is None else case["high"]
    measured = line["ratio"]
    verdict.update(predicted=case["speedup"], low=case["low"], high=case["high"],
                   inside=case["low"] <= measured <= high,
                   centre_error=abs(case["speedup"] - measured) / measured)
    return verdict


def summary(verdicts: list[dict]) -> dict:
    inside = sum(v["inside"] for v in verdicts)
    errors = [v["centre_error"] for v in verdicts if v["centre_error"] is not None]
    share = inside / len(verdicts)
    centre = statistics.median(errors) if errors else None
    return {"processes": len(verdicts), "inside": inside, "inside_share": share,
            "inside_goal": INSIDE_GOAL, "predicted": len(errors),
            "median_centre_error": centre, "centre_goal": CENTRE_GOAL,
            "leases": len({v["lease"] for v in verdicts}),
            "met": share >= INSIDE_GOAL and centre is not None and centre <= CENTRE_GOAL,
            "verdicts": verdicts}


def text(found: dict) -> str:
    rows = []
    for v in found["verdicts"]:
        if v["predicted"] is None:
            against = f"not predicted ({v['status']})"
        else:
            high = "unbounded" if v["high"] is None else f"{v['high']:.2f}x"
            against = (f"predicted {v['predicted']:.2f}x ({v['low']:.2f}x-{high}): "
                       f"{'inside' if v['inside'] else 'OUTSIDE'}, centre off by {v['centre_error']:.0%}")
        torch_note = "" if v["model_torch"] in (None, v["torch"]) else \
            f" [measured on torch {v['torch']}, model fitted on {v['model_torch']}]"
        rows.append(f"  {v['model']} on {v['gpu_name']}, lease {v['lease'][:40]}, "
                    f"{v['probe_us']:.2f} us per eager op: measured {v['measured']:.2f}x; "
                    f"{against}{torch_note}")
    centre = found["median_centre_error"]
    centre_text = "no process predicted" if centre is None else \
        f"{centre:.1%} over {found['predicted']} predicted processes"
    rows += [f"inside the band: {found['inside']} of {found['processes']} processes "
             f"({found['inside_share']:.0%}; goal at least {INSIDE_GOAL:.0%}), "
             f"{found['leases']} leases",
             f"median |centre - measured| / measured: {centre_text} (goal at most {CENTRE_GOAL:.0%})",
             "criteria met" if found["met"] else "criteria NOT met"]
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lines", nargs="+", type=Path, help="JSON Lines files measure.py wrote")
    parser.add_argument("--results", type=Path, default=REPO / "results",
                        help="the records the host model is fitted on (default: the repository's)")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    args = parser.parse_args(argv)
    try:
        lines = read_lines(args.lines)
        asked: dict[tuple, dict] = {}  # one command per device and probe
        verdicts = []
        with tempfile.TemporaryDirectory(prefix="independent-check-") as folder:
            results = unseen(args.results.resolve(), {line["boot_id"] for line in lines},
                             Path(folder))
            for line in lines:
                key = (line["gpu_name"], line["probe_us"])
                if key not in asked:
                    asked[key] = predictions(*key, results)
                verdicts.append(judge(line, the_case(asked[key], line)))
    except BadInput as error:
        print(f"check.py: error: {error}", file=sys.stderr)
        return 2
    found = summary(verdicts)
    print(json.dumps(found, indent=1, sort_keys=True) if args.json else text(found))
    return 0 if found["met"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
