"""L6: where each thread ran and which CPU's L2 requests missed, over time, in one run."""
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, "/work/l6")
from schedlab.analysis.slices import parse_switches, roi_marks  # noqa: E402

run = Path(sys.argv[1])
BIN = float(sys.argv[2]) if len(sys.argv) > 2 else 0.005
trace_p = next(run.rglob("trace.txt"))
text = trace_p.read_text(errors="replace")
sw = parse_switches(text)
marks = roi_marks(text)
(job, rep), roi = next(iter(marks.items()))
t0, t1 = roi["begin"], roi["end"]
print(f"trace {trace_p}; ROI {job} rep {rep}: {t0:.6f} .. {t1:.6f} ({(t1 - t0) * 1e3:.2f} ms)")

# region events
for line in text.splitlines():
    if "sched_region_micro" in line or "sched_process_exec" in line or "sched_migrate_task" in line:
        m = re.search(r"\s(\d+\.\d+):", line)
        print("  ", line.strip()[:200])

# per-thread time on each CPU in windows
comm = {}
for s in sw:
    comm[s.prev_pid] = s.prev_comm
    comm[s.next_pid] = s.next_comm
running = {}   # cpu -> (pid, since)
occ = defaultdict(float)  # (pid, cpu, window) -> seconds
WINDOWS = {"pre(0.150..roi)": (0.150, t0), "roi": (t0, t1)}
bins = []
b = t0
while b < t1:
    bins.append((b, min(t1, b + BIN)))
    b += BIN


def add(pid, cpu, a, z):
    for name, (w0, w1) in list(WINDOWS.items()) + [(f"b{i}", w) for i, w in enumerate(bins)]:
        lo, hi = max(a, w0), min(z, w1)
        if hi > lo:
            occ[(pid, cpu, name)] += hi - lo


first_t = sw[0].time_s if sw else 0
for s in sw:
    if s.cpu in running:
        pid, since = running[s.cpu]
        add(pid, s.cpu, since, s.time_s)
    running[s.cpu] = (s.next_pid, s.time_s)
end_t = max(t1, sw[-1].time_s) if sw else t1
for cpu, (pid, since) in running.items():
    add(pid, cpu, since, end_t)

print("\nthread time per CPU (ms):")
for name in WINDOWS:
    print(f" window {name}")
    for pid in sorted({p for (p, c, w) in occ if w == name and occ[(p, c, w)] > 2e-4}):
        cells = {c: occ[(pid, c, name)] * 1e3 for c in range(4) if occ[(pid, c, name)] > 0}
        print(f"   {pid:5d} {comm.get(pid, '?'):16s} " + "  ".join(f"cpu{c}:{v:7.2f}" for c, v in cells.items()))
print(f"\nper {BIN * 1e3:g} ms bin of the ROI, the main thread(s) on each CPU (ms):")
for i, (a, z) in enumerate(bins):
    cells = []
    for c in range(4):
        tops = sorted(((occ[(p, c, f"b{i}")], p) for p in comm if occ[(p, c, f"b{i}")] > 0), reverse=True)
        cells.append(f"cpu{c}:" + ",".join(f"{comm.get(p, '?')[:8]}/{p}={v * 1e3:.1f}" for v, p in tops[:2]))
    print(f"  {a - t0:7.4f}  " + " | ".join(cells))

# gem5 per-CPU counters
out = (run / "gem5" / "gem5.stdout") if (run / "gem5" / "gem5.stdout").exists() else next(run.rglob("gem5.stdout"))
rows, events = [], []
for line in out.read_text().splitlines():
    if line.startswith("schedlab-l6cpu "):
        d = json.loads(line.split(" ", 1)[1])
        if "cpus" in d:
            rows.append(d)
    elif line.startswith("schedlab-event "):
        events.append(json.loads(line.split(" ", 1)[1]))
wb = next(e for e in events if e["event"] == "workbegin")
we = next(e for e in events if e["event"] == "workend")
print(f"\ngem5 workbegin tick {wb['tick']}, workend tick {we['tick']} "
      f"({(we['tick'] - wb['tick']) / 1e9:.3f} ms)")
# guest trace time = (tick - wb_tick)/1e12 + t0
reg = [r for r in rows if r["region"]]
print(f"{len(reg)} samples in the region")
prev = None
KEYS = ("insts", "llc_misses", "llc_load_misses", "llc_load_accesses")
tot = defaultdict(float)
print("   t_roi_ms   " + "  ".join(f"cpu{c}: insts(M) llcmiss" for c in range(4)))
for r in reg:
    t = (r["tick"] - wb["tick"]) / 1e9
    cur = {int(c): v for c, v in r["cpus"].items()}
    if prev is not None:
        d = {c: {k: cur[c][k] - prev[1][c][k] for k in KEYS} for c in cur}
        print(f"  {prev[0]:6.2f}-{t:6.2f} " + "  ".join(
            f"cpu{c}: {d[c]['insts'] / 1e6:6.2f} {d[c]['llc_misses']:7.0f}" for c in sorted(d)))
    prev = (t, cur)
if reg:
    last = {int(c): v for c, v in reg[-1]["cpus"].items()}
    print("cumulative at the last sample (since reset):")
    for c in sorted(last):
        print(f"  cpu{c}: " + "  ".join(f"{k}={last[c][k]:.0f}" for k in KEYS))
