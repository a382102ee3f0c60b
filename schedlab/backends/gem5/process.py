"""Running the gem5 binary: its command line, its progress and event lines, its failures.

Our gem5 script (``configs/schedlab_gem5.py``) prints ``schedlab-progress`` and
``schedlab-event`` lines as JSON; :func:`execute` streams them to a progress callable and
returns them. Any abnormal end raises :class:`Gem5Error` with the tails of gem5's log and of
the guest's console.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Callable

from schedlab.backends.gem5.binary import SCRIPT, Gem5Error
from schedlab.backends.gem5.options import Gem5Options
from schedlab.processes import die_with_parent

Progress = Callable[[str], None]

CONSOLE = "board.pc.com_1.device"
# In gem5's output directory: what the script is told (Gem5Options).
OPTIONS = "options.json"
LOG_TAIL_LINES = 25


def command(binary: Path, outdir: Path, options: Gem5Options) -> list[str]:
    """The gem5 command line (stdout/stderr are redirected by the caller): the script and
    its options, written as one document into gem5's output directory."""
    outdir.mkdir(parents=True, exist_ok=True)
    document = options.write(outdir / OPTIONS)
    return [str(binary), "--outdir", str(outdir), str(SCRIPT), "--options", str(document)]


def _tail(path: Path, n: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=n))
    except OSError:
        return ""


def execute(cmd: list[str], outdir: Path, progress: Progress | None = None,
            timeout: float | None = None) -> dict:
    """Run gem5, stream its progress, and return the events it reported.

    Writes ``gem5.stdout`` / ``gem5.stderr`` into ``outdir``. Raises Gem5Error if gem5 exits
    non-zero or is killed, with the tail of its logs, or once it has used ``timeout``
    seconds of CPU time. CPU time, not the wall clock: a run paused (SIGSTOP, SLURM's
    ``scontrol suspend``) or slowed by a busy host is not stopped for time it did not use.
    The result gives both: ``host_seconds`` (wall clock) and ``cpu_seconds``.
    """
    outdir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = outdir / "gem5.stdout", outdir / "gem5.stderr"
    events: list[dict] = []
    progress_lines: list[dict] = []
    started = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1,
                                preexec_fn=die_with_parent)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if line.startswith("schedlab-progress "):
                    data = json.loads(line.split(" ", 1)[1])
                    progress_lines.append(data)
                    if progress:
                        progress(f"gem5: {data['sim_s']:.4f} s simulated, "
                                 f"{data['insts'] / 1e6:.1f} M instructions, "
                                 f"{data['host_s']:.0f} s host, "
                                 f"{data['ips'] / 1e6:.2f} M instructions/host s")
                elif line.startswith("schedlab-event "):
                    data = json.loads(line.split(" ", 1)[1])
                    events.append(data)
                    if progress:
                        progress(f"gem5: {data['event']} at tick {data.get('tick')}")
                if timeout and _used(proc.pid, started) > timeout:
                    proc.kill()
                    raise Gem5Error(f"gem5 used more than {timeout:.0f} s of host CPU time and "
                                    f"was stopped; logs in {outdir}")
            # wait4 rather than wait: the process's peak memory comes with its status.
            _, raw_status, usage = os.wait4(proc.pid, 0)
            status = proc.returncode = os.waitstatus_to_exitcode(raw_status)
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
    host_s = time.monotonic() - started
    if status != 0:
        abnormal = [e for e in events if e["event"] in ("abnormal", "limit")]
        why = (f"stopped: {abnormal[-1]['why']}" if abnormal and "why" in abnormal[-1] else
               f"ended with {abnormal[-1]}" if abnormal else
               f"exited with status {status}" if status > 0 else f"was killed by signal {-status}")
        tail = _tail(err_path) + _tail(out_path, 10)
        console = _tail(outdir / CONSOLE, 10)
        raise Gem5Error(f"gem5 {why} after {host_s:.0f} s; logs in {outdir}\n"
                        f"--- gem5 log tail ---\n{tail.rstrip()}\n"
                        f"--- guest console tail ---\n{console.rstrip()}")
    return {"events": events, "progress": progress_lines, "host_seconds": round(host_s, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "max_rss_mib": usage.ru_maxrss // 1024}


def _used(pid: int, started: float) -> float:
    """Seconds of CPU time (user + system) gem5 has used so far; of the wall clock where
    ``/proc`` does not say (not Linux)."""
    try:
        # The command name (field 2) may hold spaces: the fields after its ")" are fixed.
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return time.monotonic() - started
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
