"""Fig. 9 (unification over confinement) and the overheads (the cost of a micro-schedule)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.backends.backend import get_backend
from schedlab.analysis.figures import (CHANGE_NOTE, WHISKERS, FigureContext, condition_stats,
                                       paired_bars, whiskers)
from schedlab.analysis.lee.common import (CACHE_COLOURS, POLICY_COLOURS, _per_machine,
                                          _timing_note, finish)
from schedlab.analysis.lee.costs import (PAPER_MICRO_RATE, _condition, micro_schedule_cost,
                                         normalised)


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
        axes[1, col].bar(xs, stats["mean"], yerr=whiskers(stats), capsize=3,
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
    cost = micro_schedule_cost(frame) if get_backend(ctx.backend).timing_model else pd.DataFrame()
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
