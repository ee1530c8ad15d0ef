#!/usr/bin/env python3
"""update_cases.py re-pins a case's numbers and nothing else.

usage: check_update_cases.py --data DIR --src DIR --build DIR --bin DIR
                             -- DDSCRIPT

A copy of cases/compare/diff.test (numbers pinned) with two of them wrong
fails; update_cases.py gives back the file as it was, byte for byte, and it
passes again. A copy whose words changed is left as it is, exit 1.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import update_cases  # noqa: E402


def fail(msg):
    sys.exit("FAIL: " + msg)


def main(argv):
    sep = argv.index("--")
    opts, ddscript = argv[:sep], argv[sep + 1]
    tool = lambda name, *a: subprocess.run(  # noqa: E731
        [sys.executable, os.path.join(HERE, name), *a], capture_output=True,
        text=True)
    # Numbers are literal digits, not classes, quantifiers or escapes.
    spans = update_cases.number_spans(r"^x +148\.485 ms [0-9]{2} \d (1,234)")
    got = [r"^x +148\.485 ms [0-9]{2} \d (1,234)"[a:b] for a, b in spans]
    if got != ["148\\.485", "1", "234"]:
        fail(f"number_spans: {got}")
    original = os.path.join(HERE, "cases", "compare", "diff.test")
    text = open(original).read()
    if "148\\.485" not in text or "22\\.53" not in text:
        fail("cases/compare/diff.test no longer pins 148.485 and 22.53")
    with tempfile.TemporaryDirectory() as tmp:
        case = os.path.join(tmp, "diff.test")
        with open(case, "w") as f:
            f.write(text.replace("148\\.485", "999\\.999")
                    .replace("22\\.53", "11\\.11"))
        run = lambda: tool("run_case.py", case, *opts, "--",  # noqa: E731
                           ddscript)
        if run().returncode == 0:
            fail("a case with wrong numbers passed")
        p = tool("update_cases.py", *opts, "--", ddscript, case)
        if p.returncode != 0 or p.stdout.count("  + ") != 2:
            fail(f"update_cases.py: exit {p.returncode}:\n{p.stdout}{p.stderr}")
        if open(case).read() != text:
            fail("the updated case is not the original:\n" + open(case).read())
        if run().returncode != 0:
            fail("the updated case fails")
        # Words changed, not numbers: left for a person, exit 1.
        with open(case, "w") as f:
            f.write(text.replace("measured", "timed"))
        p = tool("update_cases.py", *opts, "--", ddscript, case)
        if p.returncode != 1 or "not only numbers" not in p.stdout or \
                open(case).read() != text.replace("measured", "timed"):
            fail(f"a changed word: exit {p.returncode}:\n{p.stdout}")
    print("ok: 2 numbers re-pinned to the original, a changed word left")


if __name__ == "__main__":
    main(sys.argv[1:])
