"""Factories that attack the process calling them: each must end only the runner's check
of it, in a child process, never the runner (see bench/workloads/external.py)."""

import os
import sys
import time
from pathlib import Path

FLOOD_BYTES = 50 * 1024 * 1024


def hard_exit(device, batch_size):
    os._exit(3)


def system_exit(device, batch_size):
    sys.exit(3)


def hang(device, batch_size):
    Path(os.environ["ATLAS_TEST_FAULT_DIR"], "factory.pid").write_text(str(os.getpid()))
    time.sleep(1000)


def flood(device, batch_size):
    line = "x" * 1023 + "\n"
    for _ in range(FLOOD_BYTES // len(line)):
        sys.stdout.write(line)
    raise RuntimeError("flooded")
