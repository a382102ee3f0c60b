"""Fig. 9's measurements: performance normalised to confinement, the cost of a
micro-schedule, and the summary tables of study 3's experiments.
"""

from __future__ import annotations

import math

import pandas as pd

from schedlab.analysis.figures import condition_stats
from schedlab.machine import load_machine, parse_size


def pair_fits(machine: str, size: str) -> bool:
    """Whether memlat's two regions of ``size`` fit together in one last-level cache of
    ``machine``: strictly smaller, since a pair the cache's size shares it with everything
    else (two 2 MiB regions in the X5365's 4 MiB L2 missed at 0.31 accesses in 1). Fig. 9's
    definition (schedlab.campaigns.lee) chooses its region sizes by it, and the cost of a
    micro-schedule is read only where it holds."""
    return 2 * parse_size(size, "region size") < load_machine(machine).llc.size


def normalised(frame: pd.DataFrame, base: str = "region-confine",
               other: str = "region-unify", metric: str = "roi_accesses_per_sec",
               by: tuple[str, ...] = ("machine", "region_size", "access_time")) -> pd.DataFrame:
    """Fig. 9: each run's ``metric`` over the mean of the ``base`` runs of its condition
    (``by``): 1 is confinement's performance; above 1, unification is faster."""
    keys = [c for c in by if c in frame]
    ref = frame[frame["policy"] == base].groupby(keys)[metric].mean().rename("base_mean")
    out = frame[frame["policy"].isin([base, other])].join(ref, on=keys)
    out["normalised"] = out[metric] / out["base_mean"]
    return out


PAPER_MICRO_RATE = 700     # micro-schedules per second, the rate the paper's overhead quotes


def micro_schedule_cost(frame: pd.DataFrame) -> pd.DataFrame:
    """The overheads from Fig. 9's runs (gem5): each unification run that micro-scheduled,
    against its condition's confinement runs, where both regions fit in one last-level
    cache together (so spreading them gains no capacity and the difference is the cost):

    - ``lost_ms``: the unify run's ROI (memlat's own clock) x (1 - its accesses/s over
      confinement's mean);
    - ``cycles_per_micro``: lost time x the core clock / micro-schedules in the ROI: all a
      micro-schedule brings (the hinting fault, the migration, the protection changes of the
      regions left and arrived at, the L1 refill on the new core);
    - ``insts_per_micro``: the unify run's ROI instructions (every core, gem5) minus
      confinement's scaled to the unify run's accesses, per micro-schedule;
    - ``overhead_at_700``, ``overhead_measured``: the share of a CPU's time those cycles
      take at the paper's 700 micro-schedules a second and at the run's own rate (above 1:
      that rate cannot be sustained)."""
    cols = ["machine", "region_size", "access_time", "rep", "micro_in_roi", "micro_per_s",
            "lost_ms", "cycles_per_micro", "insts_per_micro", "overhead_at_700",
            "overhead_measured"]
    if "micro_in_roi" not in frame or "gem5_insts" not in frame:
        return pd.DataFrame(columns=cols)
    out = []
    norm = normalised(frame)
    keys = ["machine", "region_size", "access_time"]
    confine = frame[frame["policy"] == "region-confine"].groupby(keys)
    for row in norm[(norm["policy"] == "region-unify") & (norm["micro_in_roi"] > 0)].itertuples():
        machine = load_machine(row.machine)
        if not pair_fits(row.machine, row.region_size):
            continue
        key = (row.machine, row.region_size, row.access_time)
        if key not in confine.groups:      # a partial campaign: no confinement run yet
            continue
        base = confine.get_group(key)
        lost_s = row.roi_seconds * (1 - row.normalised)
        cycles = lost_s * machine.clock_hz / row.micro_in_roi
        scale = row.roi_accesses / base["roi_accesses"].mean()
        out.append({"machine": row.machine, "region_size": row.region_size,
                    "access_time": row.access_time, "rep": row.rep,
                    "micro_in_roi": row.micro_in_roi, "micro_per_s": row.micro_per_s,
                    "lost_ms": 1e3 * lost_s, "cycles_per_micro": cycles,
                    "insts_per_micro": (row.gem5_insts - scale * base["gem5_insts"].mean())
                    / row.micro_in_roi,
                    "overhead_at_700": PAPER_MICRO_RATE * cycles / machine.clock_hz,
                    "overhead_measured": row.micro_per_s * cycles / machine.clock_hz})
    return pd.DataFrame(out, columns=cols)


def _condition(frame: pd.DataFrame) -> pd.Series:
    return frame["region_size"].astype(str) + " x2, 2^" + frame["access_time"].map(
        lambda a: f"{int(math.log2(a))}")


def summary(experiment, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Fig. 9 and the overheads: unification over confinement per condition, with the
    95 % interval of the change (Welch's t); the others: the metric per condition and policy."""
    from schedlab.analysis.metrics import paired_summary
    frame = tables[""]
    if frame.empty:
        return pd.DataFrame()
    if experiment.name == "lee-overheads" and len(cost := micro_schedule_cost(frame)):
        per_point = cost.drop(columns="rep").groupby(["machine", "region_size",
                                                     "access_time"])
        return per_point.mean().reset_index().assign(runs=per_point.size().to_numpy())
    if experiment.name in ("lee-fig9", "lee-overheads"):
        f = frame.assign(condition=frame["machine"] + " " + _condition(frame))
        return paired_summary(f, "roi_accesses_per_sec", "condition", "policy",
                              "region-confine", "region-unify")
    group = "benchmark" if "benchmark" in frame else "condition"
    metric = experiment.metric if experiment.metric in frame else "wall_s"
    return condition_stats(frame, metric, ["machine", group, "policy"])
