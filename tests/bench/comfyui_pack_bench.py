"""What the archfit node pack adds to ComfyUI's start (issue 6: under
200 ms on an environment like the demo one), and how long its background
check takes. Each run is a fresh Python that loads the pack the way
ComfyUI's loader does (tests/python/comfyui/comfyui_standin.py), with the
demo site-packages as its Python's and an RTX 5090 named (no GPU here).

    build/python-venv/bin/python tests/bench/comfyui_pack_bench.py [--runs N]

Prints medians; a benchmark, not a test.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

ONE_RUN = """
import json, os, site, sys, time, types
sys.path[:0] = [{standin!r}, {binding!r}]
site.getsitepackages = lambda: [{demo!r}]
import comfyui_standin
server = comfyui_standin.StandInPromptServer()
sys.modules["server"] = types.SimpleNamespace(PromptServer=types.SimpleNamespace(instance=server))
sys.modules["folder_paths"] = types.SimpleNamespace(get_folder_paths=lambda kind: [])
started = time.perf_counter()
pack = comfyui_standin.load_like_comfyui({pack!r})
load = time.perf_counter() - started
pack.timings["check_thread"].join()
print(json.dumps({{"load": load, "import": pack.timings["import_seconds"],
                  "check": pack.timings["check_seconds"]}}))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    arguments = parser.parse_args()
    build = os.path.join(REPO, "build")
    demo = os.environ.get("ARCHFIT_DEMO_SITE",
                          os.path.join(build, "tests", "fixtures", "demo", "site-packages"))
    script = ONE_RUN.format(standin=os.path.join(REPO, "tests", "python", "comfyui"),
                            binding=os.path.join(REPO, "host_adapters", "python"), demo=demo,
                            pack=os.path.join(REPO, "host_adapters", "comfyui"))
    env = dict(os.environ, ARCHFIT_GPU="RTX 5090", PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("ARCHFIT_LIBRARY", os.path.join(build, "sdk", "libarchfit.so.0"))
    runs = []
    for _ in range(arguments.runs):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env=env, check=True)
        runs.append(json.loads(result.stdout.splitlines()[-1]))

    def median_ms(key):
        return 1000 * statistics.median(run[key] for run in runs)

    print("archfit node pack on the demo environment, median of %d fresh processes" % len(runs))
    print("  loaded as ComfyUI loads it (what ComfyUI's start waits for)  %6.1f ms (target < 200: %s)"
          % (median_ms("load"), "met" if median_ms("load") < 200 else "MISSED"))
    print("  of which the pack's own setup                                 %6.1f ms" % median_ms("import"))
    print("  the check, in a background thread                             %6.1f ms" % median_ms("check"))


if __name__ == "__main__":
    main()
