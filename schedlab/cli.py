"""The command line (``python3 run.py ...``); run.py prepares the environment and calls main()."""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import click
import pandas as pd

from schedlab.analysis.tables import PROVENANCE, table

from schedlab.guest import kernel

from schedlab import paths

from schedlab.guest import characterise, packages, programs, workloads
from schedlab.errors import UserError
from schedlab.backends.gem5.plan import PlanError
from schedlab.machine import (DEFAULT_TICK_HZ, format_cpus, format_size, load_machine,
                              machine_names, machine_ref)
from schedlab.backends.gem5.sampling import PRESETS as SAMPLING_PRESETS
from schedlab.backends.backend import BACKENDS, CPU_MODELS, BackendName, get_backend
from schedlab.campaigns.experiment import SCALES
from schedlab.runs import SCHED_CLASSES, RunRequest, WorkloadRequest, execute, prepare


def _say(message: str) -> None:
    click.echo(message, err=True)


def _format_clock(hz: int) -> str:
    return f"{hz / 1e9:.3g} GHz" if hz >= 10**9 else f"{hz / 1e6:.4g} MHz"


def _pairs(items: tuple[str, ...], what: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{what} {item!r} is not KEY=VALUE")
        out.append((key.strip(), value.strip()))
    return tuple(out)


def machines_file_option(command):
    """``--machines FILE``: the user's own machines, found by name beside the catalogue's."""
    return click.option(
        "--machines", "machines_file", default=None, envvar="SCHEDLAB_MACHINES",
        metavar="FILE", help="A machine file of your own, in configs/machines.toml's form "
        "(an entry may derive from a catalogue machine: base = \"NAME\" plus changes); its "
        "machines are then named like the catalogue's. Default: $SCHEDLAB_MACHINES. "
        "FILE:NAME names one without it.")(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def cli() -> None:
    """Simulate cache- and NUMA-aware OS scheduling studies on gem5 and QEMU.

    Quick start: 'demo' runs a small experiment on the best backend available, 'test' runs the
    test suite. Builds (kernel, image, workloads) happen on demand and are cached.
    """


# ----------------------------------------------------------------------------- machines
@cli.command()
@click.argument("name", required=False)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a catalogue value, e.g. l2.size=8MiB (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the resolved machine as JSON.")
@machines_file_option
def machines(name: str | None, overrides: tuple[str, ...], as_json: bool,
             machines_file: str | None) -> None:
    """List the machine catalogue (and your machine file's), or show one machine as resolved.

    NAME is a catalogue name, a name of --machines FILE, or FILE:NAME.
    """
    if name is None:
        names = [(n, "catalogue") for n in machine_names()]
        if machines_file:
            names += [(machine_ref(n, machines_file), machines_file)
                      for n in machine_names(Path(machines_file))]
        rows = []
        for n, source in names:
            m = load_machine(n, overrides)
            rows.append({"machine": m.name, "cores": m.cores, "clock": _format_clock(m.clock_hz),
                         "pipeline": f"{m.pipeline.kind} x{m.pipeline.width}",
                         "caches": " ".join(
                             f"{c.name}:{format_size(c.size)}"
                             + (f"/{len(c.groups)}" if c.shared else "") for c in m.caches),
                         "nodes": len(m.nodes), "studies": ",".join(map(str, m.studies)),
                         **({"from": source} if machines_file else {})})
        click.echo(pd.DataFrame(rows).to_string(index=False))
        click.echo("\n(cache:size/N = N instances shared by groups of cores; "
                   "'run.py machines NAME' shows one)")
        return
    m = load_machine(machine_ref(name, machines_file), overrides)
    if as_json:
        click.echo(json.dumps(m.to_dict(), indent=1))
        return
    click.echo(f"{m.name}: {m.description}")
    click.echo(f"  cores {m.cores} at {m.clock_hz / 1e6:g} MHz, {m.pipeline.kind}, "
               f"width {m.pipeline.width}")
    click.echo("  packages " + " ".join(f"[{format_cpus(p)}]" for p in m.packages))
    for c in m.caches:
        click.echo(f"  {c.name}: {format_size(c.size)} {c.assoc}-way {c.line} B lines, "
                   f"{c.sets} sets, {c.latency} ({c.latency.cycles(m.clock_hz)} cycles), "
                   f"shared by " + " ".join(f"[{format_cpus(g)}]" for g in c.groups))
    mem = m.memory
    click.echo(f"  memory {format_size(mem.size_per_node)} x {len(m.nodes)} node(s) "
               + " ".join(f"[{format_cpus(n)}]" for n in m.nodes)
               + f", local {mem.local}" + (f", in-node {mem.node}" if mem.node else "")
               + (f", remote {mem.remote_cycles(m.clock_hz)} cycles "
                  f"(delay {mem.delay_cycles})" if mem.remote else ""))
    if m.reserved_cores:
        click.echo(f"  reserved for the system: cores {format_cpus(m.reserved_cores)}")
    if m.tick_hz != DEFAULT_TICK_HZ:
        click.echo(f"  guest kernel tick: {m.tick_hz} Hz (SCHED_RR timeslices are whole ticks of "
                   f"{1000 / m.tick_hz:g} ms)")
    if m.overrides:
        click.echo("  overrides: " + ", ".join(m.overrides))
    if m.notes:
        click.echo("  notes: " + " ".join(m.notes.split()))


# ----------------------------------------------------------------------------- build
@cli.command()
@click.argument("what", type=click.Choice(["kernel", "image", "workloads", "all"]))
def build(what: str) -> None:
    """Build (or find cached) the guest kernel (one per tick rate the catalogue's machines
    use), image or workloads. ``all`` also builds gem5's kernels (the image built in) and
    prints every artefact's hash: the same hashes on two machines mean the same guest."""
    from schedlab.guest.build import build_guest
    from schedlab.guest.image import build_image
    rates = sorted({load_machine(n).tick_hz for n in machine_names()}, reverse=True)
    if what == "all":
        for hz in rates:
            for name, sha in build_guest(hz, progress=_say).items():
                click.echo(f"{hz} Hz  {name:<13} {sha}")
        return
    if what == "workloads":
        click.echo(f"workloads: {programs.build_all(progress=_say)}")
    if what == "kernel":
        for hz in rates:
            k = kernel.build_kernel(progress=_say, tick_hz=hz)
            click.echo(f"kernel {k.hash} ({hz} Hz): {k.bzimage} {k.vmlinux}")
    if what == "image":
        im = build_image(progress=_say)
        click.echo(f"image {im.hash}: {im.initramfs} {im.ext4}")


# ----------------------------------------------------------------------------- run
MAX_METRIC_COLUMNS = 6


def backend_options(command):
    """Where runs run (run, sweep): the backend, gem5's detailed cores, the workload size."""
    for option in reversed((
            click.option("--backend", type=click.Choice(("auto",) + BACKENDS), default="auto",
                         show_default=True, help="auto = gem5 if GEM5 is set, else QEMU."),
            click.option("--cpu", type=click.Choice(CPU_MODELS), default="o3", show_default=True,
                         help="gem5 CPU model to restore into."),
            click.option("--size", default="smoke", show_default=True,
                         help="Workload size class."))):
        command = option(command)
    return command


sampling_option = click.option(
    "--sampling", default=None, metavar="U,W,D|PRESET",
    help="gem5: sampled detailed simulation: inside the region Atomic cores keep the caches "
         "warm and every U instructions (of all cores) W warm-up and D measured instructions "
         "run on --cpu cores; IPC and MPI with confidence intervals. Presets: "
         + ", ".join(SAMPLING_PRESETS) + " (configs/README.md, Sampling).")


def _best_backend() -> str:
    return "gem5" if os.environ.get("GEM5") else "qemu"


@cli.command()
@click.option("--machine", "machine_name", required=True, help="A name from 'run.py machines'.")
@machines_file_option
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a catalogue value, e.g. l2.size=8MiB.")
@click.option("--workload", "workload_names", multiple=True, required=True,
              help="A registry name ('run.py workloads'), or ./prog.c or a program ./prog "
                   "(static, or dynamic: its libraries come with it, as ldd finds them).")
@backend_options
@click.option("--reps", default=1, show_default=True, help="Repetitions of each workload.")
@click.option("--cpus", default=None, help="Pin the workload to these CPUs (e.g. 0 or 0-1).")
@click.option("--sched", type=click.Choice(SCHED_CLASSES), default="other", show_default=True,
              help="Scheduling class of the workload.")
@click.option("--prio", default=0, show_default=True, help="RT priority for fifo/rr.")
@click.option("--duration", type=float, default=None,
              help="Seconds to run a workload that runs until stopped.")
@click.option("--warmup", type=float, default=0.0, show_default=True,
              help="Seconds the workload runs before its region of interest (and --duration) "
                   "begins: its start-up is left out and its caches are warm.")
@click.option("--args", "extra_args", default="", help="Extra workload arguments (one string).")
@click.option("--policy", default=None, help="A policy of kernel-patches/policies.toml "
              "(default: vanilla).")
@click.option("--sysctl", multiple=True, metavar="NAME=VALUE", help="Extra guest sysctl.")
@click.option("--background", multiple=True, help="Workload to run in the background (killed "
              "at the end).")
@click.option("--boot-arg", "boot_args", multiple=True, help="Extra kernel command-line argument.")
@click.option("--numa-from", type=click.Choice(["firmware", "kernel"]), default="firmware",
              show_default=True, help="QEMU: NUMA from ACPI tables or from the kernel parameter.")
@click.option("--timeout", type=float, default=None,
              help="Host seconds for the whole run (default: 1800 on QEMU; 6 hours of gem5's "
                   "CPU time on gem5, so a paused run is not stopped, not counting a first "
                   "boot to the checkpoint). On gem5, when every job has "
                   "a --duration, a region of interest that lasts twice the longest plus "
                   "0.25 s of simulated time also ends the run (a workload that was not "
                   "stopped).")
@click.option("--ready-timeout", default=180.0, show_default=True,
              help="Seconds for the guest to boot to its ready marker.")
@click.option("--attribute-tasks", is_flag=True,
              help="gem5: charge cycles, instructions and cache misses to the tasks that ran "
                   "(per-task IPC and MPI; see configs/README.md).")
@click.option("--fast-forward/--no-fast-forward", default=True, show_default=True,
              help="gem5: run the guest's set-up on Atomic cores and switch to --cpu cores at "
                   "the workload (--no-fast-forward: --cpu cores throughout).")
@click.option("--warm-caches", type=float, default=None, metavar="SECONDS",
              help="gem5 fast-forward: bypass the caches (NonCaching cores, about 1.6 "
                   "times as fast) until SECONDS of guest time before each workload's region, so "
                   "only those last SECONDS of its --warmup warm the caches (default: the "
                   "caches on throughout).")
@click.option("--overlay", "overlays", multiple=True, metavar="DIR",
              help="Place DIR's files at the same paths in the guest (DIR/etc/x -> /etc/x).")
@click.option("--trace-buffer-kb", type=int, default=None, metavar="KIB",
              help="Per-CPU buffer of a policy's scheduler trace (default: "
                   + ", ".join(f"{get_backend(b).trace_buffer_kb} on {b}" for b in BackendName)
                   + "); a long traced run that loses events asks for more.")
@click.option("--trace-function", "trace_functions", multiple=True, metavar="SYMBOL",
              help="Time every call of this kernel function in the run's trace (ftrace's "
                   "function graph tracer; repeat for more, nested calls nest): the "
                   "artifact trace.txt.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The run's seed: the guest's random generator is reseeded from it after "
                   "the restore (address-space layouts), and gem5's is seeded with it. Two "
                   "seeds are two runs.")
@sampling_option
def run(machine_name, machines_file, overrides, workload_names, backend, cpu, size, reps, cpus,
        sched, prio, duration, warmup, extra_args, policy, sysctl, background, boot_args,
        numa_from, timeout, ready_timeout, attribute_tasks, fast_forward, warm_caches,
        overlays, trace_buffer_kb, trace_functions, seed, sampling) -> None:
    """Run workloads on a machine model and write results/<run-id>/."""
    backend = _best_backend() if backend == "auto" else backend
    jobs = _workload_requests(workload_names, size=size, reps=reps, cpus=cpus, sched=sched,
                              prio=prio, extra_args=extra_args, duration=duration,
                              warmup=warmup)
    request = RunRequest(
        machine=machine_ref(machine_name, machines_file), jobs=jobs, backend=backend,
        overrides=overrides, policy=policy, sysctl=_pairs(sysctl, "--sysctl"),
        background=tuple(WorkloadRequest(b) for b in background), boot_args=boot_args,
        cpu=cpu, numa_from=numa_from, timeout=timeout, ready_timeout=ready_timeout,
        attribute_tasks=attribute_tasks, fast_forward=fast_forward, warm_caches=warm_caches,
        overlay=overlays, sampling=sampling, trace_buffer_kb=trace_buffer_kb,
        trace_functions=trace_functions, seed=seed)
    prepared = prepare(request, progress=_say)
    run_dir = execute(prepared, progress=_say)
    _report_run(run_dir, prepared.machine)


def _workload_requests(names: tuple[str, ...], extra_args: str, **options
                       ) -> tuple[WorkloadRequest, ...]:
    """The workloads of --workload, each with the job options given (--args is one
    string, split as a shell would)."""
    import shlex
    try:
        args = tuple(shlex.split(extra_args))
    except ValueError as e:      # an unclosed quote
        raise UserError(f"--args {extra_args!r}: {e} (quote as a shell would, e.g. "
                        f"--args '--seed 3')") from None
    return tuple(WorkloadRequest(w, args=args, **options)
                 for w in names)


def _report_run(run_dir: Path, machine) -> None:
    with open(run_dir / "results.json") as f:
        res = json.load(f)
    frame = table([run_dir])
    fixed = ["machine", "policy", "job", "job_rep", "exit", "wall_s", "migrations"]
    metrics = [c for c in frame.columns
               if c not in fixed and c not in PROVENANCE and c not in res.get("label", {})]
    # gem5's IPC and misses per kilo-instruction first: they are what a gem5 run is for.
    metrics.sort(key=lambda c: 0 if c == "gem5_ipc" else 1 if c.endswith("_mpki") else 2)
    if len(metrics) > MAX_METRIC_COLUMNS:
        click.echo(f"({len(metrics)} metrics per job; the first {MAX_METRIC_COLUMNS} are shown, "
                   f"all are in results.json)")
    click.echo(frame[fixed + metrics[:MAX_METRIC_COLUMNS] + ["ok"]].to_string(index=False))
    # A program's own output (lines that are not key=value), as results.json keeps it.
    max_lines = 20
    for job in res["jobs"]:
        output = job.get("output", [])
        if output:
            click.echo(f"output of {job['job']} rep {job['rep']}:")
            for line in output[:max_lines]:
                click.echo(f"  {line}")
            if len(output) > max_lines:
                click.echo(f"  ... {len(output) - max_lines} more lines in "
                           f"{run_dir / 'results.json'}")
    facts = res["facts"]
    nodes = sorted(k for k in facts if k.startswith("node") and k.endswith(".cpus"))
    click.echo(f"guest saw CPUs {facts.get('cpus.online', '?')}, "
               f"{len(nodes)} NUMA node(s) "
               + " ".join(f"[{facts[k]}]" for k in nodes)
               + f", cpu0 domains {facts.get('cpu0.sched_domains', '?')}")
    if any(j["workload"] == "mixer" for j in res["jobs"]):
        from schedlab.analysis import mixer
        for line in mixer.analyse_run(run_dir, llc_groups=[list(g) for g in machine.llc_groups]):
            click.echo(line)
    if not get_backend(res["backend"]["name"]).timing_model:
        click.echo("note: QEMU runs are functional; IPC and cache misses need the gem5 "
                   "backend (set GEM5=/path/to/gem5.fast, see README)")
    click.echo(f"results: {run_dir}")
    if not res["ok"]:
        raise UserError("the run finished with problems: " + "; ".join(res["errors"][:3]))


# ----------------------------------------------------------------------------- campaigns
def _at_least_one(ctx, param, value):
    """--jobs: refused below 1 whichever executor runs the campaign (SLURM took 0 for its
    default)."""
    if value is not None and value < 1:
        raise UserError(f"--jobs must be at least 1, not {value}")
    return value


def campaign_options(command):
    """How a campaign runs (reproduce, sweep): where, how many at once, or not at all."""
    for option in reversed((
            click.option("--jobs", type=int, default=None, callback=_at_least_one,
                         help="Runs at once (default: the host's cores, bounded by memory; "
                              "SLURM: the array's concurrency limit, default 8)."),
            click.option("--executor", type=click.Choice(["local", "slurm"]), default="local",
                         show_default=True, help="Run on this host, or as one SLURM job array."),
            click.option("--partition", default=None, help="SLURM: the partition to submit to."),
            click.option("--time-limit", "time_limit_min", type=int, default=360,
                         show_default=True, help="SLURM: minutes each array task (one run) "
                                                 "may take."),
            click.option("--dry-run", is_flag=True,
                         help="Print the runs and their cost; run nothing."))):
        command = option(command)
    return command


def _listing() -> list[dict]:
    from schedlab.campaigns import listing
    return listing.rows(say=_say)


@cli.command()
@click.argument("figures", nargs=-1)
@click.option("--study", default=None,
              help="Every figure and table of one study (kazempour, demarchi, lee, brecht; "
                   "demo).")
@click.option("--list", "show_list", is_flag=True,
              help="List every figure and table of the four studies with its runs and cost.")
@click.option("--plan", "show_plan", is_flag=True,
              help="Print the re-make's plan (docs/remake.md): every figure in the order "
                   "the re-make runs it, with its runs, repetitions, price and the "
                   "smallest difference its repetitions resolve.")
@click.option("--scale", type=click.Choice(SCALES), default="smoke",
              show_default=True, help="smoke: every condition, reduced; paper: the paper's.")
@click.option("--backend", type=click.Choice(("auto",) + BACKENDS), default="gem5",
              show_default=True, help="gem5 (timing, the figures' metrics) or qemu "
              "(placement only); auto = gem5 if GEM5 is set, else qemu.")
@campaign_options
@click.option("--from-committed", is_flag=True,
              help="Draw from the committed tables (data/) even where gem5 could run.")
@click.option("--partial", is_flag=True,
              help="Draw from the runs finished so far in the results store (a campaign "
                   "still running or interrupted); starts no simulation, writes nothing to "
                   "data/ unless --carry.")
@click.option("--carry", is_flag=True,
              help="With --partial: also keep the finished runs' tables in data/<study>/"
                   "partial/ (commit them); a later 'reproduce' of the same code, on any "
                   "host, counts those runs as done and runs only the others.")
@click.option("--only", multiple=True, metavar="KEY=V[,KEY=V...]",
              help="Make just the runs whose labels have these coordinates (repeat for "
                   "more), then draw what has finished as --partial does; with --dry-run, "
                   "list their run ids and which are reused.")
@click.option("--verify", "verify_count", type=click.IntRange(min=1), default=None,
              metavar="N", help="Re-make N committed runs in a store of their own and "
              "compare every simulated column with the committed rows (exit 1 if any "
              "differs).")
def reproduce(figures, study, show_list, show_plan, scale, backend, jobs, executor,
              partition, time_limit_min, dry_run, from_committed, partial, carry, only,
              verify_count):
    """Regenerate figures or tables of the papers (run.py reproduce --list names them).

    Runs what is not finished yet (resumable: rerun after an interruption), gathers the
    results into compact tables and draws each figure. Several figures (or --study) run as
    one campaign, each shared run once. Without GEM5, gem5 figures are drawn from the
    committed tables in data/.
    """
    from schedlab.campaigns import reproduce as R
    from schedlab.campaigns.experiment import registry
    figures = list(figures)
    if study:
        studies = sorted({e.study for e in registry().values()})
        if study not in studies:
            raise UserError(f"unknown study {study!r}; choose one of {', '.join(studies)}")
        figures += [n for n, e in registry().items() if e.study == study and n not in figures]
    if show_plan:
        from schedlab.campaigns import remake
        click.echo(remake.markdown(remake.plan(scale)))
        return
    if show_list or not figures:
        frame = pd.DataFrame(_listing())
        frame["hours_smoke"] = frame["hours_smoke"].map(lambda h: f"{h:.1f}" if h == h else "?")
        frame["hours_paper"] = frame["hours_paper"].map(lambda h: f"{h:.0f}" if h == h else "?")
        frame["status"] = frame["status"].str.slice(0, 60)
        click.echo(frame.drop(columns=["title"]).to_string(index=False))
        click.echo("\n(host hours, one run at a time on one core: model = from bench/ "
                   "speeds; measured = the committed smoke runs' median gem5 host time; "
                   "calibrated = the model scaled by what the smoke runs took against it; "
                   "study = no runs of its own: the model scaled by what its study's "
                   "committed runs took against it; ?: no bench/ record for the machine; "
                   "'run.py reproduce NAME --dry-run' explains one. committed: whether "
                   "today's tree computes the run ids of the committed smoke table "
                   "(current) or earlier code made it (stale), and the commit that wrote "
                   "it)")
        return
    backend = _best_backend() if backend == "auto" else backend
    from schedlab.campaigns.experiment import get
    from schedlab.campaigns.verify import parse_only
    selectors = parse_only(only)
    if (selectors or verify_count) and len(figures) != 1:
        raise UserError("--only and --verify take one figure (e.g. 'reproduce lee-fig24 "
                        "--verify 1')")
    if verify_count:
        verified = R.verify_figure(figures[0], verify_count, scale, backend, _say)
        for line in verified.lines():
            click.echo(line)
        if not verified.identical:
            sys.exit(1)
        return
    if dry_run and selectors:
        for line in R.describe_only(figures[0], selectors, scale, backend):
            click.echo(line)
        return
    if dry_run:
        for figure in figures:
            for line in R.describe(get(figure), scale, backend):
                click.echo(line)
        if len(figures) > 1:
            shared = R.shared_requests(figures, scale, backend)
            from schedlab.campaigns.calibration import run_seconds_estimate
            estimate = run_seconds_estimate(figures, scale, backend)
            hours = (sum(estimate(r) for r in shared) / 3600.0 if backend == BackendName.GEM5
                     else math.nan)
            click.echo(f"together: {len(shared)} distinct runs"
                       + (f", estimated {hours:.1f} host hours (one run at a time; each "
                          f"priced as its figure above)" if hours == hours else ""))
        return
    if partial and from_committed:
        raise UserError("--partial and --from-committed exclude each other: --partial draws "
                        "from the results store, --from-committed from data/")
    if carry and not partial:
        raise UserError("--carry keeps the runs finished so far for another host; use it "
                        "with --partial")
    outs = R.reproduce_many(figures, scale, backend, jobs=jobs, executor=executor, say=_say,
                            source="partial" if partial else "committed" if from_committed
                            else "auto",
                            slurm={"partition": partition, "time_limit_min": time_limit_min},
                            carry=carry, only=selectors)
    for out in outs:
        click.echo(f"figure ({out.source}, {out.runs} runs): {out.figure}")


@cli.command()
@click.option("--machine", "machine_name", required=True, help="A name from 'run.py machines'.")
@machines_file_option
@click.option("--set", "settings", multiple=True, metavar="KEY=V1,V2,...",
              help="A parameter to sweep (two or more values: every combination of the "
                   "swept ones is a point) or to fix (one value), e.g. l2.size=1MiB,2MiB,4MiB.")
@click.option("--workload", "workload_names", multiple=True, required=True,
              help="A registry name ('run.py workloads'); repeat for several per run.")
@click.option("--policy", default=None, metavar="P[,P...]",
              help="A policy of kernel-patches/policies.toml, or several (swept).")
@backend_options
@click.option("--reps", default=3, show_default=True,
              help="Repetitions of each workload in each run (the whiskers' n).")
@click.option("--cpus", default=None, help="Pin the workloads to these CPUs (e.g. 0 or 0-1).")
@click.option("--duration", type=float, default=None,
              help="Seconds to run a workload that runs until stopped.")
@click.option("--args", "extra_args", default="", help="Extra workload arguments (one string).")
@click.option("--attribute-tasks", is_flag=True,
              help="gem5: per-task IPC and misses (metrics task_ipc, task_llc_mpi, ...).")
@click.option("--metric", default=None,
              help="The results column to plot (default: gem5_ipc on gem5, wall_s, the "
                   "elapsed time, on QEMU); a wrong name lists the columns there are.")
@click.option("--name", default=None,
              help="Names the table and figure (default: MACHINE--KEYS).")
@sampling_option
@campaign_options
def sweep(machine_name, machines_file, settings, workload_names, policy, backend, cpu, size,
          reps, cpus, duration, extra_args, attribute_tasks, sampling, metric, name, jobs,
          executor, partition, time_limit_min, dry_run):
    """Run a grid of machine parameters (and policies) and plot a metric over it.

    Every combination of the swept values is one run, through the same executors as
    'reproduce' (resumable: finished points are reused). The table goes to
    results/sweeps/NAME.{parquet,csv}, the plot to results/figures/NAME.png.

    Example: run.py sweep --machine clovertown-e5320 --workload memlat --cpus 0
    --set l2.size=1MiB,2MiB,4MiB,8MiB --set l2.assoc=8,16
    """
    from schedlab.campaigns.cost import campaign_host_hours
    from schedlab.campaigns.sweep import Sweep, default_name, parse_settings, run_sweep
    backend = _best_backend() if backend == "auto" else backend
    axes, fixed = parse_settings(settings, policy)
    machine = machine_ref(machine_name, machines_file)
    definition = Sweep(
        name=name or default_name(load_machine(machine).name, axes), machine=machine,
        axes=axes, fixed=fixed, backend=backend, cpu=cpu, attribute_tasks=attribute_tasks,
        sampling=sampling, policy=None if policy and "," in policy else policy,
        jobs=_workload_requests(workload_names, size=size, reps=reps, cpus=cpus,
                                extra_args=extra_args, duration=duration))
    requests = definition.requests()
    if dry_run:
        hours = campaign_host_hours(requests)
        click.echo(f"{definition.name}: {len(requests)} runs on {backend}, estimated "
                   + (f"{hours:.1f} host hours (one at a time)" if hours == hours
                      else "host time unknown"))
        for point in definition.points():
            click.echo("  " + " ".join(f"{k}={v}" for k, v in point.items()))
        return
    out = run_sweep(definition, metric, jobs=jobs, executor=executor, say=_say,
                    slurm={"partition": partition, "time_limit_min": time_limit_min})
    click.echo(f"table ({out.runs} runs): {out.table} (and {out.csv.name})")
    click.echo(f"figure: {out.figure}")


@cli.command()
def report() -> None:
    """Write one HTML page with every figure regenerated so far; print its path."""
    from schedlab.analysis.report import build_report
    click.echo(f"report: {build_report(_listing())}")


@cli.command()
@click.option("--jobs", type=int, default=None, help="Runs at once (default: the host's cores).")
def demo(jobs) -> None:
    """The main job: every figure from the committed results, a live campaign, a report."""
    from schedlab.analysis.report import build_report
    from schedlab.campaigns import reproduce as R
    from schedlab.campaigns.locations import available_committed
    committed = available_committed()
    _say(f"demo: drawing {len(committed)} figure(s) from the committed gem5 results")
    for name, scale in committed:
        out = R.reproduce(name, scale, "gem5", say=_say, source="committed")
        click.echo(f"figure (committed): {out.figure}")
    backend = _best_backend()
    if backend == BackendName.GEM5:
        from schedlab.backends.gem5.binary import find_gem5
        find_gem5()
        _say("demo: GEM5 is set, so the live campaign runs on gem5")
    else:
        _say("demo: GEM5 is not set, so the live campaign runs on QEMU (functional: "
             "placement and migrations; cache metrics need gem5, see README)")
    out = R.reproduce("demo-affinity", "smoke", backend, jobs=jobs, say=_say)
    click.echo(f"figure (live, {backend}): {out.figure}")
    click.echo(f"report: {build_report(_listing())}")


# ----------------------------------------------------------------------------- workloads
def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


@cli.command("workloads")
@click.argument("name", required=False)
@click.option("--characterise", "do_char", is_flag=True,
              help="Re-run cachegrind (smoke size) for NAME, or for every workload, and store it.")
@click.option("--build", "do_build", is_flag=True,
              help="Build every workload and print the overlay.")
@click.option("--lock", "do_lock", is_flag=True,
              help="A real program (NAME): pin its Debian packages at the versions apt's index "
                   "has now, in workloads/NAME/packages.lock (renames the runs that use it).")
@click.option("--real", "do_real", is_flag=True,
              help="The real programs beside the stand-ins they replace (Markdown table).")
def workloads_command(name: str | None, do_char: bool, do_build: bool, do_lock: bool,
                      do_real: bool) -> None:
    """List the workloads with their cache characterisation, or show one in detail."""
    if do_real:
        from schedlab.campaigns.programs import TABLE_MACHINE, comparison_table
        click.echo(f"cachegrind at smoke size on {TABLE_MACHINE}'s caches "
                   f"(workloads/characterisation.json):")
        click.echo(comparison_table())
        return
    if do_build:
        click.echo(programs.build_all(click.echo))
        return
    registry = workloads.load_registry()
    if name is not None and name not in registry:
        raise UserError(f"unknown workload '{name}'; run 'python3 run.py workloads' to list them")
    if do_lock:
        if name is None or not registry[name].is_real_program:
            raise UserError("--lock takes the name of a real program (a workload with a "
                            "[program] table)")
        w = registry[name]
        click.echo(packages.make_lock(w.dir, w.program, progress=click.echo))
        return
    if do_char:
        characterise.characterise([name] if name else None, progress=click.echo)
    chars, made_from = characterise.load_characterisation(with_sources=True)
    stale = {n for n, w in registry.items() if n in chars and made_from.get(n) != w.content_hash()}
    machines = sorted({m for c in chars.values() for m in c})
    if name is None:
        header = f"{'name':<15} {'studies':<8} {'kind':<12}"
        for m in machines:
            header += f" {m[:18] + ' I1/D1/LL':<34}"
        click.echo(header + " summary")
        for n, w in registry.items():
            row = f"{n:<15} {','.join(map(str, w.studies)):<8} {w.kind:<12}"
            for m in machines:
                c = chars.get(n, {}).get(m)
                cell = ("/".join(_pct(c[k]) for k in ("i1_miss_rate", "d1_miss_rate",
                                                      "ll_miss_rate")) if c else "not measured")
                row += f" {cell:<34}"
            click.echo(row + " " + w.summary + (" [characterisation stale]" if n in stale else ""))
        if stale:
            click.echo("stale: sources changed since measured; "
                       "python3 run.py workloads NAME --characterise")
        if not chars:
            click.echo("(no characterisation yet: python3 run.py workloads --characterise)")
        return
    w = registry[name]
    click.echo(f"name:        {w.name}")
    click.echo(f"summary:     {w.summary}")
    click.echo(f"kind:        {w.kind}")
    click.echo(f"studies:     {', '.join(map(str, w.studies))}")
    click.echo(f"substitutes: {w.substitutes or '-'}")
    if w.is_real_program:
        debs = packages.read_lock(w.dir)
        click.echo(f"program:     {w.program.path} from "
                   f"{', '.join(f'{d.name}={d.version}' for d in debs)}")
    else:
        click.echo(f"sources:     {', '.join(w.sources)}   "
                   f"ldflags: {' '.join(w.ldflags) or '-'}")
    if w.notes:
        click.echo(f"notes:       {w.notes}")
    for s in w.sizes:
        tail = "   (runs until SIGTERM/SIGINT)" if not w.stops_by_itself(s) else ""
        if w.is_real_program:
            argv, stdin, stdout = w.command(s)
            redirect = (f" <{stdin}" if stdin else "") + (f" >{stdout}" if stdout else "")
            click.echo(f"size {s}: {' '.join(argv)}{redirect}")
            for n, d in w.inputs(s).items():
                click.echo(f"    input {n}: " + ", ".join(f"{k}={v}" for k, v in d.items()))
        else:
            click.echo(f"size {s}: {w.name} {' '.join(w.args(s))}{tail}")
        exp = w.expect(s)
        if exp:
            click.echo("    check: " + ", ".join(f"{k}={v}" for k, v in exp.items()))
    c = chars.get(name)
    if name in stale:
        click.echo("characterisation is stale (sources changed since it was measured)")
    if not c and w.kind == "driver":
        click.echo("characterisation: none (a driver: see the workloads it runs)")
    elif not c:
        click.echo(f"characterisation: none (python3 run.py workloads {name} --characterise)")
    for m, r in sorted((c or {}).items()):
        click.echo(f"cachegrind on {m} (smoke): I1 {_pct(r['i1_miss_rate'])}  "
                   f"D1 {_pct(r['d1_miss_rate'])}  LL {_pct(r['ll_miss_rate'])} of refs  "
                   f"(LL local {_pct(r['ll_local_miss_rate'])}, {r['ll_mpki']:.2f} MPKI, "
                   f"{r['instructions']:,} instructions)")


# ----------------------------------------------------------------------------- boot
@cli.command("boot")
@click.option("--machine", "machine_name", required=True, help="A name from 'run.py machines'.")
@machines_file_option
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a catalogue value, e.g. --set l2.size=8MiB.")
@click.option("--cpu", type=click.Choice(["atomic", "kvm"]), default="atomic",
              show_default=True, help="Boot cores (kvm only where /dev/kvm runs guests).")
def boot(machine_name, machines_file, overrides, cpu):
    """gem5: boot a machine to the runner's ready marker and keep a checkpoint."""
    from schedlab.backends.gem5.binary import probe
    from schedlab.backends.gem5.checkpoint import GuestKernel, ensure_checkpoint
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.guest.image import build_image
    spec = load_machine(machine_ref(machine_name, machines_file), overrides)
    machine = spec.to_dict()
    plan = plan_from_dict(machine)    # bad input is reported before prerequisites
    binary = probe()
    click.echo(plan.describe())
    image = build_image(progress=_say)
    built = kernel.build_kernel(initramfs=image.initramfs, progress=_say, tick_hz=spec.tick_hz)
    cpt, _ = ensure_checkpoint(machine, plan, GuestKernel(built.vmlinux, built.hash, image.hash),
                               progress=click.echo, cpu=cpu, binary=binary)
    click.echo(f"checkpoint: {cpt}")


# ----------------------------------------------------------------------------- test
@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def test(pytest_args: tuple[str, ...]) -> None:
    """Run the test suite (pytest); extra arguments go to pytest."""
    if not os.environ.get("GEM5"):
        _say("test: GEM5 is not set, so tests that need gem5 are skipped (reasons below)")

    # Test files or node ids given: only those (made absolute: pytest runs in the
    # repository); otherwise the whole suite.
    def resolved(arg: str) -> str:
        path, sep, node = arg.partition("::")
        if arg.startswith("-") or not Path(path).exists():
            return arg
        return str(Path(path).resolve()) + sep + node
    args = [resolved(a) for a in pytest_args]
    targets = [a for a in args if Path(a.partition("::")[0]).is_absolute()]
    cmd = [sys.executable, "-m", "pytest", "-ra",
           *([] if targets else [str(paths.REPO / "tests")]), *args]
    sys.exit(subprocess.call(cmd, cwd=paths.REPO))


# ----------------------------------------------------------------------------- doctor
@cli.command()
def doctor() -> None:
    """Check the prerequisites: gem5, kernel source, QEMU, toolchain."""
    rows: list[tuple[str, str, str]] = []
    pin = paths.versions()["kernel"]
    try:
        kernel.source_tarball()
        rows.append(("kernel source", f"ok ({pin['package']} {pin['version']})", ""))
    except UserError as e:
        rows.append(("kernel source", "missing", str(e)))
    qemu_path = shutil.which("qemu-system-x86_64")
    if qemu_path:
        version = subprocess.run([qemu_path, "--version"], capture_output=True,
                                 text=True).stdout.splitlines()[0]
        rows.append(("qemu", f"ok ({version})", ""))
    else:
        rows.append(("qemu", "missing", "apt-get install qemu-system-x86"))
    for tool, package in (("gcc", "gcc"), ("make", "make"), ("busybox", "busybox-static"),
                          ("mke2fs", "e2fsprogs"), ("valgrind", "valgrind")):
        rows.append((tool, "ok" if shutil.which(tool) else "missing",
                     "" if shutil.which(tool) else f"apt-get install {package}"))
    libc_static = Path("/usr/lib/x86_64-linux-gnu/libc.a").is_file()
    rows.append(("static libc", "ok" if libc_static else "missing",
                 "" if libc_static else "apt-get install libc6-dev"))
    from schedlab.backends.gem5 import binary
    rows += binary.doctor()
    width = max(len(r[0]) for r in rows)
    for item, status, fix in rows:
        click.echo(f"{item:<{width}}  {status}" + (f"  -> {fix}" if fix else ""))
    # Not ready: a required item missing, or gem5 named by GEM5 but unusable. gem5 not set
    # (runs use QEMU) and the optional rows are no failure.
    problems = [item for item, status, _ in rows if "(optional)" not in item
                and not status.startswith(("ok", "not set"))]
    if problems:
        raise UserError(f"not ready: {', '.join(problems)} (the fix is on each line above)")


def _interrupt(signum, frame) -> None:
    # Once: a second SIGTERM (a process group killed, a batch system that repeats itself)
    # would interrupt the clean-up this one starts (staging removed, workers stopped).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    # SIGTERM (a batch system, kill) stops a command as Ctrl-C does, cleanly; a command
    # started in the background by a script has SIGINT ignored, so SIGTERM is its way.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        cli.main(args=argv, prog_name="run.py", standalone_mode=False)
    except click.exceptions.Abort:
        _say("interrupted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except (UserError, PlanError) as e:
        _say(f"error: {e}")
        sys.exit(1)
    except OSError as e:
        # A full disk or a read-only results directory met mid-command: one line; the
        # results written so far were published atomically, and staging is cleaned.
        if e.errno == errno.ENOSPC:
            _say(f"error: no space left on the device of {e.filename or 'a file being written'}"
                 f"; free some (or point SCHEDLAB_RESULTS / SCHEDLAB_CACHE elsewhere) and rerun")
        elif e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            _say(f"error: cannot write {e.filename}: {e.strerror}; point SCHEDLAB_RESULTS "
                 f"(results) or SCHEDLAB_CACHE (builds) at a writable directory")
        else:
            raise
        sys.exit(1)
    except KeyboardInterrupt:
        _say("interrupted")
        sys.exit(130)


@cli.command()
@click.argument("wanted", nargs=-1, metavar="[STUDY|ID]...")
@click.option("--plain", is_flag=True, help="Plain text, one claim a block, not a table.")
def claims(wanted: tuple[str, ...], plain: bool) -> None:
    """The claims ledger (data/claims.toml): each published result, ours from the committed
    tables (no gem5), the verdict and its mechanism."""
    from schedlab.analysis import claims as ledger
    rows = [ledger.evaluate(c) for c in ledger.select(ledger.load_ledger(), wanted)]
    if plain or not sys.stdout.isatty():
        for r in rows:
            c = r.claim
            click.echo(f"{c.id} ({c.figure}) {r.verdict}"
                       + (f" [stale table: {', '.join(r.stale)}]" if r.stale else ""))
            click.echo(f"  paper: {c.numbers}")
            for o in r.outcomes:
                click.echo(f"  - {o.rule.what}: {o.verdict}; {o.ours or o.why}"
                           + (f" ({o.why})" if o.ours else ""))
            click.echo(f"  mechanism: {c.mechanism}")
        return
    from rich.console import Console
    from rich.table import Table
    table = Table(show_lines=True)
    for name in ("ID", "paper", "ours (n per condition, 95 % interval)", "verdict",
                 "mechanism"):
        table.add_column(name, overflow="fold")
    for r in rows:
        c = r.claim
        ours = "\n".join(f"{o.rule.what}: {o.ours or '—'} → {o.verdict} ({o.why})"
                         for o in r.outcomes)
        stale = f"\nstale table: {', '.join(r.stale)}" if r.stale else ""
        table.add_row(f"{c.id}\n{c.figure}", c.numbers, ours, r.verdict + stale, c.mechanism)
    Console().print(table)
