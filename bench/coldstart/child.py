"""One fresh process of the cold-start ladder, started by bench/coldstart/runner.py through
bench/pool.py's launcher as `bench.coldstart.child:main SPEC RESULT`.

The runner chooses the compile caches through the environment (TORCHINDUCTOR_CACHE_DIR,
TRITON_CACHE_DIR...) before this process starts; this module builds the workload, then
times the first call from a fresh Dynamo, and then the steady state. The result is written
as the process goes, so whatever was measured before a failure is still read back.

Roles: "measure" (every rung), "save-aot" and "save-precompile" (the process that makes an
artifact which a later, measured process loads), and "environment" (the environment only).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import traceback
from pathlib import Path

import torch

from bench.backends import BACKENDS, Backend
from bench.coldstart import bundles, compilers
from bench.coldstart.rungs import ONLY_DEFAULT, TABLE
from bench.environment import collect
from bench.host import task
from bench.host.probe import Fingerprint, Probe
from bench.observe import headers_built, precompiled_headers
from bench.spec import ColdSpec
from bench.timer import measure
from bench.workloads import lookup

STEADY_BUDGET_S = 1.0
# The counters that tell which compile cache served a compile, as "group.name".
COUNTER_GROUPS = ("inductor", "aot_autograd", "dynamo_cache")
CACHE_WORDS = ("cache", "autotune", "bundler", "lookup", "select_algorithm")
COMPILE_MODE = {"default": None, "reduce-overhead": "reduce-overhead",
                "max-autotune-no-cudagraphs": "max-autotune-no-cudagraphs"}


class Unsupported(Exception):
    """This release or this workload cannot run the rung; recorded as unsupported."""


def _write(path: Path, result: dict) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(result))
    partial.replace(path)


def cache_counters() -> dict[str, int]:
    from torch._dynamo.utils import counters

    return {f"{group}.{name}": int(count) for group in COUNTER_GROUPS
            for name, count in sorted(counters[group].items())
            if count and any(word in name for word in CACHE_WORDS)}


def _artifact_counts(info) -> dict[str, int]:
    """Entries per cache layer in a CacheInfo from save/load_cache_artifacts."""
    if info is None:
        return {}
    return {str(kind): len(keys) for kind, keys in sorted(getattr(info, "artifacts", {}).items())}


def repeated_blocks(model) -> list:
    """The longest run of same-class modules held in one ModuleList or Sequential: the
    transformer layers of GPT-2, Llama and BERT, the blocks of a ViT."""
    from torch import nn

    best: list = []
    for module in model.modules():
        if isinstance(module, nn.ModuleList | nn.Sequential):
            children = list(module.children())
            if (len(children) >= 2 and len({type(c) for c in children}) == 1
                    and len(children) > len(best) and list(children[0].parameters())):
                best = children
    return best


def _module(fn):
    from torch import nn

    if not isinstance(fn, nn.Module):
        raise Unsupported("the workload is a function, not a module: it has no blocks")
    return fn


def _eager(spec: ColdSpec, fn, result: dict):
    return fn


def _whole(spec: ColdSpec, fn, result: dict):
    return torch.compile(fn, mode=COMPILE_MODE.get(spec.mode))


def _per_block(spec: ColdSpec, fn, result: dict):
    blocks = repeated_blocks(_module(fn))
    if not blocks:
        raise Unsupported("no repeated blocks found in the model")
    for block in blocks:
        block.compile(mode=COMPILE_MODE.get(spec.mode))
    result.update(blocks=len(blocks), block_class=type(blocks[0]).__name__)
    return fn


def _nested_region(spec: ColdSpec, fn, result: dict):
    blocks = repeated_blocks(_module(fn))
    if not blocks:
        raise Unsupported("no repeated blocks found in the model")
    block_class = type(blocks[0])
    # Marking the class's forward makes every block the same region, compiled once.
    block_class.forward = torch.compiler.nested_compile_region(block_class.forward)
    result.update(blocks=len(blocks), block_class=block_class.__name__)
    return _whole(spec, fn, result)


def _leading(fn) -> tuple:
    """A module goes in as the first argument of `_through`, so that its weights are inputs
    of the compiled graph, never constants baked into an artifact; a function goes alone."""
    from torch import nn

    return (fn,) if isinstance(fn, nn.Module) else ()


def _through(model, *inputs):
    return model(*inputs)


def save_aot(spec: ColdSpec, fn, inputs, backend: Backend, result: dict) -> None:
    leading = _leading(fn)
    compiled = torch.compile(_through if leading else fn, mode=COMPILE_MODE[spec.mode],
                             fullgraph=True)
    if reason := missing_rungs().get("aot"):
        raise Unsupported(reason)
    start = backend.clock()
    artifact = compiled.aot_compile(((*leading, *inputs), {}))
    artifact(*leading, *inputs)
    result["prepare_s"] = backend.clock() - start
    artifact.save_compiled_function(spec.artifact)


def load_aot(spec: ColdSpec, fn, result: dict):
    with open(spec.artifact, "rb") as file:
        loaded = torch.compiler.load_compiled_function(file)
    leading = _leading(fn)
    return lambda *inputs: loaded(*leading, *inputs)


def missing_rungs() -> dict[str, str]:
    """The rungs whose API this release lacks (bench/coldstart/rungs.py's `needs`), each with
    the reason recorded. The environment child reports them, so the runner records them
    without a process each."""
    return {name: f"torch {torch.__version__} has no {_path_text(gone)}"
            for name, rung in TABLE.items() if (gone := next(
                (path for path in rung.needs if not _has(path)), None))}


def _has(path: str) -> bool:
    """Whether the dotted `path` exists under torch ("compiled.": on what torch.compile returns)."""
    head, _, rest = path.partition(".")
    found = torch.compile(_through) if head == "compiled" else getattr(torch, head, None)
    for name in rest.split(".") if rest else ():
        found = getattr(found, name, None)
    return found is not None


def _path_text(path: str) -> str:
    return ("torch.compile(...)." + path.removeprefix("compiled.") if path.startswith("compiled.")
            else f"torch.{path}")


def _precompile():
    if reason := missing_rungs().get("precompile"):
        raise Unsupported(reason)
    return torch.compiler.precompile


def save_precompile(spec: ColdSpec, fn, inputs, backend: Backend, result: dict) -> None:
    if spec.mode != "default":
        raise Unsupported(f"torch.compiler.precompile {ONLY_DEFAULT}")
    precompile = _precompile()
    start = backend.clock()
    leading = _leading(fn)
    with precompile.capture(_through if leading else fn, artifact_path=f"{spec.artifact}.py",
                            cache_path=f"{spec.artifact}.cache") as capture:
        capture(*leading, *inputs)
    result["prepare_s"] = backend.clock() - start


def load_precompile(spec: ColdSpec, fn, result: dict):
    runnable = _precompile().load(f"{spec.artifact}.py", f"{spec.artifact}.cache")
    leading = _leading(fn)
    return lambda *inputs: runnable(*leading, *inputs)


PROBE_BLOCKS = 15  # as many blocks as a paired process times (one per round, DEFAULT_ROUNDS)


def host_speed(backend: Backend) -> dict:
    """How fast this host is, after everything timed: the eager-op probe (with the host's
    fingerprint) and a compile-like task, each in blocks, so a first call's seconds can be set
    beside the speed of the host that compiled them."""
    fingerprint = Fingerprint(backend)
    probe = Probe(backend)
    for _ in range(PROBE_BLOCKS):
        probe.block()
    return {"host": fingerprint.host(probe), "host_task_s": list(task.measure())}


def bundle_info(data: bytes, info) -> dict:
    """What the runner needs to publish a saved bundle; it adds the source environment."""
    return {"size_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "artifacts": _artifact_counts(info)}


def run(spec: ColdSpec, out: Path) -> None:
    workload = lookup(spec.workload)
    # the workload's own dtype, which the ladder never casts: recorded before the build, so
    # that a process that fails later still says what it built
    result: dict = {"status": "error", "reason": "the process ended before its first call",
                    "dtype": str(workload.dtype).removeprefix("torch.")}
    _write(out, result)
    backend = BACKENDS[spec.backend]
    device = torch.device(backend.device)
    torch.manual_seed(0)
    built = workload.build(device, spec.batch_size, spec.shapes == "tiny", workload.dtype)
    fn, inputs = built.fn, built.inputs
    role, rung = spec.role, spec.rung
    grad = contextlib.nullcontext() if workload.training else torch.no_grad()
    from torch._dynamo.utils import counters

    counters.clear()
    with grad:
        if role in SAVERS:
            SAVERS[role](spec, fn, inputs, backend, result)
        else:
            since, headers = time.time(), precompiled_headers()
            start = backend.clock()
            if spec.bundle_in:
                # read once: the bytes checked are the bytes loaded (bench/coldstart/bundles.py)
                data = Path(spec.bundle_in).read_bytes()
                try:
                    result["loaded_sha256"] = bundles.checked(data, spec.bundle_trusted)
                except bundles.BundleRefused as error:
                    result.update(reason=f"bundle refused: {error}")
                    _write(out, result)
                    return
                result["loaded_size_bytes"] = len(data)
                info = torch.compiler.load_cache_artifacts(data)
                result["load_s"] = backend.clock() - start
                result["loaded_artifacts"] = _artifact_counts(info)
            call = LOADERS[TABLE[rung].loader](spec, fn, result)
            if TABLE[rung].saver:  # loading what the saving process compiled
                result["load_s"] = backend.clock() - start
            call(*inputs)
            result["first_call_s"] = backend.clock() - start
            result["headers_built"] = headers_built(headers)
            result["counters"] = cache_counters()
            if (built := compilers.runs(since, time.time())) is not None:
                result["compiler_runs"], result["compiler_s"] = built
            result.update(status="error", reason="the process ended during steady timing")
            _write(out, result)
            result["steady"] = _timing(measure(lambda: call(*inputs), backend, spec.budget_s))
        if spec.bundle_out:
            saved = torch.compiler.save_cache_artifacts()
            data, info = saved if saved is not None else (b"", None)
            Path(spec.bundle_out).write_bytes(data)
            result["saved"] = bundle_info(data, info)
    if role == "measure":
        result.update(host_speed(backend))
    result.update(status="ok", reason=None)
    _write(out, result)


def _timing(timing) -> dict:
    import dataclasses

    return dataclasses.asdict(timing)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


# The callables a rung's `loader` names, and the saving roles' functions (rungs.py).
LOADERS = {"eager": _eager, "compile": _whole, "per-block": _per_block,
           "nested-region": _nested_region, "aot": load_aot, "precompile": load_precompile}
SAVERS = {"save-aot": save_aot, "save-precompile": save_precompile}


def main(argv: list[str]) -> int:
    """The entry point the launcher calls (bench.pool: the keeper has applied the slot's
    cores and threads): SPEC RESULT, the spec a ColdSpec as JSON."""
    spec_path, out = Path(argv[0]), Path(argv[1])
    spec = ColdSpec.from_json(spec_path.read_text())
    if spec.role == "environment":
        import dataclasses

        _write(out, {"environment": dataclasses.asdict(collect(spec.backend, spec.machine)),
                     "missing_rungs": missing_rungs()})
        return 0
    try:
        run(spec, out)
    except Unsupported as why:
        _write(out, _merged(out, {"status": "unsupported", "reason": str(why)}))
    except torch.OutOfMemoryError as error:
        _write(out, _merged(out, {"status": "oom", "reason": _one_line(error)}))
    except Exception as error:  # noqa: BLE001 - recorded as this process's status
        traceback.print_exc()
        _write(out, _merged(out, {"status": "error", "reason": _one_line(error)}))
    return 0


def _merged(out: Path, update: dict) -> dict:
    try:
        found = json.loads(out.read_text())
    except (OSError, ValueError):
        found = {}
    found.pop("steady", None)  # a failure after steady timing began leaves no timing
    return found | update

