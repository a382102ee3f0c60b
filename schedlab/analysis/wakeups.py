"""Wake-up latencies as the guest kernel traced them: from a task's ``sched_waking`` (the
waker starts to wake it) to the ``sched_switch`` that puts it on a CPU.

Why: gem5 can miss an idle CPU's wake-up (configs/README.md, "Periodic tick"). Linux's MWAIT
idle arms MONITOR on its thread flags and sleeps; a waker that sets the flag between the
MONITOR and the MWAIT is not seen, and the sleeper only wakes at its next interrupt, the
1 ms tick. On a real CPU that wake-up takes a microsecond or two. A task woken onto an
idle CPU therefore either starts within microseconds or waits up to a jiffy; study 2 counts
the late ones and what they add to the mixer's production times.

``sched_waking`` is traced on the waker's CPU before the target is chosen, so the latency
holds whichever way the wake-up travels (a remote wake list, an IPI, a polling flag). The
target is the CPU the wake-up placed the task on: the ``sched_migrate_task`` the waker's CPU
traces while placing it, or, without one, the CPU the task last ran on (``target_cpu``). The
wake-up counts as one onto an idle CPU when the target ran the idle task at the waking; a
task that waited there so long that a load balancer moved it elsewhere still counts, with
its latency up to the switch-in wherever it happened.

It is late when the target stayed idle for more than ``LATE_US`` after the waking (its next
``sched_switch``, to whatever task, came that much later): the CPU did not notice. A task
that waited because another one woken onto the same CPU at the same moment ran first was
not waiting for the CPU's exit from idle; it shows in the slow wake-ups, not the late ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedlab.analysis.slices import parse_switches

# "  mixer-81  [002] d..2.  2.032023: sched_waking: comm=wave1 pid=83 prio=49 target_cpu=001"
_WAKING = re.compile(r"\[(?P<cpu>\d+)\]\s+\S+\s+(?P<time>\d+\.\d+): sched_waking: "
                     r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) prio=-?\d+ target_cpu=(?P<target>\d+)")
# "  mixer-80  [002] d....  0.587952: sched_migrate_task: comm=mixer pid=77 prio=49
#    orig_cpu=0 dest_cpu=1"
_MIGRATE = re.compile(r"\[(?P<cpu>\d+)\]\s+\S+\s+(?P<time>\d+\.\d+): sched_migrate_task: "
                      r"comm=.*? pid=(?P<pid>\d+) prio=-?\d+ orig_cpu=\d+ "
                      r"dest_cpu=(?P<dest>\d+)")
# A wake-up onto an idle CPU later than this waited for something else than the CPU's own
# exit from idle (microseconds on the modelled cores): on gem5, a missed MWAIT wake-up.
LATE_US = 100.0


@dataclass(frozen=True)
class Wakeup:
    pid: int
    comm: str
    waking_s: float
    target: int         # the CPU the wake-up placed the task on
    cpu: int            # the CPU the task was switched in on
    latency_us: float
    onto_idle: bool     # the target ran the idle task when the waking began
    idle_exit_us: float  # from the waking to the target's next switch, to whatever task

    @property
    def late(self) -> bool:
        return self.onto_idle and self.idle_exit_us > LATE_US


def migrations(text: str, pids: set[int]) -> dict[int, int]:
    """How often the kernel moved each of ``pids`` to another CPU (``sched_migrate_task``:
    wake-up placements and load balancing alike)."""
    out = dict.fromkeys(pids, 0)
    for m in _MIGRATE.finditer(text):
        if int(m["pid"]) in out:
            out[int(m["pid"])] += 1
    return out


def wakeups(text: str, pids: set[int] | None = None) -> list[Wakeup]:
    """Every wake-up of ``pids`` (all tasks if None) that was followed by a switch-in."""
    wanted = (lambda pid: True) if pids is None else pids.__contains__
    events: list[tuple] = []   # (time, order, kind, fields): wakings first at equal times
    for line in text.splitlines():
        if m := _WAKING.search(line):
            if wanted(int(m["pid"])):
                events.append((float(m["time"]), 0, "waking", int(m["pid"]), m["comm"],
                               int(m["cpu"]), int(m["target"])))
        elif m := _MIGRATE.search(line):
            if wanted(int(m["pid"])):
                events.append((float(m["time"]), 1, "migrate", int(m["pid"]), int(m["cpu"]),
                               int(m["dest"])))
    events += [(s.time_s, 2, "switch", s) for s in parse_switches(text)]
    return _match(sorted(events, key=lambda e: (e[0], e[1])))


def of_job(text: str, comm: str, window: tuple[float, float]) -> list[Wakeup]:
    """The wake-ups of a job's threads, named by the job's command (as the kernel truncates
    it, to 15 characters), that began inside ``window`` (trace seconds): its ROI."""
    name = comm[:15]
    return [w for w in wakeups(text) if w.comm == name and window[0] <= w.waking_s <= window[1]]


@dataclass
class _Pending:
    waking_s: float
    comm: str
    waker: int
    target: int
    placed: bool
    idle: set[int]
    switched: dict[int, float]   # cpu -> its first switch after the waking


def _match(events: list[tuple]) -> list[Wakeup]:
    """Pair each waking with the task's next switch-in, in one pass over time."""
    running: dict[int, int] = {}           # cpu -> pid on it, as far as the trace says
    pending: dict[int, _Pending] = {}
    out = []
    for event in events:
        kind = event[2]
        if kind == "waking":
            time_s, _, _, pid, comm, waker, last_cpu = event
            if pid not in pending:              # a second waking of a waking task is a no-op
                idle = {cpu for cpu, p in running.items() if p == 0}
                pending[pid] = _Pending(time_s, comm, waker, last_cpu, False, idle, {})
        elif kind == "migrate":
            _, _, _, pid, cpu, dest = event
            w = pending.get(pid)
            if w is not None and not w.placed and cpu == w.waker:
                w.target, w.placed = dest, True   # select_task_rq's choice, on the waker
        else:
            s = event[3]
            running[s.cpu] = s.next_pid
            for waiting in pending.values():
                waiting.switched.setdefault(s.cpu, s.time_s)
            w = pending.pop(s.next_pid, None)
            if w is not None:
                exit_s = w.switched.get(w.target, s.time_s)
                out.append(Wakeup(s.next_pid, w.comm, w.waking_s, w.target, s.cpu,
                                  (s.time_s - w.waking_s) * 1e6, w.target in w.idle,
                                  (exit_s - w.waking_s) * 1e6))
    return out


def summary(found: list[Wakeup]) -> dict:
    """Counts and latencies: of the wake-ups onto idle CPUs, how many were late (more than
    LATE_US) and the time they added beyond the median prompt one; of all wake-ups, how
    many took longer than LATE_US whatever their target was doing (a task may also wait
    behind another of its priority) and the longest."""
    idle = [w for w in found if w.onto_idle]
    prompt = sorted(w.latency_us for w in idle if not w.late)
    late = [w.latency_us for w in idle if w.late]
    typical = prompt[len(prompt) // 2] if prompt else 0.0
    return {"wakeups": len(found), "onto_idle": len(idle), "late": len(late),
            "late_share": len(late) / len(idle) if idle else 0.0,
            "prompt_median_us": typical,
            "late_added_ms": sum(x - typical for x in late) / 1e3,
            "slow": sum(w.latency_us > LATE_US for w in found),
            "max_us": max((w.latency_us for w in found), default=0.0)}


def columns(found: list[Wakeup]) -> dict:
    """summary() as a run table's ``wake_*`` columns."""
    return {f"wake_{k}": v for k, v in summary(found).items()}
