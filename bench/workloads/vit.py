"""Vision Transformer inference at the three sizes named patch x depth x width."""

import torch
from torch import nn
from torch.nn import functional as F

from bench.workloads.base import (
    BFLOAT16_DEEP_TOLERANCE,
    EVERY_BACKEND,
    Built,
    Workload,
    count_parameters,
    module_bytes,
    random,
    seeded_module,
    tensor_bytes,
)

IMAGE, CLASSES, HEAD_DIM = 224, 1000, 64


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(batch, tokens, 3, self.heads, width // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, patch: int, depth: int, width: int, image: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, width, patch, stride=patch)
        tokens = (image // patch) ** 2 + 1
        self.cls = nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, tokens, width) * 0.02)
        self.blocks = nn.Sequential(*[Block(width, max(1, width // HEAD_DIM)) for _ in range(depth)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.blocks(x)
        return self.head(self.norm(x[:, 0]))


def vit_flops(patch: int, depth: int, width: int, image: int, classes: int, batch: int) -> int:
    tokens = (image // patch) ** 2 + 1
    embed = 2 * (tokens - 1) * 3 * patch * patch * width
    per_block = 2 * tokens * width * (3 * width + width + 8 * width) + 4 * tokens * tokens * width
    return batch * (embed + depth * per_block + 2 * width * classes)


def vit_builder(patch: int, depth: int, width: int):
    def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
        dims = (8, 2, 32, 32, 10) if tiny else (patch, depth, width, IMAGE, CLASSES)
        batch = batch_size or 1
        model = seeded_module(lambda: ViT(*dims), device, dtype).eval()
        images = random((batch, 3, dims[3], dims[3]), device, dtype)
        out_bytes = batch * dims[4] * images.element_size()
        return Built(model, (images,), flops=vit_flops(*dims, batch),
                     bytes_moved=tensor_bytes(images) + module_bytes(model) + out_bytes,
                     parameters=count_parameters(model))

    return build


SWEEP = (1, 2, 4, 8, 16, 32, 64)
# A 2-core CPU needs seconds per call at batch 32; the dense sweep is for accelerators.
CPU_SWEEP = (1, 8, 32)
# The autotuning modes' cold compile is most of a full GPU run's time at these sizes. The
# claims on them and the guide's answers read batches 1 and 32; 8 keeps a middle point.
AUTOTUNE_SWEEP = (1, 8, 32)


def _vit(patch: int, depth: int, width: int, quick: tuple = (), sentinel: tuple = ()) -> Workload:
    return Workload(f"vit{patch}x{depth}x{width}", "vit",
                    f"ViT inference, {patch}x{patch} patches, {depth} blocks, width {width}, "
                    f"{max(1, width // HEAD_DIM)} heads, 224x224 images, 1000 classes",
                    vit_builder(patch, depth, width), batch_sizes=SWEEP, quick_batch_sizes=quick,
                    sentinel_batch_sizes=sentinel,
                    batch_sizes_on={"cpu": CPU_SWEEP}, quick_without_autotune=EVERY_BACKEND,
                    autotune_batch_sizes=AUTOTUNE_SWEEP, tolerance=2e-3,
                    bfloat16_tolerance=BFLOAT16_DEEP_TOLERANCE)


VIT_SMALL = _vit(16, 6, 384, quick=(1,), sentinel=(1, 32))
VIT_MEDIUM = _vit(32, 12, 768)
VIT_LARGE = _vit(32, 18, 1024)
