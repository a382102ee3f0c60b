"""bench_fixed_cost's guest phases, on the committed records of real gem5 runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_fixed_cost as bf  # noqa: E402

RECORDS = json.loads((REPO / "bench" / "results" / "fixed-cost-vm-2026-11-26.json").read_text())


def _record(machine: str, commit: str) -> dict:
    return next(r for r in RECORDS if r["machine"] == machine and r["commit"] == commit)


def test_phases_follow_the_marks_a_run_has():
    # Older code has no `unpacked` or `spec` mark: its phases span them.
    before = bf.guest_phases(_record("hector", "6eebb64")["guest_uptime"])
    assert before == {"restored->begin": 1.39, "begin->job": 2.15, "job->jobs-done": 2.92,
                      "jobs-done->end": 1.07}
    after = bf.guest_phases(_record("hector", "d5488d2")["guest_uptime"])
    assert list(after) == ["restored->unpacked", "unpacked->begin", "begin->spec",
                           "spec->job", "job->jobs-done", "jobs-done->end"]
    assert after["restored->unpacked"] == 1.37 and after["spec->job"] == 0.63
    # The phases add up to the run's span from the restore to the end.
    up = _record("hector", "d5488d2")["guest_uptime"]
    span = float(up["uptime.end"]) - float(up["uptime.restored"])
    assert abs(sum(after.values()) - span) < 0.011


def test_phase_table_orders_columns_by_the_runner():
    table = bf.phase_table([_record("hector", "6eebb64"), _record("hector", "d5488d2")])
    header = table.splitlines()[0]
    # By where a phase starts, then where it ends: an older run's longer phases sit after
    # the newer run's finer ones that share their start.
    order = ["restored->unpacked", "restored->begin", "unpacked->begin", "begin->spec",
             "begin->job", "spec->job", "job->jobs-done", "jobs-done->end"]
    assert header == "| machine | commit | " + " | ".join(order) + " |"
    assert "| hector | 6eebb64 | - | 1.39 | - | - | 2.15 | - |" in table


LEE_RUNS = REPO / "tests" / "data" / "lee-gem5"


def test_host_seconds_at_a_tick_interpolates_between_gem5s_lines():
    info = json.loads((LEE_RUNS / "clovertown-x5365--memlat--4b5d3f80c724" / "gem5.json")
                      .read_text())
    points = sorted((p["tick"], p["host_s"]) for p in [*info["events"], *info["progress"]])
    (t0, h0), (t1, h1) = points[1], points[2]
    assert bf.host_seconds_at(info, t0) == h0
    assert abs(bf.host_seconds_at(info, (t0 + t1) // 2) - (h0 + h1) / 2) < 0.01


def test_a_stores_runs_split_into_set_up_warm_up_region_and_end(tmp_path):
    records = bf.from_store(LEE_RUNS)
    assert len(records) == 3      # the three gem5 runs of the fixture, not its README
    for r in records:
        assert r["warmup_guest_s"] in (0.12, 0.17), r
        # The warm-up is part of the Atomic span before the region, the set-up the rest.
        assert 0 < r["warmup_s"] < r["restored_to_workbegin_s"], r
        assert r["fixed_less_warmup_s"] == round(r["fixed_s"] - r["warmup_s"], 1)
    table = bf.store_table(records)
    assert "| clovertown-x5365 | memlat | o3 | 0.12 | - | 2 |" in table, table
    assert "| clovertown-x5365 | mediaserver | o3 | 0.17 | - | 1 |" in table, table


def test_a_directory_without_gem5_runs_is_refused_in_one_line(tmp_path):
    (tmp_path / "not-a-run").mkdir()
    try:
        bf.from_store(tmp_path)
    except SystemExit as e:
        assert "no finished gem5 runs" in str(e) and "\n" not in str(e)
    else:
        raise AssertionError("an empty results directory was accepted")


def test_the_process_besides_its_events_and_restore_is_its_own_phase():
    info = json.loads((LEE_RUNS / "clovertown-x5365--memlat--4b5d3f80c724" / "gem5.json")
                      .read_text())
    exit_at = next(e["host_s"] for e in info["events"] if e["event"] == "exit")
    phases = bf.split(info)
    assert phases["start_and_end_s"] == round(
        info["host_seconds"] - exit_at - phases["restore_s"], 1) > 0
    # The phases add up to the process.
    assert abs(phases["restore_s"] + phases["restored_to_workbegin_s"] + phases["roi_s"]
               + phases["workend_to_exit_s"] + phases["start_and_end_s"]
               - phases["gem5_process_s"]) < 0.3
    # Records made before the column existed show "-" in the store's table.
    records = bf.from_store(LEE_RUNS)
    for r in records:
        del r["start_and_end_s"]
    row = next(line for line in bf.store_table(records).splitlines()
               if "| mediaserver |" in line)
    assert row.split(" | ")[11] == "-", row


def test_a_campaign_request_is_named_by_experiment_and_index():
    request = bf.campaign_request("brecht-fig1:0")
    assert request.machine == "hector" and request.label["pool_size"] == 1
    for wrong in ("brecht-fig1:999", "brecht-fig1", "brecht-fig1:x"):
        try:
            bf.campaign_request(wrong)
        except bf.UserError as e:
            assert "NAME:K" in str(e) and "\n" not in str(e)
        else:
            raise AssertionError(f"{wrong} was accepted")


def test_the_set_up_alone_is_a_campaign_request_without_its_warm_up():
    request = bf.campaign_request("kazempour-expA:0")
    assert request.jobs[0].warmup > 0
    alone = bf.request_variant(request, None, 0.0)
    assert [j.warmup for j in alone.jobs] == [0.0] * len(request.jobs)
    assert alone.background == request.background and alone.label["bench_warmup"] == 0.0
    assert bf.request_variant(request, None, None) == request


def test_a_variant_without_a_request_is_refused_in_one_line(monkeypatch, capsys):
    for option in (["--warmup", "0"], ["--warm-caches", "0.01"]):
        monkeypatch.setattr(sys, "argv", ["bench_fixed_cost.py", *option])
        try:
            bf.main()
        except SystemExit as e:
            assert "--request EXPERIMENT:K" in str(e) and "\n" not in str(e)
        else:
            raise AssertionError(f"{option} without --request was accepted")
