"""The ctypes binding (host_adapters/python/archfit) over the build's
libarchfit.so: check and diagnose against the nvcc-built demo site-packages,
errors, the texts (the core's, as the command prints them), the struct mirrors against archfit.h, and the
library search (in subprocesses, so this process keeps the library it
loaded)."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import archfit
from archfit import _capi

NO_KERNEL_IMAGE = (
    "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device"
)
# What the check of the demo site says of torch on an RTX 5090 (sm_120).
TORCH_EVIDENCE = "torch 2.5.1+cu124 has SASS up to sm_90 and no PTX; your GPU is sm_120"


def component(report: archfit.Report, name: str) -> dict:
    found = [c for c in report.document["components"] if c["name"] == name]
    assert found, f"no component {name} in {[c['name'] for c in report.document['components']]}"
    return found[0]


# ---- the library the tests load ----------------------------------------------


def test_loads_the_library_ctest_names(archfit_library, project_version):
    assert os.path.samefile(archfit.library_path(), archfit_library)
    # The version the library reports is the project's (CMakeLists.txt).
    assert archfit.version() == project_version


# ---- check ---------------------------------------------------------------------


def test_check_on_rtx_5090_fails_and_names_torch(demo_site):
    report = archfit.check(gpu="RTX 5090", site_packages=[demo_site])
    assert report.verdict == "fails"
    assert report.document["schema"] == "archfit.check/1"
    assert report.document["verdict"] == "fails"
    torch = component(report, "torch")
    assert torch["verdict"] == "no-image"
    assert torch["version"] == "2.5.1+cu124"
    assert "pip install torch" in " ".join(torch["fix"]["commands"])
    # The JSON kept is the document parsed.
    assert json.loads(report.json) == report.document


def test_check_on_h100_fits(demo_site):
    report = archfit.check(gpu="H100", site_packages=str(demo_site))  # one path, not a list
    assert report.verdict == "fits"
    assert component(report, "torch")["verdict"] == "native"


def test_check_of_an_unknown_gpu_raises_naming_it(demo_site):
    with pytest.raises(archfit.ArchfitError) as raised:
        archfit.check(gpu="RTX 9999", site_packages=[demo_site])
    assert raised.value.status == "ARCHFIT_ERROR_INVALID_ARGUMENT"
    assert "RTX 9999" in str(raised.value)
    assert not isinstance(raised.value, archfit.LibraryError)


def test_errors_are_read_on_the_thread_that_failed(demo_site):
    # archfit_last_error() is per thread: concurrent failing calls must each
    # raise their own message, and the shared context must serve them all.
    names = [f"RTX {9990 + i}" for i in range(8)]

    def fail(name):
        try:
            archfit.check(gpu=name, site_packages=[demo_site])
        except archfit.ArchfitError as error:
            return str(error)
        return "no error"

    with ThreadPoolExecutor(max_workers=4) as pool:
        messages = list(pool.map(fail, names))
    for name, message in zip(names, messages):
        assert f'"{name}"' in message, message


def _archfit_stdout(archfit_cli, *arguments) -> str:
    """What the archfit command prints on stdout (not a terminal: no colours)."""
    run = subprocess.run([str(archfit_cli), *arguments], capture_output=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr.decode(errors="replace")
    return run.stdout.decode("utf-8")


def test_report_text_is_what_archfit_check_prints(demo_site, archfit_cli):
    """Report.text is the core's checklist (archfit_report_text, render/), the
    very text `archfit check` prints for the same environment: the binding
    keeps no renderer of its own."""
    report = archfit.check(gpu="RTX 5090", site_packages=[demo_site])
    arguments = ["check", "--no-index", "--gpu", "RTX 5090", "--site-packages", str(demo_site)]
    assert report.text == _archfit_stdout(archfit_cli, *arguments)
    assert report.details_text == _archfit_stdout(archfit_cli, *arguments, "--details")
    lines = report.text.splitlines()
    assert lines[0].startswith("GPU     GeForce RTX 5090 (sm_120"), lines
    assert "torch   2.5.1+cu124" in lines
    assert any(line.startswith("✗ PyTorch 2.5.1+cu124  no-image") for line in lines), lines
    # fastops' PTX runs after the driver compiles it: a warning, not a failure.
    assert any(line.startswith("! fastops 1.0  ptx-jit") for line in lines), lines
    assert "      pip install torch==2.15.0" in lines
    # The last line is the core's one-line answer; no colours.
    assert lines[-1] == report.document["summary"], lines
    assert lines[-1].startswith("fails: PyTorch 2.5.1+cu124 has no image for GeForce RTX 5090")
    assert "\033" not in report.text and "\ncomponents:\n" in report.details_text

    fitting = archfit.check(gpu="H100", site_packages=[demo_site])
    assert "✗" not in fitting.text, fitting.text
    assert fitting.text.splitlines()[-1] == fitting.document["summary"]


# ---- diagnose ------------------------------------------------------------------


def test_diagnose_weighed_against_a_report_confirms(demo_site):
    report = archfit.check(gpu="RTX 5090", site_packages=[demo_site])
    diagnosis = archfit.diagnose(NO_KERNEL_IMAGE, report=report)
    assert diagnosis.category == "no-kernel-image"
    assert diagnosis.recognised is True
    assert diagnosis.confidence == "high"
    assert diagnosis.sm == "sm_120"
    assert diagnosis.environment == "confirms"
    assert diagnosis.evidence and diagnosis.evidence[0].startswith(TORCH_EVIDENCE), diagnosis.evidence
    assert diagnosis.component == {"name": "torch", "kind": "distribution",
                                   "version": "2.5.1+cu124", "path": ""}
    # The check's exact fix comes first.
    assert diagnosis.fix[0].startswith("torch: Install torch")
    assert diagnosis.document["schema"] == "archfit.diagnosis/1"
    assert diagnosis.document["environment"]["evidence"] == diagnosis.evidence
    assert json.loads(diagnosis.json) == diagnosis.document


def test_diagnose_runs_the_check_it_is_given(demo_site):
    diagnosis = archfit.diagnose(NO_KERNEL_IMAGE, check={"gpu": "RTX 5090", "site_packages": [demo_site]})
    assert diagnosis.environment == "confirms"
    assert diagnosis.evidence[0].startswith(TORCH_EVIDENCE)
    # ... and an environment where torch runs refutes the same error.
    refuted = archfit.diagnose(NO_KERNEL_IMAGE, check={"gpu": "H100", "site_packages": [demo_site]})
    assert refuted.environment == "refutes"


def test_diagnose_of_a_megabyte_line_on_a_small_thread_stack_keeps_the_host_alive():
    """A CUDA error line padded to megabytes, diagnosed on a thread whose
    stack is 256 KB (Windows threads get 1 MB): std::regex's recursion used
    to kill the host process here (issue 34); RE2 does not recurse."""
    import threading

    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    results = {}

    def work():
        results["tail"] = archfit.diagnose(line + "x" * (8 << 20)).category
        results["head"] = archfit.diagnose(" " * (8 << 20) + "\n" + line).category

    previous = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert results == {"tail": "no-kernel-image", "head": "no-kernel-image"}


def test_diagnose_takes_a_saved_report_json(demo_site, archfit_cli):
    saved = subprocess.run([str(archfit_cli), "check", "--json", "--gpu", "RTX 5090",
                            "--site-packages", str(demo_site)], capture_output=True, text=True)
    assert saved.returncode == 1, saved.stderr
    diagnosis = archfit.diagnose(NO_KERNEL_IMAGE, report_json=saved.stdout)
    assert diagnosis.environment == "confirms"
    assert diagnosis.evidence[0].startswith(TORCH_EVIDENCE)


def test_diagnose_without_an_environment():
    diagnosis = archfit.diagnose(NO_KERNEL_IMAGE, cuda_error=209)
    assert diagnosis.category == "no-kernel-image"
    assert diagnosis.environment is None and diagnosis.evidence == []
    assert diagnosis.fix, "the knowledge base gives steps for a no-kernel-image error"


def test_diagnose_of_bytes_that_are_not_utf8():
    # A log in Latin-1 with a NUL in it: bytes go to the C ABI as they are.
    text = (b"caf\xe9 \xff\xfe\x00 log line\n"
            b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    diagnosis = archfit.diagnose(text)
    assert diagnosis.category == "no-kernel-image"
    json.loads(diagnosis.json)  # still a valid document: bad bytes were replaced
    # A str holding those bytes as surrogates (read with errors="surrogateescape")
    # reaches the library as the same bytes.
    as_str = archfit.diagnose(text.decode("utf-8", errors="surrogateescape"))
    assert as_str.document == diagnosis.document


def test_diagnose_of_unrecognised_text():
    diagnosis = archfit.diagnose("ValueError: nothing to do with CUDA")
    assert diagnosis.category == "not-recognised"
    assert diagnosis.recognised is False
    assert diagnosis.component is None


def test_diagnose_a_traceback_given_apart():
    frame = "/venv/lib/python3.11/site-packages/xformers/ops/fmha/__init__.py"
    traceback = textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{frame}", line 306, in memory_efficient_attention
            return _memory_efficient_attention(
        """)
    diagnosis = archfit.diagnose(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        traceback=traceback)
    assert diagnosis.component is not None and diagnosis.component["name"] == "xformers"
    assert diagnosis.component["path"] == frame


def test_diagnose_refuses_two_environments(demo_site):
    report = archfit.check(gpu="RTX 5090", site_packages=[demo_site])
    with pytest.raises(archfit.ArchfitError) as raised:
        archfit.diagnose(NO_KERNEL_IMAGE, report=report, check={"gpu": "H100"})
    assert raised.value.status == "ARCHFIT_ERROR_INVALID_ARGUMENT"
    assert "report, check" in str(raised.value)


def test_diagnose_names_what_is_wrong_in_its_arguments():
    with pytest.raises(archfit.ArchfitError, match="RTX 9999"):
        archfit.diagnose(NO_KERNEL_IMAGE, check={"gpu": "RTX 9999"})
    with pytest.raises(archfit.ArchfitError, match="report_json") as raised:
        archfit.diagnose(NO_KERNEL_IMAGE, report_json='{"schema": "archfit.scan/1"}')
    assert raised.value.status == "ARCHFIT_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="gpus"):
        archfit.diagnose(NO_KERNEL_IMAGE, check={"gpus": "H100"})


def test_diagnosis_text(demo_site):
    report = archfit.check(gpu="RTX 5090", site_packages=[demo_site])
    text = archfit.diagnose(NO_KERNEL_IMAGE, report=report).text
    lines = text.splitlines()
    assert lines[0] == "RTX 5090 cannot run PyTorch 2.5.1+cu124"
    assert lines[1] == "no-kernel-image (high confidence)"
    assert any(line.startswith("component  torch 2.5.1+cu124 (distribution)") for line in lines)
    assert any(line.startswith("why        A component has no code your GPU (sm_120)") for line in lines)
    # What the check found, and its source: the report crossed as report_json.
    assert any(line.startswith(f"checked    confirms (report_json): {TORCH_EVIDENCE}")
               for line in lines), lines
    assert any(line.startswith("fix        1. torch: Install torch") for line in lines)
    assert any(line.startswith("           2. pip install torch==") for line in lines)


def _clean(text: str) -> bool:
    """Text the command prints as it is: it escapes control characters
    (other than newline and tab) and bytes that are not UTF-8 on their way
    out (cli/terminal_safe_output), which the binding decodes as U+FFFD."""
    return "\ufffd" not in text and all(c in "\n\t" or (ord(c) >= 0x20 and not 0x7f <= ord(c) < 0xa0)
                                        for c in text)


def test_diagnosis_text_is_what_archfit_explain_prints(archfit_cli, repo_root):
    """Diagnosis.text is the core's text (archfit_diagnosis_text, render/):
    for every error of the corpus it is what `archfit explain --file` prints."""
    compared = 0
    for error in sorted((repo_root / "tests" / "data" / "errors").glob("*.txt")):
        text = archfit.diagnose(error.read_bytes()).text
        if not _clean(text):
            continue
        assert text == _archfit_stdout(archfit_cli, "explain", "--file", str(error)), error.name
        compared += 1
    assert compared >= 20


def test_a_weighed_diagnosis_text_is_what_archfit_explain_prints(archfit_cli, demo_site):
    check = {"gpu": "RTX 5090", "driver": "575.51", "site_packages": [demo_site]}
    text = archfit.diagnose(NO_KERNEL_IMAGE, check=check).text
    assert f"checked    confirms (archfit check): {TORCH_EVIDENCE}" in text, text
    assert text == _archfit_stdout(archfit_cli, "explain", "--no-progress", "--gpu", "RTX 5090",
                                   "--driver", "575.51", "--site-packages", str(demo_site),
                                   NO_KERNEL_IMAGE)


# ---- the struct mirrors ----------------------------------------------------------


@pytest.fixture(scope="session")
def c_compiler() -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("no C compiler (cc) to build the test's C programs")
    return compiler


LAYOUT_PROGRAM = """\
#include <stddef.h>
#include <stdio.h>
#include "archfit/archfit.h"
#define FIELD(s, f) printf(#s " " #f " %zu %zu\\n", offsetof(s, f), sizeof(((s*)0)->f));
#define SIZE(s) printf(#s " sizeof %zu 0\\n", sizeof(s));
int main(void) {
%s
  return 0;
}
"""


def test_struct_mirrors_match_archfit_h(tmp_path, c_compiler, public_include_dirs):
    # Offsets and sizes as the C compiler lays archfit.h out, against ctypes'.
    mirrors = {"archfit_context_options": _capi.ContextOptions,
               "archfit_check_options": _capi.CheckOptions,
               "archfit_diagnose_options": _capi.DiagnoseOptions,
               "archfit_diagnosis_info": _capi.DiagnosisInfo}
    body = []
    for c_name, mirror in mirrors.items():
        body.append(f"  SIZE({c_name})")
        body.extend(f"  FIELD({c_name}, {field})" for field, _ in mirror._fields_)
    source = tmp_path / "layout.c"
    source.write_text(LAYOUT_PROGRAM.replace("%s", "\n".join(body)))
    program = tmp_path / "layout"
    includes = [argument for folder in public_include_dirs for argument in ("-I", str(folder))]
    subprocess.run([c_compiler, "-std=c99", *includes, "-o", str(program), str(source)], check=True)
    seen = {}
    for line in subprocess.run([str(program)], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        c_name, field, offset, size = line.split()
        seen[(c_name, field)] = (int(offset), int(size))
    for c_name, mirror in mirrors.items():
        assert seen[(c_name, "sizeof")][0] == ctypes.sizeof(mirror), c_name
        for field, _ in mirror._fields_:
            described = getattr(mirror, field)
            assert seen[(c_name, field)] == (described.offset, described.size), f"{c_name}.{field}"
        # Every C field is mirrored: the last one ends where the struct does
        # (up to padding), so a field added to archfit.h shows here.
        last = getattr(mirror, mirror._fields_[-1][0])
        assert ctypes.sizeof(mirror) - (last.offset + last.size) < ctypes.alignment(mirror), c_name


# ---- finding the library (in subprocesses: the process keeps what it loads) -------

PROBE = """\
import sys
sys.path.insert(0, {binding!r})
import archfit
try:
    print("loaded", archfit.version(), archfit.library_path())
except archfit.LibraryError as error:
    assert isinstance(error, archfit.ArchfitError)
    print("LibraryError:", error)
    sys.exit(3)
"""


def probe(repo_root, **environment) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ARCHFIT_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(environment)
    code = PROBE.format(binding=str(repo_root / "host_adapters" / "python"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_archfit_library_names_the_library_to_load(repo_root, archfit_library, project_version):
    result = probe(repo_root, ARCHFIT_LIBRARY=str(archfit_library))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["loaded", project_version]


def test_a_missing_library_is_a_clear_library_error(repo_root, tmp_path):
    missing = tmp_path / "nowhere" / "libarchfit.so.0"
    result = probe(repo_root, ARCHFIT_LIBRARY=str(missing))
    assert result.returncode == 3, result.stdout + result.stderr
    message = result.stdout
    assert "libarchfit could not be loaded" in message
    assert f"ARCHFIT_LIBRARY={missing}: cannot be loaded" in message
    assert "beside the package:" in message  # every place it looked is named
    assert "make wheel" in message and "set ARCHFIT_LIBRARY" in message
    assert "Traceback" not in result.stderr


def test_without_archfit_library_the_loader_path_is_searched(repo_root, archfit_library):
    result = probe(repo_root, LD_LIBRARY_PATH=str(archfit_library.parent))
    assert result.returncode == 0, result.stdout + result.stderr
    loaded = result.stdout.split()[2]
    # library_path() names the file the loader found, not the bare SONAME.
    assert os.path.samefile(loaded, archfit_library), loaded


def test_with_no_library_anywhere_every_place_is_named(repo_root):
    if ctypes.util.find_library("archfit"):
        pytest.skip(f"a libarchfit is installed on this system ({ctypes.util.find_library('archfit')})")
    result = probe(repo_root)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "beside the package:" in result.stdout
    assert "ARCHFIT_LIBRARY: not set" in result.stdout
    assert "the system: libarchfit.so.0 on the loader's search path: cannot be loaded" in result.stdout


def test_each_platform_looks_for_its_own_library_beside_the_package():
    # The ComfyUI pack carries libarchfit.so.0 and archfit.dll side by side in
    # vendor/python/archfit/lib: ComfyUI portable's embedded Python (os.name
    # "nt") must pick the DLL, Linux the shared object. Asked for the other
    # platform, nothing is opened: only the names are compared.
    from archfit import _library

    package_lib = Path(_library.__file__).resolve().parent / "lib"
    for os_name, name in (("nt", "archfit.dll"), ("posix", "libarchfit.so.0")):
        assert _library.library_name(os_name) == name
        places = _library._candidates(os_name)
        assert places[0][0] == f"beside the package: {package_lib / name}"
        assert places[-1] == (f"the system: {name} on the loader's search path", name, False)
        assert name in _library._hint(os_name)
    assert "build-windows" in _library._hint("nt") and "build/sdk" in _library._hint("posix")


def build_library(c_compiler, directory: Path, name: str, source: str) -> Path:
    (directory / f"{name}.c").write_text(source)
    library = directory / f"{name}.so"
    subprocess.run([c_compiler, "-shared", "-fPIC", "-o", str(library), str(directory / f"{name}.c")],
                   check=True)
    return library


def test_a_library_of_another_abi_major_is_refused(repo_root, tmp_path, c_compiler):
    # archfit 1.0.0 as far as archfit_version() tells: nothing else is asked.
    other = build_library(c_compiler, tmp_path, "libarchfit_v1",
                          "unsigned archfit_version(void) { return 10000; }\n")
    result = probe(repo_root, ARCHFIT_LIBRARY=str(other))
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"ARCHFIT_LIBRARY={other}: is libarchfit 1.0.0, ABI major 1; this binding speaks ABI major 0" \
        in result.stdout


def test_a_library_that_is_not_archfit_is_refused(repo_root, tmp_path, c_compiler):
    other = build_library(c_compiler, tmp_path, "libother", "int other_function(void) { return 0; }\n")
    result = probe(repo_root, ARCHFIT_LIBRARY=str(other))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "is not libarchfit: it has no archfit_version()" in result.stdout


# ---- the console script from the source tree ---------------------------------------


def test_the_command_says_when_its_binary_is_missing(repo_root):
    # The source tree has no archfit/bin/archfit (only the wheel does).
    env = dict(os.environ, PYTHONPATH=str(repo_root / "host_adapters" / "python"))
    result = subprocess.run([sys.executable, "-m", "archfit", "--version"], capture_output=True,
                            text=True, env=env)
    assert result.returncode == 2
    assert "the archfit command bundled with this package is missing" in result.stderr
    assert "pip install --force-reinstall archfit" in result.stderr
