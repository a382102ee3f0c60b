"""Study 3, region scheduling (Lee, Schwan): its experiments, defined and costed.

The guest kernel has region scheduling (kernel-patches 0012-0018: regions, working sets,
page-touch faults, micro-scheduling, balancing, unification, partitioning that can favour
one process, the revert rule) and ``policies.toml`` has the policies named below
(``region-balance``, ``region-unify``, ``region-confine``, ``region-partition``), whose
launcher option makes the run's workloads join. Not runnable yet: the matrices' run lengths
are the paper's measurement windows, but regions are mapped only after the first regioning
period (1 s by default, 100 ms at least), so each experiment still needs its regioning
timings and a warm-up that lets the regions form before its region of interest. The cost
of a micro-schedule (``lee-overheads``) is measured by bench/bench_regions.py meanwhile.
Machines: Clovertown X5365 (2 x 4 MB L2) and Westmere X5660 (2 x 12 MB L3).
"""

from __future__ import annotations

from schedlab.campaigns.experiment import Experiment
from schedlab.runs import RunRequest, WorkloadRequest

MACHINES = ("clovertown-x5365", "westmere-x5660")
MISSING = ("needs regioning timings and a warm-up per experiment (regions are mapped only "
           "after the first regioning period; kernel.sched_region_period_ms)")
REPETITION = "memlat's traversal seed (--seed)"
REPS = {"smoke": 2, "paper": 5}
REGION_S = {"smoke": 0.02, "paper": 1.0}
# Fig. 9: two equal regions per memlat ("2^2 2MB" = two 2 MB regions) and access times.
REGION_SIZES = {"smoke": ("1MiB", "2MiB", "4MiB"), "paper": ("1MiB", "2MiB", "4MiB", "8MiB")}
ACCESS_TIMES = {"smoke": (2**12, 2**16), "paper": tuple(2**k for k in range(11, 18))}
SPEC = ("libquantum", "povray", "namd", "sphinx", "omnetpp", "h264ref")


def _memlat(size: str, access: int, seed: int, scale: str, cpus=None) -> WorkloadRequest:
    return WorkloadRequest("memlat", size="paper", cpus=cpus, duration=REGION_S[scale],
                           args=("--region-size", size, "--access-time", str(access),
                                 "--seed", str(seed)))


def _fig9(scale, backend):
    out = []
    for machine in MACHINES:
        for size in REGION_SIZES[scale]:
            for access in ACCESS_TIMES[scale]:
                for policy in ("region-confine", "region-unify"):
                    for rep in range(REPS[scale]):
                        out.append(RunRequest(
                            machine=machine, backend=backend, policy=policy,
                            jobs=(_memlat(size, access, rep + 1, scale),),
                            label={"machine": machine, "region_size": size,
                                   "access_time": access, "policy": policy, "rep": rep}))
    return out


def _fig17(scale, backend):
    big = {"clovertown-x5365": "4MiB", "westmere-x5660": "12MiB"}
    small = {"clovertown-x5365": "16KiB", "westmere-x5660": "512KiB"}
    out = []
    for machine in MACHINES:
        for bench in SPEC:
            for policy in ("vanilla", "region-balance"):
                for rep in range(REPS[scale]):
                    out.append(RunRequest(
                        machine=machine, backend=backend, policy=policy,
                        jobs=(WorkloadRequest(bench, size=scale, duration=REGION_S[scale]),),
                        background=(_memlat(big[machine], 2**16, rep + 1, scale),
                                    _memlat(big[machine], 2**16, rep + 2, scale),
                                    _memlat(small[machine], 2**16, rep + 3, scale)),
                        label={"machine": machine, "benchmark": bench, "policy": policy,
                               "rep": rep}))
    return out


def _spec_unify(scale, backend):
    out = []
    for machine in MACHINES:
        for bench in SPEC:
            for policy in ("vanilla", "region-unify"):
                for rep in range(REPS[scale]):
                    out.append(RunRequest(
                        machine=machine, backend=backend, policy=policy,
                        jobs=(WorkloadRequest(bench, size=scale, duration=REGION_S[scale],
                                              start_delay_ms=0.3 * rep),),
                        label={"machine": machine, "benchmark": bench, "policy": policy,
                               "rep": rep}))
    return out


def _consolidated(main: str, other: str):
    def matrix(scale, backend):
        out = []
        for machine in MACHINES:
            for policy in ("alone", "vanilla", "region-partition"):
                for rep in range(REPS[scale]):
                    background = () if policy == "alone" else (
                        WorkloadRequest(other, size=scale, duration=REGION_S[scale] * 2,
                                        start_delay_ms=0.3 * rep),)
                    out.append(RunRequest(
                        machine=machine, backend=backend,
                        policy="vanilla" if policy == "alone" else policy,
                        jobs=(WorkloadRequest(main, size=scale, duration=REGION_S[scale],
                                              start_delay_ms=0.2 * rep),),
                        background=background,
                        label={"machine": machine, "condition": policy, "rep": rep}))
        return out
    return matrix


def _experiment(name, title, matrix, metric) -> Experiment:
    return Experiment(name=name, study="lee", kind="figure", title=title, matrix=matrix,
                      metric=metric, repetition=REPETITION, missing=MISSING,
                      reductions={"smoke": "20 ms regions, fewer working sets and access "
                                           "times, 2 repetitions"})


EXPERIMENTS = (
    _experiment("lee-fig9", "Two-region memlat, unification vs confinement, over working set "
                "and access time; micro-schedules per second", _fig9, "accesses_per_sec"),
    _experiment("lee-fig17", "Cache balancing: two large memlats, one small memlat and a "
                "SPEC-like benchmark, speed-up with balancing", _fig17, "task_ipc"),
    _experiment("lee-fig18-23", "Cache loads over time, regions per cache, unification "
                "speed-ups and misses, micro-scheduling, merge and teardown counts for the "
                "SPEC CPU2006-like programs", _spec_unify, "task_ipc"),
    _experiment("lee-fig24", "Response-time distribution of a media server: alone, "
                "consolidated with the default scheduler, with region scheduling",
                _consolidated("mediaserver", "omnetpp"), "p99_ms"),
    _experiment("lee-fig25", "Parallel ray tracer consolidated with omnetpp: elapsed and CPU "
                "time, cache misses", _consolidated("raytrace", "omnetpp"), "wall_s"),
    _experiment("lee-overheads", "Cost of one micro-schedule (cycles) and the total overhead "
                "at about 700 micro-schedules per second", _fig9, "micro_schedule_cycles"),
)
