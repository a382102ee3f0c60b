"""Are the guest builds byte-reproducible across machines, directories, caches and clocks?

Builds every guest artefact of both tick rates (the workloads, the image, QEMU's and gem5's
kernels) into a throw-away cache from a copy of the tree in another directory, under a
clock shifted by ``--shift`` days, and records their hashes with the host's name, the
toolchain and the commit. Records of two machines (appended to the same JSON file, one
session each) compare with ``--report``: every artefact of one commit and toolchain must
have one hash. tests/test_reproducible_build.py does the one-machine check of the 1000 Hz
build in CI.

    ~/.cache/schedlab/venv/*/bin/python bench/bench_reproducible_build.py \
        --json bench/results/reproducible-builds.json
    ~/.cache/schedlab/venv/*/bin/python bench/bench_reproducible_build.py \
        --report bench/results/reproducible-builds.json
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import record_parser, report_or_measure  # noqa: E402
from schedlab import paths  # noqa: E402
from schedlab.guest.reproducible import toolchain_identity  # noqa: E402

BUILD = ("import json, sys; from schedlab.guest.build import build_guest; "
         "print(json.dumps({hz: build_guest(int(hz), progress=lambda s: None) "
         "for hz in sys.argv[1:]}))")


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=paths.REPO,
                         capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=paths.REPO, capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + ("+changes" if dirty else "")


def measure(shift_days: int, rates: list[int]) -> dict:
    """One cold build elsewhere: its hashes, how long it took, where and when."""
    with tempfile.TemporaryDirectory(prefix="schedlab-repro-") as tmp:
        tree = Path(tmp) / "elsewhere" / "tree"
        shutil.copytree(paths.REPO, tree, symlinks=True, ignore=shutil.ignore_patterns(
            ".git", "results", "__pycache__", ".pytest_cache"))
        env = {**os.environ, "SCHEDLAB_CACHE": str(Path(tmp) / "cache"),
               "PYTHONPATH": str(tree), "FAKETIME_DONT_RESET": "1"}
        cmd = [sys.executable, "-c", BUILD, *map(str, rates)]
        if shift_days:
            cmd = ["faketime", "-f", f"+{shift_days}d", *cmd]
        started = time.monotonic()
        print(f"building every guest artefact ({', '.join(map(str, rates))} Hz) in {tree}, "
              f"clock shifted {shift_days} days (a cold kernel build per rate: minutes)",
              flush=True)
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"the build failed: {proc.stderr.strip()[-1500:]}")
        hashes = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"host": socket.gethostname(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime()),
            "commit": commit(), "toolchain": toolchain_identity().splitlines(),
            "shift_days": shift_days, "build_seconds": round(time.monotonic() - started),
            "hashes": hashes}


def table(records: list[dict]) -> str:
    """Per commit and toolchain: each artefact's hash per host, and whether they agree."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["commit"], tuple(r["toolchain"]))].append(r)
    lines = []
    for (rev, _), rs in groups.items():
        lines.append(f"commit {rev}: {len(rs)} builds on "
                     f"{', '.join(sorted({r['host'] for r in rs}))}")
        for hz in sorted({hz for r in rs for hz in r["hashes"]}, key=int):
            for name in sorted({n for r in rs for n in r["hashes"].get(hz, {})}):
                seen = {r["hashes"].get(hz, {}).get(name) for r in rs}
                verdict = "same" if len(seen) == 1 else f"DIFFER ({len(seen)} hashes)"
                lines.append(f"  {hz:>4} Hz {name:<13} {'/'.join(sorted(map(str, seen)))}"
                             f"  {verdict}")
    return "\n".join(lines)


def main() -> None:
    parser = record_parser(__doc__)
    parser.add_argument("--shift", type=int, default=400, help="days to shift the clock by")
    parser.add_argument("--rates", type=int, nargs="+", default=[1000, 100],
                        help="guest tick rates to build (the catalogue's are 1000 and 100)")
    args = parser.parse_args()
    report_or_measure(args, table, lambda: measure(args.shift, args.rates))


if __name__ == "__main__":
    main()
