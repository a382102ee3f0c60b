"""Study 4's analysis (schedlab.analysis.brecht) on real runs: the two QEMU runs of
brecht-fig6 at smoke scale kept in tests/data/brecht/ (how they were made: its README),
and, where QEMU is installed, one run made afresh through the project's runner.

What the runs must show: as many jobs as the stream definition implies, response times
equal to end - start, and every job's threads on the CPUs of one pool of the policy's pools,
each first thread in a pool the Worst-Fit rule allows. The confidence intervals are checked
against a computation by hand on a hand-made frame.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.analysis import brecht as B
from schedlab.analysis.figures import FigureContext
from schedlab.campaigns.experiment import get
from schedlab.guest.pools import parse_pool_cpus

DATA = Path(__file__).resolve().parent / "data" / "brecht"
RUNS = sorted(d for d in DATA.iterdir() if d.is_dir())


@pytest.fixture(scope="module")
def tables():
    return B.collect(RUNS)


def _stream_args(run_dir: Path) -> dict:
    """The streams driver's arguments in the run's spec (the last of each flag, which the
    driver takes): --streams, --threads, --repeat, --apps."""
    argv = json.loads((run_dir / "spec.json").read_text())["jobs"][0]["argv"]
    out = {}
    for flag in ("--streams", "--threads", "--repeat", "--apps"):
        if flag in argv:
            out[flag] = argv[len(argv) - 1 - argv[::-1].index(flag) + 1]
    return out


def check_run(tables: dict, run_dir: Path) -> None:
    """What every run of a pools policy with the streams driver must show."""
    res = json.loads((run_dir / "results.json").read_text())
    assert res["ok"], res["errors"]
    run_id = res["run_id"]
    run = tables[""].set_index("run_id").loc[run_id]
    jobs = tables["jobs"][tables["jobs"]["run_id"] == run_id]
    metrics = res["jobs"][0]["metrics"]
    # Job count: streams x rounds x applications, as the request asked.
    args = _stream_args(run_dir)
    apps = args["--apps"].split(",")
    want = int(args["--streams"]) * int(args["--repeat"]) * len(apps)
    assert len(jobs) == want == metrics["jobs"], (len(jobs), args)
    assert sorted(jobs["stream"].unique()) == list(range(int(args["--streams"])))
    # Stream s runs the list rotated by s.
    for job in jobs.itertuples():
        assert job.application == apps[(job.job_index + job.stream) % len(apps)]
    # Response time = end - start (each printed to a microsecond), and the driver's means.
    assert np.allclose(jobs["end_s"] - jobs["start_s"], jobs["response_s"], atol=2e-6)
    assert jobs["response_s"].mean() == pytest.approx(metrics["mean_all"], abs=1e-5)
    # Every job's threads: --threads of them, all in one pool, on that pool's CPUs (a
    # thread that ends before its sibling starts may hand its CPU on: seen on a loaded
    # host, a job of 4 threads on CPUs 12, 13, 13, 13).
    pools = parse_pool_cpus(run["pool_cpus"])
    assert pools == parse_pool_cpus(res["facts"]["sysctl.kernel.sched_pool_cpus"])
    threads = int(args["--threads"])
    for job in jobs.itertuples():
        assert job.threads_placed == threads, job
        (pool,) = [int(p) for p in job.pools.split(",")]
        assert {int(c) for c in job.cpus.split(",")} <= set(pools[pool]), job
    # The CPUs of no pool (station 0) are never given to a job.
    placed = tables["placements"][tables["placements"]["run_id"] == run_id]
    assert set(placed["cpu"]) <= {c for p in pools for c in p}
    # Replaying the placements and releases in order: never two threads on one CPU, and
    # every CPU free at the end.
    owner: dict[int, int] = {}
    for ev in placed.itertuples():
        if ev.event == "place":
            assert ev.cpu not in owner, ev
            owner[ev.cpu] = ev.pid
        else:
            assert owner.pop(ev.cpu) == ev.pid, ev
    assert not owner
    # One placement per thread, each released once; first threads by the Worst-Fit rule.
    assert (run["placed_first"], run["placed_expand"]) == (want, want * (threads - 1))
    assert (run["placed_spill"], run["placed_fail"]) == (0, 0)
    assert run["released"] == want * threads and run["trace_lost_events"] == 0
    assert run["first_by_rule"] == want
    # A job holds its CPUs no longer than the driver saw it live (two clocks: see the
    # module's docstring; 1 s covers the QEMU clocks' jumps, a job that held its CPUs
    # longer than it lived would be off by its whole life).
    assert (jobs["held_s"] > 0).all() and (jobs["held_s"] < jobs["response_s"] + 1.0).all()


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda d: d.name)
def test_collect_on_real_runs(tables, run_dir):
    check_run(tables, run_dir)


def test_fixture_is_fig6s_smoke_matrix(tables):
    # Made when smoke ran 2 repetitions (today 3): the first two of today's requests.
    runs = tables[""]
    assert set(runs["rep"]) == {0, 1}
    requests = [r for r in get("brecht-fig6").requests("smoke", "qemu") if r.label["rep"] < 2]
    assert sorted(runs["rep"]) == sorted(r.label["rep"] for r in requests)
    for r in requests:
        row = runs[runs["rep"] == r.label["rep"]].iloc[0]
        assert row["policy"] == r.policy
        assert all(row[k] == v for k, v in r.label.items())


def test_occupancy_has_one_interval_per_thread(tables):
    spans = B.occupancy(tables["placements"])
    assert len(spans) == tables[""]["released"].sum()
    assert (spans["to_s"] >= spans["from_s"]).all()


# ---------------------------------------------------------------------------------------------
# Confidence intervals, by hand

def test_t_quantiles_agree_with_the_printed_tables():
    # Student's t, upper 5 % points (any statistics textbook's table).
    for df, t in ((1, 6.314), (2, 2.920), (4, 2.132), (9, 1.833), (30, 1.697)):
        assert B.t_quantile(0.95, df) == pytest.approx(t, abs=1e-3)
    assert B.t_quantile(0.975, 10) == pytest.approx(2.228, abs=1e-3)
    assert math.isnan(B.t_quantile(0.95, 0))


def _hand_jobs() -> pd.DataFrame:
    """Two conditions (pool sizes 4 and 6) of three runs each; two applications, two jobs
    of each per run."""
    rows = []
    times = {4: {"mm": [(1.0, 3.0), (2.0, 2.0), (4.0, 6.0)],
                 "pde": [(10.0, 12.0), (11.0, 11.0), (9.0, 9.0)]},
             6: {"mm": [(5.0, 5.0), (6.0, 8.0), (7.0, 7.0)],
                 "pde": [(20.0, 20.0), (22.0, 22.0), (24.0, 24.0)]}}
    for size, apps in times.items():
        for rep in range(3):
            for app, per_run in apps.items():
                for k, t in enumerate(per_run[rep]):
                    rows.append({"run_id": f"r{size}-{rep}", "pool_size": size, "rep": rep,
                                 "application": app, "stream": k, "job_index": 0,
                                 "response_s": t})
    return pd.DataFrame(rows)


def test_response_time_interval_takes_the_run_as_the_sample():
    stats = B.response_times(_hand_jobs(), ["pool_size"]).set_index(
        ["pool_size", "application"])
    # Pool size 4, MM: run means 2, 2, 5 -> mean 3, s = sqrt(3), n = 3, t(0.95, 2) = 2.91999.
    mm = stats.loc[(4, "mm")]
    assert mm["mean_s"] == pytest.approx(3.0)
    assert mm["ci90_s"] == pytest.approx(2.919986 * math.sqrt(3) / math.sqrt(3), rel=1e-5)
    assert (mm["runs"], mm["jobs"]) == (3, 6)
    # All applications, pool size 6: run means (5+5+20+20)/4 = 12.5, (6+8+22+22)/4 = 14.5,
    # (7+7+24+24)/4 = 15.5 -> mean 14.1667, s = 1.527525.
    every = stats.loc[(6, "all")]
    assert every["mean_s"] == pytest.approx(42.5 / 3)
    assert every["ci90_s"] == pytest.approx(2.919986 * 1.527525 / math.sqrt(3), rel=1e-5)
    # Not the jobs as the sample: that interval would be narrower (s over 12 jobs, t(11)).
    jobs = _hand_jobs().query("pool_size == 6")["response_s"]
    assert every["ci90_s"] != pytest.approx(1.796 * jobs.std() / math.sqrt(len(jobs)),
                                            rel=1e-2)


def test_one_run_has_no_interval():
    one = _hand_jobs().query("rep == 0")
    stats = B.response_times(one, ["pool_size"])
    assert stats["runs"].eq(1).all() and stats["ci90_s"].isna().all()


def test_worst_fit_over_first_fit_is_paired_by_repetition():
    jobs = _hand_jobs().query("pool_size == 4").copy()
    jobs["placement"] = "first-fit"
    worst = jobs.copy()
    worst["placement"] = "worst-fit"
    worst["run_id"] += "w"
    worst["response_s"] *= np.where(worst["rep"] == 0, 0.5, 1.0)   # rep 0 twice as fast
    ratios = B.normalised(pd.concat([jobs, worst])).set_index("application")
    # MM: ratios 0.5, 1, 1 -> mean 5/6, s = 0.288675, t(0.95, 2).
    assert ratios.loc["mm", "ratio"] == pytest.approx(5 / 6)
    assert ratios.loc["mm", "ci90"] == pytest.approx(2.919986 * 0.288675 / math.sqrt(3),
                                                     rel=1e-5)
    assert ratios.loc["mm", "pairs"] == 3


def test_rule_replay_tells_a_wrong_pool_from_a_right_one():
    pools = ((4, 5), (6, 7, 8))
    trace = pd.DataFrame([
        {"event": "place", "kind": "first", "pid": 1, "tgid": 1, "pool": 1, "cpu": 6},
        {"event": "place", "kind": "first", "pid": 2, "tgid": 2, "pool": 0, "cpu": 4},
        {"event": "place", "kind": "first", "pid": 3, "tgid": 3, "pool": 0, "cpu": 5}])
    # Worst-fit: 6 (3 free > 2) is right; then 2 = 2, both allowed; then pool 0 has 1 free
    # and pool 1 has 2: 5 is wrong.
    assert B.rule_followed(trace, pools, "worst-fit") == 2
    # First-fit: pool 0 first: only the second and third are right.
    assert B.rule_followed(trace, pools, "first-fit") == 2
    assert B.rule_followed(trace.iloc[:1], pools, "best-fit") == 0


# ---------------------------------------------------------------------------------------------
# Figures

def _ctx(name: str) -> FigureContext:
    e = get(name)
    return FigureContext(name=name, title=e.title, scale="smoke", backend="qemu",
                         reduction=e.reductions["smoke"], provenance={"runs": 2})


def _relabelled(tables: dict, **coords) -> dict:
    """The real runs' tables, each run given other coordinates: a frame for drawing the
    figures whose conditions the fixture does not hold (not a result)."""
    out = {}
    for part, frame in tables.items():
        frame = frame.copy()
        for column, values in coords.items():
            frame[column] = frame["run_id"].map(dict(zip(sorted(frame["run_id"].unique()),
                                                         values)))
        out[part] = frame
    return out


@pytest.mark.parametrize("name, coords", [
    ("brecht-fig1", {"delay": (0, 16)}),
    ("brecht-fig2", {"parallelism": (2, 4)}),
    ("brecht-fig3", {"parallelism": (6, 6), "pool_size": (4, 6)}),
    ("brecht-fig5", {"placement": ("first-fit", "worst-fit"), "rep": (0, 0)}),
    ("brecht-fig6", {}),
])
def test_every_figure_draws(tables, tmp_path, name, coords):
    t = _relabelled(tables, **coords) if coords else tables
    dest = tmp_path / f"{name}.png"
    out = B.draw(get(name), t, _ctx(name), dest)
    assert out[0] == dest and dest.stat().st_size > 20_000
    if name == "brecht-fig6":
        return
    csv = pd.read_csv(out[1])
    # What the figure drew is the statistics of the jobs drawn: one number per condition
    # and application, from the runs' own response times.
    if name == "brecht-fig5":
        first, worst = (t["jobs"][t["jobs"]["placement"] == p] for p in ("first-fit",
                                                                         "worst-fit"))
        want = worst["response_s"].mean() / first["response_s"].mean()
        assert csv.set_index("application").loc["all", "ratio"] == pytest.approx(want)
        return
    every = csv[csv["application"] == "all"]
    assert every["mean_s"].sort_values().to_list() == pytest.approx(
        sorted(t["jobs"].groupby("run_id")["response_s"].mean()))


def test_experiments_run_on_both_backends_and_say_how_the_model_differs():
    for e in (get(n) for n in ("brecht-fig1", "brecht-fig2", "brecht-fig3", "brecht-fig5",
                               "brecht-fig6")):
        assert e.implemented and not e.unavailable
        assert e.requests("smoke", "qemu") and e.requests("paper", "gem5")   # costed
        assert all(r.cpu == "timing" and r.machine == "hector"
                   for r in e.requests("smoke", "gem5"))
        assert "16.67 MHz" in e.notes and "bench/gem5.md" in e.notes
    # Smoke: the paper's streams (12 / parallelism, 1 of 8 threads), never more threads at
    # once than job CPUs (a thread beyond them would be refused and its job fail).
    for r in get("brecht-fig2").requests("smoke", "qemu"):
        a = r.jobs[0].args
        p = r.label["parallelism"]
        assert int(a[a.index("--streams") + 1]) == {2: 6, 4: 3, 8: 1}[p]
        assert int(a[a.index("--threads") + 1]) == p
        assert "--app-args" not in a                     # QEMU: the paper's problems
    # gem5 smoke: each application its smaller problem (only those its streams run).
    for r in get("brecht-fig3").requests("smoke", "gem5"):
        a = r.jobs[0].args
        given = {a[i + 1].split("=")[0] for i, x in enumerate(a) if x == "--app-args"}
        assert given == set(a[a.index("--apps") + 1].split(",")) == {"hough", "mm", "simplex"}


@pytest.fixture(scope="module")
def fig6_kernel():
    """The kernel of brecht-fig6's machine (Hector's 100 Hz tick), built before the test's
    own time limit starts: cold, on a busy 2-core host, the build alone took most of it."""
    from schedlab.guest.kernel import build_kernel
    from schedlab.machine import load_machine
    machine = get("brecht-fig6").requests("smoke", "qemu")[0].machine
    return build_kernel(progress=lambda s: print(s, file=sys.stderr),
                        tick_hz=load_machine(machine).tick_hz)


# The run's own limit, the kernel's build not counted (func_only; the suite's covers it).
@pytest.mark.timeout(900, func_only=True)
@pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None,
                    reason="qemu-system-x86_64 not installed")
def test_a_fresh_qemu_run_through_the_runner(tmp_path, monkeypatch, fig6_kernel):
    """One run of brecht-fig6 (repetition 0) made now on QEMU, collected and checked like
    the kept ones."""
    from schedlab.runs import execute, prepare
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    request = get("brecht-fig6").requests("smoke", "qemu")[0]
    run_dir = execute(prepare(request, progress=lambda s: None))
    check_run(B.collect([run_dir]), run_dir)


@pytest.mark.parametrize("applications", [None, 3])
def test_fig1s_one_legend_hides_no_point(drawn_figure, tmp_path, applications):
    """The committed gem5 runs of Fig. 1 drawn: the delays' legend sits in a panel of its
    own, over none of the points of the application panels, also where the applications
    and the panel of all of them fill the rows (3 + 1)."""
    jobs = pd.read_csv(Path(__file__).resolve().parent.parent / "data" / "brecht"
                       / "brecht-fig1--smoke--gem5--jobs.csv")
    if applications:
        jobs = jobs[jobs["application"].isin(sorted(jobs["application"].unique())
                                             [:applications])]
    kept = drawn_figure(B)
    ctx = FigureContext(name="brecht-fig1", title="t", scale="smoke", backend="gem5")
    B._lines_over_pool_sizes(jobs, "delay", "ring delay (cycles)", ctx, tmp_path / "f.png", "")
    fig = kept["fig"]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1 and not legends[0].axes.axison
    assert [t.get_text() for t in legends[0].get_texts()] == [
        f"ring delay (cycles) {d} (n=2)" for d in (0, 8, 16)]
    box = legends[0].get_window_extent(fig.canvas.get_renderer())
    for ax in fig.axes:
        if ax.axison:
            for line in ax.get_lines():
                points = ax.transData.transform(line.get_xydata())
                assert not any(box.contains(x, y) for x, y in points), ax.get_title()
