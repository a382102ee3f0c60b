"""Python code stays within the project's 100 columns and passes the linter (ruff.toml):
code is read more often than written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_COLUMNS = 100


def test_python_lines_within_100_columns():
    files = [p for folder in ("schedlab", "tests", "bench", "configs")
             for p in sorted((REPO / folder).rglob("*.py"))] + [REPO / "run.py"]
    too_long = [f"{p.relative_to(REPO)}:{n}: {len(line)} columns"
                for p in files
                for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                if len(line) > MAX_COLUMNS]
    assert not too_long, (f"lines longer than {MAX_COLUMNS} columns:\n"
                          + "\n".join(too_long))


def test_python_code_passes_the_linter():
    """pycodestyle's and pyflakes' checks as ruff runs them (ruff.toml): no unused import or
    name, no ambiguous one-letter name, blank lines where PEP 8 puts them."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                          "schedlab", "tests", "bench", "configs", "run.py"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
