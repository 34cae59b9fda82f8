"""The wheels as they are, never installed: `archfit scan --json WHEEL` and
`archfit check --wheel WHEEL --gpu GPU --json`. A member of a wheel is named
"<wheel path>!/<member path>"; `check --wheel` gives its libraries to the
wheel's distribution (name and version from its dist-info)."""

import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest

from expectations import DISTRIBUTIONS, DRIVER, ENVIRONMENTS, EXPECTED, FAILURES, GPUS, known_gap

WHEELS = sorted(DISTRIBUTIONS)
SEPARATOR = "!/"


@pytest.fixture(scope="module", autouse=True)
def needs_wheel_support(archfit_bin):
    usage = subprocess.run([str(archfit_bin), "scan", "--help"], capture_output=True, text=True)
    if ".whl" not in usage.stdout and "wheel" not in usage.stdout.lower():
        pytest.skip("this archfit does not read .whl files yet (archfit scan --help)")


def env_of(wheel_key):
    return next(env for env, keys in ENVIRONMENTS.items() if wheel_key in keys)


def expected_component(key, gpu):
    """(component name, expected verdict) of a wheel; None for a wheel without
    device code."""
    name, _ = DISTRIBUTIONS[key]
    env = env_of(key)
    return (name, EXPECTED[env][name][gpu]) if name in EXPECTED[env] else None


# A torch wheel takes seconds to inflate for each check; the scan test above
# shows its images equal the installed copy's, whose verdicts test_check_site_
# packages.py asserts for every GPU. Here: a newer minor (RTX 4090), a newer
# major (RTX 5090) and sm_100 (B200).
TORCH_WHEEL_GPUS = ("RTX 4090", "RTX 5090", "B200")


def gpus_for(key):
    return TORCH_WHEEL_GPUS if key.startswith("torch-") else tuple(GPUS)


def wheel_cells():
    cells = []
    for key in WHEELS:
        for gpu in gpus_for(key):
            gap = expected_component(key, gpu) and known_gap(env_of(key), DISTRIBUTIONS[key][0], gpu)
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            cells.append(pytest.param(key, gpu, marks=marks))
    return cells


def image_keys(file):
    return sorted((i["kind"], i["arch"], i["compression"], i["section"], i["offset"], i["size"])
                  for i in file["images"])


@pytest.mark.parametrize("key", WHEELS)
def test_scan_of_the_wheel_equals_the_scan_of_its_install(run, wheels, site_scans, key):
    rc, doc = run("scan", "--json", str(wheels[key]))
    assert rc == 0
    prefix = str(wheels[key]) + SEPARATOR
    assert doc["files"] and all(f["path"].startswith(prefix) for f in doc["files"])
    members = {f["path"][len(prefix):]: f for f in doc["files"] if f["images"]}
    with zipfile.ZipFile(wheels[key]) as whl:
        in_wheel = set(whl.namelist())
    installed = {rel: f for rel, f in site_scans[env_of(key)].items()
                 if f["images"] and rel in in_wheel}
    assert members.keys() == installed.keys()
    for rel, member in members.items():
        assert member["error"] is None, member["errors"]
        assert member["size"] == installed[rel]["size"]
        assert image_keys(member) == image_keys(installed[rel]), rel


@pytest.fixture(scope="module")
def wheel_checks(run, wheels):
    """(wheel key, GPU) -> `archfit check --wheel WHEEL --gpu GPU --driver 570.86 --json`."""
    def check(job):
        key, gpu = job
        return job, run("check", "--wheel", str(wheels[key]), "--gpu", gpu,
                        "--driver", DRIVER, "--json")

    jobs = [(key, gpu) for key in WHEELS for gpu in gpus_for(key)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(check, jobs))


@pytest.mark.parametrize("key,gpu", wheel_cells())
def test_check_of_the_wheel(wheel_checks, wheels, key, gpu):
    rc, doc = wheel_checks[(key, gpu)]
    name, version = DISTRIBUTIONS[key]
    assert [(w["name"], w["version"]) for w in doc["wheels"]] == [(name, version)]
    expected = expected_component(key, gpu)
    if expected is None:
        assert (doc["components"], doc["verdict"], rc) == ([], "fits", 0)
        return
    component_name, component_verdict = expected
    (component,) = doc["components"]
    assert (component["name"], component["version"], component["kind"]) == \
        (component_name, version, "distribution")
    assert component["root"] == str(wheels[key])
    assert all(b["path"].startswith(str(wheels[key]) + SEPARATOR) for b in component["binaries"])
    assert component["verdict"] == component_verdict, component["evidence"]
    fails = component_verdict in FAILURES
    assert (doc["verdict"], rc) == (("fails", 1) if fails else ("fits", 0))
