#!/usr/bin/env python3
"""`ddscript opportunities` on a trace of about 110 MB, as ratios.

usage: opportunities_bench.py [--build build] [--mb 110] [--runs 3] [--keep FILE]

Makes a Kineto trace of about --mb MB from the shipped ResNet-50 training
trace (tests/bench/make_big_trace.py: its iterations repeated with their own
ids), then times, best of --runs: `replay` of it, `run` of one what-if (the
CPU side 2x faster, opportunities' first candidate, written as a model), and
`opportunities`, which reads the trace once and re-simulates a shared graph
for every candidate in parallel. Reports the times, opportunities against
replay and against one what-if's run, and peak memory.

Target (issue 18): seconds on a 100 MB trace; never re-reading the trace, so
opportunities costs far less than one `run` per candidate.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from timing import best_of, big_trace  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mb", type=int, default=110)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="make the trace here (or reuse it)")
    a = ap.parse_args()
    ddscript = os.path.join(a.build, "ddscript")
    src = os.path.join(ROOT, "tests/data/kineto/resnet50_v100_workers0.pt.trace.json.gz")
    trace = big_trace(src, a.mb, a.keep, "ddopp")
    with tempfile.NamedTemporaryFile("w", suffix=".dd", delete=False) as m:
        m.write("shrink (select annotation where name ~ /^ProfilerStep#/) by 2\n")
    candidates = len(json.loads(subprocess.run(
        [ddscript, "opportunities", "--trace", trace, "--top", "1000",
         "--format", "json"], capture_output=True, text=True,
        check=True).stdout)["opportunities"])
    replay, _ = best_of([ddscript, "replay", "--trace", trace], a.runs)
    one, _ = best_of([ddscript, "run", m.name, "--trace", trace], a.runs)
    opp, rss = best_of([ddscript, "opportunities", "--trace", trace], a.runs)
    os.remove(m.name)
    size = os.path.getsize(trace)
    print(f"trace {size / 1e6:.0f} MB, {os.cpu_count()} cores, "
          f"{candidates} what-ifs listed")
    print(f"replay            {replay * 1000:8.0f} ms")
    print(f"run (one what-if) {one * 1000:8.0f} ms")
    print(f"opportunities     {opp * 1000:8.0f} ms   {opp / replay:5.2f}x replay, "
          f"{opp / one:5.2f}x one run (one run per what-if: "
          f"{candidates * one / opp:4.1f}x longer)")
    print(f"peak memory       {rss / 1e6:8.0f} MB   {rss / size:5.2f}x the file")
    if not a.keep:
        os.remove(trace)
        os.rmdir(os.path.dirname(trace))


if __name__ == "__main__":
    main()
