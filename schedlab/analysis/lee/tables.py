"""Study 3's compact tables from its run directories: ``collect``; their columns are
declared in :mod:`schedlab.analysis.lee.schema`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from schedlab.analysis import placement, wakeups
from schedlab.analysis.slices import roi_marks, trace_lost_events
from schedlab.analysis.tables import rows
from schedlab.analysis.lee.trace import job_trace, mark_undone, parse_region_trace, region_counters


def collect(run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The compact tables of study 3's runs, by part: their columns are ``schema.SCHEMAS``."""
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
