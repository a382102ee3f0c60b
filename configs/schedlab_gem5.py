"""gem5 run script of schedlab: boot a machine to a checkpoint, or restore and run.

Run by gem5 (never by the host Python); ``schedlab/backends/gem5/process.py`` builds the
command line:

    gem5.fast -d OUT configs/schedlab_gem5.py --mode boot --machine-json M.json \
        --kernel vmlinux --command-line "console=ttyS0 ..." --checkpoint-dir CPT
    gem5.fast -d OUT configs/schedlab_gem5.py --mode run --cpu o3 --machine-json M.json \
        --kernel vmlinux --command-line "..." --checkpoint-dir CPT --readfile spec.txt

boot: Atomic cores (or KVM) boot the guest; the in-guest runner issues ``m5 checkpoint`` when
ready; the checkpoint is written to --checkpoint-dir and gem5 exits 0.
run:  the checkpoint is restored into cores of --cpu (same core count and memory size: the
plan is the same) or, with --fast-forward, into Atomic cores that hand over to --cpu cores
at each ``m5 workbegin`` and take back at each ``m5 workend``; the guest reads the run
specification with ``m5 readfile``; ``m5 workbegin``/``workend`` reset and dump the
statistics around the region of interest; ``m5 exit`` ends the run with status 0.

Progress lines (``schedlab-progress {json}``: simulated seconds, instructions so far, host
seconds, instructions per host second) and events (``schedlab-event {json}``) go to stdout
for the host to parse. Exit status: 0 done, 2 the guest ended otherwise (kernel panic,
unexpected exit), 3 a tick or host-time limit was reached.
"""

import argparse
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

from schedlab.backends.gem5.plan import plan_from_dict  # noqa: E402
from schedlab.backends.gem5.attribution import TaskAttribution  # noqa: E402
from components.board import PlanBoard  # noqa: E402


def emit(kind: str, **data) -> None:
    print(f"schedlab-{kind} {json.dumps(data, sort_keys=True)}", flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("boot", "run"), required=True)
    p.add_argument("--machine-json", type=Path, required=True,
                   help="the resolved machine (MachineSpec.to_dict()) as JSON")
    p.add_argument("--kernel", type=Path, required=True, help="vmlinux with built-in initramfs")
    p.add_argument("--command-line", required=True, help="kernel command line")
    p.add_argument("--cpu", default=None, choices=("atomic", "timing", "o3", "kvm"),
                   help="core model (boot: atomic or kvm; run: default from the machine)")
    p.add_argument("--checkpoint-dir", type=Path, required=True)
    p.add_argument("--readfile", type=Path, default=None, help="file served to m5 readfile")
    p.add_argument("--hierarchy", choices=("plan", "stock", "stock-matched"), default="plan",
                   help="stock: gem5's PrivateL1SharedL2CacheHierarchy; stock-matched: the same "
                        "with our latencies and no prefetchers (overhead benchmark)")
    p.add_argument("--no-workitem-stats", dest="workitem_stats", action="store_false",
                   help="leave statistics alone at m5 workbegin/workend (the guest resets "
                        "and dumps them itself)")
    p.add_argument("--attribute-tasks", action="store_true",
                   help="attribute per-CPU counters to tasks at the guest kernel's "
                        "context-switch m5 op (m5_fail with code prev_pid << 8 | cpu)")
    p.add_argument("--fast-forward", action="store_true",
                   help="run: restore into Atomic cores, switch to --cpu cores at each m5 "
                        "workbegin and back at each m5 workend (set-up at Atomic speed)")
    p.add_argument("--progress-seconds", type=float, default=30.0,
                   help="host seconds between progress lines")
    p.add_argument("--max-seconds", type=float, default=0.0,
                   help="stop after this many simulated seconds (0: no limit)")
    p.add_argument("--max-host-seconds", type=float, default=0.0,
                   help="stop after this many host seconds (0: no limit)")
    return p.parse_args()


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


def _stat_total(simobject, name: str) -> float:
    """A statistic's value (scalar) or total (vector/formula) read from the C++ object."""
    info = simobject.getCCObject().resolveStat(name)
    value = getattr(info, "total", None)
    if value is None:
        value = info.value
    return float(value)


def core_counters(board, plan, cpu: int) -> dict:
    """Cumulative counters of one CPU: cycles, instructions, misses of its L1s and of its
    share of the last-level cache instance (per-requestor entries of that cache's stats)."""
    core = board.get_processor().get_cores()[cpu].get_simobject()
    h = board.get_cache_hierarchy()
    out = {"cycles": _stat_total(core, "numCycles"), "insts": float(core.totalInsts())}
    for label, kind in (("l1d_misses", "data"), ("l1i_misses", "instruction")):
        out[label] = _stat_total(getattr(h, plan.l1_of(cpu, kind).name), "demandMisses")
    llc = next(c for c in plan.caches if c.cache == plan.llc and cpu in c.cores)
    if llc.level > 1:
        info = getattr(h, llc.name).getCCObject().resolveStat("demandMisses")
        # A formula (hits + misses per requestor): its per-requestor values are its
        # result, not its (empty) value. Requestors are named from below the board:
        # "processor.detailed0.core.data".
        values = getattr(info, "result", None)
        values = list(values() if callable(values) else values or info.value)
        prefix = core.path().partition(".")[2] + "."
        out["llc_misses"] = float(sum(v for n, v in zip(info.subnames, values)
                                      if str(n).startswith(prefix)))
    return out


def total_insts(board) -> int:
    """Instructions committed so far by every core, switched in or out (never decreases)."""
    return sum(int(core.get_simobject().totalInsts()) for core in board.get_processor().all_cores())


def main() -> int:
    args = parse_args()
    machine = json.loads(args.machine_json.read_text())
    plan = plan_from_dict(machine)
    cpu = args.cpu or ("atomic" if args.mode == "boot" else plan.default_cpu)
    if args.mode == "boot" and cpu not in ("atomic", "kvm"):
        print(f"schedlab: boot needs --cpu atomic or kvm, not {cpu}", file=sys.stderr)
        return 2
    outdir = Path(m5.options.outdir)
    (outdir / "plan.json").write_text(json.dumps(plan.to_dict(), indent=1))
    for note in plan.notes:
        print(f"schedlab: note: {note}", flush=True)

    fast_forward = args.mode == "run" and args.fast_forward and cpu not in ("atomic", "kvm")
    board = PlanBoard(plan, cpu, args.hierarchy, fast_forward=fast_forward)
    restore = args.checkpoint_dir if args.mode == "run" else None
    if restore is not None and not (restore / "m5.cpt").is_file():
        print(f"schedlab: no checkpoint in {restore}", file=sys.stderr)
        return 2
    board.set_guest(args.kernel, args.command_line, args.readfile, restore)

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

    attribution = TaskAttribution() if args.attribute_tasks else None
    cpus = list(range(plan.num_cores))

    regions = []  # per-task totals of each region of interest, in order

    def write_attribution(closing_region: bool):
        if attribution is None:
            return
        if closing_region:
            regions.append(attribution.to_dict())
            attribution.clear()
        data = {"regions": regions,
                "since_last_region": None if closing_region else attribution.to_dict()}
        (outdir / "attribution.json").write_text(json.dumps(data, indent=1))

    start_host = time.time()
    start_tick = m5.curTick()
    start_insts = total_insts(board)
    last_host, last_insts = start_host, start_insts
    # Simulate in slices so progress can be reported; the slice adapts to the host rate so
    # a line appears about every --progress-seconds.
    slice_ticks = int(1e9)  # 1 ms simulated to start with
    limit_tick = (start_tick + int(args.max_seconds * 1e12)) if args.max_seconds > 0 else None
    while True:
        run_for = slice_ticks if limit_tick is None else max(1, min(slice_ticks,
                                                                    limit_tick - m5.curTick()))
        t_slice = time.time()
        ev = m5.simulate(run_for)
        cause = ev.getCause()
        now = time.time()
        tick = m5.curTick()
        if cause == "simulate() limit reached":
            spent = max(1e-3, now - t_slice)
            slice_ticks = max(int(1e6), min(int(slice_ticks * args.progress_seconds / spent),
                                            int(1e12)))
            if now - last_host >= args.progress_seconds * 0.8:
                panic = console_panicked(outdir)
                if panic:
                    emit("event", event="abnormal", cause=f"guest: {panic}", tick=tick)
                    return 2
                insts = total_insts(board)
                emit("progress", sim_s=round(tick / 1e12, 6), tick=tick, insts=insts,
                     host_s=round(now - start_host, 1),
                     ips=round((insts - last_insts) / max(1e-3, now - last_host)))
                last_host, last_insts = now, insts
            if limit_tick is not None and tick >= limit_tick:
                emit("event", event="limit", what="max-seconds", tick=tick)
                return 3
            if args.max_host_seconds and now - start_host > args.max_host_seconds:
                emit("event", event="limit", what="max-host-seconds", tick=tick)
                return 3
            continue
        if cause == "checkpoint":
            if args.mode != "boot":
                emit("event", event="checkpoint-ignored", tick=tick)
                continue
            args.checkpoint_dir.mkdir(parents=True, exist_ok=True)
            m5.checkpoint(str(args.checkpoint_dir))
            emit("event", event="checkpoint", tick=tick, insts=total_insts(board),
                 host_s=round(time.time() - start_host, 1), dir=str(args.checkpoint_dir))
            return 0
        if cause == "m5_fail instruction encountered" and attribution is not None:
            pid, cpu_i = TaskAttribution.decode(ev.getCode())
            if cpu_i in cpus:
                attribution.switch(cpu_i, pid, core_counters(board, plan, cpu_i))
            continue
        if cause in ("workbegin", "m5_workbegin instruction encountered"):
            switched = fast_forward and board.get_processor().switch_to_detailed()
            if switched:
                emit("event", event="switched", tick=m5.curTick(), cpu=cpu,
                     insts=total_insts(board), host_s=round(time.time() - start_host, 3))
            # After a switch the region starts now, even if the guest reset the statistics
            # itself (on the Atomic cores) just before.
            if switched or args.workitem_stats:
                m5.stats.reset()
            if attribution is not None:
                # Whoever reset the statistics (we, or the guest just before), every CPU
                # starts this region from its current counters.
                attribution.clear()
                for c in cpus:
                    attribution.rebase(c, core_counters(board, plan, c))
            emit("event", event="workbegin", tick=tick, insts=total_insts(board),
                 host_s=round(now - start_host, 3))
            continue
        if cause in ("workend", "m5_workend instruction encountered"):
            if args.workitem_stats:
                m5.stats.dump()
            write_attribution(closing_region=True)
            emit("event", event="workend", tick=tick, insts=total_insts(board),
                 host_s=round(now - start_host, 3))
            if fast_forward and board.get_processor().switch_to_atomic():
                # The detailed cores' statistics stay as they were at the region's end
                # (switched-out cores do not tick); the guest's dumpstats records them.
                emit("event", event="switched", tick=m5.curTick(), cpu="atomic",
                     insts=total_insts(board), host_s=round(time.time() - start_host, 3))
                if attribution is not None:  # counters now come from other cores
                    for c in cpus:
                        attribution.rebase(c, core_counters(board, plan, c))
            continue
        if cause == "m5_exit instruction encountered":
            write_attribution(closing_region=False)
            emit("event", event="exit", tick=tick, insts=total_insts(board),
                 host_s=round(now - start_host, 1), code=ev.getCode())
            return 0 if args.mode == "run" else 2
        emit("event", event="abnormal", cause=cause.strip(), tick=tick, code=ev.getCode())
        return 2


if __name__ == "__m5_main__" or __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.exit(status)
