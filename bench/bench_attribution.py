"""Benchmark what per-task attribution costs at the context-switch rate of study 2's mixer.

Every context switch the guest reports with attribution on is an exit from gem5's event
loop to the Python handler (configs/schedlab_gem5.py, ``RunEvents.on_context_switch``),
which reads the CPU's counters and charges them to the task that ran. The mixer of study 2
switches thousands of times per simulated second, so this is where that cost shows.

The same run of ``demarchi-table1`` (machine A, 4 cores, vanilla, first repetition, smoke)
is made with and without ``--attribute-tasks``; for each, from gem5's event lines:

- ROI host s and ROI simulated ms: the region of interest (``m5 workbegin`` to ``workend``);
- switch exits and handler host s: the exits handled in the region and the host seconds
  spent in their handler (attribution on only);
- host µs per exit: the handler's share, and the whole difference the exits make (ROI host
  seconds on minus off, per exit), which adds gem5's own cost of leaving and re-entering
  its event loop.

The run with attribution is the campaign's own run (reused when it is in the results
store). Usage:

    GEM5=/path/to/gem5.fast python3 bench/bench_attribution.py \\
        --json bench/results/attribution-<host>-<date>.json
    python3 bench/bench_attribution.py --report bench/results/attribution-*.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import (add_record_options, gem5_records, report_files,  # noqa: E402
                           save_gem5_records)
from bench_gem5 import measure  # noqa: E402
from schedlab.backends.gem5.binary import probe  # noqa: E402
from schedlab.campaigns import demarchi  # noqa: E402
from schedlab.runs import execute, prepare  # noqa: E402


def the_run(attribute: bool):
    request = next(r for r in demarchi.mixer_runs([demarchi.MACHINES[("A", 4)]], "smoke",
                                                  "gem5")
                   if r.label["policy"] == "vanilla" and r.label["rep"] == 0)
    if not attribute:
        request = dataclasses.replace(request, attribute_tasks=False,
                                      label={**request.label, "bench": "no-attribution"})
    return request


def record(attribute: bool) -> dict:
    run_dir = execute(prepare(the_run(attribute), progress=print), progress=print)
    info = json.loads((run_dir / "gem5.json").read_text())
    end = next(e for e in info["events"] if e["event"] == "workend")
    return {"attribution": attribute, "run": run_dir.name, **measure(info),
            "roi_sim_ms": round((end["tick"] - next(e for e in info["events"]
                                                    if e["event"] == "workbegin")["tick"])
                                / 1e9, 3),
            "switch_exits": end.get("switch_exits"),
            "switch_handler_s": end.get("switch_handler_s")}


def table(records: list[dict]) -> str:
    lines = ["| attribution | ROI host s | ROI simulated ms | ROI insts | switch exits "
             "| exits per simulated ms | handler host s | handler share of ROI "
             "| handler µs per exit |", "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        exits, handler = r.get("switch_exits"), r.get("switch_handler_s")
        lines.append(
            f"| {'on' if r['attribution'] else 'off'} | {r['roi_host_s']:.1f} "
            f"| {r['roi_sim_ms']:.2f} | {r['roi_insts']:,} | {exits if exits else '-'} "
            f"| {exits / r['roi_sim_ms']:.0f} | {handler:.2f} "
            f"| {100 * handler / r['roi_host_s']:.1f} % | {1e6 * handler / exits:.0f} |"
            if exits else
            f"| {'on' if r['attribution'] else 'off'} | {r['roi_host_s']:.1f} "
            f"| {r['roi_sim_ms']:.2f} | {r['roi_insts']:,} | - | - | - | - | - |")
    on = [r for r in records if r["attribution"] and r.get("switch_exits")]
    off = [r for r in records if not r["attribution"]]
    if on and off:
        extra = on[0]["roi_host_s"] - off[0]["roi_host_s"]
        lines.append("")
        lines.append(f"With attribution the region took {extra:+.1f} host s "
                     f"({100 * extra / off[0]['roi_host_s']:+.1f} %), "
                     f"{1e6 * extra / on[0]['switch_exits']:+.0f} µs per exit "
                     "(the simulated work differs a little: the exits' m5 ops run in the "
                     "guest too).")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_options(p)
    args = p.parse_args()
    if (files := report_files(args)) is not None:
        print(table(gem5_records(files)))
        return 0
    binary = probe()
    # Without first: the run with attribution is the campaign's, often made already.
    records = [record(False), record(True)]
    save_gem5_records(args.json, binary, records)
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
