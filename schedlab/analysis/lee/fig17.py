"""Fig. 17's placements: the programs on each last-level cache in the job's ROI."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis.figures import FigureContext
from schedlab.analysis.lee.common import PROGRAM_COLOURS, _cache_names, _timing_note, finish
from schedlab.analysis.lee.programs import (micro_counts, moved_in_roi, program_changes,
                                            program_kind, program_kinds, region_pages_at_roi,
                                            short_program_name)


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
