"""Hector's memory latencies on gem5 against the machine's table (issue 18, item 4).

The probe of bench/bench_hector_latency.py on Hector's Timing cores at ring delays 0 and
64: the cycles one cache-line load takes from a bank, seen from its own module, from
another module of its station and from another station, each within 15 % of the table
(19, 29, 37 + 3 x delay cycles). Delay 64 also shows the delay knob reaches the model:
only the off-station time moves. bench/gem5.md ("Hector's memory latencies") records the
bench's three delays.

Needs GEM5; skipped otherwise with the reason printed. Cost: Hector's boot to its
checkpoint once (about half an hour of host time, cached), then a few minutes per delay.
"""

import json
import os
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not os.environ.get("GEM5"),
                       reason="GEM5 not set: export GEM5=/path/to/gem5/build/X86/gem5.fast "
                              "(gem5 v24.0) to run the Hector latency check"),
    pytest.mark.timeout(3 * 3600),
]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_hector_latency as bhl  # noqa: E402


@pytest.mark.parametrize("delay", [0, 64])
def test_hector_cache_line_loads_match_the_table(delay, tmp_path, monkeypatch):
    from schedlab.runs import execute, prepare
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path / "results"))
    run_dir = execute(prepare(bhl.request(delay), progress=print), progress=print)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["ok"], results["errors"]
    rows = bhl.compare(delay, bhl.measured(results))
    print(json.dumps(rows, indent=1))
    assert all(r["within"] for r in rows), rows
