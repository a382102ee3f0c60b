"""One campaign run in a process of its own: ``python -m schedlab.campaigns.worker REQUEST``.

REQUEST is a JSON file written by the executor: the request
(:func:`schedlab.runs.request_to_data`) and the run id the executor planned for it. If the
sources changed since (a kernel patch, gem5-side code), the request now resolves to another
run: the worker refuses rather than publish a run the campaign does not expect.
Exit status 0: the run's directory is published (or already was). A SIGTERM (Ctrl-C of the
campaign) ends the run without publishing it. The worker holds the run's lock
(:func:`schedlab.store.run_lock`) while it executes: a second campaign on the same results
store (another terminal, a SLURM array) that reaches the same run waits for it and reuses
it instead of making it again.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from schedlab.errors import UserError
from schedlab.runs import execute, prepare_planned, request_from_data
from schedlab.store import run_lock


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _stop)
    data = json.loads(Path(argv[0]).read_text())
    request = request_from_data(data["request"])
    progress = lambda s: print(s, flush=True)  # noqa: E731
    try:
        prepared = prepare_planned(request, data["run_id"], progress=progress)
        results = prepared.dir.parent
        with run_lock(results, prepared.run_id, blocking=False) as mine:
            if mine:
                run_dir = execute(prepared, progress=progress)
        if not mine:
            progress(f"run {prepared.run_id}: another process is making it; waiting for it")
            with run_lock(results, prepared.run_id, blocking=True):
                run_dir = execute(prepared, progress=progress)   # reuses it once published
    except UserError as e:
        print(f"error: {e}", flush=True)
        return 1
    except KeyboardInterrupt:
        print("stopped", flush=True)
        return 130
    results = json.loads((run_dir / "results.json").read_text())
    if not results["ok"]:
        print("error: the run finished with problems: " + "; ".join(results["errors"][:3]),
              flush=True)
        return 2
    print(f"results: {run_dir}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
