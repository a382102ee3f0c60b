"""The guest kernel and image builds: real outputs, content-hash caching, clear failures."""

from __future__ import annotations

import subprocess

import pytest

from schedlab.guest import image, kernel
from schedlab.errors import UserError


def test_kernel_outputs_are_real(guest_kernel):
    elf = guest_kernel.vmlinux.read_bytes()[:20]
    assert elf[:4] == b"\x7fELF" and elf[4] == 2  # 64-bit ELF
    assert int.from_bytes(elf[18:20], "little") == 62  # EM_X86_64
    boot = guest_kernel.bzimage.read_bytes()[:0x210]
    assert boot[0x202:0x206] == b"HdrS"  # the x86 boot protocol header
    config = guest_kernel.config.read_text()
    # Every option the fragments ask for is in the built configuration.
    wanted = kernel._requested_options(kernel.fragments())
    got = kernel._read_config(guest_kernel.config)
    assert {k: got.get(k, "n") for k in wanted} == wanted
    for option in ("CONFIG_SMP=y", "CONFIG_NUMA=y", "CONFIG_NUMA_EMU=y", "CONFIG_SCHED_MC=y",
                   "CONFIG_HZ=1000", "CONFIG_SCHEDSTATS=y", "CONFIG_SERIAL_8250_CONSOLE=y",
                   "CONFIG_NET=y", "CONFIG_UNIX=y"):
        assert option in config
    assert "CONFIG_MODULES=y" not in config


def test_kernel_is_cached_by_content(guest_kernel, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("an unchanged kernel must not be rebuilt")
    monkeypatch.setattr(kernel, "_make", no_build)
    assert kernel.build_kernel(progress=lambda s: None) == guest_kernel


def test_kernel_key_follows_patches_and_fragments(tmp_path, monkeypatch):
    before = kernel.build_key()
    extra = tmp_path / "zz-extra.config"
    extra.write_text("CONFIG_PRINTK_TIME=y\n")
    monkeypatch.setattr(kernel, "fragments", lambda: sorted(
        list(kernel.paths.KERNEL_PATCHES.glob("*.config")) + [extra]))
    assert kernel.build_key() != before
    extra.write_text("CONFIG_PRINTK_TIME=n\n")
    assert kernel.build_key() != before


def test_a_tick_rate_is_a_kernel_of_its_own():
    # The catalogue's default tick is the one guest.config builds.
    from schedlab.machine import DEFAULT_TICK_HZ
    assert f"CONFIG_HZ_{DEFAULT_TICK_HZ}=y" in (
        kernel.paths.KERNEL_PATCHES / "guest.config").read_text().splitlines()
    assert kernel.build_key(tick_hz=DEFAULT_TICK_HZ) == kernel.build_key()
    assert kernel.build_key(tick_hz=100) != kernel.build_key()


def test_missing_kernel_source_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_KERNEL_TARBALL", "/nonexistent/linux-source.tar.xz")
    with pytest.raises(UserError, match="apt-get install linux-source-6.1=6.1"):
        kernel.build_kernel(progress=lambda s: None)


def test_series_naming_a_missing_patch_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "series").write_text("0001-does-not-exist.patch\n")
    monkeypatch.setattr(kernel.paths, "KERNEL_PATCHES", tmp_path)
    with pytest.raises(UserError, match="names 0001-does-not-exist.patch"):
        kernel.series()


def _cpio_listing(path) -> list[str]:
    with open(path, "rb") as f:
        return subprocess.run(["cpio", "-t", "--quiet"], stdin=f, capture_output=True,
                              text=True, check=True).stdout.split()


def test_image_holds_the_runner_and_tools_but_no_workload(guest_image):
    names = set(_cpio_listing(guest_image.initramfs))
    for path in ("init", "bin/busybox", "bin/sh", "bin/cpio", "dev/console",
                 "opt/schedlab/bin/m5", "opt/schedlab/bin/launch", "schedlab"):
        assert path in names, path
    # The workloads come with each run (schedlab.guest.payload), so that a boot checkpoint
    # serves every version of them.
    assert not [n for n in names if n.startswith("schedlab/")], names
    listing = subprocess.run(["debugfs", "-R", "ls -p /opt/schedlab/bin", str(guest_image.ext4)],
                             capture_output=True, text=True, check=True).stdout
    assert "/launch/" in listing and "/memlat/" not in listing
    fsck = subprocess.run(["e2fsck", "-fn", str(guest_image.ext4)], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout


def test_image_does_not_depend_on_the_workloads(guest_image, monkeypatch):
    from schedlab.guest import programs

    def no_workloads(*args, **kwargs):
        raise AssertionError("the image must not need the workloads")
    monkeypatch.setattr(programs, "build_all", no_workloads)
    assert image.build_image(progress=lambda s: None) == guest_image


def test_guest_programs_are_static(guest_image, tmp_path):
    subprocess.run(["debugfs", "-R", f"dump /opt/schedlab/bin/launch {tmp_path}/launch",
                    str(guest_image.ext4)], capture_output=True, check=True)
    kind = subprocess.run(["file", "-b", str(tmp_path / "launch")], capture_output=True,
                          text=True).stdout
    assert "statically linked" in kind


def test_image_is_cached_by_content(guest_image, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("an unchanged image must not be rebuilt")
    monkeypatch.setattr(image, "_stage_rootfs", no_build)
    assert image.build_image(progress=lambda s: None) == guest_image


def test_m5_checks_its_whole_command_line_before_any_op(guest_image, tmp_path):
    """The image's m5 (outside gem5 an op would be an illegal instruction): several ops in
    one process, and a bad one anywhere refuses the whole line before the first op runs."""
    subprocess.run(["debugfs", "-R", f"dump /opt/schedlab/bin/m5 {tmp_path}/m5",
                    str(guest_image.ext4)], capture_output=True, check=True)
    (tmp_path / "m5").chmod(0o755)
    for argv in ([], ["--addr"], ["writefile", "a"], ["workend", "bogus"],
                 ["writefile", "a", "b", "exit", "writefile", "c"]):
        r = subprocess.run([tmp_path / "m5", *argv], capture_output=True, text=True)
        assert r.returncode == 2 and "usage: m5" in r.stderr, (argv, r)
    r = subprocess.run([tmp_path / "m5", "writefile", "a", "b", "bogus", "exit"],
                       capture_output=True, text=True)
    assert "unknown op or missing arguments at 'bogus'" in r.stderr
