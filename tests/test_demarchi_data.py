"""Study 2's committed gem5 results (data/demarchi/): complete runs with provenance, traces
without gaps, and, in the idle mode the figures use, no wake-up of an idle CPU lost."""

from __future__ import annotations

import pytest

from schedlab.analysis.store import load_committed
from schedlab.campaigns import carried, demarchi
from schedlab.campaigns.experiment import label_key, registry
from schedlab.campaigns.locations import carried_paths, table_paths
from schedlab.guest import workloads


def _tables(name, scale, kind):
    e = registry()[name]
    return (table_paths if kind == "full" else carried_paths)(e, scale, "gem5")


# The full tables of a figure, and the runs carried towards one not finished yet.
COMMITTED = [(name, scale, kind) for name, e in registry().items() if e.study == "demarchi"
             for scale in ("smoke", "paper") for kind in ("full", "partial")
             if all(p.is_file() for p in _tables(name, scale, kind).values())]
pytestmark = pytest.mark.skipif(not COMMITTED, reason="no committed study-2 gem5 tables yet")


def _main(name, scale, kind):
    return load_committed(_tables(name, scale, kind)[""])


def _requests_of(name, scale, main):
    """Each committed row's request, matched by label (a run id also hashes the builds)."""
    requests = registry()[name].requests(scale, "gem5")
    assert len({label_key(r.label) for r in requests}) == len(requests)
    return carried.row_requests(main, requests)


@pytest.mark.parametrize("name,scale,kind", COMMITTED)
def test_runs_are_complete_with_provenance(name, scale, kind):
    main = _main(name, scale, kind)
    assert main["ok"].all() and (main["exit"] == 0).all() and (main["verified"] == 1).all()
    for col in ("gem5_version", "gem5_hash", "kernel", "image", "run_id"):
        assert main[col].notna().all(), col
    assert main["gem5_version"].str.startswith("24.0").all()
    assert main["run_id"].is_unique
    # Every row is one of today's runs, with every sample of its mixer's size.
    requests = _requests_of(name, scale, main)
    assert None not in requests, main.loc[[r is None for r in requests], "run_id"]
    mixer = workloads.get("mixer")
    want = [mixer.expect(r.jobs[0].size)["samples"] for r in requests]
    assert main["samples"].tolist() == want
    if kind == "full":
        # Every condition of each repetition it holds (a table made before the definition
        # ran five repetitions holds fewer: it is stale and says so, test_currency).
        reps = set(main["rep"].astype(int))
        assert len(main) == sum(int(r.label["rep"]) in reps
                                for r in registry()[name].requests(scale, "gem5"))
    assert (main["trace_lost_events"] == 0).all()


@pytest.mark.parametrize("name,scale,kind", COMMITTED)
def test_no_wake_up_is_late_in_the_figures_idle_mode(name, scale, kind):
    main = _main(name, scale, kind)
    used = main[main["idle"] == demarchi.IDLE]
    # Every run's wake-ups were traced; two busy cores leave few onto an idle CPU (vanilla
    # on 2 cores: a handful a run), all the runs together have many.
    assert len(used) and (used["wake_wakeups"] > 1000).all()
    assert used["wake_onto_idle"].sum() > 100
    assert (used["wake_late"] == 0).all(), used[["run_id", "wake_late", "wake_max_us"]]


@pytest.mark.parametrize("name,scale,kind", [c for c in COMMITTED if c[0] == "demarchi-fig3"])
def test_every_cpu_change_between_turns_is_a_traced_migration(name, scale, kind):
    """Two views of the same trace: a task that ran on another CPU than in its previous turn
    was moved there (sched_migrate_task), so each task has at least that many migrations."""
    paths = _tables(name, scale, kind)
    main, turns = load_committed(paths[""]), load_committed(paths["turns"])
    assert set(turns["run_id"]) == set(main["run_id"])
    for (run_id, task), mine in turns.sort_values("start_us").groupby(["run_id", "task"]):
        changes = int((mine["cpu"].diff().dropna() != 0).sum())
        migrations = main.loc[main["run_id"] == run_id, f"{task}_migrations"].item()
        assert migrations >= changes, (run_id, task, migrations, changes)
        assert (mine["end_us"] > mine["start_us"]).all()
