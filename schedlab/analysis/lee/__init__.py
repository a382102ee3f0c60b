"""Study 3's tables and figures: region scheduling, from the region tracepoints.

Every region policy traces ``sched_region_change`` (a region formed from seeds: regular;
mapped to a cache: local, with the cache; unmapped: regular; merged away or torn down:
seed), ``sched_region_micro_schedule`` (a thread moved to the cache of the region it
touched) and ``sched_process_exec`` (a program's start). A job's region of interest
begins at its launcher's mark in the trace (``schedlab-roi-begin``, written as the launcher
resets gem5's statistics) and lasts the job's ``duration`` (the launcher's stop timer, armed
after the mark). A trace without the marks (the QEMU runs of tests/data/lee) places it
``warmup`` after the exec instead: a few tenths of a millisecond late on gem5 (the warm-up
counts from the fork, before the exec), which put the job's exit on the stop inside it.
Compact tables:

- ``""``: one row per job repetition (``schedlab.analysis.tables.rows``: coordinates, the
  program's own ``key=value`` output such as memlat's ``roi_accesses_per_sec`` (over the
  ROI; ``accesses_per_sec`` over its life), ``ns_per_access``, with ``--frames seeded``
  ``frames_seeded_share`` and ``frames_fnv`` (its arrays' page frames), the media server's
  ``roi_p99_ms``, ``wall_s``, on gem5 the ROI's and the job's attributed counters,
  provenance), plus ``cpu_s`` (user + system time), for the ray tracer ``roi_ms_per_row``
  and ``roi_cpu_ms_per_row`` (its elapsed and CPU time per row of its ROI) and, from the
  trace: the ROI's start and end (``roi_start_s``, ``roi_end_s``, seconds after the job's
  exec), ``first_local_s`` (its first region mapped), ``local_at_roi`` and ``caches_at_roi``
  (its regions mapped when the ROI began, and the caches holding them),
  ``largest_local_pages``, ``micro_schedules`` (in the whole trace), ``micro_in_roi`` and
  ``micro_per_s`` (per second of the ROI; without a duration, per second of the job's life),
  ``micro_undone`` and ``micro_undone_in_roi`` (its micro-schedules after which it ran on
  outside the region's cache: ``mark_undone``),
  ``changes_in_roi`` (region changes inside the ROI: a regioning phase ran there),
  ``ended_in_roi`` (the job exited before its duration: its ROI ends there),
  ``regions_formed``, ``regions_freed`` (merged away or torn down), ``maps``, ``unmaps``;
  where the run traced ``sched_waking`` (the default scheduler's runs), the job's threads'
  wake-ups in its ROI (``wake_onto_idle``, ``wake_late``, ``wake_max_us``, ...:
  ``schedlab/analysis/wakeups.py``; gem5 loses some wake-ups of idle CPUs); where the
  launcher marked the ROI and the run traced its switches (the default scheduler's and
  region balancing's runs), where the run's programs were in it (``llc_placement``,
  ``placement_share``: ``schedlab/analysis/placement.py``);
- ``"responses"``: the media server's requests, one row each (its ``responses.csv``):
  the run's coordinates, job, job_rep, arrival_ms (after its ROI's start), response_ms,
  in_roi, and where wake-ups were traced ``late_wakeup`` (one of the job's threads was
  woken late onto an idle CPU while the request was pending);
- ``"events"``: one row per region tracepoint of the run's processes: time (seconds after
  the job's exec), event (change or micro), tgid, whose (``job`` or ``background``),
  region, type, cache, pages (for a micro-schedule: the CPUs it moved between, the CPU it
  ran on next, ``on_cpu``, and whether that was outside the region's cache, ``undone``).
- ``"programs"``: one row per program of the run (the job, by its main thread, and the
  background programs): the run's coordinates, job, job_rep, program, is_job, pid, the
  cache it was on most where switches were traced (``llc``, ``llc_share``) and, on gem5
  with per-task attribution, its IPC and misses in the job's ROI (``placement.rows``).

The trace does not count merges of single pages into regions, nor tell a teardown from a
merge (both free a region); those counters are in ``/proc/<pid>/sched_regions``, which the
launcher copies when a job's warm-up ends and just before the stop that ends its ROI:
``merges``, ``teardowns``, ``opens``, ``touch_faults``, ``reverts``, ``scans`` up to the
ROI's end and ``merges_in_roi``, ... inside it (absent for a job that ended by itself).
A cache's load here is the pages of the regions mapped to it (the kernel's load uses
working-set estimates). On QEMU the trace clock ("global": TCG's
TSC is unstable) and the guest's clock may differ by tens of milliseconds, so the ROI's
edges on the trace's clock are that uncertain there; the exec anchors both on the trace's
clock, so only the launcher's own delay (fork to exec) separates them.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from schedlab.backends.backend import BackendName
from schedlab.analysis import placement, wakeups
from schedlab.analysis.figures import (CHANGE_NOTE, WHISKERS, FigureContext, condition_stats,
                                       finish, metric_label, paired_bars, plain_log_ticks)
from schedlab.analysis.slices import roi_marks, trace_lost_events
from schedlab.analysis.tables import rows
from schedlab.machine import format_cpus, load_machine, parse_size

_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<ctx>\d+)\s+\[(?P<on>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+):"
                   r" (?P<event>sched_\w+): (?P<rest>.*)$")
_FIELDS = re.compile(r"(\w+)=(\S+)")
POLICY_COLOURS = {"region-confine": "#4c72b0", "region-unify": "#dd8452",
                  "vanilla": "#4c72b0", "region-balance": "#dd8452",
                  "region-partition": "#55a868", "alone": "#8c8c8c"}
CACHE_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")


def pair_fits(machine: str, size: str) -> bool:
    """Whether memlat's two regions of ``size`` fit together in one last-level cache of
    ``machine``: strictly smaller, since a pair the cache's size shares it with everything
    else (two 2 MiB regions in the X5365's 4 MiB L2 missed at 0.31 accesses in 1). Fig. 9's
    definition (schedlab.campaigns.lee) chooses its region sizes by it, and the cost of a
    micro-schedule is read only where it holds."""
    return 2 * parse_size(size, "region size") < load_machine(machine).llc.size


def parse_region_trace(text: str) -> pd.DataFrame:
    """The region and exec tracepoints of a tracefs ``trace`` file, in order: ts (s, trace
    clock), event (change, micro, exec), tgid (exec: the pid), region, type, llc, pages,
    src_cpu, dst_cpu, on_cpu (the CPU that wrote the event), filename (exec)."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        f = dict(_FIELDS.findall(m["rest"]))
        ev = m["event"]
        if ev == "sched_region_change":
            out.append({"ts": float(m["ts"]), "event": "change", "tgid": int(f["tgid"]),
                        "region": int(f["region"]), "type": f["type"], "llc": int(f["llc"]),
                        "pages": int(f["pages"])})
        elif ev == "sched_region_micro_schedule":
            out.append({"ts": float(m["ts"]), "event": "micro", "tgid": int(f["tgid"]),
                        "region": int(f["region"]), "llc": int(f["llc"]),
                        "src_cpu": int(f["src_cpu"]), "dst_cpu": int(f["dst_cpu"]),
                        "on_cpu": int(m["on"])})
        elif ev == "sched_process_exec":
            out.append({"ts": float(m["ts"]), "event": "exec", "tgid": int(f["pid"]),
                        "filename": f.get("filename", "")})
    cols = ["ts", "event", "tgid", "region", "type", "llc", "pages", "src_cpu", "dst_cpu",
            "on_cpu", "filename"]
    return pd.DataFrame(out, columns=cols)


def mark_undone(trace: pd.DataFrame, llc_of_cpu: dict[int, int]) -> pd.DataFrame:
    """``trace`` with ``undone`` for its micro-schedules: whether the thread went on running
    outside the region's cache. The thread writes the event itself once migrate_task_to()
    has returned, so it writes it on the CPU it runs on next; a micro-schedule onto a busy
    CPU leaves the CPU it came from idle, whose idle balancing can pull the thread back
    before it ever runs at its destination (seen in lee-fig17's runs: the stopper's
    sched_migrate_task there and back within microseconds)."""
    micro = trace["event"] == "micro"
    if not llc_of_cpu:
        return trace.assign(undone=math.nan)
    ran_on = trace["on_cpu"].map(lambda c: llc_of_cpu.get(int(c)) if pd.notna(c) else None)
    return trace.assign(undone=(ran_on != trace["llc"]).where(micro))


def region_states(changes: pd.DataFrame, until: float = math.inf) -> dict[int, dict]:
    """Each region of one process after its change events up to ``until`` (trace clock):
    region -> {type, llc, pages}; regions merged away or torn down (seed) are left out."""
    state: dict[int, dict] = {}
    for ev in changes[changes["ts"] <= until].itertuples(index=False):
        if ev.type == "seed":
            state.pop(int(ev.region), None)
        else:
            state[int(ev.region)] = {"type": ev.type, "llc": int(ev.llc),
                                     "pages": int(ev.pages)}
    return state


def change_counts(changes: pd.DataFrame) -> dict[str, int]:
    """Replaying one process's change events: regions formed (a regular event for a region
    that did not exist), freed (seed: merged away or torn down), mapped (local) and
    unmapped (regular for a region that was local)."""
    types: dict[int, str] = {}
    out = {"regions_formed": 0, "regions_freed": 0, "maps": 0, "unmaps": 0}
    for ev in changes.itertuples(index=False):
        before = types.get(int(ev.region))
        if ev.type == "seed":
            out["regions_freed"] += before is not None
            types.pop(int(ev.region), None)
            continue
        if ev.type == "local":
            out["maps"] += 1
        elif before is None:
            out["regions_formed"] += 1
        elif before == "local":
            out["unmaps"] += 1
        types[int(ev.region)] = ev.type
    return out


def exit_unmapping(changes: pd.DataFrame) -> float | None:
    """When one process's regions were unmapped (trace clock) if its changes end so: a
    trailing run of unmaps (regular) that leaves none of its regions mapped, with nothing
    after it, as its exit makes it; else None. Whether it exited then is for the caller to
    know (``job_trace``: from the job's own wall time)."""
    events = list(changes.sort_values("ts", kind="stable").itertuples(index=False))
    k = len(events)
    while k and events[k - 1].type == "regular":
        k -= 1
    tail = events[k:]
    mapped = {r for r, st in region_states(pd.DataFrame(events[:k], columns=changes.columns))
              .items() if st["type"] == "local"}
    if not tail or not mapped or not mapped <= {int(ev.region) for ev in tail}:
        return None
    return float(tail[0].ts)


def job_trace(trace: pd.DataFrame, pid: int, warmup: float, duration: float | None,
              wall_s: float, marks: dict[str, float] | None = None) -> dict:
    """The trace's numbers of one job (see the module's docstring); ``marks``: the
    launcher's ROI marks of the job (``slices.roi_marks``), none in older traces. The ROI
    ends at its duration or, if the job was reaped first (the end mark, which the launcher
    writes after it; without marks its exec plus its wall time), at its exit: the unmapping
    of its regions there, which is no change of the ROI, or without regions that bound."""
    mine = trace[trace["tgid"] == pid]
    execs = mine[mine["event"] == "exec"]
    changes = mine[mine["event"] == "change"]
    micro = mine[mine["event"] == "micro"]
    out: dict = {"micro_schedules": len(micro), **change_counts(changes)}
    if "undone" in micro and micro["undone"].notna().all():   # NaN: not known
        out["micro_undone"] = int(micro["undone"].eq(True).sum())
    if execs.empty:
        return out
    t0 = float(execs["ts"].min())
    marks = marks or {}
    start = marks.get("begin", t0 + warmup)
    reaped = marks.get("end", t0 + wall_s)
    end = start + duration if duration else t0 + wall_s
    ended = bool(duration) and start < reaped < end
    if ended:
        unmapped = exit_unmapping(changes)
        end = unmapped if unmapped is not None and start < unmapped <= reaped else reaped
    local = changes[changes["type"] == "local"]
    at_roi = {r: s for r, s in region_states(changes, start).items() if s["type"] == "local"}
    in_roi = micro[(micro["ts"] >= start) & (micro["ts"] <= end)]
    length = end - start
    out.update({
        "roi_start_s": start - t0, "roi_end_s": end - t0,
        "first_local_s": float(local["ts"].min() - t0) if len(local) else math.nan,
        "local_at_roi": len(at_roi),
        "caches_at_roi": len({s["llc"] for s in at_roi.values()}),
        "largest_local_pages": max((s["pages"] for s in at_roi.values()), default=0),
        "micro_in_roi": len(in_roi),
        **({"micro_undone_in_roi": int(in_roi["undone"].eq(True).sum())}
           if "micro_undone" in out else {}),
        "micro_per_s": len(in_roi) / length if length > 0 else math.nan,
        "changes_in_roi": int(((changes["ts"] > start) & (changes["ts"] < end)).sum()),
        "ended_in_roi": ended if duration else math.nan})
    return out


def collect(run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The compact tables of study 3's runs (see the module's docstring)."""
    main, events, responses, programs = [], [], [], []
    for d in run_dirs:
        res = json.loads((d / "results.json").read_text())
        spec = json.loads((d / "spec.json").read_text())
        requested = spec["request"]["jobs"]
        trace_path = d / "artifacts" / "trace.txt"
        text = trace_path.read_text(errors="replace") if trace_path.is_file() else ""
        trace = mark_undone(parse_region_trace(text), placement.llc_of_cpu(spec["machine"]))
        marks = roi_marks(text)
        job_pids = set()
        t0 = None
        coords = None
        for row, job in zip(rows(d), res["jobs"]):
            # The job's request by name: a run's results list every job's repetitions.
            req = next((r for r in requested if r.get("workload") == job["job"]),
                       requested[0] if requested else {})
            row["cpu_s"] = (job.get("user_us", 0) + job.get("sys_us", 0)) / 1e6
            if row.get("roi_rows"):   # the ray tracer: per row, whatever ended its ROI
                row["roi_ms_per_row"] = 1e3 * row["roi_seconds"] / row["roi_rows"]
                row["roi_cpu_ms_per_row"] = 1e3 * row["roi_cpu_seconds"] / row["roi_rows"]
            row["warmup_s"] = req.get("warmup", 0.0)
            if "frames_fnv" in job.get("metrics", {}):   # memlat: which pages it had
                row["frames_fnv"] = job["metrics"]["frames_fnv"]
            row.update(region_counters(d, job))
            edges = marks.get((job["job"], job["rep"]), {})
            found, late_ms = _job_wakeups(text, job, edges)
            row.update(found)
            window = (edges["begin"], edges["end"]) if len(edges) == 2 else None
            traced, placed = placement.programs_of_job(text, trace, spec, job["job"],
                                                       job["pid"], window)
            row.update(placement.columns(traced, placed))
            coords = {k: row[k] for k in ("run_id", "machine", "policy", *res.get("label", {}))
                      if k in row}
            programs += [{**coords, "job": job["job"], "job_rep": job["rep"], **p}
                         for p in placement.rows(placed, job.get("tasks", {}))]
            if text:
                row["trace_lost_events"] = trace_lost_events(text)
                row.update(job_trace(trace, job["pid"], req.get("warmup", 0.0),
                                     req.get("duration"), row["wall_s"], edges))
                job_pids.add(job["pid"])
                execs = trace[(trace["tgid"] == job["pid"]) & (trace["event"] == "exec")]
                if t0 is None and len(execs):
                    t0 = float(execs["ts"].min())
            main.append(row)
            responses += _responses(d, job, coords, late_ms)
        if trace.empty or coords is None:    # no region trace, or the run had no job
            continue
        coords = {k: v for k, v in row.items() if k in coords}    # the tables' column order
        t0 = t0 if t0 is not None else float(trace["ts"].min())
        for ev in trace[trace["event"] != "exec"].itertuples(index=False):
            events.append({**coords, "time_s": ev.ts - t0, "event": ev.event,
                           "tgid": ev.tgid,
                           "whose": "job" if ev.tgid in job_pids else "background",
                           "region": ev.region, "type": ev.type, "llc": ev.llc,
                           "pages": ev.pages, "src_cpu": ev.src_cpu, "dst_cpu": ev.dst_cpu,
                           "on_cpu": ev.on_cpu, "undone": ev.undone})
    return {"": pd.DataFrame(main), "events": pd.DataFrame(events),
            "responses": pd.DataFrame(responses), "programs": pd.DataFrame(programs)}


REGION_COUNTERS = ("merges", "teardowns", "opens", "touch_faults", "reverts", "scans")


def parse_sched_regions(text: str) -> dict[str, int]:
    """The counters of a /proc/<pid>/sched_regions copy (kernel-patches 0019)."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in REGION_COUNTERS and value.strip().isdigit():
            out[key] = int(value)
    return out


def region_counters(run_dir: Path, job: dict) -> dict[str, float]:
    """A job's region counters from the launcher's copies of its sched_regions at its ROI's
    begin and end: each counter up to the ROI's end (``merges``, ...) and inside the ROI
    (``merges_in_roi``, ...). Empty where no copy was taken (no region policy; the end's
    is taken only when the launcher's stop ends the ROI)."""
    folder = run_dir / "artifacts" / job["job"] / str(job["rep"])
    end = folder / "sched_regions.end"
    if not end.is_file():
        return {}
    last = parse_sched_regions(end.read_text())
    begin = folder / "sched_regions.begin"
    first = parse_sched_regions(begin.read_text()) if begin.is_file() else {}
    out: dict[str, float] = dict(last)
    for key, value in last.items():
        out[f"{key}_in_roi"] = value - first[key] if key in first else math.nan
    return out


# The launcher marks the ROI's begin in the trace a little before the media server stamps
# its own start (10 to 20 us on gem5), so a request's arrival on the trace's clock is known
# to about that: a late wake-up counts as the request's from this much before its arrival.
ARRIVAL_SLACK_MS = 0.1


def _job_wakeups(text: str, job: dict, edges: dict[str, float]) -> tuple[dict, list | None]:
    """A job's wake-ups in its ROI (schedlab/analysis/wakeups.py): its ``wake_*`` columns
    and when its late ones began (ms after the ROI's begin mark); nothing where the run did
    not trace ``sched_waking`` (the region policies do not) or has no ROI marks."""
    if "sched_waking:" not in text or not {"begin", "end"} <= edges.keys():
        return {}, None
    found = wakeups.of_job(text, job["job"], (edges["begin"], edges["end"]))
    return (wakeups.columns(found),
            [1e3 * (w.waking_s - edges["begin"]) for w in found if w.late])


def _responses(run_dir: Path, job: dict, coords: dict,
               late_ms: list[float] | None = None) -> list[dict]:
    """The media server's requests of one job repetition (its ``responses.csv``); with the
    job's late wake-ups (``late_ms``), whether one came while a request was pending."""
    path = run_dir / "artifacts" / job["job"] / str(job["rep"]) / "responses.csv"
    if not path.is_file():
        return []
    out = [{**coords, "job": job["job"], "job_rep": job["rep"], **r}
           for r in pd.read_csv(path).to_dict("records")]
    if late_ms is not None:
        for r in out:
            r["late_wakeup"] = any(
                r["arrival_ms"] - ARRIVAL_SLACK_MS <= t <= r["arrival_ms"] + r["response_ms"]
                for t in late_ms)
    return out


# ---------------------------------------------------------------------------------------------
# Derived tables

def normalised(frame: pd.DataFrame, base: str = "region-confine",
               other: str = "region-unify", metric: str = "roi_accesses_per_sec",
               by: tuple[str, ...] = ("machine", "region_size", "access_time")) -> pd.DataFrame:
    """Fig. 9: each run's ``metric`` over the mean of the ``base`` runs of its condition
    (``by``): 1 is confinement's performance; above 1, unification is faster."""
    keys = [c for c in by if c in frame]
    ref = frame[frame["policy"] == base].groupby(keys)[metric].mean().rename("base_mean")
    out = frame[frame["policy"].isin([base, other])].join(ref, on=keys)
    out["normalised"] = out[metric] / out["base_mean"]
    return out


PAPER_MICRO_RATE = 700     # micro-schedules per second, the rate the paper's overhead quotes


def micro_schedule_cost(frame: pd.DataFrame) -> pd.DataFrame:
    """The overheads from Fig. 9's runs (gem5): each unification run that micro-scheduled,
    against its condition's confinement runs, where both regions fit in one last-level
    cache together (so spreading them gains no capacity and the difference is the cost):

    - ``lost_ms``: the unify run's ROI (memlat's own clock) x (1 - its accesses/s over
      confinement's mean);
    - ``cycles_per_micro``: lost time x the core clock / micro-schedules in the ROI: all a
      micro-schedule brings (the hinting fault, the migration, the protection changes of the
      regions left and arrived at, the L1 refill on the new core);
    - ``insts_per_micro``: the unify run's ROI instructions (every core, gem5) minus
      confinement's scaled to the unify run's accesses, per micro-schedule;
    - ``overhead_at_700``, ``overhead_measured``: the share of a CPU's time those cycles
      take at the paper's 700 micro-schedules a second and at the run's own rate (above 1:
      that rate cannot be sustained)."""
    cols = ["machine", "region_size", "access_time", "rep", "micro_in_roi", "micro_per_s",
            "lost_ms", "cycles_per_micro", "insts_per_micro", "overhead_at_700",
            "overhead_measured"]
    if "micro_in_roi" not in frame or "gem5_insts" not in frame:
        return pd.DataFrame(columns=cols)
    out = []
    norm = normalised(frame)
    keys = ["machine", "region_size", "access_time"]
    confine = frame[frame["policy"] == "region-confine"].groupby(keys)
    for row in norm[(norm["policy"] == "region-unify") & (norm["micro_in_roi"] > 0)].itertuples():
        machine = load_machine(row.machine)
        if not pair_fits(row.machine, row.region_size):
            continue
        key = (row.machine, row.region_size, row.access_time)
        if key not in confine.groups:      # a partial campaign: no confinement run yet
            continue
        base = confine.get_group(key)
        lost_s = row.roi_seconds * (1 - row.normalised)
        cycles = lost_s * machine.clock_hz / row.micro_in_roi
        scale = row.roi_accesses / base["roi_accesses"].mean()
        out.append({"machine": row.machine, "region_size": row.region_size,
                    "access_time": row.access_time, "rep": row.rep,
                    "micro_in_roi": row.micro_in_roi, "micro_per_s": row.micro_per_s,
                    "lost_ms": 1e3 * lost_s, "cycles_per_micro": cycles,
                    "insts_per_micro": (row.gem5_insts - scale * base["gem5_insts"].mean())
                    / row.micro_in_roi,
                    "overhead_at_700": PAPER_MICRO_RATE * cycles / machine.clock_hz,
                    "overhead_measured": row.micro_per_s * cycles / machine.clock_hz})
    return pd.DataFrame(out, columns=cols)


def cache_timeline(events: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """Regions and pages mapped to each cache after every region change of one run: time_s,
    llc, regions, pages (all the run's processes)."""
    sel = events[(events["run_id"] == run_id) & (events["event"] == "change")]
    state: dict[tuple[int, int], tuple[int, int]] = {}    # (tgid, region) -> (llc, pages)
    caches = sorted({int(c) for c in sel["llc"].dropna() if c >= 0})
    out = []
    for ev in sel.sort_values("time_s", kind="stable").itertuples(index=False):
        key = (int(ev.tgid), int(ev.region))
        if ev.type == "local":
            state[key] = (int(ev.llc), int(ev.pages))
        else:
            state.pop(key, None)
        for llc in caches:
            mapped = [p for c, p in state.values() if c == llc]
            out.append({"time_s": ev.time_s, "llc": llc, "regions": len(mapped),
                        "pages": sum(mapped)})
    return pd.DataFrame(out, columns=["time_s", "llc", "regions", "pages"])


# ---------------------------------------------------------------------------------------------
# Figures

def _condition(frame: pd.DataFrame) -> pd.Series:
    return frame["region_size"].astype(str) + " x2, 2^" + frame["access_time"].map(
        lambda a: f"{int(math.log2(a))}")


def _timing_note(ctx: FigureContext) -> str:
    if ctx.backend != BackendName.QEMU:
        return ""
    return (" On QEMU the rates are the guest's wall clock on a loaded host, and a hinting "
            "fault costs far more (relative to an access) than on gem5: regions form "
            "differently (see the regions columns), the mechanics are what is shown.")


def _per_machine(frame: pd.DataFrame):
    machines = list(dict.fromkeys(frame["machine"])) if len(frame) else []
    return machines or ["-"]


def _fig9(frame: pd.DataFrame, ctx: FigureContext, dest: Path) -> list[Path]:
    norm = normalised(frame)
    norm["condition"] = _condition(norm).str.replace(", ", "\n")
    machines = _per_machine(norm)
    width = max(6.0, 1.1 * norm.groupby("machine")["condition"].nunique().max())
    fig, axes = plt.subplots(2, len(machines), figsize=(width * len(machines), 7),
                             squeeze=False)
    for col, machine in enumerate(machines):
        sel = norm[norm["machine"] == machine]
        paired_bars(axes[0, col], sel, "normalised", "condition", "policy",
                    ("region-confine", "region-unify"), ("confinement", "unification"))
        axes[0, col].axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        axes[0, col].set_ylabel("memlat accesses/s\nover confinement's mean", fontsize=8)
        axes[0, col].set_title(machine, fontsize=8, loc="left")
        unify = sel[sel["policy"] == "region-unify"]
        stats = condition_stats(unify, "micro_per_s", ["condition"])
        xs = range(len(stats))
        axes[1, col].bar(xs, stats["mean"], yerr=2 * stats["std"], capsize=3,
                         color=POLICY_COLOURS["region-unify"])
        regions = unify.groupby("condition", sort=False)["local_at_roi"].agg(["min", "max"])
        for x, (cond, n) in enumerate(zip(stats["condition"], stats["count"])):
            r = regions.loc[cond]
            axes[1, col].annotate(f"n={int(n)}\nregions {int(r['min'])}-{int(r['max'])}",
                                  (x, 0), ha="center", va="bottom", fontsize=6,
                                  xytext=(0, 2), textcoords="offset points")
        axes[1, col].set_xticks(list(xs), stats["condition"], fontsize=7)
        axes[1, col].set_ylabel("micro-schedules\nper second of the ROI", fontsize=8)
        axes[1, col].set_xlabel("working set (two equal regions) and access time "
                                "(accesses per visit)", fontsize=8)
    return [finish(fig, ctx, dest, WHISKERS + ". Top: memlat's accesses per second "
                   "in the ROI (guest clock; from its first region switch after the ROI "
                   "began) normalised to the "
                   "mean of confinement's runs of the same condition; above 1: unification "
                   "is faster; % change of the means above each pair" + CHANGE_NOTE
                   + ". Bottom: unification's micro-schedules per second of the ROI "
                   "(trace), and the number of the job's regions mapped when the ROI began "
                   "(min-max over the runs)."
                   + _timing_note(ctx))]


def _overheads(frame: pd.DataFrame, ctx: FigureContext, dest: Path) -> list[Path]:
    norm = normalised(frame)
    unify = norm[norm["policy"] == "region-unify"]
    cost = micro_schedule_cost(frame) if ctx.backend == BackendName.GEM5 else pd.DataFrame()
    fig, axes = plt.subplots(1, 2 if len(cost) else 1, figsize=(12 if len(cost) else 7, 4.5),
                             squeeze=False)
    ax = axes[0, 0]
    for k, machine in enumerate(_per_machine(unify)):
        sel = unify[unify["machine"] == machine]
        ax.scatter(sel["micro_per_s"], sel["normalised"], s=18, label=machine,
                   color=CACHE_COLOURS[k % len(CACHE_COLOURS)])
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xlabel("micro-schedules per second of the ROI (trace)", fontsize=8)
    ax.set_ylabel("memlat accesses/s over confinement's mean", fontsize=8)
    if len(unify):
        ax.legend(fontsize=7)
    caption = "Left, each point: one unification run of lee-fig9's matrix."
    if len(cost):
        _cost_panel(axes[0, 1], cost)
        caption += (" Right: kilocycles per micro-schedule, from each unification run that "
                    "micro-scheduled where both regions fit in one last-level cache "
                    "(points: runs; bars: their mean); above each bar the share of a CPU's "
                    f"time that cost takes at the paper's {PAPER_MICRO_RATE} a second.")
    else:
        caption += (" The cost of one micro-schedule in cycles needs gem5 runs (bench/gem5.md, "
                    "bench/bench_regions.py).")
    return [finish(fig, ctx, dest, caption + _timing_note(ctx))]


def _cost_panel(ax, cost: pd.DataFrame) -> None:
    cost = cost.assign(condition=cost["machine"] + "\n" + _condition(cost))
    groups = list(dict.fromkeys(cost["condition"]))
    for i, g in enumerate(groups):
        sel = cost[cost["condition"] == g]
        mean = sel["cycles_per_micro"].mean() / 1e3
        ax.bar(i, mean, color=CACHE_COLOURS[0], alpha=0.6)
        ax.scatter([i] * len(sel), sel["cycles_per_micro"] / 1e3, color="black", s=12,
                   zorder=3)
        ax.annotate(f"{100 * sel['overhead_at_700'].mean():.0f} % at {PAPER_MICRO_RATE}/s",
                    (i, sel["cycles_per_micro"].max() / 1e3), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=7)
    # Within noise unification can beat confinement: a cost below zero is drawn, not hidden.
    low, high = (cost["cycles_per_micro"].min() / 1e3, cost["cycles_per_micro"].max() / 1e3)
    ax.set_ylim(min(0.0, 1.15 * low), max(0.0, 1.15 * high) or 1.0)
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(groups)), groups, fontsize=7)
    ax.set_ylabel("kilocycles per micro-schedule", fontsize=8)


def _has(frame: pd.DataFrame, column: str) -> bool:
    return column in frame and frame[column].notna().any()


def _benchmark_panels(frame: pd.DataFrame, metric: str) -> list[tuple[str, str]]:
    """The rows of Figs. 17 and 18-23 that the runs have data for: (kind, column)."""
    panels = [("pair", metric)]
    if _has(frame, "task_llc_mpki"):
        panels.append(("pair", "task_llc_mpki"))          # the job's own LLC misses
    if metric != "micro_per_s":
        panels.append(("policy", "micro_per_s"))
    if _has(frame, "merges"):
        panels.append(("counts", "merges teardowns"))
    return panels


def _counts_panel(ax, sel: pd.DataFrame, policy: str) -> None:
    """The job's region merges and teardowns up to its ROI's end, under ``policy``
    (mean over the runs, whiskers mean ± 2 sd; /proc/<pid>/sched_regions)."""
    runs = sel[sel["policy"] == policy]
    groups = list(dict.fromkeys(sel["benchmark"]))
    for k, (column, colour) in enumerate((("merges", "#55a868"), ("teardowns", "#c44e52"))):
        stats = condition_stats(runs, column, ["benchmark"]).set_index("benchmark")
        stats = stats.reindex(groups)
        xs = [i + (k - 0.5) * 0.38 for i in range(len(groups))]
        ax.bar(xs, stats["mean"], 0.38, yerr=2 * stats["std"], capsize=3, color=colour,
               label=f"{column} ({policy})")
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel("region merges and teardowns\n(the job's, to its ROI's end)", fontsize=8)
    ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1, 1.01), ncol=2, frameon=False)


def _mix_moves_panel(ax, sel: pd.DataFrame, events: pd.DataFrame, policy: str) -> None:
    """Per benchmark and repetition, ``policy``'s micro-schedules of all the run's programs
    up to the ROI's end: those that held, those undone, those the events do not mark."""
    runs = sel[sel["policy"] == policy].sort_values(["benchmark", "rep"], kind="stable")
    moves = micro_counts(runs, events).reindex(runs["run_id"])
    groups = list(dict.fromkeys(sel["benchmark"]))
    reps = sorted(runs["rep"].unique())
    width = 0.8 / max(len(reps), 1)
    parts = (("held", "#4c72b0", None), ("undone", "#c44e52", None),
             ("not marked (traced before the mark existed)", "white", "//"))
    labelled = set()
    for (_, run), (_, count) in zip(runs.iterrows(), moves.iterrows()):
        total = 0.0 if pd.isna(count["micro"]) else float(count["micro"])
        undone = count["undone"]
        heights = ((total - undone, undone, 0.0) if pd.notna(undone) else (0.0, 0.0, total))
        x = groups.index(run["benchmark"]) + (reps.index(run["rep"]) - (len(reps) - 1) / 2) * width
        bottom = 0.0
        for (name, colour, hatch), height in zip(parts, heights):
            if height > 0:
                ax.bar(x, height, width * 0.9, bottom=bottom, color=colour, hatch=hatch,
                       edgecolor="black", linewidth=0.4,
                       label=None if name in labelled else name)
                labelled.add(name)
                bottom += height
        ax.annotate(f"rep {run['rep']}", (x, bottom), textcoords="offset points",
                    xytext=(0, 2), ha="center", fontsize=5.5)
    in_roi = runs["micro_in_roi"].fillna(0).sum() if "micro_in_roi" in runs else 0
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylim(0, 1.2 * max(ax.get_ylim()[1], 1.0))
    ax.set_ylabel(f"{policy}'s micro-schedules of\nthe mix, to the ROI's end", fontsize=8)
    ax.text(0.01, 0.97, f"the job's micro-schedules in its ROIs, all runs: {int(in_roi)}",
            transform=ax.transAxes, fontsize=7, va="top")
    if labelled:    # a partial figure may have no run of the policy on this machine yet
        ax.legend(fontsize=6.5, loc="lower right", bbox_to_anchor=(1, 1.01), ncol=3,
                  frameon=False)


def program_kind(programs: pd.DataFrame) -> pd.Series:
    """Each program's kind (a row of a programs table): the job is "the benchmark", the
    others are named without the number that tells alike ones apart."""
    return pd.Series(np.where(programs["is_job"].astype(bool), "the benchmark",
                              programs["program"].str.replace(r" #\d+$", "", regex=True)),
                     index=programs.index)


def moved_in_roi(frame: pd.DataFrame, events: pd.DataFrame) -> set[tuple[str, int]]:
    """(run_id, tgid) of every process micro-scheduled inside its run's ROI. Per-task
    attribution charges a task everything its CPU executes between its switches, the
    kernel's work for it included: such a process's counters hold its moves' page-protection
    changes (hundreds of instructions per page of the regions left and arrived at: Fig. 9's
    overheads), so its IPC is not its own progress."""
    if events.empty or not {"roi_start_s", "roi_end_s"} <= set(frame):
        return set()
    edges = frame.set_index("run_id")[["roi_start_s", "roi_end_s"]]
    micro = events[events["event"] == "micro"]
    inside = micro["time_s"].between(micro["run_id"].map(edges["roi_start_s"]),
                                     micro["run_id"].map(edges["roi_end_s"]))
    return {(run, int(tgid)) for run, tgid in zip(micro.loc[inside, "run_id"],
                                                   micro.loc[inside, "tgid"])}


def program_changes(programs: pd.DataFrame, policy: str,
                    moved: set[tuple[str, int]] = frozenset()) -> pd.DataFrame:
    """Each program's IPC in the ROI under ``policy`` over the default scheduler's in the
    same repetition (the same programs, started in the same order with the same seeds), as
    a change in per cent: machine, benchmark, rep, kind (the job is "the benchmark"; others
    by their names without the number that tells alike ones apart), change, and ``moved``
    where its (run_id, pid) is in ``moved`` (``moved_in_roi``: its IPC counts the kernel's
    work of its moves); and per pair of runs the kind "all programs", the mean of the
    ratios of the programs not moved (the mix's weighted speed-up, as far as IPC tells)."""
    keys = ["machine", "benchmark", "rep", "program"]
    if not {*keys, "ipc", "policy"} <= set(programs):
        return pd.DataFrame(columns=["machine", "benchmark", "rep", "kind", "change", "moved"])
    p = programs.dropna(subset=["ipc"])
    base = p[p["policy"] == "vanilla"].set_index(keys)["ipc"]
    new = p[p["policy"] == policy].set_index(keys)
    ratio = (new["ipc"] / base.reindex(new.index)).rename("ratio")
    kind = program_kind(new.reset_index()).to_numpy()
    was_moved = [(run, int(pid)) in moved for run, pid in zip(new["run_id"], new["pid"])]
    each = pd.DataFrame({"ratio": ratio, "kind": kind, "moved": was_moved}).dropna(
        subset=["ratio"]).reset_index()
    mix = (each[~each["moved"]].groupby(["machine", "benchmark", "rep"], sort=False)["ratio"]
           .mean().reset_index().assign(kind="all programs", moved=False))
    out = pd.concat([each.drop(columns="program"), mix], ignore_index=True)
    return out.assign(change=100 * (out["ratio"] - 1)).drop(columns="ratio")


PROGRAM_COLOURS = ("#4c72b0", "#c44e52", "#55a868", "#8c8c8c", "#8172b2")
MOVED_NOTE = ("†: micro-scheduled inside the ROI (the job, in a benchmark's name: in at least "
              "one repetition); per-task attribution charges a task what its CPU executes "
              "between its switches, the kernel's work for it included, so a moved "
              "program's counters hold its moves' page-protection changes of its regions "
              "(the more pages, the more: Fig. 9's overheads) and its IPC is not its own "
              "progress.")


def program_kinds(changes: pd.DataFrame) -> list[str]:
    """The kinds in ``changes`` (``program_changes``, or programs with their
    ``program_kind``) in the order their bars take (and their colours, PROGRAM_COLOURS in
    turn): the benchmark, the others as they come, all programs."""
    others = [k for k in dict.fromkeys(changes["kind"]) if k not in ("the benchmark",
                                                                      "all programs")]
    return ["the benchmark", *others, "all programs"]


def _programs_panel(ax, changes: pd.DataFrame, groups: list[str], policy: str) -> None:
    """Per benchmark, each program's IPC change under ``policy`` (bars: the mean over the
    repetitions and alike programs; dots: each), and the mix's; programs moved inside the
    ROI are left out (their IPC counts the kernel's work of the moves), and counted."""
    kinds = program_kinds(changes)
    width = 0.8 / len(kinds)
    left_out = changes[changes["moved"].astype(bool)].groupby("benchmark").size()
    changes = changes[~changes["moved"].astype(bool)]
    for k, kind in enumerate(kinds):
        part = changes[changes["kind"] == kind]
        xs = [i + (k - (len(kinds) - 1) / 2) * width for i in range(len(groups))]
        means = part.groupby("benchmark")["change"].mean().reindex(groups)
        ax.bar(xs, means, width, color=PROGRAM_COLOURS[k % len(PROGRAM_COLOURS)], label=kind)
        for x, bench in zip(xs, groups):
            values = part.loc[part["benchmark"] == bench, "change"]
            ax.plot([x] * len(values), values, "o", color="black", markersize=2.5, zorder=3)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(groups)), [
        bench + (f"\n{left_out[bench]} moved" if left_out.get(bench, 0) else "")
        for bench in groups], fontsize=8)
    ax.set_ylabel(f"IPC change, {policy}\nover the default scheduler (%)", fontsize=8)
    ax.legend(fontsize=6, loc="best", framealpha=0.8)


def short_program_name(program: str) -> str:
    """A program's name with its telling arguments' values only:
    ``memlat(region-size=2MiB) #1`` -> ``memlat 2MiB #1``."""
    return re.sub(r"\(([^)]*)\)",
                  lambda m: " " + ", ".join(a.split("=", 1)[-1] for a in m.group(1).split(", ")),
                  program)


def _cache_names(machine: str, caches: list[int]) -> dict[int, str]:
    """Cache id (its first CPU, as the tables number it) -> "L2, CPUs 0-1" from the
    catalogue; by the id alone for a machine it does not hold."""
    from schedlab.errors import UserError
    try:
        spec = load_machine(machine)
    except UserError:      # a user's machine file the figure cannot see
        return {c: f"cache of CPU {c}" for c in caches}
    groups = {min(g): g for g in spec.llc_groups}
    return {c: f"{spec.llc.name.upper()}, CPUs {format_cpus(groups.get(c, (c,)))}"
            for c in caches}


def region_pages_at_roi(frame: pd.DataFrame, events: pd.DataFrame) -> pd.Series:
    """Per run, process and cache (run_id, tgid, llc) the pages of the process's regions
    mapped to that cache when its run's ROI began (each region's last change before it)."""
    if events.empty or "roi_start_s" not in frame:
        return pd.Series(dtype=float, name="pages")
    start = events["run_id"].map(frame.set_index("run_id")["roi_start_s"])
    changes = events[(events["event"] == "change") & (events["time_s"] < start)]
    last = changes.sort_values("time_s", kind="stable").groupby(
        ["run_id", "tgid", "region"]).tail(1)
    local = last[last["type"] == "local"].astype({"tgid": int, "llc": int})
    return local.groupby(["run_id", "tgid", "llc"])["pages"].sum()


def micro_counts(frame: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Per run (run_id) the micro-schedules of all its processes up to the job's ROI's end,
    and how many of them were undone (NaN where the events do not say)."""
    if events.empty or "run_id" not in events or "roi_end_s" not in frame:
        return pd.DataFrame(columns=["micro", "undone"])
    end = frame.set_index("run_id")["roi_end_s"]
    micro = events[(events["event"] == "micro")
                   & (events["time_s"] <= events["run_id"].map(end))]
    undone = (micro["undone"].astype("boolean") if "undone" in micro
              else pd.Series(pd.NA, index=micro.index, dtype="boolean"))
    return pd.DataFrame({"micro": micro.groupby("run_id").size(),
                         "undone": undone.groupby(micro["run_id"]).sum(min_count=1)})


def _placement(programs: pd.DataFrame, frame: pd.DataFrame, events: pd.DataFrame,
               policy: str, ctx: FigureContext, dest: Path) -> Path:
    """Fig. 17's placements: per run, the programs on each last-level cache in the job's
    ROI under the default scheduler and under ``policy``, side by side, with the IPC
    changes they led to and ``policy``'s micro-schedules."""
    placed = programs.dropna(subset=["llc"]).astype({"llc": int})
    placed = placed.assign(kind=program_kind(placed))
    moved = moved_in_roi(frame, events)
    changes = program_changes(programs, policy, moved).set_index(["machine", "benchmark",
                                                                  "rep", "kind"])
    moves = micro_counts(frame, events)
    mapped = region_pages_at_roi(frame, events)
    mapped_share = mapped / mapped.groupby(level=["run_id", "tgid"]).transform("sum")
    machines = list(dict.fromkeys(placed["machine"]))
    rows = {m: list(dict.fromkeys(map(tuple, placed.loc[placed["machine"] == m,
                                                        ["benchmark", "rep"]].to_numpy())))
            for m in machines}
    heights = [len(rows[m]) + 1.5 for m in machines]
    fig, axes = plt.subplots(len(machines), 1, figsize=(14, 0.5 * sum(heights) + 1.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, machine in zip(axes[:, 0], machines):
        mine = placed[placed["machine"] == machine]
        # Per machine, as its programs panel has them: the same role, the same colour.
        colour = {k: PROGRAM_COLOURS[i % len(PROGRAM_COLOURS)]
                  for i, k in enumerate(program_kinds(mine))}
        caches = sorted(mine["llc"].unique())
        names = _cache_names(machine, caches)
        columns = [(p, c) for p in ("vanilla", policy) for c in caches]
        for x, (pol, cache) in enumerate(columns):
            ax.text(x + 0.5, -0.6, names[cache], ha="center", va="center", fontsize=7)
        for x, pol in ((0, "default scheduler"), (len(caches), policy)):
            ax.text(x + len(caches) / 2, -1.2, pol, ha="center", va="center", fontsize=8,
                    weight="bold")
        ax.text(len(columns) + 0.1, -0.6, "IPC change", ha="left", va="center", fontsize=7)
        for y, (bench, rep) in enumerate(rows[machine]):
            ax.text(-0.05, y + 0.5, f"{bench}, rep {rep}", ha="right", va="center",
                    fontsize=7)
            for x, (pol, cache) in enumerate(columns):
                ax.add_patch(plt.Rectangle((x, y), 1, 1, fill=False, linewidth=0.5))
                here = mine[(mine["benchmark"] == bench) & (mine["rep"] == rep)
                            & (mine["policy"] == pol) & (mine["llc"] == cache)]
                for k, (_, p) in enumerate(here.sort_values("is_job",
                                                             ascending=False).iterrows()):
                    shares = [f"{100 * p['llc_share']:.0f} %"] if p["llc_share"] < 0.995 else []
                    regions = mapped_share.get((p["run_id"], int(p["pid"]), cache))
                    if regions is None and (p["run_id"], int(p["pid"])) in mapped_share:
                        regions = 0.0           # its regions all lay on other caches
                    if regions is not None and regions < 0.995:
                        shares.append(f"regions {100 * regions:.0f} %")
                    said = ("†" if (p["run_id"], int(p["pid"])) in moved else "") + (
                        f" ({'; '.join(shares)})" if shares else "")
                    ax.text(x + 0.04, y + (k + 0.75) / (len(here) + 0.5),
                            short_program_name(p["program"]) + said, fontsize=6.5,
                            va="center", color=colour[p["kind"]],
                            weight="bold" if p["is_job"] else "normal")
            said = [f"{name} {changes.loc[key, 'change']:+.1f} %"
                    + (" †" if changes.loc[key, "moved"] else "") for name, key in (
                (bench, (machine, bench, rep, "the benchmark")),
                ("all", (machine, bench, rep, "all programs"))) if key in changes.index]
            run = frame[(frame["machine"] == machine) & (frame["benchmark"] == bench)
                        & (frame["rep"] == rep) & (frame["policy"] == policy)]["run_id"]
            if len(run) and run.iloc[0] in moves.index:
                n, undone = moves.loc[run.iloc[0]]
                said.append(f"{int(n)} micro-schedules"
                            + (f", {int(undone)} undone" if pd.notna(undone) else ""))
            ax.text(len(columns) + 0.1, y + 0.5, "\n".join(said), ha="left", va="center",
                    fontsize=6.5)
        ax.set_xlim(-1.6, len(columns) + 1.3)
        ax.set_ylim(len(rows[machine]) + 0.05, -1.5)
        ax.axvline(len(caches), color="black", linewidth=1.5)
        ax.set_title(machine, fontsize=8, loc="left")
        ax.axis("off")
    return finish(fig, ctx, dest, "Where each program ran in the job's ROI: the last-level "
                  "cache it spent most of the ROI on (sched_switch trace; the share when "
                  "under 100 %; under region balancing also the share of its regions' pages "
                  "mapped to that cache when the ROI began, when under 100 %; †: moved "
                  "inside the ROI, so its attributed IPC counts the kernel's work of its "
                  "moves), named by the "
                  "arguments that tell the programs apart (memlat's: the size of one of its "
                  "two regions), the benchmark in bold; "
                  "left the default scheduler's run, right the same repetition (start order "
                  f"and seeds) under {policy}; on the right the IPC change of the benchmark "
                  "and, as all, the mean IPC ratio of the programs not moved inside the ROI "
                  "(per-task attribution), and "
                  f"{policy}'s micro-schedules of all the run's programs up to the ROI's end "
                  "(undone: the thread ran on outside the region's cache, pulled back by the "
                  "idle balancer of the CPU it had left)."
                  + _timing_note(ctx))


def _benchmarks(frame: pd.DataFrame, events: pd.DataFrame, experiment, ctx: FigureContext,
                dest: Path, region_policy: str,
                programs: pd.DataFrame | None = None) -> list[Path]:
    metric = experiment.metric
    if not _has(frame, metric):
        metric = "micro_per_s"          # QEMU: no attributed IPC
    # The default scheduler makes no micro-schedules: its runs (all of a partial figure's,
    # maybe) count none.
    frame = frame.assign(micro_per_s=frame["micro_per_s"].fillna(0.0)
                         if "micro_per_s" in frame else 0.0)
    machines = _per_machine(frame)
    panels = _benchmark_panels(frame, metric)
    changes = program_changes(programs if programs is not None else pd.DataFrame(),
                              region_policy, moved_in_roi(frame, events))
    any_moved = (bool(changes["moved"].astype(bool).any())
                 or ("micro_in_roi" in frame and bool((frame["micro_in_roi"] > 0).any())))
    if len(changes):    # a mix: what the policy did to every program, not the job alone
        panels.insert(1, ("programs", "ipc"))
        panels = [("mix moves", "micro") if kind == "policy" else (kind, column)
                  for kind, column in panels]
    fig, axes = plt.subplots(len(panels), len(machines),
                             figsize=(6.5 * len(machines), 3.2 * len(panels)), squeeze=False)
    for col, machine in enumerate(machines):
        sel = frame[frame["machine"] == machine]
        for row, (kind, column) in enumerate(panels):
            ax = axes[row][col]
            if kind == "counts":
                _counts_panel(ax, sel, region_policy)
            elif kind == "mix moves":
                _mix_moves_panel(ax, sel, events, region_policy)
            elif kind == "programs":
                _programs_panel(ax, changes[changes["machine"] == machine],
                                list(dict.fromkeys(sel["benchmark"])), region_policy)
            else:   # "pair"; "policy": a count the default scheduler lacks (its bars 0)
                default = "default scheduler" + (" (none)" if kind == "policy" else "")
                paired_bars(ax, sel, column, "benchmark", "policy", ("vanilla", region_policy),
                            (default, region_policy))
            if row == 0:    # on the left: the legend is above the axes on the right
                ax.set_title(machine, fontsize=8, loc="left")
        axes[-1][col].set_xlabel("benchmark (the job; fig17: beside two large and one small "
                                 "memlat)", fontsize=8)
        # The job's attributed counters hold the kernel's work of its moves in the ROI.
        moved = set(sel.loc[sel["micro_in_roi"].fillna(0) > 0, "benchmark"]
                    if "micro_in_roi" in sel else ())
        for ax in axes[:, col]:
            ax.set_xticklabels([re.sub(r"^[^\n]+", lambda m: m.group(0) + (
                "†" if m.group(0) in moved else ""), t.get_text())
                for t in ax.get_xticklabels()])
    shown = {
        "pair": lambda c: metric_label(c) + (
            "" if metric_label(c).startswith("the job's") else " of the job") + " in the ROI" + (
            " (gem5 task attribution)" if c.startswith("task_") else
            "; QEMU has no IPC: its micro-schedules per second of the ROI instead"),
        "policy": lambda c: "the job's micro-schedules per second of the ROI (trace)",
        "programs": lambda c: f"the IPC change of each program of the mix under "
                              f"{region_policy}, the same repetition (start order and seeds) "
                              f"of the default scheduler's as the base (bars: mean; dots: each "
                              f"repetition and program; all programs: the mean of their IPC "
                              f"ratios; per-task attribution; programs moved inside the ROI "
                              f"are left out, their count under the benchmark)",
        "mix moves": lambda c: f"{region_policy}'s micro-schedules of all the programs of "
                               f"each run from its start to the ROI's end, one bar per "
                               f"repetition (undone: the thread ran on outside the region's "
                               f"cache; top left, how many of the job's fell in the ROI)",
        "counts": lambda c: "its region merges and teardowns from its start to the ROI's "
                            "end (/proc/<pid>/sched_regions, symmetric log scale)",
    }
    rows = "; ".join(f"row {i + 1}: {shown[kind](column)}"
                     for i, (kind, column) in enumerate(panels))
    main = finish(fig, ctx, dest, WHISKERS + f"; % change of {region_policy} over the "
                  f"default scheduler above each pair{CHANGE_NOTE}. {rows}."
                  + (f" {MOVED_NOTE}" if any_moved else "")
                  + _timing_note(ctx))
    return [main, _timeline(events, frame, region_policy, ctx,
                            dest.with_name(dest.stem + "--caches.png"))]


def _timeline(events: pd.DataFrame, frame: pd.DataFrame, policy: str, ctx: FigureContext,
              dest: Path) -> Path:
    """Regions and pages per cache over time, for the first run of ``policy``."""
    runs = frame[frame["policy"] == policy]["run_id"].tolist()
    run_id = next((r for r in runs if len(events) and (events["run_id"] == r).any()), None)
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    if run_id is not None:
        line = cache_timeline(events, run_id)
        roi = frame[frame["run_id"] == run_id].iloc[0]
        names = _cache_names(roi["machine"], sorted(line["llc"].unique()))
        for k, (llc, g) in enumerate(line.groupby("llc")):
            # Balanced caches carry equal loads: dashes keep a line hidden by another visible.
            style = {"color": CACHE_COLOURS[k % len(CACHE_COLOURS)],
                     "linestyle": ("-", "--", ":", "-.")[k % 4], "linewidth": 2.4 - 0.5 * (k % 4),
                     "label": names[llc]}
            axes[0].step(g["time_s"], g["regions"], where="post", **style)
            axes[1].step(g["time_s"], g["pages"] * 4 / 1024, where="post", **style)
        for ax in axes:
            if pd.notna(roi.get("roi_start_s")):
                ax.axvspan(roi["roi_start_s"], roi["roi_end_s"], color="grey", alpha=0.2,
                           label="ROI")
            ax.legend(fontsize=7)
        axes[0].set_title(f"{run_id} ({policy})", fontsize=8)
    axes[0].set_ylabel("regions mapped", fontsize=8)
    axes[1].set_ylabel("pages mapped (MiB)", fontsize=8)
    axes[1].set_xlabel("time after the job's exec (s, the kernel's trace clock)", fontsize=8)
    return finish(fig, ctx, dest, "Regions of all the run's processes mapped to each "
                  "last-level cache (sched_region_change events replayed), and their pages "
                  "(the kernel's cache load uses working-set estimates instead); grey: the "
                  "job's ROI." + _timing_note(ctx))


def _consolidation(frame: pd.DataFrame, panels: list[tuple[tuple[str, ...], str]],
                   ctx: FigureContext, dest: Path, caption: str) -> list[Path]:
    """Bars per condition, one row of panels per (metrics, y label) with data, one column
    per machine."""
    panels = [(ms, label) for ms, label in panels
              if any(m in frame and frame[m].notna().any() for m in ms)]
    machines = _per_machine(frame)
    fig, axes = plt.subplots(len(panels), len(machines), figsize=(6 * len(machines),
                             4 * len(panels)), squeeze=False)
    conditions = ("alone", "vanilla", "region-partition")
    width = 0.8 / len(conditions)
    for row, (metrics, ylabel) in zip(axes, panels):
        for ax, machine in zip(row, machines):
            sel = frame[frame["machine"] == machine]
            for k, cond in enumerate(conditions):
                part = sel[sel["condition"] == cond]
                stats = [condition_stats(part.assign(_=0), m, ["_"]) if m in part else
                         pd.DataFrame() for m in metrics]
                means = [s["mean"].iloc[0] if len(s) else math.nan for s in stats]
                sds = [s["std"].iloc[0] if len(s) else math.nan for s in stats]
                xs = np.arange(len(metrics)) + (k - 1) * width
                # Times and counts are not negative: the lower whisker stops at zero.
                low = np.minimum(2 * np.asarray(sds), np.nan_to_num(np.asarray(means)))
                ax.bar(xs, means, width, yerr=[low, 2 * np.asarray(sds)], capsize=3,
                       color=POLICY_COLOURS[cond], label=f"{cond} (n={len(part)})")
                # With two runs a bar, the runs themselves say more than their spread.
                for x, m in zip(xs, metrics):
                    if m in part:
                        ax.plot([x] * part[m].notna().sum(), part[m].dropna(), "o",
                                color="black", markersize=3, zorder=3)
            ax.set_xticks(range(len(metrics)),
                          [textwrap.fill(metric_label(m), 26) for m in metrics], fontsize=7)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_title(machine, fontsize=8)
            ax.legend(fontsize=7)
    whiskers = WHISKERS.replace("deviations;", "deviations, cut at zero; dots: the runs;")
    return [finish(fig, ctx, dest, whiskers + ". " + caption
                   + _timing_note(ctx))]


def _response_ecdf(frame: pd.DataFrame, responses: pd.DataFrame, ctx: FigureContext,
                   dest: Path) -> Path:
    """Fig. 24: the distribution of the media server's response times over the requests
    that arrived in its ROI, per machine and condition, the repetitions pooled."""
    roi = responses[responses["in_roi"].astype(bool)]
    machines = _per_machine(roi)
    fig, axes = plt.subplots(1, len(machines), figsize=(max(9, 6 * len(machines)), 7),
                             squeeze=False)
    for ax, machine in zip(axes[0], machines):
        sel = roi[roi["machine"] == machine]
        late_x, late_y = [], []
        for cond in ("alone", "vanilla", "region-partition"):
            part = sel[sel["condition"] == cond].sort_values("response_ms", kind="stable")
            times = part["response_ms"].to_numpy()
            if len(times):
                shares = np.arange(1, len(times) + 1) / len(times)
                runs = part["run_id"].nunique()
                ax.step(times, shares, where="post", color=POLICY_COLOURS[cond],
                        label=f"{cond} ({len(times)} requests, {runs} run"
                              f"{'s' if runs != 1 else ''})")
                if "late_wakeup" in part:
                    late = part["late_wakeup"].eq(True).to_numpy()
                    late_x += list(times[late])
                    late_y += list(shares[late])
        if late_x:
            ax.plot(late_x, late_y, "x", color="black", markersize=7,
                    label="a request pending while one of its threads was woken late onto "
                          "an idle CPU")
        rates = frame[frame["machine"] == machine].get("rate", pd.Series(dtype=float))
        for rate in rates.dropna().unique():
            ax.axvline(1e3 / rate, color="black", linestyle="--", linewidth=0.8,
                       label=f"deadline: the period, {1e3 / rate:g} ms")
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_xlabel("response time (ms, guest clock; log scale)", fontsize=8)
        ax.set_ylabel("fraction of the ROI's requests\nanswered within that time", fontsize=8)
        ax.set_title(machine, fontsize=8, loc="left")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=7, loc="lower right")
    return finish(fig, ctx, dest, "The media server's response times (completion minus "
                  "arrival, each request's own, from its responses.csv) over the requests that "
                  "arrived in its ROI (on QEMU its whole life), as cumulative distributions: "
                  "alone, beside omnetpp with the default scheduler, beside it with "
                  "partitioning that favours the media server; the repetitions pooled. x: "
                  f"a request during which {LATE_WAKEUP} (traced in the default scheduler's "
                  "runs only). The percentiles per run: the --percentiles figure."
                  + _timing_note(ctx))


# What a request marked ``late_wakeup`` waited for, as Fig. 24's captions say it.
LATE_WAKEUP = (f"one of the server's threads waited more than {wakeups.LATE_US:.0f} µs for an "
               "idle CPU to notice its wake-up (gem5 loses some: configs/README.md, "
               "'Periodic tick')")


def _late_wakeup_note(responses: pd.DataFrame | None) -> str:
    """Fig. 24's percentiles: how many runs' slowest request was pending at a late wake-up
    (a run's maximum and, with some 80 requests, most of its 99th percentile)."""
    if responses is None or "late_wakeup" not in responses:
        return ""
    roi = responses[responses["in_roi"].astype(bool)].dropna(subset=["late_wakeup"])
    if roi.empty:
        return ""
    slowest = roi.loc[roi.groupby("run_id")["response_ms"].idxmax()]
    late = int(slowest["late_wakeup"].astype(bool).sum())
    if not late:
        return ""
    return (f" In {late} of the {len(slowest)} runs that traced their wake-ups, the slowest "
            f"request was pending while {LATE_WAKEUP}, which sets that run's maximum and most "
            f"of its 99th percentile.")


def draw(experiment, tables: dict[str, pd.DataFrame], ctx: FigureContext,
         dest: Path) -> list[Path]:
    frame, events = tables[""], tables.get("events", pd.DataFrame())
    name = experiment.name
    if name == "lee-fig9":
        return _fig9(frame, ctx, dest)
    if name == "lee-overheads":
        return _overheads(frame, ctx, dest)
    if name == "lee-fig17":
        programs = tables.get("programs")
        placed = (programs is not None and "llc" in programs
                  and programs["llc"].notna().any())
        return _benchmarks(frame, events, experiment, ctx, dest, "region-balance",
                           programs) + (
            [_placement(programs, frame, events, "region-balance", ctx,
                        dest.with_name(dest.stem + "--placement.png"))] if placed else [])
    if name == "lee-fig18-23":
        return _benchmarks(frame, events, experiment, ctx, dest, "region-unify")
    if name == "lee-fig24":
        responses = tables.get("responses")
        first = ([_response_ecdf(frame, responses, ctx, dest)]
                 if responses is not None and len(responses) else [])
        bars = dest.with_name(dest.stem + "--percentiles.png") if first else dest
        return first + _consolidation(
            frame, [(("roi_p50_ms", "roi_p90_ms", "roi_p99_ms", "roi_max_ms"),
                     "response time (ms, guest clock)")], ctx, bars,
            "The media server's response-time percentiles over the requests that arrived "
            "in its ROI (its own measurement; on QEMU its whole life): alone, beside omnetpp "
            "with the default scheduler, beside it with partitioning that favours the media "
            "server." + _late_wakeup_note(responses))
    if name == "lee-fig25":
        return _consolidation(frame, [(("roi_ms_per_row", "roi_cpu_ms_per_row"),
                                       "ms per image row (guest clock)"),
                                      (("task_l1d_mpki", "task_llc_mpki"),
                                       "misses per 1000 instructions")], ctx, dest,
                              "The ray tracer's elapsed time and CPU time (all its threads) "
                              "per row it rendered in its ROI (on QEMU its whole life; on "
                              "gem5 the ROI ends with the program or at its bound), "
                              "alone and beside omnetpp; on gem5 also the misses of its main "
                              "thread (one of its two rendering threads; per-task "
                              "attribution).")
    raise ValueError(f"no figure for {name}")


def summary(experiment, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Fig. 9 and the overheads: unification over confinement per condition, with the
    95 % interval of the change (Welch's t); the others: the metric per condition and policy."""
    from schedlab.analysis.metrics import paired_summary
    frame = tables[""]
    if frame.empty:
        return pd.DataFrame()
    if experiment.name == "lee-overheads" and len(cost := micro_schedule_cost(frame)):
        per_point = cost.drop(columns="rep").groupby(["machine", "region_size",
                                                     "access_time"])
        return per_point.mean().reset_index().assign(runs=per_point.size().to_numpy())
    if experiment.name in ("lee-fig9", "lee-overheads"):
        f = frame.assign(condition=frame["machine"] + " " + _condition(frame))
        return paired_summary(f, "roi_accesses_per_sec", "condition", "policy",
                              "region-confine", "region-unify")
    group = "benchmark" if "benchmark" in frame else "condition"
    metric = experiment.metric if experiment.metric in frame else "wall_s"
    return condition_stats(frame, metric, ["machine", group, "policy"])
