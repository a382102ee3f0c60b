"""Which program runs for each benchmark the papers name, and how long it warms up.

The figures and the claims keep the papers' benchmark names (the runs' label says
``benchmark = "gcc"``); the run itself executes the real program of that family from
Debian's packages where one runs here (workloads/README.md, "Real programs"), else our
stand-in of the same algorithmic family. GAP (254.gap) starts from the workspace its
package's installation saves, as Debian's gap does (0.74 G instructions; 3.8 G to load its
library without one). POV-Ray 3.7 (453.povray) waits on timers as it starts: its threads poll
each other's queues with 50 ms timed waits, so its render begins about 0.5 s after its exec
whatever the CPU does, which an instruction count does not see; its workload declares that
time (``[program] startup_s``) and the warm-up covers it.
"""

from __future__ import annotations

from schedlab.guest import characterise, workloads
from schedlab.machine import load_machine

# benchmark (the papers' name) -> workload (workloads/<name>)
REAL_PROGRAMS = {
    "gap": "debian-gap",
    "gcc": "debian-cc1",
    "gzip": "debian-gzip",
    "parser": "debian-link-parser",
    "sphinx": "debian-pocketsphinx",
    "h264ref": "debian-x265",
    "povray": "debian-povray",
}
# Instructions of start-up per simulated cycle on the Atomic cores that run every warm-up
# (gem5's AtomicSimpleCPU takes one cycle per instruction), with a margin of half again for
# what a program's start-up costs beyond its own instructions (exec, page faults, the
# loader's relocations in the kernel).
STARTUP_MARGIN = 1.5


def program(benchmark: str) -> str:
    """The workload that runs for a benchmark of the papers."""
    return REAL_PROGRAMS.get(benchmark, benchmark)


def warmup_s(benchmark: str, machine: str, base_s: float, cpu_share: float = 1.0) -> float:
    """The warm-up before a benchmark's region of interest: the study's own, or longer where
    the real program's start-up (its measured instructions, at one per cycle, with the
    margin; or the guest seconds it waits on timers as it starts) would otherwise run into
    the region. ``cpu_share``: the part of its CPU the program gets during the warm-up
    (study 1's experiment A: a half, its quanta alternate with a base vector's; measured: a
    parser run warmed up for the whole CPU had executed two thirds of its start-up when its
    region began)."""
    name = program(benchmark)
    spec = workloads.get(name).program if name != benchmark else None
    waits = spec.startup_s if spec else 0.0
    startup = characterise.startup_instructions(name)
    needed = (STARTUP_MARGIN * startup / (load_machine(machine).clock_hz * cpu_share)
              if startup is not None else 0.0)
    return max(base_s, round(needed, 3), waits)


# The table's geometry: study 1's Clovertown E5320 (32 KB L1s, one 4 MB L2 per core pair).
TABLE_MACHINE = "clovertown-e5320"


def comparison_table(machine: str = TABLE_MACHINE) -> str:
    """Markdown: each real program beside the stand-in it replaces, from the stored
    characterisation (cachegrind at smoke size on ``machine``'s caches)."""
    chars = characterise.load_characterisation()
    head = ("| benchmark | runs as | start-up instr. | smoke instr. | I1 MPKI "
            "| D1 misses / access | LL MPKI |\n|---|---|---|---|---|---|---|")
    rows = [head]
    for benchmark, real in REAL_PROGRAMS.items():
        for workload in (real, benchmark):
            c = chars.get(workload, {}).get(machine)
            if c is None:
                rows.append(f"| {benchmark} | `{workload}` | | not characterised | | | |")
                continue
            startup = characterise.startup_instructions(workload)
            rows.append(
                f"| {benchmark} | `{workload}` "
                f"| {f'{startup / 1e6:.3g} M' if startup else '-'} "
                f"| {c['instructions'] / 1e6:.0f} M | {1000 * c['i1_miss_rate']:.3f} "
                f"| {100 * c['d1_miss_rate']:.2f} % | {c['ll_mpki']:.2f} |")
    return "\n".join(rows)
