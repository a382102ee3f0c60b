"""The figure of a parameter sweep: a metric over the first swept parameter, one line per
combination of the other swept parameters and job.

Points are placed in the order the values were given (``--set l2.size=1MiB,2MiB,4MiB``),
evenly, with the values as tick labels: they carry their own units, and a cache-size sweep
in powers of two reads as a log axis. Each point is the mean of the job's repetitions in
that run, whiskers two standard deviations, n the repetitions.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis.figures import (FigureContext, condition_stats, finish, metric_label,
                                       whiskers)

# Units of the parameters whose values are bare numbers (sizes, clocks and latencies carry
# theirs: 4MiB, 2GHz, 14cycles).
PARAMETER_UNITS = {"assoc": "ways", "line": "B", "level": "", "width": "per cycle",
                   "rob_entries": "entries", "cycles": "cycles", "max_cycles": "cycles",
                   "remote_cycles_per_delay": "cycles per delay cycle",
                   "packages": "", "nodes": ""}


def parameter_label(key: str) -> str:
    unit = PARAMETER_UNITS.get(key.rsplit(".", 1)[-1], "")
    return f"{key} ({unit})" if unit else key


def draw(frame: pd.DataFrame, metric: str, axes: list[str], ctx: FigureContext,
         dest: Path) -> Path:
    """Plot ``metric`` of the ok runs over ``axes[0]``; lines for the rest and each job."""
    ok = frame[frame["ok"].astype(bool)]
    left_out = frame["run_id"].nunique() - ok["run_id"].nunique()
    x_key, line_keys = axes[0], [*axes[1:], "job"]
    x_values = list(dict.fromkeys(frame[x_key].astype(str)))
    data = ok.assign(**{k: ok[k].astype(str) for k in axes}).dropna(subset=[metric])
    stats = condition_stats(data, metric, [*line_keys, x_key])
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    for line, group in stats.groupby(line_keys, sort=False):
        line = line if isinstance(line, tuple) else (line,)
        group = group.set_index(x_key).reindex(x_values)
        label = ", ".join(f"{k}={v}" if k != "job" else str(v)
                          for k, v in zip(line_keys, line))
        ax.errorbar(range(len(x_values)), group["mean"], yerr=whiskers(group), marker="o",
                    capsize=3, label=label)
    ax.set_xticks(range(len(x_values)), x_values, fontsize=8)
    ax.set_xlabel(parameter_label(x_key), fontsize=8)
    ax.set_ylabel(metric_label(metric), fontsize=8)
    ax.legend(fontsize=7, title=", ".join(line_keys), title_fontsize=7)
    ax.grid(alpha=0.3)
    counts = sorted({int(n) for n in stats["count"]})
    caption = ("points: mean of the job's repetitions in one run (one boot per point); "
               "whiskers: mean ± 2 standard deviations; n = "
               + "/".join(map(str, counts)) + " repetitions per point")
    if left_out:
        caption += f"; {left_out} run(s) with problems left out (see their results.json)"
    return finish(fig, ctx, dest, caption + ".")
