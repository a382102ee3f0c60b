"""Figs. 24 and 25: consolidation (alone, beside omnetpp, partitioned) and the media
server's response times.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from schedlab.analysis import wakeups
from schedlab.analysis.figures import (WHISKERS, FigureContext, condition_stats, metric_label,
                                       plain_log_ticks)
from schedlab.analysis.lee.common import POLICY_COLOURS, _per_machine, _timing_note, finish


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
