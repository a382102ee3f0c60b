"""schedlab: host-side tooling for simulating cache- and NUMA-aware OS scheduling studies.

How a request becomes a result, and where each step lives:

1. ``machine``: the catalogue (configs/machines.toml) resolved into a typed MachineSpec.
2. ``guest/``: the guest kernel, image and workloads (built and cached by content hash),
   the runner protocol and the scheduler policies.
3. ``runs``: a RunRequest is resolved once into a PreparedRun (the spec, hashed into the
   run id) and executed on a backend; only ``runs`` writes a run directory, atomically.
4. ``backends/``: QEMU (functional) and gem5 (timing) execute a resolved run.
5. ``campaigns/``: the papers' figures as matrices of requests, and the executors (this
   host, SLURM) that run them resumably.
6. ``analysis/``: tables, metrics and figures from finished runs; ``report`` the HTML page.

``cli`` holds every command of ``python3 run.py``.
"""
