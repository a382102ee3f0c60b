"""Run one lee-fig25 X5365 condition as the campaign defines it, optionally with another
--cpu for the ROI (L6 investigation; worktree only)."""
import dataclasses, sys
sys.path.insert(0, "/work/l6")
from schedlab.campaigns import lee
from schedlab import runs
cond, rep, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
exp = next(e for e in lee.EXPERIMENTS if e.name == "lee-fig25")
reqs = exp.requests("smoke", "gem5")
req = next(r for r in reqs if r.label == {"machine": "clovertown-x5365", "condition": cond, "rep": rep})
req = dataclasses.replace(req, cpu=cpu, label={**req.label, "l6_cpu": cpu})
print(req)
prep = runs.prepare(req)
print("run id", prep.run_id)
print(runs.execute(prep))
