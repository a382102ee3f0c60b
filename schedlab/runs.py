"""Runs: from a request (machine, workloads, policy, backend) to ``results/<run-id>/``.

A request is resolved into a *run spec*: plain data naming everything the outcome depends on
(the machine as resolved, the kernel and image hashes, the exact guest command lines, the
policy's settings, the backend). The run id is a hash of the spec, so the same spec is the
same run: executing it again finds the finished directory and does nothing, which is what lets
an interrupted campaign resume without losing or duplicating runs. A run directory is written
in a temporary place and renamed when complete, so it is either whole or absent.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shlex
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from schedlab.guest import kernel

from schedlab.guest import numa, policies, programs

from schedlab import paths

from schedlab.backends import qemu

from schedlab.guest import workloads
from schedlab.errors import UserError
from schedlab.backends.gem5.plan import CPU_TYPES, BoardPlan, plan_from_dict
from schedlab.backends.gem5.stats import region_metrics, task_metrics
from schedlab.guest.protocol import GUEST_BIN, GuestJob, GuestSpec, parse_console
from schedlab.guest.image import GuestImage, build_image, planned_image, write_cpio
from schedlab.guest.reproducible import artefact_hashes
from schedlab.guest.payload import (QEMU_PAYLOAD, SPEC, USER_BIN, Payload, check_overlay,
                                    library_path, shared_libraries)
from schedlab.machine import MachineSpec, load_machine
from schedlab.store import hash_file, hash_json, publish_dir

BACKENDS = ("qemu", "gem5")
SCHED_CLASSES = ("other", "batch", "idle", "fifo", "rr")
# kernel-patches/0010: the guest reports context switches to gem5 (an m5 op, #UD elsewhere).
M5_SWITCH_SYSCTL = "kernel.sched_m5_switch"
# Host seconds a run may take unless the request says: a detailed gem5 run of a large
# machine (Hector's 16 cores) takes hours; a first boot to the checkpoint is not counted.
DEFAULT_TIMEOUT = {"qemu": 1800.0, "gem5": 6 * 3600.0}
# A gem5 region of interest whose jobs all have a duration is an overrun (a workload that was
# not stopped) past twice the longest duration plus this grace: a stopped workload takes its
# signal in its next turn, at most one quantum of a task sharing its CPU later (the studies'
# longest quantum is 200 ms). Without it a hung region would simulate up to DEFAULT_TIMEOUT.
REGION_GRACE_S = 0.25
# Per-CPU trace buffer (KiB) when a policy traces scheduler events. A QEMU run lasts seconds
# to minutes of guest time; a gem5 run simulates milliseconds to a second, a few thousand
# switches per CPU at most (about 100 B each), and every buffer page costs simulated
# allocation work at each run's start and guest memory (Hector's stations have 96 MiB).
# gem5's size is allocated once before the boot checkpoint (disk-images/rootfs/init,
# GEM5_TRACE_BUFFER_KB), so a run pays nothing for it.
TRACE_BUFFER_KB = {"qemu": 8192, "gem5": 1024}
# The QEMU guest's own kernel arguments; gem5's are checkpoint.run_kernel_args.
# no_timer_check: the boot's IO-APIC timer check counts ticks against a busy loop, and a
# TCG guest on a loaded host can lose that race and panic ("IO-APIC + timer doesn't work!",
# seen on a host shared with two gem5 simulations); QEMU's timer is known to work.
# quiet: the runner's lines share ttyS0 with the kernel's messages, and a message printed
# while the runner writes a line cuts it in two (an i8042 probe message once hid a CPU's
# core siblings from a sweep's topology check); errors still reach the console.
QEMU_KERNEL_ARGS = ("console=ttyS0", "quiet", "panic=-1", "no_timer_check",
                    "schedlab.backend=qemu")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class WorkloadRequest:
    """A workload to run: a registry name, or a path to the user's static binary or C file."""

    workload: str
    size: str = "smoke"
    reps: int = 1
    cpus: str | None = None
    sched: str = "other"
    prio: int = 0
    args: tuple[str, ...] = ()
    # Seconds of guest time after which the workload is stopped (SIGTERM): needed for
    # workloads that run until stopped; for others it bounds the region of interest.
    duration: float | None = None
    # Milliseconds the workload waits before it starts: a real difference between the
    # repetitions of a deterministic simulation (the phase of a background task).
    start_delay_ms: float = 0.0
    # Seconds the workload runs before its region of interest (and its duration) begins:
    # its start-up stays outside the measurement, and its caches are warm at the start.
    warmup: float = 0.0


@dataclass(frozen=True)
class RunRequest:
    machine: str
    jobs: tuple[WorkloadRequest, ...]
    backend: str = "qemu"
    overrides: tuple[str, ...] = ()
    policy: str | None = None
    sysctl: tuple[tuple[str, str], ...] = ()
    background: tuple[WorkloadRequest, ...] = ()
    boot_args: tuple[str, ...] = ()
    cpu: str = "o3"
    numa_from: str = "firmware"  # QEMU only: "firmware" (-numa tables) or "kernel" (boot args)
    # Experiment coordinates (condition, repetition, ...): part of the run's identity, so two
    # requests that differ only in their label are two runs. gem5 is deterministic: a
    # repetition must also differ in something the guest sees (a seed, an offset).
    label: dict = field(default_factory=dict)
    # The run's repetition seed: after the restore the guest's random generator is reseeded
    # from it (address-space layouts, stack canaries: disk-images/guest-tools/reseed.c), and
    # gem5's random number generator is seeded with it. One boot checkpoint serves every seed.
    seed: int = 0
    # Host seconds (on gem5 of gem5's CPU time); None: the backend's default (below).
    timeout: float | None = None
    ready_timeout: float = 180.0
    # gem5 only: charge each CPU's cycles, instructions and misses to the tasks that ran on
    # it (kernel.sched_m5_switch of kernel-patches/0010; the results get attribution.json).
    attribute_tasks: bool = False
    # gem5 only: run the guest on Atomic cores outside the regions of interest and on
    # ``cpu`` cores inside them (False: everything on ``cpu`` cores).
    fast_forward: bool = True
    # gem5 fast-forward only: None keeps the caches on throughout (Atomic cores with the
    # caches from the restore on). Seconds S >= 0: fast-forward on cores whose accesses
    # bypass the caches (gem5's NonCachingSimpleCPU, about 1.6 times as fast) and turn the
    # caches on S seconds of guest time before each job's region (at the job's start if its
    # warm-up is shorter), so only the last S seconds warm them.
    warm_caches: float | None = None
    # Directories whose files are placed at the same paths in the guest (DIR/etc/x -> /etc/x).
    overlay: tuple[str, ...] = ()
    # gem5 only: "U,W,D" or a preset (schedlab.backends.gem5.sampling): inside each region
    # Atomic cores with the caches warm, and ``cpu`` cores for sampled windows only.
    sampling: str | None = None
    # Per-CPU trace buffer (KiB) for a policy that traces; None: TRACE_BUFFER_KB's for the
    # backend. A run that traces more events than it holds (thousands of mixer samples) asks
    # for more; the runner resizes the buffer before the run (allocation work in its set-up).
    trace_buffer_kb: int | None = None


@dataclass(frozen=True)
class PreparedRun:
    """A request resolved once: the spec (plain data, hashed into the run id) and the typed
    pieces the backend needs. On gem5 ``plan`` is the board plan, built here only."""

    request: RunRequest
    machine: MachineSpec
    spec: dict
    run_id: str
    guest: GuestSpec
    kernel: kernel.KernelBuild
    image: GuestImage
    user_programs: dict[str, Path]
    plan: BoardPlan | None = None
    # What the run brings into the booted guest besides its spec (schedlab.guest.payload).
    payload: Payload = field(default_factory=Payload)

    def write_payload(self, dest: Path, progress: Progress = print) -> Path:
        """The run's payload archive: its spec, workloads, programs, libraries, overlays."""
        whole = Payload({**self.payload.files, SPEC: self.guest.render()}, self.payload.trees)
        return whole.write(dest, progress)

    @property
    def dir(self) -> Path:
        return paths.results_dir() / self.run_id


def _guest_job(req: WorkloadRequest, policy_args: dict[str, list[str]],
               user_programs: dict[str, Path], for_background: bool = False,
               regions: str = "none", caches_on_us: int | None = None) -> GuestJob:
    if req.sched not in SCHED_CLASSES:
        raise UserError(f"unknown scheduling class {req.sched!r}; choose one of "
                        + ", ".join(SCHED_CLASSES))
    if req.reps < 1:
        raise UserError(f"repetitions must be at least 1, not {req.reps}")
    if req.sched in ("fifo", "rr") and not 1 <= req.prio <= 99:
        raise UserError(f"SCHED_{req.sched.upper()} needs a priority in 1..99 (--prio)")
    if "/" in req.workload or req.workload.endswith(".c"):
        binary = programs.build_user_program(Path(req.workload))
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(req.workload).stem)
        user_programs[name] = binary
        argv = [f"{USER_BIN}/{name}", *req.args]
    else:
        wl = workloads.get(req.workload)
        name = wl.name
        argv = [f"{GUEST_BIN}/{wl.name}", *wl.args(req.size), *policy_args.get(wl.name, []),
                *req.args]
        if not wl.stops_by_itself(req.size) and not for_background and req.duration is None:
            raise UserError(f"workload {wl.name} at size {req.size} runs until stopped; "
                            f"give it a --duration in seconds")
    duration_us = 0
    if req.duration is not None:
        if req.duration <= 0:
            raise UserError(f"--duration must be positive, not {req.duration}")
        # The launcher stops it to the microsecond (busybox's timeout counts whole seconds);
        # a background task is stopped at the end of the run anyway.
        duration_us = round(req.duration * 1e6)
    if req.start_delay_ms:
        if req.start_delay_ms < 0:
            raise UserError(f"a start delay must not be negative, not {req.start_delay_ms} ms")
        argv = ["sh", "-c", 'usleep "$0" && exec "$@"', str(round(req.start_delay_ms * 1000)),
                *argv]
    if req.warmup < 0:
        raise UserError(f"a warm-up must not be negative, not {req.warmup} s")
    if req.warmup and for_background:
        raise UserError("a background workload has no region of interest to warm up for")
    return GuestJob(name, tuple(argv), req.reps, req.cpus, req.sched, req.prio,
                    duration_us=0 if for_background else duration_us,
                    warmup_us=round(req.warmup * 1e6), regions=regions,
                    caches_on_us=None if for_background else caches_on_us)


def _job_spec(job: GuestJob) -> dict:
    """A guest job as the spec records it; ``regions`` and ``caches_on_us`` only when set,
    so runs without them keep their ids."""
    out = asdict(job)
    if out["regions"] == "none":
        del out["regions"]
    if out["caches_on_us"] is None:
        del out["caches_on_us"]
    return out


def _check_warm_caches(request: RunRequest) -> int | None:
    """The launcher's --caches-on-us for ``request.warm_caches`` (None: not asked for)."""
    if request.warm_caches is None:
        return None
    if request.backend != "gem5" or not request.fast_forward or request.cpu == "atomic":
        raise UserError("--warm-caches bypasses the caches while gem5 fast-forwards: it needs "
                        "--backend gem5 with --fast-forward and --cpu timing or o3")
    if request.warm_caches < 0:
        raise UserError(f"--warm-caches must not be negative, not {request.warm_caches} s")
    return round(request.warm_caches * 1e6)


def _trace_buffer_kb(request: RunRequest) -> int:
    """The run's per-CPU trace buffer (KiB): the request's, else the backend's."""
    if request.trace_buffer_kb is None:
        return TRACE_BUFFER_KB[request.backend]
    if not 64 <= request.trace_buffer_kb <= 1 << 20:
        raise UserError(f"the trace buffer must be 64 KiB to 1 GiB per CPU, not "
                        f"{request.trace_buffer_kb} KiB")
    return int(request.trace_buffer_kb)


def _check_timeslice(sysctl: dict[str, str], machine: MachineSpec) -> None:
    """A SCHED_RR timeslice is a whole number of the guest's ticks; the kernel would round
    another up to one (msecs_to_jiffies) without a word."""
    value = sysctl.get("kernel.sched_rr_timeslice_ms", "")
    if value.isdigit() and int(value) * machine.tick_hz % 1000:
        raise UserError(f"kernel.sched_rr_timeslice_ms={value} is not a whole number of "
                        f"{machine.name}'s ticks (its guest kernel runs at {machine.tick_hz} "
                        f"Hz: {1000 / machine.tick_hz:g} ms a tick); use a multiple of it")


def _check_cpus(cpus: str | None, machine: MachineSpec) -> None:
    if cpus is None:
        return
    wanted = numa.parse_cpulist(cpus)
    if not wanted or max(wanted) >= machine.cores:
        raise UserError(f"CPU list {cpus} is outside {machine.name}'s cores 0-{machine.cores - 1}")


def prepare(request: RunRequest, progress: Progress = print, build: bool = True) -> PreparedRun:
    """Resolve a request into a spec (building kernel, image and programs as needed; with
    ``build=False`` only naming them by their build keys, which is all the run id needs:
    listings and staleness checks compute ids without building)."""
    if request.backend not in BACKENDS:
        raise UserError(f"unknown backend {request.backend!r}; choose one of {', '.join(BACKENDS)}")
    if request.backend == "gem5" and request.cpu not in CPU_TYPES:
        raise UserError(f"unknown gem5 CPU {request.cpu!r}; choose one of {', '.join(CPU_TYPES)}")
    if request.numa_from not in ("firmware", "kernel"):
        raise UserError("--numa-from must be 'firmware' or 'kernel'")
    if not request.jobs:
        raise UserError("no workload given; name one with --workload "
                        "(see 'python3 run.py workloads')")
    machine = load_machine(request.machine, request.overrides)
    policy_name = request.policy or "vanilla"
    policy = policies.policy(policy_name)
    for job in request.jobs + request.background:
        _check_cpus(job.cpus, machine)
    user_programs: dict[str, Path] = {}
    policy_args = policy.get("workload_args", {})
    regions = policy.get("regions", {})
    jobs: list[GuestJob] = []
    caches_on_us = _check_warm_caches(request)
    for req in request.jobs:
        job = _guest_job(req, policy_args, user_programs, regions=regions.get("jobs", "none"),
                         caches_on_us=caches_on_us)
        # Unique names: artifacts are filed under the job name.
        taken = {j.name for j in jobs}
        name, n = job.name, 2
        while name in taken:
            name, n = f"{job.name}-{n}", n + 1
        jobs.append(dataclasses.replace(job, name=name))
    background = tuple(_guest_job(j, {}, user_programs, for_background=True,
                                  regions=regions.get("background", "none"))
                       for j in request.background)
    # The run's payload: the workloads, the user's programs with the libraries of the
    # dynamically linked ones (as the host's ldd resolves them), the overlays.
    libraries: dict[str, Path] = {}
    for binary in user_programs.values():
        if programs.is_dynamic(binary):
            libraries.update(shared_libraries(binary))
    overlays = [check_overlay(d) for d in request.overlay]
    workload_overlay = (programs.build_all(progress=progress) if build
                        else programs.planned_overlay())
    payload = Payload({**{f"{USER_BIN}/{n}": p for n, p in user_programs.items()},
                       **libraries}, [workload_overlay, *overlays])
    env = (("LD_LIBRARY_PATH", library_path(libraries)),) if libraries else ()
    sysctl_wanted = {**{k: str(v) for k, v in policy.get("sysctl", {}).items()},
                     **dict(request.sysctl)}
    if request.attribute_tasks:
        if request.backend != "gem5":
            raise UserError("--attribute-tasks needs the gem5 backend (--backend gem5): it "
                            "uses a gem5 instruction that other machines do not have")
        sysctl_wanted[M5_SWITCH_SYSCTL] = "1"
    elif sysctl_wanted.get(M5_SWITCH_SYSCTL, "0") != "0":
        raise UserError(f"{M5_SWITCH_SYSCTL} is set by --attribute-tasks (gem5 only); on any "
                        f"other machine the guest kernel would execute an undefined instruction")
    _check_timeslice(sysctl_wanted, machine)
    sysctl = tuple(sorted(sysctl_wanted.items()))
    sampling = check_sampling(request, machine)
    boot_args = [*policy.get("boot_args", []), *request.boot_args]
    if request.backend == "qemu" and request.numa_from == "kernel" and len(machine.nodes) > 1:
        boot_args += numa.numa_boot_args(
            [list(n) for n in machine.nodes], None, machine.node_distances())

    if build:
        kern = kernel.build_kernel(progress=progress, tick_hz=machine.tick_hz)
        image = build_image(progress=progress)
    else:
        kern, image = kernel.planned_kernel(tick_hz=machine.tick_hz), planned_image()
    spec = {
        "machine": machine.to_dict(),
        "backend": request.backend,
        "cpu": request.cpu if request.backend == "gem5" else None,
        "numa_from": request.numa_from if request.backend == "qemu" else None,
        "kernel": kern.hash,
        "image": image.hash,
        "policy": {"name": policy_name, **policy},
        "sysctl": [list(kv) for kv in sysctl],
        "boot_args": boot_args,
        "jobs": [_job_spec(j) for j in jobs],
        "background": [_job_spec(j) for j in background],
        "user_programs": {n: hash_file(p) for n, p in sorted(user_programs.items())},
        # The workloads come with the run, not in the image (schedlab.guest.payload).
        "workloads": workload_overlay.name,
        "sizes": sorted({j.size for j in request.jobs}),
        "trace_buffer_kb": _trace_buffer_kb(request),
        "seed": request.seed,
        "label": request.label,
    }
    if request.attribute_tasks:  # only when on, so other runs keep their ids
        spec["attribute_tasks"] = True
    if libraries:
        spec["libraries"] = {g: hash_file(p) for g, p in sorted(libraries.items())}
    if overlays:
        spec["overlay"] = Payload(trees=overlays).identity()
    if request.backend == "gem5":
        spec["fast_forward"] = request.fast_forward
    if request.warm_caches is not None:  # only when on, so other runs keep their ids
        spec["warm_caches"] = request.warm_caches
    if sampling is not None:  # only when on, so other runs keep their ids
        spec["sampling"] = sampling.to_dict()
    # What the backend adds is part of the run's identity too: results made with another
    # kernel command line or other gem5 model code must not be taken for this run's.
    plan = plan_from_dict(machine.to_dict()) if request.backend == "gem5" else None
    spec.update(_backend_identity(machine, plan, boot_args))
    digest = hash_json(spec)
    names = "+".join(dict.fromkeys(j.name for j in jobs))
    jobs = tuple(jobs)
    run_id = f"{machine.name}--{re.sub(r'[^A-Za-z0-9_.+-]', '_', names)[:40]}--{digest[:12]}"
    guest = GuestSpec(
        nonce=digest[:16], jobs=jobs, sysctl=sysctl,
        files=tuple(sorted((k, str(v)) for k, v in policy.get("files", {}).items())),
        trace_events=tuple(policy.get("trace_events", [])), background=background,
        trace_buffer_kb=spec["trace_buffer_kb"], env=env, seed=request.seed)
    return PreparedRun(request, machine, spec, run_id, guest, kern, image, user_programs, plan,
                       payload)


def sampling_plan(request: RunRequest):
    """The request's sampling schedule (or None), checked against its backend and cores."""
    if request.sampling is None:
        return None
    from schedlab.backends.gem5.sampling import parse_sampling
    if request.backend != "gem5":
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


def check_sampling(request: RunRequest, machine: MachineSpec):
    """The request's sampling schedule (or None), refused where it cannot hold: off gem5,
    without detailed cores, or where a job's region is expected to hold fewer than
    MIN_WINDOWS windows (its instructions estimated as the campaign costs do: cachegrind's
    count, or the duration at IPC 1), too few for a confidence interval. A region that
    turns out shorter than estimated marks the run not ok instead (_sampled_rows)."""
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


def _backend_identity(machine: MachineSpec, plan: BoardPlan | None,
                      boot_args: list[str]) -> dict:
    """The guest's whole kernel command line, and on gem5 the hash of our gem5-side code."""
    if plan is None:
        return {"kernel_command_line": [*QEMU_KERNEL_ARGS, *boot_args]}
    from schedlab.backends.gem5.binary import config_hash
    from schedlab.backends.gem5.checkpoint import run_kernel_args
    return {"kernel_command_line": run_kernel_args(machine.to_dict(), plan, boot_args),
            "gem5_config": config_hash()}


def execute(prepared: PreparedRun, progress: Progress = print) -> Path:
    """Run it unless its results already exist; return ``results/<run-id>/``."""
    final = prepared.dir
    if (final / "results.json").is_file():
        progress(f"run {prepared.run_id}: already done, reusing its results")
        return final
    started = time.monotonic()
    with publish_dir(final) as out:
        (out / "spec.json").write_text(json.dumps(
            {**prepared.spec, "request": request_to_data(prepared.request)}, indent=1) + "\n")
        (out / "machine.json").write_text(json.dumps(prepared.machine.to_dict(), indent=1) + "\n")
        (out / "guest-spec.sh").write_text(prepared.guest.render())
        if prepared.request.backend == "qemu":
            console_text, backend_info = _run_qemu(prepared, out, progress)
        else:
            console_text, backend_info = _run_gem5(prepared, out, progress)
        report = parse_console(console_text, prepared.guest.nonce)
        report.artifacts.update(backend_info.pop("artifacts", {}))
        results = _results(prepared, report, backend_info, time.monotonic() - started)
        for name, data in report.artifacts.items():
            dest = out / "artifacts" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    return final


def _run_qemu(prepared: PreparedRun, out: Path, progress: Progress) -> tuple[str, dict]:
    req = prepared.request
    # The payload as one file of a small initramfs loaded after the image's (Linux unpacks
    # concatenated archives in order); the runner unpacks it as gem5's runner does.
    payload = prepared.write_payload(out / "payload.cpio", progress)
    run_cpio = write_cpio([f"file {QEMU_PAYLOAD} {payload} 0644 0 0"], out / "run.cpio",
                          progress)
    initrd = out / "initrd.cpio"
    with open(initrd, "wb") as f:
        for part in (prepared.image.initramfs, run_cpio):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, f)
    append = " ".join(prepared.spec["kernel_command_line"])
    console = out / "console.log"
    cmd = qemu.command(prepared.machine, prepared.kernel.bzimage, initrd, append, console,
                       numa_tables=req.numa_from == "firmware")
    (out / "command.txt").write_text(shlex.join(cmd) + "\n")
    lay = qemu.layout(prepared.machine)
    progress(f"qemu: booting {prepared.machine.name} ({prepared.machine.cores} vCPUs in "
             f"{lay.sockets} LLC groups, {len(lay.node_cpus)} node(s))")
    try:
        text = qemu.boot(cmd, console, req.ready_timeout, _timeout(req), prepared.guest.nonce,
                         progress)
    finally:
        for f in (initrd, run_cpio, payload):
            f.unlink(missing_ok=True)
    return text, {"name": "qemu", "command": cmd, "memory_mib_per_node": lay.node_mib,
                  "booted": {**prepared.kernel.artefacts(), **prepared.image.artefacts()},
                  "note": "QEMU TCG: functional only; caches and latencies are not modelled"}


def _timeout(request: RunRequest) -> float:
    return request.timeout if request.timeout else DEFAULT_TIMEOUT[request.backend]


def region_limit(request: RunRequest) -> float | None:
    """Simulated seconds after which a gem5 region of interest is an overrun, or None when
    a job runs to its own end (nothing bounds its region)."""
    if not request.jobs or any(j.duration is None for j in request.jobs):
        return None
    return 2 * max(j.duration for j in request.jobs) + REGION_GRACE_S


def gem5_job(prepared: PreparedRun, progress: Progress = print, **changes):
    """The typed gem5 job of a prepared run (``changes``: Gem5Job fields, e.g. the
    overhead benchmark's ``hierarchy``)."""
    from schedlab.backends.gem5.checkpoint import GuestKernel
    from schedlab.backends.gem5.run import Gem5Job
    req = prepared.request
    # gem5's X86 loader takes no separate initrd: the kernel with the image built in (a
    # cached relink).
    with_image = kernel.build_kernel(initramfs=prepared.image.initramfs, progress=progress,
                                     tick_hz=prepared.machine.tick_hz)
    with tempfile.TemporaryDirectory(prefix="schedlab-payload-") as tmp:
        payload = prepared.write_payload(Path(tmp) / "payload.cpio", progress).read_bytes()
    fields = dict(
        machine=prepared.machine.to_dict(), plan=prepared.plan, cpu=req.cpu,
        kernel=GuestKernel(with_image.vmlinux, with_image.hash, prepared.image.hash),
        kernel_args=tuple(prepared.spec["kernel_command_line"]),
        readfile=payload, timeout=_timeout(req), region_limit=region_limit(req),
        # The launcher brackets each job with resetstats/workbegin ... workend/dumpstats
        # itself, so gem5's script must not add a second dump per work item; nothing
        # reads the whole run's dump at exit (on Hector half of a 13 MB stats.txt).
        workitem_stats=False, exit_stats=False, attribute_tasks=req.attribute_tasks,
        fast_forward=req.fast_forward, bypass_caches=req.warm_caches is not None,
        sampling=sampling_plan(req).text() if req.sampling else None, seed=req.seed,
        config_hash=prepared.spec["gem5_config"])
    return Gem5Job(**{**fields, **changes})


def _run_gem5(prepared: PreparedRun, out: Path, progress: Progress) -> tuple[str, dict]:
    from schedlab.backends.gem5.run import run
    from schedlab.backends.gem5.topology import topology_problems
    job = gem5_job(prepared, progress)
    outcome = run(job, out, progress)
    # One region of interest per job repetition, in the order the guest ran them.
    requesters = prepared.plan.memory.requesters
    regions = [region_metrics(d, requesters) for d in outcome["stats"] if d.get("schedlab.roi")]
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


def _results(prepared: PreparedRun, report, backend_info: dict, seconds: float) -> dict:
    requests = {job.name: req for job, req in zip(prepared.guest.jobs, prepared.request.jobs)}
    registry = workloads.load_registry()
    rows = []
    errors = list(report.errors)
    if not report.ended:
        errors.append("the guest's output stopped before its end marker: results may be "
                      "missing (see console.log)")
    for result in report.results:
        metrics = workloads.parse_output(result.get("stdout", ""))
        req = requests.get(result["job"])
        problems = []
        # The registry's expected outputs are those of the size's own arguments: a run
        # stopped at a duration, or given other arguments (a seed), has nothing fixed to
        # check but its exit status (every workload checks itself and exits 3 if wrong).
        if (req is not None and req.workload in registry and req.duration is None
                and not req.args):
            problems = registry[req.workload].check(metrics, req.size)
        # The launcher stopped it at its duration: SIGTERM's status is expected then.
        stopped = result.get("stopped") and result.get("exit") in (143, 0)
        if result.get("exit") != 0 and not stopped:
            problems.append(f"{result['job']} rep {result['rep']} exited with {result['exit']}")
        if result.get("ended_in_warmup"):
            problems.append(f"{result['job']} rep {result['rep']} ended during its warm-up: "
                            f"its region of interest is empty (shorten --warmup)")
        errors += problems
        rows.append({**{k: v for k, v in result.items() if k != "stdout"},
                     "workload": req.workload if req else result["job"],
                     "size": req.size if req else None,
                     "metrics": metrics, "problems": problems})
        # What else the program printed (a user program's own messages) is kept as is.
        plain = workloads.plain_output(result.get("stdout", ""))
        if plain:
            rows[-1]["output"] = plain
    expected = sum(j.reps for j in prepared.guest.jobs)
    if len(rows) != expected:
        errors.append(f"expected {expected} job results, the guest reported {len(rows)}")
    errors += [f"the guest's topology differs from the model: {p}"
               for p in backend_info.pop("topology_problems", [])]
    regions = backend_info.pop("regions", None)
    attribution = backend_info.pop("attribution", None)
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
    sampling = backend_info.pop("sampling", None)
    if sampling is not None:
        errors += _sampled_rows(rows, sampling)
    artefacts = {**backend_info.pop("booted", {}), **workload_artefacts(prepared)}
    return {
        "run_id": prepared.run_id,
        "ok": not errors,
        "errors": errors,
        "label": prepared.request.label,
        "machine": prepared.machine.name,
        "backend": backend_info,
        "policy": prepared.spec["policy"]["name"],
        "hashes": {"kernel": prepared.kernel.hash, "image": prepared.image.hash},
        # The built files' own hashes (the hashes above are of their inputs).
        "artefacts": artefacts,
        "host_seconds": round(seconds, 2),
        "facts": report.facts,
        "jobs": rows,
    }


def workload_artefacts(prepared: PreparedRun) -> dict[str, str]:
    """The hash of the workloads' binary the run brought: the overlay its spec names (not
    whatever the tree builds by the time the run ends)."""
    overlay = paths.cache_dir() / "workloads" / prepared.spec["workloads"]
    return artefact_hashes({"workloads": overlay / workloads.GUEST_BIN / programs.MULTICALL})


def _sampled_rows(rows: list[dict], sampling: dict) -> list[str]:
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


# What names or bounds a run without changing what it simulates.
_NOT_WORK = ("label", "timeout", "ready_timeout")


def _work(obj) -> dict:
    """``obj``'s fields that are not at their defaults and say what the run does."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        default = (f.default_factory() if f.default_factory is not dataclasses.MISSING
                   else f.default)
        if f.name in _NOT_WORK or value == default:
            continue
        out[f.name] = ([_work(v) for v in value]
                       if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0])
                       else value)
    return out


def work_key(request: RunRequest) -> str:
    """A short hash of what ``request`` makes the simulation do (machine, cores, policy,
    kernel settings, programs with their sizes and arguments), not of how it is named (its
    label) or bounded (its timeouts). Fields at their defaults are left out, so a field added
    later keeps the keys of older requests. Campaign cost estimates match committed runs to
    a definition by it: runs of one key do the same guest work, whatever their label (the
    guest image and the gem5 binary may still differ)."""
    return hash_json(_work(request))[:12]


def request_to_data(request: RunRequest) -> dict:
    """A request as JSON-ready data (what a campaign hands its workers)."""
    return json.loads(json.dumps(asdict(request)))


def request_from_data(data: dict) -> RunRequest:
    """The inverse of :func:`request_to_data`."""
    def workload(d: dict) -> WorkloadRequest:
        return WorkloadRequest(**{**d, "args": tuple(d.get("args", ()))})
    return RunRequest(**{
        **data,
        "jobs": tuple(workload(j) for j in data["jobs"]),
        "background": tuple(workload(j) for j in data.get("background", ())),
        "overrides": tuple(data.get("overrides", ())),
        "sysctl": tuple(tuple(kv) for kv in data.get("sysctl", ())),
        "boot_args": tuple(data.get("boot_args", ())),
        "overlay": tuple(data.get("overlay", ()))})
