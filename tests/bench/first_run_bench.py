"""What a user's first and every later `archfit check` costs, on real
environments: each site-packages given (by default the real torch venvs the
real-world tier installed, and the demo environment `make test` builds from
nvcc fixtures), warm page cache, commands spawned as a user runs them.

    python3 tests/bench/first_run_bench.py --archfit build/sdk/archfit \
        [--site DIR ...] [--python PYTHON] [--runs N]

For each environment it prints the medians of:
  scan         archfit scan SITE                       (what the check must read)
  check        archfit check --no-index                (every library read)
  check again  archfit check, the scan index warm      (an unchanged environment)
  bare         archfit check in an activated venv of it, nothing named
  in process   archfit.check(scan_index=True)          (ComfyUI's Pre-flight; when the
                                                        Python binding imports)
  import torch PYTHON -c "import torch" with the site on PYTHONPATH
and the ratios issue 21 asks about. A benchmark, not a test: it checks
nothing but that each command ran.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REALWORLD = os.environ.get("ARCHFIT_REALWORLD_CACHE",
                           os.path.expanduser("~/.cache/archfit-realworld"))
GPU = "RTX 5090"


def timed(argv, env=None, cwd=None):
    """Runs argv; returns (wall ms, max RSS MB, exit status, stdout)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return ((time.perf_counter() - started) * 1000, usage.ru_maxrss / 1024,
            process.returncode, out)


def median_of(runs, argv, env=None, cwd=None, allowed=(0, 1, 2)):
    walls, rss, out = [], [], b""
    for _ in range(runs):
        wall, mem, code, out = timed(argv, env, cwd)
        if code not in allowed:
            raise SystemExit("%s exited %d" % (" ".join(argv), code))
        walls.append(wall)
        rss.append(mem)
    return statistics.median(walls), statistics.median(rss), out


def library_figures(site):
    files = size = 0
    for folder, _, names in os.walk(site):
        for name in names:
            if name.endswith(".so") or ".so." in name:
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    files += 1
                    size += os.path.getsize(path)
    return files, size


def fake_venv(top, site):
    """A venv whose site-packages is `site`, for the bare check."""
    python_dir = os.path.join(top, "venv", "lib", "python3.11")
    os.makedirs(python_dir)
    os.symlink(os.path.abspath(site), os.path.join(python_dir, "site-packages"))
    return os.path.join(top, "venv")


# Run in a child Python, so that the library and what it allocates do not
# swell this process (a child forked from a big parent reports the parent's
# size as its own peak).
IN_PROCESS = """
import json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import archfit
site, runs = sys.argv[2], int(sys.argv[3])
archfit.check(gpu=%r, site_packages=[site], scan_index=True)  # writes the index
walls = []
for _ in range(runs):
    started = time.perf_counter()
    report = archfit.check(gpu=%r, site_packages=[site], scan_index=True)
    walls.append((time.perf_counter() - started) * 1000)
print(json.dumps({"ms": statistics.median(walls), "scan": report.document["scan"]}))
""" % (GPU, GPU)


def in_process(site, runs, cache, library):
    env = dict(os.environ, ARCHFIT_CACHE_DIR=cache)
    env.setdefault("ARCHFIT_LIBRARY", library)
    child = subprocess.run([sys.executable, "-c", IN_PROCESS,
                            os.path.join(REPO, "host_adapters", "python"), site, str(runs)],
                           env=env, capture_output=True, text=True)
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["?"])[-1]
        return None, "the Python binding does not load here (%s)" % last
    result = json.loads(child.stdout)
    scan = result["scan"]
    return result["ms"], "reused %d of %d files" % (scan["reused"], scan["files"])


def bench(site, archfit, python, runs):
    files, size = library_figures(site)
    print("\n%s\n  %d shared libraries, %.2f GB" % (site, files, size / 1e9))
    with tempfile.TemporaryDirectory(prefix="archfit_first_run_") as top:
        cache = os.path.join(top, "cache")
        env = dict(os.environ, ARCHFIT_CACHE_DIR=cache)
        check = [archfit, "check", "--gpu", GPU, "--site-packages", site]
        # Warm the page cache and the index once.
        timed([archfit, "scan", site], env)
        timed(check, env)
        rows = []
        scan_ms, scan_rss, _ = median_of(runs, [archfit, "scan", site], env)
        rows.append(("scan", scan_ms, scan_rss))
        full_ms, full_rss, _ = median_of(runs, check + ["--no-index"], env)
        rows.append(("check (every library read)", full_ms, full_rss))
        again_ms, again_rss, _ = median_of(runs, check, env)
        rows.append(("check again (index warm)", again_ms, again_rss))
        _, _, _, out = timed(check + ["--json"], env)
        scan = json.loads(out[out.index(b"{"):])["scan"]
        venv = fake_venv(top, site)
        os.makedirs(os.path.join(top, "home"))
        bare_env = dict(env, VIRTUAL_ENV=venv)
        bare_ms, bare_rss, bare_out = median_of(runs, [archfit, "check", "--gpu", GPU], bare_env,
                                                cwd=os.path.join(top, "home"))
        rows.append(("bare check in the activated venv", bare_ms, bare_rss))
        for name, ms, rss in rows:
            print("  %-34s %8.1f ms  %6.0f MB" % (name, ms, rss))
        # The named site and the bare check's venv path are two sets of roots,
        # so two indexes.
        entries = [os.path.getsize(os.path.join(folder, name))
                   for folder, _, names in os.walk(os.path.join(cache, "scan-index"))
                   for name in names if name.endswith(".bin")]
        print("  index: %d of %d files and %d of %d directories reused; %s on disk"
              % (scan["reused"], scan["files"], scan["directories_reused"], scan["directories"],
                 " and ".join("%.2f MB" % (size / 1e6) for size in sorted(entries))))
        print("  bare check's first line: %s" % bare_out.decode().splitlines()[0])
        library = os.path.join(os.path.dirname(archfit), "libarchfit.so.0")
        process_ms, note = in_process(site, runs, os.path.join(top, "cache-binding"), library)
        if process_ms is not None:
            print("  %-34s %8.1f ms  (%s)" % ("in process, index warm", process_ms, note))
        else:
            print("  in process: skipped, %s" % note)

        import_ms = None
        if python:
            probe = subprocess.run([python, "-c", "import torch"], env=dict(os.environ,
                                   PYTHONPATH=site), capture_output=True, text=True)
            if probe.returncode == 0:
                import_ms, import_rss, _ = median_of(min(runs, 3), [python, "-c", "import torch"],
                                                     dict(os.environ, PYTHONPATH=site),
                                                     allowed=(0,))
                print("  %-34s %8.1f ms  %6.0f MB" % ("import torch", import_ms, import_rss))
            else:
                print("  import torch: skipped, %s cannot import this torch: %s"
                      % (python, (probe.stderr.strip().splitlines() or ["?"])[-1]))

        if files < 20:
            print("  (an imitation with %d libraries: fixed costs such as the knowledge base"
                  " dominate, so the ratios below say little)" % files)
        print("  check / scan = %.2f (issue 21: <= 2)" % (full_ms / scan_ms))
        print("  check, every library read: %.0f ms (issue 21: <= 300 ms on a torch venv)"
              % full_ms)
        print("  check again: %.0f ms (issue 21 goal: <= 50 ms)" % again_ms)
        if import_ms:
            print("  import torch / check = %.1fx (issue 21: >= 10x)" % (import_ms / full_ms))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archfit", default=os.path.join(REPO, "build", "sdk", "archfit"))
    parser.add_argument("--site", action="append", default=[],
                        help="a site-packages to check (repeatable)")
    parser.add_argument("--python", default="python3",
                        help="the interpreter that imports torch from the site")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sites = args.site or (
        sorted(glob.glob(os.path.join(REALWORLD, "sites", "torch-*", "site-packages")))
        + [os.path.join(REPO, "build", "tests", "fixtures", "demo", "site-packages")])
    print("archfit %s; %d cores; medians of %d runs" % (args.archfit, os.cpu_count(), args.runs))
    for site in sites:
        if os.path.isdir(site):
            bench(site, os.path.abspath(args.archfit), args.python, args.runs)
        else:
            print("\n%s: not there (the real-world tier installs it: make test-realworld)" % site)


if __name__ == "__main__":
    main()
