"""Study 2's committed gem5 results (data/demarchi/): complete runs with provenance, traces
without gaps, and, in the idle mode the figures use, no wake-up of an idle CPU lost."""

from __future__ import annotations

import pytest

from schedlab.analysis.store import load_committed
from schedlab.campaigns import demarchi
from schedlab.campaigns.experiment import registry
from schedlab.campaigns.reproduce import table_paths

COMMITTED = [(name, scale) for name, e in registry().items() if e.study == "demarchi"
             for scale in ("smoke", "paper")
             if all(p.is_file() for p in table_paths(e, scale, "gem5").values())]
pytestmark = pytest.mark.skipif(not COMMITTED, reason="no committed study-2 gem5 tables yet")


def _main(name, scale):
    return load_committed(table_paths(registry()[name], scale, "gem5")[""])


@pytest.mark.parametrize("name,scale", COMMITTED)
def test_runs_are_complete_with_provenance(name, scale):
    main = _main(name, scale)
    assert main["ok"].all() and (main["exit"] == 0).all() and (main["verified"] == 1).all()
    for col in ("gem5_version", "gem5_hash", "kernel", "image", "run_id"):
        assert main[col].notna().all(), col
    assert main["gem5_version"].str.startswith("24.0").all()
    assert main["run_id"].is_unique
    # Every sample's production time is there, and the trace lost nothing.
    size = main["size"] if "size" in main else None   # demarchi-tail's longer runs
    want = {"smoke": 300, "paper": 150_000}[scale]
    assert (main["samples"] == (size.map({"smoke": 3000}).fillna(want) if size is not None
                                else want)).all()
    # demarchi-tail reads only the mixer's production times; its 3000-sample run filled the
    # 1 MiB per-CPU trace buffer (data/demarchi/README.md).
    if name != "demarchi-tail":
        assert (main["trace_lost_events"] == 0).all()


# demarchi-tail's trace is incomplete (see above): its wake-ups are not all there.
@pytest.mark.parametrize("name,scale", [c for c in COMMITTED if c[0] != "demarchi-tail"])
def test_no_wake_up_is_late_in_the_figures_idle_mode(name, scale):
    main = _main(name, scale)
    used = main[main["idle"] == demarchi.IDLE]
    # Two busy cores leave few wake-ups onto an idle CPU; all the runs together have many.
    assert len(used) and (used["wake_onto_idle"] > 0).all() and used["wake_onto_idle"].sum() > 100
    assert (used["wake_late"] == 0).all(), used[["run_id", "wake_late", "wake_max_us"]]


@pytest.mark.parametrize("name,scale", [c for c in COMMITTED if c[0] == "demarchi-fig3"])
def test_every_cpu_change_between_turns_is_a_traced_migration(name, scale):
    """Two views of the same trace: a task that ran on another CPU than in its previous turn
    was moved there (sched_migrate_task), so each task has at least that many migrations."""
    paths = table_paths(registry()[name], scale, "gem5")
    main, turns = load_committed(paths[""]), load_committed(paths["turns"])
    assert set(turns["run_id"]) == set(main["run_id"])
    for (run_id, task), mine in turns.sort_values("start_us").groupby(["run_id", "task"]):
        changes = int((mine["cpu"].diff().dropna() != 0).sum())
        migrations = main.loc[main["run_id"] == run_id, f"{task}_migrations"].item()
        assert migrations >= changes, (run_id, task, migrations, changes)
        assert (mine["end_us"] > mine["start_us"]).all()
