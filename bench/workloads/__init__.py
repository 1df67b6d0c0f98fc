"""The workload registry: an explicit list, in the order pages show them."""

from bench.workloads.base import Built, Workload
from bench.workloads.conv import CONV2D_BLOCK
from bench.workloads.elementwise import ELEMENTWISE_CHAIN
from bench.workloads.entropy import ENTROPY
from bench.workloads.launch import LAUNCH_CHAIN_10, LAUNCH_CHAIN_100, LAUNCH_CHAIN_1000, TRIVIAL_CALL
from bench.workloads.matmul import MATMUL_128, MATMUL_512
from bench.workloads.matmul_softmax import MATMUL_SOFTMAX
from bench.workloads.mlp import MLP
from bench.workloads.vit import VIT_LARGE, VIT_MEDIUM, VIT_SMALL

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        TRIVIAL_CALL,
        LAUNCH_CHAIN_10,
        LAUNCH_CHAIN_100,
        LAUNCH_CHAIN_1000,
        MATMUL_128,
        MATMUL_512,
        MATMUL_SOFTMAX,
        ELEMENTWISE_CHAIN,
        ENTROPY,
        MLP,
        CONV2D_BLOCK,
        VIT_SMALL,
        VIT_MEDIUM,
        VIT_LARGE,
    )
}

__all__ = ["WORKLOADS", "Built", "Workload"]
