"""Study 1's figures: high vs low cache affinity, per benchmark.

Figures 2 and 3 compare, per benchmark, the run next to BV_0 (high L1 affinity) with the run
next to BV_L1I (low); Figures 4 to 7 HI_AFF with LOW_AFF. Bars are means over repetitions,
whiskers two standard deviations, and the % change of low over high is printed above each
pair, as in the paper. The metric is the benchmark's own (per-task attribution).
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from schedlab.analysis import slices
from schedlab.analysis.figures import (CHANGE_NOTE, WHISKERS, FigureContext, finish,
                                       metric_label, paired_bars, programs_note)
from schedlab.analysis.metrics import paired_summary
from schedlab.analysis.tables import rows

# The coordinates the turns table keeps of each run.
COORDINATES = ("machine", "benchmark", "bv", "l2_retention", "interfering", "affinity",
               "quantum_ms", "rep")


def collect(run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The compact tables: "" (one row per run: the benchmark's own metrics, its quanta and
    how completely the region's counters were attributed) and "turns" (one row per quantum
    the benchmark or a task sharing its CPU took, from the guest's sched_switch trace)."""
    main, turns = [], []
    for d in run_dirs:
        res = json.loads((d / "results.json").read_text())
        job = res["jobs"][0]
        row = rows(d)[0]
        row.update(_attribution_check(job))
        if (d / "artifacts" / "trace.txt").is_file():
            switches = slices.read_trace(d)
            if "interfering" in res.get("label", {}):
                # The copies by name over the whole trace: one that ran its region through
                # on a CPU of its own switches only outside it.
                row.update(_main_copies(switches, job))
            # The region's quanta where the launcher marked it in the trace; the whole run's
            # (its warm-up too, where a start-delayed base vector's first turns are short)
            # for runs made before it did.
            window = slices.roi_window(d, job["job"], job["rep"])
            if window is not None:
                switches = slices.within(switches, window)
            quanta = _quanta(switches, job["pid"], res.get("label", {}))
            row.update(quanta.pop("summary"), turns_scope="region" if window else "run")
            coords = {k: row.get(k) for k in COORDINATES}
            turns += [{"run_id": row["run_id"], **coords, **t} for t in quanta["turns"]]
        main.append(row)
    return {"": pd.DataFrame(main), "turns": pd.DataFrame(turns)}


# Region totals that count every CPU (results.json's "cycles" is the busiest core's). The
# totals come from the guest's "m5 dumpstats" after "m5 workend", so they also count the
# start of that m5 process: instructions agree to about 1e-5, misses less closely.
ATTRIBUTED = ("insts", "l1d_misses", "l1i_misses")


def _attribution_check(job: dict) -> dict:
    """The share of the region's instructions and L1 misses (all CPUs) that per-task
    attribution charged to some task: 1 when the tasks' shares add up to the totals."""
    tasks = job.get("tasks") or {}
    region = job.get("gem5") or {}
    out = {}
    for k in ATTRIBUTED:
        if tasks and region.get(k):
            out[f"attributed_{k}_share"] = sum(t.get(k, 0) for t in tasks.values()) / region[k]
    return out


def _main_copies(switches: list[slices.Switch], job: dict) -> dict:
    """Experiment B: the main benchmark's copies together (the measured one and the others,
    recognised in the trace by the measured one's command name): their summed
    instructions, cycles and LLC misses in the region, as IPC and LLC misses per
    instruction, and how many copies ran."""
    # Its name after its last exec: a real program with a redirection starts as the shell
    # that execs it (launch -> sh -> gzip), and "sh" would also match the runner.
    comm = next(name for s in reversed(switches)
                for pid, name in ((s.next_pid, s.next_comm), (s.prev_pid, s.prev_comm))
                if pid == job["pid"] and name not in ("launch", "sh"))
    # Switched out as well as in: a copy alone on its core from its exec on is switched in
    # under its own name never, and out only when the runner stops it.
    pids = ({str(s.next_pid) for s in switches if s.next_comm == comm}
            | {str(s.prev_pid) for s in switches if s.prev_comm == comm})
    copies = [t for pid, t in (job.get("tasks") or {}).items() if pid in pids]
    insts = sum(t.get("insts", 0) for t in copies)
    cycles = sum(t.get("cycles", 0) for t in copies)
    if not insts or not cycles:
        return {}
    return {"copies": len(copies), "copies_ipc": insts / cycles,
            "copies_llc_mpi": sum(t.get("llc_misses", 0) for t in copies) / insts}


def _quanta(switches: list[slices.Switch], pid: int, label: dict) -> dict:
    """Experiment A: the turns of the benchmark and the base vector on their shared CPU;
    experiment B: the benchmark's own preempted slices (no task shares a CPU by binding)."""
    q = float(label.get("quantum_ms", 0)) or None
    if "bv" in label:
        cpu, tracked = slices.sharing_pids(switches, pid)
        report = slices.quantum_report(switches, cpu, tracked, q, since_pid=pid)
        all_turns = slices.shared_turns(switches, cpu, tracked, pid)
        table = [{"task": "benchmark" if t.pid == pid else "base vector", "cpu": t.cpu,
                  "ms": t.ms, "full": whole}
                 for t, whole in zip(all_turns, slices.full_turns(all_turns))]
        summary = {"turns_full": report["full_turns"], "turn_median_ms": report["median_ms"],
                   "turns_within_10pct": report["within"]}
        return {"summary": summary, "turns": table}
    lengths = slices.preempted_slices(switches, pid)
    table = [{"task": "benchmark", "cpu": None, "ms": x, "full": True} for x in lengths]
    median = float(pd.Series(lengths).median()) if lengths else None
    return {"summary": {"turns_full": len(lengths), "turn_median_ms": median,
                        "turns_within_10pct": (sum(abs(x - q) <= 0.1 * q for x in lengths)
                                               / len(lengths)) if lengths and q else None},
            "turns": table}


def draw(experiment, tables: dict[str, pd.DataFrame], ctx: FigureContext,
         dest: Path) -> list[Path]:
    """The figure, then the quanta the runs actually got (from the scheduler trace)."""
    frame = tables[""]
    metric = experiment.metric
    if metric not in frame:
        # QEMU runs have no per-task counters: the benchmark's elapsed time is what is
        # left, and it shows placement, not caches.
        metric = "wall_s"
    if experiment.name == "kazempour-expA":
        out = [_every_condition(frame, metric, ctx, dest)]
        # Fig. 3's plot for every condition too, and the data cache's for BV_L1D.
        for misses in EXPERIMENT_A_MISSES:
            if misses in frame:
                title = ctx.title.replace("IPC", metric_label(misses), 1)
                out.append(_every_condition(frame, misses, dataclasses.replace(ctx, title=title),
                                            dest.with_name(f"{dest.stem}--{misses}.png")))
    else:
        fig, ax = plt.subplots(figsize=(9, 4.6))
        paired_bars(ax, frame, metric, "benchmark", "affinity", ("high", "low"),
                    _names(experiment.name))
        note = programs_note(frame)
        ax.set_xlabel(f"benchmark ({note})" if note else "benchmark", fontsize=8)
        out = [finish(fig, ctx, dest, WHISKERS + "; above each pair: change of low over "
                                                 "high affinity" + CHANGE_NOTE + ".")]
    turns = tables.get("turns")
    if turns is not None and len(turns):
        scopes = set(frame.get("turns_scope", pd.Series(["run"])).dropna())
        out.append(draw_quanta(turns, ctx, dest.with_name(dest.stem + "--quanta.png"),
                               "region" if scopes == {"region"} else "run"))
    return out


# Experiment A's low-affinity base vectors, each paired with BV_0.
LOW_AFFINITY_BVS = ("bv_l1d", "bv_l1i")
# Experiment A's miss figures beside its IPC figure.
EXPERIMENT_A_MISSES = ("task_l1i_mpi", "task_l1d_mpi")

# The metrics each figure family summarises: IPC and the misses per instruction of the
# cache level its affinity is about (the L2 is Clovertown's last level: task_llc_mpi).
SUMMARY_METRICS = {"kazempour-fig2": ("task_ipc", "task_l1i_mpi"),
                   "kazempour-fig3": ("task_ipc", "task_l1i_mpi"),
                   "kazempour-expA": ("task_ipc", "task_l1i_mpi", "task_l1d_mpi"),
                   "kazempour-fig4": ("copies_ipc", "copies_llc_mpi"),
                   "kazempour-fig5": ("copies_ipc", "copies_llc_mpi"),
                   "kazempour-fig6": ("copies_ipc", "copies_llc_mpi"),
                   "kazempour-fig7": ("copies_ipc", "copies_llc_mpi")}


def summary(experiment, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per benchmark and condition: the change of each metric from high to low affinity
    (%), with a 95 % confidence interval over the repetitions (Welch's t)."""
    frame = tables[""]
    if experiment.name == "kazempour-expA":
        # Each low-affinity base vector against BV_0, per machine, L2 retention, quantum.
        panels = []
        for keys, sub in frame.groupby(["machine", "l2_retention", "quantum_ms"], sort=False):
            for low in sorted(set(sub["bv"]) - {"bv_0"}):
                coords = dict(zip(["machine", "l2_retention", "quantum_ms"], keys), bv=low)
                panels.append((coords, sub[sub["bv"].isin(["bv_0", low])], "bv", "bv_0", low))
    else:
        panels = [({}, frame, "affinity", "high", "low")]
    out = []
    for coords, sub, condition, base, low in panels:
        for metric in SUMMARY_METRICS.get(experiment.name, ("task_ipc",)):
            if metric not in sub:
                continue
            for r in paired_summary(sub, metric, "benchmark", condition, base,
                                    low).to_dict("records"):
                out.append({**coords, "benchmark": r["benchmark"], "metric": metric,
                            "n": r["n"], "high affinity": r[f"{metric} {base}"],
                            "low affinity": r[f"{metric} {low}"],
                            "change %": r["change %"], "95% CI low %": r["95% CI low %"],
                            "95% CI high %": r["95% CI high %"]})
    return pd.DataFrame(out)


def draw_quanta(turns: pd.DataFrame, ctx: FigureContext, dest: Path,
                scope: str = "region") -> Path:
    """Histogram of the full turns (experiment A: benchmark and base vector alternating on
    one CPU) or preempted slices (experiment B) per quantum, with the quantum marked.
    ``scope``: "region" (the launcher marked the region in the trace) or "run" (the whole
    run, warm-up included: runs made before it did)."""
    full = turns[turns["full"].astype(bool)]
    quanta = sorted(full["quantum_ms"].dropna().unique())
    fig, axes = plt.subplots(1, max(1, len(quanta)), figsize=(max(9.0, 4.5 * len(quanta)), 5.2),
                             squeeze=False)
    for ax, q in zip(axes[0], quanta):
        sel = full[full["quantum_ms"] == q]
        for task, sub in sel.groupby("task"):
            ax.hist(sub["ms"], bins=30, alpha=0.6, label=f"{task} (n={len(sub)})")
        ax.axvline(q, color="black", linestyle="--", linewidth=1, label=f"quantum {q:g} ms")
        ax.axvspan(0.9 * q, 1.1 * q, color="grey", alpha=0.15, label="quantum ± 10 %")
        within = (abs(sel["ms"] - q) <= 0.1 * q).mean()
        ax.set_title(f"Q = {q:g} ms: {within:.0%} of {len(sel)} within ± 10 %", fontsize=8)
        ax.set_xlabel("turn on the CPU (ms, guest clock)", fontsize=8)
        ax.set_ylabel("turns", fontsize=8)
        ax.legend(fontsize=7)
    where = ("in each run's region of interest" if scope == "region" else
             "over each whole run, its warm-up included (runs made before the launcher marked "
             "the region in the trace; a base vector started with a delay takes a few short "
             "turns there)")
    return finish(fig, ctx, dest, "Turns between the benchmark and the tasks sharing its "
                                  f"CPU, from the guest's sched_switch trace, {where}; partial "
                                  "turns (a run's first and last, one its task exits in) are "
                                  "left out.")


def _names(name: str) -> tuple[str, str]:
    if name in ("kazempour-fig2", "kazempour-fig3"):
        return ("high L1 affinity (next to BV_0)", "low L1 affinity (next to BV_L1I)")
    return ("HI_AFF (main copies bound)", "LOW_AFF (nothing bound, cache affinity off)")


def _every_condition(frame: pd.DataFrame, metric: str, ctx: FigureContext, dest: Path) -> Path:
    """Experiment A: one panel per machine, L2 retention and quantum; pairs BV_0 vs each
    low-affinity base vector."""
    panels = frame.groupby(["machine", "l2_retention", "quantum_ms", "bv"], sort=False)
    keys = sorted({k[:3] for k in panels.groups}, key=str)
    # Before any low-affinity run has finished (a --partial figure) the BV_0 bars stand
    # alone, each beside an empty partner, in both base vectors' columns.
    bvs = [b for b in LOW_AFFINITY_BVS if b in set(frame["bv"])] or list(LOW_AFFINITY_BVS)
    fig, axes = plt.subplots(len(keys), len(bvs), figsize=(6 * len(bvs), 2.8 * len(keys)),
                             squeeze=False)
    for i, (machine, retention, quantum) in enumerate(keys):
        for j, bv in enumerate(bvs):
            sel = frame[(frame["machine"] == machine) & (frame["l2_retention"] == retention)
                        & (frame["quantum_ms"] == quantum) & frame["bv"].isin(["bv_0", bv])]
            ax = axes[i][j]
            paired_bars(ax, sel, metric, "benchmark", "bv", ("bv_0", bv),
                        ("next to BV_0", f"next to {bv.upper()}"))
            # Left, on two lines: the legend takes the right of the same strip.
            ax.set_title(f"{machine}\n{retention} L2 retention, {quantum} ms quantum",
                         fontsize=8, loc="left")
            # One axis label per row (the columns share the metric), narrow enough for
            # the panel's height.
            ax.set_ylabel("" if j else textwrap.fill(metric_label(metric), 24), fontsize=8)
    note = programs_note(frame)
    return finish(fig, ctx, dest, WHISKERS + "; above each pair: change next to the "
                                             "low-affinity base vector" + CHANGE_NOTE + "."
                  + (f" Benchmarks: {note}." if note else ""))
