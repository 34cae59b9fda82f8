"""The Slurm prolog (samples/slurm/prolog.sh) under a real Slurm: Debian's
slurmctld and slurmd (22.05) and munge, one node, started here for the
module and stopped after it, real `sbatch` jobs from an ordinary user. What
test_fleet.py checks against a fake scontrol, checked where Slurm itself
decides: a job whose environment does not fit is held as a job with the
reason in its own record, the node stays up for everyone else, a 6-task
array of such jobs drains nothing, and a fitting job runs. It prints what
the prolog cost, fits and fails.

Slow tier (`make test-slow`, which installs the packages); needs root to
start the daemons, and skips, saying so, without it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
USER = "archfit-artist"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(command: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=120,
                          **kwargs)


class Cluster:
    def __init__(self, root: Path, archfit: Path):
        self.root = root
        self.archfit = archfit
        self.env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
        self.node = socket.gethostname().split(".")[0]
        self.config = root / "slurm-prolog.conf"
        self.timings = root / "prolog-times"

    def configure_prolog(self, check_args: list[str], allowed: list[Path]) -> None:
        """The prolog's settings file, as an administrator writes it."""
        quoted = " ".join(f'"{a}"' for a in check_args)
        roots = " ".join(f'"{a}"' for a in allowed)
        self.config.write_text(f'ARCHFIT="{self.archfit}"\nARCHFIT_CHECK_ARGS=({quoted})\n'
                               f"ARCHFIT_ALLOWED_ROOTS=({roots})\nARCHFIT_TIMEOUT=60\n")

    def submit(self, comment: str, *extra: str) -> str:
        done = run(["runuser", "-u", USER, "--", "sbatch", "--parsable", "--chdir=/tmp",
                    f"--output={self.root}/jobs/out.%j", f"--comment={comment}", *extra,
                    f"--wrap=echo ran > {self.root}/jobs/ran.$SLURM_JOB_ID"], env=self.env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().split(";")[0]

    def job(self, job_id: str) -> dict[str, str]:
        text = run(["scontrol", "-o", "show", "job", job_id], env=self.env).stdout
        fields = {}
        for word in text.split():
            name, _, value = word.partition("=")
            fields.setdefault(name, value)
        # AdminComment holds spaces: the rest of its line up to the next field.
        if "AdminComment=" in text:
            fields["AdminComment"] = text.split("AdminComment=", 1)[1].split(" Comment=")[0]
            fields["AdminComment"] = fields["AdminComment"].split(" CPUs/Task=")[0].strip()
        return fields

    def wait(self, job_id: str, states: set[str], seconds: float = 60) -> dict[str, str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            fields = self.job(job_id)
            if fields.get("JobState") in states and (fields.get("JobState") != "PENDING"
                                                    or "held" in fields.get("Reason", "").lower()):
                return fields
            time.sleep(0.2)
        pytest.fail(f"job {job_id} not in {states} within {seconds} s: {self.job(job_id)}")

    def node_state(self) -> str:
        return run(["sinfo", "-h", "-n", self.node, "-o", "%T|%E"], env=self.env).stdout.strip()


@pytest.fixture(scope="module")
def cluster(archfit_cli):
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)}: `make test-slow` installs slurmctld, slurmd, "
                    "slurm-client and munge")
    if os.geteuid() != 0:
        pytest.skip("starting slurmctld, slurmd and munged needs root")
    if run(["id", USER]).returncode != 0:
        assert run(["useradd", "--system", "--no-create-home", USER]).returncode == 0
    root = Path(f"/tmp/archfit-slurm-{os.getpid()}")
    shutil.rmtree(root, ignore_errors=True)
    for sub in ("state", "spool", "log", "run", "jobs"):
        (root / sub).mkdir(parents=True)
    root.chmod(0o755)
    (root / "jobs").chmod(0o1777)
    cluster = Cluster(root, archfit_cli)
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    # Slurm gives a prolog no environment of its own: a wrapper names the
    # settings file, so this test never reads /etc/archfit.
    wrapper = root / "prolog.sh"
    wrapper.write_text(
        "#!/bin/bash\n"
        f'start=$(date +%s.%N)\nARCHFIT_PROLOG_CONFIG={cluster.config} /bin/bash '
        f'{REPO}/samples/slurm/prolog.sh\nstatus=$?\n'
        f'echo "$SLURM_JOB_ID $start $(date +%s.%N) $status" >> {cluster.timings}\n'
        "exit $status\n")
    wrapper.chmod(0o755)
    socket_path = root / "run" / "munge.socket"
    (root / "slurm.conf").write_text(f"""ClusterName=archfit-test
SlurmctldHost={cluster.node}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket={socket_path}
CryptoType=crypto/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd.pid
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
Prolog={wrapper}
PrologFlags=Alloc
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
NodeName={cluster.node} CPUs=1 State=UNKNOWN
PartitionName=gpu Nodes={cluster.node} Default=YES MaxTime=INFINITE State=UP
""")
    started = [
        run(["munged", "--force", f"--key-file={key}", f"--socket={socket_path}",
             f"--pid-file={root}/run/munged.pid", f"--log-file={root}/log/munged.log",
             f"--seed-file={root}/run/munge.seed"]),
        run(["slurmctld", "-i"], env=cluster.env),
    ]
    time.sleep(1)
    started.append(run(["slurmd"], env=cluster.env))
    for done in started:
        assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 30
    while "idle" not in cluster.node_state():
        assert time.monotonic() < deadline, cluster.node_state()
        time.sleep(0.3)
    yield cluster
    run(["scancel", "--user", USER], env=cluster.env)
    for pid_file in ("slurmd.pid", "slurmctld.pid", "munged.pid"):
        try:
            os.kill(int((root / "run" / pid_file).read_text()), 15)
        except (OSError, ValueError):
            pass
    time.sleep(1)
    shutil.rmtree(root, ignore_errors=True)


def prolog_seconds(cluster: Cluster, job_ids: list[str]) -> list[float]:
    times = []
    for line in cluster.timings.read_text().splitlines():
        job, start, end, _ = line.split()
        if job in job_ids:
            times.append(float(end) - float(start))
    return times


def test_a_real_slurm_runs_a_fitting_job_and_holds_an_unfit_one_without_draining(
        cluster, demo_site, capsys):
    allowed = [demo_site.parent.parent]
    # On an sm_90 node the demo environment (torch 2.5.1+cu124) fits.
    cluster.configure_prolog(["--gpu", "sm_90", "--driver", "580.65.06"], allowed)
    fits = cluster.submit(f"render archfit={demo_site}")
    assert cluster.wait(fits, {"COMPLETED", "FAILED"})["JobState"] == "COMPLETED"
    assert (cluster.root / "jobs" / f"ran.{fits}").exists()

    # On an sm_120 node it does not: the job is held with the reason, never
    # runs, and the node stays up.
    cluster.configure_prolog(["--gpu", "sm_120", "--driver", "580.65.06"], allowed)
    unfit = cluster.submit(f"render archfit={demo_site}")
    job = cluster.wait(unfit, {"PENDING"})
    assert job["Reason"] == "job_requeued_in_held_state", job
    assert job["AdminComment"].startswith(f"archfit: {demo_site}: fails: "), job
    assert not (cluster.root / "jobs" / f"ran.{unfit}").exists()
    assert cluster.node_state().startswith("idle"), cluster.node_state()

    # Issue 34 row 9: a 6-task array of unfit jobs drains nothing; another
    # user's fitting job (a path the config allows, here named with no
    # environment to check) still runs on the node.
    array = cluster.submit(f"archfit={demo_site}", "--array=1-6")
    deadline = time.monotonic() + 90
    while True:
        squeue = run(["squeue", "-h", "-j", array, "-o", "%i|%r"], env=cluster.env).stdout
        held = [line for line in squeue.splitlines() if "held" in line.lower()]
        if len(held) == 6:
            break
        assert time.monotonic() < deadline, squeue
        time.sleep(0.5)
    assert cluster.node_state().startswith("idle"), cluster.node_state()
    other = cluster.submit("no environment named")
    assert cluster.wait(other, {"COMPLETED", "FAILED"})["JobState"] == "COMPLETED"

    fit_times = prolog_seconds(cluster, [fits, other])
    fail_times = prolog_seconds(cluster, [unfit])
    with capsys.disabled():  # a figure for the note
        print(f"\nprolog under slurmd 22.05: fits {fit_times[0] * 1000:.0f} ms, "
              f"nothing named {fit_times[1] * 1000:.0f} ms, "
              f"fails (check, AdminComment, requeuehold) {fail_times[0] * 1000:.0f} ms")


def test_a_real_slurm_refuses_what_the_config_does_not_allow(cluster, demo_site, capsys):
    cluster.configure_prolog(["--gpu", "sm_120"], [demo_site.parent.parent])
    job_id = cluster.submit("archfit=/")
    job = cluster.wait(job_id, {"PENDING"})
    assert "not under a folder this cluster checks" in job["AdminComment"], job
    assert cluster.node_state().startswith("idle")
    times = prolog_seconds(cluster, [job_id])
    with capsys.disabled():
        print(f"\nprolog refusing archfit=/ without a scan: {times[0] * 1000:.0f} ms")
    assert times[0] < 5, "refused without walking /"


def test_a_real_slurm_drains_the_node_for_a_node_fault_with_archfits_reason(cluster, demo_site):
    # Last in this file: it leaves the node drained. No GPU named and none
    # found (this machine has no driver): the node's fault, not the job's.
    cluster.configure_prolog([], [demo_site.parent.parent])
    job_id = cluster.submit(f"archfit={demo_site}")
    deadline = time.monotonic() + 60
    while "drain" not in cluster.node_state():
        assert time.monotonic() < deadline, cluster.node_state()
        time.sleep(0.3)
    state, _, reason = cluster.node_state().partition("|")
    assert state.startswith("drain"), state
    assert reason.startswith("archfit: unknown: no GPU to judge against"), reason
    assert not (cluster.root / "jobs" / f"ran.{job_id}").exists()
