#!/usr/bin/env python3
"""Foundation timings: cold kernel build, rebuild after touching one patch, QEMU boot+poweroff.

Targets (issue 2): cold build <= 20 min and rebuild after one patch <= 3 min on 2 cores;
boot + poweroff of a 4-vCPU guest <= 10 s. Writes bench/results/foundation-<host>-<date>.json.

    .venv-python bench/bench_foundation.py [--skip-cold] [--boots N]

The cold build uses a throw-away cache (SCHEDLAB_CACHE in a temporary directory), so it
measures extraction, configuration and the whole compile; the patch rebuild touches the
last patch in the series the way a developer edits it (it rewrites one comment line the patch
adds, keeping the hunk's line counts), so it measures the restore + re-apply + incremental
make path.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def timed(fn):
    start = time.monotonic()
    result = fn()
    return time.monotonic() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold kernel build")
    parser.add_argument("--boots", type=int, default=3, help="QEMU boots to time")
    args = parser.parse_args()
    out: dict = {"host": platform.node(), "cpus": os.cpu_count(), "date": str(date.today()),
                 "load_average_at_start": os.getloadavg()}

    from schedlab import paths
    from schedlab.guest import kernel
    quiet = lambda s: None  # noqa: E731
    if not args.skip_cold:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["SCHEDLAB_CACHE"] = cache
            secs, _ = timed(lambda: kernel.build_kernel(progress=quiet))
            out["kernel_cold_build_s"] = round(secs, 1)
            print(f"cold kernel build: {secs:.0f} s")
            patches = kernel.series()
            if patches:
                with tempfile.TemporaryDirectory() as copy:
                    shutil.copytree(paths.KERNEL_PATCHES, copy, dirs_exist_ok=True)
                    last = Path(copy) / patches[-1].name
                    lines = last.read_text().split("\n")
                    at = next(i for i, line in enumerate(lines) if line.startswith("+ * "))
                    lines[at] = "+ * (edited for the rebuild benchmark) " + lines[at][4:]
                    last.write_text("\n".join(lines))
                    paths.KERNEL_PATCHES = Path(copy)
                    secs, _ = timed(lambda: kernel.build_kernel(progress=quiet))
                    paths.KERNEL_PATCHES = REPO / "kernel-patches"
                out["kernel_rebuild_after_one_patch_s"] = round(secs, 1)
                out["kernel_rebuild_touched"] = patches[-1].name
                print(f"rebuild after touching {patches[-1].name}: {secs:.0f} s")
            os.environ.pop("SCHEDLAB_CACHE")

    from schedlab.runs import RunRequest, WorkloadRequest, prepare
    from schedlab.backends import qemu
    from schedlab.guest.image import extra_archive
    prepared = prepare(RunRequest(machine="clovertown-e5320",
                                  jobs=(WorkloadRequest("bv_0", size="smoke"),)), progress=quiet)
    boots = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        spec = extra_archive({"/schedlab/spec.sh": prepared.guest.render()}, tmp / "spec.cpio", quiet)
        initrd = tmp / "initrd.cpio"
        initrd.write_bytes(prepared.image.initramfs.read_bytes() + spec.read_bytes())
        for _ in range(args.boots):
            console = tmp / "console.log"
            cmd = qemu.command(prepared.machine, prepared.kernel.bzimage, initrd,
                               "console=ttyS0 panic=-1 schedlab.backend=qemu", console)
            secs, _ = timed(lambda: qemu.boot(cmd, console, 120, 300, prepared.guest.nonce, quiet))
            boots.append(round(secs, 2))
    out["qemu_boot_poweroff_4vcpu_s"] = boots
    out["qemu_boot_poweroff_4vcpu_median_s"] = statistics.median(boots)
    print(f"QEMU 4-vCPU boot + bv_0 smoke + poweroff: {boots} s")
    dest = REPO / "bench" / "results" / f"foundation-{platform.node()}-{date.today()}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
