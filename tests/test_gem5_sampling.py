"""The sampling schedule (schedlab.backends.gem5.sampling), without gem5.

A stand-in machine keeps what gem5 keeps: per core *object* (Atomic and detailed cores are
different objects) a committed-instruction count and the instruction stops scheduled on it,
which fire when the count reaches them and cannot be cancelled; a core commits a few
instructions per tick, so the exit comes after the tick in which its stop fired. Simple
cores count a stop from one instruction before the count they report (``lag``), as gem5's
Atomic and Timing cores do. The schedule is driven through every phase and checked: the
order of switches and windows, the instructions of each phase over all cores, how many
rounds a phase takes, and that stops no longer waited for are passed over.
"""

from __future__ import annotations

import random
import re

import pytest

from schedlab.backends.gem5.sampling import (FUNCTIONAL, MEASURE, MIN_STOP, PRESETS, SLACK,
                                             WARMUP,
                                             SamplingPlan, SamplingSchedule, Step,
                                             parse_sampling)


class Machine:
    """Cores on two sides, each core object with its own count and stops."""

    def __init__(self, cores: int, lag: dict | None = None):
        self.cores, self.side = cores, "atomic"
        self.count = {s: [0] * cores for s in ("atomic", "detailed")}
        self.stops = {s: [[] for _ in range(cores)] for s in ("atomic", "detailed")}
        # Simple cores' stops count from one instruction back (gem5's event queue lags).
        self.lag = lag if lag is not None else {"atomic": 1, "detailed": 0}
        self.total = 0     # instructions of every core object: the machine's progress

    def now(self) -> list[int]:
        return list(self.count[self.side])

    def schedule(self, distances: dict) -> None:
        for cpu, d in distances.items():
            assert d >= 1
            base = max(0, self.count[self.side][cpu] - self.lag[self.side])
            self.stops[self.side][cpu].append(base + d)

    def run(self, rates, max_ticks: int = 10 ** 6) -> int:
        """Tick until a stop fires; each core commits ``rates[cpu]`` instructions a tick
        (``rates`` a list, or a function giving each tick's), all of them even after its
        stop fired (the exit comes after the tick). Returns the ticks run."""
        for tick in range(1, max_ticks + 1):
            fired = False
            for cpu, rate in enumerate(rates() if callable(rates) else rates):
                for _ in range(rate):
                    self.count[self.side][cpu] += 1
                    self.total += 1
                    stops = self.stops[self.side][cpu]
                    if any(t <= self.count[self.side][cpu] for t in stops):
                        stops[:] = [t for t in stops if t > self.count[self.side][cpu]]
                        fired = True
            if fired:
                return tick
        raise AssertionError("no stop fired")


def drive(plan: SamplingPlan, machine: Machine, rates, exits: int) -> list:
    """Run the schedule for ``exits`` stop exits; return what happened, in order:
    ("stale",), ("round",), ("switch", side), ("begin",) / ("end",), each switch and window
    mark with the machine's total instructions then."""
    schedule = SamplingSchedule(plan, machine.cores)
    schedule.begin()
    log = [("phase", FUNCTIONAL, machine.total)]
    machine.schedule(schedule.stops(machine.now()))
    for i in range(exits):
        machine.run(rates(i) if callable(rates) else rates)
        step = schedule.on_stop(machine.now())
        if step is None:
            log.append(("stale",))
            continue
        if step == Step():
            log.append(("round",))
        if step.switch:
            machine.side = step.switch
        if step.switch or step.window:
            log.append(("phase", schedule.phase, machine.total))
        machine.schedule(schedule.stops(machine.now()))
    return log


def phases(log: list) -> list[tuple[str, int]]:
    """(phase, instructions it took over all cores) for every finished phase."""
    marks = [e for e in log if e[0] == "phase"]
    return [(a[1], b[2] - a[2]) for a, b in zip(marks, marks[1:])]


PLAN = SamplingPlan(period=100_000, warmup=5_000, measure=2_000)


def test_one_busy_core_cycles_through_the_phases_in_order():
    # Core 0 busy, the others idle: the split gives core 0 nearly everything.
    m = Machine(4)
    log = drive(PLAN, m, [7, 0, 0, 0], exits=60)
    done = phases(log)
    kinds = [p for p, _ in done]
    assert kinds[:6] == [FUNCTIONAL, WARMUP, MEASURE] * 2
    budget = {FUNCTIONAL: PLAN.functional, WARMUP: PLAN.warmup, MEASURE: PLAN.measure}
    for phase, insts in done:
        # Short of the budget by less than a shortest stop per core, past it by at most
        # one tick of the busy core and the slack.
        assert budget[phase] - 4 * MIN_STOP < insts <= budget[phase] + 7 + SLACK, (phase, insts)
    # A period is period instructions of the machine (give or take those ticks).
    periods = [sum(n for _, n in done[i:i + 3]) for i in range(0, len(done) - 2, 3)]
    assert all(abs(p - PLAN.period) <= 3 * 8 for p in periods)


def test_the_first_phase_splits_evenly_then_follows_the_busy_core():
    s = SamplingSchedule(PLAN, 4)
    s.begin()
    first = s.stops([0, 0, 0, 0])
    assert first == {0: PLAN.functional // 4, 1: PLAN.functional // 4,
                     2: PLAN.functional // 4, 3: PLAN.functional // 4}
    # Core 2 reached its stop alone: the next round gives the idle cores the shortest
    # stop, core 1 its share (3 of the round's instructions) and core 2 the rest.
    q = PLAN.functional // 4
    assert s.on_stop([0, 3, q, 0]) == Step()
    second = s.stops([0, 3, q, 0])
    remaining = PLAN.functional - q - 3
    assert second[0] == second[3] == MIN_STOP and second[1] == remaining * 3 // (q + 3)
    assert second[2] == remaining - second[1] - 2 * MIN_STOP
    assert sum(second.values()) == remaining


def test_rounds_per_phase_are_few_whichever_core_is_busy():
    m = Machine(8)
    schedule_log = drive(PLAN, m, [0, 0, 0, 0, 0, 3, 0, 0], exits=40)
    rounds = sum(1 for e in schedule_log if e == ("round",))
    phases_done = len(phases(schedule_log))
    # The first functional phase splits 8 ways: core 5 reaches its eighth, and the next
    # round gives it the rest; after that every phase ends at its first stop.
    assert phases_done >= 12
    assert rounds == 1
    assert ("stale",) not in schedule_log


@pytest.mark.parametrize("ipcs", [[0.1] * 8, [0.5] + [0.01] * 7, [0.2] * 2 + [0.001] * 6])
def test_rounds_stay_few_when_low_ipc_cores_commit_in_bursts(ipcs):
    # Cores that commit an instruction in a tick with probability ipc (stalled on misses
    # most ticks), as detailed cores do on Niagara: over a short round their counts are
    # noise. Shares from the last round alone kept every round a few instructions long
    # (thousands of rounds a phase); the phase's totals converge in a few rounds.
    m = Machine(len(ipcs))
    generator = random.Random(1)
    plan = SamplingPlan(period=50_000, warmup=4_000, measure=4_000)
    log = drive(plan, m, lambda i: lambda: [int(generator.random() < p) for p in ipcs],
                exits=600)
    done = phases(log)
    rounds = sum(1 for e in log if e == ("round",))
    assert len(done) >= 9
    assert rounds / len(done) < 30, (rounds, len(done))
    budget = {FUNCTIONAL: plan.functional, WARMUP: plan.warmup, MEASURE: plan.measure}
    assert all(budget[p] - 8 * MIN_STOP < n <= budget[p] + 8 + SLACK for p, n in done)


def test_a_migrating_task_does_not_stall_the_schedule():
    # The busy task moves to another core every 25 exits: the round after a move gave
    # the new core the shortest stop, which it reaches at once.
    m = Machine(4)
    log = drive(PLAN, m, lambda i: [0] * (i // 25 % 4) + [5] + [0] * (3 - i // 25 % 4),
                exits=100)
    done = phases(log)
    assert len(done) >= 15
    budget = {FUNCTIONAL: PLAN.functional, WARMUP: PLAN.warmup, MEASURE: PLAN.measure}
    assert all(budget[p] - 4 * MIN_STOP < n <= budget[p] + 5 + SLACK for p, n in done)


def test_all_cores_busy_share_the_phase():
    m = Machine(4)
    log = drive(PLAN, m, [2, 3, 5, 7], exits=80)
    done = phases(log)
    budget = {FUNCTIONAL: PLAN.functional, WARMUP: PLAN.warmup, MEASURE: PLAN.measure}
    assert len(done) >= 9
    # Overshoot at most one tick of every core.
    assert all(budget[p] - 4 * MIN_STOP < n <= budget[p] + 17 + SLACK for p, n in done)


def test_a_stop_taken_one_early_is_passed_over_when_its_exit_comes():
    s = SamplingSchedule(SamplingPlan(1000, 100, 50), 2)
    s.begin()
    assert s.stops([0, 0]) == {0: 425, 1: 425}
    # Core 0 is one short of 425 at a slice's end: taken as reached (SLACK), a new round.
    assert s.on_stop([424, 0]) == Step()
    assert s.stops([424, 0]) == {0: 424, 1: MIN_STOP}
    # The stop at 425 fires after all: nothing this round waits for is reached.
    assert s.on_stop([425, 0]) is None
    # Core 1 moves: this round's stop at 2 is reached (a new round); its first round's
    # (425) stays scheduled.
    assert s.on_stop([430, 10]) == Step()
    assert s.pending[("atomic", 1)] == [425]


def test_stops_of_earlier_rounds_and_of_the_other_side():
    s = SamplingSchedule(SamplingPlan(1000, 100, 50), 2)
    s.begin()
    s.stops([0, 0])                               # 425 and 425
    assert s.on_stop([425, 300]) == Step()        # core 0's
    # 125 left, split 425 : 300 (core 1 gets 125 * 300 // 725 = 51, core 0 the rest).
    assert s.stops([425, 300]) == {0: 74, 1: 51}
    assert s.on_stop([499, 330]) == Step()        # core 0's again (425 + 74)
    # 21 left, split by the phase so far, 499 : 330 (core 1 gets 21 * 330 // 829 = 8).
    assert s.stops([499, 330]) == {0: 13, 1: 8}
    # Core 1 jumps past this round's stop (338) and its first round's (425): both go.
    assert s.on_stop([500, 426]) == Step(switch="detailed")
    assert s.pending[("atomic", 0)] == [512]      # left behind; gem5 cannot cancel it
    assert s.pending[("atomic", 1)] == []
    # On the detailed cores, split by the whole functional phase, 500 : 426.
    assert s.stops([0, 0]) == {0: 54, 1: 46}
    assert s.on_stop([0, 0]) is None
    assert s.on_stop([53, 20]) == Step()          # core 0's 54, one early


def test_switches_and_windows_in_order_on_each_sides_own_counts():
    plan = SamplingPlan(1000, 100, 50)
    s = SamplingSchedule(plan, 1)
    s.begin()
    assert s.stops([0]) == {0: 850}
    assert s.on_stop([850]) == Step(switch="detailed")
    assert s.phase == WARMUP and s.side == "detailed"
    assert s.stops([0]) == {0: 100}               # the detailed core's own count
    assert s.on_stop([100]) == Step(window="begin")
    assert s.phase == MEASURE
    assert s.stops([100]) == {0: 50}
    assert s.on_stop([150]) == Step(switch="atomic", window="end")
    assert s.phase == FUNCTIONAL and s.side == "atomic"
    assert s.stops([851]) == {0: 850}


def test_no_warmup_goes_straight_to_the_measured_window():
    s = SamplingSchedule(SamplingPlan(1000, 0, 50), 1)
    s.begin()
    s.stops([0])
    assert s.on_stop([950]) == Step(switch="detailed", window="begin")
    assert s.phase == MEASURE


def test_lagging_stops_are_reached_one_early():
    # gem5's simple cores fire a stop one instruction before the count they report
    # reaches it; the exit can come with the core still one short (a macro-op's last
    # micro-op not yet counted).
    s = SamplingSchedule(SamplingPlan(1000, 100, 50), 1)
    s.begin()
    s.stops([10])                                 # target 860
    assert s.on_stop([859]) == Step(switch="detailed")
    s2 = SamplingSchedule(SamplingPlan(1000, 100, 50), 1)
    s2.begin()
    s2.stops([10])
    assert s2.on_stop([858]) is None              # two short: not this stop


@pytest.mark.parametrize("lag", [0, 1])
def test_the_stand_in_machine_with_and_without_lag(lag):
    m = Machine(2, lag={"atomic": lag, "detailed": lag})
    log = drive(SamplingPlan(10_000, 500, 500), m, [3, 1], exits=60)
    assert len(phases(log)) >= 6


def test_region_end_reports_the_phase_and_goes_back_to_atomic():
    s = SamplingSchedule(SamplingPlan(1000, 100, 50), 1)
    s.begin()
    s.stops([0])
    s.on_stop([850])
    assert s.end() == WARMUP and s.side == "atomic" and s.phase is None
    assert s.stops([0]) == {}
    # A stop left on the detailed core fires after the region: nothing to do.
    assert s.on_stop([5000]) is None


def test_parse_sampling():
    assert parse_sampling("1000000,20000,10000") == SamplingPlan(1_000_000, 20_000, 10_000)
    assert parse_sampling(" 1M, 20k ,10_000 ") == SamplingPlan(1_000_000, 20_000, 10_000)
    assert parse_sampling("smarts-default") == SamplingPlan(*PRESETS["smarts-default"])
    assert parse_sampling("250k,0,10k").functional == 240_000
    assert SamplingPlan(1000, 100, 50).text() == "1000,100,50"


@pytest.mark.parametrize("text,message", [
    ("1000,100", "give PERIOD,WARMUP,MEASURE"),
    ("smarts", "a preset: smarts-default"),
    ("1000,100,x", "'x' is not a whole number"),
    ("1000,-1,10", "'-1' is not a whole number"),
    ("1000,100,0", "measure >= 1"),
    ("1000,600,400", "must exceed warmup + measure"),
])
def test_parse_sampling_errors(text, message):
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        parse_sampling(text)
    assert "\n" not in str(e.value) and text.strip() in str(e.value)
