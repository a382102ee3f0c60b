"""lee-fig25 X5365 region-partition request of rep REP with the ray tracer's start delayed by DELAY ms, so that
omnetpp's regions are mapped first (L6 investigation, worktree only)."""
import dataclasses, sys
sys.path.insert(0, "/work/l6")
from schedlab.campaigns import lee
from schedlab import runs
rep, cpu, delay = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
exp = next(e for e in lee.EXPERIMENTS if e.name == "lee-fig25")
req = next(r for r in exp.requests("smoke", "gem5")
           if r.label == {"machine": "clovertown-x5365", "condition": "region-partition", "rep": rep})
job = dataclasses.replace(req.jobs[0], start_delay_ms=delay)
req = dataclasses.replace(req, cpu=cpu, jobs=(job,),
                          label={**req.label, "l6_cpu": cpu, "l6_job_delay_ms": delay})
print(req, flush=True)
prep = runs.prepare(req)
print("run id", prep.run_id, flush=True)
print(runs.execute(prep), flush=True)
