"""gem5 full system as a :class:`schedlab.backends.backend.Backend` (host side only; gem5's
Python never imports this module).

A prepared run becomes a typed :class:`Gem5Job` (:func:`gem5_job`), which
:func:`schedlab.backends.gem5.run.run` restores from the machine's boot checkpoint and runs;
:meth:`Gem5Backend.collect` folds each region of interest's statistics, the per-task
attribution and the sampled windows into the run's result rows.
"""

from __future__ import annotations

import dataclasses

import math
import tempfile
from pathlib import Path

from schedlab.backends.backend import BackendName, Progress, cpu_model
from schedlab.backends.gem5.plan import plan_from_dict
from schedlab.backends.gem5.stats import region_metrics, task_metrics
from schedlab.errors import UserError
from schedlab.guest import kernel
from schedlab.guest.protocol import parse_console

# A gem5 region of interest whose jobs all have a duration is an overrun (a workload that was
# not stopped) past twice the longest duration plus this grace: a stopped workload takes its
# signal in its next turn, at most one quantum of a task sharing its CPU later (the studies'
# longest quantum is 200 ms). Without it a hung region would simulate up to the timeout.
REGION_GRACE_S = 0.25


def region_limit(request) -> float | None:
    """Simulated seconds after which a gem5 region of interest is an overrun, or None when
    a job runs to its own end (nothing bounds its region)."""
    if not request.jobs or any(j.duration is None for j in request.jobs):
        return None
    return 2 * max(j.duration for j in request.jobs) + REGION_GRACE_S


def sampling_plan(request):
    """The request's sampling schedule (or None), checked against its backend and cores."""
    if request.sampling is None:
        return None
    from schedlab.backends.gem5.sampling import parse_sampling
    if request.backend != BackendName.GEM5:
        raise UserError("--sampling needs the gem5 backend (--backend gem5): it switches "
                        "gem5's core models")
    if not request.fast_forward or request.cpu == "atomic":
        raise UserError("--sampling switches Atomic cores to detailed ones: it needs "
                        "--fast-forward and --cpu timing or o3 (--cpu atomic alone is the "
                        "misses-only mode)")
    try:
        return parse_sampling(request.sampling)
    except ValueError as e:
        raise UserError(str(e)) from None


def check_sampling(request, machine):
    """The request's sampling schedule (or None), refused where it cannot hold: off gem5,
    without detailed cores, or where a job's region is expected to hold fewer than
    MIN_WINDOWS windows (its instructions estimated as the campaign costs do: cachegrind's
    count, or the duration at IPC 1), too few for a confidence interval. A region that
    turns out shorter than estimated marks the run not ok instead (sampled_rows)."""
    from schedlab.backends.gem5.sampling import MIN_WINDOWS
    from schedlab.guest.work import busy_cpus, region_instructions
    sampling = sampling_plan(request)
    if sampling is None:
        return None
    for job in request.jobs:
        insts = region_instructions(job, machine.clock_hz,
                                    busy_cpus(request, job, machine.cores))
        if insts < MIN_WINDOWS * sampling.period:
            raise UserError(
                f"--sampling {sampling.text()}: {job.workload} ({job.size}) has about "
                f"{insts / 1e6:.1f} M instructions per region, room for "
                f"{int(insts // sampling.period)} windows, not {MIN_WINDOWS}: give a "
                f"period of at most {int(insts // MIN_WINDOWS)} (e.g. smarts-dense) or "
                f"run it without sampling")
    return sampling


def gem5_job(prepared, progress: Progress = print, **changes):
    """The typed gem5 job of a prepared run (``changes``: RunSettings fields, e.g. the
    overhead benchmark's ``hierarchy``)."""
    from schedlab.backends.gem5.checkpoint import GuestKernel
    from schedlab.backends.gem5.options import RunSettings
    from schedlab.backends.gem5.run import Gem5Job
    req = prepared.request
    # gem5's X86 loader takes no separate initrd: the kernel with the image built in (a
    # cached relink).
    with_image = kernel.build_kernel(initramfs=prepared.image.initramfs, progress=progress,
                                     tick_hz=prepared.machine.tick_hz)
    with tempfile.TemporaryDirectory(prefix="schedlab-payload-") as tmp:
        payload = prepared.write_payload(Path(tmp) / "payload.cpio", progress).read_bytes()
    settings = RunSettings(
        # The launcher brackets each job with resetstats/workbegin ... workend/dumpstats
        # itself, so gem5's script must not add a second dump per work item; nothing
        # reads the whole run's dump at exit (on Hector half of a 13 MB stats.txt).
        workitem_stats=False, exit_stats=False, attribute_tasks=req.attribute_tasks,
        fast_forward=req.fast_forward, bypass_caches=req.warm_caches is not None,
        sampling=sampling_plan(req).text() if req.sampling else None, seed=req.seed,
        max_region_seconds=region_limit(req) or 0.0)
    return Gem5Job(
        machine=prepared.machine.to_dict(), plan=prepared.plan, cpu=req.cpu,
        kernel=GuestKernel(with_image.vmlinux, with_image.hash, prepared.image.hash),
        kernel_args=tuple(prepared.spec["kernel_command_line"]),
        readfile=payload, timeout=req.timeout or GEM5_BACKEND.default_timeout_s,
        settings=dataclasses.replace(settings, **changes),
        config_hash=prepared.spec["gem5_config"])


def sampled_rows(rows: list[dict], sampling: dict) -> list[str]:
    """A sampled run's rows: IPC, CPI and misses per instruction of each region's measured
    windows with their confidence intervals (``gem5``; the busiest CPU's IPC as for full
    runs, and per CPU and per task in ``gem5_sampling``; with attribution the job's own in
    ``gem5_task``). The region's statistics dump counts the Atomic and detailed cores
    apart, so of it only the simulated time is kept and the misses over the whole region
    per instruction of every core (``<cache>_mpki_region``: the misses-only estimate of
    the functionally warmed caches, no sampling error). A region with fewer than
    MIN_WINDOWS windows is a problem of the run."""
    from schedlab.backends.gem5.sampling import MIN_WINDOWS
    from schedlab.backends.gem5.sampling_stats import region_estimates, results_metrics
    problems = []
    regions = sampling.get("regions", [])
    if len(regions) != len(rows):
        problems.append(f"gem5 sampled {len(regions)} regions for {len(rows)} job results")
    period = sampling["plan"]["period"]
    for row, region in zip(rows, regions):
        summary = region_estimates(region, sampling.get("llc", "llc"))
        whole, insts = row.get("gem5", {}), summary["region_insts"]
        metrics = {"sim_seconds": whole.get("sim_seconds", math.nan), "insts": insts}
        for key, value in whole.items():
            if key.endswith("_misses"):
                metrics[key] = value
                metrics[key[:-len("_misses")] + "_mpki_region"] = (
                    1000.0 * value / insts if insts else math.nan)
        row["gem5"] = {**metrics, **results_metrics(summary)}
        row["gem5_sampling"] = summary
        mine = summary["tasks"].get(str(row.get("pid")))
        if mine is not None:
            row["gem5_task"] = mine
        if summary["windows"] < MIN_WINDOWS:
            problems.append(
                f"{row['job']} rep {row['rep']}: its region of {insts} instructions held "
                f"{summary['windows']} sampled windows at a period of {period}, fewer than "
                f"{MIN_WINDOWS}: its intervals are not usable; sample with a shorter period "
                f"or run it without sampling")
    return problems


class Gem5Backend:
    """Restores the machine's boot checkpoint into detailed cores and runs the guest spec."""

    name = BackendName.GEM5
    timing_model = True
    attributes_tasks = True
    # A detailed run of a large machine (Hector's 16 cores) takes hours; a first boot to the
    # checkpoint is not counted.
    default_timeout_s = 6 * 3600.0
    # A gem5 run simulates milliseconds to a second, a few thousand switches per CPU at most
    # (about 100 B each), and every buffer page costs simulated allocation work at each run's
    # start and guest memory (Hector's stations have 96 MiB). This size is allocated once
    # before the boot checkpoint (disk-images/rootfs/init, GEM5_TRACE_BUFFER_KB), so a run
    # pays nothing for it.
    trace_buffer_kb = 1024

    def check(self, request) -> None:
        cpu_model(request.cpu)
        if request.guest_clock != "host":
            raise UserError("the icount guest clock is QEMU's; gem5's guest clock is simulated "
                            "and no host load reaches it")
        if request.warm_caches is not None:
            if not request.fast_forward or request.cpu == "atomic":
                raise UserError("--warm-caches bypasses the caches while gem5 fast-forwards: "
                                "it needs --backend gem5 with --fast-forward and --cpu timing "
                                "or o3")

    def boot_args(self, request, machine) -> list[str]:
        return []          # the board plan gives the topology (checkpoint.run_kernel_args)

    def identity(self, request, machine, boot_args: list[str]):
        from schedlab.backends.gem5.binary import config_hash
        from schedlab.backends.gem5.checkpoint import run_kernel_args
        plan = plan_from_dict(machine.to_dict())
        return ({"cpu": request.cpu, "numa_from": None, "fast_forward": request.fast_forward,
                 "kernel_command_line": run_kernel_args(machine.to_dict(), plan, boot_args),
                 "gem5_config": config_hash()}, plan)

    def execute(self, prepared, out: Path, progress: Progress) -> tuple[str, dict]:
        from schedlab.backends.gem5.run import run
        from schedlab.backends.gem5.topology import topology_problems
        job = gem5_job(prepared, progress)
        outcome = run(job, out, progress)
        # One region of interest per job repetition, in the order the guest ran them.
        requesters = prepared.plan.memory.requesters
        regions = [region_metrics(d, requesters) for d in outcome["stats"]
                   if d.get("schedlab.roi")]
        attribution = (outcome.get("attribution") or {}).get("regions")
        report = parse_console(outcome["console"], prepared.guest.nonce)
        topology = topology_problems(prepared.plan, job.machine, report.facts)
        return outcome["console"], {"name": "gem5", "cpu": job.cpu,
                                    "booted": {"vmlinux": job.kernel.vmlinux_sha},
                                    "stats_dumps": len(outcome["stats"]),
                                    "regions": regions, "attribution": attribution,
                                    "sampling": outcome.get("sampling"),
                                    "topology_problems": topology,
                                    "artifacts": outcome.get("artifacts", {})}

    def collect(self, prepared, rows: list[dict], info: dict) -> list[str]:
        """Each region's statistics (and the job's own, charged at its context switches)
        into its row; a sampled run's windows in place of the region's numbers."""
        errors = [f"the guest's topology differs from the model: {p}"
                  for p in info.pop("topology_problems", [])]
        regions = info.pop("regions", None)
        attribution = info.pop("attribution", None)
        if regions is not None:
            if len(regions) != len(rows):
                errors.append(f"gem5 recorded {len(regions)} regions of interest for "
                              f"{len(rows)} job results")
            for i, (row, region) in enumerate(zip(rows, regions)):
                row["gem5"] = region
                if attribution is not None and i < len(attribution):
                    row["tasks"] = attribution[i]
                    mine = attribution[i].get(str(row.get("pid")))
                    if mine is not None:  # the job's main thread, charged at its switches
                        row["gem5_task"] = task_metrics(mine)
        sampling = info.pop("sampling", None)
        if sampling is not None:
            errors += sampled_rows(rows, sampling)
        return errors


GEM5_BACKEND = Gem5Backend()
