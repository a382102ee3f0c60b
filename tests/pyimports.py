"""What a Python module defines at its top level, read from its source (test support: the
import checks of test_imports.py and test_gem5_backend.py)."""

from __future__ import annotations

import ast
from pathlib import Path


def top_level_names(source: Path | ast.Module) -> set[str]:
    """Names a module defines or imports at its top level (also inside if/try/with)."""
    tree = ast.parse(source.read_text()) if isinstance(source, Path) else source
    names: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                     *[s for h in getattr(node, "handlers", []) for s in h.body]]
    return names
