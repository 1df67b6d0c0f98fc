"""Does wrapping the compiler change the compile caches' keys? Run on a lent GPU machine:

    python3 examples/lent-machine/compiler-wrapper-check.py

For each variant, two fresh processes compile one small CUDA function with one shared cache
folder and print the second one's FX graph cache counter: a hit is what the warm rung of the
cold-start ladder needs. The variants: nothing changed; the compiler wrappers of
bench/coldstart/compilers.py in a folder of each process's own; only an extra folder first
on PATH; only the wrappers' log variable. On an H200 with torch 2.11.0 (2026-11-30) the
wrappers alone made the second process miss, which is why python -m bench.coldstart wraps
the compiler in CPU processes only.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.coldstart import compilers  # noqa: E402

CHILD = r'''
import json, torch
from torch._dynamo.utils import counters
f = torch.compile(lambda x, w: torch.relu(x @ w) + 1)
x, w = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
f(x, w)
torch.cuda.synchronize()
print(json.dumps({k: v for k, v in counters["inductor"].items() if "fxgraph" in k}))
'''


def extra(variant: str) -> dict[str, str]:
    own = tempfile.mkdtemp()
    if variant == "wrappers per process":
        return compilers.environment(Path(own), "cpu")  # "cpu": the wrappers, on purpose
    if variant == "PATH entry only":
        return {"PATH": f"{own}{os.pathsep}{os.environ['PATH']}"}
    if variant == "log variable only":
        return {compilers.LOG: f"{own}/runs.log"}
    return {}


def run(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", CHILD], env=os.environ | env,
                          capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else done.stderr[-500:]


for variant in ("unchanged", "wrappers per process", "PATH entry only", "log variable only"):
    folder = tempfile.mkdtemp()
    cache = {"TORCHINDUCTOR_CACHE_DIR": f"{folder}/inductor", "TRITON_CACHE_DIR": f"{folder}/triton"}
    print(f"{variant}: first {run(cache | extra(variant))}, second {run(cache | extra(variant))}",
          flush=True)
