"""Study 3's committed gem5 results (data/lee/) hold what its figures claim: every run of the
definition, ok, with provenance, the ROI between the first mapping and the next phase, and
repetitions that are distinct simulations."""

from __future__ import annotations

import pytest

from conftest import committed_gem5_runs_check
from schedlab.analysis.store import load_committed
from schedlab.campaigns.lee import REPS
from schedlab.campaigns.experiment import registry
from schedlab.campaigns.reproduce import table_paths

COMMITTED = [name for name, e in registry().items() if e.study == "lee"
             if all(p.is_file() for p in table_paths(e, "smoke", "gem5").values())]
pytestmark = pytest.mark.skipif(not COMMITTED, reason="no committed study-3 gem5 tables yet")


def _main(name):
    return load_committed(table_paths(registry()[name], "smoke", "gem5")[""])


def _coordinates(name) -> list[str]:
    """The label's keys of the experiment's requests (a row carries them as columns)."""
    return sorted({k for r in registry()[name].requests("smoke", "gem5") for k in r.label})


@pytest.mark.parametrize("name", COMMITTED)
def test_runs_are_the_definitions_with_provenance(name):
    committed_gem5_runs_check(name, _main(name))


@pytest.mark.parametrize("name", COMMITTED)
def test_repetitions_are_distinct_simulations(name):
    main = _main(name)
    counter = "task_cycles" if "task_cycles" in main else "gem5_cycles"
    coords = [k for k in _coordinates(name) if k != "rep"]
    for _, reps in main.groupby(coords):
        assert len(reps) == REPS["smoke"] == reps[counter].nunique(), reps[["run_id", counter]]


@pytest.mark.parametrize("name", COMMITTED)
def test_no_region_changed_inside_the_roi(name):
    """The timings put the ROI between the first mapping and the next phase: regions were
    mapped when it began and none was formed, merged or torn down inside it."""
    main = _main(name)
    regioned = main[main["policy"].str.startswith("region-")]
    assert (regioned["changes_in_roi"].fillna(0) == 0).all()
    if "merges_in_roi" in regioned:
        assert (regioned[["merges_in_roi", "teardowns_in_roi"]].fillna(0) == 0).all().all()
    assert (regioned["local_at_roi"] >= 1).all()


@pytest.mark.skipif("lee-fig18-23" not in COMMITTED, reason="lee-fig18-23 not committed")
def test_changes_from_a_near_zero_base_are_drawn_as_factors(tmp_path, drawn_figure):
    """Figs. 18-23: IPC changes are labelled in per cent; last-level misses that grew from
    about 0.006 per 1000 instructions (namd under unification) as a factor."""
    from schedlab.analysis import lee
    from schedlab.analysis.figures import FigureContext
    e = registry()["lee-fig18-23"]
    tables = {part: load_committed(p)
              for part, p in table_paths(e, "smoke", "gem5").items()}
    kept = drawn_figure(lee)
    ctx = FigureContext(name=e.name, title="t", scale="smoke", backend="gem5")
    lee.draw(e, tables, ctx, tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f.png")
    ipc, misses = fig.axes[0], fig.axes[2]
    assert ipc.get_ylabel().startswith("IPC") and "misses" in misses.get_ylabel()
    labels = {a: [t.get_text() for t in a.texts if not t.get_text().startswith("n=")]
              for a in (ipc, misses)}
    assert all(t.endswith("%") for t in labels[ipc]), labels[ipc]
    assert any(t.startswith("x") and int(t[1:]) >= 10 for t in labels[misses]), labels[misses]


def test_fig24s_percentile_bars_show_the_runs_and_no_negative_time(drawn_figure, tmp_path):
    """Two runs a bar, one of them with a single late request: mean - 2 sd would reach
    below zero; the whiskers stop at zero and each run is a dot."""
    from schedlab.analysis import lee as L
    from schedlab.analysis.figures import FigureContext
    paths = table_paths(registry()["lee-fig24"], "smoke", "gem5")
    if not paths[""].is_file():
        pytest.skip("lee-fig24's gem5 tables are not committed")
    frame = load_committed(paths[""])
    kept = drawn_figure(L)
    ctx = FigureContext(name="lee-fig24", title="t", scale="smoke", backend="gem5")
    L._consolidation(frame, [(("roi_p50_ms", "roi_max_ms"), "ms")], ctx,
                     tmp_path / "f.png", "")
    fig = kept["fig"]
    for ax in fig.axes:
        bottoms = [seg[:, 1].min() for coll in ax.collections
                   for seg in coll.get_segments()]
        assert bottoms and min(bottoms) >= 0, ax.get_title()
        dots = [line for line in ax.get_lines() if line.get_marker() == "o"]
        runs = frame[frame["machine"] == ax.get_title()]
        assert sum(len(d.get_xdata()) for d in dots) == 2 * len(runs)
