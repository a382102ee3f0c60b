"""Study 3, region scheduling (Lee, Schwan): its experiments, defined and costed.

The guest kernel has region scheduling (the ``sched/regions`` kernel-patches: regions, working sets,
page-touch faults, micro-scheduling, balancing, unification, partitioning that can favour
one process, the revert rule) and ``policies.toml`` has the policies named below
(``region-balance``, ``region-unify``, ``region-confine``, ``region-partition``), whose
launcher option makes the run's workloads join. The analysis is
``schedlab/analysis/lee/``. Machines: Clovertown X5365 (2 x 4 MB L2) and Westmere X5660
(2 x 12 MB L3).

**Regioning timings and warm-up.** Regions are formed in regioning phases and mapped to
caches only when a phase ends, so every run's region of interest (ROI) begins after a
warm-up in which its processes' first phase has run (:data:`TIMINGS`, per backend and
scale; each run sets them with its sysctls, :func:`regioning_sysctl`). How the kernel
schedules a phase (``task_region_work()`` in kernel/sched/regions.c): the work of a
participating process runs at most every ``kernel.sched_region_scan_ms`` (S, the
access-bit scan; 100 ms by default), so a phase starts at the first scan at least
``kernel.sched_region_period_ms`` (P) after the process joined (the launcher joins it before
it executes), and ends at the first scan at least ``kernel.sched_region_phase_ms`` (F) after
it began, where the regions it formed are mapped; the next phase starts at the first scan
after the next period. With F below S a phase therefore lasts one scan, regions are mapped
about P + S after the start, and the next phase begins about max(2P, P + 2S) after it: the
ROI must lie in that window to measure mapped regions without a phase, and, no longer than
S, between two scans (each scan walks the process's pages and flushes its TLB, a cost the
vanilla runs, whose programs do not join, never pay).

What q (``kernel.sched_region_merge_us``) must satisfy: during a phase every private page
faults once, at its first touch; a page touched less than q after the previously touched
one joins its region (a seed joins at the first such touch, two regions merge at the
fourth). memlat's two arrays become two regions only if q is *above* the time between
consecutive first touches inside one array (one hinting fault plus the accesses to reach an
untouched page, up to about one access per page of the array at the end of a lap) and
*below* the gap between the last first touch in one array and the first in the other (the
rest of a visit after its first lap: (access time - about pages x ln(pages)) accesses). A
visit shorter than a lap (2^12 accesses for arrays of 2 MiB or more: 512 x ln 512 is about
3,200 accesses, plus a fault per page) links the arrays while their pages are still being
discovered, and they become one region whatever q is: the figure's regions column shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedlab.backends.backend import get_backend
from schedlab.analysis import lee as analysis
from schedlab.analysis.lee import pair_fits
from schedlab.campaigns.experiment import Analysis, Experiment
from schedlab.campaigns.programs import program, warmup_s
from schedlab.machine import format_size, load_machine, parse_size
from schedlab.runs import REGION_RATE_SYSCTL, RunRequest, WorkloadRequest

MACHINES = ("clovertown-x5365", "westmere-x5660")
# The seed does not move memlat's pages (in gem5 the same request gets the same frames), and
# other guest histories moved Fig. 9's 2 x 2 MiB confined point by up to 2x
# (data/lee/reading.md). memlat's --frames seeded varies them, but on gem5 it changed what the
# region scheduler formed (one region of both arrays instead of one each, so unification had
# nothing to spread: bench/gem5.md, "memlat's page frames"), so the definitions do not use it
# until that is understood.
# What the repetitions of each kind of run differ in.
MEMLAT_REPETITION = "memlat's traversal seed (--seed 1, 2, ...)"
SPEC_REPETITION = "the program's start offset (0, 0.3, 0.6 ms, ...)"
BALANCE_REPETITION = ("the order the three memlats start in, which decides where the default "
                      "scheduler puts them (the two large ones first, then the small one first, "
                      "then between them, and round again), and their seeds (rep + 1 to rep + 3)")
CONSOLIDATED_REPETITION = ("the main program's start offset (0, 0.2 ms, ...) and its "
                           "co-runner's (0, 0.3 ms, ...)")
REPS = {"smoke": 2, "paper": 5}
# The ROI's length (seconds of guest time after the warm-up).
REGION_S = {"smoke": 0.02, "paper": 1.0}
# Fig. 9: two equal regions per memlat ("2^2 2MB" = two 2 MB regions) and access times.
REGION_SIZES = {"smoke": ("1MiB", "2MiB", "4MiB"), "paper": ("1MiB", "2MiB", "4MiB", "8MiB")}
# Accesses per visit of a region: the paper's Fig. 9 spans 2^11 to 2^17 and reports gains
# only in the middle (claim L1); smoke runs both edges and the middle, 2^14.
ACCESS_TIMES = {"smoke": (2**12, 2**14, 2**16), "paper": tuple(2**k for k in range(11, 18))}
# The papers' names; the program each runs (real, or our stand-in): schedlab.campaigns.programs.
SPEC = ("libquantum", "povray", "namd", "sphinx", "omnetpp", "h264ref")


@dataclass(frozen=True)
class Regioning:
    """The regioning timings of a run and the warm-up before its ROI (see the module)."""

    scan_ms: int            # kernel.sched_region_scan_ms (S, 10 to 1000)
    period_ms: int          # kernel.sched_region_period_ms (P, at least 10)
    phase_ms: int           # kernel.sched_region_phase_ms (F)
    merge_us: int           # kernel.sched_region_merge_us (q)
    warmup_s: float         # the job runs this long before its ROI

    @property
    def scan_s(self) -> float:
        return self.scan_ms / 1000

    @property
    def mapped_s(self) -> float:
        """About when the first phase's regions are mapped after the process started: the
        first scan at least P after it joined, plus the scans until one more than F after
        that. Scans that run a tick late (a page walk longer than a tick) drift past it: the
        warm-up chosen above it carries that margin, not this formula."""
        return self.period_ms / 1000 + (self.phase_ms // self.scan_ms + 1) * self.scan_s

    @property
    def next_phase_s(self) -> float:
        """About when the second phase starts: the first scan after the next period, and
        never before the scan that follows the one that ended the first phase."""
        return max(2 * self.period_ms / 1000, self.mapped_s + self.scan_s)

    @property
    def cycle_s(self) -> float:
        """About the time from one phase's start to the next's (a phase ends at a scan, so
        it can take longer than P): a ROI moved by whole cycles keeps its place between
        two phases."""
        return self.next_phase_s - self.period_ms / 1000

    def sysctl(self) -> tuple[tuple[str, str], ...]:
        return (("kernel.sched_region_scan_ms", str(self.scan_ms)),
                ("kernel.sched_region_merge_us", str(self.merge_us)),
                ("kernel.sched_region_period_ms", str(self.period_ms)),
                ("kernel.sched_region_phase_ms", str(self.phase_ms)))


# gem5, smoke: scans and phases every 50 ms keep the Atomic warm-up short (each 0.1 s of
# warm-up is about 0.3 G instructions of one busy core; with the kernel's 100 ms scan, the
# shortest possible then, the warm-up was 0.24 s). Regions are mapped about 0.1 s after the
# start and the second phase begins about 0.15 s after it: the 20 ms ROI starts at 0.12 s,
# 20 ms after the mapping scan and 10 ms before the next scan, which starts that phase;
# margins for the scans' ticks (each scan is at least S after the one before, so they drift
# by up to a tick each) and for memlat's set-up before the first phase (a few ms of Atomic
# time for two 4 MiB arrays), and a phase of one 50 ms scan lets a first lap of every
# array finish in it (about 10 ms for a 12 MiB array at one hinting fault a page).
# q = 20 us, not the kernel's 100: the first phase runs on the Atomic cores, where an access
# takes about a nanosecond. In a gem5 run (Clovertown X5365, 2026-11-26, faults traced) the
# 1,024 first touches of a 4 MiB array came 2 to 4 us apart, and the rest of the 2^16-access
# visit after the lap took 59 us, after which the program's TLS page (a private page, read
# at every visit's end) and then the other array faulted 2 us apart: at q = 100 us all of it
# became one region, and unification had nothing to spread. 20 us keeps each array one
# region (the TLS page joins one of them). Phases inside an O3 ROI (paper scale) see slower
# accesses, and late-lap steps there can exceed q and split an array: the regions column
# of the figure shows what formed.
# gem5, paper: the kernel's default period (1 s); the 1 s ROI starts at 1.2 s, after the
# first mapping (1.1 s), and holds the second phase (about 2 s) and ten scans, as any second
# of a regioned program's steady state does (a phase of one scan every second: 10 % of the
# time).
# QEMU: TCG takes tens of microseconds to milliseconds per hinting fault on a loaded host
# and memlat's set-up of two 1 MiB arrays took 0.25 s there (2026-11-23, a host shared with
# two gem5 simulations), so its timings are tests/test_regions_qemu.py's (q = 1 ms, phases
# of 300 ms every second, which let a first lap finish inside one phase) and the warm-up
# waits for the first mapping (about 1.4 s) with the ROI before the second phase (2 s).
TIMINGS = {
    ("gem5", "smoke"): Regioning(scan_ms=50, period_ms=50, phase_ms=10, merge_us=20,
                                 warmup_s=0.12),
    ("gem5", "paper"): Regioning(scan_ms=100, period_ms=1000, phase_ms=10, merge_us=20,
                                 warmup_s=1.2),
    ("qemu", "smoke"): Regioning(scan_ms=100, period_ms=1000, phase_ms=300, merge_us=1000,
                                 warmup_s=1.6),
    ("qemu", "paper"): Regioning(scan_ms=100, period_ms=1000, phase_ms=300, merge_us=1000,
                                 warmup_s=1.6),
}


# Figs. 24 and 25 on gem5 at smoke scale: their ROIs are longer (some 50 ms, see GEM5_MAIN),
# and a phase-free window between scans is S long when P = S, so scans and phases every
# 80 ms: regions mapped about 0.16 s after the start, the next scan and phase about 0.24 s
# after it, the ROI from 0.17 s.
CONSOLIDATED_TIMINGS = {
    ("gem5", "smoke"): Regioning(scan_ms=80, period_ms=80, phase_ms=10, merge_us=20,
                                 warmup_s=0.17),
}


def regioning(backend: str, scale: str, consolidated: bool = False) -> Regioning:
    """The timings of a run; ``consolidated``: Figs. 24 and 25's, whose ROIs are longer."""
    if consolidated and (backend, scale) in CONSOLIDATED_TIMINGS:
        return CONSOLIDATED_TIMINGS[(backend, scale)]
    return TIMINGS[(backend, scale)]


def regioning_sysctl(backend: str, scale: str) -> tuple[tuple[str, str], ...]:
    return regioning(backend, scale).sysctl()


# Figs. 24 and 25 on gem5: the main program gets the backend's warm-up on the Atomic cores
# (its regions mapped before the ROI, as for the other figures) and a size that outlasts it;
# the ROI is the rest of its life, which it reports as roi_* (response times of the requests
# that arrive in the ROI; the ray tracer's rows, seconds and CPU seconds from the first row
# taken in it). On QEMU there is no warm-up: roi_* is the whole life. Smoke sizes were
# chosen from first gem5 runs (Clovertown X5365, vanilla, 2026-11-26). The media server at 2
# KiB frames and 2,500 requests/s used 0.41 ms of CPU a request (its user time over 700
# requests): every request missed its 0.4 ms deadline and the ROI's responses (16 to 26 ms)
# measured the backlog, not the service. At 1,250 requests/s the worker is about half busy,
# as at the paper's light load, and 287 requests last 0.23 s: some 75 arrive in the 60 ms
# after the 0.17 s warm-up (CONSOLIDATED_TIMINGS), the last 10 ms before the next scan. The
# ray tracer's warm-up on 2 threads is about 1.0 G instructions (one per cycle on 3 GHz
# Atomic cores); a first gem5 run (Clovertown X5365, vanilla, 2026-11-26, then with a 0.24 s
# warm-up) at 600 x 456 pixels rendered 100 rows in its 60 ms bound, about 5.2 M
# instructions a row at an IPC of 1.36, and did not finish: 600 x 256 pixels (about 1.3 G
# instructions) leave some 40 ms for the ROI. At paper scale (1.2 s warm-up) the media
# server keeps the paper's 300 requests at 30/s (8.8 s of ROI) and the ray tracer renders
# 1600 x 1200 pixels on 4 threads (about 50 G instructions, some 2 s of ROI).
# A duration bounds each ROI (the launcher stops the program there; both report what they
# did until then) at about 1.5 to 3 times the expected length, so a mis-sized run costs at
# most that, and the campaign's cost estimate has a bound to count.
# (main program, scale): (arguments added to its size of the scale, the ROI's bound in s)
GEM5_MAIN = {
    ("mediaserver", "smoke"): (("--frame-kb", "2", "--rate", "1250", "--requests", "287"),
                               0.08),
    ("mediaserver", "paper"): ((), 10.0),
    ("raytrace", "smoke"): (("--width", "600", "--height", "256"), 0.06),
    ("raytrace", "paper"): (("--width", "1600", "--height", "1200"), 4.0),
}


def _memlat(size: str, access: int, seed: int, scale: str, backend: str, cpus=None,
            job: bool = True) -> WorkloadRequest:
    warm = regioning(backend, scale).warmup_s if job else 0.0
    return WorkloadRequest("memlat", size="paper", cpus=cpus,
                           duration=REGION_S[scale] if job else None, warmup=warm,
                           args=("--region-size", size, "--access-time", str(access),
                                 "--seed", str(seed)))


def region_sizes(machine: str, scale: str) -> tuple[str, ...]:
    """Fig. 9's region sizes on ``machine``: the scale's, and at smoke scale, where every
    pair of them fits in one of the machine's last-level caches (the Westmere's 12 MiB L3s),
    also the paper's smallest size whose pair does not, the only kind of point where
    unification can gain capacity."""
    sizes = REGION_SIZES[scale]
    if scale == "smoke" and all(pair_fits(machine, s) for s in sizes):
        sizes += tuple(next(([s] for s in REGION_SIZES["paper"]
                             if not pair_fits(machine, s)), []))
    return sizes


# Region scheduling's rate rule (kernel-patches 0031) switched off, for a run.
RATE_RULE_OFF = ((REGION_RATE_SYSCTL, "0"),)


def _fig9(scale, backend, every_move=False):
    out = []
    for machine in MACHINES:
        for size in region_sizes(machine, scale):
            for access in ACCESS_TIMES[scale]:
                for policy in ("region-confine", "region-unify"):
                    sysctl = regioning_sysctl(backend, scale)
                    if every_move and policy == "region-unify":
                        sysctl += RATE_RULE_OFF
                    for rep in range(REPS[scale]):
                        out.append(RunRequest(
                            machine=machine, backend=backend, policy=policy,
                            sysctl=sysctl,
                            jobs=(_memlat(size, access, rep + 1, scale, backend),),
                            label={"machine": machine, "region_size": size,
                                   "access_time": access, "policy": policy, "rep": rep}))
    return out


def _overheads(scale, backend):
    """lee-overheads prices one micro-schedule by the time unification loses against
    confinement, per micro-schedule, so every switch between memlat's regions must be one:
    its unification runs switch the rate rule off, whose holds would leave the thread in the
    other cache between moves and charge that time to fewer of them. Confinement's runs are
    lee-fig9's: they make no move in their ROI, and the one move that places the thread
    before it passes the rule (a 1 MiB region's misses are worth milliseconds against tens
    of microseconds a move). lee-fig9 keeps the rule: it is part of the policy it shows."""
    return _fig9(scale, backend, every_move=True)


def _benchmark(bench: str, machine: str, scale: str, backend: str, delay_ms: float = 0.0):
    # The paper size: the smoke sizes end in about 0.1 s of guest time, inside the warm-up;
    # the duration stops it at the ROI's end. The program: real where one runs here.
    t = regioning(backend, scale)
    warm = warmup_s(bench, machine, t.warmup_s)
    if warm > t.warmup_s:
        # A start-up longer than the warm-up (POV-Ray's timed one): whole regioning cycles
        # later, so that the ROI keeps its place between two phases.
        cycles = math.ceil((warm - t.warmup_s) / t.cycle_s - 1e-9)
        warm = round(t.warmup_s + cycles * t.cycle_s, 3)
    return WorkloadRequest(program(bench), size="paper", duration=REGION_S[scale],
                           warmup=warm, start_delay_ms=delay_ms)


def start_order(rep: int) -> tuple[int, ...]:
    """Fig. 17: the order the three memlats (0, 1: large; 2: small) start in, in repetition
    ``rep``. The default scheduler places each new program on the next idle CPU, so the order
    decides which memlat shares a cache with the benchmark and whether the two large ones
    share one. It rotates: the large ones first (rep 0), the small one first (rep 1), the
    small one between them (rep 2), so the default scheduler's runs see what any start order
    may give them, which a balancing scheduler should undo."""
    return tuple((k - rep) % 3 for k in range(3))


# Fig. 17's small memlat by the size of its working set, both regions together (memlat's
# --region-size is one of its two regions): the paper's, under a tenth of the machine's
# last-level cache. A large memlat's working set is one last-level cache (the catalogue's),
# so two overflow it and where they go matters. With regions of the cache's size instead
# (the first runs of this figure, data/lee/earlier/), a large memlat missed on about every
# access wherever it ran: no placement could matter.
FIG17_SMALL = {"clovertown-x5365": "16KiB", "westmere-x5660": "512KiB"}


def _fig17(scale, backend):
    out = []
    for machine in MACHINES:
        large = format_size(load_machine(machine).llc.size // 2)
        small = format_size(parse_size(FIG17_SMALL[machine], "working set") // 2)
        memlats = (large, large, small)
        for bench in SPEC:
            for policy in ("vanilla", "region-balance"):
                for rep in range(REPS[scale]):
                    out.append(RunRequest(
                        machine=machine, backend=backend, policy=policy,
                        sysctl=regioning_sysctl(backend, scale),
                        attribute_tasks=get_backend(backend).attributes_tasks,
                        jobs=(_benchmark(bench, machine, scale, backend),),
                        # Each memlat keeps its seed (rep + 1 to rep + 3) in every order.
                        background=tuple(_memlat(memlats[k], 2**16, rep + 1 + k, scale,
                                                 backend, job=False)
                                         for k in start_order(rep)),
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
                        sysctl=regioning_sysctl(backend, scale),
                        attribute_tasks=get_backend(backend).attributes_tasks,
                        jobs=(_benchmark(bench, machine, scale, backend, 0.3 * rep),),
                        label={"machine": machine, "benchmark": bench, "policy": policy,
                               "rep": rep}))
    return out


def _main_program(main: str, scale: str, backend: str, smoke_args: tuple[str, ...],
                  delay_ms: float) -> WorkloadRequest:
    """Figs. 24 and 25's main program: on gem5 after the warm-up, sized to outlast it (see
    GEM5_MAIN); on QEMU from its start, its smoke size plus ``smoke_args``."""
    if get_backend(backend).timing_model:     # every instruction simulated in detail
        args, bound_s = GEM5_MAIN[(main, scale)]
        return WorkloadRequest(main, size=scale, args=args, duration=bound_s,
                               warmup=regioning(backend, scale, consolidated=True).warmup_s,
                               start_delay_ms=delay_ms)
    return WorkloadRequest(main, size=scale, start_delay_ms=delay_ms,
                           args=smoke_args if scale == "smoke" else ())


def _consolidated(main: str, other: str, smoke_args: tuple[str, ...] = (),
                  attribute: bool = False):
    """The main program alone, beside ``other`` under the default scheduler, and beside it
    with partitioning that favours the main program. Its ROI runs to its end (see
    GEM5_MAIN). ``smoke_args``: added to its smoke size on QEMU; ``attribute``: on
    gem5, its main thread's own counters (per-task attribution)."""
    def matrix(scale, backend):
        out = []
        for machine in MACHINES:
            for policy in ("alone", "vanilla", "region-partition"):
                for rep in range(REPS[scale]):
                    background = () if policy == "alone" else (
                        WorkloadRequest(program(other), size="paper",
                                        start_delay_ms=0.3 * rep),)
                    out.append(RunRequest(
                        machine=machine, backend=backend,
                        policy="vanilla" if policy == "alone" else policy,
                        sysctl=regioning(backend, scale, consolidated=True).sysctl(),
                        attribute_tasks=attribute and get_backend(backend).attributes_tasks,
                        jobs=(_main_program(main, scale, backend, smoke_args, 0.2 * rep),),
                        background=background,
                        label={"machine": machine, "condition": policy, "rep": rep}))
        return out
    return matrix


def _reductions(extra: str, consolidated: bool) -> dict[str, str]:
    g = regioning("gem5", "smoke", consolidated)
    q = regioning("qemu", "smoke", consolidated)
    timing = (f"regioning and access-bit scans every {g.period_ms} ms on gem5 (paper scale "
              f"and the kernel: phases every 1000 ms, scans every 100 ms), q = {g.merge_us} "
              f"us, {g.warmup_s:g} s "
              f"warm-up so the first phase's regions are mapped before the ROI, which lies "
              f"between two phases and two scans (no regioning cost inside it); QEMU: "
              f"phases of {q.phase_ms} ms every {q.period_ms} ms, q = {q.merge_us} us, "
              f"{q.warmup_s:g} s warm-up")
    return {"smoke": "; ".join(p for p in (extra, timing, "2 repetitions") if p)}


# Each run's tables: one row per job and the region scheduler's events; the figures of
# several programs keep how each fared, Fig. 24 its requests.
ANALYSIS = Analysis(draw=analysis.draw, collect=analysis.collect, summary=analysis.summary,
                    parts=("", "events"))
# lee-fig24 keeps its programs too: the co-running sphinx's counters (its loss, claim L5).
MORE_PARTS = {"lee-fig17": ("events", "programs"),
              "lee-fig24": ("events", "responses", "programs"),
              "lee-fig25": ("events", "programs")}


def _experiment(name, title, matrix, metric, repetition, extra="",
                consolidated=False) -> Experiment:
    return Experiment(name=name, study="lee", kind="figure", title=title, matrix=matrix,
                      metric=metric, repetition=repetition,
                      analysis=ANALYSIS.with_parts(*MORE_PARTS[name]) if name in MORE_PARTS
                      else ANALYSIS, reductions=_reductions(extra, consolidated))


def _fig9_smoke() -> str:
    """Fig. 9's smoke reduction, with each machine's extra size (``region_sizes``)."""
    base = REGION_SIZES["smoke"]
    extra = "".join(
        f" ({m} also 2 x {region_sizes(m, 'smoke')[-1]}: its "
        f"{format_size(load_machine(m).llc.size)} last-level caches hold each smaller pair "
        f"whole)" for m in MACHINES if region_sizes(m, "smoke") != base)
    return (f"20 ms ROI, working sets up to 2 x {base[-1]}{extra}, access times "
            + ", ".join(f"2^{a.bit_length() - 1}" for a in ACCESS_TIMES["smoke"]))


FIG9_SMOKE = _fig9_smoke()
EXPERIMENTS = (
    _experiment("lee-fig9", "Two-region memlat, unification vs confinement, over working set "
                "and access time; micro-schedules per second", _fig9, "roi_accesses_per_sec",
                MEMLAT_REPETITION, FIG9_SMOKE),
    _experiment("lee-fig17", "Cache balancing: two large memlats, one small memlat and a "
                "SPEC-like benchmark, speed-up with balancing", _fig17, "task_ipc",
                BALANCE_REPETITION, "20 ms ROI"),
    _experiment("lee-fig18-23", "Cache loads over time, regions per cache, unification "
                "speed-ups and misses, micro-scheduling, merge and teardown counts for the "
                "SPEC CPU2006-like programs", _spec_unify, "task_ipc", SPEC_REPETITION,
                "20 ms ROI"),
    _experiment("lee-fig24", "Response-time distribution of a media server: alone, "
                "consolidated with the default scheduler, with region scheduling",
                # Beside sphinx, with its counters: the paper reports sphinx's loss (Sec. 5.5).
                _consolidated("mediaserver", "sphinx", ("--requests", "600"), attribute=True),
                "roi_p99_ms",
                CONSOLIDATED_REPETITION,
                "the requests arriving in the ROI; gem5: 2 KiB frames at 1250 requests/s "
                "after the warm-up, about 60 ms (paper: 64 KiB frames, 300 at 30/s); QEMU: "
                "600 requests at 200/s from the start (3 s, about twice QEMU's time to the "
                "first mapping)", consolidated=True),
    _experiment("lee-fig25", "Parallel ray tracer consolidated with omnetpp: elapsed and CPU "
                "time, cache misses", _consolidated("raytrace", "omnetpp", attribute=True),
                "roi_ms_per_row", CONSOLIDATED_REPETITION,
                "the rows rendered in the ROI; gem5: 600 x 256 pixels, 2 threads, the ROI the "
                "last 40 ms or so after the warm-up; QEMU: the smoke size (160 x 120, 2 "
                "samples, 2 threads) from the start, which may end before its regions are "
                "mapped", consolidated=True),
    _experiment("lee-overheads", "Cost of one micro-schedule (cycles) and the total overhead "
                "at about 700 micro-schedules per second", _overheads, "cycles_per_micro",
                MEMLAT_REPETITION, FIG9_SMOKE),
)
