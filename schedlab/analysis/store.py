"""The results store: every run as tidy rows, locally and in committed compact form.

- ``results/runs.parquet``: one row per job repetition of every finished run under
  ``results/``, updated incrementally (only run directories not yet in it are read).
- ``data/<study>/<experiment>--<scale>--<backend>.csv``: the compact table of one
  experiment's runs, with provenance columns; committed to the repository, so a figure
  regenerates on a machine without gem5. Raw gem5 output is never committed.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from schedlab import paths
from schedlab.analysis.tables import rows
from schedlab.store import write_atomic

DATA = paths.REPO / "data"
STORE_NAME = "runs.parquet"


def store_path() -> Path:
    return paths.results_dir() / STORE_NAME


def update_store(say=print) -> pd.DataFrame:
    """Add every finished run not yet in the store; return the whole store. The store is an
    index of the run directories: one that cannot be read (a truncated or foreign file) is
    rebuilt from them, and ``say`` says so."""
    path = store_path()
    known, rebuild = pd.DataFrame(), False
    if path.is_file():
        try:
            known = pd.read_parquet(path)
        except (OSError, ValueError) as e:     # pyarrow's ArrowInvalid is a ValueError
            say(f"results store {path} cannot be read ({str(e).splitlines()[0]}); rebuilding "
                f"it from the run directories beside it")
            rebuild = True
    have = set(known["run_id"]) if "run_id" in known else set()
    new = [r for d in sorted(paths.results_dir().iterdir())
           if d.is_dir() and not d.name.startswith(".") and d.name not in have
           and (d / "results.json").is_file() for r in rows(d)]
    if not new and not rebuild:
        return known
    frame = pd.concat([known, pd.DataFrame(new)], ignore_index=True)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    write_atomic(path, buffer.getvalue())
    return frame


def committed_path(study: str, experiment: str, scale: str, backend: str,
                   part: str = "") -> Path:
    suffix = f"--{part}" if part else ""
    return DATA / study / f"{experiment}--{scale}--{backend}{suffix}.csv"


def save_committed(frame: pd.DataFrame, path: Path) -> Path:
    """Write a compact table (CSV: small, reviewable in a diff) atomically."""
    write_atomic(path, frame.to_csv(index=False))
    return path


def load_committed(path: Path) -> pd.DataFrame | None:
    """A compact table, None if it is not there; an empty one (a run kind that has no rows
    of this part, saved as an empty file) as an empty frame."""
    if not path.is_file():
        return None
    try:
        # pandas 3 leaves each column of a read table in a block of its own; a wide table
        # then warns (PerformanceWarning) at every column a figure adds. copy() joins them.
        return pd.read_csv(path).copy()
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
