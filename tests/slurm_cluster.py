"""A real one-node SLURM cluster on localhost, for the SLURM executor's tests.

Debian's munged, slurmctld and slurmd (versions.toml installs them) are started in a
temporary directory with their own munge key, ports, state and spool directories, so they
touch nothing of the host's own configuration and several test sessions can each run one.
The node is this host, with the CPUs and memory ``slurmd -C`` reports; jobs run as root
(SlurmUser=root), with process tracking by parent pid and no cgroups, no task plugin and no
accounting database.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("munged", "munge", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sinfo", "scancel", "srun")
PACKAGES = "slurmctld slurmd slurm-client munge"


class Unavailable(Exception):
    """SLURM cannot run here; the message says why."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 15) -> str:
    if not path.is_file():
        return f"({path.name}: none)"
    text = path.read_text(errors="replace").splitlines()[-lines:]
    return f"--- {path.name}:\n" + "\n".join(text)


class LocalSlurm:
    """``start()`` the daemons, use the cluster (SLURM_CONF is set), ``stop()`` them."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.conf: Path | None = None
        self.node: str | None = None
        self._procs: list[tuple[str, subprocess.Popen]] = []
        self._old_conf: str | None = None

    # -- set-up -------------------------------------------------------------------------
    def start(self, timeout: float = 90.0) -> "LocalSlurm":
        missing = [c for c in DAEMONS + CLIENTS if shutil.which(c) is None]
        if missing:
            raise Unavailable(f"SLURM is not installed (missing {', '.join(missing)}); install "
                              f"Debian's {PACKAGES} (run.py does, as root)")
        if os.geteuid() != 0:
            raise Unavailable("the local SLURM cluster runs its daemons and jobs as root "
                              "(SlurmUser=root); run the tests as root")
        # munged wants its socket's directory (and the parents) open to all.
        self.root = Path(tempfile.mkdtemp(prefix="schedlab-slurm-"))
        self.root.chmod(0o755)
        try:
            self._start_munge()
            self._write_conf()
            self._old_conf = os.environ.get("SLURM_CONF")
            os.environ["SLURM_CONF"] = str(self.conf)
            self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
            self._spawn("slurmd", ["slurmd", "-D", "-N", self.node, "-f", str(self.conf)])
            self._wait_idle(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "w")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "SLURM_CONF": str(self.conf or "")})
        log.close()
        self._procs.append((name, proc))

    def _start_munge(self) -> None:
        munge = self.root / "munge"
        (self.root / "log").mkdir()
        munge.mkdir(mode=0o755)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = munge / "munge.socket"
        self._spawn("munged", ["munged", "-F", f"--socket={self.socket}", f"--key-file={key}",
                               f"--log-file={munge / 'munged.log'}",
                               f"--pid-file={munge / 'munged.pid'}",
                               f"--seed-file={munge / 'munged.seed'}"])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            probe = subprocess.run(f"munge -n -S {self.socket} | unmunge -S {self.socket}",
                                   shell=True, capture_output=True, text=True)
            if probe.returncode == 0:
                return
            if self._procs[-1][1].poll() is not None:
                break
            time.sleep(0.3)
        raise Unavailable("munged did not start:\n" + self.logs())

    def _write_conf(self) -> None:
        hw = subprocess.run(["slurmd", "-C"], capture_output=True, text=True)
        node_line = next((line for line in hw.stdout.splitlines()
                          if line.startswith("NodeName=")), None)
        if hw.returncode != 0 or node_line is None:
            raise Unavailable(f"'slurmd -C' could not describe this host: {hw.stderr.strip()}")
        fields = dict(f.split("=", 1) for f in node_line.split())
        self.node = fields.pop("NodeName")
        hardware = " ".join(f"{k}={v}" for k, v in fields.items())
        for d in ("state", "spool"):
            (self.root / d).mkdir()
        r = self.root
        self.conf = r / "slurm.conf"
        self.conf.write_text(f"""\
# A one-node test cluster on localhost (tests/slurm_cluster.py).
ClusterName=schedlab-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log' / 'slurmctld.log'}
SlurmdLogFile={r / 'log' / 'slurmd.log'}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
# A stopped slurmd is noticed within seconds (the node-not-responding test), not minutes.
SlurmdTimeout=10
InactiveLimit=0
KillWait=10
MinJobAge=600
NodeName={self.node} NodeAddr=127.0.0.1 {hardware} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            for name, proc in self._procs:
                if proc.poll() is not None:
                    raise Unavailable(f"{name} exited with {proc.returncode}:\n" + self.logs())
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True,
                                 text=True)
            state = out.stdout.strip()
            if out.returncode == 0 and state == "idle":
                return
            time.sleep(0.5)
        raise Unavailable(f"the node did not become idle within {timeout:.0f} s (sinfo: "
                          f"{state or 'no answer'}):\n" + self.logs())

    # -- use --------------------------------------------------------------------------
    def stop_slurmd(self) -> None:
        """Kill the node's slurmd, as a crashed node would leave it."""
        for name, proc in self._procs:
            if name == "slurmd" and proc.poll() is None:
                proc.kill()
                proc.wait()

    def restart_slurmd(self, timeout: float = 90.0) -> None:
        self._procs = [(n, p) for n, p in self._procs if n != "slurmd"]
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.node, "-f", str(self.conf)])
        self._wait_idle(timeout)

    def logs(self) -> str:
        if self.root is None:
            return ""
        return "\n".join(_tail(p) for p in sorted((self.root / "log").glob("*"))
                         + [self.root / "munge" / "munged.log"])

    def squeue(self) -> str:
        return subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%i %T %r"],
                              capture_output=True, text=True).stdout

    # -- teardown -----------------------------------------------------------------------
    def stop(self) -> None:
        """Cancel what is left, stop the daemons we started, restore SLURM_CONF."""
        if any(name == "slurmctld" and p.poll() is None for name, p in self._procs):
            subprocess.run(["scancel", "--me"], capture_output=True)
            deadline = time.monotonic() + 30  # let the tasks unwind before slurmd goes
            while time.monotonic() < deadline and subprocess.run(
                    ["squeue", "-h", "--me"], capture_output=True, text=True).stdout.strip():
                time.sleep(0.5)
        for name, proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._procs.clear()
        if self.conf is not None:
            if self._old_conf is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = self._old_conf
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
