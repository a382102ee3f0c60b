"""Choosing runs by label (``reproduce FIG --only``) and re-making committed runs to check
that they come out the same (``reproduce FIG --verify N``).

gem5 is deterministic and the guest builds are byte-reproducible, so a run id names one
result: re-made on any machine, from a clean cache, a committed run must equal its table's
rows in every simulated column. :func:`verify` re-makes runs in a results store of their
own (never reusing a finished run), collects them as the figure collects its runs, and
compares them with the committed rows, exactly, after the same CSV round trip.
"""

from __future__ import annotations

import io
import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pandas as pd

from schedlab import paths
from schedlab.analysis.store import load_committed
from schedlab.analysis.tables import ARTEFACTS
from schedlab.campaigns.experiment import Experiment, label_key
from schedlab.errors import UserError
from schedlab.runs import RunRequest, prepare
from schedlab.store import write_atomic

Say = Callable[[str], None]
# Columns a re-made run may differ in: what the host measured, not the simulation.
HOST_COLUMNS = ("gem5_host_s", "gem5_cpu_s")


def parse_only(selectors: tuple[str, ...] | list[str]) -> list[dict[str, str]]:
    """``--only`` selectors: each ``KEY=VALUE[,KEY=VALUE...]`` of label coordinates."""
    parsed = []
    for text in selectors:
        pairs = {}
        for item in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise UserError(f"--only {text!r}: write label coordinates as KEY=VALUE "
                                f"separated by commas, e.g. --only benchmark=gzip,rep=0")
            pairs[key.strip()] = value.strip()
        if not pairs:
            raise UserError("--only needs KEY=VALUE coordinates of the runs' labels")
        parsed.append(pairs)
    return parsed


def select(name: str, requests: list[RunRequest], selectors: list[dict[str, str]]
           ) -> list[RunRequest]:
    """The requests whose label matches every coordinate of at least one selector."""
    keys = sorted({k for r in requests for k in r.label})
    unknown = sorted({k for s in selectors for k in s} - set(keys))
    if unknown:
        raise UserError(f"{name}'s runs have no label coordinate {', '.join(unknown)}; "
                        f"theirs are {', '.join(keys)} ('--dry-run' lists them)")
    chosen = [r for r in requests
              if any(all(str(r.label.get(k)) == v for k, v in s.items()) for s in selectors)]
    if not chosen:
        raise UserError(f"no run of {name} has the label "
                        + " or ".join(",".join(f"{k}={v}" for k, v in s.items())
                                      for s in selectors)
                        + "; '--dry-run' lists its runs' labels")
    return chosen


def run_states(requests: list[RunRequest], committed: pd.DataFrame | None,
               carried_ids: set[str]) -> list[tuple[RunRequest, str, str]]:
    """(request, run id, what a campaign would do with it) for ``--dry-run --only``."""
    from schedlab.campaigns.plan import finished_state
    have = set(committed["run_id"]) if committed is not None and len(committed) else set()
    out = []
    for r in requests:
        run_id = prepare(r, progress=lambda s: None, build=False).run_id
        state = finished_state(paths.results_dir() / run_id)
        what = ("reused: the committed table holds it" if run_id in have
                else "reused: carried from another host" if run_id in carried_ids
                else f"reused: finished in {paths.results_dir()}" if state
                else "to run")
        out.append((r, run_id, what))
    return out


@dataclass
class Verified:
    """What :func:`verify` found, per re-made run."""

    experiment: str
    store: str
    runs: dict[str, list[str]] = field(default_factory=dict)   # run id -> differences
    columns: int = 0                                          # simulated columns compared

    @property
    def identical(self) -> bool:
        return not any(self.runs.values())

    def lines(self) -> list[str]:
        out = []
        for run_id, diffs in self.runs.items():
            out.append(f"  {run_id}: " + ("identical in every simulated column" if not diffs
                                          else f"{len(diffs)} differences"))
            out += [f"    {d}" for d in diffs[:20]]
        verdict = ("every re-made run equals its committed rows" if self.identical
                   else "re-made runs DIFFER from their committed rows")
        return out + [f"{self.experiment}: {len(self.runs)} runs, {self.columns} simulated "
                      f"columns compared: {verdict}"]


@contextmanager
def results_store(path: Path) -> Iterator[Path]:
    """Runs made inside go to ``path`` (a store of their own, so nothing is reused)."""
    before = os.environ.get("SCHEDLAB_RESULTS")
    os.environ["SCHEDLAB_RESULTS"] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop("SCHEDLAB_RESULTS", None)
        else:
            os.environ["SCHEDLAB_RESULTS"] = before


def verify(experiment: Experiment, count: int, scale: str, backend: str,
           candidates: list[dict[str, Path]], collect, run_requests, say: Say) -> Verified:
    """Re-make ``count`` committed runs (the first in their table's order whose ids today's
    tree computes, from the first of the ``candidates`` tables that has such runs: the
    committed ones, then the carried ones) and compare them with their rows. ``collect``:
    the figure's collector; ``run_requests``: the campaign runner (reproduce.run_requests)."""
    if count < 1:
        raise UserError("--verify N needs N of at least 1 (the runs to re-make)")
    requests = experiment.requests(scale, backend)
    by_id = {prepare(r, progress=lambda s: None, build=False).run_id: r for r in requests}
    found = [w for w in candidates if w[""].is_file()]
    if not found:
        raise UserError(f"{experiment.name} has no committed {scale} table on {backend} "
                        f"({candidates[0]['']}): nothing to verify")
    for where in found:
        committed = {part: load_committed(p) for part, p in where.items()}
        main = committed[""]
        ids = [i for i in dict.fromkeys(main["run_id"]) if i in by_id] if len(main) else []
        if ids:
            break
    else:
        raise UserError(f"{found[0][''].name} is stale: today's tree computes none of its "
                        f"run ids, so its runs cannot be re-made here; re-make the figure "
                        f"('reproduce {experiment.name}') or check out the commit that "
                        f"made it")
    chosen = ids[:count]
    store = paths.results_dir() / "verify" / f"{experiment.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    say(f"{experiment.name}: re-making {len(chosen)} committed runs in {store} (a store of "
        f"their own: nothing is reused)")
    with results_store(store):
        report = run_requests([by_id[i] for i in chosen], f"{experiment.name}-verify", None,
                              "local", say, {})
        tables = collect(experiment, report.run_dirs())
    out = Verified(experiment.name, str(store), {i: [] for i in chosen})
    for part, table in tables.items():
        theirs = committed.get(part)
        if theirs is None or "run_id" not in getattr(table, "columns", []):
            continue
        out.columns += _compare(part, _round_trip(table), theirs, chosen, out.runs)
    write_atomic(store / "verify.json", json.dumps(asdict(out), indent=1) + "\n")
    return out


def _round_trip(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as its committed CSV reads back (the same types and decimals)."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


def _compare(part: str, mine: pd.DataFrame, theirs: pd.DataFrame, ids: list[str],
             found: dict[str, list[str]]) -> int:
    """Record each chosen run's differences in ``found``; return the columns compared."""
    columns = [c for c in theirs.columns if c in mine.columns and c not in HOST_COLUMNS]
    label = f"{part} table" if part else "main table"
    for run_id in ids:
        a = mine[mine["run_id"] == run_id][columns].reset_index(drop=True)
        b = theirs[theirs["run_id"] == run_id][columns].reset_index(drop=True)
        if len(a) != len(b):
            found[run_id].append(f"{label}: {len(a)} rows re-made, {len(b)} committed")
            continue
        for c in columns:
            same = (a[c] == b[c]) | (a[c].isna() & b[c].isna())
            for i in same[~same].index[:3]:
                found[run_id].append(f"{label}, row {i}, {c}: {a[c][i]!r} re-made, "
                                     f"{b[c][i]!r} committed")
    missing = [c for c in theirs.columns if c not in mine.columns and c not in HOST_COLUMNS]
    for run_id in ids:
        found[run_id] += [f"{label}: column {c} committed, not re-made" for c in missing]
    return len(columns)


def artefact_mismatches(made: pd.DataFrame, committed: pd.DataFrame | None) -> list[str]:
    """Runs made now whose built files differ from those the committed rows of the same
    run id record: the build is not reproducible here (another toolchain, a local change
    the build keys miss). Committed rows from before artefacts were recorded pass."""
    if committed is None or not len(committed) or not len(made):
        return []
    problems = []
    for column in (f"{a}_sha" for a in ARTEFACTS):
        if column not in committed or column not in made:
            continue
        theirs = committed.dropna(subset=[column]).drop_duplicates("run_id")
        merged = made.drop_duplicates("run_id").merge(theirs[["run_id", column]],
                                                       on="run_id", suffixes=("", "_committed"))
        for _, row in merged[merged[column] != merged[f"{column}_committed"]].iterrows():
            problems.append(f"{row['run_id']}: {column[:-4]} {row[column]} here, "
                            f"{row[f'{column}_committed']} committed")
    return problems


def label_of(request: RunRequest) -> str:
    return ",".join(f"{k}={v}" for k, v in label_key(request.label))
