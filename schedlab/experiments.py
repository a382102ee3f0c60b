"""Experiments: named matrices of runs, executed resumably, summarised as a table.

An experiment is a list of RunRequests with labels (its coordinates: machine, policy, knob,
repetition). Running it prepares every request, skips those whose results already exist (the
run id is the spec's hash) and runs the rest, so an interrupted campaign picks up where it
stopped. The table is built from the results directories alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pandas as pd

from .machine import format_size, load_machine
from .runs import RunRequest, WorkloadRequest, execute, prepare

Progress = Callable[[str], None]
DEMO_MACHINE = "clovertown-e5320"


def demo(backend: str) -> list[RunRequest]:
    """A small study-1-style experiment: memlat pinned vs free under two scheduling policies.

    On Clovertown MMP (2 chips x 2 cores, an L2 per chip), memlat runs next to a base vector
    that sweeps an L2-sized working set; with cache affinity on or off (no-affinity patch),
    pinned to CPU 0 or left free. Under QEMU this shows placement and migrations; under gem5
    it adds IPC and misses per instruction.
    """
    machine = load_machine(DEMO_MACHINE)
    # The base vector's footprint is the machine's last-level cache, read from the catalogue.
    bv_args = ("--size", format_size(machine.llc.size))
    requests = []
    for policy in ("vanilla", "no-affinity"):
        for pinned in (True, False):
            requests.append(RunRequest(
                machine=DEMO_MACHINE, backend=backend, policy=policy,
                jobs=(WorkloadRequest("memlat", size="smoke", reps=2,
                                      cpus="0" if pinned else None),),
                background=(WorkloadRequest("bv_l2", size="paper", args=bv_args,
                                            cpus="1" if pinned else None),),
                label={"policy": policy, "placement": "pinned" if pinned else "free"}))
    return requests


def run_all(requests: list[RunRequest], progress: Progress = print) -> list[Path]:
    dirs = []
    for i, request in enumerate(requests, 1):
        prepared = prepare(request, progress=progress)
        progress(f"[{i}/{len(requests)}] {prepared.run_id}")
        dirs.append(execute(prepared, progress))
    return dirs


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
