"""The demo's live experiment: cache affinity on a shared-L2 machine, small enough to run
in minutes (not a figure of the papers).

On Clovertown E5320 (2 chips x 2 cores, an L2 per chip), memlat runs next to a base vector
that sweeps an L2-sized working set, with CFS cache affinity on or off (the no-affinity
patch), pinned to CPUs 0 and 1 or left free. On QEMU this shows placement and migrations;
on gem5 it adds the region's IPC and misses. Repetitions differ in memlat's seed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis.figures import WHISKERS, FigureContext, condition_stats, finish
from schedlab.campaigns.experiment import Analysis, Experiment
from schedlab.machine import format_size, load_machine
from schedlab.runs import RunRequest, WorkloadRequest

MACHINE = "clovertown-e5320"
REPS = {"smoke": 2, "paper": 5}


def matrix(scale: str, backend: str) -> list[RunRequest]:
    # The base vector's footprint is the machine's last-level cache, read from the catalogue.
    bv_args = ("--size", format_size(load_machine(MACHINE).llc.size))
    out = []
    for policy in ("vanilla", "no-affinity"):
        for pinned in (True, False):
            for rep in range(REPS[scale]):
                out.append(RunRequest(
                    machine=MACHINE, backend=backend, policy=policy,
                    jobs=(WorkloadRequest("memlat", size="smoke", cpus="0" if pinned else None,
                                          args=("--seed", str(rep + 1))),),
                    background=(WorkloadRequest("bv_l2", size="paper", args=bv_args,
                                                cpus="1" if pinned else None),),
                    label={"policy": policy, "placement": "pinned" if pinned else "free",
                           "rep": rep}))
    return out


def draw(experiment, frame: pd.DataFrame, ctx: FigureContext, dest: Path) -> list[Path]:
    metric = "gem5_ipc" if "gem5_ipc" in frame else "accesses_per_sec"
    stats = condition_stats(frame, metric, ["policy", "placement"])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    labels = [f"{r.policy}\n{r.placement}" for r in stats.itertuples()]
    # A rate is never negative: a whisker of two standard deviations stops at zero.
    low = [min(2 * s, m) for m, s in zip(stats["mean"], stats["std"].fillna(0))]
    ax.bar(labels, stats["mean"], yerr=[low, 2 * stats["std"].fillna(0)], capsize=4,
           color="#4c72b0")
    for i, n in enumerate(stats["count"]):
        ax.annotate(f"n={n}", (i, 0), ha="center", va="bottom", fontsize=8, color="white",
                    xytext=(0, 3), textcoords="offset points")
    ax.set_ylabel("memlat IPC (busiest core)" if metric == "gem5_ipc"
                  else "memlat accesses per second (guest clock)")
    return [finish(fig, ctx, dest, WHISKERS + " (cut at zero).")]


EXPERIMENTS = (
    Experiment(name="demo-affinity", study="demo", kind="figure",
               title=f"memlat next to an L2-sized base vector on {MACHINE}: cache affinity "
                     f"on/off, pinned/free", matrix=matrix, metric="gem5_ipc",
               repetition="memlat's seed", analysis=Analysis(draw=draw),
               reductions={"smoke": "memlat at its smoke size"}),
)
