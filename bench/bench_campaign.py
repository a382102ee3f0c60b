#!/usr/bin/env python3
"""Campaign throughput: the same QEMU campaign with --jobs 1 and --jobs 2.

Issue 13's benchmark: a QEMU campaign of at least 12 runs (the first 12 runs of the demo's
experiment at paper scale: memlat next to an L2-sized base vector, four conditions, seeds
1-3) in a fresh results directory per setting, timed from the executor's start to its end
(the kernel and image are built beforehand and not counted). Writes
bench/results/campaign-<host>-<date>.json and prints the table for bench/README.md.

    ~/.cache/schedlab/venv/*/bin/python bench/bench_campaign.py [--jobs 1,2] [--runs 12]

Results depend on what else the host runs: say so beside the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    from schedlab.campaigns.experiment import get
    from schedlab.campaigns.local import run_campaign
    from schedlab.guest.image import build_image
    from schedlab.guest.kernel import build_kernel

    build_kernel(progress=lambda s: None)
    build_image(progress=lambda s: None)
    requests = get("demo-affinity").requests("paper", "qemu")[:args.runs]
    records = []
    for jobs in [int(j) for j in args.jobs.split(",")]:
        with tempfile.TemporaryDirectory(prefix="schedlab-bench-campaign-") as tmp:
            os.environ["SCHEDLAB_RESULTS"] = tmp
            started = time.monotonic()
            report = run_campaign(requests, jobs=jobs, name=f"bench-jobs{jobs}", say=print)
            seconds = time.monotonic() - started
        records.append({"jobs": jobs, "runs": len(requests), "seconds": round(seconds, 1),
                        "done": report.count("done"), "failed": report.count("failed"),
                        "peak_running": report.peak_running})
        print(json.dumps(records[-1]), flush=True)
    out = REPO / "bench" / "results" / f"campaign-{platform.node()}-{date.today()}.json"
    out.write_text(json.dumps({"host": platform.node(), "cpus": os.cpu_count(),
                               "records": records}, indent=1) + "\n")
    base = records[0]["seconds"]
    print("| jobs | runs | host seconds | speed-up |\n|---|---|---|---|")
    for r in records:
        print(f"| {r['jobs']} | {r['runs']} | {r['seconds']} | {base / r['seconds']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
