"""Benchmark the gem5 backend on every machine: boot, restore, speed, and the guest's topology.

For each machine, through the project's own runner (the image ``run.py run`` uses):

- boot to checkpoint: host seconds for the Atomic boot of the runner image up to its ``m5
  checkpoint`` (taken from the cached checkpoint's metadata, which recorded it when it was
  made; the boot happens now if there is no checkpoint yet);
- restore: host seconds from gem5's start to the restored system being instantiated;
- speed: simulated instructions per host second inside the region of interest (the launcher's
  ``m5 workbegin`` .. ``m5 workend``) of one fixed workload, ``memlat`` at size smoke pinned
  to CPU 0, in Atomic, Timing and O3;
- topology: whether the guest's packages, core siblings, scheduler domains and NUMA nodes
  (the runner's facts) match the modelled LLC groups and nodes
  (``schedlab.backends.gem5.topology``);
- overhead: on machines with one L2 shared by all cores, the same runs restored into gem5's
  stock ``PrivateL1SharedL2CacheHierarchy`` with the same sizes, as gem5 ships it
  ("stock": its own latencies, stride prefetchers) and timed like ours without prefetchers
  ("stock-matched": the same simulated machine, so only the host cost differs) (``--stock``).

    GEM5=/path/to/gem5.fast python3 bench/bench_gem5.py --machines clovertown-e5320-mup \\
        --cpus atomic,timing,o3 --stock --json bench/results/gem5-<host>-<date>.json

Results go to a JSON file (one record per machine and run) and a markdown table on stdout;
bench/gem5.md records the runs made on the project's hosts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import (add_record_options, gem5_records, report_files,  # noqa: E402
                           save_gem5_records)
from schedlab.backends.gem5 import run as g5run  # noqa: E402
from schedlab.backends.gem5.binary import probe  # noqa: E402
from schedlab.backends.gem5.topology import topology_problems  # noqa: E402
from schedlab.errors import UserError  # noqa: E402
from schedlab.backends.gem5.plan import plan_from_dict  # noqa: E402
from schedlab.backends.gem5.stats import region_metrics  # noqa: E402
from schedlab.machine import machine_names  # noqa: E402
from schedlab.backends.gem5.backend import gem5_job  # noqa: E402
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare  # noqa: E402

WORKLOAD = WorkloadRequest("memlat", size="smoke", cpus="0")
BACKGROUND = WorkloadRequest("bv_0", size="paper", cpus="0")


def roi(events: list[dict]) -> tuple[int, float, int]:
    """(instructions, host seconds, ticks) between the first workbegin and workend."""
    begin = next(e for e in events if e["event"] == "workbegin")
    end = next(e for e in events if e["event"] == "workend")
    return (end["insts"] - begin["insts"], end["host_s"] - begin["host_s"],
            end["tick"] - begin["tick"])


def measure(gem5_json: dict) -> dict:
    events = gem5_json["events"]
    inst = next(e for e in events if e["event"] == "instantiated")
    insts, secs, ticks = roi(events)
    # Simulated cycles per host second as well: hierarchies that give the same code a
    # different IPC make a detailed core simulate a different number of cycles.
    cycles = ticks * gem5_json["plan"]["clock_hz"] / 1e12
    return {"restore_host_s": inst["host_s"], "total_host_s": gem5_json["host_seconds"],
            "roi_insts": insts, "roi_host_s": round(secs, 2),
            "ips": round(insts / max(secs, 1e-3)), "roi_cycles": round(cycles),
            "cycles_per_s": round(cycles / max(secs, 1e-3))}


def run_one(name: str, cpu: str, hierarchy: str, rep: int = 1) -> dict:
    """One restore-and-run of the fixed workload. The first repetition with our hierarchy
    is a normal run (results/, its guest's facts); repetitions and the stock hierarchies
    (benchmark-only boards) run outside results/, where a repeated spec would be reused."""
    request = RunRequest(machine=name, backend="gem5", cpu=cpu, jobs=(WORKLOAD,),
                         label={"bench": "gem5"})
    prepared = prepare(request, progress=print)
    if hierarchy == "plan" and rep == 1:
        run_dir = execute(prepared, progress=print)
        info = json.loads((run_dir / "gem5.json").read_text())
        results = json.loads((run_dir / "results.json").read_text())
        return {"cpu": cpu, "hierarchy": "plan", "run": run_dir.name, **measure(info),
                "checkpoint": info["checkpoint"], "ok": results["ok"],
                "facts": results["facts"], "gem5": results["jobs"][0].get("gem5")}
    job = gem5_job(prepared, hierarchy=hierarchy)
    with tempfile.TemporaryDirectory() as tmp:
        outcome = g5run.run(job, Path(tmp), progress=None)
        info = json.loads((Path(tmp) / "gem5.json").read_text())
    roi_dumps = [d for d in outcome["stats"] if d.get("schedlab.roi")]
    return {"cpu": cpu, "hierarchy": hierarchy, **measure(info),
            "gem5": region_metrics(roi_dumps[0]) if roi_dumps else None}


def attribution_overhead(name: str, cpu: str) -> list[dict]:
    """The same shared-CPU run (memlat with a busy background task on CPU 0) without and
    with per-task attribution: what the context-switch m5 ops cost in host and
    simulated time."""
    out = []
    for attribute in (False, True):
        request = RunRequest(machine=name, backend="gem5", cpu=cpu, attribute_tasks=attribute,
                             jobs=(WORKLOAD,), background=(BACKGROUND,),
                             label={"bench": "gem5-attribution"})
        run_dir = execute(prepare(request, progress=print), progress=print)
        info = json.loads((run_dir / "gem5.json").read_text())
        job = json.loads((run_dir / "results.json").read_text())["jobs"][0]
        out.append({"machine": name, "cpu": cpu, "hierarchy": "plan",
                    "attribution": attribute, "run": run_dir.name, **measure(info),
                    "roi_sim_s": job["gem5"]["sim_seconds"], "switches": job["switches"],
                    "task": job.get("gem5_task")})
        print(json.dumps(out[-1]), flush=True)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machines", default="clovertown-e5320-mup",
                   help="comma-separated, or 'all' for every catalogue machine and variant")
    p.add_argument("--cpus", default="atomic,timing,o3",
                   help="CPU models to restore into; 'default' = each machine's own (o3 for "
                        "out-of-order machines, timing for in-order ones)")
    p.add_argument("--stock", action="store_true",
                   help="also run gem5's stock PrivateL1SharedL2CacheHierarchy where possible, "
                        "as shipped and timed like ours")
    p.add_argument("--repeat", type=int, default=1,
                   help="run every (machine, cpu, hierarchy) this many times, interleaved, "
                        "and compare hierarchies by their fastest run (host noise)")
    p.add_argument("--attribution", action="store_true",
                   help="measure per-task attribution's overhead on the first machine "
                        "(memlat sharing CPU 0 with a busy task, without and with)")
    add_record_options(p)
    args = p.parse_args()
    if (files := report_files(args)) is not None:
        records = gem5_records(files)
        print(table([r for r in records if "attribution" not in r]))
        print(overhead_table(records))
        print(attribution_table([r for r in records if "attribution" in r]))
        return 0

    names = machine_names() if args.machines == "all" else args.machines.split(",")
    binary = probe()
    records = []
    if args.json and args.json.exists():
        records = json.loads(args.json.read_text())["records"]
    done = {(r["machine"], r["cpu"], r["hierarchy"], r.get("rep", 1)) for r in records
            if "attribution" not in r}
    # Repetitions outermost, so that every configuration meets the same mix of host load.
    for rep in range(1, args.repeat + 1):
        for name, machine, cpu, hierarchy in configurations(names, args.cpus, args.stock):
            if (name, cpu, hierarchy, rep) in done:
                continue
            t0 = time.monotonic()
            try:
                rec = run_one(name, cpu, hierarchy, rep)
            except UserError as e:
                rec = {"cpu": cpu, "hierarchy": hierarchy, "error": str(e).splitlines()[0]}
            rec = {"machine": name, "cores": machine["cores"], **rec, "rep": rep,
                   "wall_s": round(time.monotonic() - t0, 1)}
            if "facts" in rec:
                rec["topology_problems"] = topology_problems(
                    plan_from_dict(machine), machine, rec.pop("facts"))
            print(json.dumps({k: v for k, v in rec.items() if k != "checkpoint"}), flush=True)
            records.append(rec)
            save_gem5_records(args.json, binary, records, workload="memlat smoke, CPU 0")
    if args.attribution and not any("attribution" in r for r in records):
        records += attribution_overhead(names[0], "timing")
        save_gem5_records(args.json, binary, records, workload="memlat smoke, CPU 0")
    print(table([r for r in records if "attribution" not in r]))
    print(overhead_table(records))
    print(attribution_table([r for r in records if "attribution" in r]))
    return 0


def configurations(names: list[str], cpus: str, stock: bool):
    """(name, machine dict, cpu, hierarchy) for every run one repetition makes."""
    from schedlab.machine import load_machine
    out = []
    for name in names:
        machine = load_machine(name).to_dict()
        plan = plan_from_dict(machine)
        for cpu in [plan.default_cpu] if cpus == "default" else cpus.split(","):
            hierarchies = (["plan", "stock", "stock-matched"]
                           if stock and plan.has_one_shared_l2() else ["plan"])
            out += [(name, machine, cpu, h) for h in hierarchies]
    return out


def overhead_table(records: list[dict]) -> str:
    """Per machine and CPU model: each hierarchy's fastest region of interest over the
    repetitions, and ours relative to the stock ones (> 1: ours is slower)."""
    best: dict[tuple, dict[str, list[float]]] = {}
    for r in records:
        if "error" not in r and "attribution" not in r:
            best.setdefault((r["machine"], r["cpu"]), {}).setdefault(
                r["hierarchy"], []).append(r["roi_host_s"])
    lines = ["| machine | cpu | runs each | ROI host s: plan | stock | stock-matched "
             "| plan / stock | plan / stock-matched |", "|---|---|---|---|---|---|---|---|"]
    for (machine, cpu), by in best.items():
        if not {"plan", "stock", "stock-matched"} <= set(by):
            continue
        fastest = {h: min(t) for h, t in by.items()}
        lines.append(f"| {machine} | {cpu} | {min(len(t) for t in by.values())} "
                     f"| {fastest['plan']:.2f} | {fastest['stock']:.2f} "
                     f"| {fastest['stock-matched']:.2f} "
                     f"| {fastest['plan'] / fastest['stock']:.2f} "
                     f"| {fastest['plan'] / fastest['stock-matched']:.2f} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def attribution_table(records: list[dict]) -> str:
    lines = ["| machine | cpu | attribution | ROI host s | ROI simulated ms | job's switches "
             "| job IPC (attributed) | job L1D MPKI (attributed) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        task = r.get("task") or {}
        lines.append(f"| {r['machine']} | {r['cpu']} | {'on' if r['attribution'] else 'off'} "
                     f"| {r['roi_host_s']:.1f} | {r['roi_sim_s'] * 1e3:.3f} | {r['switches']} "
                     f"| {task.get('ipc', float('nan')):.3f} "
                     f"| {task.get('l1d_mpki', float('nan')):.1f} |")
    return "\n".join(lines) if records else ""


def table(records: list[dict]) -> str:
    lines = ["| machine | cores | boot s | cpu | hierarchy | restore s | ROI insts | ROI host s "
             "| insts/host s | cycles/host s | IPC | topology |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['machine']} | {r['cores']} | | {r['cpu']} | {r['hierarchy']} "
                         f"| error: {r['error']} | | | | | | |")
            continue
        boot = r.get("checkpoint", {}).get("host_seconds")
        topo = r.get("topology_problems")
        ipc = (r.get("gem5") or {}).get("ipc")
        cells = [r["machine"], r["cores"], "" if boot is None else f"{boot:.0f}", r["cpu"],
                 r["hierarchy"], f"{r['restore_host_s']:.1f}", f"{r['roi_insts']:,}",
                 f"{r['roi_host_s']:.1f}", f"{r['ips']:,}",
                 f"{r['cycles_per_s']:,}" if "cycles_per_s" in r else "",
                 "" if ipc is None else f"{ipc:.3f}",
                 "" if topo is None else "ok" if not topo else "; ".join(topo)]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
