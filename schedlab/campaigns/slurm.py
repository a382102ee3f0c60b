"""SLURM executor: a campaign's runs as one SLURM job array, one run per array task.

``submit`` resolves every request on the submitting host (building the kernel, image and
programs into the shared cache if they are missing), leaves out the runs whose results are
already in the shared results directory, and submits the others as one job array capped at
``parallelism`` tasks at once. Each task executes one prepared run with the same Python
(the run.py virtual environment, in the shared cache) and publishes ``results/<run-id>/``
atomically, so a cancelled, preempted or killed task leaves nothing half-written, and
submitting the campaign again runs exactly the runs that are still missing.

Why submitit (Meta's ``submitit``) rather than hand-written ``sbatch --array`` scripts: it is
maintained and widely used (Hydra's SLURM launcher is built on it), pure Python with two small
dependencies, and it already does the fiddly parts: pickling each task's arguments next to
its logs, one ``sbatch --array=0-N%P`` for a whole list of calls (``map_array``), per-task log
files, and turning SLURM's time-limit signal into an error that unwinds the run. What it
does not do well here is job state: it asks ``sacct``, which needs SLURM's accounting
database, and many small clusters (and our test's one-node cluster) have none. So the
states below come from ``squeue --states=all`` (SLURM keeps finished jobs there for
MinJobAge, 5 minutes by default), then ``sacct`` when it works, and, always first, from
the results directory itself: a run is done when ``results/<run-id>/results.json`` exists.

Public API: :func:`submit` returning a :class:`SlurmReport` (``refresh``/``wait`` it later
when submitted with ``wait=False``).
"""

from __future__ import annotations

import json
import math
import os
import pickle
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import paths, runs
from ..errors import UserError
from ..runs import PreparedRun, RunRequest
from ..store import run_lock
from .cost import run_host_seconds
from .local import run_memory_gib
from .plan import plan_campaign

Progress = Callable[[str], None]

# Seconds between two looks at the queue while waiting.
POLL_SECONDS = 5.0
# A progress line at least this often while waiting, even when nothing changed.
HEARTBEAT_SECONDS = 60.0
# Lines of a failed task's log kept in the report.
LOG_TAIL_LINES = 40
# What a task's log says when it executed a run (the test counts these: once per run).
COMPLETED_MARK = "schedlab-slurm: completed run"
# SLURM job states (squeue's long names) of tasks that have not started or are running.
PENDING_STATES = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                  "RESV_DEL_HOLD", "SPECIAL_EXIT"}
RUNNING_STATES = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT",
                  "RESIZING"}
ACTIVE_STATES = PENDING_STATES | RUNNING_STATES
# Environment variables the run itself reads, passed to every task explicitly (sites may
# submit with SBATCH_EXPORT=NONE).
PASSED_ENV = ("GEM5", "GEM5_SRC")


@dataclass
class SlurmRun:
    """One run of the campaign and what became of it.

    ``state`` is one of ``skipped`` (already done before this submission), ``pending``,
    ``running``, ``done`` (its results directory exists) or ``failed`` (its task ended
    without results; ``log_tail`` holds the end of the task's log).
    """

    run_id: str
    request: RunRequest
    dir: Path
    state: str
    task: int | None = None          # index in the job array
    job_id: str | None = None        # SLURM's id of the task, "<array>_<index>"
    slurm_state: str | None = None   # last state SLURM reported (COMPLETED, CANCELLED, ...)
    log: Path | None = None
    log_tail: str | None = None
    ok: bool | None = None           # results.json's "ok" once done
    _result_pickle: Path | None = field(default=None, repr=False)


@dataclass
class SlurmReport:
    """What a submission did: the array's id, its logs, and every run's state."""

    name: str
    job_id: str | None               # the array's job id; None when nothing was submitted
    log_dir: Path
    runs: list[SlurmRun]

    def _with(self, state: str) -> list[SlurmRun]:
        return [r for r in self.runs if r.state == state]

    @property
    def done(self) -> list[SlurmRun]:
        return self._with("done")

    @property
    def failed(self) -> list[SlurmRun]:
        return self._with("failed")

    @property
    def skipped(self) -> list[SlurmRun]:
        return self._with("skipped")

    @property
    def running(self) -> list[SlurmRun]:
        return self._with("running")

    @property
    def pending(self) -> list[SlurmRun]:
        return self._with("pending")

    @property
    def finished(self) -> bool:
        """No task left pending or running."""
        return not self.pending and not self.running

    @property
    def complete(self) -> bool:
        """Every run of the campaign has its results (done now or before)."""
        return all(r.state in ("done", "skipped") for r in self.runs)

    def counts(self) -> dict[str, int]:
        return {s: len(self._with(s)) for s in ("done", "failed", "running", "pending",
                                               "skipped")}

    def summary(self) -> str:
        c = self.counts()
        submitted = len(self.runs) - c["skipped"]
        where = f"job {self.job_id}" if self.job_id else "nothing submitted"
        return (f"slurm {self.name} ({where}): {c['done']}/{submitted} done, {c['failed']} "
                f"failed, {c['running']} running, {c['pending']} pending"
                + (f"; {c['skipped']} already done before" if c["skipped"] else ""))

    def failures(self) -> str:
        """Each failed run with its task, SLURM state and log tail."""
        parts = []
        for run in self.failed:
            state = run.slurm_state or "state unknown"
            parts.append(f"run {run.run_id} (task {run.job_id}, {state}) failed; log {run.log}:"
                         f"\n{_indent(run.log_tail or '(no log)')}")
        return "\n".join(parts)

    def refresh(self) -> "SlurmReport":
        """Update every submitted run's state from the results directory and SLURM."""
        active = [r for r in self.runs if r.job_id and r.state in ("pending", "running")]
        if not active or not self.job_id:
            return self
        # SLURM first, then the results: a task publishes its run before it ends, so a task
        # SLURM calls finished whose results are missing really left none.
        queue = _queue_states(self.job_id)
        accounting: dict[str, str] | None = None
        for run in active:
            slurm = (queue or {}).get(run.job_id)
            if slurm is None and queue is not None:
                if accounting is None:
                    accounting = _accounting_states(self.job_id)
                slurm = accounting.get(run.job_id)
            if slurm:
                run.slurm_state = slurm
            outcome = _task_outcome(run)
            if (run.dir / "results.json").is_file() or outcome == "success":
                _mark_done(run)
            elif slurm in PENDING_STATES:
                run.state = "pending"
            elif slurm in RUNNING_STATES:
                run.state = "running"
            elif slurm or outcome == "error" or queue is not None:
                # Ended (any other state: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
                # OUT_OF_MEMORY, PREEMPTED, ...), or no longer known to SLURM at all.
                run.state = "failed"
                run.slurm_state = slurm or "no longer known to SLURM"
                run.log_tail = _log_tail(run.log)
            # else: squeue did not answer this time; keep the last state.
        return self

    def wait(self, progress: Progress = print, poll_seconds: float = POLL_SECONDS) -> "SlurmReport":
        """Poll until no task is pending or running, printing a line when counts change,
        and what is wrong with the nodes while tasks wait on them."""
        last, last_time, last_nodes = None, 0.0, None
        try:
            while True:
                self.refresh()
                line = self.summary()
                if line != last or time.monotonic() - last_time > HEARTBEAT_SECONDS:
                    progress(line)
                    last, last_time = line, time.monotonic()
                    nodes = node_problems() if not self.finished else None
                    if nodes and nodes != last_nodes:
                        progress(nodes)
                    last_nodes = nodes
                if self.finished:
                    break
                time.sleep(poll_seconds)
        except KeyboardInterrupt:
            progress(f"slurm: stopped waiting; job array {self.job_id} keeps running "
                     f"('squeue -j {self.job_id}' to watch it, 'scancel {self.job_id}' to stop "
                     f"it); submit the campaign again later to pick up what is missing")
            raise
        if self.failed:
            progress(self.failures())
            progress(f"slurm: {len(self.failed)} run(s) failed; submit the campaign again "
                     f"to run them (finished runs are skipped)")
        return self


def submit(requests: list[RunRequest], *, name: str, parallelism: int = 8,
           partition: str | None = None, time_limit_min: int = 360, cpus_per_task: int = 1,
           mem_gb: int | None = None, log_dir: Path | None = None, progress: Progress = print,
           wait: bool = True,
           host_seconds: Callable[[RunRequest], float] = run_host_seconds) -> SlurmReport:
    """Run the requests' missing runs as one SLURM job array; return what became of each.

    Every request is prepared here (to know its run id); runs whose
    ``results/<run-id>/results.json`` exists are skipped, the others are submitted as one
    array of at most ``parallelism`` concurrent tasks, each task one run. The results
    directory, the build cache, the repository and this Python must be at the same paths on
    the nodes (a shared filesystem); the logs go to ``log_dir`` (default
    ``<results>/.slurm/<name>/``), which must be shared too. With ``wait`` the call polls the
    queue until every task has ended; otherwise call ``report.wait()`` later.
    """
    if parallelism < 1:
        raise UserError(f"the SLURM array's concurrency limit must be at least 1, "
                        f"not {parallelism}")
    if mem_gb is None:
        # What the largest of these runs may take (Hector's gem5 runs more than others).
        mem_gb = math.ceil(run_memory_gib(requests))
    if time_limit_min < 1 or cpus_per_task < 1 or mem_gb < 1:
        raise UserError("time limit, CPUs per task and memory must each be at least 1")
    if not name or any(c.isspace() or c in "/%" for c in name):
        raise UserError(f"campaign name {name!r} must be non-empty, without spaces, '/' or '%'")
    _require_slurm()
    results = paths.results_dir().resolve()
    cache = paths.cache_dir().resolve()

    plan = plan_campaign(requests, host_seconds, progress)
    report_runs: list[SlurmRun] = []
    for run, _ in plan.finished:
        with run_lock(results, run.run_id, blocking=False) as mine:
            if mine:  # no task holds the run: staging left by a killed one is stale
                _remove_staging(results, run.run_id)
        entry = SlurmRun(run.run_id, run.request, results / run.run_id, "skipped")
        _mark_done(entry, state="skipped")
        report_runs.append(entry)
    todo = plan.todo
    report_runs += [SlurmRun(run.run_id, run.request, results / run.run_id, "pending")
                    for run in todo]
    log_dir = Path(log_dir or results / ".slurm" / name).resolve()
    job_name = f"schedlab-{name}"
    progress(f"slurm: campaign {name}: {plan.runs} runs, {len(plan.finished)} already done, "
             f"{len(todo)} to submit (estimated {plan.estimate_s / 3600:.1f} host hours)")
    if not todo:
        return SlurmReport(name, None, log_dir, report_runs)
    _refuse_if_queued(job_name)

    import submitit  # only the submitting side and the tasks need it

    log_dir.mkdir(parents=True, exist_ok=True)
    env = _task_env(results, cache)
    executor = submitit.SlurmExecutor(folder=log_dir)
    parameters = dict(
        job_name=job_name, time=time_limit_min, cpus_per_task=cpus_per_task,
        mem=f"{mem_gb}GB", array_parallelism=parallelism, stderr_to_stdout=True,
        # submitit's warning before the time limit (SIGUSR2; the run unwinds as failed):
        # 90 s, or a quarter of a short limit.
        signal_delay_s=min(90, time_limit_min * 15),
        wckey=None,  # submitit's default "submitit" may be refused where wckeys are enforced
        setup=[*(f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())),
               f"export PYTHONPATH={shlex.quote(str(paths.REPO))}${{PYTHONPATH:+:$PYTHONPATH}}",
               f"cd {shlex.quote(str(paths.REPO))}"],
        additional_parameters={"chdir": str(paths.REPO)})
    if partition:
        parameters["partition"] = partition
    executor.update_parameters(**parameters)
    try:
        jobs = executor.map_array(_run_task, todo, [env] * len(todo))
    except Exception as e:  # sbatch refused: bad partition, limits, ...
        raise UserError(f"sbatch refused the job array: {str(e).strip().splitlines()[-1]}; "
                        f"check the partition ('sinfo'), time limit and memory") from e
    array_id = jobs[0].job_id.split("_")[0]
    by_id = {r.run_id: r for r in report_runs}
    manifest = []
    for index, (run, job) in enumerate(zip(todo, jobs)):
        entry = by_id[run.run_id]
        entry.task, entry.job_id = index, job.job_id
        entry.log, entry._result_pickle = job.paths.stdout, job.paths.result_pickle
        manifest.append({"task": index, "job_id": job.job_id, "run_id": run.run_id,
                         "label": run.request.label, "log": str(entry.log)})
    (log_dir / f"{array_id}_runs.json").write_text(json.dumps(manifest, indent=1) + "\n")
    progress(f"slurm: submitted {len(todo)} runs as job array {array_id} ({job_name}, at most "
             f"{parallelism} at once{f', partition {partition}' if partition else ''}); "
             f"logs in {log_dir}")
    report = SlurmReport(name, array_id, log_dir, report_runs)
    return report.wait(progress) if wait else report


# --- the array task ---------------------------------------------------------------------

class RunCancelled(Exception):
    """SLURM asked the task to stop (scancel, preemption, node shutdown)."""


def _on_sigterm(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let the unwinding finish
    raise RunCancelled("SIGTERM from SLURM (scancel, preemption or shutdown): run abandoned, "
                       "its staging directory removed; submit the campaign again to run it")


def _run_task(prepared: PreparedRun, env: dict[str, str]) -> str:
    """One array task: execute one prepared run into the shared results directory."""
    os.environ.update(env)
    os.chdir(paths.REPO)
    # submitit ignores SIGTERM (it waits for its own time-limit signal); a run should stop
    # at once instead, unwinding so that its staging directory is removed and QEMU or gem5
    # is killed. SLURM's SIGKILL after KillWait would leave the staging directory, which the
    # next task of the same run removes (below).
    signal.signal(signal.SIGTERM, _on_sigterm)

    def progress(message: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)

    results = paths.results_dir()
    run_id = prepared.run_id
    task = f"{os.environ.get('SLURM_ARRAY_JOB_ID', os.environ.get('SLURM_JOB_ID', '?'))}_" \
           f"{os.environ.get('SLURM_ARRAY_TASK_ID', '0')}"
    progress(f"schedlab-slurm: task {task} on {socket.gethostname()} (pid {os.getpid()}): "
             f"run {run_id} (label {json.dumps(prepared.request.label)}) into {results}")
    # The tree the task runs from must still make the planned run (the pickled spec names
    # the planned one; gem5's script and the guest come from the tree as it is now).
    runs.prepare_planned(prepared.request, run_id, progress=_quiet, build=False)
    with run_lock(results, run_id, blocking=True):
        if (results / run_id / "results.json").is_file():
            progress(f"schedlab-slurm: run {run_id} was already done; nothing to do")
            return str(results / run_id)
        _remove_staging(results, run_id)  # we hold the run: any staging is a killed task's
        out = runs.execute(prepared, progress=progress)
    ok = json.loads((out / "results.json").read_text()).get("ok")
    progress(f"{COMPLETED_MARK} {run_id} (ok={ok}): {out}")
    return str(out)


# --- helpers ------------------------------------------------------------------------------

def _quiet(message: str) -> None:
    pass


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _require_slurm() -> None:
    missing = [c for c in ("sbatch", "squeue", "srun", "scancel") if shutil.which(c) is None]
    if missing:
        raise UserError(f"SLURM's client commands are missing ({', '.join(missing)}): run on "
                        f"a SLURM submit host, or install Debian's slurm-client with SLURM_CONF "
                        f"pointing at the cluster's slurm.conf")


def _task_env(results: Path, cache: Path) -> dict[str, str]:
    """What a task needs in its environment: where results and builds are, and gem5."""
    env = {k: v for k, v in os.environ.items() if k.startswith("SCHEDLAB_")}
    env.update({k: os.environ[k] for k in PASSED_ENV if k in os.environ})
    env.update(SCHEDLAB_RESULTS=str(results), SCHEDLAB_CACHE=str(cache), SCHEDLAB_IN_VENV="1")
    return env


def _remove_staging(results: Path, run_id: str) -> None:
    for stale in results.glob(f".{run_id}.*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)


def _mark_done(run: SlurmRun, state: str = "done") -> None:
    run.state = state
    try:
        run.ok = json.loads((run.dir / "results.json").read_text()).get("ok")
    except (OSError, ValueError):
        run.ok = None


def _task_outcome(run: SlurmRun) -> str | None:
    """'success' or 'error' from submitit's result file, None if the task wrote none."""
    if run._result_pickle is None or not run._result_pickle.is_file():
        return None
    try:
        with open(run._result_pickle, "rb") as f:
            return str(pickle.load(f)[0])
    except Exception:
        return None


def _log_tail(log: Path | None) -> str:
    if log is None or not log.is_file():
        return (f"(no log at {log}: the task never started, or the log directory is not on a "
                f"filesystem the nodes share)")
    lines = log.read_text(errors="replace").splitlines()
    tail = lines[-LOG_TAIL_LINES:]
    # SLURM's own word on why a task ended ("slurmstepd-NODE: error: *** JOB ... CANCELLED"),
    # written when it signals the task, comes before whatever the task prints as it
    # unwinds, and a long traceback pushes it out of the tail: keep it.
    said = [ln for ln in lines[:-LOG_TAIL_LINES] if ln.startswith("slurmstepd")]
    return "\n".join(said + tail)


# sinfo's node states that keep tasks from starting or reporting; a trailing "*" means the
# controller has had no answer from the node's slurmd (SlurmdTimeout).
UNUSABLE_NODE_STATES = ("down", "drain", "fail", "not_responding", "unknown")


def node_problems() -> str | None:
    """One line on the nodes that cannot run or report tasks now, with how to recover; None
    when every node answers (or sinfo cannot be asked)."""
    try:
        out = _slurm("sinfo", "-h", "-N", "-o", "%N %T")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    bad = {}
    for line in out.stdout.splitlines():
        node, _, state = line.strip().partition(" ")
        if node and (state.endswith("*") or state.rstrip("*~#!%$@^-").startswith(
                UNUSABLE_NODE_STATES)):
            bad[node] = state
    if not bad:
        return None
    names = ",".join(sorted(bad))
    states = ", ".join(f"{n} {s}" for n, s in sorted(bad.items()))
    return (f"slurm: node(s) not responding or down ({states}): tasks cannot start there, "
            f"and tasks shown running there may have died with it (SLURM ends them as "
            f"NODE_FAIL once the node is declared down or returns); restart slurmd on it, "
            f"then 'scontrol update nodename={names} state=resume'. Still waiting (Ctrl-C "
            f"stops waiting; the array stays queued)")


def _slurm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def _queue_states(array_id: str) -> dict[str, str] | None:
    """Task id -> state for the array's tasks SLURM still holds; None if squeue failed."""
    try:
        proc = _slurm("squeue", "-h", "-r", "--states=all", "-j", array_id, "-o", "%i|%T")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        # An array SLURM has forgotten (older than MinJobAge) is "Invalid job id".
        return {} if "invalid job id" in proc.stderr.lower() else None
    states = {}
    for line in proc.stdout.splitlines():
        task, _, state = line.strip().partition("|")
        if task:
            states[task] = state.split()[0] if state.split() else state
    return states


def _accounting_states(array_id: str) -> dict[str, str]:
    """Task id -> state from sacct, for tasks squeue no longer shows ({} without accounting)."""
    try:
        proc = _slurm("sacct", "-n", "-X", "-P", "-j", array_id, "-o", "JobID,State")
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if proc.returncode != 0:
        return {}
    states = {}
    for line in proc.stdout.splitlines():
        task, _, state = line.strip().partition("|")
        if task and state:
            states[task] = state.split()[0]  # "CANCELLED by 0" -> CANCELLED
    return states


def _refuse_if_queued(job_name: str) -> None:
    """A second array of the same campaign while the first runs could run a run twice."""
    try:
        proc = _slurm("squeue", "-h", "-r", "--me", "-n", job_name, "-o", "%i|%T")
    except (OSError, subprocess.TimeoutExpired):
        return
    busy = [line.split("|")[0] for line in proc.stdout.splitlines()
            if line.partition("|")[2].strip() in ACTIVE_STATES]
    if busy:
        array = sorted({b.split("_")[0] for b in busy})
        raise UserError(f"campaign {job_name} still has {len(busy)} task(s) queued or running "
                        f"(job {', '.join(array)}); wait for them or 'scancel {' '.join(array)}' "
                        f"before submitting it again")
