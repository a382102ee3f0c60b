"""Tidy tables of results: one row per job repetition, built from run directories alone.

Every row carries the run's coordinates (its label), the job's metrics (the workload's
own ``key=value`` output; on gem5 the region's ``gem5_*`` and, with attribution, the job's
own ``task_*``) and the run's provenance: run id, backend, detailed cores, gem5 version
and binary hash, gem5-side code hash, kernel and image hashes, whether the run was ok, and
the host seconds its gem5 process took (what campaign cost estimates are calibrated on) and
the key of the work its request asked for (``work_key``: which definition the time is of).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from schedlab.runs import request_from_data, work_key

# The built files a run booted and ran, by their own hashes (``<name>_sha``): the kernel
# and image columns hash their inputs. Empty for runs made before they were recorded.
ARTEFACTS = ("vmlinux", "bzImage", "initramfs", "workloads")
PROVENANCE = ("run_id", "backend", "cpu", "gem5_version", "gem5_hash", "gem5_config",
              "kernel", "image", *(f"{a}_sha" for a in ARTEFACTS), "ok", "gem5_host_s",
              "gem5_cpu_s", "work_key")


def _work_key(run_dir: Path) -> str | None:
    """The run's :func:`schedlab.runs.work_key` (None for a run directory from before
    spec.json held its request)."""
    spec = run_dir / "spec.json"
    request = json.loads(spec.read_text()).get("request") if spec.is_file() else None
    return work_key(request_from_data(request)) if request else None


def _provenance(run_dir: Path, res: dict) -> dict:
    info = {}
    gem5_json = run_dir / "gem5.json"
    if gem5_json.is_file():
        info = json.loads(gem5_json.read_text())
    return {"run_id": res["run_id"], "backend": res["backend"]["name"],
            "cpu": res["backend"].get("cpu"), "gem5_version": info.get("gem5_version"),
            "gem5_hash": info.get("gem5_hash"), "gem5_config": info.get("config_hash"),
            "kernel": res["hashes"]["kernel"], "image": res["hashes"]["image"],
            **{f"{a}_sha": res.get("artefacts", {}).get(a) for a in ARTEFACTS},
            "ok": res["ok"], "gem5_host_s": info.get("host_seconds"),
            "gem5_cpu_s": info.get("cpu_seconds"),
            "work_key": _work_key(run_dir)}


def rows(run_dir: Path) -> list[dict]:
    """The rows of one run directory."""
    res = json.loads((run_dir / "results.json").read_text())
    out = []
    for job in res["jobs"]:
        metrics = {k: v for k, v in job["metrics"].items() if isinstance(v, (int, float))}
        # gem5 runs: the job's region of interest (IPC, misses per kilo-instruction).
        metrics.update({f"gem5_{k}": v for k, v in job.get("gem5", {}).items()})
        # With task attribution: the job's own share of its CPUs' counters.
        metrics.update({f"task_{k}": v for k, v in job.get("gem5_task", {}).items()})
        out.append({"machine": res["machine"], "policy": res["policy"],
                    **{k: v for k, v in res.get("label", {}).items() if k != "machine"},
                    "job": job["job"], "job_rep": job["rep"], "exit": job["exit"],
                    "wall_s": job["elapsed_ns"] / 1e9, "migrations": job["migrations"],
                    **metrics, **_provenance(run_dir, res)})
    return out


def table(run_dirs: list[Path]) -> pd.DataFrame:
    """One row per job repetition of every run directory given."""
    return pd.DataFrame([r for d in run_dirs for r in rows(d)])
