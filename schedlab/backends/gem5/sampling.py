"""SMARTS-style sampled simulation of a multicore full-system region: the schedule.

Inside a region of interest (between ``m5 workbegin`` and ``m5 workend``) every core runs
as an Atomic core with the classic caches attached (functional warming: the caches see
every access and stay warm), and every ``period`` instructions all cores switch to the
detailed cores for ``warmup`` instructions of detailed warming (pipeline, queues, MSHRs)
and then ``measure`` measured instructions, and switch back. Wunderlich et al., "SMARTS:
accelerating microarchitecture simulation via rigorous statistical sampling" (ISCA 2003),
is the single-core original; configs/README.md ("Sampling") says when to use it.

**Instructions are counted over the whole machine**: a phase of N instructions ends when
the cores together have committed N since it began, whichever cores committed them. In an
OS-scheduling study tasks migrate and cores go idle: a count on one core would stop
sampling when that core idles (or when the measured task leaves it) and sample each core
at its own rate, while the machine's committed instructions are its progress wherever
the tasks run, and SMARTS's systematic sampling of one instruction stream carries over
with that stream. The windows are synchronous (gem5 switches the whole processor).

gem5 has no exit event on a machine-wide count, only per core ("a thread reached the max
instruction count", ExitEvent.MAX_INSTS, scheduled with a core's
``scheduleInstStopAnyThread``), and no way to cancel one. :class:`SamplingSchedule` splits
what remains of a phase among the cores (the distances sum to the remainder, so the first
core to reach its stop cannot carry the machine past the phase's end), in proportion to what
each core has committed so far in the phase (at a phase's start, in the whole previous
phase; an idle core gets the shortest stop), so a phase ends after a few rounds: short of
its length by less than a shortest stop per core, past it by what the cores commit in the
tick its last stop fired. Shares follow the phase's totals, not the last round's: after a
short round the cores' counts are a few instructions each, mostly noise on cores with a
low IPC, and shares taken from them keep the next round as short (on the 8-core Niagara,
thousands of rounds per window of 10 000 instructions). Stops it no
longer needs stay scheduled and fire later: it remembers every stop it scheduled, per core
object, and tells those apart from the ones it waits for.

This module runs inside gem5 (``configs/schedlab_gem5.py``): standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

# How many instructions short of its target a core may be when its stop fires. gem5 counts
# from its instruction-event queue's "now", which simple cores update before an
# instruction executes (O3 cores after it commits): a stop scheduled right after an
# instruction is one short of the count its core reports, and fires at the start of a
# macro-op's last micro-op, before that counts. With the stop taken as reached one early,
# its exit may come later and is passed over.
SLACK = 1
# The shortest stop scheduled: one that is reached only once its core has moved.
MIN_STOP = SLACK + 1

# The phases, and the cores ("side") each runs on.
FUNCTIONAL, WARMUP, MEASURE = "functional", "warmup", "measure"
SIDE = {FUNCTIONAL: "atomic", WARMUP: "detailed", MEASURE: "detailed"}

# Named schedules (period, warmup, measure in instructions of all cores). SMARTS measured
# 1000-instruction units after 2000 of detailed warming, thousands of them per benchmark;
# our regions are millions of instructions, so windows are longer (10 000 measured
# instructions keep a window's CPI from being one cache miss's noise) and rarer (a window
# costs a switch, a drain and detailed speed). smarts-default gives 10 windows per 10 M
# instructions of region; smarts-dense 10 per 2.5 M, for short regions.
PRESETS = {"smarts-default": (1_000_000, 20_000, 10_000),
           "smarts-dense": (250_000, 10_000, 10_000)}
# A region with fewer windows than this gives no usable confidence interval: the campaign
# layer refuses it (schedlab.runs).
MIN_WINDOWS = 10


@dataclass(frozen=True)
class SamplingPlan:
    """How a region is sampled, in instructions of all cores together.

    :param period: instructions from one measured window's start to the next one's
        (the sampling interval U); the Atomic phase between windows is what the windows
        leave of it.
    :param warmup: detailed instructions before each measured window (W), not measured.
    :param measure: measured instructions per window (D).
    """

    period: int
    warmup: int
    measure: int

    def __post_init__(self) -> None:
        if self.measure < 1 or self.warmup < 0:
            raise ValueError(f"needs measure >= 1 and warmup >= 0 instructions, not "
                             f"measure {self.measure} and warmup {self.warmup}")
        if self.period <= self.warmup + self.measure:
            raise ValueError(f"the period {self.period} must exceed warmup + measure "
                             f"({self.warmup} + {self.measure}): the Atomic phase between "
                             f"windows would be empty")

    @property
    def functional(self) -> int:
        """Atomic (functional-warming) instructions between two windows."""
        return self.period - self.warmup - self.measure

    def text(self) -> str:
        return f"{self.period},{self.warmup},{self.measure}"

    def to_dict(self) -> dict:
        return {"period": self.period, "warmup": self.warmup, "measure": self.measure,
                "unit": "instructions committed by all cores together"}


def parse_sampling(text: str) -> SamplingPlan:
    """``U,W,D`` (instructions; ``k`` and ``M`` suffixes allowed) or a preset's name;
    ValueError with a one-line message otherwise."""
    text = text.strip()
    if text in PRESETS:
        return SamplingPlan(*PRESETS[text])
    parts = text.split(",")
    if len(parts) != 3:
        raise ValueError(f"sampling {text!r}: give PERIOD,WARMUP,MEASURE in instructions "
                         f"(e.g. 1M,20k,10k) or a preset: {', '.join(PRESETS)}")
    try:
        return SamplingPlan(*(_count(p) for p in parts))
    except ValueError as e:
        raise ValueError(f"sampling {text!r}: {e}") from None


def _count(text: str) -> int:
    scale = {"k": 1_000, "M": 1_000_000}.get(text.strip()[-1:], 1)
    digits = text.strip()[:-1] if scale > 1 else text.strip()
    if not digits.replace("_", "").isdigit():
        raise ValueError(f"{text.strip()!r} is not a whole number of instructions")
    return int(digits.replace("_", "")) * scale


@dataclass(frozen=True)
class Step:
    """What the run script does after a stop it waited for: switch the cores (to
    "detailed" or "atomic", or None), mark the measured window ("begin", "end" or None),
    then schedule the schedule's next stops (:meth:`SamplingSchedule.stops`)."""

    switch: str | None = None
    window: str | None = None


class SamplingSchedule:
    """The phases of a sampled region, driven by the cores' committed instructions.

    Counts are each core's ``totalInsts()`` on the side running now (Atomic and detailed
    cores are different objects with counts of their own); the run script calls

    - :meth:`begin` at ``m5 workbegin`` (Atomic cores in), then :meth:`stops`;
    - :meth:`on_stop` at every instruction stop; a :class:`Step` says what to do, None
      that the stop was one no longer needed;
    - :meth:`stops` after every Step, with the counts of the cores then in, for the
      distances to schedule on them;
    - :meth:`end` at ``m5 workend``: the phase the region ended in.
    """

    def __init__(self, plan: SamplingPlan, cores: int):
        self.plan, self.cores = plan, cores
        self.phase: str | None = None
        self.budget = 0                   # instructions of the current phase
        self.done = 0                     # of them committed in finished rounds
        self.round_start: list[int] | None = None
        # What each core has committed in the current phase (in the previous phase until
        # this one has made progress): the shares of the next split.
        self.weights = [1] * cores
        self.phase_progress = [0] * cores
        # Every stop scheduled and not yet reached, per side and core: absolute counts.
        self.pending: dict[tuple[str, int], list[int]] = {}
        # The stops of the current round (side, core) -> count; one reached ends it.
        self.live: dict[tuple[str, int], int] = {}
        self.rounds = 0                   # rounds in all (each is one exit of gem5)
        self.side = "atomic"              # the cores in now

    # ----------------------------------------------------------------------- the phases
    def begin(self) -> None:
        """The region begins, on the Atomic cores: a functional phase."""
        self._enter(FUNCTIONAL)

    def end(self) -> str | None:
        """The region ends: the phase it ended in (a window cut short if not functional)."""
        phase, self.phase, self.live = self.phase, None, {}
        self.side = "atomic"              # the run script hands back to the Atomic cores
        return phase

    def stops(self, counts: list[int]) -> dict[int, int]:
        """The distances (instructions from now, per core) to schedule on the cores now in,
        whose counts are ``counts``: a new round of the current phase."""
        if self.phase is None:
            return {}
        side = self.side
        if self.round_start is None:      # the phase's first round
            self.round_start = list(counts)
        remaining = self.budget - self.done
        distances = self._split(remaining)
        self.live = {}
        for cpu, d in distances.items():
            target = counts[cpu] + d
            self.live[(side, cpu)] = target
            self.pending.setdefault((side, cpu), []).append(target)
        self.rounds += 1
        return distances

    def on_stop(self, counts: list[int]) -> Step | None:
        """A core reached an instruction stop (or a slice of simulated time ended: a stop
        whose exit gem5 swallowed, e.g. while draining for a switch, is found there);
        ``counts`` are the counts of the cores now in. None: no stop this round waits for
        was reached (an older round's stop, or a second exit at the same tick). A Step
        otherwise: the round ended, perhaps the phase too."""
        reached = self._forget(counts)
        if not any(self.live.get((self.side, cpu)) in targets
                   for cpu, targets in reached.items()):
            return None
        progress = [max(0, now - then) for now, then in zip(counts, self.round_start)]
        self.phase_progress = [a + b for a, b in zip(self.phase_progress, progress)]
        if any(self.phase_progress):
            self.weights = list(self.phase_progress)
        self.done += sum(progress)
        self.round_start = list(counts)
        # Too few instructions left to give every core a stop: no split can do better, so
        # the phase ends here, that many short at most.
        if self.budget - self.done >= self.cores * MIN_STOP:
            return Step()
        return self._next_phase()

    # ------------------------------------------------------------------------- helpers
    def _enter(self, phase: str) -> None:
        self.phase, self.side = phase, SIDE[phase]
        self.budget = {FUNCTIONAL: self.plan.functional, WARMUP: self.plan.warmup,
                       MEASURE: self.plan.measure}[phase]
        self.done, self.round_start, self.live = 0, None, {}
        self.phase_progress = [0] * self.cores

    def _next_phase(self) -> Step:
        if self.phase == FUNCTIONAL:
            if self.plan.warmup:
                self._enter(WARMUP)
                return Step(switch="detailed")
            self._enter(MEASURE)
            return Step(switch="detailed", window="begin")
        if self.phase == WARMUP:
            self._enter(MEASURE)
            return Step(window="begin")
        self._enter(FUNCTIONAL)
        return Step(switch="atomic", window="end")

    def _split(self, remaining: int) -> dict[int, int]:
        """``remaining`` instructions split among the cores in proportion to their share
        of the phase so far (every core at least MIN_STOP, so an idle core that wakes is
        seen).
        The sum is ``remaining`` (or MIN_STOP per core): the first core to reach its stop
        cannot have carried the machine past the phase's end by more than a few
        instructions."""
        total = sum(self.weights) or 1
        first = max(range(self.cores), key=lambda c: self.weights[c])
        out = {c: max(MIN_STOP, remaining * w // total) for c, w in enumerate(self.weights)
               if c != first}
        # The core with the largest share takes what the others' shares leave.
        out[first] = max(MIN_STOP, remaining - sum(out.values()))
        return dict(sorted(out.items()))

    def _forget(self, counts: list[int]) -> dict[int, list[int]]:
        """Drop the stops of the cores now in that their counts have reached; return them."""
        reached: dict[int, list[int]] = {}
        for (side, cpu), targets in self.pending.items():
            if side != self.side:
                continue
            hit = [t for t in targets if t <= counts[cpu] + SLACK]
            if hit:
                reached[cpu] = hit
                targets[:] = [t for t in targets if t > counts[cpu] + SLACK]
        return reached
