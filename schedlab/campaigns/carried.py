"""Finished runs carried between hosts as committed compact tables.

A campaign's results store (``results/``) lives on the host that ran it. A campaign longer
than one host's stay (a 2,000-hour paper-scale figure on borrowed machines, or a session
that ends before its runs do) keeps what finished as its compact tables under
``data/<study>/partial/`` (``reproduce NAME --partial --carry``), committed beside the
code that made them. A later ``reproduce NAME`` on any host counts a carried run as done
when this checkout gives its request the same run id (the run id hashes the kernel, the
image, the workloads and the gem5-side code, so other code means other ids) and, on gem5,
the same gem5 binary made it: then the figure is one set, and only the other runs run.
Once the figure's full tables are written, its carried ones go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from schedlab.analysis.store import load_committed, save_committed
from schedlab.campaigns.experiment import Experiment

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
            if "run_id" in fresh:
                carried = carried[~carried["run_id"].isin(set(fresh["run_id"]))]
            out[part] = pd.concat([carried, fresh], ignore_index=True) if len(fresh) else carried
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
            f"README names to use them")
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


def label_key(label: dict) -> tuple:
    """A request's label, or a table row's label columns, as one comparable key. A table
    mixing requests with and without a label key (a size only some requests set) holds an
    empty cell where a request has none, so empty cells are not part of the key."""
    return tuple(sorted((k, str(v)) for k, v in label.items() if not pd.isna(v)))


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


def remove(where: dict[str, Path]) -> list[Path]:
    """Delete the carried tables (superseded by the full ones); the ones that existed."""
    gone = [p for p in where.values() if p.is_file()]
    for path in gone:
        path.unlink()
    return gone
