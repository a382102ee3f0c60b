#!/usr/bin/env python3
"""Foundation timings: cold kernel build, rebuild after touching one patch, QEMU boot+poweroff.

Targets (issue 2): cold build <= 20 min and rebuild after one patch <= 3 min on 2 cores;
boot + poweroff of a 4-vCPU guest <= 10 s. Writes bench/results/foundation-<host>-<date>.json.

    .venv-python bench/bench_foundation.py [--skip-cold] [--boots N] [--compare-kernel BZIMAGE]

``--compare-kernel`` times the same boots with another kernel (the same image and run), e.g.
the kernel of the commit before a config change, to measure what the change costs at boot.

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


def qemu_boots(prepared, kernels: dict[str, Path], n: int, quiet,
               icount: bool = False) -> dict[str, tuple]:
    """Per kernel: host seconds of n QEMU boots (boot, run bv_0 smoke, power off) with the
    run's image and payload, and the guest's uptime at its ready marker in each. The
    kernels' boots alternate, so a change in the host's load falls on all of them. With
    ``icount`` the guest's clock counts its instructions (QEMU -icount shift=0, 1 ns each,
    idle time skipped), so the uptime at ready does not depend on the host's load."""
    from schedlab.backends import qemu
    from schedlab.guest.image import write_cpio
    from schedlab.guest.payload import QEMU_PAYLOAD
    from schedlab.guest.protocol import parse_console
    out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in kernels}
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
                cmd = qemu.command(prepared.machine, bzimage, initrd,
                                   "console=ttyS0 panic=-1 schedlab.backend=qemu", console)
                if icount:
                    cmd += ["-icount", "shift=0,sleep=off"]
                secs, text = timed(lambda: qemu.boot(cmd, console, 120, 300,
                                                     prepared.guest.nonce, quiet))
                out[label][0].append(round(secs, 2))
                facts = parse_console(text, prepared.guest.nonce).facts
                out[label][1].append(float(facts["uptime.topology-at-boot"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold kernel build")
    parser.add_argument("--boots", type=int, default=3, help="QEMU boots to time")
    parser.add_argument("--icount", action="store_true",
                        help="QEMU counts instructions for the guest's clock (-icount): the "
                             "uptime at ready is then free of the host's load")
    parser.add_argument("--compare-kernel", metavar="BZIMAGE",
                        help="also time the boots with this kernel (e.g. one built without a "
                             "config option, to measure what the option costs at boot)")
    args = parser.parse_args()
    out: dict = {"host": platform.node(), "cpus": os.cpu_count(), "date": str(date.today()),
                 "load_average_at_start": os.getloadavg(), "icount": args.icount}

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
    for label, (boots, ready) in qemu_boots(prepared, kernels, args.boots, quiet,
                                                      args.icount).items():
        bzimage = kernels[label]
        key = ("qemu_boot_poweroff_4vcpu" + ("_icount" if args.icount else "")
               + ("" if label == "current" else "_compared_kernel"))
        out[f"{key}_s"] = boots
        out[f"{key}_median_s"] = statistics.median(boots)
        # The guest's own clock when its runner had read the topology (just before the
        # ready marker): the kernel's boot plus the runner's start, without QEMU's.
        out[f"{key}_guest_ready_s"] = ready
        out[f"{key}_guest_ready_median_s"] = statistics.median(ready)
        print(f"QEMU 4-vCPU boot + bv_0 smoke + poweroff ({label} kernel {bzimage}): "
              f"{boots} s; guest clock at ready {ready} s")
    tag = ("-compare" if args.compare_kernel else "") + ("-icount" if args.icount else "")
    dest = REPO / "bench" / "results" / f"foundation-{platform.node()}-{date.today()}{tag}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
