"""The SLURM executor against a real one-node SLURM on localhost (tests/slurm_cluster.py).

A QEMU campaign of six runs is submitted as one job array (two tasks at once); while their
guests run, one task is cancelled with scancel (SIGTERM: the run unwinds) and another is
killed with SIGKILL (its staging directory stays behind, as after kill -9); the report must
list both as failed with their log tails; submitting the campaign again must run those two
only, and afterwards every run has exactly one complete results directory, no staging
directory is left, and every run was executed to completion exactly once (each task's log
says so when it completes one).

Skipped, with the reason printed, where SLURM is not installed or we are not root. With
SCHEDLAB_REQUIRE_SLURM=1 (CI) those are failures instead.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from schedlab.campaigns import slurm
from schedlab.errors import UserError
from schedlab.runs import RunRequest, WorkloadRequest
from slurm_cluster import LocalSlurm, Unavailable

MACHINE = "clovertown-e5320-mup"
RUNS = 6


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@pytest.fixture(scope="module")
def slurm_cluster():
    cluster = LocalSlurm()
    started = time.monotonic()
    try:
        cluster.start()
    except Unavailable as e:
        reason = f"no local SLURM cluster: {e}"
        say(reason)
        if os.environ.get("SCHEDLAB_REQUIRE_SLURM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    say(f"slurm: one-node cluster {cluster.node} up in {time.monotonic() - started:.1f} s "
        f"({cluster.conf})")
    yield cluster
    cluster.stop()


def campaign() -> list[RunRequest]:
    # Distinct runs: each memlat runs for a different number of seconds (a real difference
    # of the workload, so each has its own run id). The first two are cancelled and killed
    # while their guests run, after both have booted: 30 s and more, so that the first is
    # still running however much later a busy host boots the second; the others 4 s and more.
    return [RunRequest(machine=MACHINE, backend="qemu",
                       jobs=(WorkloadRequest("memlat", size="small",
                                             duration=float(30 + i if i < 2 else 4 + i)),),
                       label={"rep": i})
            for i in range(RUNS)]


def _wait_for(predicate, timeout: float, what: str, cluster: LocalSlurm):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}; queue:\n"
                f"{cluster.squeue()}\n{cluster.logs()}")


def test_campaign_survives_a_cancelled_task(slurm_cluster, results_dir, tmp_path,
                                            guest_kernel, guest_image):
    logs = tmp_path / "slurm-logs"
    lines: list[str] = []

    def progress(message: str) -> None:
        lines.append(message)
        say(message)

    # 1. Submit the six runs as one array, at most two at once, and do not wait.
    started = time.monotonic()
    report = slurm.submit(campaign(), name="test-campaign", parallelism=2, time_limit_min=20,
                          mem_gb=1, log_dir=logs, progress=progress, wait=False)
    assert report.job_id and len(report.runs) == RUNS
    assert len({r.run_id for r in report.runs}) == RUNS
    assert all(r.state == "pending" and r.job_id == f"{report.job_id}_{r.task}"
               for r in report.runs)
    shown = subprocess.run(["scontrol", "show", "job", report.job_id], capture_output=True,
                           text=True).stdout
    assert "ArrayTaskThrottle=2" in shown, shown  # the concurrency cap
    # While the array runs, the same campaign is not submitted a second time.
    with pytest.raises(UserError, match="still has 6 task"):
        slurm.submit(campaign(), name="test-campaign", log_dir=logs, progress=progress)

    # 2. While the first two tasks' guests run (each has its staging directory and QEMU
    # has booted it): cancel the first (scancel: SIGTERM, the run unwinds) and kill the
    # second's Python with SIGKILL (its staging directory stays behind, as after kill -9;
    # scancel --signal=KILL would not do: SLURM takes it for a cancel, SIGTERM first).
    victim, killed = report.runs[0], report.runs[1]
    for run in (victim, killed):
        _wait_for(lambda: run.log and run.log.is_file()
                  and "qemu: guest ready" in run.log.read_text(errors="replace"),
                  300, f"task {run.job_id}'s guest to boot", slurm_cluster)
        assert list(results_dir.glob(f".{run.run_id}.*")), "no staging directory mid-run"
        assert not (run.dir / "results.json").exists()
    # At most two tasks run at once.
    running = [line for line in slurm_cluster.squeue().splitlines() if " RUNNING " in line]
    assert len(running) == 2, running
    subprocess.run(["scancel", victim.job_id], check=True)
    os.kill(int(re.search(r"\(pid (\d+)\)", killed.log.read_text()).group(1)), signal.SIGKILL)
    say(f"cancelled task {victim.job_id} ({victim.run_id}) and killed task {killed.job_id} "
        f"({killed.run_id}) after {time.monotonic() - started:.1f} s")

    report.wait(progress, poll_seconds=1.0)
    first_seconds = time.monotonic() - started
    say(f"first array finished in {first_seconds:.1f} s: {report.summary()}")
    assert report.counts() == {"done": RUNS - 2, "failed": 2, "running": 0, "pending": 0,
                               "skipped": 0}, report.summary()
    assert report.failed == [victim, killed]
    assert victim.slurm_state == "CANCELLED"
    assert victim.log_tail and "CANCELLED" in victim.log_tail, victim.log_tail
    assert "SIGTERM" in victim.log_tail  # our handler unwound the run ...
    assert not victim.dir.exists() and not list(results_dir.glob(f".{victim.run_id}.*"))
    assert killed.log_tail and killed.slurm_state, killed
    assert not killed.dir.exists()  # ... while the killed one left its staging directory
    assert list(results_dir.glob(f".{killed.run_id}.*"))
    assert "Killed" in killed.log_tail, killed.log_tail
    for run in (victim, killed):  # reported, with the log's tail
        assert any(run.run_id in line and run.log_tail.splitlines()[-1] in line for line in lines)
    assert all(r.ok for r in report.done), [(r.run_id, r.ok) for r in report.done]

    # 3. Submit again: only the two failed runs are submitted, and they complete.
    started = time.monotonic()
    again = slurm.submit(campaign(), name="test-campaign", parallelism=2, time_limit_min=20,
                         mem_gb=1, log_dir=logs, progress=progress)
    say(f"second array finished in {time.monotonic() - started:.1f} s: {again.summary()}")
    assert again.job_id and again.job_id != report.job_id
    assert again.counts() == {"done": 2, "failed": 0, "running": 0, "pending": 0,
                              "skipped": RUNS - 2}, again.summary()
    assert [r.run_id for r in again.done] == [victim.run_id, killed.run_id]
    assert [r.task for r in again.runs if r.task is not None] == [0, 1]  # a two-task array
    assert again.complete

    # 4. A third submission has nothing to do.
    third = slurm.submit(campaign(), name="test-campaign", log_dir=logs, progress=progress)
    assert third.job_id is None and len(third.skipped) == RUNS

    # Every run: exactly one complete results directory, nothing staged, done once.
    run_ids = {r.run_id for r in report.runs}
    published = {p.name for p in results_dir.iterdir() if not p.name.startswith(".")}
    assert published == run_ids
    staging = [p.name for p in results_dir.iterdir()
               if any(p.name.startswith(f".{rid}.") for rid in run_ids)]
    assert staging == [], staging
    for rid in run_ids:
        results = json.loads((results_dir / rid / "results.json").read_text())
        assert results["run_id"] == rid and results["ok"], results["errors"]
    completed = re.findall(rf"{re.escape(slurm.COMPLETED_MARK)} (\S+)",
                           "".join(p.read_text(errors="replace") for p in logs.glob("*.out")))
    assert sorted(completed) == sorted(run_ids), completed


def test_sbatch_refusal_is_a_clear_error(slurm_cluster, results_dir, tmp_path):
    with pytest.raises(UserError, match="sbatch refused.*[Ii]nvalid partition"):
        slurm.submit(campaign()[:2], name="bad-partition", partition="no-such-partition",
                     log_dir=tmp_path / "logs", progress=say)


def test_submit_without_slurm_is_a_clear_error(monkeypatch, results_dir):
    """No SLURM commands on PATH: one line naming what is missing, before any work."""
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UserError, match="sbatch"):
        slurm.submit(campaign(), name="x", wait=False, progress=lambda m: None)


def test_a_tasks_log_tail_keeps_slurms_own_word_on_how_it_ended(tmp_path):
    from schedlab.campaigns.slurm import LOG_TAIL_LINES, _log_tail
    log = tmp_path / "task.log"
    cancel = "slurmstepd-node1: error: *** JOB 7 ON node1 CANCELLED AT 2026-11-26T13:40:01 ***"
    log.write_text("\n".join(["started", cancel] + [f"  traceback line {i}"
                                                      for i in range(LOG_TAIL_LINES + 5)]))
    tail = _log_tail(log).splitlines()
    assert tail[0] == cancel and tail[-1] == f"  traceback line {LOG_TAIL_LINES + 4}"
    assert len(tail) == LOG_TAIL_LINES + 1 and "started" not in tail


def test_a_node_that_stops_answering_is_named_with_how_to_recover(slurm_cluster):
    """While slurmd is down the driver said only "N pending" for minutes: it names the node,
    what that means for its tasks, and the commands that bring it back."""
    assert slurm.node_problems() is None                    # every node answers
    slurm_cluster.stop_slurmd()
    try:
        message = _wait_for(slurm.node_problems, 120, "the controller to notice slurmd is gone",
                            slurm_cluster)
        assert message.startswith(f"slurm: node(s) not responding or down ({slurm_cluster.node} ")
        assert f"'scontrol update nodename={slurm_cluster.node} state=resume'" in message
        assert "NODE_FAIL" in message
    finally:
        slurm_cluster.restart_slurmd()
    assert slurm.node_problems() is None


def test_node_states_that_keep_tasks_waiting(monkeypatch):
    import subprocess
    answers = {"ok": "node1 idle\nnode2 allocated\n", "stale": "node1 idle*\nnode2 mixed\n",
               "down": "node1 down*\nnode2 drained\n"}

    def sinfo(which):
        return lambda *a: subprocess.CompletedProcess(a, 0, answers[which], "")
    monkeypatch.setattr(slurm, "_slurm", sinfo("ok"))
    assert slurm.node_problems() is None
    monkeypatch.setattr(slurm, "_slurm", sinfo("stale"))
    assert "(node1 idle*)" in slurm.node_problems()
    monkeypatch.setattr(slurm, "_slurm", sinfo("down"))
    assert "(node1 down*, node2 drained)" in slurm.node_problems()
    assert "nodename=node1,node2 state=resume" in slurm.node_problems()
