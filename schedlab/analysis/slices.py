"""Scheduling quanta as the guest kernel actually gave them, read from its sched_switch trace.

Study 1 interleaves a benchmark and a base vector on one CPU with a quantum Q; the figures
are only about Q if the two tasks really took turns of Q. This module turns the ftrace text
of ``sched:sched_switch`` (a run's ``artifacts/trace.txt``) into *turns*: on one CPU, a turn
of a tracked task starts when it is switched in after another tracked task and lasts until
the next tracked task is switched in. Short interruptions by untracked tasks (a kworker, an
interrupt thread) stay inside the turn, since the other tracked task still waited for them.
The first and last turn of the trace are partial (a task started or was stopped mid-quantum),
and so is a turn in which its task exited (a stopped workload dies in its next turn, which
the runner's own wake-up may leave short of the trace's end); all are left out of the
distribution.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from schedlab.errors import UserError

# "  gzip-75  [000] d..2.  2.032023: sched_switch: prev_comm=gzip prev_pid=75 prev_prio=120
#    prev_state=R ==> next_comm=bv_l1i next_pid=72 next_prio=120"
_SWITCH = re.compile(
    r"\[(?P<cpu>\d+)\]\s+\S+\s+(?P<time>\d+\.\d+): sched_switch: "
    r"prev_comm=(?P<prev_comm>.*?) prev_pid=(?P<prev_pid>-?\d+) prev_prio=-?\d+ "
    r"prev_state=(?P<prev_state>\S+) ==> "
    r"next_comm=(?P<next_comm>.*?) next_pid=(?P<next_pid>-?\d+) next_prio=(?P<next_prio>-?\d+)")


# "# entries-in-buffer/entries-written: 138/138   #P:2"
_ENTRIES = re.compile(r"entries-in-buffer/entries-written: (\d+)/(\d+)")


def trace_lost_events(text: str) -> int:
    """Events the ring buffer dropped (written minus kept, from the trace's header, summed
    over every header the text holds): a latency or a count taken across the gap would be
    wrong."""
    return sum(int(written) - int(kept) for kept, written in _ENTRIES.findall(text))


@dataclass(frozen=True)
class Switch:
    cpu: int
    time_s: float
    prev_pid: int
    prev_comm: str
    prev_state: str
    next_pid: int
    next_comm: str
    next_prio: int      # the kernel's prio: 100-139 for CFS, 99 - rt_priority for RT


@dataclass(frozen=True)
class Turn:
    cpu: int
    pid: int
    comm: str
    start_s: float
    end_s: float
    exited: bool = False    # the task exited during this turn, which ended it early

    @property
    def ms(self) -> float:
        return (self.end_s - self.start_s) * 1e3


def parse_switches(text: str) -> list[Switch]:
    """Every sched_switch line of an ftrace text buffer, in trace order."""
    out = []
    for line in text.splitlines():
        m = _SWITCH.search(line)
        if m:
            out.append(Switch(int(m["cpu"]), float(m["time"]), int(m["prev_pid"]),
                              m["prev_comm"], m["prev_state"], int(m["next_pid"]),
                              m["next_comm"], int(m["next_prio"])))
    return out


def turns(switches: list[Switch], cpu: int, tracked: set[int]) -> list[Turn]:
    """The turns on ``cpu`` of the tasks whose pid is in ``tracked`` (see the module doc).

    The last turn ends at the last switch seen on that CPU."""
    on_cpu = [s for s in switches if s.cpu == cpu]
    out: list[Turn] = []
    current: tuple[int, str, float] | None = None
    exited = False
    for s in on_cpu:
        if current is not None and s.prev_pid == current[0] and s.prev_state[:1] in "ZX":
            exited = True
        if s.next_pid in tracked and (current is None or current[0] != s.next_pid):
            if current is not None:
                out.append(Turn(cpu, *current, s.time_s, exited))
            current, exited = (s.next_pid, s.next_comm, s.time_s), False
    if current is not None and on_cpu and on_cpu[-1].time_s > current[2]:
        out.append(Turn(cpu, *current, on_cpu[-1].time_s, exited))
    return out


def full_turns(all_turns: list[Turn]) -> list[bool]:
    """Which of a CPU's turns are whole quanta: not the first or the last of the trace, and
    not one its task exited in."""
    return [0 < i < len(all_turns) - 1 and not t.exited for i, t in enumerate(all_turns)]


def sharing_pids(switches: list[Switch], pid: int) -> tuple[int, set[int]]:
    """The CPU ``pid`` ran on most and the pids that shared it at the same priority (the
    tasks of one SCHED_RR round, or the CFS tasks at nice 0), ``pid`` included."""
    mine = [s for s in switches if s.next_pid == pid]
    if not mine:
        raise UserError(f"pid {pid} never ran in the trace")
    cpus = [s.cpu for s in mine]
    cpu = max(set(cpus), key=cpus.count)
    prios = [s.next_prio for s in mine if s.cpu == cpu]
    prio = max(set(prios), key=prios.count)   # not its first: it may start as CFS elsewhere
    return cpu, {s.next_pid for s in switches
                 if s.cpu == cpu and s.next_prio == prio and s.next_pid != 0}


def preempted_slices(switches: list[Switch], pid: int) -> list[float]:
    """Milliseconds ``pid`` ran each time before it was preempted (switched out still
    runnable), on whichever CPU: under CFS with no task bound, the quanta it got. Runs that
    ended in a sleep or an exit are not quanta and are left out."""
    started: dict[int, float] = {}
    out = []
    for s in switches:
        if s.prev_pid == pid and s.cpu in started:
            begin = started.pop(s.cpu)
            if s.prev_state.startswith("R"):
                out.append((s.time_s - begin) * 1e3)
        if s.next_pid == pid:
            started[s.cpu] = s.time_s
    return out


def shared_turns(switches: list[Switch], cpu: int, tracked: set[int], pid: int) -> list[Turn]:
    """The turns on ``cpu`` from ``pid``'s first one on: before it, the other tasks ran
    alone (a base vector started earlier, its start-delay helper), which is no quantum."""
    all_turns = turns(switches, cpu, tracked)
    first = next((i for i, t in enumerate(all_turns) if t.pid == pid), len(all_turns))
    return all_turns[first:]


def quantum_report(switches: list[Switch], cpu: int, tracked: set[int],
                   quantum_ms: float, tolerance: float = 0.10,
                   since_pid: int | None = None) -> dict:
    """How well the tracked tasks on ``cpu`` took turns of ``quantum_ms``.

    With ``since_pid``, only the turns from that task's first one on (shared_turns).
    ``full_turns`` excludes the partial turns (``full_turns()``); ``within`` is the fraction of
    those within ``tolerance`` of the quantum; ``alternating`` says whether each full turn was
    followed by another tracked task's turn (always true by construction when two or more
    tasks are tracked, false when only one of them ever ran)."""
    all_turns = (turns(switches, cpu, tracked) if since_pid is None
                 else shared_turns(switches, cpu, tracked, since_pid))
    full = [t for t, whole in zip(all_turns, full_turns(all_turns)) if whole]
    lengths = [t.ms for t in full]
    ok = [abs(x - quantum_ms) <= tolerance * quantum_ms for x in lengths]
    tasks = sorted({t.pid for t in all_turns})
    return {
        "cpu": cpu, "quantum_ms": quantum_ms, "tasks": tasks, "turns": len(all_turns),
        "full_turns": len(full),
        "median_ms": statistics.median(lengths) if lengths else None,
        "mean_ms": statistics.fmean(lengths) if lengths else None,
        "min_ms": min(lengths) if lengths else None,
        "max_ms": max(lengths) if lengths else None,
        "within": sum(ok) / len(ok) if ok else None,
        "alternating": len(tasks) == len(tracked) and len(all_turns) >= 2,
        "lengths_ms": lengths,
    }


def read_trace(run_dir: Path) -> list[Switch]:
    """The sched_switch events of a run directory (``artifacts/trace.txt``)."""
    path = run_dir / "artifacts" / "trace.txt"
    if not path.is_file():
        raise UserError(f"{run_dir.name}: no scheduler trace ({path} is missing); run it under "
                        f"a policy that traces sched:sched_switch (e.g. quantum-2ms)")
    return parse_switches(path.read_text(errors="replace"))


# "  launch-59  [001] ..... 0.499340: tracing_mark_write: schedlab-roi-begin job=gcc rep=1"
_ROI_MARK = re.compile(r"(?:-(?P<pid>\d+)\s+\[\d+\]\s+\S+)?\s+(?P<time>\d+\.\d+): "
                       r"tracing_mark_write: schedlab-roi-(?P<edge>begin|end) job=(?P<job>\S+) "
                       r"rep=(?P<rep>\d+)")


def roi_marks(text: str) -> dict[tuple[str, int], dict[str, float]]:
    """The launcher's marks of each job's region of interest in a trace's text (``launch
    --mark-roi``): (job, rep) -> {"begin": trace seconds, "end": trace seconds}."""
    marks: dict[tuple[str, int], dict[str, float]] = {}
    for m in _ROI_MARK.finditer(text):
        marks.setdefault((m["job"], int(m["rep"])), {})[m["edge"]] = float(m["time"])
    return marks


def roi_mark_writers(text: str) -> set[int]:
    """The pids that wrote the marks of a region of interest: the jobs' launchers."""
    return {int(m["pid"]) for m in _ROI_MARK.finditer(text) if m["pid"]}


def roi_window(run_dir: Path, job: str, rep: int) -> tuple[float, float] | None:
    """When (trace seconds) the region of interest of repetition ``rep`` of ``job`` began
    and ended, as its launcher marked them in the trace; None for a trace without the marks
    (runs made before the launcher wrote them)."""
    text = (run_dir / "artifacts" / "trace.txt").read_text(errors="replace")
    edges = roi_marks(text).get((job, rep), {})
    if "begin" not in edges or "end" not in edges:
        return None
    return edges["begin"], edges["end"]


def within(switches: list[Switch], window: tuple[float, float]) -> list[Switch]:
    """The switches inside a time window (trace seconds)."""
    return [s for s in switches if window[0] <= s.time_s <= window[1]]
