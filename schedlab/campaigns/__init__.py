"""Campaigns: the papers' figures and tables as matrices of runs, and the executors that run them.

A campaign definition (one per figure or table, grouped by study) expands into run requests;
an executor runs the requests whose results are not there yet, on this host or as a SLURM
job array, and the results store gathers every finished run into one table for analysis.
"""
