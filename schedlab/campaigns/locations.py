"""Where a figure's things are: its compact tables (committed under ``data/<study>/`` for
gem5, ``results/tables/`` otherwise), the tables ``--partial`` writes and ``--carry`` keeps,
the drawn figures, and the study's written reading."""

from __future__ import annotations

from pathlib import Path

from schedlab import paths
from schedlab.analysis.store import DATA, committed_path
from schedlab.backends.backend import BackendName
from schedlab.campaigns import carried
from schedlab.campaigns.experiment import Experiment, Scale, registry


def figures_dir() -> Path:
    path = paths.results_dir() / "figures"
    path.mkdir(parents=True, exist_ok=True)
    return path


def reading_path(study: str) -> Path:
    """The study's written reading of its committed results (Markdown, may not exist)."""
    return DATA / study / "reading.md"


def table_paths(experiment: Experiment, scale: str, backend: str,
                committed: bool | None = None) -> dict[str, Path]:
    """Where the experiment's compact tables live: committed (data/) for gem5, and for
    QEMU tables committed by hand when ``committed`` (study 4's, which cannot run on gem5
    yet); else results/tables/."""
    parts = experiment.analysis.parts
    if backend == BackendName.GEM5 or committed:
        return {p: committed_path(experiment.study, experiment.name, scale, backend, p)
                for p in parts}
    root = paths.results_dir() / "tables" / experiment.study
    return {p: root / committed_path(experiment.study, experiment.name, scale, backend, p).name
            for p in parts}


def partial_paths(experiment: Experiment, scale: str, backend: str) -> dict[str, Path]:
    """Where ``--partial`` writes the tables of the runs finished so far: results/tables/,
    never data/ (``<name>--<scale>--<backend>--partial[--<part>].csv``)."""
    root = paths.results_dir() / "tables" / experiment.study
    return {part: root / path.name.replace(f"--{backend}", f"--{backend}--partial", 1)
            for part, path in table_paths(experiment, scale, backend).items()}


def carried_paths(experiment: Experiment, scale: str, backend: str) -> dict[str, Path]:
    """Where the experiment's carried tables are (``data/<study>/partial/``)."""
    return carried.paths_for(experiment, scale, backend,
                             tuple(table_paths(experiment, scale, backend)), DATA)


def available_committed() -> list[tuple[str, str]]:
    """(experiment, scale) pairs with committed gem5 tables."""
    out = []
    for name, e in registry().items():
        for scale in Scale:
            if e.implemented and all(p.is_file() for p in table_paths(e, scale, "gem5").values()):
                out.append((name, scale))
    return out
