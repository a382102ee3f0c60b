"""Tidy tables of results: one row per job repetition, built from run directories alone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd




def table(run_dirs: list[Path]) -> pd.DataFrame:
    """One row per job repetition: labels, timing, migrations, the workload's metrics and,
    from gem5, its region of interest's (``gem5_ipc``, ``gem5_l2_mpki``, ...)."""
    rows = []
    for d in run_dirs:
        with open(d / "results.json") as f:
            res = json.load(f)
        for job in res["jobs"]:
            metrics = {k: v for k, v in job["metrics"].items() if isinstance(v, (int, float))}
            # gem5 runs: the job's region of interest (IPC, misses per kilo-instruction).
            metrics.update({f"gem5_{k}": v for k, v in job.get("gem5", {}).items()})
            # With task attribution: the job's own share of its CPUs' counters.
            metrics.update({f"task_{k}": v for k, v in job.get("gem5_task", {}).items()})
            rows.append({"run": res["run_id"][-12:], "machine": res["machine"],
                         "policy": res["policy"], **res.get("label", {}),
                         "job": job["job"], "rep": job["rep"], "exit": job["exit"],
                         "wall_s": job["elapsed_ns"] / 1e9, "migrations": job["migrations"],
                         **metrics, "ok": res["ok"]})
    return pd.DataFrame(rows)
