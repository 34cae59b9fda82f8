"""Whether two `archfit scan --json` reports of the same files say the same,
paths aside: the Linux build's and the Windows build's (under Wine) reading
the same bytes must agree on every image, container, error and import.

    python3 same_scan.py LINUX.json WINDOWS.json
"""
import json
import sys


def without_paths(report):
    """The report with each file's path cut to its name (the two builds name
    a file by their own OS's path) and sorted by it."""
    files = []
    for file in report["files"]:
        file = dict(file)
        file["path"] = file["path"].replace("\\", "/").rsplit("/", 1)[-1]
        files.append(file)
    files.sort(key=lambda f: f["path"])
    return {key: value for key, value in report.items() if key != "files"} | {"files": files}


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as linux_file:
        linux = without_paths(json.load(linux_file))
    try:
        with open(sys.argv[2], encoding="utf-8") as windows_file:
            windows = without_paths(json.load(windows_file))
    except (json.JSONDecodeError, KeyError) as error:
        print(f"the Windows report is not a scan report: {error}")
        return 1
    if linux == windows:
        return 0
    for a, b in zip(linux["files"], windows["files"]):
        if a != b:
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    print(f"{a['path']}: {key}: Linux {str(a.get(key))[:300]}")
                    print(f"{' ' * len(a['path'])}  {key}: Windows {str(b.get(key))[:300]}")
            break
    else:
        print(f"Linux {len(linux['files'])} files, Windows {len(windows['files'])}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
