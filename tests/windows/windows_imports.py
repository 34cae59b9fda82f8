"""Reads `archfit scan --json` of Windows executables and DLLs on stdin and
fails unless each needs only DLLs that every Windows ships (the kernel, the
C runtime, system APIs): what archfit builds for Windows links its C++
runtime and every dependency statically (issue 35).

    archfit scan --json archfit.exe archfit.dll | python3 windows_imports.py
"""
import json
import sys

SYSTEM = {
    "kernel32.dll", "advapi32.dll", "msvcrt.dll", "ucrtbase.dll", "user32.dll", "bcrypt.dll",
    "ws2_32.dll", "shell32.dll", "ole32.dll", "ntdll.dll", "crypt32.dll",
}


def main() -> int:
    report = json.load(sys.stdin)
    failed = False
    for file in report["files"]:
        linkage = file.get("linkage") or {}
        needed = linkage.get("needed", [])
        beyond = [name for name in needed
                  if name.lower() not in SYSTEM and not name.lower().startswith("api-ms-win-")]
        print(f"{file['path']}: imports {', '.join(needed)}")
        if file.get("format") != "pe":
            print(f"  not read as a PE file: {file.get('format')}")
            failed = True
        if beyond:
            print(f"  needs DLLs Windows does not ship: {beyond}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
