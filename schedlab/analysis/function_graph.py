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

import math
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
    open_calls: dict[int, list[dict | None]] = {}  # pid -> its open calls, by depth
    last_leaf: dict[int, dict] = {}            # pid -> its last call printed as a leaf
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        ts, cpu, pid, body = float(m["ts"]), int(m["cpu"]), int(m["pid"]), m["body"]
        # The kernel's own depth of the call (two spaces a level): a call whose return is
        # missing leaves no guess about where the calls after it belong.
        depth = (len(body) - len(body.lstrip(" "))) // 2
        stack = open_calls.setdefault(pid, [])
        comm = m["comm"].strip()
        if c := _COMMENT.match(body):
            comments.append({"ts": ts, "cpu": cpu, "pid": pid, "comm": comm, "text": c["text"]})
            continue
        entry, leaf = _ENTRY.match(body), _LEAF.match(body)
        if entry or (leaf and m["dur"]):
            del stack[depth:]                   # deeper calls whose returns are missing
            stack += [None] * (depth - len(stack))  # callers from before the trace's start
            call = {"function": (entry or leaf)["fn"], "pid": pid, "comm": comm, "cpu": cpu,
                    "start": ts, "depth": depth, "parent": stack[-1] if stack else None}
            calls.append(call)
            if entry:
                stack.append(call)
                continue
            dur = float(m["dur"])
            call.update(exit_cpu=cpu, end=ts + dur / 1e6, duration_us=dur)
            last_leaf[pid] = call
        elif (ret := _RETURN.match(body)) and m["dur"]:
            returned = {"exit_cpu": cpu, "end": ts, "duration_us": float(m["dur"])}
            if len(stack) > depth and (stack[depth] or {}).get("function") == ret["fn"]:
                stack[depth].update(returned)
                del stack[depth:]
            elif ((prev := last_leaf.get(pid)) and prev["function"] == ret["fn"]
                  and prev["depth"] == depth and len(stack) == depth
                  and prev["parent"] is (stack[-1] if stack else None)):
                # A call that returned on another CPU, already printed as a leaf on the CPU
                # it was made on (with a duration on that CPU's clock; seen on QEMU): the
                # return line is the call's own.
                prev.update(returned)
    done = [c for c in calls if "duration_us" in c]
    row = {id(c): i for i, c in enumerate(done)}
    frame = pd.DataFrame([{**{k: c[k] for k in CALL_COLUMNS if k != "parent"},
                           "parent": row.get(id(c["parent"]), -1)} for c in done],
                         columns=CALL_COLUMNS)
    return frame, pd.DataFrame(comments, columns=COMMENT_COLUMNS)


def roi_window(comments: pd.DataFrame) -> tuple[float, float]:
    """The launcher's region of interest on the trace clock (its first begin mark to its
    last end mark); the whole trace where a mark is missing."""
    text = comments["text"]
    begin = comments[text.str.startswith("schedlab-roi-begin")]["ts"]
    end = comments[text.str.startswith("schedlab-roi-end")]["ts"]
    return (begin.min() if len(begin) else -math.inf, end.max() if len(end) else math.inf)


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
