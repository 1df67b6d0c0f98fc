"""bench/ and report/ import in one direction: no module reaches itself again through
imports, those inside functions included (a reader following one lands back where they
began), and no lower layer of report/ imports a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """The `modules` that `path` imports anywhere in it, at the top or inside a function."""
    package = module_name(path if path.name == "__init__.py" else path.parent, root)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from .y import z
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}".rstrip(".")
            # `from bench import case` imports bench.case; `from bench.case import run` does not
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


REPORT = ROOT / "report"


def graph(tree: Path = BENCH) -> dict[str, set[str]]:
    paths = sorted(tree.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imported(p, modules) - {module_name(p)} for p in paths}


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `edges`, as the path that closes it, or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from pkg.a import g\n")
    modules = {"pkg", "pkg.a", "pkg.b"}
    edges = {name: imported(package / f"{name[4:]}.py", modules, tmp_path)
             for name in ("pkg.a", "pkg.b")}
    assert edges == {"pkg.a": {"pkg", "pkg.b"}, "pkg.b": {"pkg.a"}}
    assert cycle_in(edges) == ["pkg.a", "pkg.b", "pkg.a"]


def test_bench_has_no_import_cycle():
    found = cycle_in(graph())
    assert found is None, "import cycle: " + " -> ".join(found)


# report/'s layers, lowest first: a module may import its own layer and those below it.
# The vocabulary of releases sits below A/B groups, comparisons and the history.
REPORT_LAYERS = (
    ("report.formatting", "report.markdown_text", "report.safe_output",
     "report.analysis.vocabulary"),
    ("report.analysis",),
    ("report.releases.vocabulary", "report.coldstart.data", "report.shapes.data", "report.charts"),
    ("report.releases", "report.coldstart", "report.shapes", "report.ledger"),
    ("report.answers", "report.guide_rules", "report.export", "report.site"),
    ("report.pages", "report.charts", "report.mkdocs_"),
    ("report.build", "report.__main__"),
)


def layer_of(module: str) -> int | None:
    """The layer of `module`: the longest prefix named in REPORT_LAYERS wins."""
    best = None
    for number, prefixes in enumerate(REPORT_LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".") or module.startswith(prefix)
                    and prefix.endswith("_")) and (best is None or len(prefix) > best[1]):
                best = (number, len(prefix))
    return best and best[0]


def test_report_has_no_import_cycle():
    found = cycle_in(graph(REPORT))
    assert found is None, "import cycle: " + " -> ".join(found)


def test_no_lower_layer_of_report_imports_a_higher_one():
    upward = [(a, b) for a, targets in graph(REPORT).items() for b in targets
              if layer_of(a) is not None and layer_of(b) is not None
              and layer_of(b) > layer_of(a)]
    assert not upward, "\n".join(f"{a} imports {b}" for a, b in sorted(upward))


def test_bench_imports_ray_only_on_the_fleet_path():
    """bench/ runs with torch and the standard library: Ray, an optional engine, is imported
    by bench/fleet/launcher.py alone, which only `python -m bench --ray` imports, and the modules a
    local run loads leave it out."""
    importers = {name for name, path in ((module_name(p), p) for p in BENCH.rglob("*.py"))
                 if any(line.split()[:2] in (["import", "ray"], ["from", "ray"])
                        or line.startswith(("import ray.", "from ray.")) for line in
                        (raw.strip() for raw in path.read_text().splitlines()))}
    assert importers == {"bench.fleet.launcher"}
    probe = ("import sys, bench.cli, bench.runner, bench.pool, bench.fleet.task\n"
             "bench.cli.main(['--list'])\n"
             "print(sorted(m for m in sys.modules\n"
             "             if m == 'bench.fleet.launcher' or m.split('.')[0] == 'ray'))")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
