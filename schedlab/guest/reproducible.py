"""What makes a guest build byte-reproducible: its fixed stamps, its path maps and the
exact toolchain it was built with.

A guest artefact (the kernel, the image, the workloads binary) is a simulation input down
to its last byte: re-linking only the kernel's version stamp moved a gem5 run's L1 D misses
by 8.9 % and its L2 misses by 12 % (bench/reproducibility.md), because the
kernel's text and data then lie a few bytes apart. So every build here

- runs with fixed build stamps (Linux's ``KBUILD_BUILD_TIMESTAMP``, ``_USER``, ``_HOST``,
  ``_VERSION``, as its Documentation/kbuild/reproducible-builds.rst describes; and
  ``SOURCE_DATE_EPOCH`` for the tools that read it), in the C locale and UTC;
- maps every directory it compiles in away (``-ffile-prefix-map``), so neither the clone's
  location nor the build cache's reaches ``__FILE__`` or a symbol table;
- keys its cache entry by the exact versions of the Debian packages that make it
  (:func:`toolchain_identity`), so a build key names one set of bytes.

The artefacts' own hashes are then provenance (:func:`artefact_hashes` in each run's
record); ``bench/bench_reproducible_build.py`` builds everything twice, in other
directories and under a shifted clock, and compares them.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

from schedlab import paths
from schedlab.errors import UserError
from schedlab.store import hash_file

# The build stamps every guest artefact carries. The date is the Unix epoch: it says
# plainly that the stamp is not a build date (a kernel reports "#1 SMP Thu Jan 1 00:00:00
# UTC 1970" in uname -v).
SOURCE_DATE_EPOCH = 0
KBUILD_STAMPS = {
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 1970",
    "KBUILD_BUILD_USER": "schedlab",
    "KBUILD_BUILD_HOST": "schedlab",
    "KBUILD_BUILD_VERSION": "1",
}


# Tools Kconfig probes for that the guest kernel does not use, named absent on every make
# command line: a host that has them (pahole from dwarves, a Rust toolchain) would otherwise
# write their versions into the configuration, and so into the kernel's embedded config
# (CONFIG_PAHOLE_VERSION); rustc's probe also hangs under faketime.
ABSENT_TOOLS = ("PAHOLE=schedlab-absent-pahole", "RUSTC=schedlab-absent-rustc",
                "BINDGEN=schedlab-absent-bindgen")


def build_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every guest build step: the caller's (or os.environ) with the
    fixed stamps, the C locale and UTC."""
    env = dict(os.environ if base is None else base)
    env.update(KBUILD_STAMPS)
    env.update(SOURCE_DATE_EPOCH=str(SOURCE_DATE_EPOCH), TZ="UTC", LC_ALL="C")
    return env


def prefix_maps(*directories: Path | str) -> list[str]:
    """gcc flags that drop each directory from every path the compiler writes (``__FILE__``,
    the symbol table's file names, debug information)."""
    return [f"-ffile-prefix-map={Path(d)}/=" for d in directories]


@cache
def toolchain_identity() -> str:
    """The exact versions of the Debian packages whose files reach a guest artefact
    (versions.toml, ``[build] packages``), one ``name=version`` a line. Part of every build
    key, so an upgraded compiler, linker or C library is a new build, never a silent change
    of the bytes behind a run id."""
    names = paths.versions()["build"]["packages"]
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Package}=${Version}\\n", *names],
                          capture_output=True, text=True)
    found = dict(line.split("=", 1) for line in proc.stdout.split())
    missing = [n for n in names if n not in found]
    if missing:
        raise UserError(f"build packages not installed: {', '.join(missing)}; install them "
                        f"with 'apt-get install {' '.join(missing)}'")
    return "\n".join(f"{n}={found[n]}" for n in names)


def artefact_hashes(files: dict[str, Path]) -> dict[str, str]:
    """SHA-256 (first 16 hex digits, as the build keys) of each named built file."""
    return {name: hash_file(path)[:16] for name, path in sorted(files.items())}
