"""Whether a committed table is what today's tree makes: current or stale.

A committed table's rows carry the run ids that made them. A run id hashes everything the
run's outcome depends on (the machine, the kernel's and image's build keys, the workloads,
the gem5-side code, the request), so a table whose run ids today's tree computes for the
experiment's requests is *current*: re-making it would make those runs. Any other table is
*stale*: made by code no longer in the tree; it still draws its figure, marked so, until
the experiment is re-made. Ids are computed from the build keys alone (``prepare(...,
build=False)``), so this needs no build and no gem5.

Stale tables are also named in their study's ``data/<study>/README.md`` (section
"Currency"; tests/test_currency.py checks that the README and the tree agree).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from schedlab import paths
from schedlab.campaigns.experiment import Experiment
from schedlab.runs import prepare


@dataclass(frozen=True)
class Currency:
    """How one committed table stands against today's tree."""

    table: Path
    runs: int             # distinct runs in the table
    current_runs: int     # of them, those whose ids today's requests have
    requested: int        # today's requests of the experiment at the table's scale
    made_at: str          # the commit that last wrote the table ("" outside a git checkout)

    @property
    def current(self) -> bool:
        return self.runs > 0 and self.current_runs == self.runs

    @property
    def state(self) -> str:
        return "current" if self.current else "stale"

    def describe(self) -> str:
        """One line for listings, captions and the report."""
        made = f", committed at {self.made_at}" if self.made_at else ""
        if self.current:
            return (f"current: today's tree computes the run ids of all {self.runs} runs"
                    f"{made}")
        if not self.runs:
            return f"stale: it records no run ids{made}; to be re-made"
        return (f"stale: today's tree computes the run ids of {self.current_runs} of its "
                f"{self.runs} runs{made}; made by earlier code, to be re-made")


def todays_run_ids(experiment: Experiment, scale: str, backend: str) -> set[str]:
    """The run ids today's tree gives the experiment's requests (nothing is built)."""
    return {prepare(r, progress=lambda s: None, build=False).run_id
            for r in experiment.requests(scale, backend)}


def currency(experiment: Experiment, table: Path, scale: str, backend: str,
             today: set[str] | None = None) -> Currency | None:
    """The committed ``table``'s :class:`Currency`, or None where there is no table."""
    if not table.is_file() or not table.stat().st_size:
        return None
    frame = pd.read_csv(table, usecols=lambda c: c == "run_id")
    # A table without run ids (written by hand, or before ids were recorded) is stale: no
    # run of it can be named, so none can be re-made.
    ids = set(frame["run_id"].dropna()) if "run_id" in frame else set()
    today = todays_run_ids(experiment, scale, backend) if today is None else today
    return Currency(table, len(ids), len(ids & today), len(today), last_commit(table))


@cache
def last_commit(path: Path) -> str:
    """The short hash and date of the commit that last changed ``path`` ("" if none)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h, %cs", "--", str(path)],
                             cwd=paths.REPO, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
