"""Python code stays within the project's 100 columns: code is read more often than written."""

from __future__ import annotations

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
