"""Benchmark the gem5 backend: boot-to-checkpoint, restore, and simulation speed.

For each machine: host seconds to boot to the checkpoint (Atomic; measured when the cached
checkpoint was made, or now if it does not exist), restore time (host seconds from gem5
start to the restored system being instantiated), and simulated instructions per host
second in the region of interest of one fixed workload (the self-test guest's loop,
``schedlab/gem5_guest.py``) for Atomic, Timing and O3 -- with our hierarchy and, where the
machine has one L2 shared by all cores, with gem5's stock PrivateL1SharedL2CacheHierarchy on
the same board (restored from the same checkpoint), to measure our hierarchy's overhead.

    GEM5=/path/gem5.fast python3 bench/bench_gem5.py --machines clovertown-e5320-mup \
        --loops 2000000 --json bench/gem5-results.json

Results are written as JSON and printed as a markdown table; bench/gem5.md records runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schedlab import gem5  # noqa: E402
from schedlab.gem5_guest import build_guest_and_kernel  # noqa: E402
from schedlab.gem5_plan import plan_from_dict  # noqa: E402
from schedlab.machine import load_machine  # noqa: E402


def roi_rate(events: list[dict]) -> tuple[int, float]:
    begin = next(e for e in events if e["event"] == "workbegin")
    end = next(e for e in events if e["event"] == "workend")
    return end["insts"] - begin["insts"], end["host_s"] - begin["host_s"]


def stock_possible(machine: dict) -> bool:
    plan = plan_from_dict(machine)
    l2 = plan.instances("l2")
    return (sorted({c.cache for c in plan.caches}) == ["l1d", "l1i", "l2"] and len(l2) == 1
            and len(l2[0].cores) == plan.num_cores)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machines", default="clovertown-e5320-mup")
    p.add_argument("--cpus", default="atomic,timing,o3")
    p.add_argument("--loops", type=int, default=2_000_000)
    p.add_argument("--no-stock", action="store_true")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()

    kernel, guest = build_guest_and_kernel()
    binary = gem5.probe()
    rows = []
    for name in args.machines.split(","):
        machine = load_machine(name).to_dict()
        t0 = time.monotonic()
        cpt, meta = gem5.ensure_checkpoint(machine, kernel, guest, progress=print, binary=binary)
        row = {"machine": name, "cores": machine["cores"],
               "boot_host_s": meta["host_seconds"],
               "boot_cached": time.monotonic() - t0 < 60, "runs": []}
        hierarchies = ["plan"] + ([] if args.no_stock or not stock_possible(machine)
                                  else ["stock"])
        for cpu in args.cpus.split(","):
            for hierarchy in hierarchies:
                with tempfile.TemporaryDirectory() as tmp:
                    result = gem5.run({"machine": machine, "cpu": cpu, "kernel": kernel,
                                       "image": guest, "hierarchy": hierarchy,
                                       "guest_spec_text": f"loop {args.loops}\n"},
                                      Path(tmp), progress=None)
                inst = next(e for e in result["events"] if e["event"] == "instantiated")
                insts, secs = roi_rate(result["events"])
                run = {"cpu": cpu, "hierarchy": hierarchy, "restore_host_s": inst["host_s"],
                       "total_host_s": result["host_seconds"], "roi_insts": insts,
                       "roi_host_s": round(secs, 2), "ips": round(insts / max(secs, 1e-3))}
                print(json.dumps({"machine": name, **run}), flush=True)
                row["runs"].append(run)
        rows.append(row)

    print("\n| machine | boot s | cpu | hierarchy | restore s | total s | ROI insts | ROI s | insts/host s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        for r in row["runs"]:
            print(f"| {row['machine']} | {row['boot_host_s']:.0f} | {r['cpu']} | {r['hierarchy']} "
                  f"| {r['restore_host_s']:.1f} | {r['total_host_s']:.0f} | {r['roi_insts']} "
                  f"| {r['roi_host_s']:.1f} | {r['ips']:,} |")
    if args.json:
        args.json.write_text(json.dumps({"gem5": binary.version, "loops": args.loops,
                                         "machines": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
