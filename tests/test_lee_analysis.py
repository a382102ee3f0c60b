"""Study 3's analysis on real QEMU runs (tests/data/lee/, README there), and its timings.

The checks recompute what collect() reports from the raw files by plain string handling
(the trace's lines, results.json), not with the module's own parsers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from schedlab.analysis import lee
from schedlab.analysis.figures import FigureContext, provenance
from schedlab.campaigns import lee as definitions
from schedlab.campaigns.experiment import get, registry

DATA = Path(__file__).parent / "data" / "lee"
RUNS = sorted(p for p in DATA.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def tables():
    return lee.collect(RUNS)


def _raw(run: Path):
    """(results, request, [(ts, event, fields)]) of one run, by plain splitting."""
    res = json.loads((run / "results.json").read_text())
    request = json.loads((run / "spec.json").read_text())["request"]
    events = []
    for line in (run / "artifacts" / "trace.txt").read_text().splitlines():
        if line.startswith("#") or ": sched_" not in line:
            continue
        head, _, body = line.partition(": sched_")
        name, _, rest = body.partition(": ")
        fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
        events.append((float(head.split()[-1]), "sched_" + name, fields))
    return res, request, events


def test_fixture_is_what_its_readme_says():
    assert len(RUNS) == 4
    labels = [json.loads((r / "results.json").read_text())["label"] for r in RUNS]
    assert sorted((label["policy"], label["rep"]) for label in labels) == [
        ("region-confine", 0), ("region-confine", 1), ("region-unify", 0), ("region-unify", 1)]
    assert all(json.loads((r / "results.json").read_text())["ok"] for r in RUNS)


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_micro_schedules_and_roi_recomputed_from_the_trace_lines(tables, run):
    res, request, events = _raw(run)
    (job,) = res["jobs"]
    pid = str(job["pid"])
    row = tables[""].set_index("run_id").loc[res["run_id"]]
    exec_ts = min(ts for ts, name, f in events
                  if name == "sched_process_exec" and f["pid"] == pid)
    warmup, duration = request["jobs"][0]["warmup"], request["jobs"][0]["duration"]
    start, end = exec_ts + warmup, exec_ts + warmup + duration
    micro = [ts for ts, name, f in events
             if name == "sched_region_micro_schedule" and f["tgid"] == pid]
    assert row["micro_schedules"] == len(micro)
    assert row["micro_in_roi"] == sum(start <= ts <= end for ts in micro)
    assert row["micro_per_s"] == pytest.approx(row["micro_in_roi"] / duration)
    assert row["roi_start_s"] == pytest.approx(warmup)
    # The timings' promise, checked on QEMU: the job's regions were mapped before its ROI.
    local = [ts for ts, name, f in events
             if name == "sched_region_change" and f["tgid"] == pid and f["type"] == "local"]
    assert local and min(local) < start, (min(local, default=None), start)
    assert row["first_local_s"] == pytest.approx(min(local) - exec_ts)
    # And no regioning phase inside it (no region formed, merged or mapped there).
    changes = [ts for ts, name, f in events
               if name == "sched_region_change" and f["tgid"] == pid and start < ts < end]
    assert row["changes_in_roi"] == len(changes) == 0
    assert row["accesses_per_sec"] == float(job["metrics"]["accesses_per_sec"])
    # The ROI's rate counts from memlat's first region switch after the announced start.
    assert 0 < row["roi_accesses"] < row["accesses"]
    assert 0 < row["roi_seconds"] < row["seconds"]
    assert row["cpu_s"] == pytest.approx((job["user_us"] + job["sys_us"]) / 1e6)


GEM5_RUNS = sorted((DATA.parent / "lee-gem5").glob("*--memlat--*"))
GEM5_MEDIA = next((DATA.parent / "lee-gem5").glob("*--mediaserver--*"))


@pytest.mark.parametrize("run", GEM5_RUNS, ids=lambda p: p.name)
def test_the_roi_is_the_launchers_marks_and_stop(run):
    """gem5 runs (tests/data/lee-gem5): the ROI begins at the launcher's mark and ends
    ``duration`` later, before the region changes of the job's exit on that stop."""
    res, request, events = _raw(run)
    (job,) = res["jobs"]
    pid = str(job["pid"])
    text = (run / "artifacts" / "trace.txt").read_text()
    marks = {line.split("schedlab-roi-")[1].split()[0]: float(line.split(": ")[0].split()[-1])
             for line in text.splitlines() if "schedlab-roi-" in line}
    exec_ts = min(ts for ts, name, f in events
                  if name == "sched_process_exec" and f["pid"] == pid)
    duration = request["jobs"][0]["duration"]
    start, end = marks["begin"], marks["begin"] + duration
    row = lee.collect([run])[""].iloc[0]
    assert row["roi_start_s"] == pytest.approx(start - exec_ts)
    assert row["roi_end_s"] == pytest.approx(end - exec_ts)
    micro = [ts for ts, name, f in events if name == "sched_region_micro_schedule"]
    assert row["micro_in_roi"] == sum(start <= ts <= end for ts in micro)
    changes = [ts for ts, name, f in events if name == "sched_region_change"]
    assert row["changes_in_roi"] == sum(start < ts < end for ts in changes) == 0
    assert not row["ended_in_roi"]          # stopped by the launcher's timer
    # The exit's unmapping came after the stop and before the end mark (README there).
    assert sum(end < ts < marks["end"] for ts in changes) == 2


def test_a_job_that_ends_before_its_duration_ends_the_roi():
    """lee-fig24's media server (tests/data/lee-gem5) served its requests and exited
    inside its 80 ms bound: its regions' unmapping at that exit ends the ROI and is not a
    change of it."""
    res, request, events = _raw(GEM5_MEDIA)
    pid = str(res["jobs"][0]["pid"])
    text = (GEM5_MEDIA / "artifacts" / "trace.txt").read_text()
    begin = next(float(ln.split(": ")[0].split()[-1]) for ln in text.splitlines()
                 if "schedlab-roi-begin" in ln)
    mine = [(ts, f) for ts, name, f in events
            if name == "sched_region_change" and f["tgid"] == pid]
    # Its last changes: every region it had mapped, unmapped at once, before the bound.
    *_, before, last = mine
    assert before[1]["type"] == last[1]["type"] == "regular"
    assert {before[1]["region"], last[1]["region"]} == {
        f["region"] for _, f in mine if f["type"] == "local"}
    assert begin < before[0] < begin + request["jobs"][0]["duration"]
    exec_ts = min(ts for ts, name, f in events
                  if name == "sched_process_exec" and f["pid"] == pid)
    row = lee.collect([GEM5_MEDIA])[""].iloc[0]
    assert row["ended_in_roi"] and row["changes_in_roi"] == 0
    assert row["roi_start_s"] == pytest.approx(begin - exec_ts)
    assert row["roi_end_s"] == pytest.approx(before[0] - exec_ts)
    # The regions were mapped (to one cache: partitioning favours it) before the ROI.
    assert row["local_at_roi"] == 2 and row["caches_at_roi"] == 1
    # The ROI so found and the server's own count of its requests agree: it issues them
    # at 1,250 a second, so as many arrived as the ROI (from the trace) lasts.
    roi_s = row["roi_end_s"] - row["roi_start_s"]
    assert abs(row["roi_requests"] - 1250 * roi_s) <= 2, (row["roi_requests"], roi_s)


FIG24_QEMU = sorted((DATA.parent / "lee-qemu-fig24").glob("*--mediaserver--*"))


def test_fig24_is_the_distribution_of_each_requests_response_time(tmp_path):
    """A real QEMU run of lee-fig24 (tests/data/lee-qemu-fig24): the server's own record of
    every request becomes the responses table and the distribution figure."""
    (run,) = FIG24_QEMU
    metrics = json.loads((run / "results.json").read_text())["jobs"][0]["metrics"]
    lines = (run / "artifacts" / "mediaserver" / "1" / "responses.csv").read_text().split()
    tables = lee.collect(FIG24_QEMU)
    responses = tables["responses"]
    assert len(responses) == len(lines) - 1 == metrics["requests"]
    roi = responses[responses["in_roi"] == 1]
    assert len(roi) == metrics["roi_requests"]
    assert roi["response_ms"].max() == pytest.approx(metrics["roi_max_ms"], abs=1e-3)
    assert set(responses["condition"]) == {"region-partition"}
    # The region policies do not trace sched_waking: nothing said about wake-ups.
    assert "late_wakeup" not in responses and "wake_late" not in tables[""]
    out = lee.draw(get("lee-fig24"), tables, _ctx("lee-fig24", tables[""]),
                   tmp_path / "lee-fig24.png")
    assert [p.name for p in out] == ["lee-fig24.png", "lee-fig24--percentiles.png"]
    assert all(p.stat().st_size > 10_000 for p in out)


def test_a_request_pending_at_a_late_wake_up_is_marked(tmp_path):
    """The gem5 trace of a wake-up lost at the switch to the O3 cores
    (tests/data/traces/README.md) and the first requests of the same run's ROI, as its
    responses.csv has them: the first request, pending at the late wake-up, is marked; the
    second, which queued behind it, and the later ones are not."""
    text = (DATA.parent / "traces" / "gem5-mediaserver-switch.txt").read_text()
    job = {"job": "mediaserver", "rep": 1}
    found, late_ms = lee._job_wakeups(text, job, {"begin": 0.572266, "end": 0.634059})
    assert found["wake_late"] == 1 and late_ms == [pytest.approx(0.124, abs=1e-3)]
    folder = tmp_path / "artifacts" / "mediaserver" / "1"
    folder.mkdir(parents=True)
    (folder / "responses.csv").write_text(
        "arrival_ms,response_ms,in_roi\n-0.6665,0.5014,0\n0.1346,1.0908,1\n"
        "0.9333,0.5124,1\n1.7335,0.2219,1\n")
    marked = [r["late_wakeup"] for r in lee._responses(tmp_path, job, {}, late_ms)]
    assert marked == [False, True, False, False]
    assert all("late_wakeup" not in r for r in lee._responses(tmp_path, job, {}))
    # Without ROI marks or sched_waking lines there is nothing to say.
    assert lee._job_wakeups(text, job, {}) == ({}, None)
    assert lee._job_wakeups("", job, {"begin": 0.0, "end": 1.0}) == ({}, None)


@pytest.mark.parametrize("changes,expected", [
    # (ts, region, type) of one process
    ([(1.0, 1, "regular"), (2.0, 1, "local"), (2.5, 2, "regular"), (3.0, 2, "local"),
      (9.0, 1, "regular"), (9.0, 2, "regular")], 9.0),        # all unmapped at once: exit
    ([(1.0, 1, "regular"), (2.0, 1, "local"), (3.0, 2, "regular"), (3.5, 2, "local"),
      (9.0, 1, "regular")], None),                             # region 2 still mapped
    ([(2.0, 1, "local"), (5.0, 1, "regular"), (6.0, 1, "local")], None),   # mapped again
    ([(1.0, 1, "regular"), (2.0, 1, "seed")], None),           # never mapped
])
def test_exit_unmapping_is_a_final_unmapping_of_every_mapped_region(changes, expected):
    frame = pd.DataFrame([{"ts": ts, "event": "change", "tgid": 1, "region": r, "type": t,
                           "llc": 0 if t == "local" else -1, "pages": 4}
                          for ts, r, t in changes])
    assert lee.exit_unmapping(frame) == expected


def test_micro_schedule_cost_from_a_unify_and_confine_pair():
    """lee-overheads on gem5: the time unification lost against confinement (both 1 MiB
    regions fit one 4 MiB L2), per micro-schedule, by hand from results.json."""
    runs = {json.loads((r / "results.json").read_text())["label"]["policy"]:
            json.loads((r / "results.json").read_text())["jobs"][0] for r in GEM5_RUNS}
    unify, confine = runs["region-unify"], runs["region-confine"]
    frame = lee.collect(GEM5_RUNS)[""]
    (cost,) = lee.micro_schedule_cost(frame).itertuples()
    micro = frame.set_index("policy").loc["region-unify", "micro_in_roi"]
    lost = unify["metrics"]["roi_seconds"] * (
        1 - unify["metrics"]["roi_accesses_per_sec"] / confine["metrics"]["roi_accesses_per_sec"])
    assert micro == 31 and cost.cycles_per_micro == pytest.approx(lost * 3e9 / micro)
    assert cost.overhead_at_700 == pytest.approx(700 * lost / micro)
    scale = unify["metrics"]["roi_accesses"] / confine["metrics"]["roi_accesses"]
    assert cost.insts_per_micro == pytest.approx(
        (unify["gem5"]["insts"] - scale * confine["gem5"]["insts"]) / micro)
    summary = lee.summary(get("lee-overheads"), {"": frame})
    assert summary["cycles_per_micro"].tolist() == pytest.approx([cost.cycles_per_micro])


def test_regions_at_the_roi_follow_the_policy(tables):
    frame = tables[""]
    # Confinement: every mapped region of memlat in one cache; unification: its regions
    # spread over both caches, unless it found only one (a visit shorter than a first lap
    # of page faults merges the two arrays; docs/studies.md).
    assert (frame[frame["policy"] == "region-confine"]["caches_at_roi"] == 1).all()
    unify = frame[frame["policy"] == "region-unify"]
    assert (unify["caches_at_roi"] == unify["local_at_roi"].clip(upper=2)).all()
    # However they were cut, the regions mapped at the ROI cover both 1 MiB arrays.
    events = tables["events"]
    for row in frame.itertuples():
        mapped: dict = {}
        mine = events[(events["run_id"] == row.run_id) & (events["whose"] == "job")
                      & (events["event"] == "change") & (events["time_s"] <= row.roi_start_s)]
        for ev in mine.itertuples():
            if ev.type == "local":
                mapped[ev.region] = ev.pages
            else:
                mapped.pop(ev.region, None)
        assert sum(mapped.values()) >= 2 * 256, (row.run_id, mapped)


def test_change_counts_replay_the_trace(tables):
    for run in RUNS:
        res, _, events = _raw(run)
        pid = str(res["jobs"][0]["pid"])
        row = tables[""].set_index("run_id").loc[res["run_id"]]
        kinds = [f["type"] for _, name, f in events
                 if name == "sched_region_change" and f["tgid"] == pid]
        assert row["maps"] == kinds.count("local")
        assert row["regions_freed"] <= kinds.count("seed")
        assert row["regions_formed"] + row["unmaps"] == kinds.count("regular")


def test_events_table_and_cache_timeline(tables):
    events = tables["events"]
    for run in RUNS:
        _, _, raw = _raw(run)
        run_id = json.loads((run / "results.json").read_text())["run_id"]
        mine = events[events["run_id"] == run_id]
        assert len(mine) == sum(n.startswith("sched_region") for _, n, _ in raw)
    run_id = json.loads((RUNS[0] / "results.json").read_text())["run_id"]
    line = lee.cache_timeline(events, run_id)
    # The last state of each cache equals the replay of its local/unmapped events.
    last = line.groupby("llc").tail(1).set_index("llc")
    state: dict = {}
    for ev in events[(events["run_id"] == run_id) & (events["event"] == "change")].itertuples():
        if ev.type == "local":
            state[ev.region] = (ev.llc, ev.pages)
        else:
            state.pop(ev.region, None)
    for llc, r in last.iterrows():
        assert r["regions"] == sum(c == llc for c, _ in state.values())


def test_normalised_performance(tables):
    norm = lee.normalised(tables[""])
    confine = norm[norm["policy"] == "region-confine"]["normalised"]
    assert confine.mean() == pytest.approx(1.0)
    by_hand = (tables[""].query("policy == 'region-unify'")["roi_accesses_per_sec"]
               / tables[""].query("policy == 'region-confine'")["roi_accesses_per_sec"].mean())
    assert sorted(norm[norm["policy"] == "region-unify"]["normalised"]) == \
        pytest.approx(sorted(by_hand))


def _ctx(name: str, frame: pd.DataFrame) -> FigureContext:
    e = get(name)
    return FigureContext(name, e.title, "smoke", "qemu", e.reductions.get("smoke", ""),
                         provenance=provenance(frame))


@pytest.mark.parametrize("name", ["lee-fig9", "lee-overheads"])
def test_fig9_and_overheads_draw_from_the_real_runs(tables, tmp_path, name):
    out = lee.draw(get(name), tables, _ctx(name, tables[""]), tmp_path / f"{name}.png")
    assert out and all(p.is_file() and p.stat().st_size > 10_000 for p in out)
    assert not lee.summary(get(name), tables).empty


@pytest.mark.parametrize("name,relabel", [
    ("lee-fig17", {"benchmark": "memlat", "region-confine": "vanilla",
                   "region-unify": "region-balance"}),
    ("lee-fig18-23", {"benchmark": "memlat", "region-confine": "vanilla",
                      "region-unify": "region-unify"}),
    ("lee-fig24", {"condition": True}),
    ("lee-fig25", {"condition": True})])
def test_the_other_figures_draw(tables, tmp_path, name, relabel):
    """Drawing code only: no QEMU run of these experiments is kept, so the fig9 rows are
    relabelled into their matrices' shape (the figures are not kept or shown)."""
    frame = tables[""].copy()
    if "benchmark" in relabel:
        frame["benchmark"] = relabel["benchmark"]
        frame["policy"] = frame["policy"].map(relabel)
        # These runs predate the launcher's sched_regions copies: the trace's counts stand
        # in for the merges and teardowns row.
        frame["merges"], frame["teardowns"] = frame["regions_formed"], frame["regions_freed"]
        assert [kind for kind, _ in lee._benchmark_panels(frame, "micro_per_s")] == [
            "pair", "counts"]
    else:
        frame["condition"] = frame["policy"].map({"region-confine": "alone",
                                                  "region-unify": "region-partition"})
        for m in ("roi_p50_ms", "roi_p90_ms", "roi_p99_ms", "roi_max_ms", "roi_ms_per_row",
                  "roi_cpu_ms_per_row"):
            frame[m] = frame["ns_per_access"]
    out = lee.draw(get(name), {"": frame, "events": tables["events"]}, _ctx(name, frame),
                   tmp_path / f"{name}.png")
    assert out and all(p.is_file() for p in out)


def test_a_partial_figure_of_default_scheduler_runs_only_draws(tmp_path):
    """lee-fig17's first finished runs were the default scheduler's: no micro-schedule
    column at all (no region trace). The 2 real gem5 runs as their partial table has them
    (the columns the figure reads)."""
    frame = pd.DataFrame({
        "machine": ["clovertown-x5365"] * 2, "benchmark": ["libquantum"] * 2,
        "policy": ["vanilla"] * 2, "rep": [0, 1],
        "run_id": ["clovertown-x5365--libquantum--cbf4a127c1c9",
                   "clovertown-x5365--libquantum--dd236b811fb8"],
        "task_ipc": [1.374344, 1.374273], "task_llc_mpki": [0.416385, 0.416600]})
    out = lee.draw(get("lee-fig17"), {"": frame, "events": pd.DataFrame()},
                   _ctx("lee-fig17", frame), tmp_path / "lee-fig17.png")
    assert out and all(p.is_file() for p in out)


EARLIER = Path(__file__).parent.parent / "data" / "lee" / "earlier"


def _earlier_tables() -> dict[str, pd.DataFrame]:
    """The 4 real runs of Fig. 17's earlier definition (data/lee/earlier/): its main,
    events and programs tables."""
    from schedlab.analysis.store import load_committed
    stem = EARLIER / "lee-fig17--large-regions--smoke--gem5"
    return {part: load_committed(Path(f"{stem}{suffix}.csv"))
            for part, suffix in (("", ""), ("events", "--events"), ("programs", "--programs"))}


def test_fig17_draws_each_programs_ipc_change_and_the_mixs(tmp_path, drawn_figure):
    """The 4 real runs of Fig. 17's earlier definition (data/lee/earlier/): each program's
    IPC under balancing over the same repetition's default-scheduler run, the large memlats
    pooled, and the mix's mean ratio; the bars are the means of the dots."""
    tables = _earlier_tables()
    changes = lee.program_changes(tables["programs"], "region-balance")
    assert sorted(changes.groupby("kind").size().items()) == [
        ("all programs", 2), ("memlat(region-size=16KiB)", 2), ("memlat(region-size=4MiB)", 4),
        ("the benchmark", 2)]
    job = tables[""].set_index("rep")
    balance, vanilla = (job[job["policy"] == p]["task_ipc"] for p in ("region-balance",
                                                                        "vanilla"))
    expected = sorted(100 * (balance / vanilla - 1))
    assert sorted(changes[changes["kind"] == "the benchmark"]["change"]) == pytest.approx(
        expected)
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", tables[""]), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f.png")
    ax = next(a for a in fig.axes if a.get_ylabel().startswith("IPC change"))
    bars = {text.get_text() for text in ax.get_legend().get_texts()}
    assert bars == {"the benchmark", "memlat(region-size=4MiB)", "memlat(region-size=16KiB)",
                    "all programs"}
    heights = [p.get_height() for p in ax.patches]
    assert heights[0] == pytest.approx(sum(expected) / 2)
    dots = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert sum(len(d.get_xdata()) for d in dots) == 10


def test_fig9_has_on_every_machine_a_pair_too_large_for_one_cache():
    """Unification can only gain capacity where two regions overflow one last-level cache:
    every machine's smoke sizes reach that point, and keep the paper's smaller points."""
    from schedlab.machine import load_machine, parse_size
    requests = get("lee-fig9").requests("smoke", "gem5")
    for machine in definitions.MACHINES:
        llc = load_machine(machine).llc.size
        sizes = {r.label["region_size"] for r in requests if r.label["machine"] == machine}
        assert any(2 * parse_size(s, "size") >= llc for s in sizes), (machine, sizes)
        assert any(2 * parse_size(s, "size") < llc for s in sizes), (machine, sizes)
        assert sizes <= set(definitions.REGION_SIZES["paper"])
    assert not lee.pair_fits("clovertown-x5365", "2MiB")      # 4 MiB: its L2's size
    assert lee.pair_fits("westmere-x5660", "4MiB")            # 8 of 12 MiB


def test_timings_put_the_roi_between_the_first_mapping_and_the_next_phase():
    timings = [*definitions.TIMINGS.items(), *definitions.CONSOLIDATED_TIMINGS.items()]
    for (backend, scale), t in timings:
        # The kernel's ranges (kernel.sched_region_scan_ms and _period_ms)
        assert 10 <= t.scan_ms <= 1000 and t.period_ms >= 10
        assert t.warmup_s > t.mapped_s, (backend, scale)
    for (backend, scale), t in definitions.TIMINGS.items():
        if scale == "smoke":
            # before the next phase, and short enough to fit between two scans
            assert t.warmup_s + definitions.REGION_S[scale] < t.next_phase_s, (backend, scale)
            assert definitions.REGION_S[scale] < t.scan_s
    # Every timed job of every experiment carries its backend's timings.
    for name in ("lee-fig9", "lee-fig17", "lee-fig18-23", "lee-overheads"):
        for backend in ("gem5", "qemu"):
            t = definitions.regioning(backend, "smoke")
            for r in get(name).requests("smoke", backend):
                sysctl = dict(r.sysctl)
                assert sysctl["kernel.sched_region_period_ms"] == str(t.period_ms)
                assert sysctl["kernel.sched_region_scan_ms"] == str(t.scan_ms)
                # A longer start-up (POV-Ray's) moves the ROI by whole regioning cycles.
                cycles = (r.jobs[0].warmup - t.warmup_s) / t.cycle_s
                assert cycles >= 0 and cycles == pytest.approx(round(cycles), abs=1e-6), r.label
                assert r.jobs[0].duration == 0.02
    povray = next(r for r in get("lee-fig18-23").requests("smoke", "gem5")
                  if r.label["benchmark"] == "povray")
    assert povray.jobs[0].warmup == 0.62     # 0.12 s and five 0.1 s cycles: past its 0.6 s


def test_an_experiment_attributing_several_programs_keeps_their_table():
    # The per-program counters (the "programs" part) are what the figures and the ledger
    # read of a co-runner (lee-fig24's sphinx: claim L5): an experiment whose gem5 runs
    # attribute counters per task and run more than one program keeps them.
    for name, e in registry().items():
        if e.study != "lee":
            continue
        runs = e.requests("smoke", "gem5")
        if any(r.attribute_tasks and len(r.jobs) + len(r.background) > 1 for r in runs):
            assert "programs" in e.analysis.parts, name


def test_consolidated_programs_outlast_the_gem5_warm_up_within_their_bound():
    """Figs. 24 and 25 on gem5: the main program starts its ROI after the regioning warm-up
    and is sized to end inside its duration's bound; on QEMU it runs its whole life. The
    co-runner is the program of its benchmark (sphinx: the real PocketSphinx)."""
    from schedlab.campaigns.programs import program

    for scale in ("smoke", "paper"):
        t = definitions.regioning("gem5", scale, consolidated=True)
        for name, main, other in (("lee-fig24", "mediaserver", "sphinx"),
                                  ("lee-fig25", "raytrace", "omnetpp")):
            for r in get(name).requests(scale, "gem5"):
                job = r.jobs[0]
                assert job.workload == main and job.warmup == t.warmup_s
                assert dict(r.sysctl)["kernel.sched_region_scan_ms"] == str(t.scan_ms)
                assert job.duration == definitions.GEM5_MAIN[(main, scale)][1]
                # Both report the co-runner's counters beside the main program's (the
                # paper's Fig. 24 reports sphinx's loss, Sec. 5.5).
                assert r.attribute_tasks
                assert [b.workload for b in r.background] in ([], [program(other)])
            for r in get(name).requests(scale, "qemu"):
                assert r.jobs[0].warmup == 0 and r.jobs[0].duration is None
    # The media server's last request arrives inside its bound, after the warm-up.
    from schedlab.guest.workloads import get as workload
    for scale in ("smoke", "paper"):
        extra, bound_s = definitions.GEM5_MAIN[("mediaserver", scale)]
        argv = [*workload("mediaserver").args(scale), *extra]
        opts = dict(zip(argv[::2], argv[1::2]))      # the last of a repeated option counts
        last_arrival_s = int(opts["--requests"]) / int(opts["--rate"])
        t = definitions.regioning("gem5", scale, consolidated=True)
        assert 0 < last_arrival_s - t.warmup_s < bound_s, scale
        if scale == "smoke":   # and before the second regioning phase
            assert last_arrival_s < t.next_phase_s


def test_every_experiment_runs_on_both_backends():
    for name in ("lee-fig9", "lee-overheads", "lee-fig17", "lee-fig18-23", "lee-fig24",
                 "lee-fig25"):
        assert get(name).implemented and not get(name).unavailable
    for name in ("lee-fig17", "lee-fig18-23"):
        assert all(r.attribute_tasks for r in get(name).requests("smoke", "gem5"))


def test_log_axes_read_in_plain_numbers():
    import matplotlib.pyplot as plt
    from schedlab.analysis.figures import plain_log_ticks
    fig, ax = plt.subplots()
    ax.plot([0.2, 60], [0, 1])
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True)
             if t.get_text() and 0.2 <= t.get_position()[0] <= 60]
    plt.close(fig)
    assert {"0.3", "1", "5", "10", "20", "50"} <= set(shown)
    assert not [t for t in shown if "$" in t or "e" in t]
    assert "4" not in shown and "0.7" not in shown   # only 2, 3 and 5 of each decade


def test_fig17s_large_memlats_each_fill_one_last_level_cache():
    """A large memlat's two regions together are one last-level cache's size (two overflow
    it), the small one's under a tenth of it; every run has two large and one
    small, each keeping its seed whatever the start order."""
    from schedlab.machine import load_machine, parse_size
    for request in get("lee-fig17").requests("smoke", "gem5"):
        machine = load_machine(request.label["machine"])
        sizes = sorted(2 * parse_size(b.args[1], "size") for b in request.background)
        assert sizes[1:] == [machine.llc.size] * 2
        assert 10 * sizes[0] <= machine.llc.size
        rep = request.label["rep"]
        seeds = {int(b.args[-1]): 2 * parse_size(b.args[1], "size") for b in request.background}
        assert sorted(seeds) == [rep + 1, rep + 2, rep + 3] and seeds[rep + 3] == sizes[0]


def test_fig17s_start_order_rotates_over_the_repetitions():
    """The default scheduler puts the k-th program started on the k-th idle CPU: rep 0
    starts the two large memlats first (one shares the benchmark's cache), rep 1 the small
    one first (the large ones share a cache), rep 2 the small one between them."""
    small_first = []
    for rep in range(3):
        order = definitions.start_order(rep)
        assert sorted(order) == [0, 1, 2]
        small_first.append(order.index(2))
    assert small_first == [2, 0, 1]
    requests = [r for r in get("lee-fig17").requests("smoke", "gem5")
                if r.label["machine"] == "clovertown-x5365" and r.label["benchmark"] == "namd"
                and r.label["policy"] == "vanilla"]
    assert [[b.args[1] for b in r.background] for r in requests] == [
        ["2MiB", "2MiB", "8KiB"], ["8KiB", "2MiB", "2MiB"]]


def test_fig17_placement_shows_each_runs_programs_per_cache(tmp_path, drawn_figure):
    """The earlier definition's 4 real runs (data/lee/earlier/): the default scheduler's
    runs traced their switches, region balancing's did not, so its cells stay empty; a
    program that split its ROI between caches is shown with its share there."""
    tables = _earlier_tables()
    programs = tables["programs"]
    split = (programs["policy"] == "vanilla") & (programs["rep"] == 1) & ~programs["is_job"]
    programs.loc[split.idxmax(), "llc_share"] = 0.73
    kept = drawn_figure(lee)
    out = lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", tables[""]), tmp_path / "f.png")
    assert [p.name for p in out] == ["f.png", "f--caches.png", "f--placement.png"]
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f--placement.png")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("libquantum") == 2          # rep 0 and 1, default scheduler only
    assert texts.count("memlat 4MiB #2") == 2 and "memlat 16KiB" in texts
    assert "memlat 4MiB #1 (73 %)" in texts
    assert {"L2, CPUs 0-1", "L2, CPUs 2-3", "default scheduler", "region-balance"} <= set(texts)
    changes = lee.program_changes(programs, "region-balance")
    job = changes[(changes["kind"] == "the benchmark") & (changes["rep"] == 0)]["change"]
    assert any(t.startswith(f"libquantum {job.iloc[0]:+.1f} %\nall ") for t in texts)
    # Region balancing's micro-schedules up to the ROI's end; these events predate the
    # undone marks, so none are claimed.
    frame, events = tables[""], tables["events"]
    run = frame[(frame["policy"] == "region-balance") & (frame["rep"] == 0)].iloc[0]
    mine = events[(events["run_id"] == run["run_id"]) & (events["event"] == "micro")]
    moves = int((mine["time_s"] <= run["roi_end_s"]).sum())
    assert moves > 0
    assert any(t.endswith(f"\n{moves} micro-schedules") for t in texts)


def test_fig17_placement_shows_where_balancing_mapped_each_programs_regions(
        tmp_path, drawn_figure):
    """Under region balancing each program's cell also says how much of its regions (pages
    mapped when the ROI began) lay on that cache, where not all: the earlier definition's
    real rep-0 run, its programs placed on the first L2 here (its switches were not
    traced). Its events map libquantum's regions 64 pages to that L2 and 68 to the other,
    the small memlat's 5 and 4, the first large one's all to the other, the second's all
    to the first."""
    tables = _earlier_tables()
    programs = tables["programs"]
    balanced = (programs["policy"] == "region-balance") & (programs["rep"] == 0)
    programs.loc[balanced, ["llc", "llc_share"]] = [0.0, 1.0]
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", tables[""]), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f--placement.png")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert {"libquantum (regions 48 %)", "memlat 16KiB (regions 56 %)",
            "memlat 4MiB #1 (regions 0 %)", "memlat 4MiB #2"} <= set(texts)
    # Only those three: the default scheduler's runs map no regions.
    assert sum("regions" in t for t in texts) == 3


def test_a_program_moved_inside_the_roi_is_left_out_of_the_ipc_changes(tmp_path,
                                                                          drawn_figure):
    """Per-task attribution charges a moved program its moves' page-protection changes, so
    its IPC is not its progress: the earlier definition's real runs, one of rep 0's large
    memlats given a micro-schedule inside the ROI (a copy of its last one before it). The
    mix leaves it out, the programs panel counts it under its benchmark, the placement view
    marks it, and the caption says why; without it, nothing is marked."""
    tables = _earlier_tables()
    frame, events, programs = tables[""], tables["events"], tables["programs"]
    assert lee.moved_in_roi(frame, events) == set()
    run = frame[(frame["policy"] == "region-balance") & (frame["rep"] == 0)].iloc[0]
    memlat = programs[(programs["run_id"] == run["run_id"])
                      & (programs["program"] == "memlat(region-size=4MiB) #1")].iloc[0]
    before = events[(events["run_id"] == run["run_id"]) & (events["event"] == "micro")
                    & (events["tgid"] == memlat["pid"])].tail(1)
    assert len(before)
    tables["events"] = pd.concat([events, before.assign(
        time_s=run["roi_start_s"] + 0.001)], ignore_index=True)
    moved = lee.moved_in_roi(frame, tables["events"])
    assert moved == {(run["run_id"], int(memlat["pid"]))}

    changes = lee.program_changes(programs, "region-balance", moved)
    mine = changes[changes["rep"] == 0]
    assert mine["moved"].sum() == 1
    ratios = mine[~mine["moved"] & (mine["kind"] != "all programs")]["change"] / 100 + 1
    mix = mine[mine["kind"] == "all programs"]["change"].iloc[0] / 100 + 1
    assert len(ratios) == 3 and mix == pytest.approx(ratios.mean())

    programs.loc[programs["run_id"] == run["run_id"], ["llc", "llc_share"]] = [0.0, 1.0]
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", frame), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f.png")
    ax = next(a for a in fig.axes if a.get_ylabel().startswith("IPC change"))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["libquantum\n1 moved"]
    assert sum(len(line.get_xdata()) for line in ax.get_lines()
               if line.get_marker() == "o") == 9
    assert "kernel's work for it included" in kept["captions"]["f.png"]
    view = next(f for f, _, dest in kept["drawn"] if dest.name == "f--placement.png")
    assert any(t.get_text().startswith("memlat 4MiB #1†") for t in view.axes[0].texts)

    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), _earlier_tables(), _ctx("lee-fig17", frame),
             tmp_path / "g.png")
    assert "kernel's work" not in kept["captions"]["g.png"]


def test_fig17_counts_the_mixs_micro_schedules_held_and_undone(tmp_path, drawn_figure):
    """The job alone made no micro-schedule in any smoke ROI of Fig. 17: the row shows
    those of every program up to the ROI's end, per repetition, split by the undone mark
    (the earlier definition's 4 real runs predate it: their bars are "not marked"; here one
    run's events are given marks)."""
    tables = _earlier_tables()
    frame, events = tables[""], tables["events"]
    balance = frame[frame["policy"] == "region-balance"].set_index("rep")
    moves = {}
    for rep, run in balance.iterrows():
        mine = ((events["run_id"] == run["run_id"]) & (events["event"] == "micro")
                & (events["time_s"] <= run["roi_end_s"]))
        moves[rep] = int(mine.sum())
        if rep == 0:
            events.loc[mine, "undone"] = [True, True] + [False] * (moves[rep] - 2)
    assert moves[0] > 2 and moves[1] > 0
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", frame), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f.png")
    assert not any(a.get_ylabel().startswith("micro-schedules per second") for a in fig.axes)
    ax = next(a for a in fig.axes if "micro-schedules of\nthe mix" in a.get_ylabel())
    bars = [(round(p.get_x() + p.get_width() / 2, 3), p.get_height(), bool(p.get_hatch()))
            for p in ax.patches]
    assert sorted(bars) == [(-0.2, 2.0, False), (-0.2, moves[0] - 2.0, False),
                            (0.2, float(moves[1]), True)]
    in_roi = int(balance["micro_in_roi"].fillna(0).sum())
    said = f"the job's micro-schedules in its ROIs, all runs: {in_roi}"
    assert said in [t.get_text() for t in ax.texts]


def test_the_cache_timeline_names_caches_and_keeps_equal_loads_apart(tmp_path, drawn_figure):
    """Region balancing gives both L2s of the X5365 nearly the same load (the earlier
    definition's real runs): each cache is named as the catalogue has it and drawn in its
    own line style, so one line cannot hide the other."""
    tables = _earlier_tables()
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), tables, _ctx("lee-fig17", tables[""]), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f--caches.png")
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == ["L2, CPUs 0-1", "L2, CPUs 2-3"]
    assert len({line.get_linestyle() for line in lines}) == 2


def test_fig17_placement_colours_a_role_alike_on_every_machine(tmp_path, drawn_figure):
    """The memlats' sizes follow each machine's cache, so their names differ between
    machines: the large ones are coloured alike on both, as are the small ones (the
    earlier definition's real runs, and the same again as a second machine's)."""
    from matplotlib.colors import to_hex
    tables = _earlier_tables()
    other = {part: t.assign(machine="westmere-x5660", run_id="w" + t["run_id"])
             for part, t in tables.items()}
    other["programs"]["program"] = (other["programs"]["program"]
                                    .str.replace("4MiB", "6MiB").str.replace("16KiB", "256KiB"))
    both = {part: pd.concat([tables[part], other[part]], ignore_index=True) for part in tables}
    kept = drawn_figure(lee)
    lee.draw(get("lee-fig17"), both, _ctx("lee-fig17", both[""]), tmp_path / "f.png")
    fig = next(f for f, _, dest in kept["drawn"] if dest.name == "f--placement.png")
    colours = {}
    for ax in fig.axes:
        for text in ax.texts:
            role = re.sub(r"^memlat (4|6)MiB #\d$", "large", text.get_text())
            role = re.sub(r"^memlat (16|256)KiB$", "small", role)
            colours.setdefault(role, set()).add(to_hex(text.get_color()))
    assert len(colours["large"]) == len(colours["small"]) == 1
    assert colours["large"] != colours["small"]


def test_short_program_names_keep_the_telling_values():
    assert lee.short_program_name("memlat(region-size=2MiB) #1") == "memlat 2MiB #1"
    assert lee.short_program_name("w(a=1, b=x)") == "w 1, x"
    assert lee.short_program_name("libquantum") == "libquantum"


def test_a_micro_schedule_the_thread_did_not_run_after_is_marked_undone():
    """A real region-balance trace of lee-fig17 (tests/data/placement/): the thread writes
    its micro-schedule event on the CPU it runs on next, and two of the twelve were written
    on a CPU of the other cache than the region's (the idle balancer had pulled the thread
    back); a move to another CPU of the region's cache counts as held."""
    from schedlab.analysis import placement
    run = (Path(__file__).parent / "data" / "placement"
           / "clovertown-x5365--libquantum--07d2a3009d0f")
    spec = json.loads((run / "spec.json").read_text())
    trace = lee.mark_undone(lee.parse_region_trace((run / "trace.txt").read_text()),
                            placement.llc_of_cpu(spec["machine"]))
    micro = trace[trace["event"] == "micro"]
    assert len(micro) == 12
    undone = micro[micro["undone"].astype(bool)]
    assert list(zip(undone["tgid"], undone["dst_cpu"], undone["on_cpu"])) == [(67, 0, 2),
                                                                             (69, 2, 1)]
    assert ((micro["on_cpu"] != micro["dst_cpu"]) & ~micro["undone"].astype(bool)).sum() == 1
    assert lee.job_trace(trace, 69, 0.0, None, 1.0)["micro_undone"] == 1
    assert trace.loc[trace["event"] != "micro", "undone"].isna().all()
    unknown = lee.mark_undone(lee.parse_region_trace((run / "trace.txt").read_text()), {})
    assert unknown["undone"].isna().all()      # no machine description: not guessed
    assert "micro_undone" not in lee.job_trace(unknown, 69, 0.0, None, 1.0)
