"""ftrace's function graph trace, parsed: which kernel calls took how long, nested as made.

A run with ``--trace-function`` (``RunRequest.trace_functions``) times every call of the
functions it names; the guest's runner sets the tracer's options so each line carries the
absolute trace time, the CPU, the task and, on a return, the function's name
(disk-images/rootfs/init, ``trace_functions``). A call that leaves its CPU (a migration
inside it) returns on another, so calls are matched per task, not per CPU. The trace's
events and the launcher's marks come out as comments (``/* ... */``) between the calls.

Durations are ftrace's: the trace clock's time from the call to its return, which includes
the tracer's own entry and exit work for the traced calls nested inside it.
"""

from __future__ import annotations

import re

import pandas as pd

_LINE = re.compile(r"^\s*(?P<ts>\d+\.\d+)\s+\|\s+(?P<cpu>\d+)\)\s+(?P<comm>.*?)-(?P<pid>\d+)"
                   r"\s+\|\s+(?:(?P<dur>\d+(?:\.\d+)?) us\s+)?\|\s(?P<body>.*)$")
_ENTRY = re.compile(r"^\s*(?P<fn>[\w.]+)\(\) \{$")
_LEAF = re.compile(r"^\s*(?P<fn>[\w.]+)\(\);$")
_RETURN = re.compile(r"^\s*\} /\* (?P<fn>[\w.]+) \*/$")
_COMMENT = re.compile(r"^\s*/\* (?P<text>.*) \*/$")

CALL_COLUMNS = ["function", "pid", "comm", "cpu", "exit_cpu", "start", "end", "duration_us",
                "parent", "depth"]
COMMENT_COLUMNS = ["ts", "cpu", "pid", "comm", "text"]


def parse(text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The calls and the comments of a function graph trace.

    calls: one row per call whose return is in the trace, in the order of their starts:
    function, pid, comm, cpu (where it was made), exit_cpu, start and end (s, trace clock),
    duration_us, parent (the row of the traced call it was made in; -1: none in the trace),
    depth (0 outermost). A call still open when the trace stopped has no row; its nested
    calls keep theirs. comments: ts, cpu, pid, comm, text (events, trace_marker writes)."""
    calls: list[dict] = []
    comments: list[dict] = []
    open_calls: dict[int, list[dict]] = {}     # pid -> its calls not yet returned
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        ts, cpu, pid, body = float(m["ts"]), int(m["cpu"]), int(m["pid"]), m["body"]
        stack = open_calls.setdefault(pid, [])
        if c := _COMMENT.match(body):
            comments.append({"ts": ts, "cpu": cpu, "pid": pid, "comm": m["comm"].strip(),
                             "text": c["text"]})
        elif e := _ENTRY.match(body):
            call = {"function": e["fn"], "pid": pid, "comm": m["comm"].strip(), "cpu": cpu,
                    "start": ts, "parent": stack[-1] if stack else None, "depth": len(stack)}
            calls.append(call)
            stack.append(call)
        elif (leaf := _LEAF.match(body)) and m["dur"]:
            dur = float(m["dur"])
            calls.append({"function": leaf["fn"], "pid": pid, "comm": m["comm"].strip(),
                          "cpu": cpu, "exit_cpu": cpu, "start": ts, "end": ts + dur / 1e6,
                          "duration_us": dur, "parent": stack[-1] if stack else None,
                          "depth": len(stack)})
        elif (ret := _RETURN.match(body)) and m["dur"]:
            names = [c["function"] for c in stack]
            if ret["fn"] not in names:          # its call was before the trace's start
                continue
            while stack:                        # calls whose returns were lost end here
                call = stack.pop()
                if call["function"] == ret["fn"]:
                    call.update(exit_cpu=cpu, end=ts, duration_us=float(m["dur"]))
                    break
    done = [c for c in calls if "duration_us" in c]
    row = {id(c): i for i, c in enumerate(done)}
    frame = pd.DataFrame([{**{k: c[k] for k in CALL_COLUMNS if k != "parent"},
                           "parent": row.get(id(c["parent"]), -1)} for c in done],
                         columns=CALL_COLUMNS)
    return frame, pd.DataFrame(comments, columns=COMMENT_COLUMNS)


def children(calls: pd.DataFrame, row: int) -> pd.DataFrame:
    """The traced calls made directly inside call ``row``."""
    return calls[calls["parent"] == row]


def inside(calls: pd.DataFrame, row: int) -> pd.DataFrame:
    """Every traced call made inside call ``row``, at any depth."""
    rows, frontier = [], [row]
    while frontier:
        nested = calls.index[calls["parent"].isin(frontier)].tolist()
        rows += nested
        frontier = nested
    return calls.loc[sorted(rows)]
