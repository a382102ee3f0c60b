"""Study 1's committed gem5 results (data/kazempour/) hold what the study's method needs:
real quanta on gem5's simulated clock, complete per-task attribution, full provenance."""

from __future__ import annotations

import pytest

from schedlab.analysis.kazempour import ATTRIBUTED
from schedlab.analysis.store import load_committed
from schedlab.campaigns.experiment import registry
from schedlab.campaigns.locations import table_paths

COMMITTED = [(name, scale) for name, e in registry().items() if e.study == "kazempour"
             for scale in ("smoke", "paper")
             if all(p.is_file() for p in table_paths(e, scale, "gem5").values())]
pytestmark = pytest.mark.skipif(not COMMITTED, reason="no committed study-1 gem5 tables yet")


def _tables(name, scale):
    paths = table_paths(registry()[name], scale, "gem5")
    return {part: load_committed(p) for part, p in paths.items()}


@pytest.mark.parametrize("name,scale", COMMITTED)
def test_runs_are_complete_with_provenance(name, scale):
    main = _tables(name, scale)[""]
    assert main["ok"].all() and (main["exit"].isin([0, 143])).all()
    for col in ("gem5_version", "gem5_hash", "kernel", "image", "run_id"):
        assert main[col].notna().all(), col
    assert main["gem5_version"].str.startswith("24.0").all()
    # Every repetition is a distinct run (gem5 is deterministic: no identical reruns).
    assert main["run_id"].is_unique


@pytest.mark.parametrize("name,scale", COMMITTED)
def test_the_tasks_shares_add_up_to_the_cpus_totals(name, scale):
    main = _tables(name, scale)[""]
    # Instructions to 1e-4 (the totals' dump comes a few instructions after the region's
    # end: see ATTRIBUTED); the tasks are never charged more misses than happened.
    assert main["attributed_insts_share"].between(1 - 1e-4, 1 + 1e-6).all()
    for k in ATTRIBUTED:
        assert (main[f"attributed_{k}_share"] <= 1 + 1e-6).all(), k


@pytest.mark.parametrize("name,scale", COMMITTED)
def test_quanta_on_the_simulated_clock(name, scale):
    tables = _tables(name, scale)
    turns, scope = tables["turns"], tables[""].set_index("run_id")["turns_scope"]
    full = turns[turns["full"].astype(bool)]
    assert len(full) > 0
    if "bv" in full and full["bv"].notna().any():
        # Experiment A: benchmark and base vector alternate on their CPU with the quantum:
        # every turn of a region the launcher marked, and, in runs made before it did
        # (whose turns include the warm-up, data/kazempour/README.md), the last two full
        # turns of each run, which are its region's (the region ends the run).
        full = full.assign(on_time=abs(full["ms"] - full["quantum_ms"])
                           <= 0.1 * full["quantum_ms"])
        region = full[full["run_id"].map(scope) == "region"]
        if len(region):
            assert region["on_time"].mean() >= 0.95, region["ms"].describe()
        for run_id, run in full[full["run_id"].map(scope) == "run"].groupby("run_id"):
            assert run["on_time"].tail(2).all(), (run_id, run["ms"].tolist())


def test_every_condition_panels_keep_title_and_legend_apart(tmp_path, drawn_figure):
    # Experiment A's figure drawn from Fig. 2's committed runs (its condition: MUP, low L2
    # retention, 2 ms, BV_L1I): the panel's condition on the left, the legend on the right
    # of the strip above the axes, not on top of each other.
    from schedlab.analysis import kazempour as K
    from schedlab.analysis.figures import FigureContext
    frame = _tables("kazempour-fig2", "smoke")[""]
    kept = drawn_figure(K)
    ctx = FigureContext(name="kazempour-expA", title="t", scale="smoke", backend="gem5")
    K._every_condition(frame, "task_ipc", ctx, tmp_path / "f.png")
    (ax,) = kept["fig"].axes
    renderer = kept["fig"].canvas.get_renderer()
    title = ax.title if ax.get_title() else ax._left_title
    assert "clovertown-e5320-mup" in title.get_text() and "low L2 retention" in title.get_text()
    legend = ax.get_legend().get_window_extent(renderer)
    assert not title.get_window_extent(renderer).overlaps(legend)
    assert ax.get_ylabel().startswith("IPC")


def test_experiment_a_draws_before_any_low_affinity_run_finished(tmp_path, drawn_figure):
    # --partial while only the BV_0 runs exist (it raised ValueError: a figure of no
    # columns): the BV_0 bars in each condition, each beside an empty partner.
    from schedlab.analysis import kazempour as K
    from schedlab.analysis.figures import FigureContext
    frame = _tables("kazempour-expA", "smoke")[""]
    bv0 = frame[frame["bv"] == "bv_0"]
    kept = drawn_figure(K)
    ctx = FigureContext(name="kazempour-expA", title="t", scale="smoke", backend="gem5")
    K._every_condition(bv0, "task_ipc", ctx, tmp_path / "f.png")
    axes = kept["fig"].axes
    assert len(axes) == 8                        # 4 conditions x both base vectors' columns
    heights = [p.get_height() for p in axes[0].patches]
    assert sum(h == h for h in heights) == len(set(bv0["benchmark"]))  # BV_0's bars only


def test_experiment_a_draws_fig_2_and_3s_plots_for_every_condition(tmp_path, drawn_figure):
    # Fig. 2's IPC and Fig. 3's L1 I-cache misses, and the L1 D-cache's for BV_L1D, each in
    # every condition of experiment A (from its committed runs), each figure titled by its
    # own metric.
    from schedlab.analysis import kazempour as K
    from schedlab.analysis.figures import FigureContext
    kept = drawn_figure(K)
    experiment = registry()["kazempour-expA"]
    tables = _tables("kazempour-expA", "smoke")
    ctx = FigureContext(name=experiment.name, title=experiment.title, scale="smoke",
                        backend="gem5")
    K.draw(experiment, tables, ctx, tmp_path / "expA.png")
    titles, labels, panels, names = zip(*((c.title, f.axes[0].get_ylabel(), len(f.axes),
                                           d.name) for f, c, d in kept["drawn"]))
    assert names == ("expA.png", "expA--task_l1i_mpi.png", "expA--task_l1d_mpi.png",
                     "expA--quanta.png")
    assert titles[0].startswith("Experiment A, every condition: IPC per benchmark")
    assert "L1 I-cache misses per instruction per benchmark" in titles[1]
    assert "L1 D-cache misses per instruction per benchmark" in titles[2]
    assert labels[0].startswith("IPC") and labels[1].startswith("L1 I-cache misses")
    assert labels[2].startswith("L1 D-cache misses")
    # Two machines x two L2 retentions x one quantum (smoke), BV_L1D and BV_L1I: 8 panels.
    assert panels[:3] == (8, 8, 8)


def test_experiment_b_finds_the_copies_of_a_program_started_through_a_shell():
    """A real program with a redirection starts as the shell that execs it (launch -> sh ->
    gzip): the copies are the processes named as the measured job is after its last exec,
    not "sh", which the runner's shell is too."""
    from schedlab.analysis import kazempour
    from schedlab.analysis.slices import Switch

    def switch(t, prev, next_):
        return Switch(0, t, prev[0], prev[1], "S", next_[0], next_[1], 120)
    runner, job, copy = (5, "sh"), 10, 11
    # Preempted between its two execs, it is switched in once as "sh".
    switches = [switch(0.0, runner, (job, "launch")), switch(0.1, (job, "sh"), runner),
                switch(0.15, runner, (job, "sh")), switch(0.2, (job, "sh"), runner),
                switch(0.25, runner, (job, "gzip")), switch(0.3, (job, "gzip"), (copy, "sh")),
                switch(0.4, (copy, "gzip"), (job, "gzip")), switch(0.5, (job, "gzip"), runner)]
    tasks = {str(p): {"insts": 100, "cycles": 200, "llc_misses": 1} for p in (5, 10, 11)}
    out = kazempour._main_copies(switches, {"pid": job, "tasks": tasks})
    assert out["copies"] == 2 and out["copies_ipc"] == 0.5
