"""Scheduler policies a run can ask for: ``kernel-patches/policies.toml``, validated.

Each policy names the sysctls, files (debugfs knobs), boot arguments, per-workload arguments,
trace events and region-scheduling participation the in-guest runner sets before the
workload starts.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

from schedlab.errors import UserError
from schedlab.paths import KERNEL_PATCHES
from schedlab.store import file_signature

POLICIES_FILE = KERNEL_PATCHES / "policies.toml"
POLICY_KEYS = {"summary", "sysctl", "files", "boot_args", "workload_args", "trace_events",
               "regions"}
# How a run's workloads take part in region scheduling (the launcher's --regions).
REGION_MODES = ("none", "join", "favour")


def load_policies(path: Path = POLICIES_FILE) -> dict[str, dict]:
    """kernel-patches/policies.toml as {name: table}, each field checked for shape."""
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path.name}: not valid TOML ({e})") from None
    if set(raw) != {"policy"} or not isinstance(raw["policy"], dict):
        raise UserError(f"{path.name}: expected only [policy.<name>] tables")
    out = {}
    for name, table in raw["policy"].items():
        where = f"{path.name} [policy.{name}]"
        extra = set(table) - POLICY_KEYS
        if extra:
            raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))}; "
                            f"allowed: {', '.join(sorted(POLICY_KEYS))}")
        if not isinstance(table.get("summary"), str) or not table["summary"].strip():
            raise UserError(f"{where}: needs a non-empty summary")
        for key in ("sysctl", "files"):
            value = table.get(key, {})
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, (str, int)) for k, v in value.items()):
                raise UserError(f"{where}: '{key}' must map names to strings or integers")
        for k in table.get("sysctl", {}):
            if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", k):
                raise UserError(f"{where}: sysctl name {k!r} is not dotted (e.g. kernel.x)")
        for k in table.get("files", {}):
            if not k.startswith("/"):
                raise UserError(f"{where}: file {k!r} must be an absolute guest path")
        per_workload = table.get("workload_args", {})
        if not isinstance(per_workload, dict) or not all(
                isinstance(v, list) and all(isinstance(a, str) for a in v)
                for v in per_workload.values()):
            raise UserError(f"{where}: 'workload_args' must map workload names to lists of "
                            f"strings, e.g. {{ mixer = [\"--declare-affinity\"] }}")
        regions = table.get("regions", {})
        if not isinstance(regions, dict) or not set(regions) <= {"jobs", "background"} or \
                not all(v in REGION_MODES for v in regions.values()) or \
                regions.get("background") == "favour":
            raise UserError(f"{where}: 'regions' must map jobs and/or background to one of "
                            f"{', '.join(REGION_MODES)} (favour: jobs only), e.g. "
                            f"{{ jobs = \"favour\", background = \"join\" }}")
        for key in ("boot_args", "trace_events"):
            value = table.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UserError(f"{where}: '{key}' must be a list of strings")
        for ev in table.get("trace_events", []):
            if not re.fullmatch(r"[a-z0-9_]+:[a-z0-9_]+", ev):
                raise UserError(f"{where}: trace event {ev!r} must be 'system:event'")
        out[name] = table
    return out


# policies.toml as checked, by its file signature (a listing resolves a policy per run).
_LOADED: dict[tuple, dict[str, dict]] = {}


def policy(name: str, path: Path = POLICIES_FILE) -> dict:
    """One policy's table (a copy); UserError naming the known ones otherwise."""
    key = file_signature(path)
    if key not in _LOADED:
        _LOADED[key] = load_policies(path)
    policies = _LOADED[key]
    if name not in policies:
        raise UserError(f"unknown policy {name!r}; known: {', '.join(sorted(policies))}")
    return copy.deepcopy(policies[name])
