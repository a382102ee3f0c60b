"""Turns and quanta read from real sched_switch traces (tests/data/traces/, from QEMU runs)."""

import shutil
from pathlib import Path

import pytest

from schedlab.analysis import slices
from schedlab.errors import UserError

TRACES = Path(__file__).parent / "data" / "traces"


def _switches(name: str) -> list[slices.Switch]:
    return slices.parse_switches((TRACES / name).read_text())


def test_every_switch_line_is_parsed():
    text = (TRACES / "qemu-rr-10ms.txt").read_text()
    assert len(_switches("qemu-rr-10ms.txt")) == text.count(": sched_switch: ")


def test_rr_tasks_sharing_cpu0_are_found_by_their_priority():
    switches = _switches("qemu-rr-10ms.txt")
    # gzip (74) started as a CFS task on CPU 1 and became SCHED_RR priority 1 on CPU 0,
    # beside the base vector (71); the kernel threads of CPU 0 are CFS tasks.
    assert slices.sharing_pids(switches, 74) == (0, {71, 74})


def test_rr_turns_alternate_and_are_never_shorter_than_the_quantum():
    switches = _switches("qemu-rr-10ms.txt")
    report = slices.quantum_report(switches, 0, {71, 74}, 10.0)
    assert report["alternating"] and report["tasks"] == [71, 74]
    assert report["full_turns"] == 14
    # A SCHED_RR timeslice is 10 ticks; on a loaded host a tick can come late, not early.
    assert min(report["lengths_ms"]) >= 9.0
    assert 9.0 <= report["median_ms"] <= 11.0
    turns = slices.turns(switches, 0, {71, 74})
    assert all(a.pid != b.pid for a, b in zip(turns, turns[1:]))


def test_the_turn_a_stopped_task_exits_in_is_no_quantum():
    switches = _switches("qemu-rr-10ms-runner-wakes.txt")
    turns = slices.turns(switches, 0, {51, 53})
    # gzip (53) exited in its last turn; the base vector (51) ran on until the runner
    # preempted it, so that turn is not the last of the trace.
    dying = [t for t in turns if t.exited]
    assert [t.pid for t in dying] == [53] and turns[-1].pid == 51 and turns[-2] == dying[0]
    report = slices.quantum_report(switches, 0, {51, 53}, 10.0, since_pid=53)
    assert report["full_turns"] == len(slices.shared_turns(switches, 0, {51, 53}, 53)) - 3
    assert min(report["lengths_ms"]) >= 9.0


def test_the_region_is_cut_where_the_launcher_marked_it(tmp_path):
    (tmp_path / "artifacts").mkdir()
    shutil.copyfile(TRACES / "qemu-rr-10ms-runner-wakes.txt",
                    tmp_path / "artifacts" / "trace.txt")
    begin, end = slices.roi_window(tmp_path, "gzip", 1)
    assert (begin, end) == (2.440401, 2.725247)
    assert slices.roi_window(tmp_path, "gzip", 2) is None
    inside = slices.within(slices.read_trace(tmp_path), (begin, end))
    assert inside and all(begin <= s.time_s <= end for s in inside)
    # A trace without the marks (made before the launcher wrote them): no window.
    shutil.copyfile(TRACES / "qemu-rr-10ms.txt", tmp_path / "artifacts" / "trace.txt")
    assert slices.roi_window(tmp_path, "gzip", 1) is None


def test_cfs_turns_overshoot_a_2ms_slice_to_the_next_tick():
    switches = _switches("qemu-cfs-2ms.txt")
    cpu, pids = slices.sharing_pids(switches, 75)
    assert cpu == 0 and 75 in pids
    report = slices.quantum_report(switches, 0, {75, *(p for p in pids if p != 75)}, 2.0)
    # Why study 1 runs its shared CPU as SCHED_RR: most CFS turns are 2 ms plus a tick.
    assert report["within"] < 0.5 and report["median_ms"] > 2.5


def test_preempted_slices_leave_out_sleeps_and_exits():
    switches = _switches("qemu-rr-10ms.txt")
    lengths = slices.preempted_slices(switches, 74)
    # gzip was preempted at the end of each of its turns but the last (it was stopped).
    assert len(lengths) == 7 and min(lengths) >= 9.0


def test_a_pid_that_never_ran_is_a_clear_error():
    with pytest.raises(UserError, match="pid 12345 never ran"):
        slices.sharing_pids(_switches("qemu-rr-10ms.txt"), 12345)


def test_missing_trace_names_the_policy_to_use(tmp_path):
    with pytest.raises(UserError, match="sched:sched_switch"):
        slices.read_trace(tmp_path)


def test_turns_before_the_benchmark_arrived_are_not_quanta():
    switches = _switches("qemu-rr-10ms.txt")
    # The base vector (71) ran alone for about 70 ms before gzip (74) started.
    assert slices.turns(switches, 0, {71, 74})[0].ms > 50
    shared = slices.shared_turns(switches, 0, {71, 74}, 74)
    assert shared[0].pid == 74
    report = slices.quantum_report(switches, 0, {71, 74}, 10.0, since_pid=74)
    assert report["full_turns"] == len(shared) - 2 and max(report["lengths_ms"]) < 50


def test_lost_events_are_written_minus_kept_over_every_header():
    header = "# entries-in-buffer/entries-written: {}/{}   #P:4\n"
    assert slices.trace_lost_events(header.format(1818, 1818)) == 0
    assert slices.trace_lost_events(header.format(100, 150) + "x\n"
                                    + header.format(10, 12)) == 52
    assert slices.trace_lost_events("no header\n") == 0
