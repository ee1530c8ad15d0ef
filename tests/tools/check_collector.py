#!/usr/bin/env python3
"""Checks what the injection library shows the profiled process.

usage: check_collector.py LIBRARY

Only InitializeInjection may be exported (so that the collector's code and
its statically linked libstdc++ cannot clash with the process), and the
library may need nothing but libcupti and the C runtime (no libfmt, no LLVM,
no libstdc++).
"""
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def main(lib):
    exported = sorted(
        line.split()[-1]
        for line in run("nm", "-D", "--defined-only", lib).splitlines()
        if line.strip())
    if exported != ["InitializeInjection"]:
        sys.exit(f"FAIL: {lib} exports {exported[:20]}, expected only InitializeInjection")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                        run("readelf", "-d", lib))
    allowed = re.compile(r"^(libcupti\.so(\.\d+)*|libc\.so\.6|libm\.so\.6|"
                         r"libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|"
                         r"ld-linux[-\w.]*\.so\.\d)$")
    extra = [n for n in needed if not allowed.match(n)]
    if extra or not any(n.startswith("libcupti") for n in needed):
        sys.exit(f"FAIL: {lib} needs {needed}; unexpected: {extra}")
    print(f"ok: exports {exported}, needs {needed}")


if __name__ == "__main__":
    main(sys.argv[1])
