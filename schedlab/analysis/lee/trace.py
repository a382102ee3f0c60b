"""Study 3's region trace and /proc counters: parsing, one job's numbers, timelines.

Every region policy traces ``sched_region_change`` (a region formed from seeds: regular;
mapped to a cache: local, with the cache; unmapped: regular; merged away or torn down:
seed), ``sched_region_micro_schedule`` (a thread moved to the cache of the region it
touched) and ``sched_process_exec`` (a program's start). A job's region of interest
begins at its launcher's mark in the trace (``schedlab-roi-begin``, written as the launcher
resets gem5's statistics) and lasts the job's ``duration`` (the launcher's stop timer, armed
after the mark). A trace without the marks (the QEMU runs of tests/data/lee) places it
``warmup`` after the exec instead: a few tenths of a millisecond late on gem5 (the warm-up
counts from the fork, before the exec), which put the job's exit on the stop inside it.

The trace does not count merges of single pages into regions, nor tell a teardown from a
merge (both free a region); those counters are in ``/proc/<pid>/sched_regions``, which the
launcher copies when a job's warm-up ends and just before the stop that ends its ROI
(``region_counters``; absent for a job that ended by itself). A cache's load here is the
pages of the regions mapped to it (the kernel's load uses working-set estimates). On QEMU
the trace clock ("global": TCG's TSC is unstable) and the guest's clock may differ by tens
of milliseconds, so the ROI's edges on the trace's clock are that uncertain there; the exec
anchors both on the trace's clock, so only the launcher's own delay (fork to exec)
separates them.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd


_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<ctx>\d+)\s+\[(?P<on>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+):"
                   r" (?P<event>sched_\w+): (?P<rest>.*)$")
_FIELDS = re.compile(r"(\w+)=(\S+)")


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
    """The trace's numbers of one job (their columns: ``schema.MAIN``); ``marks``: the
    launcher's ROI marks of the job (``slices.roi_marks``), none in older traces. The ROI
    ends at its duration or, if the job was reaped first (the end mark, which the launcher
    writes at the duration's stop or, for a job that ended before it, after reaping it;
    without marks its exec plus its wall time), at its exit: the unmapping of its regions
    there, which is no change of the ROI, or without regions that bound."""
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
