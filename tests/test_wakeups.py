"""Wake-up latencies from a real gem5 trace (schedlab.analysis.wakeups): study 2's mixer
under the default idle, where gem5 lost wake-ups of an idle CPU (tests/data/traces/README.md)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from schedlab.analysis import slices, wakeups

TRACE = Path(__file__).resolve().parent / "data" / "traces" / "gem5-mixer-default-idle.txt.gz"
MIXER = set(range(76, 83))     # the run's tids.csv: wave0-3, mixer0-2


@pytest.fixture(scope="module")
def found():
    text = gzip.decompress(TRACE.read_bytes()).decode()
    assert slices.trace_lost_events(text) == 0
    return wakeups.wakeups(text, MIXER)


def test_the_lost_wake_up_is_found_on_the_cpu_it_was_placed_on(found):
    # Placed on idle CPU 1 by the waker on CPU 2 (its sched_migrate_task), switched in on
    # CPU 0 after a load balancer moved it there 796 ms later.
    w = next(w for w in found if w.pid == 77 and w.waking_s == pytest.approx(0.587951))
    assert (w.target, w.cpu, w.onto_idle, w.late) == (1, 0, True, True)
    assert w.latency_us == pytest.approx(796_182, abs=1)


def test_prompt_wake_ups_take_microseconds(found):
    onto_idle = [w for w in found if w.onto_idle]
    prompt = sorted(w.latency_us for w in onto_idle if not w.late)
    assert len(prompt) > 100 and prompt[len(prompt) // 2] < 20
    assert all(w.latency_us >= 0 for w in found)
    # Every wake-up is of one of the mixer's tasks, each matched to one switch-in.
    assert {w.pid for w in found} == MIXER


def test_summary_counts_the_late_ones_and_what_they_added(found):
    s = wakeups.summary(found)
    late = [w for w in found if w.late]
    assert s["late"] == len(late) > 0 and s["onto_idle"] >= s["late"]
    assert s["late_added_ms"] == pytest.approx(
        sum(w.latency_us - s["prompt_median_us"] for w in late) / 1e3)
    assert s["max_us"] == pytest.approx(max(w.latency_us for w in found))
    assert s["late_added_ms"] > 1000     # over a second of the run was waiting for them


@pytest.fixture(scope="module")
def text():
    return gzip.decompress(TRACE.read_bytes()).decode()


def test_migrations_are_the_kernel_s_moves_of_each_task(text):
    # Oracle: the trace's sched_migrate_task lines read field by field.
    want = dict.fromkeys(MIXER, 0)
    for line in text.splitlines():
        if "sched_migrate_task:" in line:
            fields = dict(f.split("=", 1) for f in line.split("sched_migrate_task:")[1].split()
                          if "=" in f)
            if int(fields["pid"]) in want and fields["orig_cpu"] != fields["dest_cpu"]:
                want[int(fields["pid"])] += 1
    got = wakeups.migrations(text, MIXER)
    assert got == want and sum(got.values()) > 0


def test_turns_run_from_a_switch_in_to_the_switch_out_on_that_cpu(text):
    from schedlab.analysis.demarchi import _turns
    tids = {f"task{pid}": pid for pid in MIXER}
    turns = _turns(text, tids)
    assert len(turns) > 100 and {t.pid for t in turns} == MIXER
    switch_in, switch_out = set(), set()
    for line in text.splitlines():
        if "sched_switch:" not in line:
            continue
        cpu = int(line.split("[", 1)[1].split("]", 1)[0])
        time = round(float(line.split(": sched_switch:")[0].split()[-1]), 6)
        prev = int(line.split("prev_pid=")[1].split()[0])
        nxt = int(line.split("next_pid=")[1].split()[0])
        switch_out.add((cpu, prev, time))
        switch_in.add((cpu, nxt, time))
    for t in turns:
        assert t.end_s > t.start_s
        assert (t.cpu, t.pid, round(t.start_s, 6)) in switch_in
        assert (t.cpu, t.pid, round(t.end_s, 6)) in switch_out
    # A CPU runs one task at a time.
    for cpu in {t.cpu for t in turns}:
        mine = [t for t in turns if t.cpu == cpu]
        assert all(a.end_s <= b.start_s for a, b in zip(mine, mine[1:]))


def test_a_wake_up_queued_behind_another_task_is_slow_not_late():
    text = (TRACE.parent / "gem5-mixer-poll-queued.txt").read_text()
    found = wakeups.wakeups(text, set(range(78, 85)))
    w = next(w for w in found if w.pid == 81 and w.waking_s == pytest.approx(0.453912))
    assert (w.target, w.cpu, w.onto_idle) == (0, 0, True)
    assert w.latency_us == pytest.approx(223, abs=1) and w.idle_exit_us == pytest.approx(3)
    assert not w.late
    s = wakeups.summary(found)
    assert s["late"] == 0 and s["slow"] >= 1


SWITCH = TRACE.parent / "gem5-mediaserver-switch.txt"


def test_a_job_s_wake_ups_are_its_threads_in_its_roi():
    """The media server's worker, woken onto CPU 0 that slept in MWAIT across the switch
    to the O3 cores (tests/data/traces/README.md): late; its later wake-ups are prompt."""
    text = SWITCH.read_text()
    roi = (0.572266, 0.634059)
    found = wakeups.of_job(text, "mediaserver", roi)
    assert found and {w.pid for w in found} == {67, 68}
    assert all(roi[0] <= w.waking_s <= roi[1] for w in found)
    late = [w for w in found if w.late]
    assert [(w.pid, w.target) for w in late] == [(68, 0)]
    assert late[0].waking_s == pytest.approx(0.572390)
    assert late[0].latency_us == pytest.approx(869, abs=1)
    assert max(w.latency_us for w in found if not w.late) < 10
    # The trace holds the same threads' wake-ups before the ROI too (the Atomic cores).
    before = wakeups.of_job(text, "mediaserver", (0.5710, roi[0]))
    assert before and all(w.waking_s < roi[0] for w in before)
    assert wakeups.of_job(text, "omnetpp", roi) == []


def test_columns_are_the_summary_as_wake_columns():
    found = wakeups.of_job(SWITCH.read_text(), "mediaserver", (0.572266, 0.634059))
    cols = wakeups.columns(found)
    assert cols["wake_late"] == 1 and cols["wake_max_us"] == pytest.approx(869, abs=1)
    assert set(cols) == {f"wake_{k}" for k in wakeups.summary(found)}
