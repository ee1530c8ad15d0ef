#!/usr/bin/env python3
"""Re-pins the numbers of command-line cases (tests/cli/cases, see cases.py)
to what ddscript prints now, as LLVM's update scripts rewrite CHECK lines.

usage: update_cases.py [--dry-run] --data DIR --src DIR --build DIR
                       --bin DIR -- DDSCRIPT CASE_OR_FOLDER...

For each case, runs its command. A CHECK --stdout/--stderr regex that no
longer matches, but matches once its pinned numbers (155\\.168, 22\\.53) are
left free, gets the numbers the output has there, and the case file that
line; nothing else in it changes. It prints each change (file:line, old and
new). A regex that does not match even with free numbers is reported and
left: the output changed in more than numbers, for a person to look at.
With --dry-run, nothing is written. Exit status 1 where a case is left so.
"""
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

REGEX_CHECKS = ("--stdout", "--stderr")


def number_spans(regex):
    """(start, end) of each literal number in a regex: digits, and a
    fractional part written \\.DIGITS; not inside [...] or {...}, nor a
    backreference or an escape."""
    spans, i, n = [], 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
        elif c == "[":
            j = i + 1
            while j < n and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            i = j + 1
        elif c == "{":
            j = regex.find("}", i)
            i = n if j < 0 else j + 1
        elif c.isdigit():
            j = i
            while j < n and regex[j].isdigit():
                j += 1
            if regex.startswith("\\.", j) and j + 2 < n and \
                    regex[j + 2].isdigit():
                j += 2
                while j < n and regex[j].isdigit():
                    j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def repin(regex, text):
    """The regex with its numbers as \\p text has them where the regex with
    free numbers matches; None where that does not match."""
    spans = number_spans(regex)
    if not spans:
        return None
    free, last = [], 0
    for a, b in spans:
        free.append(regex[last:a])
        free.append(r"([0-9]+(?:\.[0-9]+)?)")
        last = b
    free.append(regex[last:])
    try:
        m = re.search("".join(free), text, re.M)
    except re.error:
        return None
    if not m:
        return None
    out, last = [], 0
    for (a, b), value in zip(spans, m.groups()):
        out.append(regex[last:a])
        out.append(value.replace(".", "\\."))
        last = b
    out.append(regex[last:])
    return "".join(out)


def update(path, where, ddscript, dry_run):
    """Updates one case; returns whether every regex check matches after."""
    case = cases.Case(path)
    env = dict(os.environ)
    for assignment in case.env:
        name, _, value = assignment.partition("=")
        env[name] = cases.substitute(value, where)
    argv = [ddscript] + [cases.substitute(w, where) for w in case.run]
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    streams = {"--stdout": p.stdout, "--stderr": p.stderr}
    lines, ok = list(case.lines), True
    for n, words in case.checks:
        if words[0] not in REGEX_CHECKS or len(words) != 2:
            continue
        text = streams[words[0]]
        regex = cases.substitute(words[1], where)
        if re.search(regex, text, re.M):
            continue
        new = repin(words[1], text)
        if new is None or not re.search(cases.substitute(new, where), text,
                                        re.M):
            print(f"{path}:{n}: no match, not only numbers: {words[1]}")
            ok = False
            continue
        lines[n - 1] = f"CHECK: {words[0]} {shlex.quote(new)}"
        print(f"{path}:{n}:\n  - {words[1]}\n  + {new}")
    if lines != case.lines and not dry_run:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return ok


def main(argv):
    dry_run = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    if "--" not in argv:
        sys.exit(__doc__)
    sep = argv.index("--")
    opts, rest = argv[:sep], argv[sep + 1:]
    where = {opts[i].lstrip("-"): opts[i + 1] for i in range(0, len(opts), 2)}
    if set(where) != {"data", "src", "build", "bin"} or len(rest) < 2:
        sys.exit(__doc__)
    ddscript, targets = rest[0], rest[1:]
    paths = []
    for t in targets:
        if os.path.isdir(t):
            for root, _, files in os.walk(t):
                paths += [os.path.join(root, f) for f in sorted(files)
                          if f.endswith(".test")]
        else:
            paths.append(t)
    left = 0
    for path in sorted(paths):
        try:
            left += not update(path, where, ddscript, dry_run)
        except cases.CaseError as e:
            print(e)
            left += 1
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
