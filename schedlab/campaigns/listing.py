"""``reproduce --list`` and the report's table: every experiment of the four studies with its
runs, estimated host hours, status and whether its committed tables are current.

Computing it expands every definition at both scales, prices every run and computes the
run ids of every committed table (seconds of CPU). The rows are kept in the build cache
under a key of everything they are made from: the signature (size, modification time) of
every file below the folders that define experiments, machines, workloads, costs and
committed tables, the build toolchain and the checkout's commit (the commits that wrote
the tables). So a second listing of the same tree is read back at once, and any change to
what it is made from makes it anew.
"""

from __future__ import annotations

import json
import subprocess
from typing import Callable

from schedlab import paths
from schedlab.guest.reproducible import toolchain_identity
from schedlab.store import hash_json, write_atomic

# Every folder whose files the rows depend on (definitions, catalogue, workloads and their
# characterisation, kernel patches and image in the run ids, bench records in the costs,
# committed tables), and the pinned versions.
INPUTS = ("schedlab", "configs", "workloads", "kernel-patches", "disk-images", "bench",
          "data")
# Bump when the rows' form changes.
FORM = "1"


def _status(e) -> str:
    if not e.implemented:
        return f"not yet: {e.missing}"
    if e.unavailable:
        runs_on = [b for b in e.backends if b not in e.unavailable]
        return f"{' or '.join(runs_on)} only: " + "; ".join(
            f"{b}: {why}" for b, why in e.unavailable.items())
    return "implemented"


def compute() -> list[dict]:
    """The rows, computed."""
    from schedlab.campaigns.currency import currency
    from schedlab.campaigns.experiment import Scale, registry
    from schedlab.campaigns.calibration import estimated_hours, study_calibration
    from schedlab.campaigns.locations import table_paths
    rows, calibrations = [], {}
    for name, e in registry().items():
        standing = (currency(e, table_paths(e, "smoke", "gem5")[""], "smoke", "gem5")
                    if e.implemented else None)
        if e.study not in calibrations:
            calibrations[e.study] = study_calibration(e.study)
        (smoke, how), (paper, _) = (estimated_hours(e, scale, calibrations[e.study])
                                    for scale in Scale)
        rows.append({"name": name, "study": e.study, "kind": e.kind, "title": e.title,
                     "runs_smoke": len(e.requests("smoke", "gem5")),
                     "runs_paper": len(e.requests("paper", "gem5")),
                     "hours_smoke": smoke, "hours_paper": paper, "hours_from": how,
                     "status": _status(e),
                     "committed": (f"{standing.state} ({standing.made_at})" if standing
                                   else "-")})
    return rows


def inputs_key() -> str:
    """A hash of everything the rows are made from (no file is read, only listed)."""
    files = []
    for top in INPUTS:
        for p in sorted((paths.REPO / top).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                st = p.stat()
                files.append([str(p.relative_to(paths.REPO)), st.st_size, st.st_mtime_ns])
    versions = paths.VERSIONS.stat()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.REPO, capture_output=True,
                          text=True).stdout.strip()
    return hash_json([FORM, files, [versions.st_size, versions.st_mtime_ns],
                      toolchain_identity(), head])[:20]


def rows(say: Callable[[str], None] = lambda line: None) -> list[dict]:
    """The rows, read back when nothing they are made from changed, else computed (``say``
    tells the user first: it takes 12 to 30 s on a 2-core host)."""
    cached = paths.cache_dir() / "listing" / f"{inputs_key()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    say("listing: computing every figure's runs, cost and currency (the first time after a "
        "change to the tree; 10-30 s)")
    out = compute()
    cached.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(cached, json.dumps(out))
    return out
