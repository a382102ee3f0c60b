"""Finished runs carried between hosts as committed compact tables.

A campaign's results store (``results/``) lives on the host that ran it. A campaign longer
than one host's stay (a 2,000-hour paper-scale figure on borrowed machines, or a session
that ends before its runs do) keeps what finished as its compact tables under
``data/<study>/partial/`` (``reproduce NAME --partial --carry``), committed beside the
code that made them. A later ``reproduce NAME`` on any host counts a carried run as done
when this checkout gives its request the same run id (the run id hashes the kernel, the
image, the workloads and the gem5-side code, so other code means other ids) and, on gem5,
the same gem5 binary made it: then the figure is one set, and only the other runs run. A
carried run whose directory the local store also holds (the host that made it) is
collected again from it, so its row has what today's analysis reads.
Beside the tables, a note (``...--partial.md``) says what they hold, what made them and
what is still to run. Once the figure's full tables are written, its carried ones go.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from schedlab.backends.backend import BackendName
from schedlab import paths
from schedlab.analysis.figures import provenance
from schedlab.analysis.store import load_committed, save_committed
from schedlab.campaigns.experiment import Experiment, label_key
from schedlab.store import write_atomic

Say = Callable[[str], None]


@dataclass
class Carried:
    """The carried rows of one experiment that this checkout counts as finished runs."""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    run_ids: set[str] = field(default_factory=set)

    def merged(self, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        """``tables`` (collected from the results store) with the carried runs' rows that
        the store does not hold added before them."""
        if not self.run_ids:
            return tables
        out = {}
        for part, carried in self.tables.items():
            fresh = tables.get(part, pd.DataFrame())
            # A part can be empty on either side (runs without region events): an empty
            # CSV reads back without columns.
            if "run_id" in fresh and "run_id" in carried:
                carried = carried[~carried["run_id"].isin(set(fresh["run_id"]))]
            kept = [t for t in (carried, fresh) if len(t)]
            out[part] = pd.concat(kept, ignore_index=True) if kept else carried
        return out


def paths_for(experiment: Experiment, scale: str, backend: str,
              parts: tuple[str, ...], data: Path) -> dict[str, Path]:
    """``data/<study>/partial/<name>--<scale>--<backend>--partial[--<part>].csv``."""
    stem = f"{experiment.name}--{scale}--{backend}--partial"
    return {part: data / experiment.study / "partial" / (stem + (f"--{part}" if part else "")
                                                        + ".csv")
            for part in parts}


def load(where: dict[str, Path], run_ids: set[str], gem5_hash: str | None,
         say: Say) -> Carried:
    """The carried rows whose runs this checkout would make (``run_ids``) with this gem5
    binary (``gem5_hash``; None for QEMU); the others are named and left out."""
    tables = {part: load_committed(path) for part, path in where.items()}
    main = tables.get("")
    if main is None or "run_id" not in main:
        return Carried()
    carried = set(main["run_id"]) & run_ids
    other_code = set(main["run_id"]) - run_ids
    if other_code:
        say(f"{where['']}: {len(other_code)} carried run(s) were made by other code (their "
            f"run ids are not this checkout's) and are not counted; check out the commit its "
            f"note ({note_path(where).name}) names to use them")
    if gem5_hash is not None and "gem5_hash" in main:
        other_binary = set(main.loc[main["gem5_hash"] != gem5_hash, "run_id"]) & carried
        if other_binary:
            say(f"{where['']}: {len(other_binary)} carried run(s) were made by another gem5 "
                f"binary and run again here, so the figure comes from one binary")
            carried -= other_binary
    kept = {part: (t[t["run_id"].isin(carried)] if t is not None and "run_id" in t
                   else pd.DataFrame())
            for part, t in tables.items()}
    return Carried(kept, carried)


def row_requests(table: pd.DataFrame, requests) -> list:
    """Per row of ``table``, the request whose whole label it has (None for a row no
    request has)."""
    columns = sorted({k for r in requests for k in r.label} & set(table.columns))
    by_label = {label_key(r.label): r for r in requests}
    return [by_label.get(label_key(row)) for row in table[columns].to_dict("records")]


def labelled(path: Path, requests) -> list[bool]:
    """Per request, whether the carried table at ``path`` has a row with its label: what
    ``--dry-run`` counts without building anything (the campaign goes by run id)."""
    table = load_committed(path)
    if table is None or not len(table):
        return [False] * len(requests)
    present = {id(r) for r in row_requests(table, requests) if r is not None}
    return [id(r) in present for r in requests]


def save(tables: dict[str, pd.DataFrame], where: dict[str, Path]) -> None:
    for part, path in where.items():
        save_committed(tables.get(part, pd.DataFrame()), path)


def note_path(where: dict[str, Path]) -> Path:
    """The note beside the carried tables: ``<name>--<scale>--<backend>--partial.md``."""
    return where[""].with_suffix(".md")


def checkout() -> str:
    """The commit of this checkout, as the note names it; the data files are left out of
    "uncommitted changes" (the carried tables themselves are new)."""
    git = ["git", "-C", str(paths.REPO)]
    try:
        head = subprocess.run(git + ["rev-parse", "--short=12", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no",
                                        "--", ".", ":(exclude)data"], check=True,
                                 capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "a tree that is not a git checkout"
    return f"commit {head}" + (" with uncommitted changes" if changed else "")


def _label(label: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in label.items())


def note(experiment: Experiment, scale: str, backend: str, main: pd.DataFrame, requests,
         where: dict[str, Path], made_from: str) -> str:
    """What the carried tables at ``where`` hold (``main`` is their main table), what made
    them, what is still to run and how the figure is finished (Markdown)."""
    runs = main.drop_duplicates("run_id")
    matched = row_requests(runs, requests)
    have = {id(r) for r in matched if r is not None}
    todo = [r for r in requests if id(r) not in have]
    command = ("python3 run.py reproduce " + experiment.name
               + (f" --scale {scale}" if scale != "smoke" else "")
               + (f" --backend {backend}" if backend != BackendName.GEM5 else ""))
    prov = provenance(runs)
    made_by = [f"kernel `{prov.get('kernel', '?')}`", f"image `{prov.get('image', '?')}`"]
    if backend == BackendName.GEM5:
        made_by = [f"gem5 {prov.get('gem5_version', '?')} (binary "
                   f"`{str(prov.get('gem5_hash', '?'))[:12]}`), {prov.get('cpu', '?')} cores"
                   ] + made_by
        if "gem5_config" in runs:
            made_by.append("gem5-side code " + ", ".join(
                f"`{str(c)[:12]}`" for c in sorted(runs["gem5_config"].dropna().unique())))
    host = next((c for c in ("gem5_host_s", "wall_s") if c in runs and runs[c].notna().any()),
                None)
    lines = [f"# {experiment.name}, {scale}, {backend}: the runs finished so far "
             f"(not a figure yet)", "",
             f"{len(have)} of the {len(requests)} runs of `{command}` (written by "
             f"`--partial --carry` on {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC "
             f"from {made_from}), in " + ", ".join(f"`{p.name}`" for p in where.values())
             + ". Made with " + "; ".join(made_by) + ".", "",
             f"A later `{command}` counts them as done where its checkout gives their "
             "requests the same run ids (an id hashes the kernel, the image, the workloads "
             "and the gem5-side code)" + (" and the same gem5 binary made them" if
             backend == BackendName.GEM5 else "") + ", and makes only the others. Once every run "
             "exists, the full tables replace these files and this note.", "",
             "| run | run id |" + (f" {host} |" if host else ""),
             "|---|---|" + ("---|" if host else "")]
    for request, (_, row) in zip(matched, runs.iterrows()):
        name = _label(request.label) if request is not None else "(no request of today's)"
        lines.append(f"| {name} | `{row['run_id']}` |"
                     + ((f" {row[host]:.0f} |" if pd.notna(row[host]) else " - |")
                      if host else ""))
    lines += ["", f"Still to run ({len(todo)}):" if todo else "Nothing is left to run."]
    lines += [f"- {_label(r.label)}" for r in todo]
    return "\n".join(lines) + "\n"


def write_note(text: str, where: dict[str, Path]) -> Path:
    path = note_path(where)
    write_atomic(path, text)
    return path


def remove(where: dict[str, Path]) -> list[Path]:
    """Delete the carried tables (superseded by the full ones) and their note; the ones
    that existed."""
    gone = [p for p in (*where.values(), note_path(where)) if p.is_file()]
    for path in gone:
        path.unlink()
    return gone
