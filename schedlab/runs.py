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
import re
import shlex
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from schedlab import paths
from schedlab.backends.backend import BackendName, CpuModel, backend_name, cpu_model, get_backend
from schedlab.backends.gem5.backend import check_sampling
from schedlab.backends.gem5.plan import BoardPlan
from schedlab.errors import UserError
from schedlab.guest import inputs, kernel, numa, packages, policies, programs, workloads
from schedlab.guest.image import GuestImage, build_image, planned_image
from schedlab.guest.payload import (SPEC, USER_BIN, Payload, check_overlay, library_path,
                                    shared_libraries)
from schedlab.guest.protocol import GUEST_BIN, GuestJob, GuestSpec, parse_console
from schedlab.guest.reproducible import artefact_hashes
from schedlab.machine import MachineSpec, load_machine
from schedlab.store import hash_file, hash_json, publish_dir

SCHED_CLASSES = ("other", "batch", "idle", "fifo", "rr")
# kernel-patches/0010: the guest reports context switches to gem5 (an m5 op, #UD elsewhere).
M5_SWITCH_SYSCTL = "kernel.sched_m5_switch"
# Region scheduling's rate rule (kernel-patches 0031) prices a move's gain in last-level
# misses; a miss costs the modelled machine's local memory latency, not the kernel's default.
REGION_RATE_SYSCTL = "kernel.sched_region_rate"
REGION_MISS_SYSCTL = "kernel.sched_region_miss_ns"
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
    backend: BackendName = BackendName.QEMU
    overrides: tuple[str, ...] = ()
    policy: str | None = None
    sysctl: tuple[tuple[str, str], ...] = ()
    background: tuple[WorkloadRequest, ...] = ()
    boot_args: tuple[str, ...] = ()
    cpu: CpuModel = CpuModel.O3     # gem5's detailed cores (QEMU has one model)
    numa_from: str = "firmware"  # QEMU only: "firmware" (-numa tables) or "kernel" (boot args)
    # QEMU only: "host" (TCG's guest clock follows the host's, so a loaded host stretches
    # the guest's time slices) or "icount" (guest time from the instructions executed,
    # QEMU's -icount shift=auto: a host that stalls QEMU stalls the guest's clock with it;
    # for tests about guest time).
    guest_clock: str = "host"
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
    # Kernel functions whose every call the run's trace times (ftrace's function graph
    # tracer; the policy's trace events become comments in that trace): what a kernel path
    # costs by its parts (bench/bench_regions.py --breakdown).
    trace_functions: tuple[str, ...] = ()

    def __post_init__(self):
        # Names from the command line, a campaign's JSON or SLURM's pickles become the enums
        # here, once; an unknown one is a one-line error.
        object.__setattr__(self, "backend", backend_name(self.backend))
        object.__setattr__(self, "cpu", cpu_model(self.cpu))


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
               regions: str = "none", caches_on_us: int | None = None,
               real_programs: dict[str, set[str]] | None = None) -> GuestJob:
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
    elif (wl := workloads.get(req.workload)).is_real_program:
        name = wl.name
        argv = _real_program_argv(wl, req.size, [*policy_args.get(wl.name, []), *req.args])
        if real_programs is not None:
            real_programs.setdefault(wl.name, set()).add(req.size)
    else:
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


def _real_program_argv(wl: workloads.Workload, size: str, extra: list[str]) -> list[str]:
    """A real program's command; with a stdin or stdout, through the shell, which execs it
    (same process, so placed and measured as the program) after the redirections."""
    argv, stdin, stdout = wl.command(size)
    argv += extra
    if not (stdin or stdout):
        return argv
    redirect = " ".join(([f"<{shlex.quote(stdin)}"] if stdin else [])
                        + ([f">{shlex.quote(stdout)}"] if stdout else []))
    return ["sh", "-c", f'exec "$0" "$@" {redirect}', *argv]


def _real_programs_payload(used: dict[str, set[str]], build: bool,
                           progress: Callable[[str], None]) -> tuple[dict[str, Path], dict]:
    """The files of the real programs the run's jobs use (program, libraries and data from
    their locked packages; their inputs), and what the run id records of them: the locked
    .debs' hashes and the inputs' definitions, so an id is known without downloading."""
    files: dict[str, Path] = {}
    identity: dict[str, dict] = {}
    for name in sorted(used):
        wl = workloads.get(name)
        sizes = sorted(used[name])
        identity[name] = {
            "packages": packages.lock_identity(packages.read_lock(wl.dir)),
            "inputs": {f"{size}/{n}": inputs.identity(d)
                       for size in sizes for n, d in sorted(wl.inputs(size).items())}}
        if wl.program.install:   # only when it has one, so other programs keep their ids
            identity[name]["install"] = wl.program.install.identity()
        if not build:
            continue
        _add_files(files, packages.program_files(name, wl.dir, wl.program, progress).files,
                   f"the real program {name}")
        for size in sizes:
            for n, d in wl.inputs(size).items():
                files[wl.input_guest_path(size, n)] = inputs.make(
                    d, f"workloads/{name}/workload.toml [sizes.{size}] inputs.{n}")
    return files, identity


def _add_files(files: dict[str, Path], more: dict[str, Path], what: str) -> None:
    """Merge guest files, refusing two different files at one guest path (a user program's
    host glibc and a real program's Debian glibc, say)."""
    for guest, host in more.items():
        if guest in files and hash_file(files[guest]) != hash_file(host):
            raise UserError(f"{what} brings {guest} in another version than this run's other "
                            f"programs; run them in separate runs")
        files[guest] = host


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
    if request.warm_caches < 0:
        raise UserError(f"--warm-caches must not be negative, not {request.warm_caches} s")
    return round(request.warm_caches * 1e6)


def _trace_buffer_kb(request: RunRequest) -> int:
    """The run's per-CPU trace buffer (KiB): the request's, else the backend's."""
    if request.trace_buffer_kb is None:
        return get_backend(request.backend).trace_buffer_kb
    if not 64 <= request.trace_buffer_kb <= 1 << 20:
        raise UserError(f"the trace buffer must be 64 KiB to 1 GiB per CPU, not "
                        f"{request.trace_buffer_kb} KiB")
    return int(request.trace_buffer_kb)


_KERNEL_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _trace_functions(request: RunRequest) -> tuple[str, ...]:
    for name in request.trace_functions:
        if not _KERNEL_SYMBOL.fullmatch(name):
            raise UserError(f"{name!r} is not a kernel function's name; trace functions by "
                            f"their symbols, as /sys/kernel/tracing/available_filter_functions "
                            f"lists them")
    return tuple(dict.fromkeys(request.trace_functions))


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
    runner = get_backend(request.backend)
    runner.check(request)
    if request.guest_clock not in ("host", "icount"):
        raise UserError(f"the guest clock must be 'host' or 'icount', not "
                        f"{request.guest_clock!r}")
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
    real_programs: dict[str, set[str]] = {}   # workload -> sizes, of Debian packages
    policy_args = policy.get("workload_args", {})
    regions = policy.get("regions", {})
    jobs: list[GuestJob] = []
    caches_on_us = _check_warm_caches(request)
    for req in request.jobs:
        job = _guest_job(req, policy_args, user_programs, regions=regions.get("jobs", "none"),
                         caches_on_us=caches_on_us, real_programs=real_programs)
        # Unique names: artifacts are filed under the job name.
        taken = {j.name for j in jobs}
        name, n = job.name, 2
        while name in taken:
            name, n = f"{job.name}-{n}", n + 1
        jobs.append(dataclasses.replace(job, name=name))
    background = tuple(_guest_job(j, {}, user_programs, for_background=True,
                                  regions=regions.get("background", "none"),
                                  real_programs=real_programs)
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
    real_files, real_identity = _real_programs_payload(real_programs, build, progress)
    payload_files = {f"{USER_BIN}/{n}": p for n, p in user_programs.items()}
    _add_files(payload_files, libraries, "a user program")
    _add_files(payload_files, real_files, "a real program")
    payload = Payload(payload_files, [workload_overlay, *overlays])
    env = (("LD_LIBRARY_PATH", library_path(libraries)),) if libraries else ()
    sysctl_wanted = {**{k: str(v) for k, v in policy.get("sysctl", {}).items()},
                     **dict(request.sysctl)}
    if request.attribute_tasks:      # the backend refused it unless it is gem5
        sysctl_wanted[M5_SWITCH_SYSCTL] = "1"
    elif sysctl_wanted.get(M5_SWITCH_SYSCTL, "0") != "0":
        raise UserError(f"{M5_SWITCH_SYSCTL} is set by --attribute-tasks (gem5 only); on any "
                        f"other machine the guest kernel would execute an undefined instruction")
    if sysctl_wanted.get(REGION_RATE_SYSCTL, "0") != "0":
        sysctl_wanted.setdefault(REGION_MISS_SYSCTL,
                                 str(round(machine.memory.local.ns(machine.clock_hz))))
    _check_timeslice(sysctl_wanted, machine)
    sysctl = tuple(sorted(sysctl_wanted.items()))
    sampling = check_sampling(request, machine)
    boot_args = [*policy.get("boot_args", []), *request.boot_args,
                 *runner.boot_args(request, machine)]

    if build:
        kern = kernel.build_kernel(progress=progress, tick_hz=machine.tick_hz)
        image = build_image(progress=progress)
    else:
        kern, image = kernel.planned_kernel(tick_hz=machine.tick_hz), planned_image()
    spec = {
        "machine": machine.to_dict(),
        "backend": request.backend,
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
    if real_identity:   # only when used, so other runs keep their ids
        spec["real_programs"] = real_identity
    if overlays:
        spec["overlay"] = Payload(trees=overlays).identity()
    if request.warm_caches is not None:  # only when on, so other runs keep their ids
        spec["warm_caches"] = request.warm_caches
    if sampling is not None:  # only when on, so other runs keep their ids
        spec["sampling"] = sampling.to_dict()
    trace_functions = _trace_functions(request)
    if trace_functions:  # only when on, so other runs keep their ids
        spec["trace_functions"] = list(trace_functions)
    # What the backend adds is part of the run's identity too (its core model, the whole
    # kernel command line, gem5's model code): results made otherwise are not this run's.
    identity, plan = runner.identity(request, machine, boot_args)
    spec.update(identity)
    digest = hash_json(spec)
    names = "+".join(dict.fromkeys(j.name for j in jobs))
    jobs = tuple(jobs)
    run_id = f"{machine.name}--{re.sub(r'[^A-Za-z0-9_.+-]', '_', names)[:40]}--{digest[:12]}"
    guest = GuestSpec(
        nonce=digest[:16], jobs=jobs, sysctl=sysctl,
        files=tuple(sorted((k, str(v)) for k, v in policy.get("files", {}).items())),
        trace_events=tuple(policy.get("trace_events", [])), trace_functions=trace_functions,
        background=background, trace_buffer_kb=spec["trace_buffer_kb"], env=env,
        seed=request.seed)
    return PreparedRun(request, machine, spec, run_id, guest, kern, image, user_programs, plan,
                       payload)


def prepare_planned(request: RunRequest, run_id: str, progress: Progress = print,
                    build: bool = True) -> PreparedRun:
    """The request resolved again where a campaign runs it, refused if it is no longer the
    run the campaign planned: a kernel patch or gem5-side file edited since would otherwise
    be published under the planned id."""
    prepared = prepare(request, progress=progress, build=build)
    if prepared.run_id != run_id:
        raise UserError(f"the sources changed since the campaign was planned: this run is "
                        f"now {prepared.run_id}, not {run_id}; rerun the campaign")
    return prepared


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
        runner = get_backend(prepared.request.backend)
        console_text, backend_info = runner.execute(prepared, out, progress)
        report = parse_console(console_text, prepared.guest.nonce)
        report.artifacts.update(backend_info.pop("artifacts", {}))
        results = _results(prepared, report, backend_info, time.monotonic() - started)
        for name, data in report.artifacts.items():
            dest = out / "artifacts" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    return final


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
        # The launcher stopped it at its duration: SIGTERM's status is expected then (or the
        # program's own, for one that catches it: POV-Ray's user abort).
        statuses = (registry[req.workload].stop_statuses
                    if req is not None and req.workload in registry
                    else workloads.STOPPED_STATUSES)
        stopped = result.get("stopped") and result.get("exit") in statuses
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
    errors += get_backend(prepared.request.backend).collect(prepared, rows, backend_info)
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
    built = {"workloads": overlay / workloads.GUEST_BIN / programs.MULTICALL}
    for name in prepared.spec.get("real_programs", {}):   # files their installation made
        step = workloads.get(name).program.install
        if step and step.makes in prepared.payload.files:
            built[f"{name}:{step.makes}"] = prepared.payload.files[step.makes]
    return artefact_hashes(built)


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
