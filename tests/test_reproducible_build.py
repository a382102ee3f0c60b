"""The guest builds are byte-reproducible: a second build of the workloads, the image and
both kernels (QEMU's, and gem5's with the image built in), from a copy of the tree in
another directory, into another cache, under a clock shifted by 400 days, gives the same
bytes as the cached build (schedlab.guest.reproducible). One extra build: the full check
on two machines is bench/bench_reproducible_build.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from schedlab import paths
from schedlab.guest import reproducible
from schedlab.guest.build import build_guest

BUILD = ("import json; from schedlab.guest.build import build_guest; "
         "print(json.dumps(build_guest(progress=lambda s: None)))")


def test_the_build_environment_fixes_every_stamp():
    env = reproducible.build_env({"PATH": "/bin", "KBUILD_BUILD_TIMESTAMP": "now"})
    assert env["PATH"] == "/bin" and env["KBUILD_BUILD_TIMESTAMP"].endswith("1970")
    assert {env[k] for k in ("KBUILD_BUILD_USER", "KBUILD_BUILD_HOST")} == {"schedlab"}
    assert env["KBUILD_BUILD_VERSION"] == "1" and env["SOURCE_DATE_EPOCH"] == "0"
    assert reproducible.prefix_maps("/a/b") == ["-ffile-prefix-map=/a/b/="]


def test_the_toolchain_versions_name_every_build_package():
    lines = reproducible.toolchain_identity().splitlines()
    assert [line.split("=")[0] for line in lines] == paths.versions()["build"]["packages"]
    assert all(line.split("=", 1)[1] for line in lines)


@pytest.mark.skipif(shutil.which("faketime") is None,
                    reason="faketime is missing (apt-get install faketime; run.py installs it)")
def test_another_directory_cache_and_clock_build_the_same_bytes(tmp_path):
    here = build_guest(progress=lambda s: None)          # the cached build (or made now)
    elsewhere = tmp_path / "another" / "clone"
    shutil.copytree(paths.REPO, elsewhere, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "results", "__pycache__",
                                                  ".pytest_cache"))
    env = {**os.environ, "SCHEDLAB_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(elsewhere), "FAKETIME_DONT_RESET": "1"}
    proc = subprocess.run(["faketime", "-f", "+400d", sys.executable, "-c", BUILD],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, proc.stderr[-2000:]
    there = json.loads(proc.stdout.strip().splitlines()[-1])
    assert there == here
