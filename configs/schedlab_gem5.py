"""gem5 run script of schedlab: boot a machine to a checkpoint, or restore and run.

Run by gem5 (never by the host Python); ``schedlab/backends/gem5/process.py`` builds the
command line, which names one document of options
(:class:`schedlab.backends.gem5.options.Gem5Options`, JSON, written by the host):

    gem5.fast --outdir OUT configs/schedlab_gem5.py --options OUT/options.json

boot: Atomic cores (or KVM) boot the guest; the in-guest runner issues ``m5 checkpoint`` when
ready; the checkpoint is written to ``checkpoint_dir`` and gem5 exits 0.
run:  the checkpoint is restored into cores of ``cpu`` (same core count and memory size: the
plan is the same) or, with ``fast_forward``, into Atomic cores that hand over to ``cpu`` cores
at each ``m5 workbegin`` and take back at each ``m5 workend``; the guest reads the run's
payload (specification, workloads, programs) with ``m5 readfile`` and writes its results
into the output directory with ``m5 writefile``; ``m5 workbegin``/``workend`` reset and dump the
statistics around the region of interest; ``m5 exit`` ends the run with status 0.

``main`` builds the board from the plan (``plan_board.build_board``) and instantiates it
(restoring the checkpoint on a run); :class:`RunEvents` then simulates, with one handler per
exit event (the table is in configs/README.md).

Progress lines (``schedlab-progress {json}``: simulated seconds, instructions so far, host
seconds, instructions per host second) and events (``schedlab-event {json}``) go to stdout
for the host to parse. Exit status: 0 done, 2 the guest ended otherwise (kernel panic,
unexpected exit), 3 a tick or host-time limit was reached.
"""

import argparse
import atexit
import json
import sys
import time
from pathlib import Path

# The plan is pure Python shared with the host; import it from the repository.
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import m5  # noqa: E402
from m5.objects import Root  # noqa: E402
from _m5.core import seedRandom  # noqa: E402

from gem5.simulate.exit_event import ExitEvent  # noqa: E402

from schedlab.backends.gem5.attribution import TaskAttribution, by_pid  # noqa: E402
from schedlab.backends.gem5.options import Gem5Options  # noqa: E402
from schedlab.backends.gem5.plan import BoardPlan, plan_from_dict  # noqa: E402
from schedlab.backends.gem5.sampling import (MEASURE, WARMUP, SamplingSchedule,  # noqa: E402
                                             parse_sampling)
from plan_board import build_board  # noqa: E402


def emit(kind: str, **data) -> None:
    print(f"schedlab-{kind} {json.dumps(data, sort_keys=True)}", flush=True)


def parse_args() -> Gem5Options:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--options", type=Path, required=True,
                   help="the run's options (Gem5Options as JSON, written by the host)")
    options = Gem5Options.read(p.parse_args().options)
    problems = options.problems()
    if problems:
        p.error("; ".join(problems))
    return options


def console_panicked(outdir: Path) -> str | None:
    """The kernel's panic line if the guest console shows one (gem5 would run on forever:
    an X86 Linux guest that panics just spins)."""
    try:
        with open(outdir / "board.pc.com_1.device", "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 8192))
            tail = f.read().decode(errors="replace")
    except OSError:
        return None
    for line in tail.splitlines():
        if "Kernel panic - not syncing" in line:
            return line.strip()
    return None


# Which of a cache's requests are loads and which stores. At the L1 D-cache: the core's
# own reads (plain and locked) and writes. At the last level: what an L1 D-cache sends on a
# miss (a load misses as ReadSharedReq or ReadCleanReq; a store as ReadExReq, or UpgradeReq
# when the line is present but shared), counted for this CPU's data-side requestor.
L1D_LOADS, L1D_STORES = ("ReadReq", "LockedRMWReadReq"), ("WriteReq", "LockedRMWWriteReq")
LLC_LOADS, LLC_STORES = ("ReadSharedReq", "ReadCleanReq"), ("ReadExReq", "UpgradeReq")


class CoreCounters:
    """Cumulative counters of one CPU, read at every context switch the guest reports:
    cycles, instructions, misses of its L1s and of its share of the last-level cache
    instance (that cache's per-requestor entries), and the L1 D-cache's and the last
    level's load and store accesses and misses.

    Each statistic is resolved by name once per core object (a CPU's Atomic and detailed
    cores are different objects with different requestor names) and read live afterwards:
    at thousands of switches per simulated second (the mixer of study 2) the name lookups
    would otherwise be most of the cost of a switch."""

    def __init__(self, board, plan: BoardPlan):
        self.board, self.plan = board, plan
        self.readers: dict[str, list] = {}

    def read(self, cpu: int) -> dict:
        core = self.board.get_processor().get_cores()[cpu].get_simobject()
        key = core.path()
        if key not in self.readers:
            self.readers[key] = self._readers(core, cpu)
        out = {"insts": float(core.totalInsts())}
        for label, read in self.readers[key]:
            out[label] = read()
        return out

    def _readers(self, core, cpu: int) -> list:
        h = self.board.get_cache_hierarchy()
        l1d = getattr(h, self.plan.l1_of(cpu, "data").name).getCCObject()
        l1i = getattr(h, self.plan.l1_of(cpu, "instruction").name).getCCObject()
        out = [("cycles", _total(core.getCCObject().resolveStat("numCycles"))),
               ("l1d_misses", _total(l1d.resolveStat("demandMisses"))),
               ("l1i_misses", _total(l1i.resolveStat("demandMisses")))]
        for label, cmds, stat in (("l1d_load", L1D_LOADS, "accesses"),
                                  ("l1d_load", L1D_LOADS, "misses"),
                                  ("l1d_store", L1D_STORES, "accesses"),
                                  ("l1d_store", L1D_STORES, "misses")):
            out.append((f"{label}_{stat}", _sum_of(
                [_total(i) for i in _resolve_all(l1d, cmds, stat)])))
        llc = next(c for c in self.plan.caches if c.cache == self.plan.llc and cpu in c.cores)
        if llc.level > 1:
            cc = getattr(h, llc.name).getCCObject()
            # Requestors are named from below the board: "processor.detailed0.core.data".
            mine = core.path().partition(".")[2] + "."
            out.append(("llc_misses", _requestor_sum(cc.resolveStat("demandMisses"), mine)))
            for label, cmds in (("llc_load", LLC_LOADS), ("llc_store", LLC_STORES)):
                for stat in ("accesses", "misses"):
                    out.append((f"{label}_{stat}", _sum_of(
                        [_requestor_sum(i, mine + "data")
                         for i in _resolve_all(cc, cmds, stat)])))
        return out


def _resolve_all(cc, commands, stat: str) -> list:
    """The ``<command>.<stat>`` statistics a cache has (it has none for a command that
    its protocol never sees)."""
    infos = (cc.resolveStat(f"{c}.{stat}") for c in commands)
    return [i for i in infos if i is not None]


def _total(info):
    """A reader of a statistic's value (scalar) or total (vector, formula)."""
    if getattr(info, "total", None) is not None:
        return lambda: float(info.total)
    return lambda: float(info.value)


def _values(info) -> list:
    # A formula (hits + misses per requestor): its per-requestor values are its result,
    # not its (empty) value.
    values = getattr(info, "result", None)
    return list(values() if callable(values) else values or info.value)


def _requestor_sum(info, prefix: str):
    """A reader of the sum of a per-requestor statistic's entries whose requestor names
    start with ``prefix``; which entries those are is worked out once."""
    picked = [i for i, n in enumerate(info.subnames) if str(n).startswith(prefix)]
    return lambda: float(sum(_values(info)[i] for i in picked))


def _sum_of(readers: list):
    return lambda: float(sum(r() for r in readers))


def total_insts(board) -> int:
    """Instructions committed so far by every core, switched in or out (never decreases)."""
    return sum(int(core.get_simobject().totalInsts()) for core in board.get_processor().all_cores())


class RunEvents:
    """One handler per exit event of a boot or a run, as gem5's
    ``Simulator(on_exit_event=...)`` has, over our own loop: the simulation runs in slices so
    that progress is reported, every exit returns to :meth:`simulate`, which hands it to the
    handler of its :class:`ExitEvent` (:meth:`handlers`). A handler returns None to go on
    simulating, or the script's exit status. (gem5's ``Simulator`` would instantiate inside
    its run loop, where the ``instantiated`` event cannot be timed, and raises on an exit
    cause it does not know, where we report ``abnormal``.)"""

    def __init__(self, args: Gem5Options, plan: BoardPlan, board, cpu: str,
                 fast_forward: bool, outdir: Path):
        self.args, self.plan, self.board = args, plan, board
        self.cpu, self.fast_forward, self.outdir = cpu, fast_forward, outdir
        self.attribution = TaskAttribution() if args.settings.attribute_tasks else None
        self.counters = CoreCounters(board, plan)
        self.cpus = list(range(plan.num_cores))
        self.regions = []  # per-task totals of each region of interest, in order
        # What attribution costs in the current region: the context-switch exits handled
        # and the host seconds spent in their handler (study 2 switches thousands of times
        # per simulated second; bench/bench_attribution.py weighs this against the region).
        self.switch_exits, self.switch_handler_s = 0, 0.0
        self.start_host = time.time()
        self.start_tick = m5.curTick()
        self.last_host, self.last_insts = self.start_host, total_insts(board)
        # The slice adapts to the host rate so that a progress line appears about every
        # --progress-seconds; 1 ms simulated to start with.
        self.slice_ticks = int(1e9)
        self.slice_end: int | None = None      # the tick the current slice runs to
        self.limit_tick = (self.start_tick + int(args.max_seconds * 1e12)
                           if args.max_seconds > 0 else None)
        self.region_start_tick: int | None = None   # inside a region of interest
        # Of the exit being handled: host time when the slice began and when it ended, tick.
        self.slice_started = self.now = self.start_host
        self.tick = self.start_tick
        # --sampling: each region's schedule, what it measured (sampling.json), and with
        # --attribute-tasks a second attribution that counts inside measured windows only.
        self.sampling = parse_sampling(args.settings.sampling) if args.settings.sampling else None
        self.sampler: SamplingSchedule | None = None
        self.sampled: list[dict] = []
        self.window: dict | None = None
        self.window_tasks = (TaskAttribution() if self.sampling and args.settings.attribute_tasks
                             else None)

    def handlers(self) -> dict:
        return {
            ExitEvent.MAX_TICK: self.on_slice_end,
            ExitEvent.CHECKPOINT: self.on_checkpoint,
            ExitEvent.FAIL: self.on_context_switch,
            ExitEvent.SWITCHCPU: self.on_caches_on,
            ExitEvent.WORKBEGIN: self.on_workbegin,
            ExitEvent.WORKEND: self.on_workend,
            ExitEvent.MAX_INSTS: self.on_inst_stop,
            ExitEvent.EXIT: self.on_exit,
        }

    def simulate(self) -> int:
        """Simulate until a handler returns the exit status."""
        handlers = self.handlers()
        while True:
            if self.slice_end is None:
                # A slice runs to its end tick across the exits inside it: with task
                # attribution the guest exits at every context switch, more often than a
                # slice lasts, and a slice restarted at each exit would never end (no
                # progress line, no host-time limit).
                self.slice_end = m5.curTick() + self.slice_ticks
                if self.limit_tick is not None:
                    self.slice_end = min(self.slice_end, self.limit_tick)
                self.slice_started = time.time()
            ev = m5.simulate(max(1, self.slice_end - m5.curTick()))
            self.now, self.tick = time.time(), m5.curTick()
            try:
                event = ExitEvent.translate_exit_status(ev.getCause())
            except NotImplementedError:
                event = None
            if event == ExitEvent.MAX_TICK:
                self.slice_end = None
            status = handlers.get(event, self.on_unexpected)(ev)
            if status is not None:
                return status

    def _insts_host(self, digits: int, since_exit: bool = True) -> dict:
        """insts and host_s (host seconds since the run began) for an event line."""
        now = self.now if since_exit else time.time()
        return {"insts": total_insts(self.board), "host_s": round(now - self.start_host, digits)}

    # ------------------------------------------------------------------------- handlers
    def on_slice_end(self, ev) -> int | None:
        """A slice ended: adapt the next one, report progress, stop at a limit or when the
        guest console shows a kernel panic (an X86 Linux guest that panics just spins)."""
        spent = max(1e-3, self.now - self.slice_started)
        # At most four times longer than the last: a slice lasting a fraction of
        # --progress-seconds says little about the next one's speed.
        self.slice_ticks = max(int(1e6), min(int(self.slice_ticks * self.args.progress_seconds
                                                 / spent), 4 * self.slice_ticks, int(1e12)))
        if self.now - self.last_host >= self.args.progress_seconds * 0.8:
            panic = console_panicked(self.outdir)
            if panic:
                emit("event", event="abnormal", cause=f"guest: {panic}", tick=self.tick)
                return 2
            insts = total_insts(self.board)
            emit("progress", sim_s=round(self.tick / 1e12, 6), tick=self.tick, insts=insts,
                 host_s=round(self.now - self.start_host, 1),
                 ips=round((insts - self.last_insts) / max(1e-3, self.now - self.last_host)))
            self.last_host, self.last_insts = self.now, insts
        if self.sampler is not None:
            self._advance_sampling(stop=False)
        if self.limit_tick is not None and self.tick >= self.limit_tick:
            emit("event", event="limit", what="max-seconds", tick=self.tick)
            return 3
        region_limit = self.args.settings.max_region_seconds
        if (region_limit and self.region_start_tick is not None
                and self.tick - self.region_start_tick > region_limit * 1e12):
            lasted = (self.tick - self.region_start_tick) / 1e12
            emit("event", event="limit", what="max-region-seconds", tick=self.tick,
                 why=f"a region of interest lasted {lasted:.3f} s simulated, more than the "
                     f"{region_limit:g} s its durations allow: a workload "
                     f"was not stopped (see the guest console)")
            return 3
        if self.args.max_host_seconds and self.now - self.start_host > self.args.max_host_seconds:
            emit("event", event="limit", what="max-host-seconds", tick=self.tick)
            return 3
        return None

    def on_checkpoint(self, ev) -> int | None:
        """The runner's ``m5 checkpoint``: a boot writes the checkpoint and ends; a run
        (restored from one already) goes on."""
        if self.args.mode != "boot":
            emit("event", event="checkpoint-ignored", tick=self.tick)
            return None
        self.args.checkpoint_dir.mkdir(parents=True, exist_ok=True)
        m5.checkpoint(str(self.args.checkpoint_dir))
        emit("event", event="checkpoint", tick=self.tick, **self._insts_host(1, False),
             dir=str(self.args.checkpoint_dir))
        return 0

    def on_context_switch(self, ev) -> int | None:
        """``m5_fail(0, prev_pid << 8 | cpu)``, which the guest kernel executes at every
        context switch (--attribute-tasks): charge that CPU's counters since its previous
        switch to the task it switched away from. Without --attribute-tasks an m5 fail is
        what its name says."""
        if self.attribution is None:
            return self.on_unexpected(ev)
        started = time.perf_counter()
        pid, cpu = TaskAttribution.decode(ev.getCode())
        if cpu in self.cpus:
            counters = self.counters.read(cpu)
            self.attribution.switch(cpu, pid, counters)
            if self.window_tasks is not None:
                self.window_tasks.switch(cpu, pid, counters)
        self.switch_exits += 1
        self.switch_handler_s += time.perf_counter() - started
        return None

    def on_caches_on(self, ev) -> int | None:
        """The launcher's ``m5 switchcpu`` (--caches-on-us), some time before a region:
        the caches, bypassed so far, warm from here on (NonCaching cores hand over to
        Atomic ones). Without --bypass-caches, or with the caches on already, nothing to
        do."""
        if self.fast_forward and self.board.get_processor().warm_caches():
            emit("event", event="switched", tick=m5.curTick(), cpu="atomic",
                 **self._insts_host(3, False))
        return None

    def on_workbegin(self, ev) -> int | None:
        """A region of interest begins: switch the detailed cores in (fast-forward), reset
        the statistics, restart every CPU's task attribution from its current counters.
        With --sampling the Atomic cores with the caches stay in (or come in) and the
        region's schedule starts."""
        if self.fast_forward and self.sampling is not None:
            self.on_caches_on(ev)
        switched = (self.fast_forward and self.sampling is None
                    and self.board.get_processor().switch_to_detailed())
        if switched:
            emit("event", event="switched", tick=m5.curTick(), cpu=self.cpu,
                 **self._insts_host(3, False))
            self._restart_slice()
        # After a switch the region starts now, even if the guest reset the statistics
        # itself (on the Atomic cores) just before.
        if switched or self.args.settings.workitem_stats:
            m5.stats.reset()
        if self.attribution is not None:
            # Whoever reset the statistics (we, or the guest just before), every CPU
            # starts this region from its current counters.
            self.attribution.clear()
            self._rebase_attribution()
        self.switch_exits, self.switch_handler_s = 0, 0.0
        if self.sampling is not None:
            self._begin_sampling()
        emit("event", event="workbegin", tick=self.tick, **self._insts_host(3))
        self.region_start_tick = self.tick
        return None

    def on_workend(self, ev) -> int | None:
        """A region of interest ends: dump the statistics, close the region's task
        attribution, hand back to the fast-forward cores."""
        if self.args.settings.workitem_stats:
            m5.stats.dump()
        self._write_attribution(closing_region=True)
        cost = ({"switch_exits": self.switch_exits,
                 "switch_handler_s": round(self.switch_handler_s, 3)}
                if self.attribution is not None else {})
        if self.sampler is not None:
            cost["windows"] = self._end_sampling()
        emit("event", event="workend", tick=self.tick, **self._insts_host(3), **cost)
        self.region_start_tick = None
        processor = self.board.get_processor()
        if self.fast_forward and processor.switch_to_fast_forward():
            # The detailed cores' statistics stay as they were at the region's end
            # (switched-out cores do not tick); the guest's dumpstats records them.
            emit("event", event="switched", tick=m5.curTick(),
                 cpu=processor.fast_forward_model(), **self._insts_host(3, False))
            self._restart_slice()
            if self.attribution is not None:  # counters now come from other cores
                self._rebase_attribution()
        return None

    def _restart_slice(self) -> None:
        """The cores changed between fast-forward and detailed ones, whose host speeds
        differ some hundredfold: a slice sized on the Atomic cores ran tens of minutes on
        O3 ones without a progress line. Start a short slice (0.1 ms simulated) and let it
        adapt. Not at a sampled region's switches: they come more often than a slice lasts
        (see :meth:`simulate`)."""
        self.slice_ticks, self.slice_end = int(1e8), None

    def on_exit(self, ev) -> int | None:
        """The runner's ``m5 exit``: the end of a run (status 0); a boot must end at its
        checkpoint instead (2)."""
        if ev.getCause() != "m5_exit instruction encountered":
            return self.on_unexpected(ev)   # not the guest's (gem5 has other kinds of exit)
        self._write_attribution(closing_region=False)
        self._write_sampling(final=True)
        emit("event", event="exit", tick=self.tick, **self._insts_host(1), code=ev.getCode())
        return 0 if self.args.mode == "run" else 2

    def on_inst_stop(self, ev) -> int | None:
        """A core reached an instruction stop of the sampling schedule: a round of the
        phase ended, perhaps the phase too (switch the cores, open or close a measured
        window), and the next stops are scheduled. A stop the schedule no longer waits for
        (gem5 cannot cancel one) is passed over."""
        if self.sampling is None:
            return self.on_unexpected(ev)
        self._advance_sampling(stop=True)
        return None

    def on_unexpected(self, ev) -> int:
        """Anything else (a kernel panic gem5 noticed, an m5 fail without attribution...)."""
        emit("event", event="abnormal", cause=ev.getCause().strip(), tick=self.tick,
             code=ev.getCode())
        return 2

    # -------------------------------------------------------------------------- helpers
    def _advance_sampling(self, stop: bool) -> None:
        """Hand the cores' counts to the sampling schedule and do the Step it returns.
        ``stop``: at an instruction stop's exit (else at the end of a slice, which finds a
        stop whose exit was lost)."""
        step = self.sampler.on_stop(self._inst_counts()) if self.sampler else None
        if step is None:
            if stop and self.sampled:
                self.sampled[-1]["stale_stops"] += 1
            return
        if step.window == "end":
            self._close_window()
        if step.switch:
            self._switch(step.switch)
        if step.window == "begin":
            self._open_window()
        self._schedule_stops()

    def _inst_counts(self) -> list[int]:
        """Committed instructions of each CPU's cores now in (sampling counts these)."""
        return [int(c.get_simobject().totalInsts())
                for c in self.board.get_processor().get_cores()]

    def _schedule_stops(self) -> None:
        self.board.get_processor().schedule_inst_stops(self.sampler.stops(self._inst_counts()))

    def _read_all(self) -> dict[int, dict]:
        return {c: self.counters.read(c) for c in self.cpus}

    def _begin_sampling(self) -> None:
        self.sampler = SamplingSchedule(self.sampling, len(self.cpus))
        self.sampled.append({
            "start_tick": self.tick, "end_tick": None, "insts": None, "windows": [],
            "cut_short": None, "rounds": 0, "stale_stops": 0, "switches": 0,
            "switch_host_s": 0.0, "detailed_host_s": 0.0, "host_s": None,
            "_insts": total_insts(self.board), "_host": self.now})
        self.sampler.begin()
        self._schedule_stops()

    def _switch(self, to: str) -> None:
        """All cores to the detailed or the Atomic ones, timed; the tasks' counts carry
        over (TaskAttribution.handover)."""
        region, processor = self.sampled[-1], self.board.get_processor()
        before = self._read_all() if self.attribution is not None else None
        started = time.perf_counter()
        if to == "detailed":
            processor.switch_to_detailed()
            region["_detailed_since"] = started
        else:
            processor.switch_to_functional_warming()
            region["detailed_host_s"] += started - region.pop("_detailed_since", started)
        region["switch_host_s"] += time.perf_counter() - started
        region["switches"] += 1
        if before is not None:
            after = self._read_all()
            for c in self.cpus:
                self.attribution.handover(c, before[c], after[c])

    def _open_window(self) -> None:
        self.window = {"start_tick": m5.curTick(), "start": self._read_all()}
        if self.window_tasks is not None:
            self.window_tasks.clear()
            for c, counters in self.window["start"].items():
                self.window_tasks.rebase(c, counters)

    def _close_window(self) -> None:
        """The measured window's per-CPU deltas (and with --attribute-tasks per task)."""
        end, start = self._read_all(), self.window["start"]
        record = {"start_tick": self.window["start_tick"], "end_tick": m5.curTick(),
                  "cpus": {str(c): {k: v - start[c].get(k, 0) for k, v in end[c].items()}
                           for c in self.cpus}}
        if self.window_tasks is not None:
            # A dict the attribution completes at each CPU's next switch (close_region).
            record["tasks"] = self.window_tasks.close_region(end)
        self.sampled[-1]["windows"].append(record)
        self.window = None

    def _end_sampling(self) -> int:
        """The region ends: a window still open is dropped (cut short); sampling.json."""
        region = self.sampled[-1]
        phase = self.sampler.end()
        region["cut_short"] = phase if phase in (WARMUP, MEASURE) else None
        if "_detailed_since" in region:
            region["detailed_host_s"] += time.perf_counter() - region.pop("_detailed_since")
        region.update(end_tick=self.tick, insts=total_insts(self.board) - region["_insts"],
                      rounds=self.sampler.rounds, host_s=self.now - region["_host"])
        self.window, self.sampler = None, None
        self._write_sampling(final=False)
        return len(region["windows"])

    def _write_sampling(self, final: bool) -> None:
        """sampling.json: the plan and every region's windows, rewritten at the exit with
        the windows' task totals settled (as attribution.json)."""
        if self.sampling is None:
            return
        if final and self.window_tasks is not None:
            self.window_tasks.settle_owed()
        regions = [{**{k: round(v, 3) if k.endswith("host_s") and v is not None else v
                       for k, v in r.items() if k != "windows" and not k.startswith("_")},
                    "windows": [{**w, **({"tasks": by_pid(w["tasks"])} if "tasks" in w
                                         else {})} for w in r["windows"]]}
                   for r in self.sampled]
        data = {"plan": self.sampling.to_dict(), "cpu": self.cpu, "cpus": len(self.cpus),
                "llc": self.plan.llc, "regions": regions}
        (self.outdir / "sampling.json").write_text(json.dumps(data, indent=1))

    def _rebase_attribution(self) -> None:
        for c in self.cpus:
            self.attribution.rebase(c, self.counters.read(c))

    def _write_attribution(self, closing_region: bool) -> None:
        if self.attribution is None:
            return
        if closing_region:
            # Each region's totals stay live until every CPU has switched once more (the
            # task running at the region's end is only named then); the file is rewritten
            # at the exit with them settled.
            self.regions.append(self.attribution.close_region(
                {c: self.counters.read(c) for c in self.cpus}))
        else:
            self.attribution.settle_owed()
        data = {"regions": [by_pid(r) for r in self.regions],
                "since_last_region": None if closing_region else self.attribution.to_dict()}
        (self.outdir / "attribution.json").write_text(json.dumps(data, indent=1))


def main() -> int:
    args = parse_args()
    plan = plan_from_dict(args.machine)
    cpu = args.cpu or ("atomic" if args.mode == "boot" else plan.default_cpu)
    if args.mode == "boot" and cpu not in ("atomic", "kvm"):
        print(f"schedlab: boot needs --cpu atomic or kvm, not {cpu}", file=sys.stderr)
        return 2
    outdir = Path(m5.options.outdir)
    (outdir / "plan.json").write_text(json.dumps(plan.to_dict(), indent=1))
    for note in plan.notes:
        print(f"schedlab: note: {note}", flush=True)

    fast_forward = (args.mode == "run" and args.settings.fast_forward
                    and cpu not in ("atomic", "kvm"))
    if args.settings.bypass_caches and not fast_forward:
        print("schedlab: --bypass-caches needs a run with --fast-forward into --cpu timing or "
              "o3", file=sys.stderr)
        return 2
    if args.settings.sampling and not fast_forward:
        print("schedlab: --sampling needs a run with --fast-forward into --cpu timing or o3",
              file=sys.stderr)
        return 2
    try:
        args.settings.sampling and parse_sampling(args.settings.sampling)
    except ValueError as e:
        print(f"schedlab: {e}", file=sys.stderr)
        return 2
    board = build_board(plan, cpu, args.settings.hierarchy, fast_forward=fast_forward,
                        bypass_caches=args.settings.bypass_caches)
    restore = args.checkpoint_dir if args.mode == "run" else None
    if restore is not None and not (restore / "m5.cpt").is_file():
        print(f"schedlab: no checkpoint in {restore}", file=sys.stderr)
        return 2
    board.set_guest(args.kernel, args.command_line, args.readfile, restore)

    if args.settings.seed is not None:
        seedRandom(args.settings.seed)
    board._pre_instantiate()
    root = Root(full_system=True, board=board)
    if cpu == "kvm":
        m5.ticks.fixGlobalFrequency()
        root.sim_quantum = m5.ticks.fromSeconds(0.001)
    t0 = time.time()
    m5.instantiate(str(restore) if restore else None)
    board._post_instantiate()
    emit("event", event="instantiated", tick=m5.curTick(), host_s=round(time.time() - t0, 3),
         mode=args.mode, cpu=cpu, restored=bool(restore))
    status = RunEvents(args, plan, board, cpu, fast_forward, outdir).simulate()
    if status == 0 and not args.settings.exit_stats:
        # m5.simulate registers a dump of every statistic for the interpreter's exit: the
        # whole run's, which no run reads (on Hector half of a 13 MB stats.txt).
        atexit.unregister(m5.stats.dump)
    return status


if __name__ == "__m5_main__" or __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.exit(status)
