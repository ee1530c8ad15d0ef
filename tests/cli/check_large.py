#!/usr/bin/env python3
"""Replay of a trace large enough for the paths only large traces take.

usage: check_large.py SOURCE.json.gz -- DDSCRIPT

Builds a trace of 10 iterations (about 25 MB: tests/bench/make_big_trace.py
repeats SOURCE's iterations, every copy with its own ids), then checks:

- the default replay reads the steady-state iteration and its neighbours
  ("graph  iterations A to B of 10") and reports that iteration as the graph
  of every iteration does (--iteration all): measured and replayed time, GPU
  busy time, the critical path's length;
- the same for the trace gzip-compressed (inflated once, while surveyed);
- a file of 16 MB or more makes ddscript restart itself with huge pages
  (support/HugePages.h): with DDSCRIPT_HUGEPAGES=0 the output is the same,
  byte for byte.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from ddcheck import fail, run  # noqa: E402

SAME = ("measured_ns", "replayed_ns", "measured_gpu_busy_ns",
        "replayed_gpu_busy_ns", "critical_path_ns")


def lines(out):
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def check_focus(ddscript, trace):
    focused = lines(run([ddscript, "replay", "--trace", trace,
                         "--format", "json"]))
    if len(focused) != 1:
        fail(f"{trace}: {len(focused)} iterations reported, expected 1")
    f = focused[0]
    if (f["trace_iterations"], f["graph_iterations"]) != (10, 3):
        fail(f"{trace}: graph of {f['graph_iterations']} of "
             f"{f['trace_iterations']} iterations, expected 3 of 10")
    whole = [w for w in lines(run([ddscript, "replay", "--trace", trace,
                                   "--iteration", "all", "--format", "json"]))
             if w["iteration"] == f["iteration"]]
    if len(whole) != 1 or whole[0]["trace_iterations"] != 10:
        fail(f"{trace}: iteration {f['iteration']} not once in --iteration all")
    for key in SAME:
        if f[key] != whole[0][key]:
            fail(f"{trace}: {key} {f[key]} focused, {whole[0][key]} whole")
    text = run([ddscript, "replay", "--trace", trace])
    if not re.search(r"^graph +iterations \d+ to \d+ of 10 ", text, re.M):
        fail(f"{trace}: no 'graph  iterations A to B of 10' line:\n{text}")
    return f


def main(argv):
    source = argv[1]
    ddscript = argv[argv.index("--") + 1]
    work = tempfile.mkdtemp(prefix="ddscript_large_")
    try:
        plain = os.path.join(work, "big.json")
        subprocess.run([sys.executable,
                        os.path.join(HERE, "..", "bench", "make_big_trace.py"),
                        source, plain, "--mb", "17"], check=True,
                       capture_output=True)
        if os.path.getsize(plain) < (16 << 20):
            fail("the trace is under 16 MB: no restart with huge pages")
        a = check_focus(ddscript, plain)

        packed = plain + ".gz"
        with open(plain, "rb") as src, gzip.open(packed, "wb") as dst:
            shutil.copyfileobj(src, dst)
        b = check_focus(ddscript, packed)
        if a != b:
            fail(f"plain and gzip differ:\n{a}\n{b}")

        cmd = [ddscript, "replay", "--trace", plain]
        env = dict(os.environ, DDSCRIPT_HUGEPAGES="0")
        off = subprocess.run(cmd, capture_output=True, text=True, env=env,
                             timeout=300)
        if off.returncode != 0 or off.stdout != run(cmd):
            fail("the output differs without the restart with huge pages")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("large trace: focused replay matches the whole graph, plain and "
          "gzip, with and without huge pages")


if __name__ == "__main__":
    main(sys.argv)
