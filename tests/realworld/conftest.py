"""Fixtures of the real-world tier: the archfit binary, the cached wheels,
throwaway site-packages with them installed, and archfit runs (timed, and
listed at the end of the session)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import expectations
import fetch_wheels

REPO = Path(__file__).resolve().parents[2]

# (command line, seconds, exit code) of every archfit run; printed at the end.
RUNS: list[tuple[str, float, int]] = []
# (environment, GPU) -> archfit's verdicts, for the summary table.
VERDICTS: dict[tuple[str, str], dict[str, str]] = {}
# Path (in a site-packages) -> size, of every scanned file with device code.
SIZES: dict[str, int] = {}
_lock = threading.Lock()


@pytest.fixture(scope="session")
def archfit_bin() -> Path:
    path = Path(os.environ.get("ARCHFIT_BIN", REPO / "build" / "sdk" / "archfit"))
    if not os.access(path, os.X_OK):
        pytest.exit(f"no archfit binary at {path} (set ARCHFIT_BIN or run make build)", 2)
    return path


def short(arg: str) -> str:
    """A path as the summary shows it: a wheel's file name, a site's env/site-packages."""
    if "/" not in arg:
        return arg
    path = Path(arg)
    return f"{path.parent.name}/{path.name}" if path.name == "site-packages" else path.name


def run_archfit(archfit_bin: Path, *args: str) -> tuple[int, dict]:
    """archfit ARGS (which include --json): its exit code and parsed document."""
    start = time.monotonic()
    proc = subprocess.run([str(archfit_bin), *args], capture_output=True, text=True)
    seconds = time.monotonic() - start
    shown = " ".join(short(a) for a in args)
    with _lock:
        RUNS.append((shown, seconds, proc.returncode))
    if proc.returncode not in (0, 1):
        raise AssertionError(f"archfit {shown} exited {proc.returncode}: {proc.stderr}")
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="session")
def run(archfit_bin):
    return lambda *args: run_archfit(archfit_bin, *args)


@pytest.fixture(scope="session")
def wheels() -> dict[str, Path]:
    return fetch_wheels.fetch(log=lambda line: None)


@pytest.fixture(scope="session")
def sites(wheels):
    """Environment name -> a throwaway site-packages with its wheels installed
    (both installed at once; removed at the end of the session)."""
    root = Path(tempfile.mkdtemp(prefix="archfit-realworld-"))
    try:
        procs = {}
        for env, keys in expectations.ENVIRONMENTS.items():
            target = root / env / "site-packages"
            procs[env] = (target, subprocess.Popen(
                [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                 "--no-compile", "--disable-pip-version-check", "--quiet",
                 "--target", str(target), *(str(wheels[k]) for k in keys)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for env, (_, proc) in procs.items():
            output, _ = proc.communicate()
            if proc.returncode != 0:
                pytest.exit(f"pip install for {env} failed:\n{output}", 2)
        yield {env: target for env, (target, _) in procs.items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def site_scans(run, sites):
    """Environment name -> `archfit scan --json SITE` with each file's path
    relative to SITE ({relative path: file object})."""
    scans = {}
    for env, site in sites.items():
        rc, doc = run("scan", "--json", str(site))
        assert rc == 0, [f["error"] for f in doc["files"] if f["error"]]
        scans[env] = {str(Path(f["path"]).relative_to(site)): f for f in doc["files"]}
        for rel, f in scans[env].items():
            if f["images"]:
                SIZES[f"{env}: {rel}"] = f["size"]
    return scans


@pytest.fixture(scope="session")
def site_checks(run, sites):
    """(environment, GPU) -> (exit code, archfit.check/1 document) of
    `archfit check --site-packages SITE --gpu GPU --driver 570.86 --json`."""
    def check(job):
        env, gpu = job
        rc, doc = run("check", "--site-packages", str(sites[env]), "--gpu", gpu,
                      "--driver", expectations.DRIVER, "--json")
        with _lock:
            VERDICTS[(env, gpu)] = {c["name"]: c["verdict"] for c in doc["components"]}
            VERDICTS[(env, gpu)]["overall"] = f"{doc['verdict']} (exit {rc})"
        return job, (rc, doc)

    jobs = [(env, gpu) for env in expectations.ENVIRONMENTS for gpu in expectations.GPUS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(check, jobs))


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    if VERDICTS:
        terminalreporter.section("archfit's verdicts (archfit check --site-packages)")
        for (env, gpu), verdicts in sorted(VERDICTS.items()):
            cells = ", ".join(f"{name} {v}" for name, v in verdicts.items())
            write(f"{env:6} {gpu:9} {cells}")
    if SIZES:
        terminalreporter.section("scanned libraries with device code, MB")
        for name, size in sorted(SIZES.items()):
            write(f"{size / 1e6:9.1f}  {name}")
    if RUNS:
        terminalreporter.section("archfit runs, wall seconds")
        for shown, seconds, rc in RUNS:
            write(f"{seconds:7.2f}  exit {rc}  archfit {shown}")


# ---- the stack environments (stacks.py) ------------------------------------


def _install_stack(env: str, target: Path, wheels: dict) -> str | None:
    """pip installs the env's pinned wheels into target, as pip left them for
    a user (no dependency resolution: the pins are the resolution). Returns
    pip's output on failure."""
    shutil.rmtree(target, ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
         "--disable-pip-version-check", "--quiet", "--target", str(target),
         *(str(wheels[k]) for k in fetch_wheels.STACKS[env])],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return None if proc.returncode == 0 else proc.stdout


@pytest.fixture(scope="session")
def stack_wheels() -> dict[str, Path]:
    return fetch_wheels.fetch(log=lambda line: None, wheels=fetch_wheels.STACK_WHEELS)


@pytest.fixture(scope="session")
def stack_sites(stack_wheels):
    """Environment name -> its site-packages, installed once into the cache
    (cache/sites/<env>) and kept: a stamp of the wheels it holds says when to
    install again."""
    root = fetch_wheels.cache_dir() / "sites"
    sites, pending = {}, {}
    for env, keys in fetch_wheels.STACKS.items():
        target = root / env / "site-packages"
        stamp = root / env / "installed.txt"
        wanted = "\n".join(fetch_wheels.STACK_WHEELS[k].file for k in keys) + "\n"
        sites[env] = target
        if not (stamp.is_file() and stamp.read_text() == wanted and target.is_dir()):
            pending[env] = (target, stamp, wanted)
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = dict(zip(pending, pool.map(
            lambda env: _install_stack(env, pending[env][0], stack_wheels), pending)))
    for env, output in failures.items():
        if output is not None:
            pytest.exit(f"pip install for {env} failed:\n{output}", 2)
        target, stamp, wanted = pending[env]
        stamp.write_text(wanted)
    return sites
