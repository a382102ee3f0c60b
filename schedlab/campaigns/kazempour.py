"""Study 1, cache affinity on multicores (Kazempour, Fedorova, Alagheband): its experiments.

Experiment A (L1 affinity, Figs. 2 and 3 and every other condition): a benchmark and a base
vector share CPU 0 with the quantum Q, so each quantum the base vector wipes (BV_L1D,
BV_L1I) or keeps (BV_0) the benchmark's L1 state; for low L2 retention BV_L2 runs on CPU 1,
which shares the L2. Experiment B (L2 affinity, Figs. 4 to 7): main copies plus one
interfering benchmark on Clovertown MMP and UMP, HI_AFF (main copies bound) vs LOW_AFF
(nothing bound, cache affinity switched off), 2 ms quanta.

The benchmark's own IPC and misses come from per-task attribution (the guest reports its
context switches to gem5). Base-vector footprints are read from the machine's caches.
Repetitions differ in the base vectors' start offset (the phase of the interleaving), since
the benchmarks' inputs are fixed by their checksums.
"""

from __future__ import annotations

from schedlab.backends.backend import get_backend
from schedlab.analysis import kazempour as analysis
from schedlab.campaigns.experiment import Analysis, Experiment
from schedlab.campaigns.programs import program, warmup_s
from schedlab.machine import format_size, load_machine
from schedlab.runs import RunRequest, WorkloadRequest

# The papers' names; the program each runs (real, or our stand-in): schedlab.campaigns.programs.
BENCHMARKS = ("art", "crafty", "gap", "gcc", "gzip", "mcf", "parser", "twolf")
QUANTA_MS = (2, 10, 200)
BASE_VECTORS = {"bv_l1d": "l1d", "bv_l1i": "l1i", "bv_0": None}
MACHINES_A = ("clovertown-e5320-mup", "niagara")
# Experiment B's groups: (main benchmark, interfering benchmark), the interfering one being
# the next in the list, as in the paper's table.
GROUPS = tuple(zip(BENCHMARKS, BENCHMARKS[1:] + BENCHMARKS[:1]))
MAIN_COPIES = {"clovertown-e5320-mmp": 2, "clovertown-e5320-ump": 4}
INTERFERING_COPIES = {"clovertown-e5320-mmp": 1, "clovertown-e5320-ump": 2}

# Region of interest per run, simulated seconds: smoke 6 ms (the benchmark's and the base
# vector's 2 ms quanta alternate 3 times; a 200 ms quantum is not reached); paper 1 s (a
# 200 ms quantum alternates 5 times).
REGION_S = {"smoke": 0.006, "paper": 1.0}
# The measured benchmark runs this long (on the Atomic cores, caches attached) before its
# region begins, so the region sees it in its steady state, not its exec, page faults and
# input generation (measured on gem5: a smoke region without it was mostly start-up).
WARMUP_S = {"smoke": 0.02, "paper": 0.2}
# Repetitions a condition: 4 (the paper ran 3), which resolve a difference of about 4 % in IPC
# between two bars (art's IPC moved by a pooled sd of 2.3 % of its mean over five guest seeds
# a condition: bench/reproducibility.md, study 1), within the re-make's budget
# (docs/remake.md); the paper scale runs as many, not fewer.
REPS = {"smoke": 4, "paper": 4}
QUANTUM_MS = 2.0


def offset_ms(rep: int, reps: int) -> float:
    """The base vectors' start offset of repetition ``rep`` of ``reps``: spread evenly over
    one 2 ms quantum, so each repetition meets the benchmark at another phase of its quanta
    (0, 0.5, 1.0, 1.5 ms)."""
    return round(QUANTUM_MS * rep / reps, 2)


REDUCTIONS = {"smoke": "a 6 ms region per run (paper: 1 s) after a 20 ms warm-up (paper: "
                       "200 ms; longer where a real program's start-up needs it): the "
                       "benchmark gets about two 2 ms quanta in it, each after a "
                       "base-vector quantum; the 10 and 200 ms quanta are not run; "
                       "benchmarks at their smoke inputs"}
REDUCTIONS_B = {"smoke": "a 6 ms region (paper: 1 s) after a 20 ms warm-up (paper: 200 ms; "
                         "longer where a real program's start-up needs it), "
                         "about three 2 ms quanta; benchmarks at their smoke inputs"}
REPETITION = ("the base vectors' start offset, spread over one 2 ms quantum (0, 0.5, "
              "1.0, 1.5 ms): the phase of the interleaving")
REPETITION_B = ("the start offset, spread over one 2 ms quantum (0, 0.5, 1.0, 1.5 ms), "
                "of the other main copies and the "
                "interfering benchmark: the phase of their quanta against the measured copy")


# The benchmark and the base vector that share CPU 0 are SCHED_RR at one priority, so they
# alternate with exactly the quantum (sched_rr_timeslice_ms counts jiffies; CFS would stretch
# a 2 ms slice to the next tick, measured at about 3 ms). BV_L2 on CPU 1 shares its CPU with
# nothing, so it stays SCHED_OTHER (the runner and the launcher outrank every workload
# anyway: disk-images/guest-tools/launch.c).
SHARED_CPU = {"sched": "rr", "prio": 1}


def _bv(name: str, machine_name: str, cpus: str, offset_ms: float,
        **placement) -> WorkloadRequest:
    """A base vector sized to one of the machine's caches (BV_0 has no footprint)."""
    cache = BASE_VECTORS.get(name) or ("l2" if name == "bv_l2" else None)
    args = ()
    if cache:
        args = ("--size", format_size(load_machine(machine_name).cache(cache).size))
    return WorkloadRequest(name, size="paper", args=args, cpus=cpus, start_delay_ms=offset_ms,
                           **placement)


def l1_affinity(machines, benchmarks, base_vectors, retentions, quanta, scale: str,
                backend: str) -> list[RunRequest]:
    """Experiment A: benchmark and base vector on CPU 0; BV_L2 on CPU 1 for low retention."""
    out = []
    for machine in machines:
        for bench in benchmarks:
            for bv in base_vectors:
                for retention in retentions:
                    for q in quanta:
                        for rep in range(REPS[scale]):
                            offset = offset_ms(rep, REPS[scale])
                            background = [_bv(bv, machine, "0", offset, **SHARED_CPU)]
                            if retention == "low":
                                background.append(_bv("bv_l2", machine, "1", offset))
                            out.append(RunRequest(
                                machine=machine, backend=backend, policy=f"quantum-{q}ms",
                                cpu="o3" if machine != "niagara" else "timing",
                                jobs=(WorkloadRequest(program(bench), size=scale, cpus="0",
                                                      duration=REGION_S[scale],
                                                      warmup=warmup_s(
                                                          bench, machine, WARMUP_S[scale],
                                                          cpu_share=0.5),
                                                      **SHARED_CPU),),
                                background=tuple(background),
                                attribute_tasks=get_backend(backend).attributes_tasks,
                                label={"machine": machine, "benchmark": bench, "bv": bv,
                                       "affinity": "high" if bv == "bv_0" else "low",
                                       "l2_retention": retention, "quantum_ms": q,
                                       "rep": rep}))
    return out


def l2_affinity(machines, scale: str, backend: str) -> list[RunRequest]:
    """Experiment B: the first main copy is the launched job, whose run is the region of
    interest; the other main copies and the interfering benchmark run beside it, as
    background workloads, until the runner stops them after the job (their ``duration`` is
    not applied to a background: schedlab.runs; it only names their runs). The figures take
    all main copies together (recognised in the scheduler trace by their command name;
    schedlab.analysis.kazempour). HI_AFF binds copy i to core i (modulo the cores); LOW_AFF
    binds nothing and switches CFS cache affinity off."""
    out = []
    for machine in machines:
        cores = load_machine(machine).cores
        # The main copies and the interfering ones share the cores: a fair share each
        # while they start (the warm-up of a real program's start-up).
        tasks = MAIN_COPIES[machine] + INTERFERING_COPIES[machine]
        for main, interfering in GROUPS:
            # The region follows the start-up of every program in the run: an interfering
            # real program still starting (link-parser reading its dictionary, GAP restoring
            # its workspace) would interfere as its start-up, not as itself.
            warmup = max(warmup_s(p, machine, WARMUP_S[scale], cpu_share=min(1.0, cores / tasks))
                         for p in (main, interfering))
            for affinity in ("high", "low"):
                for rep in range(REPS[scale]):
                    offset = offset_ms(rep, REPS[scale])

                    def bound(i):
                        return str(i % cores) if affinity == "high" else None
                    others = [WorkloadRequest(program(main), size=scale, cpus=bound(i),
                                              duration=REGION_S[scale] * 4,
                                              start_delay_ms=offset)
                              for i in range(1, MAIN_COPIES[machine])]
                    others += [WorkloadRequest(program(interfering), size=scale,
                                               duration=REGION_S[scale] * 4,
                                               start_delay_ms=offset)
                               for _ in range(INTERFERING_COPIES[machine])]
                    out.append(RunRequest(
                        machine=machine, backend=backend,
                        policy="quantum-2ms" if affinity == "high" else "no-affinity-2ms",
                        jobs=(WorkloadRequest(program(main), size=scale, cpus=bound(0),
                                              duration=REGION_S[scale],
                                              warmup=warmup),),
                        background=tuple(others),
                        attribute_tasks=get_backend(backend).attributes_tasks,
                        label={"machine": machine, "benchmark": main,
                               "interfering": interfering, "affinity": affinity,
                               "quantum_ms": 2, "rep": rep}))
    return out


def _fig2(scale, backend):
    return l1_affinity(["clovertown-e5320-mup"], BENCHMARKS, ["bv_0", "bv_l1i"], ["low"],
                       [2], scale, backend)


def _all_a(scale, backend):
    # A smoke region (6 ms) holds no full 10 or 200 ms quantum: smoke runs the 2 ms one only.
    quanta = QUANTA_MS if scale == "paper" else (2,)
    return l1_affinity(MACHINES_A, BENCHMARKS, list(BASE_VECTORS), ["high", "low"], quanta,
                       scale, backend)


def _ump(scale, backend):
    return l2_affinity(["clovertown-e5320-ump"], scale, backend)


def _mmp(scale, backend):
    return l2_affinity(["clovertown-e5320-mmp"], scale, backend)


NOTES = ("Model vs the real Clovertown: gem5 O3 cores (width 4, ROB 96) with classic caches, "
         "no hardware prefetchers (the E5320 has L1 and L2 prefetchers), the front-side bus "
         "as one fixed memory latency; x86 stand-ins for the SPEC CPU2000 programs "
         "(configs/README.md, workloads/README.md).")
NOTES_NIAGARA = ("Niagara is modelled as 8 in-order single-issue x86 cores (TimingSimpleCPU) "
                 "with one thread each instead of 4, and 64 B L1 lines (real: 16 B D, 32 B "
                 "I).")


NOTES_MMP = ("HI_AFF binds main copy i to core i, so on the MMP both main copies run on "
             "chip 0 (cores 0 and 1) and share its L2; under LOW_AFF CFS placed them on one "
             "chip or on both (data/kazempour/reading.md).")


# Each run's tables: one row per job, and the benchmark's turns on its CPU.
ANALYSIS = Analysis(draw=analysis.draw, collect=analysis.collect, summary=analysis.summary,
                    parts=("", "turns"))


def _experiment(name, title, matrix, metric, **kw) -> Experiment:
    experiment_b = matrix in (_ump, _mmp)
    extra = {_all_a: NOTES_NIAGARA, _mmp: NOTES_MMP}.get(matrix)
    return Experiment(name=name, study="kazempour", kind="figure", title=title, matrix=matrix,
                      metric=metric, repetition=REPETITION_B if experiment_b else REPETITION,
                      analysis=ANALYSIS,
                      reductions=REDUCTIONS_B if experiment_b else REDUCTIONS,
                      notes=NOTES + (" " + extra if extra else ""), **kw)


EXPERIMENTS = (
    _experiment("kazempour-fig2", "IPC per benchmark, high vs low L1 affinity (Clovertown "
                "MUP, low L2 retention, 2 ms quantum, I-cache base vector)", _fig2, "task_ipc"),
    _experiment("kazempour-fig3", "L1 I-cache misses per instruction, high vs low L1 affinity "
                "(the runs of Fig. 2)", _fig2, "task_l1i_mpi"),
    _experiment("kazempour-expA", "Experiment A, every condition: IPC per benchmark for each "
                "base vector, L2 retention and quantum, Clovertown MUP and Niagara", _all_a,
                "task_ipc"),
    _experiment("kazempour-fig4", "IPC of the main benchmarks, HI_AFF vs LOW_AFF, Clovertown "
                "UMP", _ump, "copies_ipc"),
    _experiment("kazempour-fig5", "IPC of the main benchmarks, HI_AFF vs LOW_AFF, Clovertown "
                "MMP", _mmp, "copies_ipc"),
    _experiment("kazempour-fig6", "L2 misses per instruction of the main benchmarks, "
                "HI_AFF vs LOW_AFF, Clovertown UMP", _ump, "copies_llc_mpi"),
    _experiment("kazempour-fig7", "L2 misses per instruction of the main benchmarks, "
                "HI_AFF vs LOW_AFF, Clovertown MMP", _mmp, "copies_llc_mpi"),
)
