"""Study 4, processor pool-based scheduling on NUMA (Brecht): its experiments, defined and
costed.

The guest kernel has processor pools (kernel-patches 0019-0023: pools of CPUs,
First-/Best-/Worst-Fit placement of a job's first thread, expansion into the job's pools,
one thread per processor) and ``policies.toml`` registers the ``pools-<size>-<placement>``
policies used here, which make the ``streams`` driver's applications pool jobs
(``--pool-jobs 1``). Not runnable as figures yet: the study's analysis is not written and
Hector's runs on gem5 (about 70 minutes of host time each) are not made practical. The matrices are the paper's on Hector (16
processors in 4 stations; station 0 for the system, jobs on stations 1-3), so the listing
shows their size and cost. Repetitions differ in the streams' start offsets.
"""

from __future__ import annotations

from schedlab.campaigns.experiment import Experiment
from schedlab.runs import RunRequest, WorkloadRequest

MISSING = ("needs the study's analysis (response times per application with 90 % "
           "intervals, placement snapshots) and Hector's gem5 runs made practical and "
           "measured in bench/; the pools scheduler and the streams' pool jobs exist "
           "(tests/test_pools_qemu.py)")
REPETITION = "the streams' start offset (0, 1, 2 ... ms)"
POOL_SIZES = (1, 2, 3, 6, 12)   # processors per pool: 12x1 ... 1x12 over the 12 job CPUs
SIZE_OF = {2: "paper_p2", 4: "paper", 6: "paper_p6", 8: "paper_p8"}
REPS = {"smoke": 2, "paper": 5}


def _streams(parallelism: int, scale: str, delay_ms: float) -> WorkloadRequest:
    if scale == "smoke":
        return WorkloadRequest("streams", size="smoke", start_delay_ms=delay_ms,
                               args=("--threads", str(parallelism)))
    return WorkloadRequest("streams", size=SIZE_OF[parallelism], start_delay_ms=delay_ms)


def _matrix(delays, parallelisms, pools, placements):
    def matrix(scale, backend):
        out = []
        for delay in delays:
            for p in parallelisms:
                for pool in pools:
                    for placement in placements:
                        for rep in range(REPS[scale]):
                            out.append(RunRequest(
                                machine="hector", backend=backend, cpu="timing",
                                overrides=(f"memory.delay.cycles={delay}",),
                                policy=f"pools-{pool}-{placement}",
                                jobs=(_streams(p, scale, float(rep)),),
                                label={"delay": delay, "parallelism": p, "pool_size": pool,
                                       "placement": placement, "rep": rep}))
        return out
    return matrix


def _experiment(name, title, matrix, metric="mean_all") -> Experiment:
    return Experiment(name=name, study="brecht", kind="figure", title=title, matrix=matrix,
                      metric=metric, repetition=REPETITION, missing=MISSING,
                      reductions={"smoke": "streams of one round of the smoke kernels, 2 "
                                           "repetitions (paper: 15 rounds of each application)"})


EXPERIMENTS = (
    _experiment("brecht-fig1", "Mean response time over pool sizes 1x12 ... 12x1, ring delay "
                "0, 8 and 16, parallelism 4, Worst-Fit",
                _matrix((0, 8, 16), (4,), POOL_SIZES, ("worst-fit",))),
    _experiment("brecht-fig2", "Mean response time over pool sizes for parallelism 2, 4 and 8, "
                "delay 16", _matrix((16,), (2, 4, 8), POOL_SIZES, ("worst-fit",))),
    _experiment("brecht-fig3", "Parallelism 6 (HOUGH, MM, SIMPLEX): pools of 4 vs 6",
                _matrix((16,), (6,), (4, 6), ("worst-fit",))),
    _experiment("brecht-fig5", "Worst-Fit normalised to First-Fit, pools of 4, delay 16, "
                "parallelism 4", _matrix((16,), (4,), (4,), ("worst-fit", "first-fit"))),
    _experiment("brecht-fig6", "Placement snapshots over time: which job's threads occupy "
                "which processor of which pool", _matrix((16,), (4,), (4,), ("worst-fit",)),
                metric="placement"),
)
