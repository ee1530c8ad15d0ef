#!/usr/bin/env python3
"""Runs a ddscript command and checks how it ended.

usage: check.py [checks] -- COMMAND ARGS...

  --rc N              expected exit status (default 0)
  --stdout RE         stdout must match RE (re.search, multiline); repeatable
  --stderr RE         stderr must match RE; repeatable
  --no-stdout RE      stdout must not match RE; repeatable
  --no-stderr RE      stderr must not match RE; repeatable
  --one-error-line    stderr is exactly one line, "FILE: error: ..."
  --one-diagnostic    stderr is exactly one "FILE:LINE:COL: error: ..." line
                      and the source excerpt and caret under it
  --json-lines KEYS   every stdout line is a JSON object with these keys
  --json KEYS         stdout is one JSON object with these keys
  --deterministic     a second run prints byte-identical stdout
  --stdin FILE        the command's stdin is a pipe carrying FILE's bytes
  --stack-kb N        the command's stack is limited to N KB (ulimit -s N):
                      what recurses deep must not depend on the caller's
"""
import json
import re
import resource
import subprocess
import sys


def fail(msg, out, err):
    sys.stderr.write(f"FAIL: {msg}\n--- stdout ---\n{out}\n--- stderr ---\n{err}\n")
    sys.exit(1)


def main(argv):
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    rc, outs, errs, nouts, nerrs = 0, [], [], [], []
    one_error = one_diag = deterministic = False
    json_lines = json_obj = stdin = stack_kb = None
    i = 0
    while i < len(opts):
        o = opts[i]
        if o == "--rc":
            rc = int(opts[i + 1]); i += 2
        elif o == "--stdout":
            outs.append(opts[i + 1]); i += 2
        elif o == "--stderr":
            errs.append(opts[i + 1]); i += 2
        elif o == "--no-stdout":
            nouts.append(opts[i + 1]); i += 2
        elif o == "--no-stderr":
            nerrs.append(opts[i + 1]); i += 2
        elif o == "--one-error-line":
            one_error = True; i += 1
        elif o == "--one-diagnostic":
            one_diag = True; i += 1
        elif o == "--json-lines":
            json_lines = opts[i + 1].split(","); i += 2
        elif o == "--json":
            json_obj = opts[i + 1].split(","); i += 2
        elif o == "--stdin":
            with open(opts[i + 1], "rb") as f:
                stdin = f.read()
            i += 2
        elif o == "--deterministic":
            deterministic = True; i += 1
        elif o == "--stack-kb":
            stack_kb = int(opts[i + 1]); i += 2
        else:
            sys.exit(f"check.py: unknown option {o}")

    def limit_stack():
        n = stack_kb * 1024
        resource.setrlimit(resource.RLIMIT_STACK, (n, n))

    pre = limit_stack if stack_kb else None
    if stdin is None:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                           preexec_fn=pre)
        out, err = p.stdout, p.stderr
    else:
        p = subprocess.run(cmd, capture_output=True, timeout=300, input=stdin,
                           preexec_fn=pre)
        out, err = p.stdout.decode(), p.stderr.decode()
    if p.returncode != rc:
        fail(f"exit status {p.returncode}, expected {rc}", out, err)
    for r in outs:
        if not re.search(r, out, re.M):
            fail(f"stdout does not match {r!r}", out, err)
    for r in nouts:
        if re.search(r, out, re.M):
            fail(f"stdout matches {r!r}", out, err)
    for r in errs:
        if not re.search(r, err, re.M):
            fail(f"stderr does not match {r!r}", out, err)
    for r in nerrs:
        if re.search(r, err, re.M):
            fail(f"stderr matches {r!r}", out, err)
    if one_error:
        lines = err.splitlines()
        if len(lines) != 1 or not re.match(r"^\S.*: error: \S", lines[0]):
            fail("stderr is not exactly one 'FILE: error: reason' line", out, err)
    if one_diag:
        lines = err.splitlines()
        if (len(lines) != 3 or not re.match(r"^\S.*:\d+:\d+: error: \S", lines[0])
                or not lines[1].startswith("  ")
                or not re.match(r"^ +\^~*$", lines[2])):
            fail("stderr is not exactly one 'FILE:LINE:COL: error: reason' "
                 "diagnostic with its source line and caret", out, err)
    if json_lines is not None:
        lines = out.splitlines()
        if not lines:
            fail("no JSON lines", out, err)
        for line in lines:
            obj = json.loads(line)
            missing = [k for k in json_lines if k not in obj]
            if missing:
                fail(f"JSON line lacks {missing}", out, err)
    if json_obj is not None:
        obj = json.loads(out)
        missing = [k for k in json_obj if k not in obj]
        if missing:
            fail(f"JSON lacks {missing}", out, err)
    if deterministic:
        q = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if q.stdout != out:
            fail("a second run printed something else", out, q.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
