#!/usr/bin/env python3
"""Runs one command-line test case (a tests/cli/cases/*.test file, see
cases.py) with check.py.

usage: run_case.py CASE --data DIR --src DIR --build DIR --bin DIR -- DDSCRIPT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import check  # noqa: E402


def parse(argv):
    sep = argv.index("--")
    opts, rest = argv[:sep], argv[sep + 1:]
    where = {}
    path = opts[0]
    for i in range(1, len(opts), 2):
        where[opts[i].lstrip("-")] = opts[i + 1]
    if set(where) != {"data", "src", "build", "bin"} or len(rest) != 1:
        sys.exit(__doc__)
    return path, where, rest[0]


def main(argv):
    path, where, ddscript = parse(argv)
    try:
        case = cases.Case(path)
    except cases.CaseError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    for assignment in case.env:
        name, _, value = assignment.partition("=")
        os.environ[name] = cases.substitute(value, where)
    return check.main(cases.check_argv(case, where, ddscript))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
