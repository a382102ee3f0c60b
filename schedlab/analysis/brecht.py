"""Study 4's tables and figures: processor pools on Hector, response times of job streams.

From every run: the ``streams`` driver's own output (per job: its application, stream,
index, process id, and the seconds from the streams' common start to its spawn and to its
exit) and the pools' tracepoints in the run's scheduler trace (``sched_pool_place``: a
thread of a job got a CPU of a pool, ``sched_pool_release``: it gave it back). Compact
tables:

- ``""`` (runs): one row per run, its coordinates (delay, parallelism, pool size,
  placement, repetition), the driver's means and the placement counters, and the
  provenance columns of every study's tables;
- ``"jobs"``: one row per job: application, stream, index, pid, start, end and response
  time (the driver's clock: end - start, its ``job.*`` value), the pools and CPUs its
  threads got, and on the trace's clock when its first thread was placed and its last
  released (``placed_s``, ``released_s``, ``held_s``);
- ``"placements"``: one row per traced placement or release: time, event, how it was
  placed, pid, tgid, job, pool, CPU.

Two clocks, never mixed: the driver's times are CLOCK_MONOTONIC from the streams' common
start; trace times (``time_s``, ``placed_s``, ``released_s``) are the kernel's trace clock
from the run's first pool event. Under QEMU TCG the guest marks its TSC unstable and keeps
time from the HPET while the trace clock follows the TSC: in our runs the two disagreed by
20 to 40 ms, with jumps of up to 0.6 s on a loaded host, so no difference across them is
computed.

Response times: mean per application and over all applications, with 90 % confidence
intervals from Student's t (the paper's metric). **The sample is the run (repetition)**:
each run's mean response time of the application (or of all its jobs) is one
observation, and the interval is mean ± t(0.95, n - 1) s / sqrt(n) over the n runs of a
condition. Jobs of one run are not independent observations (they share the machine, the
other streams and each other's pools, and a stream's jobs start when its previous job
ends), so treating the 225 jobs of a run as the sample would make the intervals far too
narrow. Runs differ in the streams' start offset and, on QEMU, in the host's timing. With
one run a condition has no interval (drawn without whiskers); with two, t = 6.31 makes it
wide, honestly so. Worst-Fit against First-Fit (Fig. 5) is paired: the runs with the same
repetition index have the same start offset, and the sample is the per-repetition ratio.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from schedlab.backends.backend import get_backend
from schedlab.analysis.figures import FigureContext, finish
from schedlab.analysis.slices import trace_lost_events
from schedlab.analysis.tables import rows
from schedlab.guest.pools import parse_pool_cpus

LEVEL = 0.90
# The coordinates of a run (its label) that every table repeats.
COORDINATES = ("delay", "parallelism", "pool_size", "placement", "rep")
ALL = "all"                     # the "application" of the combined mean
# Colours per application (and the combined mean), per ring delay and per parallelism.
COLOURS = {"fft": "#4c72b0", "hough": "#dd8452", "mm": "#55a868", "neural": "#c44e52",
           "pde": "#8172b3", "simplex": "#937860", ALL: "#222222"}
LINE_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")
PLACEMENT_COLOURS = {"worst-fit": "#4c72b0", "first-fit": "#dd8452", "best-fit": "#55a868",
                     "worst-fit-jobs": "#c44e52"}
WHISKERS = ("points and bars: mean response time (spawn to exit, guest clock) over the runs "
            "of a condition, each run's mean being one sample; whiskers: 90 % confidence "
            "interval, Student's t over those runs (none with one run); n: runs")
QEMU_TIMING = ("On QEMU the response times are the guest's wall clock, which follows the "
               "host's load (16 TCG vCPUs on the host's cores): they show the placement and "
               "response-time mechanics, not Hector's NUMA timing; the ring delay changes "
               "nothing there.")

_PLACE = re.compile(r"^\s*(?P<comm>.*?)-(?P<ctx>\d+)\s+\[(?P<on>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+):"
                    r" sched_pool_place: pid=(?P<pid>\d+) tgid=(?P<tgid>\d+) kind=(?P<kind>\w+)"
                    r" placement=(?P<policy>\S+) pool=(?P<pool>-?\d+) cpu=(?P<cpu>-?\d+)$")
_RELEASE = re.compile(r"^\s*(?P<comm>.*?)-(?P<ctx>\d+)\s+\[(?P<on>\d+)\]\s+\S+\s+"
                      r"(?P<ts>\d+\.\d+): sched_pool_release: pid=(?P<pid>\d+)"
                      r" tgid=(?P<tgid>\d+) cpu=(?P<cpu>\d+)$")


def parse_pool_trace(text: str) -> pd.DataFrame:
    """The pools' tracepoints of a tracefs ``trace`` file, in order: ts (s, trace clock),
    event (place or release), kind (first, expand, spill, fail; release: ""), pid, tgid,
    pool (a release: the pool of the CPU its thread was placed on), cpu (-1: none free)."""
    out, pool_of_cpu = [], {}
    for line in text.splitlines():
        if m := _PLACE.match(line):
            pool, cpu = int(m["pool"]), int(m["cpu"])
            if cpu >= 0:
                pool_of_cpu[cpu] = pool
            out.append({"ts": float(m["ts"]), "event": "place", "kind": m["kind"],
                        "pid": int(m["pid"]), "tgid": int(m["tgid"]), "pool": pool,
                        "cpu": cpu})
        elif m := _RELEASE.match(line):
            cpu = int(m["cpu"])
            out.append({"ts": float(m["ts"]), "event": "release", "kind": "",
                        "pid": int(m["pid"]), "tgid": int(m["tgid"]),
                        "pool": pool_of_cpu.get(cpu, -1), "cpu": cpu})
    return pd.DataFrame(out, columns=["ts", "event", "kind", "pid", "tgid", "pool", "cpu"])


def parse_spans(metrics: dict) -> pd.DataFrame:
    """The driver's ``span.<stream>.<index>.<app>=<pid> <start> <end>`` lines joined with
    its ``job.<stream>.<index>.<app>=<response>``: one row per job, in stream order."""
    out = []
    for key, value in metrics.items():
        if not key.startswith("span."):
            continue
        _, stream, index, app = key.split(".", 3)
        pid, start, end = str(value).split()
        out.append({"application": app, "stream": int(stream), "job_index": int(index),
                    "pid": int(pid), "start_s": float(start), "end_s": float(end),
                    "response_s": float(metrics[f"job.{stream}.{index}.{app}"])})
    return pd.DataFrame(out).sort_values(["stream", "job_index"], ignore_index=True)


def collect(run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The compact tables of study 4's runs (see the module's docstring)."""
    main, jobs, placements = [], [], []
    for d in run_dirs:
        res = json.loads((d / "results.json").read_text())
        row = rows(d)[0]
        # The per-job keys go to the jobs table, not into hundreds of columns here.
        row = {k: v for k, v in row.items() if not k.startswith(("job.", "span."))}
        coords = {"run_id": row["run_id"], **{k: row.get(k) for k in COORDINATES}}
        metrics = res["jobs"][0]["metrics"]
        if not any(k.startswith("span.") for k in metrics):
            main.append(row)        # a driver older than its span lines: no job table
            continue
        spans = parse_spans(metrics)
        row["pool_cpus"] = res["facts"].get("sysctl.kernel.sched_pool_cpus", "")
        trace_path = d / "artifacts" / "trace.txt"
        text = trace_path.read_text(errors="replace") if trace_path.is_file() else ""
        trace = parse_pool_trace(text)
        row["trace_lost_events"] = trace_lost_events(text)
        for kind in ("first", "expand", "spill", "fail"):
            row[f"placed_{kind}"] = int((trace["kind"] == kind).sum())
        row["released"] = int((trace["event"] == "release").sum())
        trace["time_s"] = trace["ts"] - (trace["ts"].min() if len(trace) else 0.0)
        pools = parse_pool_cpus(row["pool_cpus"])
        row["first_by_rule"] = rule_followed(trace, pools, str(row.get("placement")))
        by_pid = spans.set_index("pid")
        for job in spans.itertuples(index=False):
            mine = trace[trace["tgid"] == job.pid]
            placed = mine[(mine["event"] == "place") & (mine["cpu"] >= 0)]
            released = mine[mine["event"] == "release"]
            first = placed["time_s"].min() if len(placed) else math.nan
            last = released["time_s"].max() if len(released) else math.nan
            jobs.append({**coords, **job._asdict(),
                         "threads_placed": len(placed),
                         "pools": ",".join(str(p) for p in sorted(set(placed["pool"]))),
                         "cpus": ",".join(str(c) for c in placed["cpu"]),
                         "placed_s": first, "released_s": last, "held_s": last - first})
        for ev in trace.itertuples(index=False):
            job = by_pid.loc[ev.tgid] if ev.tgid in by_pid.index else None
            placements.append({**coords, "time_s": ev.time_s, "event": ev.event,
                               "kind": ev.kind, "pid": ev.pid, "tgid": ev.tgid,
                               "application": None if job is None else job["application"],
                               "stream": None if job is None else int(job["stream"]),
                               "job_index": None if job is None else int(job["job_index"]),
                               "pool": ev.pool, "cpu": ev.cpu})
        main.append(row)
    return {"": pd.DataFrame(main), "jobs": pd.DataFrame(jobs),
            "placements": pd.DataFrame(placements)}


def rule_followed(trace: pd.DataFrame, pools: tuple[tuple[int, ...], ...],
                  placement: str) -> int:
    """How many first threads of jobs went to a pool the placement rule allows, replaying
    the trace's placements and releases in order: first-fit, the first pool with a free
    CPU; best-fit, a pool with the fewest (non-zero) free CPUs; worst-fit, one with the
    most. (Worst-fit-jobs counts jobs, which the replay does not: it counts none.)"""
    free = {i: len(cpus) for i, cpus in enumerate(pools)}
    pool_of = {c: i for i, cpus in enumerate(pools) for c in cpus}
    followed = 0
    for ev in trace.itertuples(index=False):
        if ev.cpu < 0 or ev.cpu not in pool_of:
            continue
        pool = pool_of[ev.cpu]
        if ev.event == "release":
            free[pool] += 1
            continue
        if ev.kind == "first":
            open_ = {i: n for i, n in free.items() if n > 0}
            allowed = {"first-fit": {min(open_)} if open_ else set(),
                       "best-fit": {i for i, n in open_.items() if n == min(open_.values())},
                       "worst-fit": {i for i, n in open_.items()
                                     if n == max(open_.values())}}.get(placement, set())
            followed += pool in allowed
        free[pool] -= 1
    return followed


# ---------------------------------------------------------------------------------------------
# Confidence intervals

def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the x with P(T <= x) = p, T with ``df`` degrees of freedom
    (bisection on the distribution function, the density integrated by Simpson's rule;
    numpy only, as the project carries no scipy)."""
    if df < 1:
        return math.nan
    log_c = (math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi))

    def cdf(x: float) -> float:
        grid = np.linspace(0.0, abs(x), 4001)
        dens = np.exp(log_c - (df + 1) / 2 * np.log1p(grid ** 2 / df))
        h = grid[1] - grid[0]
        area = h / 3 * (dens[0] + dens[-1] + 4 * dens[1:-1:2].sum() + 2 * dens[2:-1:2].sum())
        return 0.5 + math.copysign(area, x)

    lo, hi = -1e3, 1e3
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def mean_ci(values, level: float = LEVEL) -> tuple[float, float, int]:
    """(mean, half-width of the two-sided ``level`` interval, n); NaN half-width for n < 2."""
    x = np.asarray(values, float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    if n < 2:
        return float(x.mean()), math.nan, n
    half = t_quantile((1 + level) / 2, n - 1) * x.std(ddof=1) / math.sqrt(n)
    return float(x.mean()), float(half), n


def run_means(jobs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Each run's mean response time per application, and over all its jobs
    (application ``all``): the samples of :func:`response_times`."""
    keys = ["run_id", *by]
    per_app = jobs.groupby([*keys, "application"], sort=False, dropna=False)["response_s"]
    every = jobs.groupby(keys, sort=False, dropna=False)["response_s"]
    return pd.concat([per_app.agg(["mean", "count"]).reset_index(),
                      every.agg(["mean", "count"]).reset_index().assign(application=ALL)],
                     ignore_index=True).rename(columns={"mean": "run_mean_s",
                                                        "count": "jobs"})


def response_times(jobs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per condition (``by``) and application (and ``all``): the mean response time over
    the condition's runs with its 90 % interval (the run is the sample), runs and jobs."""
    out = []
    for keys, g in run_means(jobs, by).groupby([*by, "application"], sort=False,
                                               dropna=False):
        mean, half, n = mean_ci(g["run_mean_s"])
        out.append({**dict(zip([*by, "application"], keys)), "mean_s": mean,
                    "ci90_s": half, "runs": n, "jobs": int(g["jobs"].sum())})
    return pd.DataFrame(out)


def normalised(jobs: pd.DataFrame, base: str = "first-fit",
               other: str = "worst-fit") -> pd.DataFrame:
    """Fig. 5: per application (and ``all``) the ratio of ``other``'s mean response time to
    ``base``'s, paired by repetition (the same start offset): the sample is each
    repetition's ratio, its mean with a 90 % interval."""
    means = run_means(jobs, ["placement", "rep"])
    wide = means.pivot_table(index=["application", "rep"], columns="placement",
                             values="run_mean_s")
    out = []
    for app, g in wide.groupby(level="application", sort=False):
        if base not in g or other not in g:
            continue
        ratio = (g[other] / g[base]).dropna()
        mean, half, n = mean_ci(ratio)
        out.append({"application": app, "ratio": mean, "ci90": half, "pairs": n})
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------------------------
# Figures

def _applications(frame: pd.DataFrame) -> list[str]:
    apps = [a for a in COLOURS if a in set(frame["application"]) and a != ALL]
    return apps + [ALL]


def _whiskers(half: pd.Series) -> np.ndarray:
    """Half-widths; NaN (one run: no interval) draws no whisker."""
    return half.to_numpy(float)


def _lines_over_pool_sizes(jobs: pd.DataFrame, line: str, line_label: str, ctx, dest,
                           caption: str) -> Path:
    """One panel per application and one for all: mean response time over the pool size,
    one line per value of ``line``."""
    stats = response_times(jobs, [line, "pool_size"])
    apps = _applications(stats)
    # A panel more than the applications: the legend's.
    cols = min(4, len(apps) + 1)
    rows_ = math.ceil((len(apps) + 1) / cols)
    fig, axes = plt.subplots(rows_, cols, figsize=(3.6 * cols, 3.0 * rows_), squeeze=False)
    values = sorted(stats[line].dropna().unique())
    for ax, app in zip(axes.flat, apps):
        for k, value in enumerate(values):
            s = stats[(stats["application"] == app) & (stats[line] == value)]
            s = s.sort_values("pool_size")
            n = int(s["runs"].min()) if len(s) else 0
            ax.errorbar(s["pool_size"], s["mean_s"], yerr=_whiskers(s["ci90_s"]), capsize=3,
                        marker="o", color=LINE_COLOURS[k % len(LINE_COLOURS)],
                        label=f"{line_label} {value:g} (n={n})")
        ax.set_title("all applications" if app == ALL else app.upper(), fontsize=8)
        # Pool sizes 1, 2, 3, 4, 6, 12: on a linear axis 1 to 4 crowd together.
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
        sizes = sorted(stats["pool_size"].dropna().unique())
        ax.set_xticks(sizes, [f"{int(p)}" for p in sizes], fontsize=7)
        ax.set_xlabel("pool size (processors per pool, log scale)", fontsize=8)
        ax.set_ylabel("mean response time (s)", fontsize=8)
    # One legend for all panels (the lines are the same in each; n from the panel of all
    # applications), in a panel of its own: inside another it hid points.
    handles, labels = axes.flat[len(apps) - 1].get_legend_handles_labels()
    spare = list(axes.flat)[len(apps):]
    for ax in spare:
        ax.axis("off")
    spare[0].legend(handles, labels, loc="center", fontsize=8)
    return finish(fig, ctx, dest, caption)


def _bars(stats: pd.DataFrame, condition: str, label, ax, ylabel: str,
          value: str = "mean_s", half: str = "ci90_s", count: str = "runs") -> None:
    """Grouped bars per application, one bar per value of ``condition``, 90 % whiskers."""
    apps = _applications(stats)
    values = list(dict.fromkeys(stats[condition]))
    width = 0.8 / max(1, len(values))
    for k, v in enumerate(values):
        s = stats[stats[condition] == v].set_index("application").reindex(apps)
        xs = np.arange(len(apps)) + (k - (len(values) - 1) / 2) * width
        ax.bar(xs, s[value], width, yerr=_whiskers(s[half]), capsize=3,
               color=LINE_COLOURS[k % len(LINE_COLOURS)],
               label=f"{label(v)} (n={int(s[count].min())})")
    ax.set_xticks(range(len(apps)), ["all" if a == ALL else a.upper() for a in apps],
                  fontsize=8)
    ax.set_xlabel("application", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.legend(fontsize=7)


def _timing_note(ctx: FigureContext) -> str:
    return "" if get_backend(ctx.backend).timing_model else " " + QEMU_TIMING


def draw(experiment, tables: dict[str, pd.DataFrame], ctx: FigureContext,
         dest: Path) -> list[Path]:
    jobs, placements = tables["jobs"], tables.get("placements", pd.DataFrame())
    name = experiment.name
    csv = dest.with_suffix(".csv")
    if name == "brecht-fig1":
        sel = jobs[(jobs["parallelism"] == 4) & (jobs["placement"] == "worst-fit")]
        out = _lines_over_pool_sizes(sel, "delay", "ring delay (cycles)", ctx, dest, WHISKERS + ". "
                                     "Parallelism 4, Worst-Fit; lines: the ring delay "
                                     "(cycles)." + _timing_note(ctx))
        response_times(sel, ["delay", "pool_size"]).to_csv(csv, index=False)
        return [out, csv]
    if name == "brecht-fig2":
        sel = jobs[(jobs["delay"] == 16) & (jobs["placement"] == "worst-fit")]
        out = _lines_over_pool_sizes(sel, "parallelism", "parallelism", ctx, dest,
                                     WHISKERS + ". Ring delay 16 cycles, Worst-Fit; lines: "
                                     "threads per job (12 / parallelism streams)."
                                     + _timing_note(ctx))
        response_times(sel, ["parallelism", "pool_size"]).to_csv(csv, index=False)
        return [out, csv]
    if name == "brecht-fig3":
        return _bar_figure(jobs[jobs["parallelism"] == 6], "pool_size",
                           lambda v: f"pools of {int(v)}", "mean response time (s)",
                           "Parallelism 6 (2 streams of HOUGH, MM, SIMPLEX), ring delay 16 "
                           "cycles, Worst-Fit.", (7, 4), ctx, dest)
    if name == "brecht-fig5":
        ratios = normalised(jobs)
        stats = response_times(jobs, ["placement"])
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        _bars(stats, "placement", str, axes[0], "mean response time (s)")
        apps = _applications(ratios)
        r = ratios.set_index("application").reindex(apps)
        axes[1].bar(range(len(apps)), r["ratio"], yerr=_whiskers(r["ci90"]), capsize=3,
                    color=[COLOURS[a] for a in apps])
        axes[1].axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        axes[1].set_xticks(range(len(apps)), ["all" if a == ALL else a.upper()
                                              for a in apps], fontsize=8)
        for x, n in enumerate(r["pairs"]):
            axes[1].annotate(f"n={int(n)}", (x, 0), ha="center", va="bottom", fontsize=6,
                             color="white", xytext=(0, 2), textcoords="offset points")
        axes[1].set_xlabel("application", fontsize=8)
        axes[1].set_ylabel("Worst-Fit / First-Fit\nmean response time (ratio)", fontsize=8)
        ratios.to_csv(csv, index=False)
        return [finish(fig, ctx, dest, WHISKERS + ". Right: Worst-Fit's mean response time "
                                                  "over First-Fit's, paired by repetition "
                                                  "(same start offset), mean of the "
                                                  "repetitions' ratios with its 90 % "
                                                  "interval (n: pairs); below 1: Worst-Fit "
                                                  "is faster. Pools of 4, delay 16 cycles, "
                                                  "parallelism 4." + _timing_note(ctx)), csv]
    if name == "brecht-fig6":
        return [draw_placements(tables[""], jobs, placements, ctx, dest)]
    if name == "brecht-mm":
        return _bar_figure(jobs, "parallelism", lambda v: f"{int(v)} threads",
                           "MM's response time (s)", "MM alone, one job, at the paper's 192 x "
                           "192, with 4 and with 8 threads, one pool of the 12 job "
                           "processors, Worst-Fit, ring delay 16 cycles.", (6, 4), ctx, dest)
    raise ValueError(f"no figure for {name}")


def _bar_figure(jobs: pd.DataFrame, condition: str, label, ylabel: str, setting: str,
                size: tuple[float, float], ctx: FigureContext, dest: Path) -> list[Path]:
    """One panel of bars per application by ``condition`` (:func:`_bars`), its caption the
    whiskers, ``setting`` and the timing note; the figure and its table (CSV)."""
    stats = response_times(jobs, [condition])
    fig, ax = plt.subplots(figsize=size)
    _bars(stats, condition, label, ax, ylabel)
    csv = dest.with_suffix(".csv")
    stats.to_csv(csv, index=False)
    return [finish(fig, ctx, dest, WHISKERS + ". " + setting + _timing_note(ctx)), csv]


def occupancy(placements: pd.DataFrame) -> pd.DataFrame:
    """Intervals during which a thread held a CPU: run_id, cpu, pool, tgid, job, from, to
    (seconds from the streams' start), from each placement to its thread's release."""
    out = []
    for run_id, g in placements.groupby("run_id", sort=False):
        held: dict[int, dict] = {}
        for ev in g.sort_values("time_s", kind="stable").itertuples(index=False):
            if ev.event == "place" and ev.cpu >= 0:
                held[ev.pid] = ev._asdict()
            elif ev.event == "release" and ev.pid in held:
                p = held.pop(ev.pid)
                out.append({"run_id": run_id, "cpu": p["cpu"], "pool": p["pool"],
                            "tgid": p["tgid"], "application": p["application"],
                            "stream": p["stream"], "job_index": p["job_index"],
                            "from_s": p["time_s"], "to_s": ev.time_s})
        end = g["time_s"].max()
        for p in held.values():     # still held when the trace ended
            out.append({"run_id": run_id, "cpu": p["cpu"], "pool": p["pool"],
                        "tgid": p["tgid"], "application": p["application"],
                        "stream": p["stream"], "job_index": p["job_index"],
                        "from_s": p["time_s"], "to_s": end})
    return pd.DataFrame(out)


def draw_placements(runs: pd.DataFrame, jobs: pd.DataFrame, placements: pd.DataFrame,
                    ctx: FigureContext, dest: Path, max_runs: int = 2) -> Path:
    """Fig. 6: processor x time, each CPU's holder coloured by job, pools marked, for the
    first ``max_runs`` runs."""
    spans = occupancy(placements)
    run_ids = list(dict.fromkeys(spans["run_id"]))[:max_runs] if len(spans) else []
    fig, axes = plt.subplots(max(1, len(run_ids)), 1,
                             figsize=(11, 3.2 * max(1, len(run_ids))), squeeze=False)
    cmap = plt.get_cmap("tab20")
    for ax, run_id in zip(axes[:, 0], run_ids):
        sel = spans[spans["run_id"] == run_id]
        run = runs[runs["run_id"] == run_id].iloc[0]
        order = (sel[["stream", "job_index", "tgid", "application"]].drop_duplicates()
                 .sort_values(["stream", "job_index"], na_position="last"))
        colour = {t: cmap(i % 20) for i, t in enumerate(order["tgid"])}
        for iv in sel.itertuples(index=False):
            ax.barh(iv.cpu, iv.to_s - iv.from_s, left=iv.from_s, height=0.8,
                    color=colour[iv.tgid], edgecolor="black", linewidth=0.3)
        pools = parse_pool_cpus(str(run.get("pool_cpus", "") or ""))
        for i, cpus in enumerate(pools):
            ax.axhspan(min(cpus) - 0.5, max(cpus) + 0.5, color="grey",
                       alpha=0.08 if i % 2 else 0.0)
            ax.axhline(max(cpus) + 0.5, color="black", linewidth=0.6)
            ax.annotate(f"pool {i}", (1.0, (min(cpus) + max(cpus)) / 2),
                        xycoords=("axes fraction", "data"), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=7)
        all_cpus = sorted({c for p in pools for c in p} | set(sel["cpu"]))
        ax.set_yticks(all_cpus, [str(c) for c in all_cpus], fontsize=6)
        ax.set_ylim(min(all_cpus) - 0.5, max(all_cpus) + 0.5)
        ax.invert_yaxis()
        ax.set_ylabel("processor (CPU)", fontsize=8)
        ax.set_xlabel("time since the run's first pool placement (s, the kernel's trace clock)",
                      fontsize=8)
        ax.set_title(f"{run_id}: pools {run.get('pool_cpus')}, "
                     f"{run.get('placement')}, parallelism {run.get('parallelism')}, "
                     f"repetition {run.get('rep')}", fontsize=8)
        if len(order) <= 24:
            ax.legend(handles=[Patch(color=colour[r.tgid],
                                     label=f"stream {r.stream} job {r.job_index} "
                                           f"{str(r.application).upper()}")
                               for r in order.itertuples(index=False)],
                      fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.06, 1.0))
    if not run_ids:
        axes[0][0].axis("off")
    return finish(fig, ctx, dest, "Each bar: a thread of a job holding a processor, from its "
                                  "placement to its release (the kernel's sched_pool_place "
                                  "and sched_pool_release tracepoints); colour: the job; "
                                  "horizontal lines: pool boundaries. Processors in no pool "
                                  "(Hector's station 0) are kept for the system."
                  + _timing_note(ctx))


def summary(experiment, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Mean response time per condition and application with its 90 % interval (the run
    is the sample); Fig. 5 adds Worst-Fit over First-Fit."""
    jobs = tables.get("jobs")
    if jobs is None or jobs.empty:
        return pd.DataFrame()
    by = [c for c in ("delay", "parallelism", "pool_size", "placement")
          if c in jobs and jobs[c].nunique() > 1] or ["pool_size"]
    out = response_times(jobs, by)
    if experiment.name == "brecht-fig5":
        ratios = normalised(jobs).rename(columns={"ratio": "worst/first",
                                                  "ci90": "worst/first ci90"})
        out = out.merge(ratios, on="application", how="left")
    return out
