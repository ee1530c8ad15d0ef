#!/usr/bin/env python3
"""Checks that every C++ source the repository tracks is as clang-format
formats it (.clang-format: BasedOnStyle LLVM).

usage: check_format.py CLANG_FORMAT ROOT

Exits 77 (CTest: skipped) where the check cannot be made as the tree was
formatted: not a git checkout, or a clang-format other than major version
14 (Debian bookworm's, which .ci/install-deps installs; other versions
format some constructs differently). Otherwise lists every file that
differs, with the command that fixes it, and exits 1.
"""
import re
import subprocess
import sys

MAJOR = 14


def main(argv):
    clang_format, root = argv
    version = subprocess.run([clang_format, "--version"], capture_output=True,
                             text=True).stdout
    m = re.search(r"version (\d+)\.", version)
    if not m or int(m.group(1)) != MAJOR:
        print(f"skipped: {version.strip() or clang_format} is not "
              f"clang-format {MAJOR}")
        return 77
    ls = subprocess.run(["git", "-C", root, "ls-files", "--", "*.cpp", "*.h",
                         "*.cc"], capture_output=True, text=True)
    if ls.returncode != 0:
        print("skipped: not a git checkout")
        return 77
    files = [f for f in ls.stdout.splitlines()
             if not f.startswith(("shared/", "third_party/"))]
    bad = [f for f in files
           if subprocess.run([clang_format, "--dry-run", "-Werror", f],
                             cwd=root, capture_output=True).returncode != 0]
    if bad:
        print(f"{len(bad)} of {len(files)} files are not clang-formatted:")
        for f in bad:
            print("  " + f)
        print(f"fix: {clang_format} -i " + " ".join(bad))
        return 1
    print(f"ok: {len(files)} files clang-formatted")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
