"""Command-line test cases as files (tests/cli/cases/GROUP/NAME.test), read
by run_case.py (CTest runs each as cli.GROUP.NAME) and update_cases.py.

A case file, in the manner of LLVM's lit:

    # What the case checks, and why (comments).
    RUN: run amp --trace %data/kineto/resnet50_v100_workers0.pt.trace.json.gz
    RUN:   --format json
    CHECK: --stdout '^predicted +155\\.168 ms'
    CHECK: --rc 2
    FIXTURE: cupti_fixtures
    ENV: DDSCRIPT_THREADS=1
    TIMEOUT: 60

RUN lines (one or more, joined) are ddscript's arguments, split as a shell
splits words (quote what has blanks). CHECK lines are check.py's checks
(see its docstring), one option and its value per line, the value quoted
the same way (a regex's trailing blank survives an editor; a newline in a
regex is \n). FIXTURE names the CTest fixtures the case needs (their tests
make its inputs), PROVIDES the fixtures it makes for others (it writes
their inputs), TIMEOUT its limit in seconds (CTest's default otherwise);
ENV sets variables for the command. In RUN and CHECK, %data is tests/data, %src the
source tree, %build the build folder of tests/cli (what fixtures write),
%bin the build's top folder.
"""
import os
import shlex

KEYS = ("RUN", "CHECK", "FIXTURE", "PROVIDES", "TIMEOUT", "ENV")


class CaseError(Exception):
    pass


class Case:
    def __init__(self, path):
        self.path = path
        self.lines = open(path, encoding="utf-8").read().splitlines()
        self.run, self.checks, self.fixtures, self.env = [], [], [], []
        self.provides, self.timeout = [], None
        for n, line in enumerate(self.lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            key, sep, rest = line.partition(":")
            if not sep or key not in KEYS:
                raise CaseError(f"{path}:{n}: expected '# comment' or one of "
                                f"{', '.join(k + ':' for k in KEYS)}")
            try:
                words = shlex.split(rest)
            except ValueError as e:
                raise CaseError(f"{path}:{n}: {e}") from None
            if key == "RUN":
                self.run += words
            elif key == "CHECK":
                if not words or not words[0].startswith("--") or len(words) > 2:
                    raise CaseError(f"{path}:{n}: a CHECK is one check.py "
                                    f"option and at most one value")
                self.checks.append((n, words))
            elif key == "FIXTURE":
                self.fixtures += words
            elif key == "PROVIDES":
                self.provides += words
            elif key == "TIMEOUT":
                if len(words) != 1 or not words[0].isdigit():
                    raise CaseError(f"{path}:{n}: TIMEOUT takes seconds")
                self.timeout = int(words[0])
            else:
                self.env += words
        if not self.run:
            raise CaseError(f"{path}: no RUN line")

    def name(self, root):
        """cli.GROUP.NAME of a case under root (tests/cli/cases)."""
        rel = os.path.relpath(self.path, root)
        return "cli." + rel[:-len(".test")].replace(os.sep, ".")


def substitute(word, where):
    """%data, %src, %build and %bin in a word."""
    for key in ("data", "src", "build", "bin"):
        word = word.replace("%" + key, where[key])
    return word


def check_argv(case, where, ddscript):
    """check.py's arguments for the case: its checks, --, the command."""
    argv = []
    for _, words in case.checks:
        argv += [substitute(w, where) for w in words]
    return argv + ["--", ddscript] + [substitute(w, where) for w in case.run]
