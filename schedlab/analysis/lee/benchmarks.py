"""Figs. 18-23 (and Fig. 17's bars): benchmarks under the default scheduler and a region
policy, the programs of a mix, and the cache timeline.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis.figures import (CHANGE_NOTE, WHISKERS, FigureContext, condition_stats,
                                       metric_label, paired_bars, programs_note, whiskers)
from schedlab.analysis.lee.common import (CACHE_COLOURS, PROGRAM_COLOURS, _cache_names,
                                          _per_machine, _timing_note, finish)
from schedlab.analysis.lee.programs import (micro_counts, moved_in_roi, program_changes,
                                            program_kinds)
from schedlab.analysis.lee.trace import cache_timeline


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
        ax.bar(xs, stats["mean"], 0.38, yerr=whiskers(stats), capsize=3, color=colour,
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


MOVED_NOTE = ("†: micro-scheduled inside the ROI (the job, in a benchmark's name: in at least "
              "one repetition); per-task attribution charges a task what its CPU executes "
              "between its switches, the kernel's work for it included, so a moved "
              "program's counters hold its moves' page-protection changes of its regions "
              "(the more pages, the more: Fig. 9's overheads) and its IPC is not its own "
              "progress.")


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
        note = programs_note(sel)
        axes[-1][col].set_xlabel("benchmark (the job; fig17: beside two large and one small "
                                 "memlat)" + (f"\n{note}" if note else ""), fontsize=8)
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
