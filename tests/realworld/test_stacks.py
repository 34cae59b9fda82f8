"""`archfit check --site-packages SITE --gpu GPU --driver DRIVER --json` on
whole environments as pip installs them from PyPI (stacks.py): the verdict of
every stack on seven GPUs and three drivers, the fix a user runs first, and
what a stock install must never be told."""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import conftest
import pypi
from stacks import (
    ALTERNATIVES,
    BINARY_ONLY_PREFIXES,
    DRIVER_UPDATES,
    DRIVERS,
    ENV_STACKS,
    FAILURES,
    FIRST_COMMANDS,
    GPUS,
    JETSON,
    TORCH_OF,
    expected_verdict,
)

ENVS = sorted(ENV_STACKS)
CELLS = list(itertools.product(ENVS, GPUS, DRIVERS))


@pytest.fixture(scope="session")
def stack_checks(archfit_bin, stack_sites):
    """(env, gpu, driver) -> (exit code, archfit.check/1 document), and the
    same for the Jetson on the newest driver."""
    def check(job):
        env, gpu, driver = job
        start = time.monotonic()
        proc = subprocess.run(
            [str(archfit_bin), "check", "--no-plugins", "--json", "--gpu", gpu, "--driver", driver,
             "--site-packages", str(stack_sites[env])], capture_output=True, text=True)
        with conftest._lock:
            conftest.RUNS.append((f"check --gpu '{gpu}' --driver {driver} {env}",
                                  time.monotonic() - start, proc.returncode))
        assert proc.returncode in (0, 1), proc.stderr
        return job, (proc.returncode, json.loads(proc.stdout))

    jobs = CELLS + [(env, JETSON, DRIVERS[-1]) for env in ENVS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(check, jobs))


def stacks_of(doc):
    return {s["name"]: s for s in doc["stacks"]}


@pytest.mark.parametrize("env,gpu,driver", CELLS)
def test_every_stack_has_the_verdict_the_facts_give(stack_checks, env, gpu, driver):
    rc, doc = stack_checks[(env, gpu, driver)]
    found = stacks_of(doc)
    assert set(found) == set(ENV_STACKS[env]), sorted(found)
    for name in ENV_STACKS[env]:
        expected = expected_verdict(env, name, gpu, driver)
        assert found[name]["verdict"] == expected, (name, found[name]["evidence"])
        assert found[name]["blocks"] == (expected in FAILURES), name
    fails = any(expected_verdict(env, n, gpu, driver) in FAILURES for n in ENV_STACKS[env])
    assert (doc["verdict"], rc) == (("fails", 1) if fails else ("fits", 0)), doc["summary"]


@pytest.mark.parametrize("env", ENVS)
def test_x86_wheels_on_a_jetson_are_the_wrong_platform(stack_checks, env):
    rc, doc = stack_checks[(env, JETSON, DRIVERS[-1])]
    assert rc == 1
    assert {s["verdict"] for s in doc["stacks"]} == {"wrong-platform"}, doc["summary"]
    assert doc["devices"][0]["machine"] == "aarch64"


# The issue's false failure: a stock torch 2.8.0 or 2.15.0 install fits on
# H100, RTX 4090 and RTX 5090 with driver 580, whatever nvidia-cufft's
# libcufftw holds, because nothing links it.
@pytest.mark.parametrize("env", ["torch-2.8.0", "torch-2.15.0"])
@pytest.mark.parametrize("gpu", ["H100", "RTX 4090", "RTX 5090"])
def test_a_stock_install_fits_and_libcufftw_is_never_weighed(stack_checks, env, gpu):
    _, doc = stack_checks[(env, gpu, "580.65.06")]
    torch = stacks_of(doc)["PyTorch"]
    assert torch["verdict"] in ("native", "ptx-jit") and not torch["blocks"], torch["evidence"]
    assert torch["version"] == TORCH_OF[env]
    cufft = [c for c in doc["components"] if c["name"].startswith("nvidia-cufft")]
    assert cufft, [c["name"] for c in doc["components"]]
    (cufftw,) = [b for b in cufft[0]["binaries"] if "libcufftw" in b["path"]]
    assert cufftw["reach"] in ("unreached", "feature"), cufftw
    assert cufftw["blocks"] is False
    assert not cufft[0]["blocks"]


# torch 2.5.1's own cuSPARSELt (2:4 sparsity, which exists on sm_80 and
# newer) has PTX of ISA 8.5 only for a V100: a 550 driver (ISA 8.4) could not
# compile it, but a V100 has no 2:4 sparsity to lose. It fails nothing and
# needs no note. Where a feature the GPU has cannot run (NCCL 2.21.5 has no
# sm_120 image), the stack runs with a note.
def test_a_feature_library_never_fails_a_stack_and_is_a_note_where_the_feature_exists(stack_checks):
    _, doc = stack_checks[("torch-2.5.1", "V100", "550.144.03")]
    torch = stacks_of(doc)["PyTorch"]
    assert torch["verdict"] == "native" and not torch["blocks"]
    assert not [n for n in torch["notes"] if "2:4" in n["feature"]], torch["notes"]
    (lt,) = [b for c in doc["components"] for b in c["binaries"] if "libcusparseLt" in b["path"]]
    assert (lt["verdict"], lt["reach"], lt["blocks"]) == ("ptx-too-new-for-driver", "feature", False)

    _, doc = stack_checks[("torch-2.5.1", "RTX 5090", "570.86.16")]
    notes = stacks_of(doc)["PyTorch"]["notes"]
    nccl = [n for n in notes if "libnccl" in n["library"]]
    assert nccl and nccl[0]["verdict"] == "no-image", notes
    assert "multi-GPU collectives" in nccl[0]["feature"]


@pytest.mark.parametrize("env,gpu,driver", CELLS)
def test_the_first_fix_is_the_stacks_and_never_a_source_build_of_a_binary(stack_checks, env,
                                                                           gpu, driver):
    _, doc = stack_checks[(env, gpu, driver)]
    failing = [s for s in doc["stacks"] if s["blocks"]]
    if not failing:
        assert doc["fix"] is None
        return
    assert doc["fix"] == failing[0]["fix"]
    if stacks_of(doc)["PyTorch" if "PyTorch" in ENV_STACKS[env] else ENV_STACKS[env][0]]["blocks"]:
        assert failing[0]["name"] == ENV_STACKS[env][0]  # the PyTorch stack's fix leads
    for stack in failing:
        fixes = [stack["fix"], *stack["fix"]["alternatives"]]
        assert stack["fix"]["summary"], stack["name"]
        for fix in fixes:
            for command in fix["commands"]:
                if "--no-binary" in command:
                    name = command.split("--no-binary", 1)[1].split()[0]
                    assert not name.startswith(BINARY_ONLY_PREFIXES), command


@pytest.mark.parametrize("cell", sorted(FIRST_COMMANDS))
def test_the_first_commands_for_the_issues_cases(stack_checks, cell):
    _, doc = stack_checks[cell]
    assert doc["fix"]["commands"] == FIRST_COMMANDS[cell], doc["fix"]["summary"]
    # The one line says the same command.
    assert f"run: {FIRST_COMMANDS[cell][0]}" in doc["summary"], doc["summary"]


@pytest.mark.parametrize("cell", sorted(ALTERNATIVES))
def test_the_alternatives_for_the_issues_cases(stack_checks, cell):
    _, doc = stack_checks[cell]
    firsts = [alternative["commands"][0] for alternative in doc["fix"]["alternatives"]
              if alternative["commands"]]
    assert ALTERNATIVES[cell] in firsts, firsts


@pytest.mark.parametrize("cell", sorted(DRIVER_UPDATES))
def test_the_driver_a_driver_update_asks_for(stack_checks, cell):
    _, doc = stack_checks[cell]
    assert doc["fix"]["driver"] == DRIVER_UPDATES[cell], doc["fix"]["summary"]
    assert doc["fix"]["summary"].startswith(f"Update the NVIDIA driver to {DRIVER_UPDATES[cell]}")


def printed_fixes(stack_checks):
    """Every fix and alternative any cell prints, once."""
    seen = {}
    for (_, _, _), (_, doc) in stack_checks.items():
        for stack in doc["stacks"]:
            for fix in [stack["fix"], *stack["fix"]["alternatives"]]:
                if fix["requirements"]:
                    seen[(tuple(fix["requirements"]), fix["index_url"])] = fix
    return list(seen.values())


# Installable as printed: each pinned requirement a fix prints for PyPI is
# downloaded from PyPI (pip download --no-deps into the wheel cache, which
# keeps what it fetched). download.pytorch.org cannot be reached from the
# machines this tier runs on; a requirement for it is checked for its
# version on PyPI and reported.
def test_every_pinned_requirement_printed_is_installable(stack_checks, tmp_path):
    import fetch_wheels

    fixes = printed_fixes(stack_checks)
    from_pypi, from_index = set(), set()
    for fix in fixes:
        pinned = set()
        for command in fix["commands"]:
            if not command.startswith("pip install "):
                continue
            words = command.split()
            requirements = {w for w in words if "==" in w}
            pinned |= requirements
            (from_index if "--index-url" in words else from_pypi).update(requirements)
        assert pinned == set(fix["requirements"]), fix  # the list says what the commands pin
    assert from_pypi, "no fix names a PyPI build"
    dest = fetch_wheels.cache_dir() / "fix-downloads"
    failed = {}
    for requirement in sorted(from_pypi):
        command = [conftest.sys.executable, "-m", "pip", "download", "--no-deps",
                   "--only-binary=:all:", "--python-version", fetch_wheels.PYTHON_VERSION,
                   "--dest", str(dest), "--quiet", "--disable-pip-version-check"]
        for platform in fetch_wheels.PLATFORMS:
            command += ["--platform", platform]
        proc = subprocess.run([*command, requirement], capture_output=True, text=True)
        if proc.returncode != 0:
            failed[requirement] = proc.stderr[-500:]
    assert not failed, failed
    print(f"\npip download --no-deps from PyPI: {len(from_pypi)} requirements, all found: "
          f"{sorted(from_pypi)}")
    # Index builds: their version exists (PyPI holds each version's PyPI
    # build); the label's build is download.pytorch.org's.
    versions = {}
    for requirement in sorted(from_index):
        name, pinned = requirement.split("==")
        versions.setdefault(name, set()).add(pinned.split("+")[0])
    for name, wanted in versions.items():
        available = set(pypi.versions(name))
        assert wanted <= available, (name, wanted - available)
    print(f"index builds (download.pytorch.org, not reachable here; versions on PyPI): "
          f"{sorted(from_index)}")
