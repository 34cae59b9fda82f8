"""Beyond one machine (docs/fleet.md): the node labels `archfit check
--labels nfd` writes, read back with node-feature-discovery's rules; the
Kubernetes sample held to what archfit accepts and writes; the Slurm prolog
run as slurmd runs it, with a fake scontrol that records what it is asked.

NFD's local source reads each file in features.d: one feature per line,
`name[=value]` (no value means "true"), `#` lines are comments except the
`# +expiry-time=<RFC 3339>` directive, files whose names start with a dot are
passed over. Each label must pass Kubernetes' rules: a name part of at most 63
characters, alphanumeric at both ends with -_. between, after an optional DNS
subdomain prefix of at most 253 and a slash; a value empty or of the same
form. The parser below is written from those rules, not from archfit's code.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def nfd_labels(text: str) -> tuple[dict[str, str], datetime.datetime | None]:
    """The labels NFD's local source would make of a feature file, and its
    expiry; AssertionError for anything NFD or Kubernetes would refuse."""
    labels: dict[str, str] = {}
    expiry = None
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +expiry-time="):
                expiry = datetime.datetime.strptime(line.split("=", 1)[1], "%Y-%m-%dT%H:%M:%SZ")
            continue
        name, _, value = line.partition("=")
        value = value if "=" in line else "true"
        prefix, slash, part = name.rpartition("/")
        assert NAME_PART.match(part), f"label name {name!r}"
        if slash:
            assert len(prefix) <= 253 and all(DNS_LABEL.match(p) for p in prefix.split(".")), name
        assert value == "" or NAME_PART.match(value), f"{name}: value {value!r}"
        assert name not in labels, f"{name} twice"
        labels[name] = value
    return labels, expiry


def run(command: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=120,
                          **kwargs)


def write_config(path: Path, environments: dict[str, str]) -> Path:
    lines = ["schema: archfit.fleet/1", "environments:"]
    for name, site in environments.items():
        lines += [f"  - name: {name}", f"    site_packages: {site}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_labels_written_for_nfd_read_back_with_its_rules(archfit_cli, demo_site, tmp_path):
    config = write_config(tmp_path / "fleet.yaml",
                          {"demo": str(demo_site), "gone": str(tmp_path / "no-such-site")})
    features = tmp_path / "features.d"
    features.mkdir()
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", config,
                "--labels-output", features / "archfit", "--labels-ttl", "900",
                "--gpu", "RTX 5090", "--driver", "580.65.06"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert [p.name for p in features.iterdir()] == ["archfit"]  # no temporary left beside it
    text = (features / "archfit").read_text()
    labels, expiry = nfd_labels(text)
    assert labels["archfit.dev/gpus"] == "1"
    assert labels["archfit.dev/sm"] == "120"
    assert labels["archfit.dev/sm.120"] == "true"
    assert labels["archfit.dev/driver"] == "580.65.06"
    assert labels["archfit.dev/driver.major"] == "580"
    # torch 2.5.1+cu124 with SASS up to sm_90 and no PTX: nothing runs on sm_120.
    assert labels["archfit.dev/fits.demo"] == "false"
    # An environment the check could not read gets no label, only a comment.
    assert "archfit.dev/fits.gone" not in labels
    assert re.search(r"^# gone: .*no-such-site", text, re.M), text
    assert expiry is not None
    assert 890 <= (expiry - before).total_seconds() <= 960, (before, expiry)

    # On an H100 (sm_90) the same environment fits; printed to stdout this time.
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", config,
                "--gpu", "H100", "--driver", "580.65.06"])
    assert done.returncode == 0, done.stderr
    labels, expiry = nfd_labels(done.stdout)
    assert labels["archfit.dev/fits.demo"] == "true"
    assert labels["archfit.dev/sm"] == "90"
    assert expiry is None


def test_a_node_with_two_archs_is_labelled_by_each(archfit_cli):
    done = run([archfit_cli, "check", "--labels", "nfd", "--gpu", "RTX 5090", "--gpu", "RTX 4090"])
    assert done.returncode == 0, done.stderr
    labels, _ = nfd_labels(done.stdout)
    assert labels["archfit.dev/sm"] == "mixed"
    assert labels["archfit.dev/sm.120"] == labels["archfit.dev/sm.89"] == "true"
    assert labels["archfit.dev/gpus"] == "2"


@pytest.mark.parametrize("arguments, message", [
    (["--labels", "slurm"], "the one format known is nfd"),
    (["--labels", "nfd", "--site-packages", "/tmp"], "name the environments in --labels-config"),
    (["--labels-ttl", "60"], "go with --labels nfd"),
])
def test_labels_misused_say_what_to_do(archfit_cli, arguments, message):
    done = run([archfit_cli, "check", "--gpu", "RTX 5090", *arguments])
    assert done.returncode == 2
    assert message in done.stderr, done.stderr


def test_a_bad_config_is_refused_naming_its_line(archfit_cli, tmp_path):
    config = tmp_path / "fleet.yaml"
    config.write_text("schema: archfit.fleet/1\nenvironments:\n  - name: comfy ui\n    venv: /v\n")
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", config,
                "--gpu", "RTX 5090"])
    assert done.returncode == 2
    assert f"{config}:3: environments[0].name" in done.stderr, done.stderr


def test_a_feature_file_nfd_would_drop_is_not_written(archfit_cli, tmp_path):
    # NFD's local source passes over a feature file above 65,536 bytes whole
    # (MaxFeatureFileSize in its source/local/local.go), the node's labels
    # with it: archfit refuses to write one, says how to split, and leaves
    # the old file as it was. 400 environments not on this node: a comment
    # line each, about 180 bytes.
    names = {f"env-{i:03d}-" + "x" * 40: str(tmp_path / f"missing-{i:03d}" / ("y" * 60))
             for i in range(400)}
    config = write_config(tmp_path / "fleet.yaml", names)
    features = tmp_path / "features.d"
    features.mkdir()
    (features / "archfit").write_text("archfit.dev/version=old\n")
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", config,
                "--labels-output", features / "archfit", "--gpu", "RTX 5090"])
    assert done.returncode == 2, done.stderr
    assert "over the 65536 node-feature-discovery reads" in done.stderr, done.stderr
    assert "Split the 400 environments of --labels-config into files of about" in done.stderr
    assert (features / "archfit").read_text() == "archfit.dev/version=old\n"
    assert [p.name for p in features.iterdir()] == ["archfit"]
    # A few fit, and the file is written.
    few = write_config(tmp_path / "few.yaml", dict(list(names.items())[:50]))
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", few,
                "--labels-output", features / "archfit", "--gpu", "RTX 5090"])
    assert done.returncode == 0, done.stderr
    assert len((features / "archfit").read_bytes()) <= 65536


def test_labels_output_is_written_only_where_no_one_else_can_write_and_never_through_a_link(
        archfit_cli, tmp_path):
    features = tmp_path / "features.d"
    features.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("not archfit's\n")
    # A link planted under the output's name is replaced, never followed.
    (features / "archfit").symlink_to(victim)
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-output", features / "archfit",
                "--gpu", "RTX 5090"])
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "not archfit's\n"
    assert not (features / "archfit").is_symlink()
    assert "archfit.dev/sm=120" in (features / "archfit").read_text()
    # A folder others can write to is refused: they could plant anything there.
    features.chmod(0o777)
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-output", features / "archfit",
                "--gpu", "RTX 5090"])
    assert done.returncode == 2
    assert f"refusing to write in {features}" in done.stderr, done.stderr
    features.chmod(0o755)


@pytest.mark.skipif(os.geteuid() != 0, reason="the rule holds for root only: run as root")
def test_as_root_a_fleet_python_another_user_could_replace_is_not_run(archfit_cli, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    marker = tmp_path / "ran"
    python = theirs / "python"
    python.write_text(f"#!/bin/sh\ntouch {marker}\necho /usr/lib/python3/dist-packages\n")
    python.chmod(0o755)
    os.chown(theirs, 65534, 65534)
    os.chown(python, 65534, 65534)
    config = tmp_path / "fleet.yaml"
    config.write_text(f"schema: archfit.fleet/1\nenvironments:\n  - name: theirs\n"
                      f"    python: {python}\n")
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", config,
                "--gpu", "RTX 5090"])
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "root ran an interpreter another user owns"
    assert "archfit.dev/fits.theirs" not in done.stdout
    assert re.search(r"^# theirs: .*refusing to run the Python at .* as root", done.stdout, re.M), \
        done.stdout


# ---- the Kubernetes sample --------------------------------------------------------------

def test_the_kubernetes_sample_is_what_archfit_accepts_and_selects_what_it_writes(
        archfit_cli, tmp_path):
    documents = list(yaml.safe_load_all((REPO / "samples/kubernetes/archfit-labels.yaml").read_text()))
    by_kind = {d["kind"]: d for d in documents}
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(by_kind["ConfigMap"]["data"]["fleet.yaml"])

    spec = by_kind["DaemonSet"]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    container = spec["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert volumes["features-d"]["hostPath"]["path"] == \
        "/etc/kubernetes/node-feature-discovery/features.d"
    script = container["args"][0]
    assert f"--labels-output {mounts['features-d']}/archfit" in script
    assert f"--labels-config {mounts['fleet']}/fleet.yaml" in script

    # The sample's config, as archfit reads it (the shared environments are
    # not here: every one is named in a comment, none fails to parse).
    done = run([archfit_cli, "check", "--labels", "nfd", "--labels-config", fleet,
                "--gpu", "RTX 5090", "--driver", "580.65.06"])
    assert done.returncode == 0, done.stderr
    names = [e["name"] for e in yaml.safe_load(fleet.read_text())["environments"]]
    for name in names:
        assert re.search(rf"^# {re.escape(name)}: ", done.stdout, re.M), done.stdout

    # What the pod selects is a label the DaemonSet's config makes.
    pod = yaml.safe_load((REPO / "samples/kubernetes/pod-on-fitting-node.yaml").read_text())
    for key, value in pod["spec"]["nodeSelector"].items():
        assert key.startswith("archfit.dev/fits.")
        assert key.removeprefix("archfit.dev/fits.") in names
        assert value == "true"


# ---- the Slurm prolog -------------------------------------------------------------------

FAKE_SCONTROL = """#!/bin/sh
# Records each call, one per line; answers `show job` with the job's comment;
# `requeuehold` fails for a job that cannot be requeued.
printf '%s\\n' "$*" >> "$FAKE_SCONTROL_LOG"
if [ "$1" = -o ] && [ "$2" = show ] && [ "$3" = job ]; then
  # One line a record; a task of an array names the array and its index.
  array=""
  [ -n "${FAKE_ARRAY_TASK:-}" ] && array=" ArrayJobId=$4 ArrayTaskId=$FAKE_ARRAY_TASK"
  echo "JobId=$4$array JobName=render UserId=artist(1000) Priority=1 Comment=$FAKE_JOB_COMMENT"
elif [ "$1" = show ] && [ "$2" = job ]; then
  echo "JobId=$3 JobName=render UserId=artist(1000)"
  echo "   Priority=1 Comment=$FAKE_JOB_COMMENT"
fi
if [ "$1" = requeuehold ] && [ -n "${FAKE_NO_REQUEUE:-}" ]; then
  echo "Requested operation is presently disabled for job $2" >&2
  exit 1
fi
"""

FAKE_SCANCEL = """#!/bin/sh
printf 'scancel %s\\n' "$*" >> "$FAKE_SCONTROL_LOG"
"""


def prolog_config(path: Path, **settings) -> Path:
    """The prolog's one settings file (bash), as an administrator writes it."""
    lines = []
    for name, value in settings.items():
        if isinstance(value, (list, tuple)):
            lines.append(f"{name}=(" + " ".join(f'"{v}"' for v in value) + ")")
        else:
            lines.append(f'{name}="{value}"')
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def slurm(tmp_path, archfit_cli, demo_site):
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, text in (("scontrol", FAKE_SCONTROL), ("scancel", FAKE_SCANCEL)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    log = tmp_path / "scontrol.log"
    config = tmp_path / "slurm-prolog.conf"

    def prolog(comment: str, gpu: str | None, via_environment: bool = False, archfit=archfit_cli,
               allowed=(demo_site.parent.parent,), extra_env=None, **settings):
        check_args = ["--gpu", gpu, "--driver", "580.65.06"] if gpu else []
        prolog_config(config, ARCHFIT=archfit, SCONTROL=tools / "scontrol",
                      SCANCEL=tools / "scancel", ARCHFIT_ALLOWED_ROOTS=list(allowed),
                      ARCHFIT_CHECK_ARGS=check_args, **settings)
        # As slurmd starts a prolog: Slurm's variables and nothing else.
        env = {
            "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "gpu-node-7",
            "ARCHFIT_PROLOG_CONFIG": str(config),
            "FAKE_SCONTROL_LOG": str(log), "FAKE_JOB_COMMENT": comment,
            **(extra_env or {}),
        }
        if via_environment:
            env["SLURM_JOB_COMMENT"] = comment
        done = run(["/bin/bash", REPO / "samples/slurm/prolog.sh"], env=env)
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return done, calls

    return prolog


def held(calls: list[str], job: str = "4242") -> str:
    """The reason the prolog held `job` with; AssertionError when it did not."""
    assert any(c == f"requeuehold {job}" for c in calls), calls
    comment = [c for c in calls if c.startswith(f"update JobId={job} AdminComment=")]
    assert len(comment) == 1, calls
    return comment[0].split("AdminComment=", 1)[1]


def test_prolog_passes_a_job_whose_environment_fits(slurm, demo_site):
    # The comment as scontrol prints it: several words, archfit= among them.
    done, calls = slurm(f"render * archfit={demo_site} nightly", "sm_90")
    assert done.returncode == 0, done.stderr
    assert calls == ["show job 4242"]  # asked for the comment, changed nothing


def test_prolog_holds_the_job_not_the_node_when_it_does_not_fit(slurm, demo_site):
    # Issue 34 row 9: one user's unfit environment must not drain the node
    # for everyone: the job is held, its reason in its own record.
    done, calls = slurm(f"render archfit={demo_site} nightly", "sm_120", via_environment=True)
    assert done.returncode == 0, done.stderr
    assert not any(c.startswith("update NodeName") for c in calls), calls
    reason = held(calls)
    assert reason.startswith(f"archfit: {demo_site}: fails: "), reason
    assert "torch" in reason, reason
    assert "holding the job" in done.stderr
    # A job that cannot be requeued is cancelled instead: it must not start.
    done, calls = slurm(f"archfit={demo_site}", "sm_120", via_environment=True,
                        extra_env={"FAKE_NO_REQUEUE": "1"})
    assert done.returncode == 0, done.stderr
    assert calls[-1] == "scancel 4242", calls
    # A task of an array is held alone, never the whole array: its JobId may
    # be the array's, so it is named ARRAY_TASK.
    done, calls = slurm(f"archfit={demo_site}", "sm_120", via_environment=True,
                        extra_env={"FAKE_ARRAY_TASK": "3"})
    assert "fails" in held(calls, "4242_3")
    assert "requeuehold 4242" not in calls


def test_prolog_runs_only_what_the_administrator_allows(slurm, demo_site, tmp_path):
    # Issue 34 row 10: a job names a path under an allowed folder, nothing
    # else; never an option, never the whole machine.
    for named in ("/", "--python=/tmp/x.py", "relative/env", str(tmp_path)):
        done, calls = slurm(f"archfit={named}", "sm_120", via_environment=True)
        assert done.returncode == 0, (named, done.stderr)
        reason = held(calls)
        assert "not under a folder this cluster checks" in reason or "not an absolute path" in reason, \
            (named, reason)
        assert len(reason) < 300, reason  # a sentence, never a list of files
    # Two environments in one comment: neither wins silently.
    done, calls = slurm(f"archfit={demo_site} archfit=/other", "sm_120", via_environment=True)
    assert "names 2 environments" in held(calls)
    # A link out of an allowed folder is judged where it leads.
    link = demo_site.parent.parent / "escape-link"
    link.symlink_to("/")
    try:
        done, calls = slurm(f"archfit={link}", "sm_120", via_environment=True)
        assert "not under a folder this cluster checks" in held(calls)
    finally:
        link.unlink()


def test_prolog_takes_names_with_spaces_and_settings_only_from_its_file(
        slurm, demo_site, tmp_path):
    # Issue 34 row 12: a GPU name with a space, a path with one.
    spaced = tmp_path / "envs" / "my env" / "site-packages"
    shutil.copytree(demo_site, spaced, symlinks=True)
    done, calls = slurm(f'render archfit="{spaced}" nightly', "RTX 5090", via_environment=True,
                        allowed=(tmp_path / "envs",))
    assert done.returncode == 0, done.stderr
    assert "fails" in held(calls)
    # What slurmd's environment holds never reaches the prolog's settings.
    done, calls = slurm(f"archfit={demo_site}", "sm_90", via_environment=True,
                        extra_env={"ARCHFIT": "/bin/false", "ARCHFIT_CHECK_ARGS": "--gpu sm_120"})
    assert done.returncode == 0 and not any(c.startswith("requeuehold") for c in calls), calls
    # A settings file someone else can write to is not read (root sources it).
    config = tmp_path / "slurm-prolog.conf"
    done, calls = slurm(f"archfit={demo_site}", "sm_120", via_environment=True)
    assert "requeuehold 4242" in calls
    os.chmod(config, 0o666)
    env = {"SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "n", "ARCHFIT_PROLOG_CONFIG": str(config),
           "SLURM_JOB_COMMENT": f"archfit={demo_site}"}
    done = run(["/bin/bash", REPO / "samples/slurm/prolog.sh"], env=env)
    assert done.returncode == 0 and f"not reading {config}" in done.stderr, done.stderr


def test_prolog_has_a_time_limit_and_drains_only_for_a_node_fault(slurm, demo_site, tmp_path):
    # Issue 34 row 11: a hung archfit does not hold the job for the stall.
    hung = tmp_path / "archfit-hung"
    hung.write_text("#!/bin/sh\nexec sleep 600\n")
    hung.chmod(0o755)
    started = datetime.datetime.now()
    done, calls = slurm(f"archfit={demo_site}", "sm_120", via_environment=True, archfit=hung,
                        ARCHFIT_TIMEOUT="2")
    took = (datetime.datetime.now() - started).total_seconds()
    assert done.returncode == 0 and took < 15, (took, done.stderr)
    assert "did not finish checking" in done.stderr and calls == []
    # No GPU named and none found (this machine has no driver): the node's
    # fault, so the node is drained, with archfit's reason.
    done, calls = slurm(f"archfit={demo_site}", None, via_environment=True)
    assert done.returncode == 1, done.stderr
    assert len(calls) == 1 and calls[0].startswith(
        "update NodeName=gpu-node-7 State=DRAIN Reason=archfit: unknown: no GPU"), calls


@pytest.mark.skipif(os.geteuid() != 0, reason="the prolog changes user only as root: run as root")
def test_prolog_reads_with_the_job_users_rights(slurm, demo_site, tmp_path):
    # Issue 34 row 10: root reads nothing for a job its user could not.
    private = tmp_path / "private"
    shutil.copytree(demo_site, private / "site-packages", symlinks=True)
    private.chmod(0o700)
    for uid, judged in ((0, True), (65534, False)):
        done, calls = slurm(f"archfit={private / 'site-packages'}", "sm_120",
                            via_environment=True, allowed=(tmp_path,),
                            extra_env={"SLURM_JOB_UID": str(uid), "SLURM_JOB_GID": str(uid)})
        assert done.returncode == 0, done.stderr
        if judged:  # root's own job: read, and held
            assert "fails" in held(calls)
        else:  # nobody cannot list it: not judged, the job starts (and fails to import)
            assert not any(c.startswith("requeuehold") for c in calls), calls
            assert "could not judge" in done.stderr, done.stderr


def test_prolog_passes_what_it_cannot_judge(slurm, tmp_path):
    # No archfit= in the comment: nothing to check.
    done, calls = slurm("just a comment", "sm_120")
    assert done.returncode == 0 and calls == ["show job 4242"]
    # A path not on this node: said, not blocked.
    done, calls = slurm(f"archfit={tmp_path / 'missing-env'}", "sm_120", allowed=(tmp_path,))
    assert done.returncode == 0 and "not on this node" in done.stderr
    # archfit itself cannot run: said, with its message, never drains.
    broken = tmp_path / "archfit-broken"
    broken.write_text("#!/bin/sh\necho 'archfit: cannot read the knowledge base' >&2\nexit 2\n")
    broken.chmod(0o755)
    done, calls = slurm(f"archfit={tmp_path}", "sm_120", archfit=broken, allowed=(tmp_path,))
    assert done.returncode == 0, done.stderr
    assert "could not judge" in done.stderr and "knowledge base" in done.stderr
    assert not any(c.startswith("update") for c in calls)
