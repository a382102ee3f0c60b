"""The run's payload (schedlab.guest.payload): workloads, user programs with their shared
libraries and overlays brought into the booted guest, and on QEMU rt-tests' dynamically
linked cyclictest and hackbench running in it (AF_UNIX sockets and pipes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schedlab.errors import UserError
from schedlab.guest import payload
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare

CYCLICTEST, HACKBENCH = shutil.which("cyclictest"), shutil.which("hackbench")
needs_rt_tests = pytest.mark.skipif(
    not (CYCLICTEST and HACKBENCH),
    reason="rt-tests is not installed (apt-get install rt-tests; versions.toml lists it)")


def _listing(archive: Path) -> list[str]:
    with open(archive, "rb") as f:
        return subprocess.run(["cpio", "-t", "--quiet"], stdin=f, capture_output=True,
                              text=True, check=True).stdout.split()


def _dynamic_program(tmp_path: Path) -> Path:
    """A program linked against a library of our own, in a directory the loader does not
    search by default (ldd finds it through LD_LIBRARY_PATH)."""
    libdir = tmp_path / "mylibs"
    libdir.mkdir()
    (tmp_path / "answer.c").write_text("int answer(void) { return 42; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(libdir / "libanswer.so"),
                    str(tmp_path / "answer.c")], check=True)
    (tmp_path / "prog.c").write_text(
        '#include <stdio.h>\nint answer(void);\n'
        'int main(void) { printf("answer=%d\\n", answer()); return 0; }\n')
    prog = tmp_path / "prog"
    subprocess.run(["gcc", "-o", str(prog), str(tmp_path / "prog.c"), f"-L{libdir}",
                    "-lanswer"], check=True)
    return prog


def test_shared_libraries_are_resolved_as_ldd_does(tmp_path, monkeypatch):
    prog = _dynamic_program(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "mylibs"))
    libs = payload.shared_libraries(prog)
    # The oracle: ldd itself, line by line.
    ldd = subprocess.run(["ldd", str(prog)], capture_output=True, text=True,
                         check=True).stdout
    for guest, host in libs.items():
        assert guest in ldd and host.is_file() and not host.is_symlink()
    assert str(tmp_path / "mylibs" / "libanswer.so") in libs
    assert any(g.startswith("/lib64/ld-linux") for g in libs), libs     # the loader
    assert any("/libc.so.6" in g for g in libs)
    assert str(tmp_path / "mylibs") in payload.library_path(libs).split(":")
    # Without the library the program cannot run anywhere: one line naming the fix.
    monkeypatch.delenv("LD_LIBRARY_PATH")
    with pytest.raises(UserError, match="needs libanswer.so, which the host does not have"):
        payload.shared_libraries(prog)


def test_payload_archive_puts_everything_at_its_guest_path(tmp_path):
    tree = tmp_path / "tree"
    (tree / "schedlab" / "bin").mkdir(parents=True)
    (tree / "schedlab" / "bin" / "multi").write_text("x")
    (tree / "schedlab" / "bin" / "alias").symlink_to("multi")
    prog = tmp_path / "p"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    p = payload.Payload({payload.SPEC: "NONCE=x\n", f"{payload.USER_BIN}/p": prog}, [tree])
    names = _listing(p.write(tmp_path / "payload.cpio", progress=lambda s: None))
    for name in ("schedlab/spec.sh", "schedlab/user/p", "schedlab/bin/multi",
                 "schedlab/bin/alias", "schedlab/user", "schedlab/bin"):
        assert name in names, names
    # Every directory comes before what it holds: the runner's cpio makes no directory
    # an entry does not name (no -d: two system calls per entry on simulated cores).
    for i, name in enumerate(names):
        parent = name.rpartition("/")[0]
        assert not parent or parent in names[:i], (name, names)
    # The spec is not part of the payload's identity (the run id hashes it on its own).
    assert set(p.identity()) == {"/schedlab/bin/multi", "/schedlab/bin/alias",
                                 "/schedlab/user/p"}


@pytest.fixture
def image_m5(guest_image, tmp_path):
    """The image's own m5 tool, out of its ext4 (its unpack ops issue no m5 op when they
    read a file, so it runs on the host)."""
    subprocess.run(["debugfs", "-R", f"dump /opt/schedlab/bin/m5 {tmp_path}/m5",
                    str(guest_image.ext4)], capture_output=True, check=True)
    (tmp_path / "m5").chmod(0o755)
    return tmp_path / "m5"


def test_the_runner_unpacks_a_payload_as_cpio_would(image_m5, tmp_path):
    tree = tmp_path / "tree"
    (tree / "schedlab" / "bin").mkdir(parents=True)
    multi = tree / "schedlab" / "bin" / "multi"
    # Larger than the tool's 256 KiB buffer and not a multiple of 4 (the entries' padding).
    multi.write_bytes(os.urandom(600_001))
    multi.chmod(0o755)
    (tree / "schedlab" / "bin" / "alias").symlink_to("multi")
    (tree / "schedlab" / "empty").write_bytes(b"")
    p = payload.Payload({payload.SPEC: "NONCE=x\n"}, [tree])
    archive = p.write(tmp_path / "payload.cpio", progress=lambda s: None)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    # What was there is replaced (the runner's tmpfs is empty, the guest's root is not).
    (ours / "schedlab").mkdir(mode=0o700)
    (ours / "schedlab" / "empty").write_text("old")
    r = subprocess.run([image_m5, "unpackfile", archive, ours], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stderr == "", r
    subprocess.run(["cpio", "-i", "--quiet"], stdin=archive.open("rb"), cwd=theirs,
                   check=True)
    for path in theirs.rglob("*"):
        mine = ours / path.relative_to(theirs)
        assert mine.lstat().st_mode == path.lstat().st_mode, mine
        if path.is_symlink():
            assert mine.readlink() == path.readlink()
        elif path.is_file():
            assert mine.read_bytes() == path.read_bytes(), mine
    assert sorted(ours.rglob("*")) == [ours / q.relative_to(theirs)
                                       for q in sorted(theirs.rglob("*"))]
    assert (ours / "schedlab" / "bin" / "multi").read_bytes() == multi.read_bytes()


def test_a_damaged_payload_is_reported_not_half_trusted(image_m5, tmp_path):
    p = payload.Payload({payload.SPEC: "NONCE=x\n" * 1000}, [])
    archive = p.write(tmp_path / "payload.cpio", progress=lambda s: None).read_bytes()
    cut = tmp_path / "cut.cpio"
    cut.write_bytes(archive[:len(archive) // 2])
    junk = tmp_path / "junk.cpio"
    junk.write_bytes(b"PK\x03\x04" + bytes(200))
    for bad, message in ((cut, "the archive ends in the middle of an entry"),
                         (junk, "not a newc cpio header at archive byte 0")):
        out = tmp_path / bad.stem
        out.mkdir()
        r = subprocess.run([image_m5, "unpackfile", bad, out], capture_output=True,
                           text=True)
        assert r.returncode == 1 and message in r.stderr, r


def test_archives_are_a_function_of_their_contents_not_of_file_dates(tmp_path):
    # A run's spec is written afresh for every run: with its own date in the archive, the
    # same request gave the guest different input each time (seen as two gem5 runs of one
    # request that differed), so every entry carries the fixed EPOCH date.
    from schedlab.guest.image import EPOCH, write_cpio

    src = tmp_path / "spec.sh"
    src.write_text("NONCE=1\n")
    entries = ["dir /schedlab 0755 0 0", f"file /schedlab/spec.sh {src} 0644 0 0",
               "slink /schedlab/link spec.sh 0777 0 0"]
    first = write_cpio(entries, tmp_path / "a.cpio", progress=lambda m: None).read_bytes()
    os.utime(src, (1_700_000_000, 1_700_000_000))
    second = write_cpio(entries, tmp_path / "b.cpio", progress=lambda m: None).read_bytes()
    assert first == second
    listing = subprocess.run(["cpio", "-tv", "--quiet"], input=first, capture_output=True,
                             check=True).stdout.decode().splitlines()
    assert len(listing) == 3 and all("1970" in line for line in listing), listing
    assert EPOCH == 0
    extracted = tmp_path / "out"
    extracted.mkdir()
    subprocess.run(["cpio", "-id", "--quiet"], input=first, cwd=extracted, check=True)
    assert (extracted / "schedlab" / "spec.sh").read_text() == "NONCE=1\n"


def test_overlay_that_would_replace_the_runner_is_refused(tmp_path):
    bad = tmp_path / "bad"
    (bad / "opt/schedlab/bin").mkdir(parents=True)
    (bad / "opt/schedlab/bin/launch").write_text("x")
    with pytest.raises(UserError, match="would replace the guest's /opt/schedlab"):
        payload.check_overlay(bad)
    with pytest.raises(UserError, match="not a directory"):
        payload.check_overlay(tmp_path / "missing")
    good = tmp_path / "good"
    (good / "etc").mkdir(parents=True)
    assert payload.check_overlay(good) == good.resolve()


def test_dynamic_program_and_overlay_run_in_the_guest(results_dir, tmp_path, monkeypatch):
    """A dynamically linked program with a library of its own (outside the loader's
    default directories) and a file from an overlay, on QEMU."""
    prog = _dynamic_program(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "mylibs"))
    overlay = tmp_path / "overlay"
    (overlay / "etc").mkdir(parents=True)
    (overlay / "etc" / "greeting").write_text("hello from the overlay\n")
    request = RunRequest(machine="clovertown-e5320-mup", overlay=(str(overlay),),
                         jobs=(WorkloadRequest(str(prog)),
                               WorkloadRequest("/bin/busybox", args=("cat", "/etc/greeting"))))
    res = json.loads((execute(prepare(request, progress=print), progress=print)
                      / "results.json").read_text())
    assert res["ok"], res["errors"]
    assert res["jobs"][0]["metrics"] == {"answer": 42}
    assert res["jobs"][1]["output"] == ["hello from the overlay"]


@needs_rt_tests
def test_rt_tests_cyclictest_and_hackbench_run_in_the_guest(results_dir):
    """rt-tests from Debian, dynamically linked (libnuma, libc): cyclictest, and hackbench
    over AF_UNIX sockets (its default) and over pipes."""
    request = RunRequest(machine="clovertown-e5320", jobs=(
        WorkloadRequest(CYCLICTEST, args=("-l", "1000", "-q", "-t", "2")),
        WorkloadRequest(HACKBENCH, args=("-g", "2", "-f", "5", "-l", "20")),
        WorkloadRequest(HACKBENCH, args=("-p", "-g", "2", "-f", "5", "-l", "20"))))
    prepared = prepare(request, progress=print)
    assert any("libnuma.so" in g for g in prepared.spec["libraries"])
    res = json.loads((execute(prepared, progress=print) / "results.json").read_text())
    assert res["ok"], res["errors"]
    cyclic, sockets, pipes = (j["output"] for j in res["jobs"])
    # cyclictest -q: a summary line per thread; the first thread ran its 1000 loops (the
    # second, at a longer interval, stops with it).
    threads = [line.replace(" ", "") for line in cyclic if line.startswith("T:")]
    assert len(threads) == 2 and "C:1000Min:" in threads[0], cyclic
    assert any("process mode" in line for line in sockets), sockets
    assert any(line.startswith("Time:") for line in sockets), sockets
    assert any(line.startswith("Time:") for line in pipes), pipes
    # hackbench says which transport it used only by failing without sockets; its
    # default mode needs AF_UNIX (socketpair), which the guest kernel now has.
    assert not any("Function not implemented" in line for line in sockets)


def test_boot_checkpoint_does_not_depend_on_the_workloads(tmp_path, monkeypatch):
    """Another build of the workloads (any change to any workload) is another run, but the
    same boot checkpoint: its key's kernel and image do not change."""
    from schedlab.backends.gem5.checkpoint import checkpoint_key
    from schedlab.backends.gem5.binary import Gem5Binary
    from schedlab.guest import programs
    from schedlab.backends.gem5.backend import gem5_job
    real = programs.build_all(progress=lambda s: None)
    other = tmp_path / "workloads-v2"
    shutil.copytree(real, other, symlinks=True)
    (other / "schedlab" / "workloads.json").write_text("{}\n")   # a changed workload
    request = RunRequest(machine="clovertown-e5320-mup", backend="gem5",
                         jobs=(WorkloadRequest("memlat"),))
    fake = Gem5Binary(Path("/gem5"), "24.0.0.1", True, "binary-hash")
    keys, ids = set(), set()
    for overlay in (real, other):
        monkeypatch.setattr(programs, "build_all", lambda progress=None, o=overlay: o)
        prepared = prepare(request, progress=lambda s: None)
        job = gem5_job(prepared, progress=lambda s: None)
        keys.add(checkpoint_key(fake, prepared.plan, job.kernel.kernel_hash,
                                job.kernel.image_hash, list(job.kernel_args)))
        ids.add(prepared.run_id)
        assert job.readfile[:6] == b"070701"     # the payload (newc cpio) goes to readfile
    assert len(keys) == 1 and len(ids) == 2


def test_runner_allocates_gem5_trace_buffer_of_the_runs_size_before_the_checkpoint():
    """The runner sizes gem5's trace buffer at boot (before the checkpoint) so that runs,
    which ask for GEM5_BACKEND.trace_buffer_kb, allocate nothing: the two must agree."""
    import re
    from schedlab import paths
    from schedlab.backends.gem5.backend import GEM5_BACKEND
    init = (paths.DISK_IMAGES / "rootfs" / "init").read_text()
    assert re.search(r"^GEM5_TRACE_BUFFER_KB=(\d+)$", init, re.M).group(1) == \
        str(GEM5_BACKEND.trace_buffer_kb)


def test_a_payload_the_guest_cannot_hold_stops_the_run_with_the_reason(results_dir, tmp_path):
    """The archive and what it unpacks to both live in the guest's memory: 40 MB into a
    128 MiB guest (its root a tmpfs of half that) stops part way, and the run says so
    instead of running with files missing (seen: a real program's libraries absent, its job
    failing with exit 127)."""
    overlay = tmp_path / "overlay"
    (overlay / "data").mkdir(parents=True)
    with open(overlay / "data" / "big", "wb") as f:
        f.write(os.urandom(1 << 20) * 40)
    request = RunRequest(machine="clovertown-e5320-mup", overlay=(str(overlay),),
                         overrides=("memory.size_per_node=128MiB",),
                         jobs=(WorkloadRequest("/bin/busybox", args=("true",)),))
    with pytest.raises(UserError, match=r"payload did not unpack in the guest \(m5: unpack: "
                                        r".*No space left.*\); \d+ MiB of guest memory"):
        execute(prepare(request, progress=print), progress=print)
