"""Measurements of the programs of a mix (Figs. 17 and 18-23): their kinds, IPC changes,
moves and regions.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd


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


def program_kinds(changes: pd.DataFrame) -> list[str]:
    """The kinds in ``changes`` (``program_changes``, or programs with their
    ``program_kind``) in the order their bars take (and their colours, PROGRAM_COLOURS in
    turn): the benchmark, the others as they come, all programs."""
    others = [k for k in dict.fromkeys(changes["kind"]) if k not in ("the benchmark",
                                                                      "all programs")]
    return ["the benchmark", *others, "all programs"]


def short_program_name(program: str) -> str:
    """A program's name with its telling arguments' values only:
    ``memlat(region-size=2MiB) #1`` -> ``memlat 2MiB #1``."""
    return re.sub(r"\(([^)]*)\)",
                  lambda m: " " + ", ".join(a.split("=", 1)[-1] for a in m.group(1).split(", ")),
                  program)


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
