"""The sampling validation benchmark's pure helpers (bench/bench_sampling.py): errors,
intervals, speed-ups and tables, on the records it wrote for real gem5 runs
(bench/results/sampling-vm-2026-11-23.json) and on results rows named as the runner names
them. No gem5 needed."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_sampling as bs  # noqa: E402

RECORDS = json.loads((REPO / "bench/results/sampling-vm-2026-11-23.json").read_text())["records"]
BY_CASE = {r["case"]: r for r in RECORDS}


def test_rel_error():
    assert bs.rel_error(1.03, 1.0) == pytest.approx(0.03)
    assert bs.rel_error(0.5, 1.0) == pytest.approx(-0.5)
    assert bs.rel_error(1.0, 0.0) is None          # no reference to be relative to
    assert bs.rel_error(None, 1.0) is None and bs.rel_error(1.0, None) is None
    assert bs.rel_error(math.nan, 1.0) is None


@pytest.mark.parametrize("record", RECORDS, ids=[r["case"] for r in RECORDS])
def test_errors_recomputed_from_the_stored_numbers(record):
    runs = {mode: run for mode, run in record["runs"].items() if "error" not in run}
    assert bs.compare(runs["full"], runs.get("sampled"), runs.get("misses")) == record["errors"]
    assert bs.speedups(runs) == pytest.approx(record["speedup"])
    for scope, per in record["errors"].items():
        full, sampled = runs["full"][scope], runs["sampled"][scope]
        for metric, e in per.items():
            assert e["sampled_err"] == pytest.approx(sampled[metric] / full[metric] - 1)
            if "in_ci" in e:
                assert e["in_ci"] == (abs(sampled[metric] - full[metric])
                                      <= sampled[metric + "_ci"])
            # No IPC from Atomic cores; no misses-only numbers where that run was not made.
            assert ("misses_err" in e) == (metric != "ipc" and "misses" in runs
                                           and metric in runs["misses"].get(scope, {}))


def test_memlat_mup_by_hand():
    """memlat alone on the MUP's O3 CPU 0: the sampled IPC 0.3 % low and inside its
    interval; the region's host seconds 62.1 full, 18.6 sampled."""
    r = BY_CASE["memlat-mup"]
    ipc = r["errors"]["whole"]["ipc"]
    assert ipc["sampled_err"] == pytest.approx(0.2007 / 0.2013 - 1, abs=5e-4)
    assert ipc["in_ci"]
    assert r["speedup"]["sampled_roi_host_s"] == pytest.approx(62.12 / 18.64)


def test_outside_the_interval_is_seen():
    full = {"whole": {"ipc": 1.0, "l1d_mpki": 10.0}}
    sampled = {"whole": {"ipc": 1.1, "ipc_ci": 0.05, "l1d_mpki": 10.2, "l1d_mpki_ci": 0.5}}
    errs = bs.compare(full, sampled, {"whole": {"ipc": 3.0, "l1d_mpki": 9.0}})["whole"]
    assert errs["ipc"] == {"sampled_err": pytest.approx(0.1), "in_ci": False}
    assert errs["l1d_mpki"] == {"sampled_err": pytest.approx(0.02), "in_ci": True,
                                "misses_err": pytest.approx(-0.1)}
    assert "outside" in bs._sampled_cell(sampled, "whole", "ipc", errs["ipc"])


def test_numbers_name_the_last_level_llc():
    """Full and misses-only runs name the task's last level ``llc`` and the machine's by
    the plan (``l2``); sampled runs name both by the plan, with MPI half-widths."""
    full_job = {"gem5": {"ipc": 0.3, "insts": 100.0, "sim_seconds": 0.01, "l1i_mpki": 1.0,
                         "l1d_mpki": 2.0, "l2_mpki": 0.5},
                "gem5_task": {"ipc": 0.2, "insts": 60.0, "l1i_mpki": 1.5, "l1d_mpki": 3.0,
                              "llc_mpki": 0.25}}
    n = bs.numbers(full_job, "l2")
    assert n["whole"] == {"ipc": 0.3, "l1i_mpki": 1.0, "l1d_mpki": 2.0, "llc_mpki": 0.5}
    assert n["task"] == {"ipc": 0.2, "l1i_mpki": 1.5, "l1d_mpki": 3.0, "llc_mpki": 0.25,
                         "insts": 60.0}
    sampled_job = {"gem5": {"ipc": 0.31, "ipc_ci": 0.02, "l2_mpki": 0.4,
                            "l2_mpi_ci": 0.0001, "l2_mpki_region": 0.45, "windows": 12},
                   "gem5_task": {"ipc": 0.21, "ipc_ci": 0.01, "l2_mpki": 0.3,
                                 "l2_mpi_ci": 0.0002, "insts": 7.0, "windows": 11}}
    n = bs.numbers(sampled_job, "l2")
    assert n["whole"] == {"ipc": 0.31, "ipc_ci": 0.02, "llc_mpki": 0.4,
                          "llc_mpki_ci": pytest.approx(0.1)}
    assert n["whole_region"] == {"llc_mpki": 0.45} and n["windows"] == 12
    assert n["task"]["llc_mpki_ci"] == pytest.approx(0.2) and n["task"]["windows"] == 11


def test_tables_have_a_row_per_case_and_scope():
    text = bs.accuracy_table(RECORDS)
    rows = [line for line in text.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == sum(len(r["errors"]) for r in RECORDS)
    assert "| memlat-mup | busiest CPU / machine | 20 | 0.2013 | 0.2007 ± 0.025 (-0.3 %) |" \
        in text
    assert len(bs.cost_table(RECORDS).splitlines()) == 2 + len(RECORDS)
    counted = [e for r in RECORDS for per in r["errors"].values() for e in per.values()]
    assert (f"within 3 % of the full run: "
            f"{sum(abs(e['sampled_err']) <= 0.03 for e in counted)} of {len(counted)}"
            in bs.summary(RECORDS))


def test_merged_keeps_other_cases(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"records": [{"case": "memlat-mup", "old": 1},
                                            {"case": "zz-gone", "old": 1}]}))
    out = bs.merged(path, [{"case": "memlat-mup", "old": 0}, {"case": "dijkstra-mup"}])
    assert [r["case"] for r in out] == ["memlat-mup", "dijkstra-mup", "zz-gone"]
    assert out[0]["old"] == 0


def test_every_case_is_a_runnable_request():
    for name, case in bs.CASES.items():
        full, sampled, misses = (bs.request(case, m) for m in bs.MODES)
        assert sampled.sampling == case.sampling and full.sampling is None
        assert misses.cpu == "atomic" and full.cpu == case.cpu
        assert full.attribute_tasks == (case.corunner is not None)
        assert (full.jobs[0].duration is None) == (case.corunner is None), name


def test_primary_misses_leave_out_mshr_hits():
    """dijkstra on O3: of the L1 D's demand misses most merged into an MSHR waiting for
    the line (demandMshrHits); the misses-only run's L1 D misses are within a few per cent
    of the rest."""
    dump = {"board.cache_hierarchy.l1d_0.demandMshrHits::total": 300.0,
            "board.cache_hierarchy.l1d_1.demandMshrHits::total": 100.0,
            "board.cache_hierarchy.l2_0.demandMshrHits::total": 5.0,
            "board.cache_hierarchy.l1i_0.demandMisses::total": 7.0}
    whole = {"ipc": 1.0, "l1i_mpki": 2.0, "l1d_mpki": 50.0, "llc_mpki": 1.0}
    assert bs.primary_mpki(dump, whole, 10_000.0, "l2") == pytest.approx(
        {"l1i_mpki": 2.0, "l1d_mpki": 10.0, "llc_mpki": 0.5})
    d = BY_CASE["dijkstra-mup"]["errors"]["whole"]["l1d_mpki"]
    assert d["misses_err"] < -0.5 and abs(d["misses_primary_err"]) < 0.05
