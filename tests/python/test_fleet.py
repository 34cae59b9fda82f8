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
import stat
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
# Records each call, one per line; answers `show job` with the job's comment.
printf '%s\\n' "$*" >> "$FAKE_SCONTROL_LOG"
if [ "$1" = show ] && [ "$2" = job ]; then
  echo "JobId=$3 JobName=render UserId=artist(1000)"
  echo "   Priority=1 Comment=$FAKE_JOB_COMMENT"
fi
"""


@pytest.fixture
def slurm(tmp_path, archfit_cli):
    scontrol = tmp_path / "scontrol"
    scontrol.write_text(FAKE_SCONTROL)
    scontrol.chmod(scontrol.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "scontrol.log"

    def prolog(comment: str, gpu: str, via_environment: bool = False, archfit=archfit_cli):
        env = {
            "PATH": os.environ["PATH"],
            "SCONTROL": str(scontrol), "ARCHFIT": str(archfit),
            "ARCHFIT_CHECK_ARGS": f"--gpu {gpu} --driver 580.65.06",
            "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "gpu-node-7",
            "FAKE_SCONTROL_LOG": str(log), "FAKE_JOB_COMMENT": comment,
        }
        if via_environment:
            env["SLURM_JOB_COMMENT"] = comment
        done = run(["bash", REPO / "samples/slurm/prolog.sh"], env=env)
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return done, calls

    return prolog


def test_prolog_passes_a_job_whose_environment_fits(slurm, demo_site):
    # The comment as scontrol prints it: several words, archfit= among them.
    done, calls = slurm(f"render * archfit={demo_site} nightly", "sm_90")
    assert done.returncode == 0, done.stderr
    assert calls == ["show job 4242"]  # asked for the comment, changed nothing
    # The same job on an sm_120 node: found through scontrol too, and drained.
    done, calls = slurm(f"render * archfit={demo_site} nightly", "sm_120")
    assert done.returncode == 1, done.stderr
    assert calls[0] == "show job 4242" and calls[1].startswith("update NodeName=gpu-node-7 ")


def test_prolog_drains_the_node_with_the_reason_when_it_does_not(slurm, demo_site):
    done, calls = slurm(f"render archfit={demo_site} nightly", "sm_120", via_environment=True)
    assert done.returncode == 1, done.stderr
    assert len(calls) == 1, calls  # the comment came from SLURM_JOB_COMMENT
    assert calls[0].startswith("update NodeName=gpu-node-7 State=DRAIN Reason=archfit: ")
    reason = calls[0].split("Reason=", 1)[1]
    assert str(demo_site) in reason
    assert "fails" in reason and "torch" in reason, reason
    assert "draining gpu-node-7" in done.stderr


def test_prolog_passes_what_it_cannot_judge(slurm, tmp_path):
    # No archfit= in the comment: nothing to check.
    done, calls = slurm("just a comment", "sm_120")
    assert done.returncode == 0 and calls == ["show job 4242"]
    # A path not on this node: said, not blocked.
    done, calls = slurm(f"archfit={tmp_path / 'missing-env'}", "sm_120")
    assert done.returncode == 0 and "not on this node" in done.stderr
    # archfit itself cannot run: said, never drains.
    broken = tmp_path / "archfit-broken"
    broken.write_text("#!/bin/sh\necho 'archfit: cannot read the knowledge base' >&2\nexit 2\n")
    broken.chmod(0o755)
    done, calls = slurm(f"archfit={tmp_path}", "sm_120", archfit=broken)
    assert done.returncode == 0, done.stderr
    assert "could not check" in done.stderr and "knowledge base" in done.stderr
    assert not any(c.startswith("update") for c in calls)
