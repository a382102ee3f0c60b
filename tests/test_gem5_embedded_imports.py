"""What gem5's embedded Python loads from this repository, tested without gem5.

gem5 runs configs/schedlab_gem5.py with its own Python, which has the standard library and
gem5's modules, not our virtual environment. The script and its components import three
modules of schedlab (the board plan, the per-task attribution and the sampling schedule):
those must import with the standard library alone, and every name configs/ imports from
schedlab or from its own files must exist. (gem5's side of the imports is checked by
tests/test_gem5_configs_dry.py, with a gem5 source tree.)
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab.backends.gem5.binary import gem5_side_files

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"
# The schedlab modules gem5's Python may load (with their packages' __init__ files): those
# whose code the run id hashes as gem5-side (binary.gem5_side_files, the one list of them).
EMBEDDED = tuple(p.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
                 for p in gem5_side_files()
                 if p.is_relative_to(REPO / "schedlab") and p.name != "__init__.py")


def _config_files() -> list[Path]:
    return sorted(CONFIGS.rglob("*.py"))


def test_embedded_modules_import_with_the_standard_library_only():
    # -I: no user site, no PYTHON* variables; -S: no site-packages (no venv).
    code = f"""
import json, sys
sys.path.insert(0, {str(REPO)!r})
before = set(sys.modules)
for name in {list(EMBEDDED)!r}:
    __import__(name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    ours = {m for m in loaded if m == "schedlab" or m.startswith("schedlab.")}
    assert ours == {"schedlab", "schedlab.backends", "schedlab.backends.gem5", *EMBEDDED}
    foreign = [m for m in loaded if m not in ours
               and m.partition(".")[0] not in sys.stdlib_module_names]
    assert foreign == []


@pytest.mark.parametrize("path", _config_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_config_file_compiles_and_imports_only_what_exists(path):
    tree = compile(path.read_text(), str(path), "exec", ast.PyCF_ONLY_AST)
    compile(tree, str(path), "exec")
    local = {p.relative_to(CONFIGS).with_suffix("").as_posix().replace("/", ".")
             .removesuffix(".__init__") for p in _config_files()}
    package = path.parent.relative_to(CONFIGS).as_posix().replace("/", ".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:   # relative: from .caches import ...
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            module, names = None, [a.name for a in node.names]
        else:
            continue
        for target in ([module] if module is not None else names):
            top = target.partition(".")[0]
            if top == "schedlab":
                if module is not None and all(f"{target}.{n}" in EMBEDDED for n in names):
                    continue   # from schedlab.backends.gem5 import plan
                assert target in EMBEDDED, (
                    f"{path.name} imports {target}, which gem5's Python cannot load "
                    f"(only {', '.join(EMBEDDED)} are standard-library only)")
                mod = importlib.import_module(target)
                missing = [n for n in names if module is not None and not hasattr(mod, n)]
                assert missing == [], f"{path.name}: {target} has no {missing}"
            elif target in local or top in {m.partition(".")[0] for m in local}:
                assert target in local, f"{path.name} imports {target}: no such file in configs/"
                if module is not None:
                    text = (CONFIGS / (target.replace(".", "/") + ".py")).read_text() \
                        if (CONFIGS / (target.replace(".", "/") + ".py")).exists() else ""
                    defined = {n.name for n in ast.parse(text).body
                               if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
                    defined |= {t.id for n in ast.parse(text).body if isinstance(n, ast.Assign)
                                for t in n.targets if isinstance(t, ast.Name)}
                    missing = [n for n in names if n not in defined]
                    assert missing == [], f"{path.name}: {target} has no {missing}"
            else:
                assert top in sys.stdlib_module_names or top in ("m5", "gem5", "_m5"), (
                    f"{path.name} imports {target}: neither gem5, the standard library, "
                    f"nor an embedded schedlab module")
