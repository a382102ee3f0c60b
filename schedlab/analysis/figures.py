"""Figures drawn from results tables (matplotlib, no display needed).

Every figure carries a caption under the plot: what the bars and whiskers are (mean, two
standard deviations, n), the scale and what it reduces, the backend and cores, and the
provenance of its runs (gem5 version and binary hash, kernel and image hashes). A QEMU
figure says that it shows placement and host wall-clock time, not cache behaviour.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
import pandas as pd  # noqa: E402

from schedlab.backends.backend import BackendName, get_backend

WHISKERS = ("bars: mean; whiskers: mean ± 2 standard deviations (the lower one stops at zero for "
            "a quantity that cannot be negative); n: runs per bar")
# How paired_bars labels a change of ten times or more (a % of a near-zero base is unreadable).
CHANGE_NOTE = " (xN: N times as much, where that is 10 or more)"
QEMU_NOTE = ("QEMU (TCG) models no caches or latencies: this shows placement and the guest's "
             "wall-clock rates on the host, not cache behaviour.")
LABELS = {
    "task_ipc": "IPC of the benchmark (instructions per cycle)",
    "task_l1i_mpi": "L1 I-cache misses per instruction",
    "task_l1d_mpi": "L1 D-cache misses per instruction",
    "task_llc_mpi": "last-level cache misses per instruction",
    "copies_ipc": "IPC of the main benchmark's copies together",
    "copies_llc_mpi": "L2 (last-level) misses per instruction, main copies together",
    "gem5_ipc": "IPC of the busiest core",
    "accesses_per_sec": "memlat accesses per second over its life (guest clock)",
    "roi_accesses_per_sec": "memlat accesses per second in the ROI (guest clock)",
    "wall_s": "elapsed time (s, guest clock)",
    "task_llc_mpki": "the job's last-level cache misses per 1000 instructions",
    "task_l1d_mpki": "the job's L1 D-cache misses per 1000 instructions",
    # Study 3's consolidated programs, over their ROI (Figs. 24 and 25).
    "roi_ms_per_row": "elapsed time per image row in the ROI (ms)",
    "roi_cpu_ms_per_row": "CPU time per image row in the ROI, all threads (ms)",
    "roi_p50_ms": "median response time in the ROI (ms)",
    "roi_p90_ms": "90th percentile (ms)",
    "roi_p99_ms": "99th percentile (ms)",
    "roi_max_ms": "slowest request in the ROI (ms)",
    "micro_per_s": "micro-schedules per second of the ROI (guest clock)",
}
# Units of the metric families that have no entry of their own in LABELS.
SUFFIX_LABELS = {"_mpki": "misses per 1000 instructions", "_mpi": "misses per instruction",
                 "_ipc": "instructions per cycle", "_misses": "misses",
                 "_seconds": "seconds", "_s": "seconds"}


def metric_label(metric: str) -> str:
    """An axis label with the metric's unit: LABELS' own, else its family's."""
    if metric in LABELS:
        return LABELS[metric]
    unit = next((u for suffix, u in SUFFIX_LABELS.items() if metric.endswith(suffix)), None)
    name = metric.replace("_", " ")
    return f"{name} ({unit})" if unit else name


@dataclass
class FigureContext:
    """What a figure says about where its numbers come from."""

    name: str
    title: str
    scale: str
    backend: str
    reduction: str = ""
    notes: str = ""
    provenance: dict = field(default_factory=dict)
    # "runs" (this host's results), "committed" (data/) or "partial" (the runs finished so far)
    source: str = "runs"
    # A committed table made by earlier code: what schedlab.campaigns.currency says of it.
    stale: str = ""
    # The spread between guest seeds and what the repetitions resolve (analysis.variability).
    variability: str = ""

    def caption(self, extra: str = "") -> str:
        prov = self.provenance
        parts = [f"STALE TABLE ({self.stale})."] if self.stale else []
        parts += [extra] if extra else []
        if self.backend == BackendName.GEM5:
            parts.append(f"gem5 {prov.get('gem5_version', '?')} (binary "
                         f"{str(prov.get('gem5_hash', '?'))[:12]}), {prov.get('cpu', '?')} "
                         f"cores; kernel {prov.get('kernel', '?')}, image "
                         f"{prov.get('image', '?')}; {prov.get('runs', '?')} runs.")
        else:
            parts.append(QEMU_NOTE + f" Kernel {prov.get('kernel', '?')}, image "
                         f"{prov.get('image', '?')}; {prov.get('runs', '?')} runs.")
        if self.reduction:
            parts.append(f"Scale {self.scale}: {self.reduction}.")
        timing = get_backend(self.backend).timing_model
        if self.notes and timing:           # the notes describe the timing model
            parts.append(self.notes)
        if self.variability and timing:     # the spread of timing metrics
            parts.append(self.variability)
        return " ".join(parts)

    @property
    def heading(self) -> str:
        scale = f"{self.scale} scale, " if self.scale else ""
        return f"{self.name}: {self.title}\n[{scale}{self.backend}]"


def plain_log_ticks(axis) -> None:
    """A log axis labelled in plain numbers (0.3, 20, 500) instead of powers of ten, its
    minor ticks at 2, 3 and 5 of each decade labelled too: a reader reads the values off."""
    def plain(value, _pos):
        return f"{value:g}"

    def minor(value, _pos):
        mantissa = round(value / 10 ** math.floor(math.log10(value)), 6) if value > 0 else 0
        return f"{value:g}" if mantissa in (2, 3, 5) else ""
    axis.set_major_formatter(ticker.FuncFormatter(plain))
    axis.set_minor_formatter(ticker.FuncFormatter(minor))


def provenance(frame: pd.DataFrame) -> dict:
    """One value per provenance column if the runs agree, else the values joined."""
    out = {"runs": int(frame["run_id"].nunique()) if "run_id" in frame else 0}
    for col in ("gem5_version", "gem5_hash", "kernel", "image", "cpu"):
        if col in frame:
            values = sorted({str(v) for v in frame[col].dropna()})
            out[col] = "+".join(values) if values else "-"
    return out


# The workloads that are real programs from Debian's packages (workloads/README.md).
REAL_PROGRAM_PREFIX = "debian-"


def programs_note(frame: pd.DataFrame, group: str = "benchmark") -> str:
    """Which of the benchmarks ran as real programs (their job is a Debian program) and
    which as our stand-ins, read from the runs themselves ("" where they do not say)."""
    if group not in frame or "job" not in frame:
        return ""
    jobs = frame.groupby(group, sort=True)["job"].first()
    real = [f"{b} ({j.removeprefix(REAL_PROGRAM_PREFIX)})" for b, j in jobs.items()
            if str(j).startswith(REAL_PROGRAM_PREFIX)]
    stand_ins = [str(b) for b, j in jobs.items() if not str(j).startswith(REAL_PROGRAM_PREFIX)]
    parts = ([f"real programs from Debian: {', '.join(real)}"] if real else []) + \
        ([f"our stand-ins: {', '.join(stand_ins)}"] if stand_ins else [])
    return "; ".join(parts)


def finish(fig, ctx: FigureContext, dest: Path, caption_extra: str = "") -> Path:
    """Title above, caption below the axes (sized to the figure), save as PNG."""
    width_in, height_in = fig.get_size_inches()
    chars = max(60, int(width_in * 17))
    heading = "\n".join(textwrap.wrap(ctx.heading.split("\n")[0], int(chars * 0.75))
                        + ctx.heading.split("\n")[1:])
    fig.suptitle(heading, fontsize=9)
    text = "\n".join(textwrap.wrap(ctx.caption(caption_extra), chars))
    fig.text(0.01, 0.01, text, fontsize=7, va="bottom", ha="left")
    line_in = 7 / 72 * 1.35
    bottom = min(0.5, (text.count("\n") + 1.5) * line_in / height_in)
    # tight_layout makes room for the suptitle itself: a lower top than 1 left that room twice.
    fig.tight_layout(rect=(0, bottom, 1, 1))
    dest.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dest, dpi=110)
    plt.close(fig)
    return dest


def condition_stats(frame: pd.DataFrame, metric: str, groups: list[str]) -> pd.DataFrame:
    """Mean, standard deviation and n of ``metric`` per group; ``nonnegative``: whether every
    sample of the metric is at least zero (a rate, a count: see :func:`whiskers`)."""
    stats = frame.groupby(groups, sort=False)[metric].agg(["mean", "std", "count"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    stats["nonnegative"] = bool((frame[metric].dropna() >= 0).all())
    return stats


def whiskers(stats: pd.DataFrame) -> list[pd.Series]:
    """Mean ± 2 sd as matplotlib's [lower, upper] lengths (WHISKERS). For a quantity whose
    samples are all at least zero the lower whisker stops at zero: two QEMU runs of a rate
    drew it below zero, which no run can reach."""
    half = 2 * stats["std"]
    if stats["nonnegative"].all():
        return [half.clip(upper=stats["mean"].clip(lower=0)), half]
    return [half, half]


def _change_label(change_percent: float) -> str:
    """A change as a signed per cent, or as a factor from ten times up (CHANGE_NOTE)."""
    factor = 1.0 + change_percent / 100.0
    return f"x{factor:.0f}" if factor >= 10 else f"{change_percent:+.1f}%"


def paired_bars(ax, frame: pd.DataFrame, metric: str, group: str, condition: str,
                order: tuple[str, str], names: tuple[str, str]) -> pd.DataFrame:
    """Bars of ``metric`` per ``group`` for the two values of ``condition`` in ``order``,
    with mean ± 2 sd whiskers and the % change of the second over the first above each
    pair (a factor from ten times up: CHANGE_NOTE). Returns the statistics drawn."""
    stats = condition_stats(frame, metric, [group, condition])
    groups = list(dict.fromkeys(frame[group]))
    width = 0.38
    colours = ("#4c72b0", "#dd8452")
    for k, (cond, label) in enumerate(zip(order, names)):
        sub = stats[stats[condition] == cond].set_index(group).reindex(groups)
        xs = [i + (k - 0.5) * width for i in range(len(groups))]
        ax.bar(xs, sub["mean"], width, yerr=whiskers(sub), capsize=3, color=colours[k],
               label=label)
        for x, n in zip(xs, sub["count"]):
            if pd.notna(n):
                ax.annotate(f"n={int(n)}", (x, 0), ha="center", va="bottom", fontsize=6,
                            color="white", xytext=(0, 2), textcoords="offset points")
    first = stats[stats[condition] == order[0]].set_index(group)
    second = stats[stats[condition] == order[1]].set_index(group)
    highest = 0.0
    for i, g in enumerate(groups):
        if g in first.index and g in second.index and first.loc[g, "mean"]:
            change = 100.0 * (second.loc[g, "mean"] - first.loc[g, "mean"]) / first.loc[g, "mean"]
            top = max(first.loc[g, "mean"] + 2 * first.loc[g, "std"],
                      second.loc[g, "mean"] + 2 * second.loc[g, "std"])
            ax.annotate(_change_label(change), (i, top), ha="center", va="bottom",
                        fontsize=7, xytext=(0, 2), textcoords="offset points")
            highest = max(highest, top)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    # Wrapped: a long label would run past the axes into the caption below them.
    ax.set_ylabel(textwrap.fill(metric_label(metric), 40), fontsize=8)
    # Rates per instruction are small: one power of ten above the axis, not long decimals.
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4), useMathText=True)
    # Above the axes, where it covers no bar and no change label; on the right, clear of
    # the power of ten at the axis' top left.
    ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1, 1.01), ncol=2, frameon=False)
    ax.margins(y=0.15)
    # Room above the highest whisker for its change label; rates and counts stay above zero
    # (a whisker of two standard deviations below it is cut there).
    bottom, top = ax.get_ylim()
    ax.set_ylim(0 if (stats["mean"] >= 0).all() else bottom, max(top, highest * 1.12))
    return stats
