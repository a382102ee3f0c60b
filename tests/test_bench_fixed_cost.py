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
