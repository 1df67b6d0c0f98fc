"""bench/ imports in one direction: no module reaches itself again through imports, those
inside functions included (a reader following one lands back where they began)."""

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


def graph() -> dict[str, set[str]]:
    paths = sorted(BENCH.rglob("*.py"))
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
