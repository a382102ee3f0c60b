"""Run a campaign on this host: several runs at once, resumable, with a progress bar.

Each run executes in a worker process of its own (``python -m schedlab.campaigns.worker``),
which prepares and executes one request and publishes its run directory atomically. So:

- an interrupted campaign resumes: finished runs are found by id and skipped, and a killed
  run leaves at most a staging directory, which the next campaign removes;
- workers die with the driver (``PR_SET_PDEATHSIG``), and their gem5 or QEMU with them, so
  after ``kill -9`` of the driver no orphan races the resumed campaign;
- Ctrl-C stops the workers and reports what finished; nothing half-written remains.

Every worker writes its log to ``<results>/.logs/<run-id>.log``; a failed run is reported
with the tail of its log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from schedlab.backends.backend import BackendName
from schedlab import paths
from schedlab.campaigns.cost import run_host_seconds
from schedlab.campaigns.plan import finished_state, plan_campaign
from schedlab.errors import UserError
from schedlab.processes import die_with_parent
from schedlab.runs import RunRequest, request_to_data
from schedlab.store import remove_stale_staging, run_lock, write_atomic

LOG_TAIL_LINES = 12
# A campaign whose first runs all fail (a broken build, a bad gem5) stops after this many
# rather than failing every run the same way.
FIRST_FAILURES_STOP = 3
# Memory one run may take. QEMU guests get at most 512 MiB per node. A gem5 process held
# 0.6 to 1.5 GiB at its peak on the 2- to 12-core machines (bench/gem5.md, "gem5's memory"),
# Hector's 7 to 8 GiB: its model's own objects, not the guest's 384 MiB. By catalogue name:
# a user's machine derived from Hector counts as 4 GiB (give --jobs, or mem_gb on SLURM).
RUN_MEMORY_GIB = {"gem5": 4.0, "qemu": 1.5}
GEM5_MACHINE_MEMORY_GIB = {"hector": 9.0}


def run_memory_gib(requests: list[RunRequest]) -> float:
    """What the largest run of ``requests`` may take (GiB): the basis for how many run at
    once here (default_jobs) and for a SLURM task's memory request."""
    return max((GEM5_MACHINE_MEMORY_GIB.get(r.machine, RUN_MEMORY_GIB["gem5"])
                if r.backend == BackendName.GEM5 else RUN_MEMORY_GIB[r.backend] for r in requests),
               default=RUN_MEMORY_GIB["gem5"])


@dataclass
class RunOutcome:
    run_id: str
    label: dict
    # "done", "reused" (finished before), "problems" (finished, not ok: see its
    # results.json errors) or "failed" (no results; the log tail says why)
    state: str
    seconds: float = 0.0
    log_tail: str = ""
    # Where the run's whole log is: <results>/.logs/<run-id>.log here, the task's log under
    # .slurm/ for a SLURM array task (None: unknown).
    log: Path | None = None


@dataclass
class CampaignReport:
    outcomes: list[RunOutcome] = field(default_factory=list)
    interrupted: bool = False
    peak_running: int = 0           # most runs that were executing at once

    def count(self, state: str) -> int:
        return sum(o.state == state for o in self.outcomes)

    @property
    def failed(self) -> list[RunOutcome]:
        return [o for o in self.outcomes if o.state == "failed"]

    def run_dirs(self) -> list[Path]:
        return [paths.results_dir() / o.run_id for o in self.outcomes
                if o.state in ("done", "reused", "problems")]


def default_jobs(requests: list[RunRequest]) -> int:
    """The host's cores, bounded by its available memory (run_memory_gib a run)."""
    cores = os.cpu_count() or 1
    try:
        meminfo = Path("/proc/meminfo").read_text()
        avail_kib = int(next(ln.split()[1] for ln in meminfo.splitlines()
                             if ln.startswith("MemAvailable:")))
    except (OSError, StopIteration, ValueError):
        return cores
    return max(1, min(cores, int(avail_kib / (1 << 20) / run_memory_gib(requests))))


def logs_dir() -> Path:
    path = paths.results_dir() / ".logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def error_line(log_tail: str) -> str:
    """The worker's ``error: ...`` line of a failed run's log (else its last line)."""
    lines = log_tail.splitlines()
    return next((ln for ln in lines if ln.startswith("error: ")), lines[-1] if lines else "?")


def _eta(report: CampaignReport, left: int, jobs: int) -> str:
    """The time the runs left would take at the mean of the runs made so far."""
    made = [o.seconds for o in report.outcomes if o.seconds > 0]
    if not made or not left:
        return ""
    return f"; about {sum(made) / len(made) * left / jobs / 60:.0f} min left"


def _tail(path: Path, n: int = LOG_TAIL_LINES) -> str:
    """The log's last lines, led by its first ``error:`` line when that is further up (a
    gem5 error's message carries gem5's own log tail after it)."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    first_error = next((ln for ln in lines if ln.startswith("error: ")), None)
    tail = lines[-n:]
    if first_error and first_error not in tail:
        tail = [first_error, "...", *tail]
    return "\n".join(tail)


@dataclass
class _Running:
    proc: subprocess.Popen
    run_id: str
    label: dict
    log: Path
    started: float


def run_campaign(requests: list[RunRequest], *, jobs: int | None = None, name: str = "campaign",
                 say: Callable[[str], None] = print, console: Console | None = None,
                 host_seconds: Callable[[RunRequest], float] = run_host_seconds
                 ) -> CampaignReport:
    """Run every request whose results are not there yet, ``jobs`` at a time, the costliest
    by ``host_seconds`` first (the estimate the start line gives too)."""
    if not requests:
        raise UserError(f"{name}: no runs to do")
    jobs = default_jobs(requests) if jobs is None else jobs
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, not {jobs}")
    results = paths.results_dir()
    stale = remove_stale_staging(results)
    if stale:
        say(f"{name}: removed {len(stale)} staging director{'y' if len(stale) == 1 else 'ies'}"
            f" left by killed runs")
    # Prepare in this process: builds happen once, before any worker starts.
    plan = plan_campaign(requests, host_seconds, say)
    report = CampaignReport()
    for prepared, state in plan.finished:
        report.outcomes.append(RunOutcome(prepared.run_id, prepared.request.label,
                                          "reused" if state == "done" else state))
    todo = deque((run.request, run.run_id) for run in plan.todo)
    say(f"{name}: {len(requests)} runs, {len(report.outcomes)} already done, {len(todo)} to run "
        f"with {jobs} at a time (estimated {plan.estimate_s / 3600:.1f} host hours of runs)")
    if not todo:
        return report
    queue_dir = logs_dir()
    running: list[_Running] = []
    console = console or Console(stderr=True)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(name, total=len(todo), status="")

        def status() -> str:
            return (f"done {report.count('done')}  failed {report.count('failed')}  "
                    f"with problems {report.count('problems')}  "
                    f"running {len(running)}  queued {len(todo)}")
        try:
            while todo or running:
                elsewhere: list[tuple[RunRequest, str]] = []
                while todo and len(running) < jobs:
                    request, run_id = todo.popleft()
                    # Another campaign on this store is making it: take the next one, and
                    # look again later (reused once it is published).
                    with run_lock(results, run_id, blocking=False) as free:
                        pass
                    if not free:
                        elsewhere.append((request, run_id))
                        continue
                    state = finished_state(results / run_id)
                    if state is not None:
                        report.outcomes.append(RunOutcome(
                            run_id, request.label, "reused" if state == "done" else state))
                        bar.advance(task)
                        continue
                    spec = queue_dir / f"{run_id}.request.json"
                    write_atomic(spec, json.dumps({"request": request_to_data(request),
                                                   "run_id": run_id}))
                    # Appended to: a resumed campaign's attempts, or another campaign's
                    # worker waiting for this one's run, add to the log instead of
                    # truncating it under a worker that is still writing.
                    log = queue_dir / f"{run_id}.log"
                    with open(log, "a") as f:
                        f.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} campaign {name} "
                                f"(pid {os.getpid()})\n")
                    proc = subprocess.Popen(
                        [sys.executable, "-m", "schedlab.campaigns.worker", str(spec)],
                        stdout=open(log, "a"), stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL, cwd=paths.REPO, preexec_fn=die_with_parent,
                        env={**os.environ, "PYTHONPATH": str(paths.REPO)})
                    running.append(_Running(proc, run_id, request.label, log, time.monotonic()))
                    if not bar.console.is_terminal:
                        # Its log shows the run's progress (a machine's boot to its
                        # checkpoint takes minutes before the run's own).
                        say(f"{name}: started {run_id}; its progress: {log}")
                    report.peak_running = max(report.peak_running, len(running))
                todo.extend(elsewhere)
                bar.update(task, status=status())
                time.sleep(0.5)
                for r in [r for r in running if r.proc.poll() is not None]:
                    running.remove(r)
                    state = finished_state(results / r.run_id) or "failed"
                    outcome = RunOutcome(r.run_id, r.label, state, time.monotonic() - r.started,
                                         "" if state == "done" else _tail(r.log), r.log)
                    report.outcomes.append(outcome)
                    if state != "done":
                        bar.console.print(f"[red]{state}[/red] {r.run_id} {r.label}:\n"
                                          f"{outcome.log_tail}")
                    if state == "failed" and report.count("failed") >= FIRST_FAILURES_STOP \
                            and not report.count("done") and not report.count("problems"):
                        say(f"{name}: the first {FIRST_FAILURES_STOP} runs all failed; "
                            f"stopping (fix the cause above, then rerun to resume)")
                        raise KeyboardInterrupt
                    bar.advance(task)
                    bar.update(task, status=status())
                    if not bar.console.is_terminal:
                        # A log file or a batch job's output shows no live bar.
                        say(f"{name}: {state} {r.run_id} in {outcome.seconds / 60:.1f} min; "
                            f"{status()}{_eta(report, len(todo) + len(running), jobs)}")
        except KeyboardInterrupt:
            report.interrupted = True
            for r in running:
                r.proc.send_signal(signal.SIGTERM)
            for r in running:
                try:
                    r.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    r.proc.kill()
                    r.proc.wait()
            remove_stale_staging(results)
    say(f"{name}: {report.count('done')} run, {report.count('reused')} reused, "
        f"{report.count('problems')} with problems, {report.count('failed')} failed"
        + (", interrupted (rerun to resume)" if report.interrupted else ""))
    return report
