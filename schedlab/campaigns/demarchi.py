"""Study 2, task-affinity for real-time streaming (De Marchi, Bellasi, Fornaciari, Betz).

The software mixer (4 waves -> 3 mixers -> samples, every task SCHED_FIFO) on machine A
(Core i7 920: private L2s, one shared L3) and machine B (Xeon E5440: pairs of cores share an
L2), each with 2 and 4 cores online, vanilla Linux vs the task-affinity policy. Every figure
and Table I come from the same runs: the mixer's own files (production time per sample,
migrations map, execution time per task) and, on gem5, per-task attribution (misses per
task). Repetitions differ in the mixer's start offset against the 1 ms timer tick.
"""

from __future__ import annotations

from schedlab.backends.backend import BackendName, get_backend
from schedlab.analysis import demarchi as analysis
from schedlab.campaigns.experiment import Analysis, Experiment
from schedlab.guest import workloads
from schedlab.runs import RunRequest, WorkloadRequest

MACHINES = {("A", 4): "core-i7-920", ("A", 2): "core-i7-920-2core",
            ("B", 4): "xeon-e5440", ("B", 2): "xeon-e5440-2core"}
POLICIES = ("vanilla", "task-affinity")
# The mixer at a size detailed cores can afford for smoke: 1500 samples (about 135 M
# instructions, 15 to 25 minutes of host time a run with CPUs idling as IDLE says). 300
# samples gave a stable mean but not a stable tail (rho moved by up to 29 % on halving and
# stood 17 % above a 3000-sample run's; demarchi-tail). The paper's 150,000 for paper.
SIZE = {"smoke": "sim_long", "paper": "paper"}
# Repetitions a condition: the paper's 10; at smoke 5, what the re-make's budget allows
# (docs/remake.md): the mixer's rho moved by 12.7 % of its mean between two guest seeds
# (bench/reproducibility.md, study 2), so five a condition resolve about 18 % between two
# bars, two only 55 %.
REPS = {"smoke": 5, "paper": 10}
OFFSETS_MS = tuple(0.1 * i for i in range(10))


def _reduction(sizes: tuple[str, ...], reps: int) -> str:
    """What a scale runs of the paper's: the mixer's samples per run and the repetitions."""
    def samples(size):
        return f'{workloads.get("mixer").expect(size)["samples"]:,}'
    counts = [samples(s) for s in sizes]
    listed = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    return (f"{listed} samples per run (paper: {samples(SIZE['paper'])}) and {reps} "
            f"repetition{'s' if reps > 1 else ''} (paper: {REPS['paper']})")


REDUCTIONS = {"smoke": _reduction((SIZE["smoke"],), REPS["smoke"])}
REPETITION = "the mixer's start offset against the 1 ms timer tick (0, 0.1, ... 0.9 ms)"
# The background activity of a Linux system the mixer runs beside, the same under every
# policy: workloads/sysnoise (a 4 ms timer task, a 10 ms daemon, a 10 % nice-10 batch load,
# none bound; SCHED_OTHER, so the FIFO mixer preempts them, as it would real daemons).
BACKGROUND = (WorkloadRequest("sysnoise", size="paper"),)
NOTES = ("Beside the mixer runs a fixed model of a system's background activity "
         "(workloads/sysnoise: a 4 ms timer task, a 10 ms daemon touching 64 KiB, a 10 % "
         "non-RT load at nice 10 over 256 KiB), the same for vanilla and task-affinity; "
         "no frequency scaling (the models have no cpufreq driver) and no RT group "
         "scheduling (CONFIG_RT_GROUP_SCHED off).")


# How idle CPUs wait (the kernel's idle= parameter). gem5 loses wake-ups of idle CPUs
# (configs/README.md, "Periodic tick"); demarchi-idle measures what that does to the mixer
# (machine A, 4 cores, vanilla; docs/studies.md). On the kernel before kernel-patches 0029,
# which decided the committed figures' mode, the default (MWAIT) idle let one wake-up wait
# 796 ms (mu 4.66 ms per sample), idle=halt 22 of 354 wake-ups onto idle CPUs come up to a
# tick late (mu 36 us, rho 303 us), and idle=poll none (mu 19 us, rho 52 us). With 0029
# ("halt-poll": halt after polling for 100 us) none of 340 came late either, mu 18 us and
# rho 38 us against polling's 18 and 40 us on the same kernel, at 58 % of its host time.
# A real CPU leaves C1 in a microsecond or two. The figures' runs use halt-poll (0029 as
# revised in a2fbf89): as honest about wake-ups as polling, and the polling CPUs' O3 pause
# loops, not the samples, had dominated the runs' host time (machine B, 4 cores, vanilla:
# 2,700-3,100 s at 300 samples polling, 1,445 s at 1500 halt-polling).
IDLE_BOOT_ARGS = {"default": (), "halt": ("idle=halt",), "poll": ("idle=poll",),
                  "halt-poll": ("idle=halt", "sched_idle_poll_us=100")}
IDLE = "halt-poll"
# Per-CPU trace buffer (KiB) by mixer size on gem5, where the default (1 MiB) is too small:
# the 3000-sample runs of demarchi-tail filled it and lost 4068 and 6075 events
# (data/demarchi/earlier/README.md); 1500 samples may come close. The paper's 150,000
# samples would need about 200 MiB a CPU: their migrations and maps would come from a trace
# that does not hold them all.
TRACE_BUFFER_KB = {"sim_long": 4096, "smoke": 4096}


def mixer_runs(machines: list[str], scale: str, backend: str,
               idle: str = IDLE, size: str | None = None) -> list[RunRequest]:
    out = []
    for (label, cores), machine in MACHINES.items():
        if machine not in machines:
            continue
        for policy in POLICIES:
            for rep in range(REPS[scale]):
                out.append(RunRequest(
                    machine=machine, backend=backend, policy=policy,
                    jobs=(WorkloadRequest("mixer", size=size or SIZE[scale], sched="fifo",
                                          prio=50,
                                          start_delay_ms=OFFSETS_MS[rep]),),
                    background=BACKGROUND, attribute_tasks=get_backend(backend).attributes_tasks,
                    boot_args=IDLE_BOOT_ARGS[idle],
                    trace_buffer_kb=(TRACE_BUFFER_KB.get(size or SIZE[scale])
                                     if backend == BackendName.GEM5 else None),
                    label={"system": label, "cores": cores, "policy": policy, "rep": rep,
                           "idle": idle, **({"size": size} if size else {})}))
    return out


def _all(scale, backend):
    return mixer_runs(list(MACHINES.values()), scale, backend)


def _four(scale, backend):
    return mixer_runs([m for (_, c), m in MACHINES.items() if c == 4], scale, backend)


# The idle check's mixer: 300 samples at smoke (the polling run took 522 s of gem5 CPU time
# at 300; at 1500 it would take about 45 minutes); a wake-up's lateness does not depend on
# how many samples follow it.
IDLE_CHECK_SIZE = {"smoke": "sim"}


def _idle_check(scale, backend):
    """Machine A, 4 cores, vanilla, first repetition, under each idle mode."""
    return [r for mode in IDLE_BOOT_ARGS
            for r in mixer_runs([MACHINES[("A", 4)]], scale, backend, mode,
                                size=IDLE_CHECK_SIZE.get(scale))
            if r.label["rep"] == 0 and r.label["policy"] == "vanilla"]


# Whether the smoke scale's tail is stable: Table I's halving check compares half of each
# run's samples with all of them, and the background's timers (4 and 10 ms) fire only
# about ten times in a 1500-sample run (about 30 ms simulated). On the cheapest machine
# (B, 2 cores), both policies, first repetition: Table I's 1500-sample runs beside runs of
# a fifth of their samples and of twice them.
# At paper scale a run already has 150,000 samples: the check is the halving of Table I's
# runs of that condition.
TAIL_SIZES = {"smoke": ("sim", None, "smoke")}


def _tail(scale, backend):
    machine = [MACHINES[("B", 2)]]
    if scale not in TAIL_SIZES:
        return mixer_runs(machine, scale, backend)
    return [r for size in TAIL_SIZES[scale]
            for r in mixer_runs(machine, scale, backend, size=size) if r.label["rep"] == 0]


# Each run's tables: one row per run and the mixer's samples; the migrations map (Fig. 3)
# also needs the tasks' turns.
ANALYSIS = Analysis(draw=analysis.draw, collect=analysis.collect, parts=("", "samples"))
MORE_PARTS = {"demarchi-fig3": ("samples", "turns")}


def _experiment(name, kind, title, matrix, metric, reductions=REDUCTIONS,
                **more) -> Experiment:
    return Experiment(name=name, study="demarchi", kind=kind, title=title, matrix=matrix,
                      metric=metric, repetition=REPETITION, reductions=reductions,
                      notes=NOTES, analysis=ANALYSIS.with_parts(*MORE_PARTS[name])
                      if name in MORE_PARTS else ANALYSIS, **more)


EXPERIMENTS = (
    _experiment("demarchi-fig3", "figure", "Migrations map: the CPU each task ran on in "
                "each sample, vanilla vs task-affinity (4 cores)", _four, "cpu"),
    _experiment("demarchi-fig4", "figure", "Cache miss rates of loads and stores, vanilla vs "
                "task-affinity, machines A and B, 2 and 4 cores", _all,
                "mixer_l1d_load_miss_rate"),
    _experiment("demarchi-fig5", "figure", "Migrations per task, 4 cores (log scale)", _four,
                "migrations"),
    _experiment("demarchi-fig6", "figure", "Mean execution time per task per sample and its "
                "variance, 4 cores", _four, "exec_ns"),
    _experiment("demarchi-table1", "table", "Production time per sample: mean, variance, "
                "rho = mu + 2 sigma and the speed-up of task-affinity, machines A and B",
                _all, "production_ns"),
    _experiment("demarchi-fig7", "figure", "Empirical CDF of the sample production time, "
                "machine A", _all, "production_ns"),
    _experiment("demarchi-fig8", "figure", "Empirical CDF of the sample production time, "
                "machine B", _all, "production_ns"),
    _experiment("demarchi-tail", "figure", "Whether 1500 samples give a stable tail: the "
                "production time's tail (the share of samples taking x or longer), mu and rho "
                "with 300, 1500 and 3000 samples per run, machine B, 2 cores", _tail,
                "production_ns", backends=("gem5",),
                reductions={scale: _reduction(tuple(s or SIZE[scale] for s in sizes), 1)
                            for scale, sizes in TAIL_SIZES.items()}),
    _experiment("demarchi-idle", "figure", "Wake-up honesty: the mixer's wake-ups onto idle "
                "CPUs that came late (gem5's missed MWAIT wake-ups) and the production time, "
                "the default idle (MWAIT) vs idle=halt vs idle=poll vs idle=halt after a 100 us "
                "poll (kernel-patches 0029), machine A, 4 cores, vanilla", _idle_check, "wake_late",
                backends=("gem5",),
                reductions={scale: _reduction((size,), 1)
                            for scale, size in IDLE_CHECK_SIZE.items()}),
)
