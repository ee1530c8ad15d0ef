#!/usr/bin/env python3
"""Trace loading benchmark: `ddscript replay` on a ~100 MB trace.

Builds (once) a trace of about 100 MB uncompressed by repeating the
iterations of a real one (make_big_trace.py), then times, as whole
processes with a warm page cache:

  ddscript replay --trace BIG.json      its steady-state iteration: survey
                                        the file, read that iteration and
                                        its neighbours, build their graph,
                                        replay (docs/replay.md)
  ddscript replay --iteration all ...   read everything, build the graph of
                                        all iterations, replay
  dd_json_pass BIG.json                 a bare simdjson on-demand pass
                                        (and, timed inside the process, the
                                        same pass run a second time: the
                                        floor without first-touch costs)
  python3 -c "json.load(open(BIG))"     Python's json module

and prints the median wall time and peak resident memory of each over
several runs, replay's own phases (--timings: survey and excerpt within
load, then graph, simulate), and
the ratios the engine is held to (docs/validation.md):
replay <= 2x the bare pass, >= 20x faster than Python, peak memory <= 2x the
file. Timings are reported, never asserted: they depend on the machine.

Usage: trace_load_bench.py [--build build] [--source TRACE] [--mb 100]
                           [--runs 5] [--work DIR]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd):
    """Wall seconds, peak RSS (bytes), stdout and stderr of one run of cmd."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), err.decode()))
    return (wall, usage.ru_maxrss * 1024, out.decode(errors="replace"),
            err.decode(errors="replace"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--source", default=os.path.join(
        ROOT, "tests/data/hta/v100_ns_resolution_rank0.json.gz"))
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/tmp/ddscript-bench")
    a = ap.parse_args()

    os.makedirs(a.work, exist_ok=True)
    big = os.path.join(a.work, "big_%s_%dMB.json" % (
        os.path.basename(a.source).split(".")[0], a.mb))
    if not os.path.exists(big):
        subprocess.run([sys.executable, os.path.join(HERE, "make_big_trace.py"),
                        a.source, big, "--mb", str(a.mb)], check=True)
    size = os.path.getsize(big)

    contenders = [
        ("ddscript replay", [os.path.join(a.build, "ddscript"), "replay",
                             "--timings", "--trace", big]),
        ("ddscript replay --iteration all",
         [os.path.join(a.build, "ddscript"), "replay", "--iteration", "all",
          "--trace", big]),
        ("bare simdjson on-demand pass",
         [os.path.join(a.build, "tests", "dd_json_pass"), big]),
        ("python3 json.load", [sys.executable, "-c",
                               "import json,sys; json.load(open(sys.argv[1]))",
                               big]),
    ]
    # Warm the page cache, then interleave the runs so that a busy moment
    # of the machine does not fall on one contender only.
    with open(big, "rb") as f:
        while f.read(1 << 24):
            pass
    bare = contenders[2]
    times = {name: [] for name, _ in contenders}
    rss = {name: 0 for name, _ in contenders}
    floor = []
    phases = {}
    for _ in range(a.runs):
        for name, cmd in contenders:
            wall, peak, _, err = run(cmd)
            times[name].append(wall)
            rss[name] = max(rss[name], peak)
            # replay's own phases (--timings): "timing: load  140.0 ms, ..."
            for phase, ms in re.findall(r"timing: (\w+) +([0-9.]+) ms", err):
                phases.setdefault(phase, []).append(float(ms) / 1e3)
        _, _, out, _ = run([bare[1][0], "--warm", big])
        floor.append(float(re.search(r"pass ([0-9.]+) ms", out).group(1)))

    med = {n: statistics.median(t) for n, t in times.items()}
    print("trace: %s (%.1f MB), %d runs each, median wall time" %
          (big, size / 1e6, a.runs))
    print()
    print("| command | time | peak memory |")
    print("|---|---|---|")
    for name, _ in contenders:
        print("| %s | %.0f ms | %.0f MB (%.2fx the file) |" %
              (name, med[name] * 1e3, rss[name] / 1e6, rss[name] / size))
    replay = med["ddscript replay"]
    python = med["python3 json.load"]
    print()
    print("the bare pass again in the same process, its memory in place "
          "(the CPU's floor): %.0f ms" % statistics.median(floor))
    if phases:
        print()
        print("ddscript replay by phase (--timings), median: " + ", ".join(
            "%s %.0f ms" % (p, statistics.median(t) * 1e3)
            for p, t in phases.items()))
        if "load" in phases:
            print("python / replay's load phase alone: %.1fx" %
                  (python / statistics.median(phases["load"])))
    # How far ahead of Python the floor itself is on this machine: the
    # 20x target asks replay (parse, build, simulate) to be twice as far.
    print("python / bare pass:  %.1fx" %
          (python / med["bare simdjson on-demand pass"]))
    print()
    print("replay / bare pass:  %.2fx  (target <= 2x)" %
          (replay / med["bare simdjson on-demand pass"]))
    print("python / replay:     %.1fx  (target >= 20x)" % (python / replay))
    print("python / replay --iteration all: %.1fx (every iteration's graph)" %
          (python / med["ddscript replay --iteration all"]))
    print("replay peak / file:  %.2fx  (target <= 2x)" %
          (rss["ddscript replay"] / size))


if __name__ == "__main__":
    main()
