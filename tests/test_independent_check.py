"""The independent host check (examples/independent-check/): its timing code shares nothing
with the project's, its measuring path runs, and its verdict is the one `python -m bench host`
gives at each process's probe."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "examples" / "independent-check"
H100, TORCH = "NVIDIA H100 80GB HBM3", "2.11.0+cu130"  # the fitted environment
ALLOWED = {"measure.py": {"torch", "transformers"}, "check.py": set()}


def imported_roots(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
              and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__")):
            found.add("<dynamic import>")
    return found


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_the_check_imports_only_torch_transformers_and_the_standard_library(name):
    foreign = imported_roots(FOLDER / name) - set(sys.stdlib_module_names) - ALLOWED[name]
    assert not foreign, f"{name} imports {sorted(foreign)}: it must share no code with the project"


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    if check:
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done


@pytest.mark.slow
@pytest.mark.parametrize("model", ["gpt2-small", "bert-base", "llama-small"])
def test_a_tiny_cpu_process_writes_one_line_of_paired_rounds(model, tmp_path):
    pytest.importorskip("transformers")
    out = tmp_path / "measured.jsonl"
    # aot_eager: the whole path without Inductor's C++ compile, which takes minutes on 2 cores.
    printed = run(str(FOLDER / "measure.py"), "--model", model, "--device", "cpu", "--tiny",
                  "--compile-backend", "aot_eager", "--rounds", "3", "--warmup", "1",
                  "--block-s", "0.005", "--probe-block-s", "0.002", "--out", str(out)).stdout
    (line,) = [json.loads(raw) for raw in out.read_text().splitlines()]
    assert json.loads(printed.strip().splitlines()[-1]) == line
    assert (line["model"], line["tiny"], line["batch_size"], line["dtype"]) == (model, True, 1, "float32")
    assert len(line["eager_round_s"]) == len(line["compiled_round_s"]) == len(line["probe_round_us"]) == 3
    assert line["ratio"] == pytest.approx(line["eager_s"] / line["compiled_s"])
    assert line["probe_us"] > 0 and line["relative_error"] <= 1e-3
    assert line["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def bench_host(op_us: float) -> dict:
    return json.loads(run("-m", "bench", "host", "--device", H100, "--op-us", repr(op_us),
                          "--json").stdout)


def gpt2_case(answer: dict) -> dict:
    (case,) = [c for c in answer["cases"] if c["workload"] == "gpt2-small" and c["batch_size"] == 1
               and c["dtype"] == "float32" and c["mode"] == "reduce-overhead"
               and c["torch"] == TORCH]
    return case


def fixture_line(ratio: float, probe_us: float, boot: str) -> dict:
    """A line as measure.py writes it, with made-up figures: the test's input, not a result."""
    return {"schema": "independent-check/1", "model": "gpt2-small", "tiny": False,
            "compile_mode": "reduce-overhead", "gpu_name": H100, "torch": TORCH,
            "hostname": "fixture", "boot_id": boot, "probe_us": probe_us, "ratio": ratio}


def check(tmp_path: Path, lines: list[dict]) -> tuple[int, dict]:
    path = tmp_path / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = run(str(FOLDER / "check.py"), str(path), "--json", check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_check_judges_each_process_by_bench_hosts_band_at_its_own_probe(tmp_path):
    probe_range = gpt2_case(bench_host(8.0))
    inside_probe = (probe_range["probe_lo_us"] + probe_range["probe_hi_us"]) / 2
    case = gpt2_case(bench_host(inside_probe))
    assert case["status"] == "predicted"
    far = case["high"] * 1.5
    below_range = probe_range["probe_lo_us"] / 2
    code, found = check(tmp_path, [fixture_line(case["speedup"], inside_probe, "a"),
                                   fixture_line(far, inside_probe, "b"),
                                   fixture_line(case["speedup"], below_range, "c")])
    assert code == 1  # one of three inside: the 80% criterion fails
    assert [v["inside"] for v in found["verdicts"]] == [True, False, False]
    assert [v["status"] for v in found["verdicts"]] == ["predicted", "predicted",
                                                        "outside the measured range"]
    assert found["verdicts"][0]["centre_error"] == pytest.approx(0, abs=1e-9)
    # The refused process counts against the share, not in the centre's median.
    assert found["median_centre_error"] == pytest.approx(abs(case["speedup"] - far) / far / 2)
    assert (found["inside"], found["processes"], found["leases"]) == (1, 3, 3)


@pytest.mark.slow
def test_check_passes_processes_inside_their_bands_near_the_centre(tmp_path):
    probe_range = gpt2_case(bench_host(8.0))
    probe = (probe_range["probe_lo_us"] + probe_range["probe_hi_us"]) / 2
    case = gpt2_case(bench_host(probe))
    code, found = check(tmp_path, [fixture_line(case["speedup"] * 1.05, probe, "a")])
    assert code == 0 and found["met"]
    assert found["median_centre_error"] == pytest.approx(0.05 / 1.05)


def test_check_refuses_a_smoke_test_line_with_one_line(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text(json.dumps(fixture_line(2.0, 8.0, "a") | {"tiny": True}) + "\n")
    done = run(str(FOLDER / "check.py"), str(path), check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("check.py: error: ") and done.stderr.count("\n") == 1


def test_the_model_is_fitted_without_any_record_of_the_leases_checked(tmp_path):
    """The project's own runs may measure a lease after the check did: `unseen` copies the
    results without that lease's records, sealed files and subfolders included."""
    import gzip
    import importlib.util

    spec = importlib.util.spec_from_file_location("independent_check", FOLDER / "check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = tmp_path / "results"
    (results / "coldstart").mkdir(parents=True)
    lines = [json.dumps({"host": {"boot_id": boot}, "n": n}) + "\n"
             for n, boot in enumerate(["checked", "other", None, "checked"])]
    (results / "a.jsonl").write_text("".join(lines) + "not json\n", encoding="utf-8")
    with gzip.open(results / "b.jsonl.gz", "wt", encoding="utf-8") as sealed:
        sealed.writelines(lines)
    (results / "coldstart" / "c.jsonl").write_text(lines[0] + lines[1], encoding="utf-8")
    copy = module.unseen(results, {"checked"}, tmp_path / "copy")
    kept = {path.relative_to(copy).as_posix(): path.read_text(encoding="utf-8").splitlines()
            for path in copy.rglob("*.jsonl")}
    assert sorted(kept) == ["a.jsonl", "b.jsonl", "coldstart/c.jsonl"]
    assert [json.loads(raw)["n"] for raw in kept["b.jsonl"]] == [1, 2]
    assert kept["a.jsonl"][-1] == "not json"  # left for the command to refuse, as it would
    assert [json.loads(raw)["n"] for raw in kept["coldstart/c.jsonl"]] == [1]
