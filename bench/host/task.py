"""A short CPU-bound task shaped like compiling, timed the same way in every process.

A first compiled call is mostly host work on one thread: Dynamo traces Python bytecode, FX and
Inductor walk and rewrite graphs, and code is generated and compiled. The eager-op probe
(probe.py) measures a host's dispatch cost, which is not that. This task parses, rewrites,
unparses and byte-compiles a fixed generated module, single-threaded and standard library only,
so its seconds per block say how fast this host does that kind of work: a first call measured
on a host whose task ran in 1.3 times the seconds of another's may be expected to take longer
there. The source is fixed, so two hosts time the same work.
"""

from __future__ import annotations

import ast
import statistics
import time

FUNCTIONS = 60  # a few tens of milliseconds a block: long enough to time, short to run
BLOCKS = 5


def _source(functions: int = FUNCTIONS) -> str:
    body = []
    for i in range(functions):
        body.append(
            f"def kernel_{i}(x, y, scale={i + 1}):\n"
            f"    acc = []\n"
            f"    for j, (a, b) in enumerate(zip(x, y)):\n"
            f"        if (a * {i} + b) % 3 == 0:\n"
            f"            acc.append(max(a, b) * scale - j)\n"
            f"        elif a > b:\n"
            f"            acc.append({{'v': a - b, 'k': j}}['v'])\n"
            f"        else:\n"
            f"            acc.append(sum(range(j % 7)) + a)\n"
            f"    return tuple(acc)\n")
    return "\n".join(body)


SOURCE = _source()


class _Renamer(ast.NodeTransformer):
    """A rewrite pass over every name, as a graph pass visits every node."""

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(id=f"{node.id}_", ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = f"{node.arg}_"
        return node


def block() -> float:
    """Seconds for one pass: parse, rewrite, unparse, compile."""
    start = time.perf_counter()
    tree = _Renamer().visit(ast.parse(SOURCE))
    compile(ast.unparse(ast.fix_missing_locations(tree)), "<atlas-host-task>", "exec")
    return time.perf_counter() - start


def measure(blocks: int = BLOCKS) -> tuple[float, ...]:
    """`blocks` timed passes after one untimed one (which warms the interpreter's caches)."""
    block()
    return tuple(block() for _ in range(blocks))


def seconds(samples: tuple[float, ...]) -> float | None:
    """The task's figure for a process: the median of its blocks."""
    return statistics.median(samples) if samples else None
