#!/usr/bin/env python3
"""Entry point: `python3 run.py demo` (the main job) and `python3 run.py test` (the tests).

This file uses only the standard library. It makes sure the host has what the project needs
and then hands over to the schedlab package inside a virtual environment:
  1. the Debian packages listed in versions.toml (installed with apt-get when running as root,
     otherwise one line naming the exact command);
  2. a virtual environment with the pinned requirements.txt, kept in the build cache under a
     hash of that file, so every clone on the machine shares it and a change rebuilds it.
"""

import fcntl
import hashlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))
# The one rule for where the build cache is (standard library only, like this file).
from schedlab.paths import cache_dir  # noqa: E402
# Commands that only read the catalogue or print help need no Debian packages.
NO_PACKAGES_NEEDED = {"machines", "doctor", "--help", "-h", "workloads"}


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def missing_debian_packages(for_tests: bool = False) -> list[str]:
    """The Debian packages of versions.toml not installed (at the pinned version, for the
    kernel source); the test-only ones only ``for_tests``."""
    with open(REPO / "versions.toml", "rb") as f:
        versions = tomllib.load(f)
    kernel = versions["kernel"]
    names = versions["debian"]["packages"] + (versions["debian"]["test_packages"]
                                              if for_tests else [])
    wanted = {p: None for p in names}
    wanted[kernel["package"]] = kernel["version"]
    missing = []
    for package, version in wanted.items():
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", package],
                              capture_output=True, text=True)
        installed = proc.returncode == 0 and proc.stdout.startswith("install ok installed")
        if not installed or (version and proc.stdout.split()[-1] != version):
            missing.append(f"{package}={version}" if version else package)
    return missing


# apt-get waits this long for a dpkg lock another apt-get or an automatic update holds.
APT_LOCK_WAIT_S = 600


def ensure_debian_packages(for_tests: bool = False) -> None:
    missing = missing_debian_packages(for_tests)
    if not missing:
        return
    wait = ["-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}"]
    command = ["apt-get", "install", "-y", "--no-install-recommends", *wait, *missing]
    if os.geteuid() != 0:
        fail("missing Debian packages; install them with: sudo " + " ".join(command))
    print(f"run.py: installing Debian packages: {' '.join(missing)} (waiting up to "
          f"{APT_LOCK_WAIT_S // 60} minutes for the dpkg lock if another apt-get holds it)",
          file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq", *wait], env=env, check=False)
    if subprocess.run(command, env=env).returncode != 0:
        pinned = [p for p in missing if "=" in p]
        fail("apt-get could not install " + " ".join(missing) + " (its message is above)"
             + (f"; if the pinned {', '.join(pinned)} is no longer offered, update the pin "
                f"in versions.toml" if pinned else ""))


def ensure_venv() -> Path:
    requirements = (REPO / "requirements.txt").read_bytes()
    key = hashlib.sha256(requirements + sys.version.encode()).hexdigest()[:16]
    venv = cache_dir() / "venv" / key
    python = venv / "bin" / "python"
    if (venv / ".complete").is_file():
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    # Two first commands at once (a second terminal, CI beside a session) build it once:
    # the second waits, then finds it complete.
    with open(venv.parent / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print(f"run.py: waiting for another run.py that is creating {venv}",
                  file=sys.stderr)
            fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".complete").is_file():
            return python
        print(f"run.py: creating the Python environment in {venv} (once)", file=sys.stderr)
        # A venv hard-codes its own path, so it is built in place; the marker written last
        # tells a finished one from one an interruption left half-built.
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if subprocess.run([*pip, "-r", str(REPO / "requirements.txt")]).returncode != 0:
            fail("pip could not install requirements.txt; check the network to PyPI and retry")
        (venv / ".complete").write_text("")
    return python


def main() -> None:
    if sys.version_info < (3, 11):
        fail(f"Python 3.11 or newer is needed (this is {sys.version.split()[0]})")
    args = sys.argv[1:]
    if os.environ.get("SCHEDLAB_IN_VENV") != "1":
        if not args or args[0] not in NO_PACKAGES_NEEDED:
            ensure_debian_packages(for_tests=bool(args) and args[0] == "test")
        python = ensure_venv()
        env = {**os.environ, "SCHEDLAB_IN_VENV": "1"}
        os.execve(str(python), [str(python), str(Path(__file__).resolve()), *args], env)
    from schedlab.cli import main as cli_main
    cli_main(args)


if __name__ == "__main__":
    main()
