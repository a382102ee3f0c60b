"""The campaign layer: experiment definitions, run identity, cost estimates, the local
executor (concurrency, Ctrl-C and kill -9 resume) and the HTML report.

The executor tests run real QEMU campaigns (the demo's 8 runs, a few seconds each).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

import pandas as pd
import pytest

from schedlab.campaigns import kazempour
from schedlab.campaigns.experiment import check_definition, get, label_key, registry
from schedlab.errors import UserError
from schedlab.runs import RunRequest, WorkloadRequest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(registry()))
def test_every_experiment_expands_soundly_at_both_scales(name):
    e = get(name)
    for scale in ("smoke", "paper"):
        for backend in e.backends:
            requests = e.requests(scale, backend)
            assert requests, (name, scale)
            assert all(r.backend == backend for r in requests)
            assert len({json.dumps(r.label, sort_keys=True) for r in requests}) == len(requests)
    # The paper scale is the larger one, never the smaller.
    assert len(e.requests("paper", "gem5")) >= len(e.requests("smoke", "gem5"))


def test_figure2_has_every_condition_of_the_paper():
    runs = get("kazempour-fig2").requests("paper", "gem5")
    seen = {(r.label["benchmark"], r.label["affinity"], r.label["rep"]) for r in runs}
    want = set(product(kazempour.BENCHMARKS, ("high", "low"), range(kazempour.REPS["paper"])))
    assert seen == want
    for r in runs:
        # low L2 retention: BV_L2 on the other core of the shared L2, the 2 ms quantum
        assert [b.workload for b in r.background][1:] == ["bv_l2"]
        assert r.background[1].cpus == "1" and r.jobs[0].cpus == "0"
        assert r.policy == "quantum-2ms" and r.attribute_tasks
        bv = r.background[0]
        assert bv.workload == ("bv_0" if r.label["affinity"] == "high" else "bv_l1i")
        # footprints come from the catalogue: Clovertown's 32 KiB L1 I and 4 MiB L2
        assert bv.args == (() if bv.workload == "bv_0" else ("--size", "32KiB"))
        assert r.background[1].args == ("--size", "4MiB")
        # The benchmark and the base vector on CPU 0 alternate as SCHED_RR with the exact
        # quantum; BV_L2 stays SCHED_OTHER so the runner can still run and end the run.
        assert (r.jobs[0].sched, r.jobs[0].prio) == (bv.sched, bv.prio) == ("rr", 1)
        assert r.background[1].sched == "other"


def test_experiment_a_is_the_full_product():
    runs = get("kazempour-expA").requests("paper", "gem5")
    # machines, benchmarks, BVs, retention, quanta, repetitions
    assert len(runs) == 2 * 8 * 3 * 2 * 3 * kazempour.REPS["paper"]
    niagara = [r for r in runs if r.machine == "niagara"]
    assert niagara and all(r.cpu == "timing" for r in niagara)
    l2 = {b.args for r in niagara for b in r.background if b.workload == "bv_l2"}
    assert l2 == {("--size", "3MiB")}


def test_repetitions_differ_in_something_the_guest_sees():
    a = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                   label={"rep": 0})
    b = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                   label={"rep": 1})
    with pytest.raises(UserError, match="differ only in their label"):
        check_definition("x", [a, b])
    with pytest.raises(UserError, match="share the label"):
        check_definition("x", [a, RunRequest(machine="niagara", jobs=a.jobs, label={"rep": 0})])
    seeded = RunRequest(machine=b.machine, label=b.label,
                        jobs=(WorkloadRequest("memlat", args=("--seed", "2")),))
    check_definition("x", [a, seeded])


def test_campaigns_refuse_sampling_where_the_validation_says_it_does_not_hold():
    mup = "clovertown-e5320-mup"
    alone = RunRequest(machine=mup, backend="gem5", cpu="o3", fast_forward=True,
                       sampling="smarts-dense", jobs=(WorkloadRequest("memlat"),),
                       label={"rep": 0})
    check_definition("x", [alone])   # a program alone on O3 cores: allowed
    timing = dataclasses.replace(alone, machine="niagara", cpu="timing")
    with pytest.raises(UserError, match=r"^x: sampling on Timing cores saves no host time"):
        check_definition("x", [timing])
    bounded = dataclasses.replace(alone, jobs=(WorkloadRequest("gzip", duration=0.006),))
    with pytest.raises(UserError, match=r"^x: sampling a region bounded by guest time \(gzip\)"):
        check_definition("x", [bounded])
    corun = dataclasses.replace(alone, background=(WorkloadRequest("bv_0"),))
    with pytest.raises(UserError, match=r"^x: sampling beside background programs"):
        check_definition("x", [corun])
    # Unsampled, the same requests are fine; no study's definition samples today.
    check_definition("x", [dataclasses.replace(r, sampling=None, label={"rep": i})
                           for i, r in enumerate((timing, bounded))])
    assert not any(r.sampling for e in registry().values() for scale in ("smoke", "paper")
                   for backend in e.backends for r in e.requests(scale, backend))


def test_label_enters_the_run_id(guest_kernel, guest_image):
    from schedlab.runs import prepare
    base = dict(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),))
    one = prepare(RunRequest(**base, label={"condition": "a"}), progress=lambda s: None)
    two = prepare(RunRequest(**base, label={"condition": "b"}), progress=lambda s: None)
    assert one.run_id != two.run_id
    assert one.spec["label"] == {"condition": "a"}


def test_unimplemented_experiments_say_why_and_refuse_to_run(monkeypatch):
    import dataclasses

    from schedlab.campaigns import experiment
    from schedlab.campaigns.reproduce import reproduce
    missing = dataclasses.replace(get("lee-fig9"), name="x-missing", missing="no scheduler yet")
    real = experiment.registry
    monkeypatch.setattr(experiment, "registry", lambda: {**real(), "x-missing": missing})
    assert not get("x-missing").implemented
    with pytest.raises(UserError, match="not implemented yet: no scheduler yet"):
        reproduce("x-missing", backend="qemu")
    # An experiment that runs on QEMU but not yet on gem5 says why.
    qemu_only = dataclasses.replace(get("lee-fig24"), name="x-qemu-only",
                                    unavailable={"gem5": "no warm-up defined"})
    monkeypatch.setattr(experiment, "registry",
                        lambda: {**real(), "x-missing": missing, "x-qemu-only": qemu_only})
    with pytest.raises(UserError, match="does not run on gem5 yet: no warm-up defined"):
        reproduce("x-qemu-only", backend="gem5")


def test_several_figures_run_as_one_campaign_with_shared_runs_once(monkeypatch):
    from schedlab.campaigns import reproduce as R
    fig9 = get("lee-fig9").requests("smoke", "gem5")
    overheads = get("lee-overheads").requests("smoke", "gem5")
    # lee-overheads shares lee-fig9's confinement runs; its unification runs are its own
    # (the rate rule off).
    own = [r for r in overheads if r not in fig9]
    assert len(own) == len(overheads) // 2 and all(
        r.policy == "region-unify" and ("kernel.sched_region_rate", "0") in r.sysctl
        for r in own)
    shared = R.shared_requests(["lee-fig9", "lee-overheads", "lee-fig24"], "smoke", "gem5")
    assert len(shared) == len(fig9) + len(own) + len(get("lee-fig24").requests("smoke", "gem5"))
    assert shared[:len(fig9) + len(own)] == fig9 + own
    calls = []
    monkeypatch.setenv("GEM5", "/nonexistent/gem5.fast")      # can_run: nothing runs here
    monkeypatch.setattr(R, "run_requests", lambda reqs, name, *a: calls.append(("run", reqs)))
    monkeypatch.setattr(R, "reproduce", lambda name, *a: calls.append(("draw", name)))
    R.reproduce_many(["lee-fig9", "lee-overheads"], "smoke", "gem5", say=lambda s: None)
    assert calls == [("run", fig9 + own), ("draw", "lee-fig9"), ("draw", "lee-overheads")]
    calls.clear()      # one figure, or drawing from data/: no campaign of its own
    R.reproduce_many(["lee-fig9"], "smoke", "gem5", say=lambda s: None)
    R.reproduce_many(["lee-fig9", "lee-overheads"], source="committed", say=lambda s: None)
    assert [c[0] for c in calls] == ["draw", "draw", "draw"]
    # Its name goes to SLURM and the logs: no spaces, short, one per set of figures.
    names = ["lee-fig9", "lee-fig17", "lee-fig18-23", "lee-fig24", "lee-fig25"]
    assert R.campaign_name(names[:2], "smoke") == "lee-fig9+lee-fig17-smoke"
    long = R.campaign_name(names, "paper")
    assert " " not in long and len(long) < 64 and long != R.campaign_name(names[1:], "paper")
    with pytest.raises(UserError, match="lee-nosuch"):
        R.reproduce_many(["lee-fig9", "lee-nosuch"])


def test_cost_of_a_run_is_fixed_part_plus_instructions_at_the_measured_speed():
    # Hand computation from the raw benchmark record and the characterisation file.
    from schedlab.campaigns.cost import run_host_seconds
    records = json.loads((REPO / "bench/results/gem5-vm-2026-11-23-tsc.json").read_text())
    rec = next(r for r in records["records"] if r["machine"] == "clovertown-e5320-mup")
    chars = json.loads((REPO / "workloads/characterisation.json").read_text())
    insts = chars["workloads"]["memlat"]["clovertown-e5320"]["instructions"]
    request = RunRequest(machine="clovertown-e5320-mup", backend="gem5", cpu="o3",
                         jobs=(WorkloadRequest("memlat", reps=2),))
    want = rec["total_host_s"] - rec["roi_host_s"] + 2 * insts / rec["ips"]
    assert run_host_seconds(request) == pytest.approx(want)
    # A warm-up runs on the Atomic cores: its seconds at one instruction per cycle on each
    # busy CPU (the job and one background program here), at their speed.
    from schedlab.campaigns.cost import ATOMIC_IPS
    from schedlab.machine import load_machine
    warmed = RunRequest(machine="clovertown-e5320-mup", backend="gem5", cpu="o3",
                        jobs=(WorkloadRequest("memlat", reps=2, warmup=0.1),),
                        background=(WorkloadRequest("bv_0"),))
    unwarmed = RunRequest(machine="clovertown-e5320-mup", backend="gem5", cpu="o3",
                          jobs=(WorkloadRequest("memlat", reps=2),),
                          background=(WorkloadRequest("bv_0"),))
    clock = load_machine("clovertown-e5320-mup").clock_hz
    assert run_host_seconds(warmed) - run_host_seconds(unwarmed) == pytest.approx(
        2 * 0.1 * clock * 2 / ATOMIC_IPS)
    # With the caches bypassed until 30 ms before the region, the first 70 ms of the
    # warm-up run BYPASS_SPEEDUP times as fast.
    from dataclasses import replace

    from schedlab.campaigns.cost import BYPASS_SPEEDUP
    bypassed = replace(warmed, warm_caches=0.03)
    assert run_host_seconds(bypassed) - run_host_seconds(unwarmed) == pytest.approx(
        2 * (0.03 + 0.07 / BYPASS_SPEEDUP) * clock * 2 / ATOMIC_IPS)
    # A parallel program keeps its threads busy: the ray tracer's smoke size runs two, its
    # own --threads overrides that, and a user's program counts only its own arguments.
    from schedlab.guest.work import busy_cpus
    tracer = RunRequest(machine="clovertown-x5365", backend="gem5",
                        jobs=(WorkloadRequest("raytrace", duration=0.06),),
                        background=(WorkloadRequest("omnetpp"),))
    assert busy_cpus(tracer, tracer.jobs[0], cores=4) == 3
    assert busy_cpus(tracer, WorkloadRequest("raytrace", args=("--threads", "8")), 4) == 4
    assert busy_cpus(tracer, WorkloadRequest("/tmp/mine.c", args=("--threads", "3")), 8) == 4
    assert busy_cpus(tracer, WorkloadRequest("/tmp/mine.c"), 8) == 2
    unmeasured = RunRequest(machine="westmere-x5660", backend="gem5", cpu="timing",
                            jobs=(WorkloadRequest("memlat"),))
    assert run_host_seconds(unmeasured) != run_host_seconds(unmeasured)   # NaN: unknown
    # A workload cachegrind has not characterised (the streams driver runs the kernels as
    # processes of their own) takes its region as measured on the machine.
    hector = json.loads((REPO / "bench/results/gem5-hector-vm-2026-11-25.json").read_text())
    rec = hector["records"][0]
    assert rec["workload"] == "streams" and "streams" not in chars["workloads"]
    streams = RunRequest(machine="hector", backend="gem5", cpu="timing",
                         jobs=(WorkloadRequest("streams"),))
    assert run_host_seconds(streams) == pytest.approx(
        rec["total_host_s"] - rec["roi_host_s"] + rec["roi_insts"] / rec["ips"])
    # The paper's streams scale that region by their instructions against it (15 rounds of
    # the paper's problems: workloads/streams/workload.toml's work), not by a generic factor.
    paper = RunRequest(machine="hector", backend="gem5", cpu="timing",
                       jobs=(WorkloadRequest("streams", size="paper"),))
    from schedlab.guest.workloads import get as workload
    work = workload("streams").size_table["paper"]["work"]
    assert work > 10
    assert run_host_seconds(paper) == pytest.approx(
        rec["total_host_s"] - rec["roi_host_s"] + work * rec["roi_insts"] / rec["ips"])


def test_campaigns_start_the_costliest_runs_first():
    """Longest processing time first: a long run started last would leave the other cores
    idle at the end. Unpriced runs (a machine bench/ has not measured) come first; equal
    costs keep the definition's order."""
    from schedlab.campaigns.cost import costliest_first, run_host_seconds

    def memlat(reps: int, label: int, cpu: str = "o3") -> RunRequest:
        return RunRequest(machine="clovertown-e5320-mup", backend="gem5", cpu=cpu,
                          label={"n": label}, jobs=(WorkloadRequest("memlat", reps=reps),))
    # The last on the westmere's Timing cores, which bench/ has not measured.
    requests = [memlat(1, 0), memlat(3, 1), memlat(1, 2), memlat(2, 3),
                dataclasses.replace(memlat(1, 4, cpu="timing"), machine="westmere-x5660")]
    assert run_host_seconds(requests[4]) != run_host_seconds(requests[4])   # NaN
    ordered = costliest_first(list(enumerate(requests)), lambda item: item[1])
    assert [i for i, _ in ordered] == [4, 1, 3, 0, 2]


def test_committed_runs_calibrate_the_estimates(tmp_path, monkeypatch):
    """With committed smoke runs recording their gem5 host time, smoke is their median times
    the runs and paper the model scaled by measured over modelled smoke."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration, reproduce
    from schedlab.campaigns.cost import campaign_host_hours
    monkeypatch.setattr(store, "DATA", tmp_path)
    e = get("demarchi-fig3")
    assert calibration.estimated_hours(e, "smoke") == (
        pytest.approx(campaign_host_hours(e.requests("smoke", "gem5"))), "model")
    # Two rows of one run (two jobs) count once; a run without the column's value is left out.
    path = store.committed_path("demarchi", "demarchi-fig3", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    pd.DataFrame({"run_id": ["a", "a", "b", "c", "d"],
                  "gem5_host_s": [600.0, 600.0, 900.0, 1500.0, None]}).to_csv(path, index=False)
    assert calibration.measured_run_seconds(e) == (3, 900.0)
    smoke, how = calibration.estimated_hours(e, "smoke")
    runs = len(e.requests("smoke", "gem5"))
    assert (smoke, how) == (pytest.approx(runs * 900.0 / 3600), "measured")
    paper, how = calibration.estimated_hours(e, "paper")
    model_ratio = (campaign_host_hours(e.requests("paper", "gem5"))
                   / campaign_host_hours(e.requests("smoke", "gem5")))
    assert (paper, how) == (pytest.approx(smoke * model_ratio), "calibrated")
    assert any("median of 15.0 min" in line for line in reproduce.describe(e, "smoke", "gem5"))
    # Where a run's table records gem5's CPU time, that is its cost (here b's wall clock
    # counts an hour paused); runs recorded before the column keep their wall clock.
    pd.DataFrame({"run_id": ["a", "b", "c"], "gem5_host_s": [600.0, 4500.0, 1500.0],
                  "gem5_cpu_s": [590.0, 880.0, None]}).to_csv(path, index=False)
    assert calibration.measured_run_seconds(e) == (3, 880.0)


def test_each_committed_run_prices_its_own_request_also_without_a_label_key(tmp_path,
                                                                             monkeypatch):
    # demarchi-tail's 1500-sample runs set no size: their rows' size cells are empty.
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration
    from schedlab.campaigns.cost import run_host_seconds
    monkeypatch.setattr(store, "DATA", tmp_path)
    tail = get("demarchi-tail")
    requests = tail.requests("smoke", "gem5")
    path = store.committed_path("demarchi", "demarchi-tail", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    pd.DataFrame([{**r.label, "run_id": f"r{i}", "gem5_host_s": 100.0 * (i + 1)}
                  for i, r in enumerate(requests)]).to_csv(path, index=False)
    assert pd.read_csv(path)["size"].isna().sum() == 2
    ratios = calibration.own_run_ratios(tail)
    assert len(ratios) == len(requests)
    estimate = calibration.run_seconds_estimate(["demarchi-tail"], "smoke", "gem5")
    assert [estimate(r) for r in requests] == pytest.approx(
        [100.0 * (i + 1) for i in range(len(requests))])
    hours, how = calibration.estimated_hours(tail, "smoke")
    assert how == "measured" and hours * 3600 == pytest.approx(
        sum(100.0 * (i + 1) for i in range(len(requests))))
    assert all(run_host_seconds(r) > 0 for r in requests)


def test_a_run_whose_program_changed_is_not_priced_by_its_old_measurement(tmp_path,
                                                                         monkeypatch):
    """Committed runs of the stand-ins price today's runs of the same label only where the
    program is the same: parser now runs the real link-parser, whose warm-up for its
    dictionary the model counts; its old run's seconds would cancel that."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration
    from schedlab.campaigns.cost import run_host_seconds
    monkeypatch.setattr(store, "DATA", tmp_path)
    fig2 = get("kazempour-fig2")
    requests = fig2.requests("smoke", "gem5")
    path = store.committed_path("kazempour", "kazempour-fig2", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    # As made before the real programs: each run's job is the benchmark's stand-in.
    pd.DataFrame([{**r.label, "run_id": f"r{i}", "job": r.label["benchmark"],
                   "gem5_host_s": 60.0} for i, r in enumerate(requests)]).to_csv(path,
                                                                                index=False)
    ratios = calibration.own_run_ratios(fig2)
    priced = {r.label["benchmark"] for r in requests
              if calibration.label_key(r.label) in ratios}
    assert "art" in priced and "parser" not in priced and "gcc" not in priced
    estimate = calibration.run_seconds_estimate(["kazempour-fig2"], "smoke", "gem5")
    parser = next(r for r in requests if r.label["benchmark"] == "parser")
    art = next(r for r in requests if r.label["benchmark"] == "art")
    assert estimate(art) == pytest.approx(60.0)
    assert estimate(parser) > estimate(art)     # its long warm-up, as the model counts it
    assert run_host_seconds(parser) > run_host_seconds(art)


def test_an_unmeasured_experiment_is_priced_by_its_study(tmp_path, monkeypatch):
    """Without committed runs of its own, an experiment's estimate is the model scaled by
    how its study's committed runs compared with the model (experiments made of the same
    runs counted once); another study's experiments keep the model's."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration, reproduce
    from schedlab.campaigns.cost import campaign_host_hours
    monkeypatch.setattr(store, "DATA", tmp_path)
    fig3, fig4, fig7 = get("demarchi-fig3"), get("demarchi-fig4"), get("demarchi-fig7")
    tail = get("demarchi-tail")
    per_run = [campaign_host_hours(e.requests("smoke", "gem5")) * 3600 / len(
        e.requests("smoke", "gem5")) for e in (fig3, fig4, fig7)]
    # fig3's runs took twice the model, fig4's four times, fig7's ten (the median, 4, is not
    # the mean); fig5 holds fig3's runs again.
    for e, seconds, name in ((fig3, 2 * per_run[0], "demarchi-fig3"),
                             (fig4, 4 * per_run[1], "demarchi-fig4"),
                             (fig7, 10 * per_run[2], "demarchi-fig7"),
                             (fig3, 2 * per_run[0], "demarchi-fig5")):
        path = store.committed_path("demarchi", name, "smoke", "gem5")
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"run_id": [f"{e.name}-{i}" for i in range(4)],
                      "gem5_host_s": [seconds] * 4}).to_csv(path, index=False)
    study = calibration.study_calibration("demarchi")
    assert study.ratios == {"demarchi-fig3": pytest.approx(2.0),
                            "demarchi-fig4": pytest.approx(4.0),
                            "demarchi-fig7": pytest.approx(10.0)}
    model = campaign_host_hours(tail.requests("smoke", "gem5"))
    assert calibration.estimated_hours(tail, "smoke") == (pytest.approx(4.0 * model), "study")
    assert any("the model times 4.00" in line and "2.00 to 10.00" in line
               for line in reproduce.describe(tail, "smoke", "gem5"))
    lee = get("lee-fig17")
    assert calibration.estimated_hours(lee, "smoke") == (
        pytest.approx(campaign_host_hours(lee.requests("smoke", "gem5"))), "model")


def test_a_campaign_prices_each_run_as_its_figure_is_priced(tmp_path, monkeypatch):
    """The estimate a campaign orders its runs by and says at its start: each run the model
    times its figure's measured/modelled ratio (its own runs', else its study's, else 1),
    so that a campaign of two studies does not start the one the model overprices."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration
    from schedlab.campaigns.cost import campaign_host_hours, costliest_first, run_host_seconds
    monkeypatch.setattr(store, "DATA", tmp_path)
    fig3, lee = get("demarchi-fig3"), get("lee-fig24")
    # fig3's runs took 20 times what the model gives them.
    per_run = campaign_host_hours(fig3.requests("smoke", "gem5")) * 3600 / len(
        fig3.requests("smoke", "gem5"))
    path = store.committed_path("demarchi", "demarchi-fig3", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    pd.DataFrame({"run_id": [f"r{i}" for i in range(4)],
                  "gem5_host_s": [20 * per_run] * 4}).to_csv(path, index=False)
    estimate = calibration.run_seconds_estimate(["demarchi-fig3", "demarchi-tail", "lee-fig24"],
                                              "smoke", "gem5")
    tail = get("demarchi-tail").requests("smoke", "gem5")[0]
    ours, theirs = fig3.requests("smoke", "gem5")[0], lee.requests("smoke", "gem5")[0]
    assert estimate(ours) == pytest.approx(20 * run_host_seconds(ours))
    assert estimate(tail) == pytest.approx(20 * run_host_seconds(tail))      # its study's
    assert estimate(theirs) == pytest.approx(run_host_seconds(theirs))       # the model's
    assert calibration.estimated_hours(fig3, "smoke")[0] * 3600 == pytest.approx(
        sum(estimate(r) for r in fig3.requests("smoke", "gem5")))
    # The model alone starts lee's run first (about 2400 s against 220), the calibrated
    # estimate fig3's (20 times 220).
    pair = [theirs, ours]
    assert costliest_first(pair, lambda r: r) == [theirs, ours]
    assert costliest_first(pair, lambda r: r, estimate) == [ours, theirs]
    assert calibration.run_seconds_estimate(["demarchi-fig3"], "smoke", "qemu") is (
        run_host_seconds)


def test_a_campaign_starts_the_run_its_label_measured_longest(tmp_path, monkeypatch):
    """Runs the model prices alike are ordered by what the committed run with their label
    took (labels survive code changes; run ids do not): machine A's task-affinity run, which
    the model prices below machine B's, took three times the others, so it starts first;
    a label without a committed run takes its figure's ratio."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration
    from schedlab.campaigns.cost import costliest_first, run_host_seconds
    monkeypatch.setattr(store, "DATA", tmp_path)
    fig3 = get("demarchi-fig3")
    requests = fig3.requests("smoke", "gem5")
    measured = [r for r in requests if r.label["rep"] == 0]        # rep 1 never ran
    slow = {"system": "A", "policy": "task-affinity"}
    took = [run_host_seconds(r) * (6 if all(r.label[k] == v for k, v in slow.items()) else 2)
            for r in measured]
    path = store.committed_path("demarchi", "demarchi-fig3", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    pd.DataFrame({"run_id": [f"r{i}" for i in range(len(measured))],
                  **{k: [r.label[k] for r in measured] for k in ("system", "cores", "policy",
                                                                  "rep")},
                  "gem5_host_s": took}).to_csv(path, index=False)
    estimate = calibration.run_seconds_estimate(["demarchi-fig3"], "smoke", "gem5")
    for r, seconds in zip(measured, took):
        assert estimate(r) == pytest.approx(seconds)
    ratio = calibration.own_ratio(fig3)
    unmeasured = [r for r in requests if r.label["rep"] == 1]
    for r in unmeasured:
        assert estimate(r) == pytest.approx(ratio * run_host_seconds(r))

    def first(order):
        return order[0].label["system"], order[0].label["policy"]
    assert first(costliest_first(measured, lambda r: r, estimate)) == ("A", "task-affinity")
    assert first(costliest_first(measured, lambda r: r))[0] == "B"        # the model's


def test_committed_runs_of_another_definition_do_not_price_it(tmp_path, monkeypatch):
    """Runs whose work key is none of today's requests' (made under an earlier definition,
    here with a longer mixer) are left out of the measured median, and said so; with none
    left the estimate is the model's."""
    import pandas as pd

    from schedlab.analysis import store
    from schedlab.campaigns import calibration, reproduce
    from schedlab.campaigns.cost import campaign_host_hours
    from schedlab.runs import work_key
    monkeypatch.setattr(store, "DATA", tmp_path)
    e = get("demarchi-fig3")
    requests = e.requests("smoke", "gem5")
    today = work_key(requests[0])
    longer = work_key(dataclasses.replace(requests[0], jobs=tuple(
        dataclasses.replace(j, size="smoke") for j in requests[0].jobs)))
    assert longer != today
    path = store.committed_path("demarchi", "demarchi-fig3", "smoke", "gem5")
    path.parent.mkdir(parents=True)
    # A run collected before the key was recorded (d) counts, as whole old tables do.
    pd.DataFrame({"run_id": ["a", "b", "c", "d"], "gem5_host_s": [600.0, 9000.0, 9000.0, 800.0],
                  "work_key": [today, longer, longer, None]}).to_csv(path, index=False)
    assert calibration.measured_run_seconds(e) == (2, 700.0)
    assert any("not counted: 2 committed smoke runs of an earlier definition" in line
               for line in reproduce.describe(e, "smoke", "gem5"))
    pd.DataFrame({"run_id": ["b", "c"], "gem5_host_s": [9000.0, 9000.0],
                  "work_key": [longer, longer]}).to_csv(path, index=False)
    assert calibration.estimated_hours(e, "smoke") == (
        pytest.approx(campaign_host_hours(requests)), "model")


def test_work_key_is_the_work_not_the_name():
    """A request's label and timeouts leave its work key alone; its programs' sizes,
    arguments and machine change it; a field left at its default is not part of it."""
    from schedlab.runs import work_key
    base = RunRequest(machine="core-i7-920", backend="gem5",
                      jobs=(WorkloadRequest("mixer", size="sim"),), label={"rep": 0})
    assert work_key(dataclasses.replace(base, label={"rep": 1}, timeout=60.0,
                                        ready_timeout=10.0)) == work_key(base)
    assert work_key(dataclasses.replace(base, trace_buffer_kb=None)) == work_key(base)
    for changed in (dataclasses.replace(base, machine="xeon-e5440"),
                    dataclasses.replace(base, jobs=(WorkloadRequest("mixer", size="smoke"),)),
                    dataclasses.replace(base, jobs=(WorkloadRequest("mixer", size="sim",
                                                                    args=("-x",)),)),
                    dataclasses.replace(base, policy="task-affinity")):
        assert work_key(changed) != work_key(base)


def _campaign(results: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "SCHEDLAB_RESULTS": str(results)}
    env.pop("GEM5", None)
    return subprocess.Popen([sys.executable, str(REPO / "run.py"), "reproduce", "demo-affinity",
                             "--backend", "qemu", *extra], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _staging(results: Path) -> list[Path]:
    return [d for d in results.iterdir() if d.name.startswith(".clovertown")]


def _finished(results: Path) -> list[Path]:
    return [d for d in results.iterdir() if (d / "results.json").is_file()]


@pytest.mark.timeout(900)
def test_local_campaign_runs_in_parallel_and_survives_kill_9(guest_kernel, guest_image, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    driver = _campaign(results, "--jobs", "2")
    deadline = time.monotonic() + 600
    # Wait until one run is finished and others are writing their staging directories,
    # then kill the driver outright.
    while time.monotonic() < deadline:
        if _finished(results) and _staging(results):
            break
        assert driver.poll() is None, driver.stdout.read()
        time.sleep(0.2)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    # Its workers, and their QEMUs, die with it (no orphan races the resumed campaign):
    # they are gone within a minute, however long a busy host takes to reap them.

    def survivors() -> list[str]:
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        return [ln for ln in ps.splitlines() if str(results) in ln
                and ("schedlab.campaigns.worker" in ln or "qemu-system" in ln)]
    gone = time.monotonic() + 60
    while survivors() and time.monotonic() < gone:
        time.sleep(0.2)
    assert not survivors()
    # Counted once every worker is gone: a run may finish between the check above and the
    # kill.
    done_before = {d.name for d in _finished(results)}
    assert _staging(results), "a killed run should have left its staging directory"
    # What finished so far can be drawn while the campaign is down, marked partial,
    # without running anything or touching data/.
    partial = _campaign(results, "--partial")
    out, _ = partial.communicate(timeout=300)
    assert partial.returncode == 0, out[-3000:]
    assert f"{len(done_before)} of 8 runs finished" in out
    assert {d.name for d in _finished(results)} == done_before
    meta = json.loads((results / "figures" / "demo-affinity--smoke--qemu--partial.json")
                      .read_text())
    assert meta["source"] == "partial" and meta["provenance"]["runs"] == len(done_before)
    assert f"PARTIAL: {len(done_before)} of the 8 runs finished" in meta["caption"]
    tables = [Path(d) for d in meta["data"]]
    assert tables and all(t.is_file() and t.is_relative_to(results) for t in tables)

    again = _campaign(results)
    out, _ = again.communicate(timeout=600)
    assert again.returncode == 0, out[-3000:]
    assert f"{len(done_before)} already done" in out or len(done_before) == 0
    # Its output is a pipe, not a terminal: a line per run made instead of a live bar.
    made = re.findall(r"^demo-affinity-smoke: done (\S+) in [\d.]+ min; done \d+", out, re.M)
    assert len(made) == 8 - len(done_before), out[-3000:]
    started = re.findall(r"^demo-affinity-smoke: started (\S+); its progress: (\S+)$", out, re.M)
    assert sorted(made) == sorted(run for run, _ in started)
    assert all(Path(log).is_file() for _, log in started)
    finished = _finished(results)
    assert len(finished) == 8 and done_before <= {d.name for d in finished}
    assert not _staging(results)
    for d in finished:
        assert json.loads((d / "results.json").read_text())["ok"]
    figure = results / "figures" / "demo-affinity--smoke--qemu.png"
    assert figure.stat().st_size > 10_000
    meta = json.loads(figure.with_suffix(".json").read_text())
    assert meta["provenance"]["runs"] == 8 and meta["backend"] == "qemu"
    # Its table lists the runs in the definition's order, not the order they finished in
    # (the campaign starts the costliest first; two at a time finish in any order).
    table = pd.read_csv(meta["data"][0]).drop_duplicates("run_id")
    labels = [r.label for r in get("demo-affinity").requests("smoke", "qemu")]
    assert [label_key({k: row[k] for k in labels[0]}) for _, row in table.iterrows()] \
        == [label_key(label) for label in labels]


@pytest.mark.timeout(600)
def test_executor_reports_peak_concurrency(guest_kernel, guest_image, tmp_path, monkeypatch):
    from schedlab.campaigns.local import run_campaign
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    requests = get("demo-affinity").requests("smoke", "qemu")[:4]
    report = run_campaign(requests, jobs=2, name="t", say=lambda s: None)
    assert report.count("done") == 4 and report.peak_running == 2
    again = run_campaign(requests, jobs=2, name="t", say=lambda s: None)
    assert again.count("reused") == 4 and again.peak_running == 0


@pytest.mark.timeout(600)
def test_a_run_another_campaign_is_making_is_waited_for_not_made_twice(
        guest_kernel, guest_image, tmp_path, monkeypatch):
    """Two campaigns on one results store (two terminals, a SLURM array beside a local
    campaign): the worker that finds the run's lock held waits, then makes it only if it is
    still not there."""
    from schedlab.runs import prepare, request_to_data
    from schedlab.store import run_lock
    results = tmp_path / "results"
    env = {**os.environ, "SCHEDLAB_RESULTS": str(results), "PYTHONPATH": str(REPO)}
    request = get("demo-affinity").requests("smoke", "qemu")[0]
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(results))
    run_id = prepare(request, progress=lambda s: None).run_id
    spec = tmp_path / "request.json"
    spec.write_text(json.dumps({"request": request_to_data(request), "run_id": run_id}))
    with run_lock(results, run_id, blocking=True) as held:
        assert held
        worker = subprocess.Popen([sys.executable, "-m", "schedlab.campaigns.worker",
                                   str(spec)], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        first = worker.stdout.readline()
        while first and "another process is making it" not in first:
            first = worker.stdout.readline()
        assert "waiting for it" in first, first
        time.sleep(3)   # it waits: nothing is being made meanwhile
        assert worker.poll() is None
        assert not list(results.glob(f".{run_id}.*")) and not (results / run_id).exists()
    out, _ = worker.communicate(timeout=300)   # the holder let go without making it
    assert worker.returncode == 0, out[-2000:]
    assert json.loads((results / run_id / "results.json").read_text())["ok"]


@pytest.mark.timeout(600)
def test_a_campaign_passes_over_a_run_another_one_holds_and_comes_back_to_it(
        guest_kernel, guest_image, tmp_path, monkeypatch):
    import threading

    from schedlab.campaigns.local import run_campaign
    from schedlab.runs import prepare
    from schedlab.store import run_lock
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    requests = get("demo-affinity").requests("smoke", "qemu")[:2]
    held, other = (prepare(r, progress=lambda s: None).run_id for r in requests)
    reports = []
    with run_lock(tmp_path, held, blocking=True):
        campaign = threading.Thread(target=lambda: reports.append(
            run_campaign(requests, jobs=1, name="t", say=lambda s: None)))
        campaign.start()
        deadline = time.monotonic() + 300
        while not (tmp_path / other / "results.json").is_file():
            assert time.monotonic() < deadline and campaign.is_alive()
            time.sleep(0.2)
        time.sleep(2)   # the one slot is free, yet the held run is not started
        assert campaign.is_alive() and not list(tmp_path.glob(f".{held}.*"))
    campaign.join(timeout=300)   # let go without making it: the campaign makes it
    assert reports and reports[0].count("done") == 2


@pytest.mark.timeout(600)
def test_sigterm_stops_a_campaign_cleanly_and_it_resumes(guest_kernel, guest_image, tmp_path):
    # SIGTERM is what a batch system or a script sends (and Ctrl-C's path): the workers
    # stop, their staging directories go, nothing half-written remains.
    results = tmp_path / "results"
    results.mkdir()
    driver = _campaign(results, "--jobs", "2")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not _staging(results):
        assert driver.poll() is None, driver.stdout.read()
        time.sleep(0.2)
    driver.send_signal(signal.SIGTERM)
    # A second one during the clean-up (a killed process group, a batch system repeating
    # itself) must not cut it short.
    time.sleep(0.3)
    if driver.poll() is None:
        driver.send_signal(signal.SIGTERM)
    out, _ = driver.communicate(timeout=120)
    assert driver.returncode == 130 and "interrupted (rerun to resume)" in out, out[-2000:]
    assert "Traceback" not in out and "Exception ignored" not in out, out[-2000:]
    assert not _staging(results)
    for d in _finished(results):
        assert json.loads((d / "results.json").read_text())["ok"]


@pytest.mark.timeout(900)
def test_carried_runs_count_as_done_on_another_host(guest_kernel, guest_image, tmp_path,
                                                     monkeypatch):
    # Host A finishes 3 of demo-affinity's 8 runs and keeps them as committed tables; host
    # B, with an empty results store, runs only the other 5 and draws all 8.
    import pandas as pd
    from schedlab.campaigns import reproduce as R
    from schedlab.campaigns.local import run_campaign
    monkeypatch.delenv("GEM5", raising=False)
    from schedlab.campaigns import locations
    monkeypatch.setattr(locations, "DATA", tmp_path / "data")
    said: list[str] = []
    demo = get("demo-affinity")
    requests = demo.requests("smoke", "qemu")
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path / "host-a"))
    assert run_campaign(requests[:3], jobs=2, name="a", say=said.append).count("done") == 3
    partial = R.reproduce("demo-affinity", backend="qemu", source="partial", carry=True,
                          say=said.append)
    assert partial.runs == 3
    kept = tmp_path / "data" / "demo" / "partial" / "demo-affinity--smoke--qemu--partial.csv"
    carried_table = pd.read_csv(kept)
    note = kept.with_suffix(".md").read_text()
    assert "3 of the 8 runs of `python3 run.py reproduce demo-affinity --backend qemu`" in note
    assert all(f"`{run}`" in note for run in carried_table["run_id"])
    assert "Still to run (5):" in note
    carried_ids = set(carried_table["run_id"])
    assert len(carried_ids) == 3
    # On host A, which holds the runs, they are collected again (today's analysis), not
    # taken from the carried rows: a column older code did not write is there.
    carried_table.drop(columns="wall_s").to_csv(kept, index=False)
    again = R.reproduce("demo-affinity", backend="qemu", source="partial", say=said.append)
    assert again.runs == 3
    fresh = pd.read_csv(locations.partial_paths(demo, "smoke", "qemu")[""])
    assert set(fresh["run_id"]) == carried_ids and fresh["wall_s"].notna().all()
    # A row made by other code (another run id) is named and not counted.
    foreign = carried_table.iloc[[0]].assign(run_id="clovertown-e5320--other--0123456789ab")
    pd.concat([carried_table, foreign]).to_csv(kept, index=False)

    host_b = tmp_path / "host-b"
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(host_b))
    said.clear()
    full = R.reproduce("demo-affinity", backend="qemu", jobs=2, say=said.append)
    ran = {d.name for d in host_b.iterdir() if (d / "results.json").is_file()}
    assert len(ran) == 5 and not ran & carried_ids
    assert any("3 of its 8 runs carried" in line for line in said), said
    assert any("1 carried run(s) were made by other code" in line for line in said), said
    final = pd.read_csv(locations.table_paths(demo, "smoke", "qemu")[""])
    assert set(final["run_id"]) == ran | carried_ids and full.runs == 8
    assert not kept.exists(), "the full table supersedes the carried one"
    assert not kept.with_suffix(".md").exists()


def test_carried_rows_of_another_gem5_binary_run_again(tmp_path):
    import pandas as pd
    from schedlab.campaigns import carried
    where = carried.paths_for(get("lee-fig9"), "smoke", "gem5", ("", "events"), tmp_path)
    runs = pd.DataFrame({"run_id": ["a", "b", "c"], "gem5_hash": ["h1", "h2", "h1"],
                         "rate": [1.0, 2.0, 3.0]})
    events = pd.DataFrame({"run_id": ["a", "a", "b", "c"], "event": ["x", "y", "x", "x"]})
    carried.save({"": runs, "events": events}, where)
    said: list[str] = []
    found = carried.load(where, {"a", "b"}, "h1", said.append)
    assert found.run_ids == {"a"}
    assert list(found.tables["events"]["event"]) == ["x", "y"]
    assert any("another gem5 binary" in s for s in said) and any("other code" in s for s in said)
    fresh = {"": pd.DataFrame({"run_id": ["b"], "gem5_hash": ["h1"], "rate": [2.5]}),
             "events": pd.DataFrame({"run_id": ["b"], "event": ["z"]})}
    merged = found.merged(fresh)
    assert list(merged[""]["run_id"]) == ["a", "b"] and list(merged[""]["rate"]) == [1.0, 2.5]
    assert carried.remove(where) == list(where.values()) and not any(
        p.exists() for p in where.values())


def test_carried_runs_without_events_merge_with_fresh_runs_with_them(tmp_path):
    """Fig. 25's first carried runs (the default scheduler) had no region events: their
    events table is an empty CSV, which reads back without columns; the partitioned runs
    made later have events, and the other way round."""
    from schedlab.campaigns import carried
    where = carried.paths_for(get("lee-fig25"), "smoke", "gem5", ("", "events"), tmp_path)
    carried.save({"": pd.DataFrame({"run_id": ["a"], "gem5_hash": ["h1"]}),
                  "events": pd.DataFrame()}, where)
    found = carried.load(where, {"a"}, "h1", lambda s: None)
    assert found.run_ids == {"a"}
    fresh = {"": pd.DataFrame({"run_id": ["b"], "gem5_hash": ["h1"]}),
             "events": pd.DataFrame({"run_id": ["b", "b"], "event": ["change", "micro"]})}
    merged = found.merged(fresh)
    assert list(merged[""]["run_id"]) == ["a", "b"]
    assert list(merged["events"]["event"]) == ["change", "micro"]
    # Carried events, fresh runs without any.
    found.tables["events"] = fresh["events"]
    merged = found.merged({"": fresh[""], "events": pd.DataFrame()})
    assert list(merged["events"]["run_id"]) == ["b", "b"]


def test_the_carried_tables_note_says_what_they_hold_and_what_is_left(tmp_path):
    import pandas as pd
    from schedlab.campaigns import carried
    fig24 = get("lee-fig24")
    requests = fig24.requests("smoke", "gem5")
    rows = pd.DataFrame([{**requests[i].label, "run_id": f"run-{i}", "gem5_version": "24.0",
                          "gem5_hash": "f" * 64, "cpu": "o3", "kernel": "k1", "image": "i1",
                          "gem5_config": "c" * 64, "gem5_host_s": 600.0 + i}
                         for i in (0, 0, 2)])       # a run can have a row per job
    where = carried.paths_for(fig24, "smoke", "gem5", ("", "responses"), tmp_path)
    carried.save({"": rows}, where)
    path = carried.write_note(carried.note(fig24, "smoke", "gem5", rows, requests, where,
                                           "commit 0123456789ab"), where)
    text = path.read_text()
    assert path == where[""].with_suffix(".md") and path.parent == where[""].parent
    assert f"2 of the {len(requests)} runs of `python3 run.py reproduce lee-fig24`" in text
    assert "from commit 0123456789ab" in text and "binary `ffffffffffff`" in text
    assert "kernel `k1`" in text and "gem5-side code `cccccccccccc`" in text
    assert "| `run-0` | 600 |" in text and "| `run-2` | 602 |" in text
    assert f"Still to run ({len(requests) - 2}):" in text
    left = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(left) == len(requests) - 2
    assert carried._label(requests[1].label) in left[0]
    gone = carried.remove(where)
    assert path in gone and not path.exists()


def test_the_note_names_the_checkout(tmp_path):
    from schedlab.campaigns import carried
    made_from = carried.checkout()
    assert re.fullmatch(r"commit [0-9a-f]{12}( with uncommitted changes)?|a tree that is not "
                        r"a git checkout", made_from)


def test_without_committed_tables_the_error_points_at_carried_ones(tmp_path, monkeypatch):
    import pandas as pd
    from schedlab.analysis import store
    from schedlab.campaigns import carried
    from schedlab.campaigns import locations
    from schedlab.campaigns import reproduce as R
    monkeypatch.setattr(locations, "DATA", tmp_path)
    monkeypatch.setattr(store, "DATA", tmp_path)
    with pytest.raises(UserError) as e:
        R.reproduce("brecht-fig2", source="committed", say=lambda s: None)
    assert "holds some of its runs" not in str(e.value)
    where = carried.paths_for(get("brecht-fig2"), "smoke", "gem5", ("",), tmp_path)
    carried.save({"": pd.DataFrame({"run_id": ["x"]})}, where)
    with pytest.raises(UserError, match="holds some of its runs"):
        R.reproduce("brecht-fig2", source="committed", say=lambda s: None)


def test_dry_run_counts_carried_runs_by_label(tmp_path, monkeypatch):
    import pandas as pd
    from schedlab.campaigns import carried
    from schedlab.campaigns import reproduce as R
    fig1 = get("brecht-fig1")
    requests = fig1.requests("smoke", "gem5")
    rows = pd.DataFrame([{**requests[i].label, "run_id": f"r{i}", "job": "streams"}
                         for i in (0, 0, 3)])      # a run has a row per job repetition
    where = carried.paths_for(fig1, "smoke", "gem5", ("",), tmp_path)
    carried.save({"": rows}, where)
    assert carried.labelled(where[""], requests) == [i in (0, 3) for i in range(len(requests))]
    from schedlab.campaigns import locations
    monkeypatch.setattr(locations, "DATA", tmp_path)
    line = next(x for x in R.describe(fig1, "smoke", "gem5") if "carried:" in x)
    assert f"carried: 2 of them in {where['']}" in line and f"{len(requests) - 2} to run" in line


def test_carried_rows_match_requests_without_a_label_key(tmp_path):
    # demarchi-tail: the 1500-sample runs are Table I's and have no size in their label, so
    # in a table mixing them with sized runs their size cell is empty.
    import pandas as pd
    from schedlab.campaigns import carried
    tail = get("demarchi-tail")
    requests = tail.requests("smoke", "gem5")
    unsized = [i for i, r in enumerate(requests) if "size" not in r.label]
    sized = [i for i, r in enumerate(requests) if "size" in r.label]
    assert unsized and sized
    rows = pd.DataFrame([{**requests[i].label, "run_id": f"r{i}"}
                         for i in (unsized[0], sized[0])])
    assert rows["size"].isna().sum() == 1
    assert carried.row_requests(rows, requests) == [requests[unsized[0]], requests[sized[0]]]
    where = carried.paths_for(tail, "smoke", "gem5", ("",), tmp_path)
    carried.save({"": rows}, where)
    assert carried.labelled(where[""], requests) == [i in (unsized[0], sized[0])
                                                     for i in range(len(requests))]


def test_runs_at_once_are_bounded_by_what_each_run_takes(monkeypatch, tmp_path):
    # A Hector gem5 run takes 7 to 8 GiB (its model's objects), a run of another machine
    # under 2: the default number of runs at once and a SLURM task's memory follow the
    # largest run of the campaign.
    from schedlab.campaigns import local
    job = (WorkloadRequest("memlat"),)
    mup, hector = (RunRequest(machine=m, backend="gem5", jobs=job)
                   for m in ("clovertown-e5320-mup", "hector"))
    qemu = RunRequest(machine="hector", backend="qemu", jobs=job)
    assert local.run_memory_gib([mup]) == 4.0 and local.run_memory_gib([qemu]) == 1.5
    assert local.run_memory_gib([mup, hector]) == 9.0
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 33554432 kB\nMemAvailable: 20971520 kB\n")   # 20 GiB free
    real_path = local.Path
    monkeypatch.setattr(local, "Path", lambda p: meminfo if p == "/proc/meminfo" else real_path(p))
    monkeypatch.setattr(local.os, "cpu_count", lambda: 16)
    assert local.default_jobs([mup]) == 5 and local.default_jobs([mup, hector]) == 2
    assert local.default_jobs([qemu]) == 13


def test_dry_run_names_background_programs_by_what_tells_them_apart():
    from schedlab.campaigns import reproduce as R
    examples = [line for line in R.describe(get("lee-fig17"), "smoke", "gem5")
                if line.startswith("  e.g.")]
    assert examples[0].endswith("libquantum beside memlat(region-size=2MiB) #1, "
                                "memlat(region-size=2MiB) #2, memlat(region-size=8KiB)")
