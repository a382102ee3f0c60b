"""How long ``reproduce --list`` and ``report`` take: the newcomer's first two commands.

Times, in fresh processes (as a user runs them), the listing (every experiment's runs, cost
and whether its committed tables are current) and the report from the figures already
drawn in ``$SCHEDLAB_RESULTS``, each ``--repeat`` times; the first of each includes
Python's own start and the imports. Issue 49's target: under 5 s each on a warm host.

    ~/.cache/schedlab/venv/*/bin/python bench/bench_listing.py [--repeat 3] \
        [--json bench/results/listing.json]
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import record_parser, report_or_measure  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
COMMANDS = {"list": ["reproduce", "--list"], "report": ["report"]}


def measure(repeat: int) -> dict:
    env = {**os.environ, "SCHEDLAB_IN_VENV": "1"}
    load = os.getloadavg()[0]          # what else the host was doing as the timing began
    seconds: dict[str, list[float]] = {}
    for name, args in COMMANDS.items():
        for _ in range(repeat):
            started = time.monotonic()
            subprocess.run([sys.executable, str(REPO / "run.py"), *args], cwd=REPO, env=env,
                           capture_output=True, check=True)
            seconds.setdefault(name, []).append(round(time.monotonic() - started, 2))
    return {"host": platform.node(), "date": time.strftime("%Y-%m-%d"),
            "load_before": round(load, 2), "seconds": seconds}


def table(records: list[dict]) -> str:
    lines = ["| date | host load | list (s) | report (s) |", "|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['date']} | {r['load_before']} | "
                     f"{' / '.join(map(str, r['seconds']['list']))} | "
                     f"{' / '.join(map(str, r['seconds']['report']))} |")
    return "\n".join(lines)


def main() -> None:
    parser = record_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report_or_measure(args, table, lambda: measure(args.repeat))


if __name__ == "__main__":
    main()
