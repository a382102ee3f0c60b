"""Study 2's tables and figures: the software mixer, vanilla vs task-affinity.

From every run: the mixer's production time per sample, the CPU of each task per sample
(the migrations map) and the execution time per task (the mixer's own files, kept as run
artifacts), on gem5 the region's misses, and from the guest's scheduler trace each task's
migrations and turns on the CPUs. Compact data: the runs table with each repetition's
production statistics and per-task migrations and execution times, a samples table (one
row per sample: production time and the CPU of every task) and a turns table (each task's
turns on each CPU, from the trace).

Migrations per task are the kernel's (its trace). The mixer's per-sample map, what each
task's ``sched_getcpu()`` read (Fig. 3), is kept only where every CPU it names ran a mixer
task: without rseq in the guest kernel, glibc answers through the vDSO's LSL instruction,
which gem5 v24 does not model (every sample read CPU 123, the segment selector itself), and
Fig. 3 then shows the trace's turns over time instead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from schedlab.analysis import mixer, slices, wakeups
from schedlab.analysis.figures import (WHISKERS, FigureContext, condition_stats, finish,
                                       plain_log_ticks, whiskers)
from schedlab.analysis.tables import rows

POLICIES = ("vanilla", "task-affinity")
COLOURS = {"vanilla": "#4c72b0", "task-affinity": "#dd8452"}
IDLE_COLOURS = {"default": "#8c8c8c", "halt": "#4c72b0", "poll": "#55a868",
                "halt-poll": "#dd8452"}


def _repetitions(run_dir: Path) -> list[Path]:
    return sorted(p for p in (run_dir / "artifacts" / "mixer").glob("*") if p.is_dir())


def collect(run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The compact tables of the mixer runs: "" (one row per job repetition), "samples"
    (one row per sample) and "turns" (one row per turn of a task on a CPU)."""
    main, samples, turns = [], [], []
    for d in run_dirs:
        reps = {int(p.name): p for p in _repetitions(d)}
        for row in rows(d):
            rep_dir = reps.get(int(row["job_rep"]))
            if rep_dir is None:
                main.append(row)
                continue
            run = mixer.load(rep_dir)
            report = mixer.report(run)
            prod = report["production"]
            row.update({"production_mean_ns": prod["mean_ns"], "production_sd_ns": prod["sd_ns"],
                        "production_rho_ns": prod["rho_ns"], "samples": run.samples})
            tids = mixer.read_tids(rep_dir / "tids.csv")
            text = _trace(d)
            task_turns = _turns(text, tids) if text else []
            ran_on = {t.cpu for t in task_turns}
            map_ok = not text or all(c in ran_on for t in mixer.TASKS for c in run.cpu_map[t])
            moved = wakeups.migrations(text, set(tids.values())) if text else {}
            for task, t in report["tasks"].items():
                # The kernel's count where the trace has it; the mixer's map's else.
                row[f"{task}_migrations"] = moved.get(tids.get(task), t["cpu_changes"])
                row[f"{task}_cpu_changes"] = t["cpu_changes"] if map_ok else None
                row[f"{task}_exec_mean_ns"] = t["exec_mean_ns"]
                row[f"{task}_exec_var_ns2"] = t["exec_var_ns2"]
            row["cpu_map_ok"] = int(map_ok)
            row.update(_miss_rates(_job(d, row), tids))
            row.update(_wakeups(text, set(tids.values())))
            main.append(row)
            where = {"run_id": row["run_id"], "system": row.get("system"),
                     "cores": row.get("cores"), "policy": row["policy"], "rep": row.get("rep")}
            for n in range(run.samples):
                samples.append({**where, "sample": n,
                                "production_ns": run.production_ns[n - 1] if n else None,
                                **{f"cpu_{t}": run.cpu_map[t][n] if map_ok else None
                                   for t in mixer.TASKS}})
            start = min((t.start_s for t in task_turns), default=0.0)
            names = {tid: task for task, tid in tids.items()}
            turns.extend({**where, "task": names[t.pid], "cpu": t.cpu,
                          "start_us": round((t.start_s - start) * 1e6),
                          "end_us": round((t.end_s - start) * 1e6)} for t in task_turns)
    return {"": pd.DataFrame(main), "samples": pd.DataFrame(samples),
            "turns": pd.DataFrame(turns)}


def _trace(run_dir: Path) -> str:
    path = run_dir / "artifacts" / "trace.txt"
    return path.read_text(errors="replace") if path.is_file() else ""


def _turns(text: str, tids: dict[str, int]) -> list[slices.Turn]:
    """The mixer tasks' times on a CPU, each from its switch-in to its switch-out there, in
    time order (a task still on a CPU when the trace ends is left out)."""
    tracked = set(tids.values())
    on: dict[int, tuple[int, str, float]] = {}      # cpu -> (pid, comm, since)
    out = []
    for s in slices.parse_switches(text):
        running = on.pop(s.cpu, None)
        if running is not None and running[0] == s.prev_pid:
            out.append(slices.Turn(s.cpu, running[0], running[1], running[2], s.time_s))
        if s.next_pid in tracked:
            on[s.cpu] = (s.next_pid, s.next_comm, s.time_s)
    return sorted(out, key=lambda t: t.start_s)


MISS_RATE_LABELS = {"mixer_l1d_load_miss_rate": "L1 D-cache load miss rate",
                    "mixer_l1d_store_miss_rate": "L1 D-cache store miss rate",
                    "mixer_llc_load_miss_rate": "last-level cache load miss rate",
                    "mixer_llc_store_miss_rate": "last-level cache store miss rate",
                    "wall_s": "elapsed time (s, guest clock)"}
# The caches' load and store counts that per-task attribution gives (gem5 runs).
LOADS_STORES = ("l1d_load", "l1d_store", "llc_load", "llc_store")


def _job(run_dir: Path, row: dict) -> dict:
    res = json.loads((run_dir / "results.json").read_text())
    return next(j for j in res["jobs"] if j["rep"] == row["job_rep"])


def _miss_rates(job: dict, tids: dict[str, int]) -> dict:
    """Load and store miss rates (misses per access) at the L1 D-cache and the last level:
    per mixer task (its thread's attributed counters) and for the seven tasks together
    (``mixer_*``, the figure's numbers)."""
    attributed = job.get("tasks") or {}
    out: dict = {}
    together = {f"{w}_{k}": 0.0 for w in LOADS_STORES for k in ("misses", "accesses")}
    for task, tid in tids.items():
        t = attributed.get(str(tid))
        if not t:
            continue
        for what in LOADS_STORES:
            misses, accesses = t.get(f"{what}_misses"), t.get(f"{what}_accesses")
            if misses is None or not accesses:
                continue
            out[f"{task}_{what}_miss_rate"] = misses / accesses
            together[f"{what}_misses"] += misses
            together[f"{what}_accesses"] += accesses
    for what in LOADS_STORES:
        if together[f"{what}_accesses"]:
            out[f"mixer_{what}_miss_rate"] = (together[f"{what}_misses"]
                                              / together[f"{what}_accesses"])
    return out


def _wakeups(text: str, pids: set[int]) -> dict:
    """The mixer tasks' wake-ups onto idle CPUs (schedlab/analysis/wakeups.py), from the
    run's scheduler trace; nothing for runs traced without sched_waking."""
    if not pids or "sched_waking:" not in text:
        return {}
    return {"trace_lost_events": slices.trace_lost_events(text),
            **wakeups.columns(wakeups.wakeups(text, pids))}


def halving(samples: pd.DataFrame) -> pd.DataFrame:
    """Whether the smoke scale has enough samples: mu and rho from the first half of every
    repetition's samples against all of them, per machine, cores and policy."""
    out = []
    for (system, cores, policy), g in samples.groupby(["system", "cores", "policy"]):
        # Sample 0 has no production time (its predecessor is the start): samples 1..n/2.
        half = g[g["sample"] <= g.groupby("run_id")["sample"].transform("max") / 2]
        entry = {"machine": system, "cores": int(cores), "policy": policy}
        for label, part in (("all", g), ("first half", half)):
            s = part["production_ns"].dropna()
            entry[f"n ({label})"] = len(s)
            entry[f"mu_us ({label})"] = s.mean() / 1e3
            entry[f"rho_us ({label})"] = (s.mean() + 2 * s.std()) / 1e3
        for what in ("mu_us", "rho_us"):
            entry[f"{what} change %"] = 100 * (entry[f"{what} (first half)"]
                                               / entry[f"{what} (all)"] - 1)
        out.append(entry)
    return pd.DataFrame(out)


def table1(frame: pd.DataFrame) -> pd.DataFrame:
    """Table I: production time mean, variance and rho = mu + 2 sigma over all samples of
    all repetitions, per machine, cores and policy, and the speed-up of task-affinity
    (vanilla's rho over task-affinity's)."""
    out = []
    for (system, cores), g in frame.groupby(["system", "cores"]):
        entry = {"machine": system, "cores": int(cores)}
        for policy in POLICIES:
            s = g[g["policy"] == policy]["production_ns"].dropna()
            mu, var = s.mean(), s.var()
            entry[f"{policy} mu_us"] = mu / 1e3
            entry[f"{policy} var_us2"] = var / 1e6
            entry[f"{policy} rho_us"] = (mu + 2 * math.sqrt(var)) / 1e3 if len(s) > 1 else math.nan
        entry["speed-up (rho)"] = entry["vanilla rho_us"] / entry["task-affinity rho_us"]
        out.append(entry)
    return pd.DataFrame(out)


def draw(experiment, tables: dict[str, pd.DataFrame], ctx: FigureContext,
         dest: Path) -> list[Path]:
    frame, samples = tables[""], tables.get("samples", pd.DataFrame())
    name = experiment.name
    if name == "demarchi-table1":
        t = table1(samples)
        fig, ax = plt.subplots(figsize=(12, 2.4 + 0.45 * len(t)))
        ax.axis("off")
        shown = t.map(lambda v: f"{v:.4g}" if isinstance(v, float) else str(v))
        labels = [c.replace(" ", "\n", 1) for c in t.columns]
        cells = ax.table(cellText=shown.values, colLabels=labels, loc="center",
                         cellLoc="center")
        cells.auto_set_font_size(False)
        cells.set_fontsize(8)
        cells.scale(1, 2.2)
        for (row, _), cell in cells.get_celld().items():
            if row == 0:     # two-line column labels
                cell.set_height(cell.get_height() * 1.6)
        csv = dest.with_suffix(".csv")
        t.to_csv(csv, index=False)
        halves = dest.with_name(dest.stem + "--halving.csv")
        halving(samples).to_csv(halves, index=False)
        return [finish(fig, ctx, dest, "Production time per sample over all samples of all "
                                       "repetitions; rho = mu + 2 sigma; speed-up = vanilla "
                                       "rho / task-affinity rho."), csv, halves]
    if name in ("demarchi-fig7", "demarchi-fig8"):
        system = "A" if name.endswith("7") else "B"
        sel = samples[samples["system"] == system]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), squeeze=False)
        for ax, cores in zip(axes[0], (2, 4)):
            for policy in POLICIES:
                s = np.sort(sel[(sel["cores"] == cores) & (sel["policy"] == policy)]
                            ["production_ns"].dropna().to_numpy()) / 1e3
                if len(s):
                    ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post",
                            label=f"{policy} (n={len(s)} samples)", color=COLOURS[policy])
            ax.set_xlabel("sample production time (µs)")
            ax.set_ylabel("fraction of samples ≤ x")
            ax.set_title(f"machine {system}, {cores} cores", fontsize=8)
            ax.legend(fontsize=7)
        return [finish(fig, ctx, dest, "Empirical CDF of the production time of every sample "
                                       "of every repetition.")]
    if name == "demarchi-idle":
        return _idle_check(frame, samples, ctx, dest)
    if name == "demarchi-tail":
        return _tail_check(frame, samples, ctx, dest)
    four = frame[frame["cores"] == 4]
    if name == "demarchi-fig5":
        return [_per_task(four, [("migrations", "migrations per run (log scale)")], ctx, dest,
                          log=True, note=" Migrations: the kernel's sched_migrate_task events "
                                         "of each task.")]
    if name == "demarchi-fig6":
        return [_per_task(four, [("exec_mean_ns", "mean execution time per sample (ns)"),
                                 ("exec_var_ns2", "variance of the execution time (ns²)")],
                          ctx, dest)]
    if name == "demarchi-fig3":
        four = samples[samples["cores"] == 4] if len(samples) else samples
        if _per_sample_cpus(four) is not None:
            return [_per_sample_map(four, ctx, dest)]
        turns = tables["turns"]
        return [_migrations_map(turns[turns["cores"] == 4], ctx, dest)]
    if name == "demarchi-fig4":
        metrics = [f"mixer_{w}_miss_rate" for w in LOADS_STORES
                   if f"mixer_{w}_miss_rate" in frame] or ["wall_s"]
        columns = min(2, len(metrics))
        fig, axes = plt.subplots(math.ceil(len(metrics) / columns), columns,
                                 figsize=(6.5 * columns, 3.8 * math.ceil(len(metrics) / columns)),
                                 squeeze=False)
        for ax, metric in zip(axes.flat, metrics):
            stats = condition_stats(frame, metric, ["system", "cores", "policy"])
            labels = [f"{r.system} {r.cores}c\n{r.policy}" for r in stats.itertuples()]
            ax.bar(labels, stats["mean"], yerr=whiskers(stats), capsize=3,
                   color=[COLOURS[p] for p in stats["policy"]])
            ax.set_ylabel(MISS_RATE_LABELS.get(metric, metric), fontsize=8)
            ax.tick_params(axis="x", labelsize=6)
        return [finish(fig, ctx, dest, WHISKERS + ". Misses per access of the mixer's seven "
                                                  "tasks together (their threads' attributed "
                                                  "counters): loads and stores at the L1 "
                                                  "D-cache and at the last level (A: L3, B: "
                                                  "L2).")]
    raise ValueError(f"no figure for {name}")


def _per_task(frame: pd.DataFrame, rows: list[tuple[str, str]], ctx: FigureContext,
              dest: Path, log: bool = False, note: str = "") -> Path:
    """One row of panels (machine A, machine B) per (column suffix, axis label) in rows."""
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 4 * len(rows)), squeeze=False)
    for (what, ylabel), row in zip(rows, axes):
        for ax, system in zip(row, ("A", "B")):
            sel = frame[frame["system"] == system]
            width = 0.38
            for k, policy in enumerate(POLICIES):
                p = sel[sel["policy"] == policy]
                cols = [f"{t}_{what}" for t in mixer.TASKS]
                if p.empty or not all(c in p for c in cols):
                    continue
                means = [p[c].mean() for c in cols]
                sds = [p[c].std() if len(p) > 1 else 0.0 for c in cols]
                xs = [i + (k - 0.5) * width for i in range(len(cols))]
                # On a log axis a whisker below zero cannot be drawn: it stops at 1 % of
                # the bar.
                low = [min(2 * sd, 0.99 * m) if log else 2 * sd for m, sd in zip(means, sds)]
                ax.bar(xs, means, width, yerr=[low, [2 * sd for sd in sds]], capsize=3,
                       color=COLOURS[policy], label=f"{policy} (n={len(p)})")
            ax.set_xticks(range(len(mixer.TASKS)), mixer.TASKS, fontsize=7)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_title(f"machine {system}, 4 cores", fontsize=8)
            if log:
                ax.set_yscale("log")
            ax.legend(fontsize=7)
    return finish(fig, ctx, dest, WHISKERS + (" (on the log axis a lower whisker below zero "
                                              "is cut at the bar's 1 %)." if log else ".")
                  + note)


def _per_sample_cpus(samples: pd.DataFrame) -> pd.DataFrame | None:
    """The first repetition's samples of each machine and policy with every task's CPU,
    or None where a run's map is missing (runs on a guest kernel without rseq)."""
    columns = [f"cpu_{t}" for t in mixer.TASKS]
    if samples.empty or not set(columns) <= set(samples) or samples[columns].isna().any().any():
        return None
    first = samples.groupby(["system", "policy"])["rep"].transform("min")
    return samples[samples["rep"] == first]


def _per_sample_map(samples: pd.DataFrame, ctx: FigureContext, dest: Path) -> Path:
    """Task x sample -> CPU for the first repetition of each machine and policy (the
    paper's form), from the CPU each mixer task read for each sample."""
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch
    first = _per_sample_cpus(samples)
    columns = [f"cpu_{t}" for t in mixer.TASKS]
    cpus = sorted(int(c) for c in np.unique(first[columns].to_numpy()))
    colours = plt.get_cmap("tab10")
    cmap = ListedColormap([colours(c % 10) for c in range(max(cpus) + 1)])
    norm = BoundaryNorm(np.arange(-0.5, max(cpus) + 1), cmap.N)
    panels = [(system, policy) for system in ("A", "B") for policy in POLICIES
              if len(first[(first["system"] == system) & (first["policy"] == policy)])]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 1.6 * len(panels) + 1.6),
                             squeeze=False)
    for ax, (system, policy) in zip(axes[:, 0], panels):
        run = first[(first["system"] == system) & (first["policy"] == policy)]
        grid = run.sort_values("sample")[columns].to_numpy(dtype=int).T
        ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=cmap, norm=norm)
        changes = int((np.diff(grid, axis=1) != 0).sum())
        ax.set_yticks(range(len(mixer.TASKS)), mixer.TASKS, fontsize=7)
        ax.set_title(f"machine {system}, 4 cores, {policy}: {changes} CPU changes between "
                     "samples", fontsize=8)
    axes[-1][0].set_xlabel("sample", fontsize=8)
    fig.legend(handles=[Patch(color=colours(c % 10), label=f"CPU {c}") for c in cpus],
               loc="upper right", bbox_to_anchor=(0.99, 0.95), fontsize=7, ncol=len(cpus))
    return finish(fig, ctx, dest, "Each cell: the CPU (colour) a task ran on in a sample, as "
                                  "the task read it (sched_getcpu()) once per sample, first "
                                  "repetition. A task can move and come back within a "
                                  "sample: Fig. 5 counts the kernel's migrations, and the "
                                  "guest's sched_switch trace gives each task's turns on "
                                  "each CPU over time (the --turns table).")


def _migrations_map(turns: pd.DataFrame, ctx: FigureContext, dest: Path) -> Path:
    """Task x time -> CPU for the first repetition of each machine and policy, from the
    turns the scheduler trace gives each task on each CPU: Fig. 3 for runs whose per-sample
    map is missing."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 5.5), squeeze=False)
    cpus = sorted(int(c) for c in turns["cpu"].unique()) if len(turns) else []
    colours = plt.get_cmap("tab10")
    for i, system in enumerate(("A", "B")):
        for j, policy in enumerate(POLICIES):
            ax = axes[i][j]
            sel = turns[(turns["system"] == system) & (turns["policy"] == policy)]
            if sel.empty:
                ax.axis("off")
                continue
            first = sel[sel["rep"] == sel["rep"].min()]
            for row, task in enumerate(mixer.TASKS):
                mine = first[first["task"] == task]
                ax.broken_barh(list(zip(mine["start_us"] / 1e3,
                                        (mine["end_us"] - mine["start_us"]) / 1e3)),
                               (row - 0.4, 0.8), facecolors=[colours(int(c) % 10)
                                                             for c in mine["cpu"]])
            ax.set_yticks(range(len(mixer.TASKS)), mixer.TASKS, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("time since the mixer's first turn (ms, simulated)", fontsize=8)
            moves = first.sort_values("start_us").groupby("task")["cpu"].apply(
                lambda c: int((c.diff().fillna(0) != 0).sum())).sum()
            ax.set_title(f"machine {system}, 4 cores, {policy}: {moves} CPU changes between turns",
                         fontsize=8)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color=colours(c % 10), label=f"CPU {c}") for c in cpus],
               loc="upper right", bbox_to_anchor=(0.99, 0.9), fontsize=7,
               ncol=max(1, len(cpus)))
    return finish(fig, ctx, dest, "Each bar: a time the task ran on a CPU (colour), from the "
                                  "guest's sched_switch trace, first repetition; gaps: the "
                                  "task waited for its input. Over time rather than per "
                                  "sample: the mixer's own per-sample CPU record uses "
                                  "sched_getcpu(), which gem5 does not model without rseq "
                                  "in the guest kernel (schedlab/analysis/demarchi.py).")


def idle_modes(frame: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per machine, policy and idle mode (the default, MWAIT on the modelled CPUs, or
    idle=poll): the mixer's wake-ups onto idle CPUs, how many came late, what they added,
    and the production time's mu and rho."""
    idle = frame.get("idle", pd.Series(index=frame.index, dtype=object)).fillna("default")
    modes = frame.assign(idle=idle)
    prod = samples.merge(modes[["run_id", "idle"]].drop_duplicates(), on="run_id")
    out = []
    for (system, policy, mode), g in modes.groupby(["system", "policy", "idle"]):
        s = prod[prod["run_id"].isin(g["run_id"])]["production_ns"].dropna()
        out.append({"machine": system, "policy": policy, "idle": mode, "runs": len(g),
                    "wake-ups onto idle CPUs": g.get("wake_onto_idle", pd.Series()).sum(),
                    "late": g.get("wake_late", pd.Series()).sum(),
                    "late %": 100 * g.get("wake_late_share", pd.Series(dtype=float)).mean(),
                    "late added ms": g.get("wake_late_added_ms", pd.Series()).sum(),
                    "prompt median us": g.get("wake_prompt_median_us",
                                              pd.Series(dtype=float)).median(),
                    "mu_us": s.mean() / 1e3, "rho_us": (s.mean() + 2 * s.std()) / 1e3})
    return pd.DataFrame(out)


def _duration(us: float) -> str:
    """A time in µs as a bar's label: in ms from a millisecond up."""
    return f"{us / 1e3:.3g} ms" if us >= 1e3 else f"{us:.3g} µs"


def _idle_check(frame: pd.DataFrame, samples: pd.DataFrame, ctx: FigureContext,
                dest: Path) -> list[Path]:
    t = idle_modes(frame, samples)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = [f"{r.machine} {r.policy}\n{r.idle}" for r in t.itertuples()]
    colours = [IDLE_COLOURS.get(m, "#8c8c8c") for m in t["idle"]]
    bars = axes[0].bar(labels, t["late %"], color=colours)
    axes[0].bar_label(bars, [f"{late:.0f} of {n:.0f}" for late, n
                             in zip(t["late"], t["wake-ups onto idle CPUs"])], fontsize=7)
    axes[0].set_ylabel(f"late wake-ups onto idle CPUs (%, > {wakeups.LATE_US:.0f} µs)",
                       fontsize=8)
    x = np.arange(len(t))
    for offset, column, hatch, label in ((-0.2, "mu_us", "", "mu"),
                                         (0.2, "rho_us", "//", "rho = mu + 2 sigma")):
        bars = axes[1].bar(x + offset, t[column], 0.4, color=colours, hatch=hatch,
                           label=label)
        axes[1].bar_label(bars, [_duration(v) for v in t[column]], fontsize=7)
    axes[1].set_xticks(x, labels)
    axes[1].set_yscale("log")   # a lost wake-up stretches a sample a thousandfold
    axes[1].set_ylabel("sample production time (µs, log scale)", fontsize=8)
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.tick_params(axis="x", labelsize=7)
        ax.margins(y=0.12)   # room for the bars' labels
    csv = dest.with_suffix(".csv")
    t.to_csv(csv, index=False)
    return [finish(fig, ctx, dest, "One run per bar (machine A, 4 cores, vanilla, the first "
                                   "repetition). Grey: the default idle (MWAIT); blue: "
                                   "idle=halt; green: idle=poll; orange: idle=halt after a "
                                   "100 µs poll (sched_idle_poll_us, kernel-patches 0029). "
                                   "Late: the task "
                                   "was switched in more than "
                                   f"{wakeups.LATE_US:.0f} µs after its waking began, onto a "
                                   "CPU that was idle."), csv]


def tail_table(frame: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per policy and run length: mu, rho, the 99th percentile and the maximum of the
    production time, over all of a run's samples and over its first half and the first
    samples of each shorter run length (what a shorter run would have seen of the same
    timeline)."""
    lengths = frame.drop_duplicates("run_id").set_index("run_id")["samples"]
    run_lengths = sorted(set(int(n) for n in lengths))
    out = []
    for (policy, run_id), g in samples.groupby(["policy", "run_id"]):
        n = int(lengths[run_id])
        # A shorter run's length that is this run's half is its "first half".
        cuts = [("all", n), ("first half", n // 2)] + [(f"first {m}", m) for m in run_lengths
                                                        if m < n and m != n // 2]
        for part, cut in cuts:
            s = g[(g["sample"] >= 1) & (g["sample"] < cut)]["production_ns"].dropna() / 1e3
            out.append({"policy": policy, "run samples": n, "part": part, "n": len(s),
                        "mu_us": s.mean(), "rho_us": s.mean() + 2 * s.std(),
                        "p99_us": s.quantile(0.99), "max_us": s.max()})
    return pd.DataFrame(out).sort_values(["policy", "run samples", "n"])


def _tail_check(frame: pd.DataFrame, samples: pd.DataFrame, ctx: FigureContext,
                dest: Path) -> list[Path]:
    lengths = frame.drop_duplicates("run_id").set_index("run_id")["samples"]
    # The shortest runs dotted, the longest solid.
    runs = sorted(set(int(n) for n in lengths))
    styles = {n: "-" if n == runs[-1] else ":" if n == runs[0] else "--" for n in runs}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), squeeze=False)
    for ax, policy in zip(axes[0], POLICIES):
        for run_id, g in samples[samples["policy"] == policy].groupby("run_id"):
            s = np.sort(g["production_ns"].dropna().to_numpy()) / 1e3
            n = int(lengths[run_id])
            # The share of samples that took x or longer, down to the slowest alone: on a
            # log axis the tail is what shows.
            at_least = (len(s) - np.arange(len(s))) / len(s)
            ax.step(s, at_least, where="pre", label=f"run of {n} samples",
                    color=COLOURS[policy], linestyle=styles[n])
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_yscale("log")
        ax.set_xlabel("sample production time x (µs, log scale)", fontsize=8)
        ax.set_ylabel("fraction of samples taking x or longer (log scale)", fontsize=8)
        ax.set_title(f"machine B, 2 cores, {policy}", fontsize=8)
        ax.legend(fontsize=7)
    csv = dest.with_suffix(".csv")
    tail_table(frame, samples).to_csv(csv, index=False)
    return [finish(fig, ctx, dest, "Complementary empirical CDFs (the share of samples "
                                   "that took x or longer, down to the slowest one) of the "
                                   "production time of runs of "
                                   f"{', '.join(map(str, runs))} samples from the same start "
                                   "(the longer, the more solid the line; the 1500-sample "
                                   "runs are Table I's first repetition); the CSV beside the "
                                   "figure gives mu, rho, the 99th percentile and the "
                                   "maximum over all of each run, its first half and the "
                                   "first samples of each shorter run length."), csv]
