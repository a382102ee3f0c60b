"""Study 4, processor pool-based scheduling on NUMA (Brecht): its experiments.

The guest kernel has processor pools (the ``sched/pools`` kernel-patches: pools of CPUs,
First-/Best-/Worst-Fit placement of a job's first thread, expansion into the job's pools,
one thread per processor) and ``policies.toml`` registers the ``pools-<size>-<placement>``
policies used here, which make the ``streams`` driver's applications pool jobs
(``--pool-jobs 1``). The analysis (``schedlab/analysis/brecht.py``) turns each run's
driver output and pool tracepoints into response times per application with 90 %
intervals and placement snapshots.

The matrices are the paper's on Hector (16 processors in 4 stations; station 0 for the
system, jobs on stations 1-3), listed and costed for both backends. On gem5 (Hector's Timing
cores) a smoke run took 12 to 19 minutes of host time, two at a time, about 3 of them
outside the region (bench/gem5.md, "Hector"), with smaller problems than the paper's. On
QEMU (16 TCG vCPUs on the host's cores: about 30 s of host time per smoke run) they show
the placements and the response-time mechanics but not Hector's NUMA timing (QEMU models
no latencies).
Repetitions differ in the streams' start offsets.
"""

from __future__ import annotations

from schedlab.backends.backend import get_backend
from schedlab.analysis import brecht as analysis
from schedlab.campaigns.experiment import Analysis, Experiment
from schedlab.machine import load_machine
from schedlab.runs import RunRequest, WorkloadRequest


def _notes() -> str:
    """What differs from the real Hector, said next to every gem5 figure; the model's
    numbers from the catalogue."""
    hector = load_machine("hector")
    l1d = hector.cache("l1d")
    return (f"Model vs the real Hector: x86 in-order cores (TimingSimpleCPU) at "
            f"{hector.clock_hz / 1e6:g} MHz with {l1d.size >> 10} KiB {l1d.assoc}-way L1s of "
            f"{l1d.line} B lines, memory latencies from the paper's table (measured in "
            f"bench/gem5.md within 5 %); Linux 6.1 with the sched/pools patches instead of "
            f"Hurricane: on these cores a thread's creation takes 30-50 ms and a wake-up onto "
            f"an idle CPU about 2 ms of guest time (bench/gem5.md), part of every job's "
            f"response time; guest tick {hector.tick_hz} Hz.")


REPETITION = "the streams' start offset (0, 1, 2 ... ms)"
# Processors per pool over the 12 job CPUs. The paper's "1x12, 2x6, 3x4, 6x2, 12x1" are pools
# x processors: pools of 12, 6, 4 (a station each), 2 and 1. Pools of 3 (one of them astride
# two stations) are not the paper's; they were run first, under the other reading, and kept.
POOL_SIZES = (1, 2, 3, 4, 6, 12)
SIZE_OF = {2: "paper_p2", 4: "paper", 6: "paper_p6", 8: "paper_p8"}
# Repetitions a condition: the paper's 5; at smoke 3. A guest seed alone moved a run's mean
# response time by 0.6 % (bench/reproducibility.md, study 4), but the figures' repetitions
# also shift the streams' start, and two such runs of one condition differed by 8 % (brecht-
# fig2, parallelism 2, pools of 4: 3.82 and 4.14 s), which left claims B1 and B3 undecided
# with two (data/claims.toml); three fit the re-make's budget (docs/remake.md).
REPS = {"smoke": 3, "paper": 5}


JOB_CPUS = 12                   # Hector's stations 1-3
# The paper's application sets (workloads/streams/workload.toml's paper sizes): FFT, HOUGH,
# MM, NEURAL and PDE; SIMPLEX only at parallelism 6, its Fig. 3 (Brecht, Sec. 5.1).
APPS = {2: "fft,hough,mm,neural,pde", 4: "fft,hough,mm,neural,pde",
        8: "fft,hough,mm,neural,pde", 6: "hough,mm,simplex"}


# gem5 smoke: smaller problems. The rule: a round of the applications about 7.6 times
# smaller than the paper's (the first five chosen: fft, hough, mm, pde, simplex executed 683 M
# instructions at the paper's problems, 90 M at these; valgrind's count of the same static
# binaries on the host, 4 threads: 4.3 to 8.6 times fewer each), every problem still
# overflowing the 16 KiB data caches (MM 96 x 96 doubles: 216 KiB); three streams of the
# paper's would keep Hector's 16.67 MHz Timing cores busy for hours of host time. NEURAL by
# the same rule: 511 / sqrt(7.6) = 185 units (its work grows with the units squared):
# 42 M instructions against 309 M (7.3 times fewer), 275 KiB of weights.
GEM5_SMOKE_PROBLEMS = {"fft": "--n 128", "hough": "--n 64", "mm": "--n 96", "pde": "--n 48",
                       "neural": "--units 185", "simplex": "--constraints 128 --variables 256"}


def _streams(parallelism: int, scale: str, delay_ms: float, backend: str) -> WorkloadRequest:
    if scale == "smoke":
        # The paper's streams (12 / parallelism: every job CPU busy, none short) and
        # applications, one round instead of 15.
        apps = APPS[parallelism]
        smaller = (("--app-args", f"{app}={GEM5_SMOKE_PROBLEMS[app]}")
                   for app in apps.split(",")) if get_backend(backend).timing_model else ()
        return WorkloadRequest("streams", size="smoke", start_delay_ms=delay_ms,
                               args=("--streams", str(JOB_CPUS // parallelism),
                                     "--threads", str(parallelism), "--repeat", "1",
                                     "--apps", apps, *(a for pair in smaller for a in pair)))
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
                                jobs=(_streams(p, scale, float(rep), backend),),
                                label={"delay": delay, "parallelism": p, "pool_size": pool,
                                       "placement": placement, "rep": rep}))
        return out
    return matrix


# Claim B6's scale (Brecht, Sec. 5: MM on 8 processors no faster than on 4): MM alone, one
# job, with 4 and with 8 threads, in one pool of the 12 job CPUs (Worst-Fit, delay 16), at
# the paper's problem (192 x 192) at every scale: at the smoke's 96 x 96 each MM job of
# Fig. 2 released its first processor before placing its eighth thread, so none held more
# than 4 to 6 at once (data/brecht/reading.md, "brecht-fig2").
MM_PARALLELISMS = (4, 8)


def _mm_alone(scale, backend):
    out = []
    for p in MM_PARALLELISMS:
        for rep in range(REPS[scale]):
            out.append(RunRequest(
                machine="hector", backend=backend, cpu="timing",
                overrides=("memory.delay.cycles=16",), policy="pools-12-worst-fit",
                jobs=(WorkloadRequest("streams", size="smoke", start_delay_ms=float(rep),
                                      args=("--streams", "1", "--threads", str(p),
                                            "--repeat", "1", "--apps", "mm")),),
                label={"delay": 16, "parallelism": p, "pool_size": 12,
                       "placement": "worst-fit", "rep": rep}))
    return out


# Each run's tables: one row per run, its jobs, and the pools' placements.
ANALYSIS = Analysis(draw=analysis.draw, collect=analysis.collect, summary=analysis.summary,
                    parts=("", "jobs", "placements"))


REDUCTIONS = {"smoke": f"one round of each stream's applications (paper: 15), "
                       f"{REPS['smoke']} repetitions (paper: {REPS['paper']}); on gem5 smaller "
                       f"problems (" + ", ".join(f"{app} {args}" for app, args
                                                 in GEM5_SMOKE_PROBLEMS.items()) + ")"}


def _experiment(name, title, matrix, metric="mean_all", reductions=None) -> Experiment:
    return Experiment(name=name, study="brecht", kind="figure", title=title, matrix=matrix,
                      metric=metric, repetition=REPETITION, analysis=ANALYSIS,
                      notes=_notes(), reductions=reductions or REDUCTIONS)


EXPERIMENTS = (
    _experiment("brecht-fig1", "Mean response time over pools of 1 to 12 processors, ring "
                "delay 0, 8 and 16, parallelism 4, Worst-Fit",
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
    _experiment("brecht-mm", "MM alone on 4 and on 8 processors, the paper's problem (claim "
                "B6): one job, one pool of 12, Worst-Fit, delay 16", _mm_alone,
                reductions={"smoke": f"one MM job at the paper's 192 x 192 (no smaller "
                                     f"problem), {REPS['smoke']} repetitions (paper: "
                                     f"{REPS['paper']})"}),
)
