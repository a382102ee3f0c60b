"""Estimates from sampled windows (schedlab.backends.gem5.sampling_stats), on made-up
windows whose answers are worked out by hand and on a real sampling.json written by gem5
(tests/data/gem5/sampling-*.json, provenance in tests/data/gem5/README.md); and what a
sampled run's results get (schedlab.runs), and when sampling is refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from schedlab.backends.gem5.sampling import MIN_STOP, MIN_WINDOWS, SamplingPlan
from schedlab.backends.gem5.sampling_stats import (estimates, mean_ci, ratio_ci,
                                                   region_estimates, results_metrics,
                                                   t_quantile)
from schedlab.errors import UserError
from schedlab.machine import load_machine
from schedlab.backends.gem5.backend import check_sampling, sampled_rows, sampling_plan
from schedlab.runs import RunRequest, WorkloadRequest

DATA = Path(__file__).parent / "data" / "gem5"


@pytest.mark.parametrize("p,df,table", [
    (0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 3, 3.182), (0.975, 9, 2.262),
    (0.975, 19, 2.093), (0.975, 30, 2.042), (0.995, 9, 3.250), (0.995, 30, 2.750)])
def test_t_quantile_matches_the_tables(p, df, table):
    assert t_quantile(p, df) == pytest.approx(table, rel=1.2e-3)


def test_mean_ci_by_hand():
    # 4, 6, 8: mean 6, s = 2, half-width t(0.975, 2) * 2 / sqrt(3).
    mean, half = mean_ci([4.0, 6.0, 8.0])
    assert mean == 6.0
    assert half == pytest.approx(4.302653 * 2 / math.sqrt(3), rel=1e-6)
    assert math.isnan(mean_ci([5.0])[1]) and math.isnan(mean_ci([])[0])


def test_ratio_ci_by_hand():
    # Misses 1, 3, 2 in windows of 100, 100, 200 instructions: R = 6 / 400; residuals
    # 1 - 1.5, 3 - 1.5, 2 - 3 -> 0.25 + 2.25 + 1 = 3.5; s^2 = 3.5 / 2; SE = sqrt(s^2 / 3)
    # / (400 / 3).
    r, half = ratio_ci([1.0, 3.0, 2.0], [100.0, 100.0, 200.0])
    assert r == 6 / 400
    se = math.sqrt(3.5 / 2 / 3) / (400 / 3)
    assert half == pytest.approx(t_quantile(0.975, 2) * se, rel=1e-12)
    assert math.isnan(ratio_ci([1.0], [0.0])[0])


def _window(insts, cycles, l1d=0.0, llc=0.0):
    return {"insts": insts, "cycles": cycles, "l1d_misses": l1d, "l1i_misses": 0.0,
            "llc_misses": llc}


def test_estimates_of_identical_windows_have_no_spread():
    e = estimates([_window(1000, 2500, 10, 1)] * 12, llc="l2")
    assert e["windows"] == 12 and e["insts"] == 12000
    assert e["cpi"] == 2.5 and e["cpi_ci"] == 0 and e["ipc"] == 0.4 and e["ipc_ci"] == 0
    assert e["l1d_mpi"] == 0.01 and e["l1d_mpki"] == 10 and e["l2_mpi"] == 0.001
    assert "llc_mpi" not in e


def test_estimates_leave_out_windows_without_instructions():
    e = estimates([_window(1000, 2000), _window(0, 0), _window(1000, 4000)])
    assert e["windows"] == 2
    assert e["cpi"] == 3.0                        # mean of 2 and 4
    assert e["ipc"] == 2000 / 6000                # the ratio estimator
    assert e["cpi_ci"] == pytest.approx(t_quantile(0.975, 1) * math.sqrt(2) / math.sqrt(2))


def _region(windows):
    return {"insts": 1_000_000, "cut_short": None, "rounds": 5, "stale_stops": 1,
            "switches": 4, "switch_host_s": 0.1, "detailed_host_s": 1.0, "host_s": 3.0,
            "windows": windows}


def test_region_estimates_per_cpu_machine_and_task():
    windows = [{"cpus": {"0": _window(900, 1800, 9, 1), "1": _window(100, 400, 5, 1)},
                "tasks": {"7": _window(900, 1800, 9, 1), "0": _window(100, 400, 5, 1)}}
               for _ in range(10)]
    s = region_estimates(_region(windows), llc="l2")
    assert s["busiest"] == "0" and s["windows"] == 10
    assert s["measured_share"] == 10 * 1000 / 1_000_000
    assert s["cpus"]["0"]["cpi"] == 2.0 and s["cpus"]["1"]["cpi"] == 4.0
    # The machine: both CPUs' counters summed per window.
    assert s["machine"]["l1d_mpi"] == 14 / 1000 and s["machine"]["l2_mpi"] == 2 / 1000
    assert s["tasks"]["7"]["ipc"] == 0.5 and s["tasks"]["0"]["l1d_mpi"] == 0.05
    flat = results_metrics(s)
    assert flat["ipc"] == 0.5 and flat["l1d_mpki"] == 14 and flat["windows"] == 10
    assert flat["sampled"] == 1 and all(not isinstance(v, dict) for v in flat.values())


# --------------------------------------------------------------- a real sampling.json
# memlat (pid 56, pinned to CPU 0) beside bv_0 (pid 54) on clovertown-e5320-mup, O3 cores,
# --sampling smarts-dense --attribute-tasks (tests/data/gem5/README.md). The same run
# without sampling gave (its results.json): memlat's IPC 0.2025 and bv_0's 0.7835 (their
# attributed cycles and instructions), CPU 0's IPC 0.2949, the machine's L1 D MPKI 119.34.
FIXTURE = DATA / "sampling-clovertown-e5320-mup-memlat-bv0-o3.json"
MEMLAT, BV0 = "56", "54"
FULL = {"memlat_ipc": 0.2025, "bv0_ipc": 0.7835, "cpu0_ipc": 0.2949, "l1d_mpki": 119.34}


def test_real_sampling_json_windows():
    data = json.loads(FIXTURE.read_text())
    assert data["plan"]["period"] == 250_000 and data["llc"] == "l2" and data["cpus"] == 2
    [region] = data["regions"]
    windows = region["windows"]
    assert len(windows) == 34 and region["cut_short"] is None
    assert region["switches"] == 68              # in and out for each window
    for w in windows:
        # Each window measured 10 000 instructions of both CPUs together, a few short (the
        # schedule ends a phase when fewer are left than a shortest stop per CPU).
        total = sum(c["insts"] for c in w["cpus"].values())
        assert 10_000 - 2 * MIN_STOP <= total <= 10_000
        # The tasks' shares add up to the CPUs' (each settled at the CPU's next switch).
        for key in ("insts", "cycles", "l1d_misses", "llc_misses"):
            assert (sum(t[key] for t in w["tasks"].values())
                    == sum(c[key] for c in w["cpus"].values()))


def test_real_sampling_json_estimates_hold_the_full_runs_numbers():
    data = json.loads(FIXTURE.read_text())
    [region] = data["regions"]
    s = region_estimates(region, data["llc"])
    # CPU 0 ran in 33 windows (memlat or bv_0), CPU 1 in 2: CPU 0 is the busiest.
    assert s["busiest"] == "0" and s["cpus"]["0"]["windows"] == 33
    cpu0 = [w["cpus"]["0"] for w in region["windows"] if w["cpus"]["0"]["insts"] > 0]
    assert s["cpus"]["0"]["ipc"] == (sum(c["insts"] for c in cpu0)
                                     / sum(c["cycles"] for c in cpu0))
    assert s["tasks"][MEMLAT]["windows"] == 19 and s["tasks"][BV0]["windows"] == 14
    # The detailed run's numbers lie inside the sampled 95 % intervals.
    checks = {"memlat_ipc": s["tasks"][MEMLAT], "bv0_ipc": s["tasks"][BV0],
              "cpu0_ipc": s["cpus"]["0"]}
    for name, est in checks.items():
        assert abs(est["ipc"] - FULL[name]) <= est["ipc_ci"], name
    machine = s["machine"]
    assert abs(machine["l1d_mpki"] - FULL["l1d_mpki"]) <= 1000 * machine["l1d_mpi_ci"]
    # memlat alone on CPU 0 is the slow pointer chase; bv_0 runs at about 0.78.
    assert s["tasks"][MEMLAT]["cpi"] == pytest.approx(5.05, abs=0.01)
    assert s["tasks"][BV0]["ipc"] == pytest.approx(0.78, abs=0.01)


# ------------------------------------------------------------------ the run's results
def _rows(n, pid=7):
    return [{"job": "memlat", "rep": i + 1, "pid": pid,
             "gem5": {"sim_seconds": 0.01, "ipc": 0.9, "insts": 5000.0,
                      "l1d_misses": 2000.0, "l1d_mpki": 400.0}} for i in range(n)]


def test_sampled_rows_replace_the_region_numbers():
    windows = [{"cpus": {"0": _window(1000, 2000, 3, 1)}, "tasks": {"7": _window(1000, 2000)}}
               for _ in range(MIN_WINDOWS)]
    sampling = {"plan": {"period": 100_000}, "llc": "l2", "regions": [_region(windows)]}
    rows = _rows(1)
    assert sampled_rows(rows, sampling) == []
    g = rows[0]["gem5"]
    # The dump's detailed-core IPC and its per-detailed-instruction MPKI are gone; the
    # whole region's misses per instruction of every core are kept apart.
    assert g["ipc"] == 0.5 and g["cpi"] == 2.0 and g["l1d_mpki"] == 3.0
    assert g["insts"] == 1_000_000 and g["l1d_mpki_region"] == 2.0
    assert g["sim_seconds"] == 0.01 and g["windows"] == MIN_WINDOWS
    assert rows[0]["gem5_task"]["ipc"] == 0.5
    assert rows[0]["gem5_sampling"]["cost"]["switches"] == 4


def test_too_few_windows_make_the_run_not_ok():
    windows = [{"cpus": {"0": _window(1000, 2000)}}] * (MIN_WINDOWS - 1)
    sampling = {"plan": {"period": 100_000}, "regions": [_region(windows)] * 2}
    problems = sampled_rows(_rows(3), sampling)
    assert problems[0] == "gem5 sampled 2 regions for 3 job results"
    assert problems[1].startswith("memlat rep 1: its region of 1000000 instructions held 9 "
                                  "sampled windows at a period of 100000, fewer than 10")
    assert len(problems) == 3


def test_sampling_is_refused_where_it_cannot_hold():
    def request(**kw):
        base = dict(machine="clovertown-e5320-mup", backend="gem5",
                    jobs=(WorkloadRequest("memlat"),), sampling="smarts-dense")
        return RunRequest(**{**base, **kw})
    with pytest.raises(UserError, match="needs the gem5 backend"):
        sampling_plan(request(backend="qemu"))
    with pytest.raises(UserError, match="misses-only mode"):
        sampling_plan(request(cpu="atomic"))
    with pytest.raises(UserError, match="must exceed warmup"):
        sampling_plan(request(sampling="1000,900,100"))
    assert sampling_plan(request(sampling=None)) is None
    machine = load_machine("clovertown-e5320-mup")
    # memlat's smoke region is about 4.3 M instructions (cachegrind): room for 17 windows
    # of smarts-dense (250 k), 4 of smarts-default (1 M).
    assert check_sampling(request(), machine) == SamplingPlan(250_000, 10_000, 10_000)
    with pytest.raises(UserError) as e:
        check_sampling(request(sampling="smarts-default"), machine)
    # The bound is the measured count (committed cachegrind characterisation) over 10 windows.
    from schedlab.guest.work import region_instructions
    insts = region_instructions(WorkloadRequest("memlat"), machine.clock_hz, 1)
    assert 4.2e6 < insts < 4.4e6
    assert str(e.value) == (
        "--sampling 1000000,20000,10000: memlat (smoke) has about 4.3 M instructions per "
        f"region, room for 4 windows, not 10: give a period of at most {int(insts // 10)} "
        "(e.g. smarts-dense) or run it without sampling")
    # A program with no measured count, bounded by a duration: its cycles at IPC 1 on
    # the busy CPU (10 ms at 1.86 GHz: 18.6 M instructions).
    long = request(sampling="smarts-default",
                   jobs=(WorkloadRequest("./prog.c", duration=0.01),))
    assert check_sampling(long, machine) == SamplingPlan(1_000_000, 20_000, 10_000)
