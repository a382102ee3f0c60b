"""Where a run's programs were during a job's region of interest: the last-level cache of
each, which is what study 3's cache balancing and partitioning decide.

Where is measured from the run's ``sched_switch`` trace (the default scheduler's and
region balancing's runs): the seconds each task ran on each cache inside the window,
replaying every CPU's switches (the task on a CPU when the window opens is the last one
switched in before it). A run that traced no switches (the other region policies) has its
programs named, for their attributed counters, but not placed: the region tracepoints say
where regions are mapped, not where threads run, and the last line a task wrote can be
stale (a load balancer's move is not among them).

A program is named by its workload and the arguments that tell it apart from the run's
other programs of that workload (memlat's region size; seeds aside). The guest starts the
background programs in the spec's order, one after another from one shell, so the k-th
background program of a workload has the k-th lowest of their pids; the job's pid is in
its results (a threaded job is placed by its main thread). A program that ran its workload
on one CPU from its exec on, without a switch or a trace line of its own, keeps the name
it had before (``init``, ``launch``), and is counted in where one workload alone falls short
by as many. A background workload the trace shows with more pids than programs (threads:
``sched_switch`` does not name a thread's process) is left out rather than guessed.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from schedlab.analysis.slices import Switch, parse_switches, roi_mark_writers
from schedlab.backends.gem5.stats import task_metrics

# The task name the kernel keeps (TASK_COMM_LEN - 1 characters).
COMM_CHARS = 15


def llc_of_cpu(machine: dict) -> dict[int, int]:
    """CPU -> its last-level cache, numbered as the kernel's region tracepoints number it
    (the cache's first CPU), from a run's machine description (spec.json's)."""
    llc = next(c for c in machine["caches"] if c["name"] == machine["llc"])
    return {cpu: min(group) for group in llc["groups"] for cpu in group}


def seconds_on_cache(switches: list[Switch], window: tuple[float, float],
                     llc: dict[int, int]) -> dict[int, dict[int, float]]:
    """pid -> cache -> seconds it ran there inside ``window`` (trace seconds); the idle
    task (pid 0) left out."""
    start, end = window
    out: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    by_cpu: dict[int, list[Switch]] = defaultdict(list)
    for s in switches:
        by_cpu[s.cpu].append(s)
    for cpu, seq in by_cpu.items():
        before = [s for s in seq if s.time_s <= start]
        inside = [s for s in seq if start < s.time_s < end]
        # Before the CPU's first switch in the trace its task is the one that switch ends.
        running = before[-1].next_pid if before else (inside[0].prev_pid if inside else None)
        since = start
        for s in inside:
            if running:
                out[running][llc[cpu]] += s.time_s - since
            running, since = s.next_pid, s.time_s
        if running:
            out[running][llc[cpu]] += end - since
    return {pid: dict(caches) for pid, caches in out.items()}


def _flags(args: list[str]) -> dict[str, str]:
    """``--name value`` pairs of a program's arguments (the last value of a repeated flag)."""
    return {a.lstrip("-"): v for a, v in zip(args, args[1:])
            if a.startswith("--") and not v.startswith("--")}


def program_names(programs: list[dict]) -> list[str]:
    """Each program (a spec's job or background entry: workload, args) named by its
    workload and the arguments whose values differ among the run's programs of that
    workload, seeds aside (a seed tells programs apart but not what they do; repetitions
    change it), numbered where that leaves two alike: ``memlat(region-size=4MiB) #2``."""
    flags = [_flags(p.get("args", [])) for p in programs]
    names = []
    for p, mine in zip(programs, flags):
        peers = [f for q, f in zip(programs, flags) if q["workload"] == p["workload"]]
        telling = [k for k in mine if k != "seed" and len({f.get(k) for f in peers}) > 1]
        names.append(p["workload"] + (f"({', '.join(f'{k}={mine[k]}' for k in telling)})"
                                      if telling else ""))
    for name in set(names):
        alike = [i for i, n in enumerate(names) if n == name]
        if len(alike) > 1:
            for k, i in enumerate(alike, 1):
                names[i] = f"{name} #{k}"
    return names


def program_pids(programs: list[dict], job_index: int, job_pid: int,
                 comms: dict[int, str], unnamed: list[int] = ()) -> dict[int, int]:
    """Program index -> pid: the job's from its results; a background program's the k-th
    lowest pid of its workload's name among the traced tasks (see the module's docstring),
    none for a workload traced with more pids than it has programs. ``unnamed``: pids the
    trace names only as they were before their exec (``names_before_exec``); where one
    workload alone falls short of its programs, by as many pids, they are its."""
    out = {job_index: job_pid}
    short = []
    for workload in {p["workload"] for p in programs}:
        mine = [i for i, p in enumerate(programs) if p["workload"] == workload and i != job_index]
        pids = sorted(pid for pid, comm in comms.items()
                      if comm == workload[:COMM_CHARS] and pid != job_pid)
        if mine and len(pids) == len(mine):
            out.update(zip(mine, pids))
        elif len(pids) < len(mine):
            short.append((mine, pids))
    unnamed = [pid for pid in unnamed if pid != job_pid]
    if len(short) == 1 and len(short[0][0]) - len(short[0][1]) == len(unnamed) > 0:
        mine, pids = short[0]
        out.update(zip(mine, sorted([*pids, *unnamed])))
    return out


# A background program's names before it executes its workload: the runner's shell (init)
# forks it and it runs the launcher first (disk-images/rootfs/init, guest-tools/launch.c).
BEFORE_EXEC = ("init", "launch")


def names_before_exec(comms: dict[int, str], text: str) -> list[int]:
    """The traced pids still named as a background program is before its exec: a program
    that ran its workload on one CPU from its exec on, without a switch or a trace line of
    its own, keeps that name in the trace. The runner (pid 1) and the jobs' launchers (the
    writers of the ROI's marks) are not programs."""
    launchers = roi_mark_writers(text)
    return sorted(pid for pid, comm in comms.items()
                  if comm in BEFORE_EXEC and pid != 1 and pid not in launchers)


@dataclass(frozen=True)
class Program:
    """One of a run's programs in a job's ROI: its name, whether it is the job, its pid and
    how many seconds of the window it was on each last-level cache."""
    name: str
    job: bool
    pid: int
    caches: dict[int, float]

    @property
    def cache(self) -> int | None:
        """The cache it was on most (None: not placed)."""
        return max(self.caches, key=self.caches.get) if self.caches else None

    @property
    def share(self) -> float:
        """The share of it on that cache (nan: not placed)."""
        return self.caches[self.cache] / sum(self.caches.values()) if self.caches else math.nan

    @property
    def label(self) -> str:
        return self.name + (" (job)" if self.job else "")


def describe(programs: list[Program]) -> dict:
    """A job row's columns for its run's programs: ``llc_placement``, each cache's programs
    by the cache they were on most, with that share where it is under 100 % ("llc 0: a, b
    52 % | llc 2: c"), and ``placement_share``, the smallest such share (1: no program was
    on two caches)."""
    if not programs:
        return {}
    main: dict[int, list[str]] = defaultdict(list)
    for p in sorted(programs, key=lambda p: p.label):
        main[p.cache].append(p.label + (f" {100 * p.share:.0f} %" if p.share < 0.995 else ""))
    return {"llc_placement": " | ".join(f"llc {c}: " + ", ".join(main[c]) for c in sorted(main)),
            "placement_share": min(p.share for p in programs)}


def rows(programs: list[Program], tasks: dict[str, dict]) -> list[dict]:
    """One row per program: name, job, pid, the cache it was on most and its share there,
    and from the job's per-task attribution (``tasks``: pid -> totals, gem5 runs with
    ``attribute_tasks``) its IPC and misses in the ROI (``schedlab.backends.gem5.stats.
    task_metrics``: ``ipc``, ``insts``, ``cycles``, ``llc_mpki``, ...)."""
    out = []
    for p in programs:
        totals = tasks.get(str(p.pid))
        metrics = task_metrics(totals) if totals else {}
        out.append({"program": p.name, "is_job": p.job, "pid": p.pid, "llc": p.cache,
                    "llc_share": p.share, **metrics})
    return out


# "   memlat-67   [003] d.s..  0.415257: ..." : the task a trace line was written by.
_TASK = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[\d+\]", re.M)


def _task_names(text: str, switches: list[Switch]) -> dict[int, str]:
    """pid -> its latest name in the trace. The writer of a line is printed with the name
    the kernel last saved for its pid (saved_cmdlines, at its switches and events, so never
    older than a switch's), which names a background program that exec'd after its last
    switch (``launch`` there); a switch's name serves where the writer's was not kept
    (``<...>``) or the task wrote no line."""
    seen: dict[int, tuple[float, str]] = {}
    for s in switches:
        for pid, comm in ((s.prev_pid, s.prev_comm), (s.next_pid, s.next_comm)):
            if pid not in seen or seen[pid][0] <= s.time_s:
                seen[pid] = (s.time_s, comm)
    names = {pid: comm for pid, (_, comm) in seen.items()}
    for m in _TASK.finditer(text):
        if m["comm"] != "<...>":
            names[int(m["pid"])] = m["comm"]
    return names


def _exec_names(trace: pd.DataFrame) -> dict[int, str]:
    """pid -> the name its last exec gave it (the launcher execs, then its program does)."""
    execs = trace[trace["event"] == "exec"].sort_values("ts")
    return {int(ev.tgid): ev.filename.rsplit("/", 1)[-1][:COMM_CHARS]
            for ev in execs.itertuples(index=False)}


def programs_of_job(text: str, trace: pd.DataFrame, spec: dict, workload: str, job_pid: int,
                    window: tuple[float, float] | None) -> tuple[bool, list[Program]]:
    """The run's programs in a job's ROI (``window``, trace seconds; None without the
    launcher's marks: none), named, and whether they are placed (the run traced its
    switches; else each program's ``caches`` is empty). ``trace``: the run's region trace
    (lee.parse_region_trace), whose execs name the pids of runs without switches."""
    request = spec.get("request", {})
    job = next((j for j in request.get("jobs", []) if j["workload"] == workload), None)
    if window is None or job is None:
        return False, []
    programs = [*request.get("background", []), job]
    job_index = len(programs) - 1
    switches = parse_switches(text)
    if switches:
        comms = _task_names(text, switches)
        unnamed = names_before_exec(comms, text)
        amounts = seconds_on_cache(switches, window, llc_of_cpu(spec["machine"]))
    else:
        comms, unnamed, amounts = _exec_names(trace), [], {}
    names = program_names(programs)
    pids = program_pids(programs, job_index, job_pid, comms, unnamed)
    found = [Program(names[i], i == job_index, pid, amounts.get(pid, {}))
             for i, pid in sorted(pids.items())
             if not switches or sum(amounts.get(pid, {}).values()) > 0]
    return bool(switches), found


def columns(placed: bool, programs: list[Program]) -> dict:
    """A job row's placement columns (:func:`describe`'s), for a run that traced switches."""
    return describe(programs) if placed else {}
