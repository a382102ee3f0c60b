"""Every import of schedlab's own code names a module and a name that exist.

Imports (and the names used through them) inside functions and fixtures run only when those
do (a gem5-only path, a fixture of a slow QEMU test), so a module that moved can hide there:
test_kernel_series.py and a fixture of test_sched_qemu.py still imported ``schedlab.kernel``
and ``schedlab.workloads`` after the package was split into folders. This reads every import
statement of the package, the tests, the benchmarks and the notebooks without running them.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from pyimports import top_level_names

REPO = Path(__file__).resolve().parent.parent


def _module_file(module: str) -> Path | None:
    path = REPO.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _sources() -> list[tuple[str, str]]:
    files = [*sorted((REPO / "schedlab").rglob("*.py")), *sorted((REPO / "tests").glob("*.py")),
             *sorted((REPO / "bench").glob("*.py")), REPO / "run.py"]
    out = [(str(p.relative_to(REPO)), p.read_text()) for p in files]
    for nb in sorted((REPO / "analysis").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        # IPython magics and shell lines are not Python.
        code = "\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!")))
        out.append((str(nb.relative_to(REPO)), code))
    return out


def _problems(name: str, text: str) -> list[str]:
    problems = []
    tree = ast.parse(text, name)
    modules: dict[str, str] = {}  # local name -> schedlab module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            wanted = [(node.module, a.name) for a in node.names]
        else:
            continue
        for module, attr in wanted:
            if module.split(".")[0] != "schedlab":
                continue
            where = f"{name}:{node.lineno}"
            path = _module_file(module)
            if path is None:
                problems.append(f"{where}: no module {module}")
            elif attr not in (None, "*") and _module_file(f"{module}.{attr}") is None \
                    and attr not in top_level_names(path):
                problems.append(f"{where}: {module} has no {attr}")
            alias = next(a.asname for a in node.names if a.name == (attr or module))
            if attr is not None and _module_file(f"{module}.{attr}"):
                modules[alias or attr] = f"{module}.{attr}"
            elif attr is None and alias:
                modules[alias] = module
    # Names used through a module's local name (W.binary with W = schedlab.guest.workloads).
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules:
            module = modules[node.value.id]
            path = _module_file(module)
            if path and _module_file(f"{module}.{node.attr}") is None \
                    and node.attr not in top_level_names(path):
                problems.append(f"{name}:{node.lineno}: {module} has no {node.attr}")
    return problems


SOURCES = _sources()


@pytest.mark.parametrize("name,text", SOURCES, ids=[n for n, _ in SOURCES])
def test_imports_of_schedlab_resolve(name, text):
    assert _problems(name, text) == []


def test_the_check_finds_stale_imports():
    stale = ("from schedlab import kernel\n"
             "def f():\n    from schedlab.guest import workloads as W\n"
             "    from schedlab.guest.workloads import binary\n"
             "    import schedlab.gem5_plan\n"
             "    return W.binary('mixer'), W.load_registry()\n")
    assert [p.split(": ", 1)[1] for p in _problems("x.py", stale)] == [
        "schedlab has no kernel", "schedlab.guest.workloads has no binary",
        "no module schedlab.gem5_plan", "schedlab.guest.workloads has no binary"]


# The data flow of the README's layout, upstream first: a module imports only from its own
# layer or those before it (at load time or inside a function alike).
LAYERS = [("schedlab.errors", "schedlab.paths", "schedlab.store", "schedlab.processes"),
          ("schedlab.machine", "schedlab.guest", "schedlab.backends", "schedlab.runs"),
          ("schedlab.analysis",),
          ("schedlab.campaigns",),
          ("schedlab.cli",)]


def _layer(module: str) -> int | None:
    return next((i for i, names in enumerate(LAYERS)
                 if any(module == n or module.startswith(n + ".") for n in names)), None)


def _upward(name: str, text: str) -> list[str]:
    mine = _layer(name.removesuffix(".py").replace("/", "."))
    if mine is None:
        return []
    found = []
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        layers = [t for t in (_layer(m) for m in targets) if t is not None]
        if layers and max(layers) > mine:
            found.append(f"{name}:{node.lineno} imports {targets[0]} (a later layer)")
    return found


def test_no_module_imports_from_a_later_layer():
    problems = [p for name, text in SOURCES if name.startswith("schedlab/")
                for p in _upward(name, text)]
    assert problems == []


def test_the_layer_check_finds_an_upward_import():
    text = "def f():\n    from schedlab.campaigns.cost import busy_cpus\n"
    assert _upward("schedlab/runs.py", text) == [
        "schedlab/runs.py:2 imports schedlab.campaigns.cost (a later layer)"]
    assert _upward("schedlab/campaigns/cost.py", "from schedlab.runs import RunRequest\n") == []
