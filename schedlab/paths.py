"""Where things live: the repository, the build cache and the results directory."""

import os
import tomllib
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"
KERNEL_PATCHES = REPO / "kernel-patches"
DISK_IMAGES = REPO / "disk-images"
WORKLOADS = REPO / "workloads"
VERSIONS = REPO / "versions.toml"
# Measured records of bench/ (host speeds, variability, regions) that estimates and captions read.
BENCH_RESULTS = REPO / "bench" / "results"


def cache_dir() -> Path:
    """Build cache shared by every clone on this machine (kernels, images, workload binaries).

    Kept outside the repository so a fresh clone (as CI makes) reuses earlier builds; every
    entry is keyed by a content hash, so sharing is safe. Override with SCHEDLAB_CACHE.
    """
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "schedlab"
    path = Path(os.environ.get("SCHEDLAB_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def results_dir() -> Path:
    """Where runs write ``<run-id>/`` directories. Override with SCHEDLAB_RESULTS."""
    path = Path(os.environ.get("SCHEDLAB_RESULTS", REPO / "results"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@cache
def versions() -> dict:
    """The pinned versions of versions.toml."""
    with open(VERSIONS, "rb") as f:
        return tomllib.load(f)
