"""Figures drawn from results tables (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def bars_by_condition(frame: pd.DataFrame, metric: str, groups: list[str], title: str,
                      dest: Path) -> Path:
    """Mean of ``metric`` per condition with two-standard-deviation whiskers, as in the papers."""
    stats = frame.groupby(groups)[metric].agg(["mean", "std", "count"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    labels = [" / ".join(str(row[g]) for g in groups) for _, row in stats.iterrows()]
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(labels), 3.6))
    ax.bar(labels, stats["mean"], yerr=2 * stats["std"], capsize=4, color="#4c72b0")
    for i, n in enumerate(stats["count"]):
        ax.annotate(f"n={n}", (i, 0), ha="center", va="bottom", fontsize=8, color="white",
                    xytext=(0, 3), textcoords="offset points")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    dest.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dest, dpi=120)
    plt.close(fig)
    return dest
