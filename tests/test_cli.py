"""The command line: help on every command, listings, and one-line errors for bad input."""

from __future__ import annotations

import pytest

from conftest import run_cli

COMMANDS = ["demo", "test", "machines", "build", "run", "doctor", "workloads", "boot"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    proc = run_cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout


def test_machines_lists_the_catalogue_and_shows_one():
    listing = run_cli("machines")
    assert listing.returncode == 0
    for name in ("niagara", "clovertown-e5320-ump", "westmere-x5660", "hector"):
        assert name in listing.stdout
    one = run_cli("machines", "clovertown-e5320", "--set", "l2.size=8MiB")
    assert one.returncode == 0
    assert "l2: 8MiB 16-way" in one.stdout and "overrides: l2.size=8MiB" in one.stdout


def _one_line_error(proc, fragment: str) -> None:
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and fragment in lines[-1], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, fragment", [
    (["machines", "nosuch"], "unknown machine 'nosuch'"),
    (["machines", "niagara", "--set", "l2.size=3000KiB"], "not a power of two"),
    (["run", "--machine", "nosuch", "--workload", "memlat"], "unknown machine"),
    (["run", "--machine", "niagara", "--workload", "memlat", "--cpus", "8"],
     "outside niagara's cores 0-7"),
    (["run", "--machine", "niagara", "--workload", "memlat", "--policy", "nosuch"],
     "unknown policy 'nosuch'"),
    (["run", "--machine", "niagara", "--workload", "nosuch"], "nosuch"),
    (["run", "--machine", "niagara", "--workload", "memlat", "--sched", "fifo"],
     "priority in 1..99"),
    (["run", "--machine", "niagara", "--workload", "memlat", "--sysctl", "oops"],
     "not KEY=VALUE"),
    # The board plan's checks reach the user before gem5 is looked for.
    (["boot", "--machine", "westmere-x5660", "--set", "memory.size_per_node=100MiB"],
     "not a whole number of 32 MiB steps"),
])
def test_bad_input_gives_one_line_errors(args, fragment):
    _one_line_error(run_cli(*args), fragment)


def test_missing_kernel_source_is_reported_with_the_fix():
    proc = run_cli("build", "kernel", env={"SCHEDLAB_KERNEL_TARBALL": "/nonexistent/linux.tar.xz"})
    _one_line_error(proc, "apt-get install linux-source-6.1=")


def test_unknown_command_and_option_exit_non_zero():
    assert run_cli("frobnicate").returncode == 2
    assert run_cli("machines", "--frob").returncode == 2


def test_doctor_reports_every_prerequisite():
    proc = run_cli("doctor")
    assert proc.returncode == 0
    for item in ("kernel source", "qemu", "gcc", "busybox", "gem5"):
        assert item in proc.stdout


def test_task_attribution_is_refused_off_gem5():
    # The context-switch m5 op is an undefined instruction anywhere but gem5: never send it
    # to QEMU, whether asked for by flag or by sysctl.
    from schedlab.errors import UserError
    from schedlab.runs import RunRequest, WorkloadRequest, prepare
    job = (WorkloadRequest("memlat"),)
    with pytest.raises(UserError, match="needs the gem5 backend"):
        prepare(RunRequest(machine="clovertown-e5320-mup", jobs=job, attribute_tasks=True))
    with pytest.raises(UserError, match="kernel.sched_m5_switch is set by --attribute-tasks"):
        prepare(RunRequest(machine="clovertown-e5320-mup", jobs=job,
                           sysctl=(("kernel.sched_m5_switch", "1"),)))
