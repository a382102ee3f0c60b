"""The columns of study 3's tables, declared: one schema per part that ``collect`` returns.

Each schema lists the columns study 3's own code adds (``tables.collect`` and what it calls:
``trace.job_trace``, ``trace.region_counters``, ``schedlab.analysis.wakeups.columns``,
``schedlab.analysis.placement``), with their type, unit and meaning. The generic columns are
not repeated: every table starts with the run's coordinates (``run_id``, ``machine``,
``policy`` and its label's keys), and the main table's rows are
``schedlab.analysis.tables.rows``' (the job, its exit and wall time, the program's own
numeric ``key=value`` output, on gem5 ``gem5_*`` and with attribution ``task_*``, the run's
provenance). A column with a condition (``when``: a key of ``WHEN``) is there only in the
tables of runs where that holds; the columns of one condition come and go together.
tests/test_lee_schema.py holds the committed tables and those collected from the test runs
to these declarations both ways.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, the type of its values (NaN aside), its unit ("" for
    a name, a flag or a pure number), what it holds and when it is there (``WHEN``)."""
    name: str
    dtype: type
    unit: str
    meaning: str
    when: str = ""


@dataclass(frozen=True)
class Schema:
    """A table part's rows and declared columns, and where its other columns come from."""
    part: str
    rows: str
    columns: tuple[Column, ...]
    generic: str

    def names(self, when: str | None = None) -> list[str]:
        """The declared columns (of one condition, "" for those always there)."""
        return [c.name for c in self.columns if when is None or c.when == when]

    def problems(self, columns, generic=None) -> list[str]:
        """How a table of this part with ``columns`` breaks the schema: a column always there
        missing, a condition's columns there only in part and, given the table's ``generic``
        columns (its coordinates, ``tables.rows``' and so on), a column neither declared nor
        generic. An empty table (a part the runs have no rows for) breaks nothing."""
        have = set(columns)
        if not have:
            return []
        out = [f"{self.part or 'main'}: no {name}" for name in self.names("") if name not in have]
        for when in dict.fromkeys(c.when for c in self.columns if c.when):
            names = self.names(when)
            missing = [n for n in names if n not in have]
            if missing and len(missing) < len(names):
                out.append(f"{self.part or 'main'}: {when} columns in part, no {missing}")
        if generic is not None:
            extra = have - set(self.names()) - set(generic)
            out += [f"{self.part or 'main'}: {name} not declared" for name in sorted(extra)]
        return out

    def frame(self) -> pd.DataFrame:
        """The schema as a table (to print in a notebook or a report)."""
        return pd.DataFrame([{"column": c.name, "type": c.dtype.__name__, "unit": c.unit,
                              "when": c.when, "meaning": c.meaning} for c in self.columns])


# The conditions under which a column is there: the runs whose tables have it.
WHEN = {
    "": "always",
    "trace": "the run has a trace (artifacts/trace.txt)",
    "exec": "the trace holds the job's exec (the ROI is placed from it)",
    "undone": "the trace names the CPU each micro-schedule's thread wrote it on and the "
              "machine's caches are known (tables collected since micro-schedules were "
              "marked undone, commit 0093768)",
    "regions": "the launcher copied the job's /proc/<pid>/sched_regions at its ROI's end "
               "(a region policy, and the launcher's stop ended the ROI)",
    "wakeups": "the run traced sched_waking (the default scheduler's runs) and the launcher "
               "marked the ROI",
    "placement": "the launcher marked the ROI and the run traced its switches (the default "
                 "scheduler's and region balancing's runs)",
    "raytracer": "the job reports the rows of its ROI (the ray tracer)",
    "frames": "memlat ran with --frames seeded (it reports frames_fnv)",
}

COORDINATES = ("run_id", "machine", "policy")   # and the keys of the run's label


def _counter(name: str, meaning: str) -> tuple[Column, Column]:
    return (Column(name, int, "", f"{meaning}, from the job's start to its ROI's end",
                   "regions"),
            Column(f"{name}_in_roi", float, "",
                   f"{meaning} inside the ROI (NaN without the copy at its begin)", "regions"))


MAIN = Schema("", "one row per job repetition", (
    Column("cpu_s", float, "s", "the job's user + system time"),
    Column("warmup_s", float, "s", "the job's requested warm-up (0 without one)"),
    Column("roi_ms_per_row", float, "ms",
           "the ray tracer's elapsed time per row of its ROI, whatever ended it", "raytracer"),
    Column("roi_cpu_ms_per_row", float, "ms",
           "the ray tracer's CPU time (all its threads) per row of its ROI", "raytracer"),
    Column("frames_fnv", str, "",
           "memlat's hash of its arrays' page frames (which pages it had)", "frames"),
    *_counter("merges", "seeds or regions merged in regioning phases"),
    *_counter("teardowns", "largest local regions torn down into seeds"),
    *_counter("opens", "regions remapped to the toucher's cache instead"),
    *_counter("touch_faults", "hinting faults taken on regioned pages"),
    *_counter("reverts", "times the revert rule unmapped the regions"),
    *_counter("scans", "access-bit scans"),
    Column("wake_wakeups", int, "", "the job's threads' wake-ups in its ROI", "wakeups"),
    Column("wake_onto_idle", int, "", "of them, onto an idle CPU", "wakeups"),
    Column("wake_late", int, "", "of those, late (more than wakeups.LATE_US)", "wakeups"),
    Column("wake_late_share", float, "", "late ones over those onto idle CPUs", "wakeups"),
    Column("wake_prompt_median_us", float, "us",
           "the median latency of the prompt wake-ups onto idle CPUs", "wakeups"),
    Column("wake_late_added_ms", float, "ms",
           "the time the late ones added beyond that median", "wakeups"),
    Column("wake_slow", int, "", "wake-ups (onto any CPU) that took more than LATE_US",
           "wakeups"),
    Column("wake_max_us", float, "us", "the longest wake-up latency", "wakeups"),
    Column("llc_placement", str, "",
           "each cache's programs, by the cache they were on most in the ROI, with that share "
           "where under 100 % (placement.describe)", "placement"),
    Column("placement_share", float, "",
           "the smallest such share (1: no program was on two caches)", "placement"),
    Column("trace_lost_events", int, "", "events the trace's ring buffers lost", "trace"),
    Column("micro_schedules", int, "", "the job's micro-schedules in the whole trace",
           "trace"),
    Column("regions_formed", int, "", "the job's regions formed (from seeds)", "trace"),
    Column("regions_freed", int, "", "the job's regions merged away or torn down", "trace"),
    Column("maps", int, "", "mappings of the job's regions to a cache", "trace"),
    Column("unmaps", int, "", "unmappings of the job's regions", "trace"),
    Column("micro_undone", int, "",
           "the job's micro-schedules after which it ran on outside the region's cache "
           "(trace.mark_undone)", "undone"),
    Column("micro_undone_in_roi", int, "", "of them, inside the ROI", "undone"),
    Column("roi_start_s", float, "s", "the ROI's start, after the job's exec (trace clock)",
           "exec"),
    Column("roi_end_s", float, "s", "the ROI's end, after the job's exec (trace clock)",
           "exec"),
    Column("first_local_s", float, "s", "when the job's first region was mapped, after its "
           "exec (NaN: never)", "exec"),
    Column("local_at_roi", int, "", "the job's regions mapped when the ROI began", "exec"),
    Column("caches_at_roi", int, "", "the caches holding them", "exec"),
    Column("largest_local_pages", int, "pages", "the largest of them", "exec"),
    Column("micro_in_roi", int, "", "the job's micro-schedules inside the ROI", "exec"),
    Column("micro_per_s", float, "1/s", "the same per second of the ROI (without a duration: "
           "of the job's life)", "exec"),
    Column("changes_in_roi", int, "",
           "region changes inside the ROI (a regioning phase ran there)", "exec"),
    Column("ended_in_roi", bool, "", "the job exited before its duration, ending its ROI "
           "(NaN without a duration)", "exec"),
), "schedlab.analysis.tables.rows: coordinates, the job, the program's numeric key=value "
   "output, gem5_* and task_* counters, provenance")

EVENTS = Schema("events", "one row per region tracepoint of the run's processes", (
    Column("time_s", float, "s", "after the job's exec (trace clock)"),
    Column("event", str, "", "change or micro"),
    Column("tgid", int, "", "the process"),
    Column("whose", str, "", "job or background"),
    Column("region", int, "", "the region's id in its process"),
    Column("type", str, "", "a change's new type: seed, regular or local"),
    Column("llc", int, "", "the cache (its first CPU) a change mapped the region to, or a "
           "micro-schedule moved the thread to (-1: none)"),
    Column("pages", int, "pages", "a change's region's size"),
    Column("src_cpu", int, "", "the CPU a micro-schedule moved the thread from"),
    Column("dst_cpu", int, "", "the CPU it moved the thread to"),
    Column("on_cpu", int, "", "the CPU the thread wrote the micro-schedule's event on: the "
           "one it ran on next"),
    Column("undone", bool, "", "a micro-schedule after which the thread ran on outside the "
           "region's cache (NaN: not known)"),
), "coordinates")

RESPONSES = Schema("responses", "one row per request of the media server (its responses.csv)", (
    Column("job", str, "", "the job (the media server)"),
    Column("job_rep", int, "", "the job's repetition in its run"),
    Column("arrival_ms", float, "ms", "the request's arrival after its ROI's start (the "
           "server's clock)"),
    Column("response_ms", float, "ms", "its completion minus its arrival"),
    Column("in_roi", int, "", "1: it arrived inside the ROI (the server writes 0 or 1)"),
    Column("late_wakeup", bool, "", "one of the job's threads was woken late onto an idle "
           "CPU while the request was pending", "wakeups"),
), "coordinates")

PROGRAMS = Schema("programs", "one row per program of the run: the job (by its main thread) "
                  "and the background programs", (
    Column("job", str, "", "the run's job"),
    Column("job_rep", int, "", "the job's repetition in its run"),
    Column("program", str, "", "the program's name (alike ones numbered: #1, #2)"),
    Column("is_job", bool, "", "the program is the job"),
    Column("pid", int, "", "its process id"),
    Column("llc", int, "", "the cache (its first CPU) it was on most in the ROI"),
    Column("llc_share", float, "", "the share of its ROI it was there"),
), "coordinates; on gem5 with per-task attribution its IPC and misses in the job's ROI "
   "(schedlab.backends.gem5.stats.task_metrics: ipc, insts, cycles, llc_mpki, ...)")

SCHEMAS = {s.part: s for s in (MAIN, EVENTS, RESPONSES, PROGRAMS)}
