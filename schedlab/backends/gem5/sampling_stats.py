"""Estimates from a sampled region (sampling.json): IPC, CPI and misses per instruction
of the measured windows only, with confidence intervals across windows.

gem5's run script (``--sampling``, schedlab.backends.gem5.sampling) records each measured
window's per-CPU counter deltas (cycles, instructions, L1 I / L1 D misses and the CPU's
share of its last-level cache's misses) and, with task attribution, per-task totals. From
``n`` windows:

- **CPI** (SMARTS's estimator): the mean of the per-window CPIs, with the Student-t
  interval of that mean (sample variance across windows); IPC is its reciprocal.
- **Ratios** (misses per instruction, and IPC as instructions per cycle): the ratio
  estimator ``sum(y) / sum(x)`` over the windows, whose standard error is
  ``sqrt(sum((y_i - R x_i)^2) / (n - 1) / n) / mean(x)`` (Cochran, Sampling Techniques,
  ch. 6); with equal windows it differs from the mean of per-window ratios only by
  second-order terms, and it stays defined for windows with no misses.

A CPU counts in the windows where it committed instructions (an idle CPU has none), a task
in the windows where it ran. Intervals are two-sided at ``confidence`` (95 % by default);
they describe the sampling error only, not the model's (the windows run the detailed
model over caches warmed by Atomic cores).

Standard library only (it sits beside modules that gem5's Python imports).
"""

from __future__ import annotations

import math
from statistics import NormalDist, fmean, stdev

# The caches whose misses the windows count, as CoreCounters names them. "llc" is the
# CPU's share of its last-level cache instance, named after the plan's last level.
CACHES = ("l1d", "l1i", "llc")


def t_quantile(p: float, df: int) -> float:
    """The p quantile of Student's t with ``df`` degrees of freedom: exact for 1 and 2,
    else Hill's (1970) expansion around the normal quantile, within 0.11 % of the tables
    from df = 3 up (0.01 % from df = 9)."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def mean_ci(values: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its two-sided confidence interval
    (nan with fewer than two values)."""
    if not values:
        return math.nan, math.nan
    if len(values) < 2:
        return fmean(values), math.nan
    half = (t_quantile(0.5 + confidence / 2, len(values) - 1) * stdev(values)
            / math.sqrt(len(values)))
    return fmean(values), half


def ratio_ci(ys: list[float], xs: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """The ratio estimator sum(ys) / sum(xs) over windows and the half-width of its
    confidence interval (nan with fewer than two windows or no x at all)."""
    n, total_x = len(xs), sum(xs)
    if n == 0 or total_x == 0:
        return math.nan, math.nan
    r = sum(ys) / total_x
    if n < 2:
        return r, math.nan
    residual = sum((y - r * x) ** 2 for y, x in zip(ys, xs)) / (n - 1)
    se = math.sqrt(residual / n) / (total_x / n)
    return r, t_quantile(0.5 + confidence / 2, n - 1) * se


def estimates(samples: list[dict], llc: str = "llc", confidence: float = 0.95) -> dict:
    """IPC, CPI and misses per instruction from per-window counters (``samples``: one
    dict per window with ``insts``, ``cycles`` and ``<cache>_misses``; windows without
    instructions are left out). Keys: ``windows``, ``insts``, ``cycles``, ``ipc`` (and its
    ``_ci`` half-width), ``cpi`` (mean of per-window CPIs), ``cpi_ci``, ``cpi_ci_rel``
    (half-width over the mean), ``<cache>_mpi`` / ``_mpi_ci`` / ``_mpki``; ``llc`` is
    reported under the plan's name of the last level (``llc``)."""
    used = [s for s in samples if s.get("insts", 0) > 0 and s.get("cycles", 0) > 0]
    insts = [float(s["insts"]) for s in used]
    cycles = [float(s["cycles"]) for s in used]
    out: dict[str, float] = {"windows": len(used), "insts": sum(insts), "cycles": sum(cycles)}
    out["ipc"], out["ipc_ci"] = ratio_ci(insts, cycles, confidence)
    cpi, half = mean_ci([c / i for c, i in zip(cycles, insts)], confidence)
    out.update(cpi=cpi, cpi_ci=half, cpi_ci_rel=half / cpi if cpi else math.nan)
    for cache in CACHES:
        if not all(f"{cache}_misses" in s for s in used) or not used:
            continue
        name = llc if cache == "llc" else cache
        mpi, half = ratio_ci([float(s[f"{cache}_misses"]) for s in used], insts, confidence)
        out.update({f"{name}_mpi": mpi, f"{name}_mpi_ci": half, f"{name}_mpki": 1000 * mpi})
    return out


def machine_samples(window: dict) -> dict:
    """One window's counters summed over every CPU."""
    total: dict[str, float] = {}
    for counters in window["cpus"].values():
        for k, v in counters.items():
            total[k] = total.get(k, 0.0) + v
    return total


def region_estimates(region: dict, llc: str = "llc", confidence: float = 0.95) -> dict:
    """A sampled region (one entry of sampling.json's ``regions``) summarised.

    ``machine``: every CPU's counters summed per window (misses per instruction of the
    whole machine, as region_metrics gives them for full runs). ``cpus``: per CPU.
    ``busiest``: the CPU that committed most measured instructions (the workload's, when it
    is pinned or alone), whose IPC and CPI the results table shows, as for full runs.
    ``tasks``: per pid, from the windows' attribution (when the run had it)."""
    windows = region["windows"]
    cpus = sorted({c for w in windows for c in w["cpus"]}, key=int)
    per_cpu = {c: estimates([w["cpus"][c] for w in windows if c in w["cpus"]], llc,
                            confidence) for c in cpus}
    busiest = max(cpus, key=lambda c: per_cpu[c]["insts"]) if cpus else None
    pids = sorted({p for w in windows for p in w.get("tasks", {})}, key=int)
    tasks = {p: estimates([w["tasks"][p] for w in windows if p in w.get("tasks", {})], llc,
                          confidence) for p in pids}
    return {"windows": len(windows), "cut_short": region.get("cut_short"),
            "region_insts": region.get("insts"),
            "measured_share": (sum(per_cpu[c]["insts"] for c in cpus) / region["insts"]
                               if region.get("insts") else math.nan),
            "machine": estimates([machine_samples(w) for w in windows], llc, confidence),
            "busiest": busiest, "cpus": per_cpu, "tasks": tasks,
            "cost": {k: region.get(k) for k in ("rounds", "stale_stops", "switches",
                                                 "switch_host_s", "detailed_host_s",
                                                 "host_s")}}


def results_metrics(summary: dict) -> dict[str, float]:
    """The flat numbers a results row shows for a sampled region (``gem5_*`` columns):
    the busiest CPU's IPC and CPI with their intervals, the machine's misses per
    instruction with theirs, the number of windows and the measured share."""
    busy = summary["cpus"].get(summary["busiest"], {})
    out = {k: busy.get(k, math.nan) for k in ("ipc", "ipc_ci", "cpi", "cpi_ci", "cpi_ci_rel")}
    out.update({k: v for k, v in summary["machine"].items()
                if k.endswith(("_mpi", "_mpi_ci", "_mpki"))})
    out.update(windows=summary["windows"], measured_insts=summary["machine"]["insts"],
               measured_share=summary["measured_share"], sampled=1)
    return out
