"""The compiler runs a cold-start process records (bench/coldstart/compilers.py): a build
through the wrapped compiler is logged with its seconds, a query that writes nothing is not,
and parallel builds count their overlap once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from bench.coldstart import compilers

needs_cc = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("cc") is None,
                                reason="the wrappers are for Linux with a C compiler")


@pytest.fixture
def wrapped(tmp_path, monkeypatch):
    variables = compilers.environment(tmp_path, "cpu")
    assert variables, "no compiler was wrapped"
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return tmp_path


@needs_cc
def test_a_build_is_logged_with_its_seconds_and_a_query_is_not(wrapped):
    source = wrapped / "one.c"
    source.write_text("int one(void) { return 1; }\n")
    since = time.time()
    subprocess.run(["cc", "--version"], check=True, capture_output=True, env=os.environ)
    subprocess.run(["cc", "-shared", "-fPIC", str(source), "-o", str(wrapped / "one.so")],
                   check=True, env=os.environ)
    until = time.time()
    assert (wrapped / "one.so").exists()
    count, seconds = compilers.runs(since, until)
    assert count == 1
    assert 0 < seconds <= until - since
    assert compilers.runs(until + 1, until + 2) == (0, 0.0)


@needs_cc
def test_a_failed_build_keeps_its_status(wrapped):
    broken = wrapped / "broken.c"
    broken.write_text("this is not C\n")
    done = subprocess.run(["cc", "-c", str(broken), "-o", str(wrapped / "broken.o")],
                          capture_output=True, env=os.environ)
    assert done.returncode != 0


def test_a_gpu_process_runs_its_compilers_unwrapped(tmp_path):
    """On CUDA the compiler's path is part of the compile caches' keys: wrapped there, a
    warm process would miss the cache its cold process filled."""
    assert compilers.environment(tmp_path, "cuda") == {}
    assert not (tmp_path / "compilers").exists()


def test_without_the_log_nothing_is_recorded(monkeypatch):
    monkeypatch.delenv(compilers.LOG, raising=False)
    assert compilers.runs(0, time.time()) is None


@pytest.mark.parametrize("spans, busy", [
    ([], 0.0),
    ([(0, 2), (1, 3)], 3.0),  # overlapping builds count once
    ([(0, 1), (2, 3)], 2.0),
    ([(0, 4), (1, 2)], 4.0),  # one inside another
])
def test_busy_seconds_is_the_union_of_the_spans(spans, busy):
    assert compilers.busy_seconds(spans) == busy
