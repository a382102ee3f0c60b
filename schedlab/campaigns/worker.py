"""One campaign run in a process of its own: ``python -m schedlab.campaigns.worker REQUEST``.

REQUEST is a JSON file written by the executor (:func:`schedlab.runs.request_to_data`).
Exit status 0: the run's directory is published (or already was). A SIGTERM (Ctrl-C of the
campaign) ends the run without publishing it.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from schedlab.errors import UserError
from schedlab.runs import execute_request, request_from_data


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _stop)
    request = request_from_data(json.loads(Path(argv[0]).read_text()))
    try:
        run_dir = execute_request(request, progress=lambda s: print(s, flush=True))
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
