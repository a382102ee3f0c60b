"""What the benchmark scripts share: where their runs go and how their records are kept."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def results_dir(prefix: str):
    """Runs go to $SCHEDLAB_RESULTS if set (kept for a look afterwards), else to a
    temporary directory removed at the end."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.environ.setdefault("SCHEDLAB_RESULTS", tmp)
        yield Path(os.environ["SCHEDLAB_RESULTS"])


def append_records(path: Path, records: list[dict]) -> None:
    """Add records to a JSON list file, atomically: an interrupted write leaves the old file."""
    old = json.loads(path.read_text()) if path.exists() else []
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(old + records, indent=1) + "\n")
    tmp.replace(path)


def add_run_selection(parser) -> None:
    """The experiment and its runs, as ``reproduce --only`` chooses them."""
    parser.add_argument("experiment", nargs="?")
    parser.add_argument("--only", action="append", default=[], metavar="KEY=V[,KEY=V]")


def head_commit() -> str:
    """The checkout's commit, short (a record says what code measured it)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=Path(__file__).parent).stdout.strip()


def record_parser(doc: str) -> argparse.ArgumentParser:
    """A benchmark's command line: its docstring's first paragraph as the description, and
    the record options below."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    add_record_options(parser)
    return parser


def add_record_options(parser) -> None:
    """--json (where the records go) and --report (print earlier records' table only)."""
    parser.add_argument("--json", type=Path, help="append the records to this JSON file")
    parser.add_argument("--report", type=Path, nargs="*",
                        help="only print the tables of these files")


def print_report(files: list[Path], table) -> None:
    """The table of the records kept in ``files``."""
    print(table([r for f in files for r in json.loads(f.read_text())]))


def report_or_measure(args, table, measure) -> None:
    """With --report, the kept records' table; else one record measured now (``measure()``),
    appended to --json if given, and its table."""
    if args.report is not None:
        print_report(args.report or [args.json], table)
        return
    record = measure()
    if args.json:
        append_records(args.json, [record])
    print(table([record]))
