"""lee-fig25 X5365 vanilla request of rep REP, the ray tracer pinned to CPUS_JOB and omnetpp to CPUS_BG
(L6 investigation, worktree only): the committed partitioned runs' presumed ROI placement without any
region machinery."""
import dataclasses, sys
sys.path.insert(0, "/work/l6")
from schedlab.campaigns import lee
from schedlab import runs
rep, cpu, cj, cb = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
exp = next(e for e in lee.EXPERIMENTS if e.name == "lee-fig25")
req = next(r for r in exp.requests("smoke", "gem5")
           if r.label == {"machine": "clovertown-x5365", "condition": "vanilla", "rep": rep})
job = dataclasses.replace(req.jobs[0], cpus=cj)
bg = dataclasses.replace(req.background[0], cpus=cb)
req = dataclasses.replace(req, cpu=cpu, jobs=(job,), background=(bg,),
                          label={**req.label, "l6_cpu": cpu, "l6_pin": f"job {cj} bg {cb}"})
print(req, flush=True)
prep = runs.prepare(req)
print("run id", prep.run_id, flush=True)
print(runs.execute(prep), flush=True)
