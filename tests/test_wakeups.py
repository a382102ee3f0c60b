"""Wake-up latencies from a real gem5 trace (schedlab.analysis.wakeups): study 2's mixer
under the default idle, where gem5 lost wake-ups of an idle CPU (tests/data/traces/README.md)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from schedlab.analysis import wakeups

TRACE = Path(__file__).resolve().parent / "data" / "traces" / "gem5-mixer-default-idle.txt.gz"
MIXER = set(range(76, 83))     # the run's tids.csv: wave0-3, mixer0-2


@pytest.fixture(scope="module")
def found():
    text = gzip.decompress(TRACE.read_bytes()).decode()
    assert wakeups.trace_lost_events(text) == 0
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
