"""The demo's live experiment."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from schedlab.machine import format_size, load_machine
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare

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
