"""schedlab: host-side tooling for simulating cache- and NUMA-aware OS scheduling studies.

The package builds the guest (kernel, image, workloads), resolves machine descriptions from
the catalogue, runs experiments on a backend (QEMU for functional runs, gem5 for timing) and
analyses the results. ``run.py`` at the top of the repository is its command-line entry point.
"""
