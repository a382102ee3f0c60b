"""Wake-up latencies as the guest kernel traced them: from a task's ``sched_waking`` (the
waker starts to wake it) to the ``sched_switch`` that puts it on a CPU.

Why: gem5 can miss an idle CPU's wake-up (configs/README.md, "Periodic tick"). Linux's MWAIT
idle arms MONITOR on its thread flags and sleeps; a waker that sets the flag between the
MONITOR and the MWAIT is not seen, and the sleeper only wakes at its next interrupt, the
1 ms tick. On a real CPU that wake-up takes a microsecond or two. A task woken onto an
idle CPU therefore either starts within microseconds or waits up to a jiffy; study 2 counts
the late ones and what they add to the mixer's production times.

``sched_waking`` is traced on the waker's CPU before the target is chosen, so the latency
holds whichever way the wake-up travels (a remote wake list, an IPI, a polling flag); the
target is the CPU the task was next switched in on, and the wake-up counts as one onto an
idle CPU when that CPU was running the idle task at the moment of the waking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedlab.analysis.slices import Switch, parse_switches

# "  mixer-81  [002] d..2.  2.032023: sched_waking: comm=wave1 pid=83 prio=49 target_cpu=001"
_WAKING = re.compile(r"\[(?P<cpu>\d+)\]\s+\S+\s+(?P<time>\d+\.\d+): sched_waking: "
                     r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) prio=-?\d+ target_cpu=\d+")
# "# entries-in-buffer/entries-written: 138/138   #P:2"
_ENTRIES = re.compile(r"entries-in-buffer/entries-written: (\d+)/(\d+)")
# A wake-up onto an idle CPU later than this waited for something else than the CPU's own
# exit from idle (microseconds on the modelled cores): on gem5, a missed MWAIT wake-up.
LATE_US = 100.0


@dataclass(frozen=True)
class Wakeup:
    pid: int
    comm: str
    waking_s: float
    cpu: int            # the CPU the task was switched in on
    latency_us: float
    onto_idle: bool     # that CPU ran the idle task when the waking began

    @property
    def late(self) -> bool:
        return self.onto_idle and self.latency_us > LATE_US


def trace_lost_events(text: str) -> int:
    """Events the ring buffer dropped (written minus kept, from the trace header): a
    latency computed across a gap would be wrong."""
    m = _ENTRIES.search(text)
    return int(m[2]) - int(m[1]) if m else 0


def wakeups(text: str, pids: set[int] | None = None) -> list[Wakeup]:
    """Every wake-up of ``pids`` (all tasks if None) that was followed by a switch-in."""
    switches = parse_switches(text)
    wakings = []
    for line in text.splitlines():
        m = _WAKING.search(line)
        if m and (pids is None or int(m["pid"]) in pids):
            wakings.append((float(m["time"]), int(m["pid"]), m["comm"]))
    return _match(wakings, switches)


def _match(wakings: list[tuple[float, int, str]], switches: list[Switch]) -> list[Wakeup]:
    """Pair each waking with the task's next switch-in, in one pass over time."""
    events = sorted([(t, 0, pid, comm) for t, pid, comm in wakings]
                    + [(s.time_s, 1, i, "") for i, s in enumerate(switches)])
    running: dict[int, int] = {}           # cpu -> pid on it, as far as the trace says
    pending: dict[int, tuple[float, str, set[int]]] = {}   # pid -> (waking, comm, idle cpus)
    out = []
    for time_s, kind, ref, comm in events:
        if kind == 0:
            idle = {cpu for cpu, pid in running.items() if pid == 0}
            pending.setdefault(ref, (time_s, comm, idle))   # a second waking is a no-op
            continue
        s = switches[ref]
        running[s.cpu] = s.next_pid
        woken = pending.pop(s.next_pid, None)
        if woken is not None:
            start, name, idle = woken
            out.append(Wakeup(s.next_pid, name, start, s.cpu, (s.time_s - start) * 1e6,
                              s.cpu in idle))
    return out


def summary(found: list[Wakeup]) -> dict:
    """Counts and latencies of the wake-ups onto idle CPUs: how many were late (> LATE_US)
    and the time they added beyond the median prompt wake-up."""
    idle = [w for w in found if w.onto_idle]
    prompt = sorted(w.latency_us for w in idle if not w.late)
    late = [w.latency_us for w in idle if w.late]
    typical = prompt[len(prompt) // 2] if prompt else 0.0
    return {"wakeups": len(found), "onto_idle": len(idle), "late": len(late),
            "late_share": len(late) / len(idle) if idle else 0.0,
            "prompt_median_us": typical,
            "late_added_ms": sum(x - typical for x in late) / 1e3,
            "late_max_us": max(late, default=0.0)}
