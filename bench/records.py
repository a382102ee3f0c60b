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
    """--json (the records' file) and --report (print kept records' tables only): every
    benchmark's, declared here once."""
    parser.add_argument("--json", type=Path,
                        help="keep the records in this JSON file (earlier ones are kept)")
    parser.add_argument("--report", type=Path, nargs="*", metavar="JSON",
                        help="only print the tables of these record files (none: --json's)")


def report_files(args) -> list[Path] | None:
    """The files ``--report`` asks for (``--json``'s if it names none), or None when the
    benchmark is to measure."""
    if args.report is None:
        return None
    files = args.report or ([args.json] if args.json else [])
    if not files:
        raise SystemExit("--report needs record files, or --json naming one")
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"no record file {', '.join(missing)}")
    return files


def print_report(files: list[Path], table) -> None:
    """The table of the records kept in ``files`` (JSON lists)."""
    print(table([r for f in files for r in json.loads(f.read_text())]))


def save_gem5_records(path: Path | None, binary, records: list[dict], **extra) -> None:
    """A gem5 benchmark's records as one document with the gem5 binary and the host,
    written atomically (a benchmark stopped half-way leaves no half-written file)."""
    if path is None:
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"gem5": binary.version, "gem5_hash": binary.hash,
                               "host": os.uname().nodename, "records": records, **extra},
                              indent=1))
    tmp.replace(path)


def gem5_records(files: list[Path]) -> list[dict]:
    """The records of gem5 benchmarks' documents (``save_gem5_records``; a document that
    gathers several passes of a benchmark keeps each pass's records under ``passes``)."""
    out = []
    for f in files:
        doc = json.loads(f.read_text())
        for part in doc.get("passes", [doc]):
            out += part["records"]
    return out


def report_or_measure(args, table, measure) -> None:
    """With --report, the kept records' table; else one record measured now (``measure()``),
    appended to --json if given, and its table."""
    if (files := report_files(args)) is not None:
        print_report(files, table)
        return
    record = measure()
    if args.json:
        append_records(args.json, [record])
    print(table([record]))
