"""Test-only fault injection for bench case processes; production code has no hooks.

Tests put this directory on PYTHONPATH of a `python -m bench` run, with
ATLAS_TEST_FAULTS="WORKLOAD=FAULT,..." in the environment. Python imports sitecustomize
at start-up, so replacing the workload's entry in the registry dict changes what that
case builds, in the runner (whose forked cases inherit it) and in spawned cases alike:

  crash  the process kills itself with SIGSEGV
  raise  building raises RuntimeError("boom")
  hang   it starts a `sleep` grandchild that, like Inductor's compile workers, dies with
         its parent; writes both pids to $ATLAS_TEST_FAULT_DIR/hang.pids; sleeps until killed
  orphan as hang, but the `sleep` grandchild does not ask to die with its parent (as a
         model's own subprocess might not); pids in $ATLAS_TEST_FAULT_DIR/orphan.pids
  setsid as orphan, and the grandchild leaves the case's session and process group too,
         as a daemon does; pids in $ATLAS_TEST_FAULT_DIR/setsid.pids

Each fault first prints "injected fault: KIND" to stderr, which lands in the case's log.
"""

import os

_FAULTS = os.environ.get("ATLAS_TEST_FAULTS")

if _FAULTS:
    import ctypes
    import dataclasses
    import resource
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from bench.workloads import WORKLOADS

    def _die_with_parent():
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    def _faulty(kind: str):
        def build(*args, **kwargs):
            print(f"injected fault: {kind}", file=sys.stderr, flush=True)
            if kind == "crash":
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file
                os.kill(os.getpid(), signal.SIGSEGV)
            if kind == "raise":
                raise RuntimeError("boom")
            if kind in ("hang", "orphan", "setsid"):
                worker = subprocess.Popen(["sleep", "1000"], preexec_fn=_die_with_parent
                                          if kind == "hang" else None,
                                          start_new_session=kind == "setsid")
                pids = Path(os.environ["ATLAS_TEST_FAULT_DIR"]) / f"{kind}.pids"
                partial = pids.with_suffix(".partial")
                partial.write_text(f"{os.getpid()} {worker.pid}\n")
                os.replace(partial, pids)
                time.sleep(1000)
            raise AssertionError(f"unknown fault {kind!r}")

        return build

    for item in _FAULTS.split(","):
        name, kind = item.split("=")
        WORKLOADS[name] = dataclasses.replace(WORKLOADS[name], build=_faulty(kind))
