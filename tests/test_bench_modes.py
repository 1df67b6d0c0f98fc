"""What Inductor builds on a CPU, read in the code it writes: the facts behind the twins in
bench/modes.py and behind the workloads the CPU quick profile does not autotune."""

from __future__ import annotations

import pytest
import torch

from bench.modes import MODES
from bench.workloads import WORKLOADS
from bench.workloads.base import NOTHING_TO_AUTOTUNE_ON_CPU


def built_code(fn, inputs, mode: str) -> list[str]:
    """The code Inductor writes for `fn` in `mode`, less what names the compile (its AOT id)
    and the check of the inputs' sizes and strides, which a twin with CUDA graphs on
    leaves out."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    with torch._inductor.config.patch(force_disable_caches=True):
        _, codes = run_and_get_code(torch.compile(fn, mode=None if mode == "default" else mode),
                                    *inputs)
    assert codes and all("def call(" in code for code in codes)
    return [line for code in codes for line in code.splitlines()
            if "AOT ID" not in line and "assert_size_stride" not in line]


# Each compile builds afresh, so that no cache stands between a mode and its code.
pytestmark = pytest.mark.filterwarnings("ignore:dynamo_pgo force disabled")


def matmul_then_pointwise(x, w):
    return torch.relu(x @ w).sin()


@pytest.mark.slow
@pytest.mark.parametrize("mode", [m for m in MODES if MODES[m].twin_on("cpu")
                                  and not MODES[m].streams_only])
def test_on_cpu_a_twin_builds_the_kernels_of_its_twin(mode):
    inputs = (torch.randn(32, 32), torch.randn(32, 32))
    twin = MODES[mode].twin_on("cpu").mode
    assert (built_code(matmul_then_pointwise, inputs, mode)
            == built_code(matmul_then_pointwise, inputs, twin))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in WORKLOADS
                                        if WORKLOADS[n].quick_without_autotune
                                        == NOTHING_TO_AUTOTUNE_ON_CPU
                                        and WORKLOADS[n].quick_batch_sizes))
def test_on_cpu_autotuning_a_workload_without_a_matmul_builds_what_default_builds(name):
    built = WORKLOADS[name].build_in("float32", torch.device("cpu"), None, True)
    with torch.no_grad():
        assert (built_code(built.fn, built.inputs, "max-autotune-no-cudagraphs")
                == built_code(built.fn, built.inputs, "default"))
