#!/usr/bin/env python3
"""Foundation timings: cold kernel build, rebuild after touching one patch, QEMU boot+poweroff.

Targets (issue 2): cold build <= 20 min and rebuild after one patch <= 3 min on 2 cores;
boot + poweroff of a 4-vCPU guest <= 10 s. Writes bench/results/foundation-<host>-<date>.json.

    .venv-python bench/bench_foundation.py [--skip-cold] [--boots N] [--compare-kernel BZIMAGE]
        [--initcalls]

``--compare-kernel`` times the same boots with another kernel (the same image and run), e.g.
the kernel of the commit before a config change, to measure what the change costs at boot;
``--initcalls`` boots with ``initcall_debug`` and reports the initcalls only the current
kernel has, with their times (what a config option adds, free of the noise of whole boots
on a loaded host).

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
import re
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


# "initcall af_unix_init+0x0/0x68 returned 0 after 17 usecs" (the offset and size differ
# between kernels: the name is what is compared).
INITCALL = re.compile(r"initcall ([A-Za-z0-9_.]+)\S* returned \S+ after (\d+) usecs")


def qemu_boots(prepared, kernels: dict[str, Path], n: int, quiet,
               initcalls: bool = False) -> dict[str, tuple]:
    """Per kernel: host seconds of n QEMU boots (boot, run bv_0 smoke, power off) with the
    run's image and payload, and the guest's uptime at its ready marker in each. The
    kernels' boots alternate, so a change in the host's load falls on all of them. With
    ``initcalls`` the kernel reports each initcall's time (``initcall_debug``), and the third
    item per kernel is, per initcall, its microseconds in each boot."""
    from schedlab.backends import qemu
    from schedlab.guest.image import write_cpio
    from schedlab.guest.payload import QEMU_PAYLOAD
    from schedlab.guest.protocol import parse_console
    out: dict[str, tuple[list[float], list[float], dict]] = {k: ([], [], {}) for k in kernels}
    append = " ".join(qemu.QEMU_KERNEL_ARGS) + (" initcall_debug loglevel=8"
                                                if initcalls else "")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        payload = prepared.write_payload(tmp / "payload.cpio", quiet)
        run_cpio = write_cpio([f"file {QEMU_PAYLOAD} {payload} 0644 0 0"], tmp / "run.cpio",
                              quiet)
        initrd = tmp / "initrd.cpio"
        initrd.write_bytes(prepared.image.initramfs.read_bytes() + run_cpio.read_bytes())
        for _ in range(n):
            for label, bzimage in kernels.items():
                console = tmp / "console.log"
                cmd = qemu.command(prepared.machine, bzimage, initrd, append, console)
                secs, text = timed(lambda: qemu.boot(cmd, console, 120, 300,
                                                     prepared.guest.nonce, quiet))
                out[label][0].append(round(secs, 2))
                facts = parse_console(text, prepared.guest.nonce).facts
                out[label][1].append(float(facts["uptime.topology-at-boot"]))
                for name, usecs in INITCALL.findall(text):
                    out[label][2].setdefault(name, []).append(int(usecs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold kernel build")
    parser.add_argument("--boots", type=int, default=3, help="QEMU boots to time")
    parser.add_argument("--initcalls", action="store_true",
                        help="boot with initcall_debug and report the initcalls the current "
                             "kernel has and the compared one has not, with their times")
    parser.add_argument("--compare-kernel", metavar="BZIMAGE",
                        help="also time the boots with this kernel (e.g. one built without a "
                             "config option, to measure what the option costs at boot)")
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
    prepared = prepare(RunRequest(machine="clovertown-e5320",
                                  jobs=(WorkloadRequest("bv_0", size="smoke"),)), progress=quiet)
    kernels = {"current": prepared.kernel.bzimage}
    if args.compare_kernel:
        kernels["compared"] = Path(args.compare_kernel)
        out["compared_kernel"] = args.compare_kernel
    timed_boots = qemu_boots(prepared, kernels, args.boots, quiet, args.initcalls)
    if args.initcalls and "compared" in timed_boots:
        mine, theirs = timed_boots["current"][2], timed_boots["compared"][2]
        extra = {name: statistics.median(us) for name, us in mine.items() if name not in theirs}
        out["initcalls_only_in_current_kernel_median_us"] = extra
        out["initcalls_only_in_current_kernel_total_us"] = sum(extra.values())
        print(f"initcalls only in the current kernel: {extra} (total "
              f"{sum(extra.values())} us, medians of {args.boots} boots)")
    for label, (boots, ready, _) in timed_boots.items():
        bzimage = kernels[label]
        key = "qemu_boot_poweroff_4vcpu" + ("" if label == "current" else "_compared_kernel")
        out[f"{key}_s"] = boots
        out[f"{key}_median_s"] = statistics.median(boots)
        # The guest's own clock when its runner had read the topology (just before the
        # ready marker): the kernel's boot plus the runner's start, without QEMU's.
        out[f"{key}_guest_ready_s"] = ready
        out[f"{key}_guest_ready_median_s"] = statistics.median(ready)
        print(f"QEMU 4-vCPU boot + bv_0 smoke + poweroff ({label} kernel {bzimage}): "
              f"{boots} s; guest clock at ready {ready} s")
    tag = ("-compare" if args.compare_kernel else "") + ("-initcalls" if args.initcalls else "")
    dest = REPO / "bench" / "results" / f"foundation-{platform.node()}-{date.today()}{tag}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
