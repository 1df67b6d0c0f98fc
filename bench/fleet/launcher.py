"""`python -m bench --ray ADDRESS`: the same plan, options and records, measured on a Ray cluster.

This is a second launcher, not a second engine. bench/runner.py plans the jobs, keeps the
queue, writes the specs, enforces the timeouts, turns results into records and appends
them under the results file's lock, exactly as for a local run; only where a child runs
changes. `RayLauncher.start` submits each child as a Ray task (bench/fleet/task.py) with
`max_calls=1`, so every case runs in a fresh worker that starts the same child entry point
the local runner forks, under the same keeper. Results stream back to the driver through
`ray.wait`, and the driver alone writes them.

- Slots are the cluster's: one per GPU (CUDA) or per CPU share (CPU), each bound to a node,
  with `--cpus-per-task` cores reserved beside every GPU task so that co-located cases do
  not disturb each other's host probe.
- The runner spreads repeats over nodes on purpose and keeps a group's processes of one
  repeat on one node (bench/runner.py, `_Run.belongs_on`).
- Every node reads its own environment; nodes with the same environment (the same GPU
  type, driver, CPU model and count, under one `--machine` name) share one results file,
  and each environment is measured in turn.
- A worker that dies, a lost node or a task Ray cannot place is the case's `error`, after
  `--retries` further tries on any node; a case past its timeout is its `timeout`.
- One driver per results folder: a second one is refused before it touches the cluster.

Only `python -m bench --ray` imports this module (tests/test_bench_imports.py checks it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from bench import REPO, pool, runner
from bench.fleet import task as fleet_task
from bench.records import CaseKey, Environment
from bench.runner import RunConfig, RunError

DRIVER_LOCK = "fleet-driver"  # results/fleet-driver.lock: one driver per results folder
# What scheduling, shipping bench/ and starting a worker may add to a case's timeout; the
# task enforces the timeout itself, and the driver only stops a task that went silent.
START_GRACE_S = 120.0
# max_calls=1: every case in a fresh worker, as a local case is a fresh process.
_run_child = ray.remote(max_calls=1)(fleet_task.run_child)


@dataclass(frozen=True)
class Node:
    """One alive node of the cluster, as Ray lists it."""

    node_id: str
    hostname: str
    cpus: int
    gpus: int
    accelerator_types: tuple[str, ...]  # Ray's accelerator_type labels, such as "H100"


def cluster_nodes() -> list[Node]:
    nodes = []
    for found in ray.nodes():
        if not found.get("Alive"):
            continue
        resources = found.get("Resources", {})
        nodes.append(Node(found["NodeID"], found.get("NodeManagerHostname", "?"),
                          int(resources.get("CPU", 0)), int(resources.get("GPU", 0)),
                          tuple(sorted(name.split(":", 1)[1] for name in resources
                                       if name.startswith("accelerator_type:")))))
    return nodes


def node_slots(node: Node, backend: str, cpus_per_task: int | None) -> list[pool.Slot]:
    """CUDA: a slot per GPU, each with `cpus_per_task` cores (default: an equal share of the
    node's); CPU: a slot per `cpus_per_task` cores (default: the whole node, one case at a
    time, as a local run). Ray gives each task its GPU and records which (Child.gpu)."""
    if backend == "cuda":
        reserve = cpus_per_task or max(1, node.cpus // max(node.gpus, 1))
        count = min(node.gpus, node.cpus // reserve)
    else:
        reserve = cpus_per_task or max(node.cpus, 1)
        count = node.cpus // reserve
    return [pool.Slot(threads=reserve, node=node.node_id) for _ in range(count)]


class RayChild:
    """A child running in a Ray task: polled, waited for (`RayLauncher.wait_any`) and killed
    as a local one is. Once its task ends, what the child wrote is put in the driver's
    scratch folder, where the runner reads it as it reads a local child's."""

    def __init__(self, launcher: RayLauncher, submit, scratch: Path, timeout_s: float) -> None:
        self.launcher, self.submit, self.scratch, self.timeout_s = launcher, submit, scratch, timeout_s
        self.tries_left = launcher.retries
        self.ref = submit(retry=False)
        self.returncode: int | None = None
        self.cache: str | None = None
        self.gpu: int | None = None

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        ready, _ = ray.wait([self.ref], timeout=0)
        if not ready:
            return None
        try:
            answer = ray.get(self.ref)
        except ray.exceptions.RayTaskError as error:  # the task's own code raised: no retry
            self._fail(f"the fleet task raised: {_first_line(error)}")
        except ray.exceptions.TaskCancelledError:
            self._fail("the fleet task was cancelled")
        except ray.exceptions.RayError as error:  # a worker or node lost, or no place to run
            if self.tries_left:
                self.tries_left -= 1
                self.launcher.say(f"    {type(error).__name__}: trying the case again on any "
                                  f"node ({self.tries_left} more tr{'y' if self.tries_left == 1 else 'ies'} "
                                  f"after this)")
                self.ref = self.submit(retry=True)
                return None
            self._fail(f"the Ray worker or node running the case was lost "
                       f"({type(error).__name__}: {_first_line(error)})")
        else:
            self._land(answer)
        return self.returncode

    def _land(self, answer: dict) -> None:
        for name, text in answer["outputs"].items():
            (self.scratch / name).write_text(text)
        (self.scratch / "log.txt").write_text(answer["log"])
        self.cache, self.gpu = answer["cache"], answer["gpu"]
        self.returncode = answer["returncode"]
        if answer["timed_out"]:
            (self.scratch / "result.json").write_text(json.dumps(
                {"status": "timeout", "reason": f"no result within {self.timeout_s:g} s"}))

    def _fail(self, reason: str) -> None:
        """What the case never wrote, said for it: the runner records it as an error."""
        (self.scratch / "log.txt").write_text(reason + "\n")
        (self.scratch / "result.json").write_text(json.dumps({"status": "error", "reason": reason}))
        self.returncode = 1

    def kill(self) -> None:
        """Cancel the task: Ray ends its worker, and the keeper, told by PR_SET_PDEATHSIG,
        ends everything the case started."""
        if self.returncode is None:
            ray.cancel(self.ref, force=True)
            self.returncode = -signal.SIGKILL


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[-1][:300]


class RayLauncher:
    """pool.Launcher's calls, with children placed on the nodes of a Ray cluster."""

    isolation = "spawn"  # a task starts its child as a fresh interpreter (Ray workers thread)
    parent_import_s = None
    grace_s = START_GRACE_S

    def __init__(self, backend: str, cache_dir: Path, retries: int, accelerator_type: str | None,
                 out=sys.stdout) -> None:
        self.backend, self.cache_dir, self.retries = backend, cache_dir.resolve(), retries
        self.accelerator_type, self.out = accelerator_type, out

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def preload(self, process_started: float) -> None:
        return None  # nothing is forked from the driver

    def start(self, target: list[str], setup: pool.ChildSetup, log_path: Path,
              slot: pool.Slot | None = None, timeout_s: float | None = None,
              caches: pool.Caches | None = None) -> RayChild:
        if slot is None or slot.node is None or timeout_s is None:
            raise ValueError("a fleet child needs a slot on a node and a timeout")
        scratch = log_path.parent
        inputs = {Path(arg).name: Path(arg).read_text() for arg in target
                  if Path(arg).parent == scratch and Path(arg).is_file()}
        args = (target, inputs, str(scratch), str(self.cache_dir), setup.env, setup.threads,
                timeout_s, caches)

        def submit(retry: bool):
            options = {"num_cpus": slot.threads or 1, "num_gpus": 1 if self.backend == "cuda" else 0,
                       "max_retries": 0,  # retries are ours, counted
                       "scheduling_strategy": NodeAffinitySchedulingStrategy(slot.node, soft=retry)}
            if self.accelerator_type:
                options["accelerator_type"] = self.accelerator_type
            return _run_child.options(**options).remote(*args)

        return RayChild(self, submit, scratch, timeout_s)

    @staticmethod
    def wait_any(children: list[RayChild], timeout: float) -> None:
        """Return once any child's task has ended, or after `timeout` seconds."""
        refs = [c.ref for c in children if c.returncode is None]
        if len(refs) < len(children) or not refs:
            return
        ray.wait(refs, num_returns=1, timeout=max(0.0, min(timeout, 3600.0)))


def _git_commit() -> str | None:
    """The driver's commit, for records made on nodes that have no checkout."""
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                               timeout=20, cwd=REPO)
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


def connect(address: str) -> None:
    """Join the cluster at `address` ("auto": the one running here; "local": start a
    one-node cluster in this process), shipping bench/ to every node that runs a task."""
    env_vars = {name: value for name, value in {"ATLAS_GIT_COMMIT": _git_commit(),
                                                 "ATLAS_TORCH_PIN": os.environ.get("ATLAS_TORCH_PIN")}.items()
                if value}
    runtime_env = {"py_modules": [str(REPO / "bench")], "excludes": ["__pycache__"],
                   "env_vars": env_vars}
    try:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                 **({"include_dashboard": False} if address == "local" else {}))
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RunError(f"cannot join the Ray cluster at {address!r}: {_first_line(error)}") from None


def default_machine(node: Node, backend: str, accelerator_type: str | None) -> str:
    """The machine name of a node's records without --machine: its GPU type (or "cpu"), so
    that nodes of one type share an environment and their processes spread over hosts."""
    kind = accelerator_type or (node.accelerator_types[0] if node.accelerator_types
                                and backend == "cuda" else backend)
    return f"ray-{kind}".lower()


def environments(backend: str, nodes: list[Node], slots: dict[str, list[pool.Slot]],
                 machine: str | None, launcher: RayLauncher, accelerator_type: str | None
                 ) -> list[tuple[Environment, list[pool.Slot]]]:
    """Each environment of the cluster and its slots: every node reads its own, in a child
    on one of its slots, all at once."""
    def read(node: Node) -> Environment:
        return runner.collect_environment(
            backend, machine or default_machine(node, backend, accelerator_type), launcher,
            slots[node.node_id][0], in_child=True)

    with ThreadPoolExecutor(max_workers=min(16, len(nodes))) as workers:
        found = list(workers.map(read, nodes))
    grouped: dict[str, tuple[Environment, list[pool.Slot]]] = {}
    for node, env in zip(nodes, found, strict=True):
        grouped.setdefault(env.env_id(), (env, []))[1].extend(slots[node.node_id])
    return list(grouped.values())


def measure(plans: dict[str, list[CaseKey]], config: RunConfig, machine: str | None,
            address: str, accelerator_type: str | None = None, cpus_per_task: int | None = None,
            retries: int = 0, out=sys.stdout) -> list[Path]:
    """bench.runner.measure on a cluster: the driver lock, the cluster, each environment's
    nodes, then the runner's own `run` per environment under its results file's lock."""
    runner.check_writable(config.results_dir)
    runner.end_what_dead_runners_left(out)  # the driver's scratch; each task cleans its node
    paths = []
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(runner.exclusive(config.results_dir / DRIVER_LOCK))
        except RunError as error:
            raise RunError(f"one fleet driver per results folder: {error}") from None
        connect(address)
        held.callback(ray.shutdown)
        nodes = cluster_nodes()
        for backend, cases in plans.items():
            usable = [n for n in nodes if (backend != "cuda" or n.gpus)
                      and (not accelerator_type or accelerator_type in n.accelerator_types)]
            slots = {n.node_id: node_slots(n, backend, cpus_per_task) for n in usable}
            usable = [n for n in usable if slots[n.node_id]]
            if not usable:
                raise RunError(f"no node of the Ray cluster can run a {backend} case"
                               + (f" on a {accelerator_type}" if accelerator_type else "")
                               + f" (nodes: {_described(nodes)})")
            launcher = RayLauncher(backend, config.cache_dir, retries, accelerator_type, out)
            for env, env_slots in environments(backend, usable, slots, machine, launcher,
                                               accelerator_type):
                hosts = len({s.node for s in env_slots})
                print(f"{backend}: {env.device_name} ({env.machine}): {len(env_slots)} slot(s) on "
                      f"{hosts} node(s)", file=out, flush=True)
                runner.check_same_device(config.results_dir, env)
                path = runner.results_path(config.results_dir, env, config.shard)
                with runner.exclusive(path) as lock:
                    paths.append(runner.run(cases, env, config, out, env_slots, launcher, lock))
    return paths


def _described(nodes: list[Node]) -> str:
    return ", ".join(f"{n.hostname} {n.cpus} CPU {n.gpus} GPU"
                     + (f" {'/'.join(n.accelerator_types)}" if n.accelerator_types else "")
                     for n in nodes) or "none alive"
