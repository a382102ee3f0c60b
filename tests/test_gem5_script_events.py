"""configs/schedlab_gem5.py's exit-event handlers, driven by scripted exits, without gem5.

Each scenario runs the real script in gem5's *source* Python (the harness of
tests/test_gem5_configs_dry.py: GEM5_SRC, gem5's native module stubbed) through
``m5.instantiate``, which does nothing here; then ``m5.simulate`` returns the scenario's
exits one by one (a "slice" is a run that reached its tick limit), the CPUs' and caches'
counters come from stand-in C++ objects, and ``m5.checkpoint``, ``m5.stats`` and
``m5.switchCpus`` are recorded. The lines the script prints (the host parses them:
``schedlab/backends/gem5/process.py``), its exit status and what it asked gem5 to do are
checked for every kind of exit. Skipped unless GEM5_SRC names a gem5 source tree.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Fields that depend on the host's speed.
HOST_FIELDS = ("host_s", "ips")


class _Stat:
    """A statistic as gem5's Python sees it: read live (the script resolves each one once
    and reads it at every switch)."""

    def __init__(self, read, subnames=None):
        self.read, self.subnames = read, subnames or []

    @property
    def value(self):
        return self.read()

    @property
    def total(self):
        return sum(self.read()) if self.subnames else self.read()

    @property
    def result(self):
        return self.read() if self.subnames else None


class _FakeCore:
    """What the script reads from a C++ CPU: committed instructions and cycles."""

    def __init__(self, clock: dict, index: int, calls: list, name: str):
        self.clock, self.index, self.calls, self.name = clock, index, calls, name

    def totalInsts(self):
        return self.clock["steps"] * 1000 * (self.index + 1)

    def scheduleInstStopAnyThread(self, n):
        self.calls.append(["stop", self.name, n])

    def resolveStat(self, name):
        assert name == "numCycles", name
        return _Stat(lambda: float(self.clock["steps"] * 2000))


# Per step, per requestor: demand misses 3 (L1s) or the requestor's number (the L2); the
# per-command statistics a fixed multiple of that. LockedRMWWriteReq is one the caches
# here do not have.
COMMANDS = {"ReadReq.misses": 1, "LockedRMWReadReq.misses": 0, "WriteReq.misses": 2,
            "ReadReq.accesses": 10, "LockedRMWReadReq.accesses": 1, "WriteReq.accesses": 5,
            "ReadSharedReq.misses": 1, "ReadCleanReq.misses": 0, "ReadExReq.misses": 1,
            "UpgradeReq.misses": 1, "ReadSharedReq.accesses": 4, "ReadCleanReq.accesses": 0,
            "ReadExReq.accesses": 2, "UpgradeReq.accesses": 1}


class _FakeCache:
    def __init__(self, clock: dict, requestors: list[str] | None):
        self.clock, self.requestors = clock, requestors

    def resolveStat(self, name):
        if name != "demandMisses" and name not in COMMANDS:
            return None
        weight = COMMANDS.get(name, 1)
        if self.requestors is None:
            return _Stat(lambda: float(self.clock["steps"] * 3 * weight))
        return _Stat(lambda: [float(self.clock["steps"] * (i + 1) * weight)
                              for i in range(len(self.requestors))],
                     subnames=self.requestors)


def _drive(src: Path, mode: str, cpu: str, work: Path, scenario: list, *,
           fast_forward: bool, attribute: bool, max_host_seconds: float = 0.0,
           sampling: str | None = None, bypass_caches: bool = False,
           exit_stats: bool = True, progress_seconds: float = 0.0,
           host_steps: list[float] | None = None) -> dict:
    """``host_steps``: the host seconds each m5.simulate call takes, on a stand-in clock
    (else the host's own)."""
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    import test_gem5_configs_dry as dry

    objects, _ = dry._harness(src)
    import types

    import m5
    import m5.options

    from schedlab.backends.gem5.options import Gem5Options, RunSettings
    from schedlab.backends.gem5.process import command
    from schedlab.machine import load_machine

    m5.options.outdir = str(work)
    clock = {"tick": 0, "steps": 0}
    calls: list = []
    pending = list(scenario)

    class Exit:
        def __init__(self, cause, code):
            self.cause, self.code = cause, code

        def getCause(self):
            return self.cause

        def getCode(self):
            return self.code

    def instantiate(ckpt=None):
        calls.append(["instantiate", ckpt])
        board = objects.Root.getInstance().board
        for i, core in enumerate(board.processor.all_cores()):
            sim = core.get_simobject()
            sim._ccObject = _FakeCore(clock, i % len(board.processor.get_cores()), calls,
                                      type(sim).__name__)
        h = board.cache_hierarchy
        for c in h.descendants():
            if isinstance(c, objects.Cache):
                if c.get_name().startswith("l2"):
                    cores = board.processor.all_cores()
                    names = [core.get_simobject().path().partition(".")[2] + ".data"
                             for core in cores]
                    c._ccObject = _FakeCache(clock, names)
                else:
                    c._ccObject = _FakeCache(clock, None)

    host = {"now": 1000.0}
    if host_steps is not None:
        import time
        time.time = lambda: host["now"]

    def simulate(ticks):
        assert ticks > 0
        if not asked:   # as gem5's first m5.simulate does
            atexit.register(m5.stats.dump)
        if host_steps is not None:
            host["now"] += host_steps[min(len(asked), len(host_steps) - 1)]
        clock["steps"] += 1
        asked.append(ticks)
        cause, code = pending.pop(0)
        if cause == "slice":
            clock["tick"] += ticks
            return Exit("simulate() limit reached", 0)
        clock["tick"] += 1000
        return Exit(cause, code)

    asked = []
    m5.instantiate = instantiate
    m5.simulate = simulate
    m5.curTick = lambda: clock["tick"]
    m5.checkpoint = lambda d: calls.append(["checkpoint", d])
    m5.stats = sys.modules["m5.stats"] = types.ModuleType("m5.stats")
    m5.stats.reset = lambda: calls.append(["stats.reset"])
    m5.stats.dump = lambda: calls.append(["stats.dump"])
    m5.switchCpus = lambda board, pairs: calls.append(
        ["switchCpus", [type(new).__name__ for _, new in pairs]])

    (work / "cpt").mkdir(exist_ok=True)
    (work / "cpt" / "m5.cpt").write_text("")
    cmd = command(Path("/gem5.fast"), work, Gem5Options(
        mode=mode, machine=load_machine("clovertown-e5320-mup").to_dict(),
        kernel=Path("/vmlinux"), command_line="console=ttyS0", cpu=cpu,
        checkpoint_dir=work / "cpt", readfile=work / "spec.txt",
        progress_seconds=progress_seconds, max_host_seconds=max_host_seconds,
        settings=RunSettings(attribute_tasks=attribute, fast_forward=fast_forward,
                             sampling=sampling, bypass_caches=bypass_caches,
                             exit_stats=exit_stats)))
    script = Path(cmd[3])
    sys.argv = cmd[3:]
    import contextlib
    import io
    out = io.StringIO()
    status = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(script.read_text(), str(script), "exec"),
                 {"__file__": str(script), "__name__": "__m5_main__"})
        except SystemExit as e:
            status = e.code
    # What the interpreter's exit would do after the script (gem5's exit dump, if left).
    before_exit = len(calls)
    atexit._run_exitfuncs()
    at_exit = calls[before_exit:]
    del calls[before_exit:]
    lines = []
    for line in out.getvalue().splitlines():
        kind, _, data = line.partition(" ")
        if kind in ("schedlab-event", "schedlab-progress"):
            data = json.loads(data)
            lines.append([kind, {k: v for k, v in data.items() if k not in HOST_FIELDS},
                          sorted(data)])
        else:
            lines.append([line])
    attribution, sampled = work / "attribution.json", work / "sampling.json"
    return {"status": status, "lines": lines, "calls": calls, "at_exit": at_exit,
            "left": len(pending),
            "asked": asked,
            "attribution": json.loads(attribution.read_text()) if attribution.exists() else None,
            "sampling": json.loads(sampled.read_text()) if sampled.exists() else None}


# ----------------------------------------------------------------------------- pytest side
if __name__ != "__main__":
    import pytest

    GEM5_SRC = os.environ.get("GEM5_SRC")
    pytestmark = pytest.mark.skipif(
        not GEM5_SRC or not (Path(GEM5_SRC or "/") / "src" / "python" / "gem5").is_dir(),
        reason="GEM5_SRC not set: point it at a gem5 v24.0 source tree to drive the gem5 "
               "script's exit handlers without a gem5 binary")

    def drive(tmp_path, mode, cpu, scenario, *, ff=False, attribute=False, max_host=0.0,
              sampling=None, bypass=False, exit_stats=True, progress=0.0, host_steps=None):
        tmp_path.mkdir(parents=True, exist_ok=True)
        spec = {"mode": mode, "cpu": cpu, "scenario": scenario, "ff": ff,
                "attribute": attribute, "max_host": max_host, "sampling": sampling,
                "bypass": bypass, "exit_stats": exit_stats, "progress": progress,
                "host_steps": host_steps}
        out = subprocess.run([sys.executable, __file__, GEM5_SRC, str(tmp_path),
                              json.dumps(spec)], capture_output=True, text=True, cwd=REPO,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    def events(d):
        return [line[1] for line in d["lines"] if line[0] == "schedlab-event"]

    def test_boot_reports_progress_and_ends_at_the_checkpoint(tmp_path):
        d = drive(tmp_path, "boot", "atomic", [["slice", 0], ["slice", 0], ["checkpoint", 0]])
        assert d["status"] == 0 and d["left"] == 0
        assert d["calls"][0] == ["instantiate", None]
        assert d["calls"][1] == ["checkpoint", str(tmp_path / "cpt")]
        assert d["lines"][0] == ["schedlab: note: memory capped at 3072 MiB (3072 MiB per "
                                 "node): gem5's X86Board maps at most 3 GiB below the I/O "
                                 "hole; the catalogue asks for 8192 MiB"]
        del d["lines"][0]
        kinds = [line[0] for line in d["lines"]]
        assert kinds == ["schedlab-event", "schedlab-progress", "schedlab-progress",
                         "schedlab-event"]
        first, progress = d["lines"][0], d["lines"][1]
        assert first[1] == {"event": "instantiated", "tick": 0, "mode": "boot",
                            "cpu": "atomic", "restored": False}
        assert first[2] == ["cpu", "event", "host_s", "mode", "restored", "tick"]
        # 1 ms simulated in the first slice; instructions of both cores after one step.
        assert progress[1] == {"sim_s": 0.001, "tick": 10 ** 9, "insts": 3000}
        assert progress[2] == ["host_s", "insts", "ips", "sim_s", "tick"]
        last = d["lines"][-1]
        assert last[1] == {"event": "checkpoint", "tick": d["lines"][2][1]["tick"] + 1000,
                           "insts": 9000, "dir": str(tmp_path / "cpt")}
        assert last[2] == ["dir", "event", "host_s", "insts", "tick"]

    def test_boot_that_exits_instead_of_checkpointing_fails(tmp_path):
        d = drive(tmp_path, "boot", "atomic", [["m5_exit instruction encountered", 0]])
        assert d["status"] == 2
        assert events(d)[-1] == {"event": "exit", "tick": 1000, "insts": 3000, "code": 0}

    def test_fast_forwarded_run_with_task_attribution(tmp_path):
        scenario = [["checkpoint", 0], ["slice", 0],
                    ["m5_workbegin instruction encountered", 0],
                    ["m5_fail instruction encountered", (42 << 8) | 1],
                    ["m5_fail instruction encountered", (42 << 8) | 1],
                    ["m5_fail instruction encountered", (7 << 8) | 9],   # no CPU 9: ignored
                    ["m5_workend instruction encountered", 0],
                    ["m5_fail instruction encountered", (43 << 8) | 0],
                    ["m5_fail instruction encountered", (43 << 8) | 0],
                    ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True, attribute=True)
        assert d["status"] == 0 and d["left"] == 0
        assert d["calls"] == [["instantiate", str(tmp_path / "cpt")],
                              ["switchCpus", ["X86O3CPU", "X86O3CPU"]], ["stats.reset"],
                              ["stats.dump"],
                              ["switchCpus", ["X86AtomicSimpleCPU", "X86AtomicSimpleCPU"]]]
        ev = events(d)
        assert [e["event"] for e in ev] == ["instantiated", "checkpoint-ignored", "switched",
                                            "workbegin", "workend", "switched", "exit"]
        assert ev[1] == {"event": "checkpoint-ignored", "tick": 1000}
        # Both the Atomic and the detailed cores count: 2 x (1000 + 2000) per step.
        assert ev[2] == {"event": "switched", "tick": ev[3]["tick"], "cpu": "o3",
                         "insts": 18000}
        assert ev[4]["insts"] == ev[5]["insts"] == 42000 and ev[5]["cpu"] == "atomic"
        # What attribution cost in the region: its three context-switch exits (the one
        # naming no CPU of the board included) and the host time of their handler.
        assert ev[4]["switch_exits"] == 3 and 0 <= ev[4]["switch_handler_s"] < 1
        # pid 42 left CPU 1 twice in the region, one step after the region began and one
        # after that: the detailed core's 2 x 2000 instructions and cycles, its L1s' misses
        # (3 a step) and its share of the shared L2's (its requestor's 4 a step). What each
        # CPU did after its last switch of the region belongs to the task running at the
        # region's end: CPU 0 (4 steps, no switch) is charged to pid 43, which its next
        # switch names; CPU 1 (2 steps after pid 42) never switches again and goes to the
        # unsettled pseudo-task -1. After the region pid 43 is charged for the Atomic CPU
        # 0's counters.
        region = {"-1": {"switches": 0, "cycles": 4000.0, "insts": 4000.0,
                         "l1d_misses": 6.0, "l1i_misses": 6.0, "llc_misses": 8.0},
                  "42": {"switches": 2, "cycles": 4000.0, "insts": 4000.0,
                         "l1d_misses": 6.0, "l1i_misses": 6.0, "llc_misses": 8.0},
                  "43": {"switches": 0, "cycles": 8000.0, "insts": 4000.0,
                         "l1d_misses": 12.0, "l1i_misses": 12.0, "llc_misses": 12.0}}
        base = ("switches", "cycles", "insts", "l1d_misses", "l1i_misses", "llc_misses")

        def basic(totals):
            return {pid: {k: t[k] for k in base} for pid, t in totals.items()}
        assert [basic(r) for r in d["attribution"]["regions"]] == [region]
        assert basic(d["attribution"]["since_last_region"]) == {
            "43": {"switches": 2, "cycles": 4000.0, "insts": 2000.0, "l1d_misses": 6.0,
                   "l1i_misses": 6.0, "llc_misses": 2.0}}
        # Loads and stores (COMMANDS' multiples) for pid 42's 2 steps on CPU 1: at its L1 D
        # (3 a step), ReadReq + LockedRMWReadReq vs WriteReq; at the L2, its data requestor
        # (4 a step), ReadSharedReq + ReadCleanReq vs ReadExReq + UpgradeReq.
        task = d["attribution"]["regions"][0]["42"]
        assert {k: v for k, v in task.items() if k not in base} == {
            "l1d_load_misses": 6.0, "l1d_load_accesses": 66.0, "l1d_store_misses": 12.0,
            "l1d_store_accesses": 30.0, "llc_load_misses": 8.0, "llc_load_accesses": 32.0,
            "llc_store_misses": 16.0, "llc_store_accesses": 24.0}
        # The tasks' shares add up to the CPUs' totals: 4 region steps on 2 CPUs.
        assert sum(t["cycles"] for t in region.values()) == 4 * 2 * 2000
        assert sum(t["insts"] for t in region.values()) == 4 * (1000 + 2000)

    STOP = "a thread reached the max instruction count"   # ExitEvent.MAX_INSTS

    def test_sampled_region_switches_measures_and_attributes(tmp_path):
        # Period 20 000, warm-up 6000, measured 6000 instructions of both CPUs together.
        # Every exit is a step: CPU 0 commits 1000, CPU 1 2000 instructions, on whichever
        # cores are in (all core objects count, switched in or out: the stand-in's clock).
        scenario = [["m5_workbegin instruction encountered", 0],           # step 1
                    [STOP, 0], [STOP, 0],                                  # 2, 3
                    ["m5_fail instruction encountered", (42 << 8) | 1],    # 4
                    [STOP, 0], [STOP, 0], [STOP, 0], [STOP, 0], [STOP, 0],  # 5-9
                    [STOP, 0], [STOP, 0], [STOP, 0], [STOP, 0],            # 10-13
                    ["m5_workend instruction encountered", 0],             # 14
                    [STOP, 0],                                             # 15
                    ["m5_fail instruction encountered", (43 << 8) | 0],    # 16
                    ["m5_fail instruction encountered", (44 << 8) | 1],    # 17
                    ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True, attribute=True,
                  sampling="20000,6000,6000")
        assert d["status"] == 0 and d["left"] == 0
        atomic, o3 = "X86AtomicSimpleCPU", "X86O3CPU"
        # The functional phase (8000) split evenly, then 2000 left split 1 : 2 (CPU 1
        # reached its stop at step 3 after 2000 + 4000); at step 5 both are reached: the
        # warm-up's 6000 split 1 : 2 on the O3 cores, reached at step 7, the measured
        # window's 6000 likewise (steps 7-9); back on the Atomic cores 8000 split 1 : 2,
        # reached at step 12; the second warm-up is cut short by the region's end.
        # (The statistics are reset at workbegin and dumped at workend, as without sampling.)
        assert d["calls"] == [
            ["instantiate", str(tmp_path / "cpt")], ["stats.reset"],
            ["stop", atomic, 4000], ["stop", atomic, 4000],
            ["stop", atomic, 666], ["stop", atomic, 1334],
            ["switchCpus", [o3, o3]], ["stop", o3, 2000], ["stop", o3, 4000],
            ["stop", o3, 2000], ["stop", o3, 4000],
            ["switchCpus", [atomic, atomic]], ["stop", atomic, 2666], ["stop", atomic, 5334],
            ["switchCpus", [o3, o3]], ["stop", o3, 2000], ["stop", o3, 4000],
            ["stats.dump"], ["switchCpus", [atomic, atomic]]]
        ev = events(d)
        assert [e["event"] for e in ev] == ["instantiated", "workbegin", "workend",
                                            "switched", "exit"]
        assert ev[2]["windows"] == 1 and ev[3]["cpu"] == "atomic"
        region = d["sampling"]["regions"][0]
        assert d["sampling"]["plan"] == {"period": 20000, "warmup": 6000, "measure": 6000,
                                         "unit": "instructions committed by all cores "
                                                 "together"}
        assert d["sampling"]["llc"] == "l2" and d["sampling"]["cpus"] == 2
        # 13 steps of 3000 on each side's core objects (Atomic and O3) = 78 000; 6 rounds;
        # 7 exits passed over: steps 2, 6, 8, 10, 11 and 13 reached no stop of their
        # round, and step 15 came after the region.
        assert {k: region[k] for k in ("start_tick", "end_tick", "insts", "cut_short",
                                        "rounds", "stale_stops", "switches")} == {
            "start_tick": 1000, "end_tick": 14000, "insts": 78000, "cut_short": "warmup",
            "rounds": 6, "stale_stops": 7, "switches": 3}
        assert 0 <= region["switch_host_s"] <= region["host_s"]
        assert 0 <= region["detailed_host_s"] <= region["host_s"]
        [window] = region["windows"]
        # Steps 7-9 on the O3 cores: 2 steps; CPU 1's L2 requestor is the fourth (4 a
        # step), CPU 0's the third.
        assert (window["start_tick"], window["end_tick"]) == (7000, 9000)
        basic = ("insts", "cycles", "l1d_misses", "l1i_misses", "llc_misses")
        assert {c: {k: v[k] for k in basic} for c, v in window["cpus"].items()} == {
            "0": {"insts": 2000.0, "cycles": 4000.0, "l1d_misses": 6.0, "l1i_misses": 6.0,
                  "llc_misses": 6.0},
            "1": {"insts": 4000.0, "cycles": 4000.0, "l1d_misses": 6.0, "l1i_misses": 6.0,
                  "llc_misses": 8.0}}
        # No switch inside the window: each CPU's share goes to the task its next switch
        # names, after the region (43 on CPU 0, 44 on CPU 1).
        assert {p: {k: t[k] for k in ("switches", "insts", "cycles", "llc_misses")}
                for p, t in window["tasks"].items()} == {
            "43": {"switches": 0, "insts": 2000.0, "cycles": 4000.0, "llc_misses": 6.0},
            "44": {"switches": 0, "insts": 4000.0, "cycles": 4000.0, "llc_misses": 8.0}}
        # The region's attribution spans the switches between core models (handover):
        # pid 43 ran CPU 0 for the region's 13 steps, 7 on Atomic cores (requestor 1 a
        # step) and 6 on O3 cores (3 a step); pid 44 CPU 1 from step 4 on, 4 Atomic
        # steps (2) and 6 O3 steps (4).
        r = d["attribution"]["regions"][0]
        assert {p: (t["insts"], t["cycles"], t["llc_misses"]) for p, t in r.items()} == {
            "42": (6000.0, 6000.0, 6.0), "43": (13000.0, 26000.0, 25.0),
            "44": (20000.0, 20000.0, 32.0)}

    def test_a_stop_whose_exit_was_lost_is_found_at_a_slice_end(tmp_path):
        # gem5's drain swallows exits: here no stop ever exits, and the slices' ends find
        # the stops reached (each slice is a step: 1000 and 2000 instructions).
        scenario = [["m5_workbegin instruction encountered", 0]] + [["slice", 0]] * 12 + [
            ["m5_workend instruction encountered", 0], ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True, sampling="20000,6000,6000")
        assert d["status"] == 0
        switches = [c[1][0] for c in d["calls"] if c[0] == "switchCpus"]
        assert switches[:3] == ["X86O3CPU", "X86AtomicSimpleCPU", "X86O3CPU"]
        region = d["sampling"]["regions"][0]
        assert len(region["windows"]) == 1 and region["stale_stops"] == 0

    def test_sampling_needs_fast_forward_and_inst_stops_need_sampling(tmp_path):
        d = drive(tmp_path, "run", "o3", [], sampling="20000,6000,6000")
        assert d["status"] == 2 and d["calls"] == []
        d = drive(tmp_path, "run", "o3", [["slice", 0], [STOP, 0]], ff=True)
        assert d["status"] == 2
        assert events(d)[-1] == {"event": "abnormal", "cause": STOP,
                                 "tick": 10 ** 9 + 1000, "code": 0}

    def test_a_slice_lasts_across_the_exits_inside_it(tmp_path):
        # With attribution the guest exits at every context switch, more often than a slice
        # ends; each exit must go on to the same slice end, or no slice would ever end (no
        # progress line, no host-time limit).
        switch = ["m5_fail instruction encountered", (42 << 8) | 1]
        d = drive(tmp_path, "run", "o3", [["slice", 0], switch, switch, switch, ["slice", 0],
                                          ["m5_exit instruction encountered", 0]],
                  attribute=True)
        assert d["status"] == 0 and d["left"] == 0
        first, *inside, last = d["asked"][1:5]
        assert inside == [first - 1000, first - 2000] and last == first - 3000
        assert [line[0] for line in d["lines"]].count("schedlab-progress") == 2

    def test_run_without_fast_forward_resets_and_dumps_at_work_items(tmp_path):
        d = drive(tmp_path, "run", "timing", [["workbegin", 0], ["workend", 0],
                                              ["checkpoint", 0],
                                              ["m5_exit instruction encountered", 3]])
        assert d["status"] == 0
        assert d["calls"][1:] == [["stats.reset"], ["stats.dump"]]
        assert events(d)[-1] == {"event": "exit", "tick": 4000, "insts": 12000, "code": 3}
        assert d["attribution"] is None

    @pytest.mark.parametrize("cause,code", [
        ["Kernel panic in simulated system.", 0],
        ["m5_fail instruction encountered", 5],        # without --attribute-tasks
        ["exiting with last active thread context", 0],
        ["something gem5 has no name for\n", 1],
    ])
    def test_any_other_exit_is_abnormal(tmp_path, cause, code):
        d = drive(tmp_path, "run", "o3", [["slice", 0], [cause, code]])
        assert d["status"] == 2
        assert events(d)[-1] == {"event": "abnormal", "cause": cause.strip(),
                                 "tick": 10 ** 9 + 1000, "code": code}

    def test_bypassed_caches_are_turned_on_by_the_guest_before_the_region(tmp_path):
        """--bypass-caches: NonCaching cores from the restore; the launcher's m5 switchcpu
        hands over to Atomic cores with the caches (a second one changes nothing), the
        region runs on O3 cores, and after it the NonCaching cores come back (gem5's
        switchCpus writes the caches back and empties them on the way)."""
        scenario = [["slice", 0], ["switchcpu", 0], ["slice", 0], ["switchcpu", 0],
                    ["m5_workbegin instruction encountered", 0],
                    ["m5_workend instruction encountered", 0],
                    ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True, bypass=True)
        assert d["status"] == 0 and d["left"] == 0, d["lines"]
        switches = [c[1] for c in d["calls"] if c[0] == "switchCpus"]
        assert switches == [["X86AtomicSimpleCPU"] * 2, ["X86O3CPU"] * 2,
                            ["X86NonCachingSimpleCPU"] * 2]
        ev = events(d)
        assert [(e["event"], e.get("cpu")) for e in ev] == [
            ("instantiated", "o3"), ("switched", "atomic"), ("switched", "o3"),
            ("workbegin", None), ("workend", None), ("switched", "noncaching"),
            ("exit", None)]

    def test_a_sampled_region_warms_the_caches_it_finds_bypassed(tmp_path):
        """Sampling between windows needs the caches (functional warming): at the region's
        start the NonCaching cores hand over to the Atomic ones, which the windows' detailed
        cores alternate with, and the NonCaching cores come back after the region."""
        scenario = [["m5_workbegin instruction encountered", 0]] + [[STOP, 0]] * 12 + [
            ["m5_workend instruction encountered", 0], ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True, sampling="20000,6000,6000",
                  bypass=True)
        assert d["status"] == 0, d["lines"]
        switches = [c[1][0] for c in d["calls"] if c[0] == "switchCpus"]
        assert switches[0] == "X86AtomicSimpleCPU" and switches[-1] == "X86NonCachingSimpleCPU"
        # Windows and functional warming alternate; the region may end in either.
        assert len(switches) > 3 and switches[1:-1] == [
            ("X86O3CPU", "X86AtomicSimpleCPU")[i % 2] for i in range(len(switches) - 2)]

    def test_without_bypassed_caches_the_guests_switchcpu_changes_nothing(tmp_path):
        scenario = [["switchcpu", 0], ["m5_workbegin instruction encountered", 0],
                    ["m5_workend instruction encountered", 0],
                    ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", scenario, ff=True)
        assert d["status"] == 0
        switches = [c[1] for c in d["calls"] if c[0] == "switchCpus"]
        assert switches == [["X86O3CPU"] * 2, ["X86AtomicSimpleCPU"] * 2]

    def test_exit_stats_dump_left_out_only_when_asked_and_the_run_ended_well(tmp_path):
        run = [["m5_workbegin instruction encountered", 0],
               ["m5_workend instruction encountered", 0],
               ["m5_exit instruction encountered", 0]]
        kept = drive(tmp_path / "kept", "run", "o3", run, ff=True)
        assert kept["status"] == 0 and kept["at_exit"] == [["stats.dump"]]
        left_out = drive(tmp_path / "left", "run", "o3", run, ff=True, exit_stats=False)
        assert left_out["status"] == 0 and left_out["at_exit"] == []
        assert left_out["calls"][1:] == kept["calls"][1:]   # [0]: the checkpoint's path
        # A run that did not end well keeps gem5's dump (what there is to look at).
        failed = drive(tmp_path / "failed", "run", "o3", [["slice", 0]] * 50, max_host=1e-9,
                       exit_stats=False)
        assert failed["status"] == 3 and failed["at_exit"] == [["stats.dump"]]

    def test_host_time_limit(tmp_path):
        d = drive(tmp_path, "run", "o3", [["slice", 0]] * 50, max_host=1e-9)
        assert d["status"] == 3
        assert events(d)[-1] == {"event": "limit", "what": "max-host-seconds",
                                 "tick": 10 ** 9}

    def test_slices_follow_the_cores_speed_for_progress_lines(tmp_path):
        """Progress every 30 host seconds: a slice grows at most fourfold when the last was
        quick (Atomic cores: 1 ms simulated in 0.1 s), and the switch to the detailed cores
        (some hundred times slower) starts a slice of 0.1 ms instead of one sized on the
        Atomic cores, which ran the O3 region of study 2 for 40 minutes without a line."""
        exits = [["slice", 0]] * 4 + [["m5_workbegin instruction encountered", 0]] + [
            ["slice", 0]] * 3 + [["m5_workend instruction encountered", 0], ["slice", 0],
                                 ["m5_exit instruction encountered", 0]]
        d = drive(tmp_path, "run", "o3", [["checkpoint", 0]] + exits, ff=True,
                  progress=30, host_steps=[0.1] * 6 + [10.0] * 3 + [0.1] * 3)
        assert d["status"] == 0 and d["left"] == 0
        ms = 10 ** 9
        # On the Atomic cores (0.1 s a slice): 1 ms (the checkpoint's exit inside it), then
        # 4, 16, 64 and 256 ms (the region begins inside that one), not 300 times longer.
        assert d["asked"][2:6] == [4 * ms, 16 * ms, 64 * ms, 256 * ms]
        # On O3 (10 s a slice): 0.1 ms, then three times longer each (10 s of 30).
        assert d["asked"][6:9] == [ms // 10, 3 * ms // 10, 9 * ms // 10]
        # Back on the Atomic cores after the region: 0.1 ms again, then four times that.
        assert d["asked"][10:12] == [ms // 10, 4 * ms // 10]
        # One progress line, 30 host seconds (three slices, 1.3 ms) into the region; a
        # slice sized on the Atomic cores would have run the whole region without one.
        begin = next(line[1]["tick"] for line in d["lines"]
                     if line[1:] and line[1].get("event") == "workbegin")
        assert [line[1]["tick"] for line in d["lines"] if line[0] == "schedlab-progress"] == [
            begin + 13 * ms // 10]

    def test_kernel_panic_on_the_console_stops_the_run(tmp_path):
        (tmp_path / "board.pc.com_1.device").write_text(
            "[ 1.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n")
        d = drive(tmp_path, "run", "o3", [["slice", 0]] * 3)
        assert d["status"] == 2
        assert events(d)[-1] == {
            "event": "abnormal", "tick": 10 ** 9,
            "cause": "guest: [ 1.0] Kernel panic - not syncing: VFS: Unable to mount root fs"}


if __name__ == "__main__":
    src, work, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    print(json.dumps(_drive(Path(src) / "src", spec["mode"], spec["cpu"], work,
                            spec["scenario"], fast_forward=spec["ff"],
                            attribute=spec["attribute"], max_host_seconds=spec["max_host"],
                            sampling=spec.get("sampling"),
                            bypass_caches=spec.get("bypass", False),
                            exit_stats=spec.get("exit_stats", True),
                            progress_seconds=spec.get("progress", 0.0),
                            host_steps=spec.get("host_steps"))))
