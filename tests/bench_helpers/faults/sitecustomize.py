"""Test-only fault injection for bench case processes; production code has no hooks.

tests/test_bench_failures.py puts this directory on PYTHONPATH for the case processes
the runner starts, with ATLAS_TEST_FAULTS="WORKLOAD=FAULT,..." in the environment.
Python imports sitecustomize at start-up, before `-m bench.case` runs, so replacing
the workload's entry in the shared registry dict changes what that case builds:

  crash  the process kills itself with SIGSEGV
  raise  building raises RuntimeError("boom")
  hang   it starts a `sleep` grandchild (like a compile worker), writes both pids to
         $ATLAS_TEST_FAULT_DIR/hang.pids and sleeps until killed
"""

import os

_FAULTS = os.environ.get("ATLAS_TEST_FAULTS")

if _FAULTS:
    import dataclasses
    import resource
    import signal
    import subprocess
    import time
    from pathlib import Path

    from bench.workloads import WORKLOADS

    def _faulty(kind: str):
        def build(device, batch_size, tiny):
            if kind == "crash":
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file
                os.kill(os.getpid(), signal.SIGSEGV)
            if kind == "raise":
                raise RuntimeError("boom")
            if kind == "hang":
                worker = subprocess.Popen(["sleep", "1000"])
                pids = Path(os.environ["ATLAS_TEST_FAULT_DIR"]) / "hang.pids"
                pids.write_text(f"{os.getpid()} {worker.pid}\n")
                time.sleep(1000)
            raise AssertionError(f"unknown fault {kind!r}")

        return build

    for item in _FAULTS.split(","):
        name, kind = item.split("=")
        WORKLOADS[name] = dataclasses.replace(WORKLOADS[name], build=_faulty(kind))
