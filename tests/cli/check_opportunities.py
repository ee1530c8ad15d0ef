#!/usr/bin/env python3
"""`ddscript opportunities` against `ddscript run` of the models it prints.

usage: check_opportunities.py DDSCRIPT TRACE [EXPECT_FIRST_REGEX] [--unprofiled=TIME]

The list is ranked (predicted time, least first, never above the replay by
more than the what-if's own cost allows: a gain may be negative), and every
listed prediction equals, to the nanosecond, what `ddscript run` predicts for
the printed model on the same iteration. With EXPECT_FIRST_REGEX, one of the
first two what-ifs matches it. --unprofiled=TIME goes to both commands.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def main(argv):
    extra = [a.replace("=", " ", 1).split(" ") for a in argv
             if a.startswith("--unprofiled=")]
    extra = [x for pair in extra for x in pair]
    argv = [a for a in argv if not a.startswith("--unprofiled=")]
    ddscript, trace = argv[0], argv[1]
    rep = json.loads(run([ddscript, "opportunities", "--trace", trace,
                          "--format", "json", "--top", "100"] + extra))
    ops = rep["opportunities"]
    if not ops:
        sys.exit("FAIL: no opportunity listed")
    preds = [o["predicted_ns"] for o in ops]
    if preds != sorted(preds):
        sys.exit(f"FAIL: not ranked: {preds}")
    for o in ops:
        if o["gain_ns"] != rep["baseline_ns"] - o["predicted_ns"]:
            sys.exit(f"FAIL: gain of {o['what']!r} is not baseline - predicted")
    if len(argv) > 2 and not any(re.search(argv[2], o["what"]) for o in ops[:2]):
        sys.exit(f"FAIL: {argv[2]!r} not among the first two: "
                 f"{[o['what'] for o in ops[:2]]}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, o in enumerate(ops):
            path = os.path.join(tmp, f"w{i}.dd")
            with open(path, "w") as f:
                f.write(o["model"] + "\n")
            alone = json.loads(run([ddscript, "run", path, "--trace", trace,
                                    "--iteration", str(rep["iteration"]),
                                    "--format", "json"] + extra))
            if alone["predicted_ns"] != o["predicted_ns"]:
                sys.exit(f"FAIL: {o['what']!r}: opportunities says "
                         f"{o['predicted_ns']} ns, run says "
                         f"{alone['predicted_ns']} ns")
    print(f"ok: {len(ops)} what-ifs, each as run predicts it")


if __name__ == "__main__":
    main(sys.argv[1:])
