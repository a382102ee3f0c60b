"""Host-time estimates for campaigns, from the speeds measured in ``bench/``.

A gem5 run costs a fixed part (restore, the runner's set-up, result reporting: the
benchmark's total minus its region of interest) plus its regions of interest at the
measured detailed-core speed (guest instructions per host second, ``bench/gem5.md``), and
the jobs' warm-ups at the Atomic cores' speed (:data:`ATOMIC_IPS`). A region's guest
instructions are estimated in :mod:`schedlab.guest.work`. The estimate is
rough, within a factor of two or so; ``run.py reproduce --dry-run`` prints it before
anything runs. A QEMU run costs about half a minute (``bench/results/foundation-*.json``).
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Callable, TypeVar

from schedlab.backends.backend import BackendName
from schedlab.guest.work import busy_cpus, region_instructions
from schedlab.machine import load_machine
from schedlab.paths import BENCH_RESULTS
from schedlab.runs import RunRequest

T = TypeVar("T")
QEMU_RUN_S = 30.0
# Guest instructions per host second of the Atomic cores (with the classic caches) that run
# a job's warm-up: 1.3 to 2.0 M on a Clovertown X5365 warming up a ray tracer and omnetpp
# (a lee-fig25 run, 2026-11-26, three simulations on the 2-core host).
ATOMIC_IPS = 1.5e6
# How much faster the NonCaching cores of ``--warm-caches`` fast-forward than Atomic cores
# with the caches: 1.44 against 0.92 M instructions per host second over the same stretch
# of a lee-fig9 warm-up (Clovertown X5365, 2026-11-26, bench/gem5.md).
BYPASS_SPEEDUP = 1.57


@cache
def measured_speeds() -> dict[tuple[str, str], dict]:
    """(machine, cpu) -> {"fixed_s", "ips"} from the newest benchmark file that has it."""
    speeds: dict[tuple[str, str], dict] = {}
    for path in sorted(BENCH_RESULTS.glob("gem5-*.json")):
        for r in json.loads(path.read_text()).get("records", []):
            if r.get("hierarchy") == "plan" and r.get("ok") and r.get("ips"):
                old = speeds.get((r["machine"], r["cpu"]), {})
                speeds[(r["machine"], r["cpu"])] = {
                    "fixed_s": max(0.0, r["total_host_s"] - r["roi_host_s"]), "ips": r["ips"],
                    # A workload's measured region on this machine (Hector's streams), for
                    # workloads cachegrind has not characterised.
                    "regions": {**old.get("regions", {}),
                                **({r["workload"]: r["roi_insts"]} if "workload" in r else {})}}
    return speeds


def _speed(machine: str, cpu: str) -> dict | None:
    """The measured speed of this machine's cores (or of the machine it is a variant of)."""
    speeds = measured_speeds()
    for key in ((machine, cpu), (machine.rsplit("-", 1)[0], cpu)):
        if key in speeds:
            return speeds[key]
    return None


def unmeasured(requests: list[RunRequest]) -> set[str]:
    """Machines of gem5 requests without a benchmark record: their estimate is a guess."""
    return {f"{r.machine} ({r.cpu})" for r in requests
            if r.backend == BackendName.GEM5 and _speed(r.machine, r.cpu) is None}


def _instructions(request: RunRequest, clock_hz: int, cores: int,
                  regions: dict[str, float]) -> float:
    return sum(job.reps * region_instructions(job, clock_hz, busy_cpus(request, job, cores),
                                              regions)
               for job in request.jobs)


def _warmup_host_seconds(request: RunRequest, clock_hz: int, cores: int) -> float:
    """The jobs' warm-ups on the Atomic cores: their seconds times the clock times the busy
    CPUs at one instruction per cycle (what an Atomic core retires), at ATOMIC_IPS; with
    ``warm_caches`` all but its last seconds BYPASS_SPEEDUP times faster."""
    def cost(warmup: float) -> float:
        if request.warm_caches is None:
            return warmup
        cached = min(warmup, request.warm_caches)
        return cached + (warmup - cached) / BYPASS_SPEEDUP
    return sum(job.reps * cost(job.warmup) * clock_hz * busy_cpus(request, job, cores)
               for job in request.jobs) / ATOMIC_IPS


def run_host_seconds(request: RunRequest) -> float:
    """Estimated host seconds of one run (a boot to the checkpoint is not counted); NaN for
    a machine whose cores ``bench/`` has not measured (Hector's per-run cost, for one, is
    dominated by its tick on 16 slow cores, which no other machine's speed predicts)."""
    if request.backend == BackendName.QEMU:
        return QEMU_RUN_S
    machine = load_machine(request.machine, request.overrides)
    speed = _speed(machine.name, request.cpu)
    if speed is None:
        return math.nan
    return (speed["fixed_s"] + _warmup_host_seconds(request, machine.clock_hz, machine.cores)
            + _instructions(request, machine.clock_hz, machine.cores,
                            speed.get("regions", {})) / speed["ips"])


def costliest_first(items: list[T], request_of: Callable[[T], RunRequest],
                    host_seconds: Callable[[RunRequest], float] = run_host_seconds
                    ) -> list[T]:
    """``items`` in the order that ends a campaign soonest on a few cores: the costliest
    runs first (longest processing time first, by ``host_seconds``), so that no long run
    starts last while the other cores go idle. Runs the model cannot price (a machine
    ``bench/`` has not measured) go first, as possibly the longest; ties keep their
    order."""
    def key(item: T) -> float:
        seconds = host_seconds(request_of(item))
        return -math.inf if math.isnan(seconds) else -seconds
    return sorted(items, key=key)


def campaign_host_hours(requests: list[RunRequest]) -> float:
    """Estimated host hours, one run at a time; NaN if a machine has no measurement."""
    return sum(run_host_seconds(r) for r in requests) / 3600.0
