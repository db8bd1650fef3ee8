"""No import cycles and no private names across modules (docs/architecture.md): every import of every module — at module level and inside
functions — is walked, and a cycle among diting's modules fails the test. Imports for annotations
only (``if TYPE_CHECKING:``) never run and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import ROOT

SRC = ROOT / "src"



def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all of them but those under ``if TYPE_CHECKING``."""
    found = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> nx.DiGraph:
    """Module → the diting modules it imports (a package's ``__init__`` it passes through left out)."""
    mods = _modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        is_package = path.name == "__init__.py"
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    here = here[:len(here) - node.level + 1]
                    base = ".".join(here + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in mods and target != name and not name.startswith(target + "."):
                    g.add_edge(name, target)
    return g


def test_the_walk_sees_module_and_function_level_imports():
    g = import_graph()
    assert g.has_edge("diting.graph.store", "diting.ir.columns")      # module level
    assert g.has_edge("diting.cli.graph_commands", "diting.graph.store")  # inside a command's function
    assert not g.has_edge("diting.java.branches", "diting.java.syntax")  # annotations only


def test_no_import_cycle():
    g = import_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


def test_no_module_imports_another_modules_private_name():
    """A name with a leading underscore is its module's own: another module that needs it needs a
    public name (dunder names such as ``__version__`` aside)."""
    found = []
    for name, path in _modules().items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("diting"):
                found += [f"{name} imports {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, found
