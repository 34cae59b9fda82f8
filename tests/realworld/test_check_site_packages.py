"""`archfit check --site-packages SITE --gpu GPU --driver 570.86 --json` on the
installed wheels, against the verdicts PyTorch's published lists give."""

import pytest
import yaml

from expectations import (
    BITSANDBYTES_LOADED,
    DISTRIBUTIONS,
    DRIVER,
    ENVIRONMENTS,
    EXPECTED,
    GPUS,
    TORCH_OF,
    expected_overall,
    known_gap,
    verdict,
)
from test_torch_builds import TORCH_KB

CELLS = [(env, gpu) for env in EXPECTED for gpu in GPUS]


def gap_marks(env, component, gpu):
    reason = known_gap(env, component, gpu)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def components(doc):
    return {c["name"]: c for c in doc["components"]}


@pytest.mark.parametrize("env,gpu", CELLS)
def test_device_and_driver_are_the_simulated_ones(site_checks, env, gpu):
    _, doc = site_checks[(env, gpu)]
    assert doc["schema"] == "archfit.check/1"
    (device,) = doc["devices"]
    assert (device["compute_capability"], device["simulated"]) == ("%d.%d" % GPUS[gpu], True)
    assert (doc["driver"]["version"], doc["driver"]["simulated"]) == (DRIVER, True)
    assert doc["torch"] == TORCH_OF[env]


@pytest.mark.parametrize("env,gpu,component", [
    pytest.param(env, gpu, c, marks=gap_marks(env, c, gpu))
    for env, gpu in CELLS for c in EXPECTED[env]
])
def test_component_verdict(site_checks, env, gpu, component):
    _, doc = site_checks[(env, gpu)]
    found = components(doc)[component]
    assert found["verdict"] == EXPECTED[env][component][gpu], found["evidence"]


@pytest.mark.parametrize("env,gpu", [
    pytest.param(env, gpu, marks=gap_marks(env, None, gpu)) for env, gpu in CELLS
])
def test_overall_verdict_and_exit_code(site_checks, env, gpu):
    rc, doc = site_checks[(env, gpu)]
    expected = expected_overall(env, gpu)
    assert (doc["verdict"], rc) == (expected, 0 if expected == "fits" else 1)


@pytest.mark.parametrize("env", sorted(EXPECTED))
def test_components_are_the_installed_distributions(site_checks, env):
    _, doc = site_checks[(env, "H100")]
    # nvidia-cuda-nvrtc-cu12 holds no device code, so it is no component.
    with_device_code = [DISTRIBUTIONS[k] for k in ENVIRONMENTS[env] if k != "nvrtc"]
    assert sorted((c["name"], c["version"], c["kind"]) for c in doc["components"]) == \
        sorted((name, version, "distribution") for name, version in with_device_code)


@pytest.mark.parametrize("env,gpu", CELLS)
def test_every_binary_verdict_follows_the_rules(site_checks, env, gpu):
    _, doc = site_checks[(env, gpu)]
    for component in doc["components"]:
        for binary in component["binaries"]:
            expected = verdict(binary["sass"], binary["ptx"], GPUS[gpu])
            assert binary["verdict"] == expected, binary["path"]


@pytest.mark.parametrize("gpu", GPUS)
def test_the_bitsandbytes_library_that_loads(site_checks, gpu):
    _, doc = site_checks[("cu124", gpu)]
    (loaded,) = [b for b in components(doc)["bitsandbytes"]["binaries"]
                 if b["path"].endswith("/" + BITSANDBYTES_LOADED)]
    assert loaded["verdict"] == EXPECTED["cu124"]["bitsandbytes"][gpu]


def test_nvrtc_from_its_wheel_is_a_library(site_checks, sites):
    _, doc = site_checks[("cu124", "H100")]
    wheel_copies = [lib for lib in doc.get("libraries", [])
                    if lib["path"].startswith(str(sites["cu124"]))]
    assert [(lib["name"], lib["version"], lib["origin"]) for lib in wheel_copies] == \
        [("nvrtc", "12.4.127", "wheel nvidia/cuda_nvrtc")]


@pytest.mark.parametrize("env,gpu", [(e, g) for e, g in CELLS
                                     if EXPECTED[e]["torch"][g] == "no-image"])
def test_torch_fix_installs_a_build_for_this_gpu(site_checks, env, gpu):
    _, doc = site_checks[(env, gpu)]
    fix = components(doc)["torch"]["fix"]
    (torch,) = [r for r in fix["requirements"] if r.startswith("torch==")]
    version, _, tag = torch.removeprefix("torch==").partition("+")
    kb = yaml.safe_load(TORCH_KB.read_text())
    (release,) = [r for r in kb["releases"]
                  if version in [v["version"] if isinstance(v, dict) else v for v in r["versions"]]]
    # No label: PyPI's own build of that version, whose tag the table names.
    tag = tag or release["pypi"]["tag"]
    assert bool(fix["index_url"]) == (tag != release["pypi"]["tag"] or "+" in torch), fix
    (build,) = [b for b in release["builds"] if b["tag"] == tag]
    sass = [f"sm_{sm}" for sm in build["sass"]]
    ptx = [f"compute_{sm}" for sm in build["ptx"]]
    assert verdict(sass, ptx, GPUS[gpu]) == "native", fix
