"""The command line: help on every command, listings, and one-line errors for bad input."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_cli

COMMANDS = ["demo", "test", "machines", "build", "run", "doctor", "workloads", "boot", "sweep",
            "reproduce"]


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
    assert "guest kernel tick" not in one.stdout
    assert "guest kernel tick: 100 Hz" in run_cli("machines", "hector").stdout


def _one_line_error(proc, fragment: str) -> None:
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and fragment in lines[-1], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, fragment", [
    (["machines", "nosuch"], "unknown machine 'nosuch'"),
    (["machines", "niagara", "--set", "l2.size=3000KiB"], "not a power of two"),
    (["machines", "clovertown-e5320", "--set", "l2.size=0"],
     "cache l2: size must be positive, not 0;"),
    (["machines", "clovertown-e5320", "--set", "l2.size=-1MiB"],
     "cache l2: size must be positive, not '-1MiB';"),
    (["machines", "clovertown-e5320", "--set", "l1d.size=0KiB"],
     "cache l1d: size must be positive, not '0KiB';"),
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
    (["run", "--machine", "clovertown-e5320-mup", "--workload", "memlat", "--backend", "qemu",
      "--sampling", "smarts-dense"], "--sampling needs the gem5 backend"),
    (["run", "--machine", "clovertown-e5320-mup", "--workload", "memlat", "--backend", "gem5",
      "--sampling", "1M,10k"], "give PERIOD,WARMUP,MEASURE in instructions"),
    (["run", "--machine", "clovertown-e5320-mup", "--workload", "memlat", "--backend", "gem5",
      "--sampling", "smarts-default"], "room for 4 windows, not 10"),
    (["run", "--machine", "hector", "--workload", "memlat", "--backend", "qemu",
      "--policy", "quantum-2ms"], "not a whole number of hector's ticks (its guest kernel "
                                  "runs at 100 Hz: 10 ms a tick)"),
    (["reproduce", "demo-affinity", "--carry"], "use it with --partial"),
    (["machines", "--machines", "/bin/true"], "is not valid TOML"),
    (["machines", "clovertown-e5320", "--set", "l2.size=16GiB", "--set", "l2.assoc=16"],
     "cache l2 (16GiB) is larger than the machine's memory (8GiB)"),
    (["run", "--machine", "niagara", "--workload", "memlat", "--args", '"-x'],
     "No closing quotation"),
    (["reproduce", "demo-affinity", "--only", "rep"], "write label coordinates as KEY=VALUE"),
    (["reproduce", "demo-affinity", "--only", "benchmark=gzip", "--dry-run"],
     "no label coordinate benchmark"),
    (["reproduce", "demo-affinity", "--backend", "qemu", "--jobs", "0"],
     "--jobs must be at least 1, not 0"),
    (["reproduce", "demo-affinity", "--backend", "qemu", "--jobs", "0", "--executor", "slurm"],
     "--jobs must be at least 1, not 0"),
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


# The executables doctor looks for, by the item it reports them under.
DOCTOR_TOOLS = {"qemu": "qemu-system-x86_64", "gcc": "gcc", "make": "make",
                "busybox": "busybox", "mke2fs": "mke2fs", "valgrind": "valgrind"}


def _doctor(tmp_path, leave_out=(), gem5="", path=True) -> tuple[subprocess.CompletedProcess,
                                                                   dict[str, str]]:
    """``run.py doctor`` on a PATH holding exactly the tools named (all but ``leave_out``),
    with GEM5 as given ("" = not set); returns the process and item -> status line."""
    env = {"GEM5": str(gem5), "SCHEDLAB_CACHE": str(tmp_path / "cache")}
    if path:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for exe in [*DOCTOR_TOOLS.values(), "dpkg-query"]:
            if exe not in leave_out:
                if shutil.which(exe) is None:
                    pytest.skip(f"{exe} is not installed on this host")
                (bin_dir / exe).symlink_to(shutil.which(exe))
        env["PATH"] = str(bin_dir)
    proc = run_cli("doctor", env=env)
    status = {}
    for line in proc.stdout.splitlines():
        item, _, rest = re.split(r"(\s{2,})", line, maxsplit=1)
        status[item] = rest
    return proc, status


def test_doctor_reports_every_prerequisite(tmp_path):
    proc, status = _doctor(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(status) == {"kernel source", *DOCTOR_TOOLS, "static libc", "gem5",
                           "gem5 KVM boot (optional)"}
    for item in ("kernel source", *DOCTOR_TOOLS, "static libc"):
        assert status[item].startswith("ok"), (item, status[item])
    # gem5 is optional: not set is said, with how to get it, and is no failure.
    assert status["gem5"].startswith("not set") and "export GEM5=" in status["gem5"]


def test_doctor_fails_and_names_the_fix_for_missing_tools(tmp_path):
    proc, status = _doctor(tmp_path, leave_out=("qemu-system-x86_64", "valgrind"))
    assert proc.returncode == 1
    assert status["qemu"] == "missing  -> apt-get install qemu-system-x86"
    assert status["valgrind"] == "missing  -> apt-get install valgrind"
    assert all(status[t].startswith("ok") for t in ("gcc", "make", "busybox", "mke2fs"))
    assert proc.stderr.strip().splitlines()[-1] == \
        "error: not ready: qemu, valgrind (the fix is on each line above)"


def _fake_gem5(tmp_path, reply: str, executable: bool = True) -> Path:
    """A stand-in for the gem5 binary answering doctor's version probe with ``reply``."""
    script = tmp_path / "gem5.fast"
    script.write_text(f"#!{sys.executable}\nprint({reply!r})\n")
    script.chmod(0o755 if executable else 0o644)
    return script


@pytest.mark.parametrize("reply, executable, ok, says", [
    ("SCHEDLAB-GEM5 24.0.0.1 1", True, True, "ok: {path} (gem5 24.0.0.1, X86)"),
    ("SCHEDLAB-GEM5 23.1.0.0 1", True, False, "unusable  -> {path} is gem5 23.1.0.0; "
                                              "schedlab needs gem5 24.0.x"),
    ("SCHEDLAB-GEM5 24.0.0.1 0", True, False, "unusable  -> {path} is not built for X86"),
    ("Segmentation fault", True, False, "unusable  -> {path} did not report a gem5 version"),
    ("SCHEDLAB-GEM5 24.0.0.1 1", False, False, "unusable  -> GEM5={path} is not an "
                                               "executable file"),
])
def test_doctor_fails_when_gem5_is_set_but_unusable(tmp_path, reply, executable, ok, says):
    gem5 = _fake_gem5(tmp_path, reply, executable)
    proc, status = _doctor(tmp_path, gem5=gem5, path=False)
    assert status["gem5"].startswith(says.format(path=gem5)), status["gem5"]
    assert proc.returncode == (0 if ok else 1), proc.stderr
    if not ok:
        assert proc.stderr.strip().splitlines()[-1].startswith("error: not ready: gem5")


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


def test_user_program_compile_errors_are_shown_whole(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text("int main(void)\n{\n\treturn undeclared + also_undeclared();\n}\n")
    proc = run_cli("run", "--backend", "qemu", "--machine", "clovertown-e5320-mup",
                   "--workload", str(src))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert f"error: building {src} failed (gcc exited 1):" in lines
    assert any(ln.startswith(f"{src}:3:")
               and "'undeclared' undeclared" in ln.replace("\u2018", "'").replace("\u2019", "'")
               for ln in lines), proc.stderr
    assert any(ln.startswith(f"{src}:3:") and "also_undeclared" in ln for ln in lines), proc.stderr


USER_PROGRAM = r"""#include <stdio.h>

int main(void)
{
	printf("hello from the guest\n");
	printf("answer=42\n");
	printf("  not a metric = its key has spaces\n");
	printf("\n");
	printf("last line\n\n");
	return 0;
}
"""


def test_user_program_plain_output_is_shown_and_kept(results_dir, tmp_path):
    import json
    src = tmp_path / "chatty.c"
    src.write_text(USER_PROGRAM)
    proc = run_cli("run", "--backend", "qemu", "--machine", "clovertown-e5320-mup",
                   "--workload", str(src))
    assert proc.returncode == 0, proc.stderr
    # What the program printed, less its key=value line and the trailing blank lines.
    plain = ["hello from the guest", "  not a metric = its key has spaces", "",
             "last line"]
    (results,) = results_dir.glob("*/results.json")
    (job,) = json.loads(results.read_text())["jobs"]
    assert job["metrics"] == {"answer": 42}
    assert job["output"] == plain
    out = proc.stdout.splitlines()
    start = out.index(f"output of {job['job']} rep 1:")
    assert out[start + 1:start + 1 + len(plain)] == [f"  {line}" for line in plain]


def test_dry_run_of_several_figures_prices_them_together_as_each_alone():
    """The campaign's total is the figures' own estimates added (they share no runs here),
    not the uncalibrated model's."""
    proc = run_cli("reproduce", "lee-fig24", "lee-fig25", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    each = [float(h) for h in re.findall(r"^  \d+ runs at smoke scale on gem5, estimated "
                                         r"([\d.]+) host hours", proc.stdout, re.M)]
    together = re.search(r"^together: 24 distinct runs, estimated ([\d.]+) host hours",
                         proc.stdout, re.M)
    assert len(each) == 2 and together, proc.stdout
    assert abs(float(together.group(1)) - sum(each)) <= 0.11


def _tmpfs(path: Path, options: str) -> bool:
    """Mount a small tmpfs at ``path`` (root only; False where mounting is not allowed)."""
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("options, fragment", [
    ("ro,size=1m", "Read-only file system; point SCHEDLAB_RESULTS"),
    ("size=64k", "no space left on the device"),
])
def test_an_unwritable_or_full_results_directory_is_one_line(tmp_path, options, fragment):
    where = tmp_path / "mnt"
    if not _tmpfs(where, options):
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    try:
        if "ro" not in options.split(","):          # fill it first
            subprocess.run(["dd", "if=/dev/zero", f"of={where / 'fill'}", "bs=4k",
                            "count=100"], capture_output=True)
        proc = run_cli("reproduce", "demo-affinity", "--from-committed",
                       env={"SCHEDLAB_RESULTS": str(where / "results")})
        _one_line_error(proc, fragment)
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


SLEEPER = r"""#include <stdio.h>
#include <unistd.h>

int main(void)
{
	sleep(5);
	printf("answer=42\n");
	return 0;
}
"""


def test_a_disk_that_fills_during_a_run_is_one_line_and_leaves_nothing(tmp_path):
    """The results' disk fills while QEMU writes the guest's console: the error names the
    full disk (not the guest, whose console came out empty), no run is published and the
    staging directory is removed."""
    from schedlab.store import STAGING_NAME
    where = tmp_path / "mnt"
    if not _tmpfs(where, "size=64m"):
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    src = tmp_path / "sleeper.c"
    src.write_text(SLEEPER)
    results = where / "results"
    env = {**os.environ, "SCHEDLAB_IN_VENV": "1", "SCHEDLAB_RESULTS": str(results)}
    proc = subprocess.Popen([sys.executable, "run.py", "run", "--backend", "qemu", "--machine",
                             "clovertown-e5320-mup", "--workload", str(src)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        # QEMU starts once the console exists (the payload and the initramfs are written).
        while not list(results.glob(".*/console.log")) and proc.poll() is None:
            assert time.monotonic() < deadline, "the run never started QEMU"
            time.sleep(0.1)
        subprocess.run(["dd", "if=/dev/zero", f"of={where / 'fill'}", "bs=1M", "count=100"],
                       capture_output=True)
        out, err = proc.communicate(timeout=900)
        _one_line_error(subprocess.CompletedProcess(proc.args, proc.returncode, out, err),
                        f"no space left on the device of {results}; ")
        assert not list(results.glob("*/results.json"))
        assert not [p for p in results.iterdir() if STAGING_NAME.fullmatch(p.name)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["umount", str(where)], capture_output=True)


def test_an_unreadable_results_store_is_rebuilt_from_the_run_directories(tmp_path,
                                                                          monkeypatch):
    import pandas as pd

    from schedlab.analysis.store import store_path, update_store
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    store_path().write_bytes(b"PAR1 truncated by a crash")
    said = []
    frame = update_store(say=said.append)
    assert len(frame) == 0 and "cannot be read" in said[0] and "rebuilding" in said[0]
    assert len(pd.read_parquet(store_path())) == 0      # rewritten, readable again
