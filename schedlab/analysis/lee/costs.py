"""Fig. 9's measurements: performance normalised to confinement, the cost of a
micro-schedule, and the summary tables of study 3's experiments.
"""

from __future__ import annotations

import math

import pandas as pd

from schedlab.analysis.figures import condition_stats
from schedlab.analysis.function_graph import inside, roi_window
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


# The kernel functions a micro-schedule's breakdown times (bench/bench_regions.py
# --breakdown): the fault handler, region scheduling's part of it, and the Linux functions
# that part calls: the move, the protection changes, the TLB flushes and their IPIs (sent
# and waited for by on_each_cpu_cond_mask; flush_tlb_func is the work on each CPU).
MICRO_SCHEDULE_FUNCTIONS = ("handle_mm_fault", "sched_region_fault", "migrate_task_to",
                            "change_protection", "flush_tlb_mm_range", "on_each_cpu_cond_mask",
                            "flush_tlb_func")
MICRO_SCHEDULE_PARTS = ("linux_fault_us", "migrate_us", "protect_us", "flush_us", "ipi_us",
                        "regions_us")


def micro_schedule_parts(calls: pd.DataFrame, comments: pd.DataFrame) -> pd.DataFrame:
    """One row per micro-schedule in a function graph trace of MICRO_SCHEDULE_FUNCTIONS
    (schedlab.analysis.function_graph.parse): each ``sched_region_fault`` call that moved its
    thread (a ``migrate_task_to`` inside it), in the ROI the launcher marked if it did.

    - ``fault_us``: the whole ``handle_mm_fault`` call (all but the exception's entry/exit);
    - ``linux_fault_us``: its part outside region scheduling (the PTE restored by
      ``do_numa_page``, the page-table walk, the mm's locks);
    - ``migrate_us``: ``migrate_task_to``, from the call until the thread runs on the new
      CPU (the stopper's work and the switch);
    - ``protect_us`` / ``protect_calls``: ``change_protection`` over the runs of pages of
      the regions closed and opened;
    - ``flush_us`` / ``flush_calls``: the TLB flushes after them (``flush_tlb_mm_range``),
      of which ``ipi_us``: ``on_each_cpu_cond_mask``, the flush run on each CPU using the
      address space (this one, and by IPI, waited for, any other not in lazy TLB mode);
    - ``regions_us``: the rest of ``sched_region_fault``: region scheduling's own work
      (its lock, the page index walked for runs of pages, the VMA lookups, the CPU pick);
    - ``remote_flushes``: ``flush_tlb_func`` calls on other CPUs during the fault.
    Durations include the tracer's work for the traced calls nested in them. ftrace times
    a call on the local clock of the CPU it is on at each end: on gem5 every core's TSC is
    one clock (``tsc=reliable``), so a duration across the migration is exact; under QEMU
    the vCPUs' clocks may differ by up to a tick, so only the parts made on one CPU are."""
    cols = ["start", "cpu", "exit_cpu", "pid", "fault_us", *MICRO_SCHEDULE_PARTS,
            "protect_calls", "flush_calls", "remote_flushes"]
    lo, hi = roi_window(comments)
    out = []
    for row, fault in calls[calls["function"] == "sched_region_fault"].iterrows():
        if not lo <= fault["start"] <= hi:
            continue
        nested = inside(calls, row)
        moves = nested[nested["function"] == "migrate_task_to"]
        if moves.empty:
            continue
        handler = calls.loc[fault["parent"]] if fault["parent"] >= 0 else None
        whole = (handler["duration_us"] if handler is not None
                 and handler["function"] == "handle_mm_fault" else math.nan)
        protect = nested[nested["function"] == "change_protection"]
        flush = nested[nested["function"] == "flush_tlb_mm_range"]
        # change_protection flushes by itself where a VMA's range ends (tlb_end_vma)
        flush_in_protect = flush[flush["parent"].isin(protect.index)]["duration_us"].sum()
        ipi = nested[nested["function"] == "on_each_cpu_cond_mask"]
        remote = calls[(calls["function"] == "flush_tlb_func") & (calls["pid"] != fault["pid"])
                       & calls["start"].between(fault["start"], fault["end"])]
        own = (fault["duration_us"] - moves["duration_us"].sum() - protect["duration_us"].sum()
               - (flush["duration_us"].sum() - flush_in_protect))
        out.append({"start": fault["start"], "cpu": fault["cpu"], "exit_cpu": fault["exit_cpu"],
                    "pid": fault["pid"], "fault_us": whole,
                    "linux_fault_us": whole - fault["duration_us"],
                    "migrate_us": moves["duration_us"].sum(),
                    "protect_us": protect["duration_us"].sum() - flush_in_protect,
                    "flush_us": flush["duration_us"].sum(), "ipi_us": ipi["duration_us"].sum(),
                    "regions_us": own, "protect_calls": len(protect),
                    "flush_calls": len(flush), "remote_flushes": len(remote)})
    return pd.DataFrame(out, columns=cols)


# What Linux's NUMA balancing is timed by (bench/bench_regions.py --yardstick): the scan and
# its protection changes, the fault handler and the hinting fault's accounting in it, the
# task's move to its preferred node, the TLB flushes and their IPIs.
NUMA_BALANCING_FUNCTIONS = ("task_numa_work", "change_prot_numa", "handle_mm_fault",
                            "task_numa_fault", "migrate_task_to", "flush_tlb_mm_range",
                            "on_each_cpu_cond_mask")


def numa_balancing_costs(calls: pd.DataFrame, comments: pd.DataFrame) -> dict:
    """What Linux's own NUMA balancing paid in a function graph trace's ROI (the launcher's
    marks; the whole trace without them): the yardstick of a micro-schedule's machinery.

    - ``scans``, ``scan_us``: ``task_numa_work`` calls (one scan of a task's memory) and
      their mean duration; ``change_prot_numa_us``: the mean time of its protection
      changes in one scan (``change_prot_numa``, TLB flushes included);
    - ``hinting_faults``, ``hinting_fault_us``: ``handle_mm_fault`` calls that went through
      ``task_numa_fault`` (a touch of a page a scan protected), and their mean duration;
      ``faults_per_scan``: hinting faults over scans, the pages a scan protected that the
      program touched again;
    - ``migrations``, ``migrate_us``: ``migrate_task_to`` calls (NUMA balancing moving a
      task to its preferred node) and their mean duration (NaN: none)."""
    lo, hi = roi_window(comments)
    roi = calls[calls["start"].between(lo, hi)]
    scans = roi[roi["function"] == "task_numa_work"]
    prot = roi[(roi["function"] == "change_prot_numa") & roi["parent"].isin(scans.index)]
    numa_faults = roi[roi["function"] == "task_numa_fault"]
    handlers = calls.loc[numa_faults["parent"][numa_faults["parent"] >= 0]]
    hinting = handlers[handlers["function"] == "handle_mm_fault"]
    moves = roi[roi["function"] == "migrate_task_to"]
    return {"scans": len(scans), "scan_us": scans["duration_us"].mean(),
            "change_prot_numa_us": (prot["duration_us"].sum() / len(scans)
                                    if len(scans) else math.nan),
            "hinting_faults": len(hinting), "hinting_fault_us": hinting["duration_us"].mean(),
            "faults_per_scan": len(hinting) / len(scans) if len(scans) else math.nan,
            "migrations": len(moves), "migrate_us": moves["duration_us"].mean()}
