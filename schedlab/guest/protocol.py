"""The host side of the in-guest runner's protocol (disk-images/rootfs/init).

Host -> guest: a run specification (in the run's payload, schedlab.guest.payload), rendered
as a shell script that sets NONCE and defines ``run_spec`` as a list of runner calls
(seed_guest, sysctl_set, sysctl_report, file_set, trace_functions, trace_events, background,
job), every value quoted
with shlex so no workload argument can break it.

Guest -> host: console lines. ``@@schedlab-ready`` marks a booted guest (before any spec is
known); everything else is ``@@schedlab <nonce> <kind> <payload>``, so output of another run or
a workload that happens to print "@@schedlab" cannot be mistaken for this run's results.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shlex
from dataclasses import dataclass, field

READY_MARKER = "@@schedlab-ready"
ERROR_MARKER = "@@schedlab-error"
# The workloads' directory in the guest (schedlab.guest.workloads.GUEST_BIN, absolute).
GUEST_BIN = "/schedlab/bin"


@dataclass(frozen=True)
class GuestJob:
    """One workload invocation the runner repeats ``reps`` times."""

    name: str
    argv: tuple[str, ...]
    reps: int = 1
    cpus: str | None = None
    sched: str = "other"
    prio: int = 0
    duration_us: int = 0        # stop the workload (SIGTERM) this long after it started
    warmup_us: int = 0          # begin the region of interest (and the duration) this late
    # Region scheduling (kernel-patches 0012, 0021): "join", "favour" (join and be the process
    # cache partitioning favours) or "none"; the launcher does it in the workload's process.
    regions: str = "none"
    # gem5 with the caches bypassed before the regions: turn them on (m5 switchcpu) this long
    # before the region begins (None: the launcher issues no such op).
    caches_on_us: int | None = None


@dataclass(frozen=True)
class GuestSpec:
    nonce: str
    jobs: tuple[GuestJob, ...]
    sysctl: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    trace_events: tuple[str, ...] = ()
    # Kernel functions whose calls the trace times (ftrace's function graph tracer): each
    # call's duration, nested as the calls were; the events come out as comments in it.
    trace_functions: tuple[str, ...] = ()
    background: tuple[GuestJob, ...] = ()
    trace_buffer_kb: int = 8192    # per CPU
    env: tuple[tuple[str, str], ...] = ()   # exported to every job (LD_LIBRARY_PATH)
    # The run's repetition seed: the guest's random generator is reseeded from it before
    # anything else the specification does (None: the checkpoint's generator as it is).
    seed: int | None = None

    def render(self) -> str:
        q = shlex.quote
        lines = [f"NONCE={q(self.nonce)}", f"TRACE_BUFFER_KB={int(self.trace_buffer_kb)}"]
        lines += [f"export {k}={q(v)}" for k, v in self.env]
        lines.append("run_spec() {")
        if self.seed is not None:
            lines.append(f"\tseed_guest {int(self.seed)}")
        lines += [f"\tsysctl_set {q(k)} {q(v)}" for k, v in self.sysctl]
        if self.sysctl:
            lines.append("\tsysctl_report")
        lines += [f"\tfile_set {q(k)} {q(v)}" for k, v in self.files]
        if self.trace_functions:
            lines.append("\ttrace_functions " + " ".join(map(q, self.trace_functions)))
        if self.trace_events:
            lines.append("\ttrace_events " + " ".join(map(q, self.trace_events)))
        for bg in self.background:
            lines.append("\tbackground " + " ".join(map(q, _placement(bg) + ["--", *bg.argv])))
        for job in self.jobs:
            lines.append(f"\tjob {q(job.name)} {job.reps} "
                         + " ".join(map(q, _placement(job) + ["--", *job.argv])))
        lines += ["\t:", "}", ""]
        return "\n".join(lines)


def _placement(job: GuestJob) -> list[str]:
    opts = ["--policy", job.sched, "--prio", str(job.prio)]
    if job.cpus:
        opts += ["--cpus", job.cpus]
    if job.duration_us:
        opts += ["--duration-us", str(job.duration_us)]
    if job.warmup_us:
        opts += ["--warmup-us", str(job.warmup_us)]
    if job.caches_on_us is not None:
        opts += ["--caches-on-us", str(job.caches_on_us)]
    if job.regions != "none":
        opts += ["--regions", job.regions]
    return opts


@dataclass
class GuestReport:
    """What a run's console says, parsed."""

    ready: bool = False
    begun: bool = False
    ended: bool = False
    facts: dict[str, str] = field(default_factory=dict)
    results: list[dict] = field(default_factory=list)
    artifacts: dict[str, bytes] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


_LINE = re.compile(r"@@schedlab (\S+) (\S+) ?(.*)$")


def parse_console(text: str, nonce: str) -> GuestReport:
    report = GuestReport()
    artifact: str | None = None
    chunks: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if artifact is not None:
            if line == f"@@schedlab {nonce} artifact-end {artifact}":
                try:
                    report.artifacts[artifact] = gzip.decompress(
                        base64.b64decode("".join(chunks)))
                except (ValueError, OSError) as e:
                    report.errors.append(f"artifact {artifact} is corrupt: {e}")
                artifact, chunks = None, []
            else:
                chunks.append(line.strip())
            continue
        if READY_MARKER in line:
            report.ready = True
            continue
        if ERROR_MARKER in line:
            report.errors.append(line.split(ERROR_MARKER, 1)[1].strip())
            continue
        m = _LINE.search(line)
        if not m or m.group(1) != nonce:
            continue
        kind, payload = m.group(2), m.group(3)
        if kind == "begin":
            report.begun = True
        elif kind == "end":
            report.ended = True
        elif kind == "fact":
            key, _, value = payload.partition(" ")
            report.facts[key] = value
        elif kind == "result":
            try:
                report.results.append(json.loads(payload))
            except json.JSONDecodeError:
                report.errors.append(f"garbled result line: {payload[:120]}")
        elif kind == "error":
            report.errors.append(payload)
        elif kind == "artifact-begin":
            artifact = payload
    if artifact is not None:
        report.errors.append(f"artifact {artifact} was cut off")
    return report
