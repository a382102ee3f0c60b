"""The study notebooks (analysis/<study>.ipynb) execute on the committed results, and are
kept in git without outputs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ANALYSIS = Path(__file__).resolve().parent.parent / "analysis"
NOTEBOOKS = sorted(ANALYSIS.glob("*.ipynb"))


def test_one_notebook_per_study():
    assert {p.stem for p in NOTEBOOKS} == {"kazempour", "demarchi", "lee", "brecht"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, path.name


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))   # figures go here, not results/
    monkeypatch.delenv("GEM5", raising=False)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ANALYSIS)}}).execute()
    errors = [o for c in notebook.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    # Every view a figure drew is shown, not only its first.
    shown = sum("image/png" in o.get("data", {}) for c in notebook.cells
                for o in c.get("outputs", []))
    assert shown == len(list((tmp_path / "figures").glob("*.png")))
