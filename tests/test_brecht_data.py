"""Study 4's committed gem5 results (data/brecht/) hold what its figures claim: every run of
the definition, ok, with provenance, every job and placement traced, and repetitions that
are distinct simulations."""

from __future__ import annotations

import pytest

from conftest import committed_gem5_runs_check
from schedlab.analysis.store import load_committed
from schedlab.campaigns.brecht import REPS
from schedlab.campaigns.experiment import registry
from schedlab.campaigns.locations import table_paths

COMMITTED = [name for name, e in registry().items() if e.study == "brecht"
             if all(p.is_file() for p in table_paths(e, "smoke", "gem5").values())]
pytestmark = pytest.mark.skipif(not COMMITTED, reason="no committed study-4 gem5 tables yet")


def _tables(name) -> dict:
    return {part: load_committed(path)
            for part, path in table_paths(registry()[name], "smoke", "gem5").items()}


def _coordinates(name) -> list[str]:
    return sorted({k for r in registry()[name].requests("smoke", "gem5") for k in r.label})


@pytest.mark.parametrize("name", COMMITTED)
def test_runs_are_the_definitions_with_provenance(name):
    main = _tables(name)[""]
    committed_gem5_runs_check(name, main)
    assert (main["cpu"] == "timing").all()


@pytest.mark.parametrize("name", COMMITTED)
def test_every_job_and_placement_was_traced(name):
    """Each run's jobs are its streams' applications, all exited; its tracepoints lost no
    event and no thread was refused a processor."""
    t = _tables(name)
    main, jobs = t[""], t["jobs"]
    assert (main["trace_lost_events"] == 0).all() and (main["placed_fail"] == 0).all()
    assert (main["exit"] == 0).all()
    per_run = jobs.groupby("run_id").size()
    assert per_run.to_dict() == main.set_index("run_id")["jobs"].to_dict()
    assert set(t["placements"]["run_id"]) == set(main["run_id"])


@pytest.mark.parametrize("name", COMMITTED)
def test_repetitions_are_distinct_simulations(name):
    main = _tables(name)[""]
    coords = [k for k in _coordinates(name) if k != "rep"]
    for _, reps in main.groupby(coords):
        # Every repetition the table holds (at most the definition's), each its own run.
        assert len(reps) == main["rep"].nunique() == reps["gem5_cycles"].nunique(), reps
        assert len(reps) <= REPS["smoke"]


@pytest.mark.skipif("brecht-fig2" not in COMMITTED, reason="no committed brecht-fig2 tables")
def test_at_parallelism_8_hough_and_mm_held_fewer_processors_than_their_threads():
    """data/brecht/reading.md: FFT, PDE and SIMPLEX held 8 processors at once, HOUGH 6 to 8
    and MM 4 to 6 (their threads end and new ones take the processors they left)."""
    placements = _tables("brecht-fig2")["placements"]
    placements = placements[placements["parallelism"] == 8].sort_values("time_s")
    held: dict[str, set[int]] = {}
    for (_, app, _), g in placements.groupby(["run_id", "application", "tgid"]):
        step = g["event"].map({"place": 1, "release": -1}).fillna(0)
        held.setdefault(app, set()).add(int(step.cumsum().max()))
    assert {app: (min(v), max(v)) for app, v in held.items()} == {
        "fft": (8, 8), "pde": (8, 8), "simplex": (8, 8), "hough": (6, 8), "mm": (4, 6)}
