"""A fix command is code the user runs (issue 34, row 4a): names planted in an
environment — a METADATA Name holding $(…), a version holding backticks, a
dist-info folder whose name holds a newline, a venv whose path holds $(…) —
never run. `archfit check --plan` is written for such a venv, then the plan
is run by an unprivileged user with the venv's interpreter replaced by a
recorder: only the intended pip runs, and no planted command does."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def write_dist(site: Path, folder: str, name: str, version: str, files: dict[str, Path]):
    dist_info = site / folder
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = ""
    for relative, source in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, site / relative)
        record += f"{relative},,\n"
    (dist_info / "RECORD").write_text(record)


@pytest.fixture
def shared_dir():
    """A folder the unprivileged user can read (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="archfit-plan-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_planted_names_never_run_when_the_plan_does(archfit_cli, demo_site, shared_dir):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run the plan as another user")
    tmp_path = shared_dir
    markers = tmp_path / "markers"
    markers.mkdir(mode=0o777)
    markers.chmod(0o777)
    venv = tmp_path / f"v$(touch {markers}/venv-path)"
    site = venv / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    log = markers / "pip.log"
    python = venv / "bin" / "python"
    python.parent.mkdir()
    # The venv's interpreter, recording each call's words one per line.
    python.write_text(f'#!/bin/sh\nfor word in "$@"; do printf "%s\\n" "$word"; done >> {log}\n'
                      f'echo --- >> {log}\n')
    python.chmod(0o755)
    library = demo_site / "torch" / "lib" / "libtorch_cuda.so"  # no image for sm_120
    write_dist(site, "evil-1.0.dist-info", f"evil$(touch {markers}/name)", "1.0",
               {"evilpkg/_C.so": library})
    write_dist(site, "tick-1.0.dist-info", "tick", f"1.0`touch {markers}/version`",
               {"tickpkg/_C.so": library})
    write_dist(site, f"nl-1.0\n$(touch {markers}/folder).dist-info", "nl$(touch x)", "1.0",
               {"nlpkg/_C.so": library})
    write_dist(site, "fastops-1.2.dist-info", "fastops", "1.2", {"fastops/_C.so": library})
    for path in tmp_path.rglob("*"):
        path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    markers.chmod(0o777)

    plan = subprocess.run([str(archfit_cli), "check", "--plan", "--venv", str(venv),
                           "--gpu", "RTX 5090", "--driver", "580.88", "--no-index"],
                          capture_output=True, text=True)
    assert plan.returncode == 1, plan.stderr
    script = tmp_path / "plan.sh"
    script.write_text(plan.stdout)
    script.chmod(0o755)
    ran = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          "sh", str(script)], capture_output=True, text=True, cwd=markers,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    planted = sorted(p.name for p in markers.iterdir()
                     if p.name != "pip.log" and not p.name.startswith("archfit-backup-"))
    assert planted == [], (planted, plan.stdout)
    # The one valid package with no image is rebuilt from source; the others'
    # names or versions are refused, so no command names them.
    calls = log.read_text().split("---\n")[:-1] if log.exists() else []
    assert calls, (ran.stdout, ran.stderr, plan.stdout)
    words = [call.splitlines() for call in calls]
    # The backup (pip freeze), then installs only.
    assert words[0] == ["-m", "pip", "freeze"], words
    assert all(w[:3] == ["-m", "pip", "install"] for w in words[1:]), words
    assert any("fastops" in w for w in words), words
    for w in words:
        assert not any("touch" in word for word in w), w
