"""Study 1's figures: high vs low cache affinity, per benchmark.

Figures 2 and 3 compare, per benchmark, the run next to BV_0 (high L1 affinity) with the run
next to BV_L1I (low); Figures 4 to 7 HI_AFF with LOW_AFF. Bars are means over repetitions,
whiskers two standard deviations, and the % change of low over high is printed above each
pair, as in the paper. The metric is the benchmark's own (per-task attribution).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis.figures import WHISKERS, FigureContext, finish, paired_bars


def draw(experiment, frame: pd.DataFrame, ctx: FigureContext, dest: Path) -> list[Path]:
    metric = experiment.metric
    if metric not in frame:
        # QEMU runs have no per-task counters: the benchmark's elapsed time is what is
        # left, and it shows placement, not caches.
        metric = "wall_s"
    if experiment.name == "kazempour-expA":
        return [_every_condition(frame, metric, ctx, dest)]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    paired_bars(ax, frame, metric, "benchmark", "affinity", ("high", "low"),
                _names(experiment.name))
    ax.set_xlabel("benchmark (SPEC CPU2000 stand-ins)", fontsize=8)
    return [finish(fig, ctx, dest, WHISKERS + "; above each pair: change of low over high "
                                              "affinity.")]


def _names(name: str) -> tuple[str, str]:
    if name in ("kazempour-fig2", "kazempour-fig3"):
        return ("high L1 affinity (next to BV_0)", "low L1 affinity (next to BV_L1I)")
    return ("HI_AFF (main copies bound)", "LOW_AFF (nothing bound, cache affinity off)")


def _every_condition(frame: pd.DataFrame, metric: str, ctx: FigureContext, dest: Path) -> Path:
    """Experiment A: one panel per machine, L2 retention and quantum; pairs BV_0 vs each
    low-affinity base vector."""
    panels = frame.groupby(["machine", "l2_retention", "quantum_ms", "bv"], sort=False)
    keys = sorted({k[:3] for k in panels.groups}, key=str)
    bvs = [b for b in ("bv_l1d", "bv_l1i") if b in set(frame["bv"])]
    fig, axes = plt.subplots(len(keys), len(bvs), figsize=(6 * len(bvs), 2.8 * len(keys)),
                             squeeze=False)
    for i, (machine, retention, quantum) in enumerate(keys):
        for j, bv in enumerate(bvs):
            sel = frame[(frame["machine"] == machine) & (frame["l2_retention"] == retention)
                        & (frame["quantum_ms"] == quantum) & frame["bv"].isin(["bv_0", bv])]
            ax = axes[i][j]
            paired_bars(ax, sel, metric, "benchmark", "bv", ("bv_0", bv),
                        ("next to BV_0", f"next to {bv.upper()}"))
            ax.set_title(f"{machine}, {retention} L2 retention, {quantum} ms quantum",
                         fontsize=8)
    return finish(fig, ctx, dest, WHISKERS + "; above each pair: change next to the "
                                             "low-affinity base vector.")
