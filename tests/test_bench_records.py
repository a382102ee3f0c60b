"""The benchmarks' record options, declared once (bench/records.py), on committed records."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import records  # noqa: E402

# Each script's --report on a record file it wrote (committed): the table's header row.
REPORTS = {
    "bench_gem5.py": ("gem5-vm-2026-11-23-final.json", "| machine | cores | boot s |"),
    "bench_attribution.py": ("attribution-vm-2026-11-23.json", "| attribution | ROI host s |"),
    "bench_sampling.py": ("sampling-vm-2026-11-27.json", "| case | scope | windows |"),
    "bench_regions.py": ("regions-vm-2026-11-29-x5365-rate.json", "| machine | policy | rep |"),
    "bench_fixed_cost.py": ("fixed-cost-vm-2026-11-26.json", "| machine | cpu | commit |"),
    "bench_hector_latency.py": ("hector-latency-vm-2026-11-25.json", "| delay | class |"),
}


def test_only_records_py_declares_the_record_options():
    declared = [f"{p.name}: {m.group(0)}" for p in sorted((REPO / "bench").glob("*.py"))
                if p.name != "records.py"
                for m in re.finditer(r"add_argument\(\s*\"--(json|report)\"", p.read_text())]
    assert not declared


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    records.add_record_options(parser)
    return parser.parse_args(argv)


def test_report_files(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_text("[]")
    assert records.report_files(_args("--json", str(kept))) is None       # measure
    assert records.report_files(_args("--report", "--json", str(kept))) == [kept]
    assert records.report_files(_args("--report", str(kept))) == [kept]
    with pytest.raises(SystemExit, match="--report needs record files, or --json"):
        records.report_files(_args("--report"))
    with pytest.raises(SystemExit, match="no record file .*gone.json"):
        records.report_files(_args("--report", str(tmp_path / "gone.json")))


@pytest.mark.parametrize("script", sorted(REPORTS))
def test_a_benchmark_reports_its_committed_records(script):
    name, header = REPORTS[script]
    path = REPO / "bench" / "results" / name
    done = subprocess.run([sys.executable, str(REPO / "bench" / script), "--report", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert header in done.stdout
