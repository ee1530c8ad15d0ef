#!/usr/bin/env python3
"""Replay of a job of 8 large ranks against one such rank, as ratios.

usage: job_bench.py [--build build] [--copies 16] [--runs 3] [--keep DIR]

Makes 8 traces of about 50 MB each from the 8 Megatron-LM ranks in
tests/data/astra_sim/megatron_tp8 (tests/bench/make_big_trace.py: each rank's
iteration repeated --copies times, with their own ids and step numbers, so
the ranks keep their distributedInfo and their collectives pair), then times
`ddscript replay` of the job and of rank 0 alone (best of --runs), and the
job's peak memory (max RSS) against the traces' total size.

Targets (issue 15): the job within 6x one rank's replay on 2 cores; peak
memory below the files' total size.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import best_of  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))


def timed(cmd):
    """Best wall time of --runs runs, and the largest max RSS (bytes)."""
    return best_of(cmd, ARGS.runs)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="make the traces here and keep them")
    ARGS = ap.parse_args()
    ddscript = os.path.join(ARGS.build, "ddscript")
    src = os.path.join(ROOT, "tests/data/astra_sim/megatron_tp8")
    work = ARGS.keep or tempfile.mkdtemp(prefix="ddjob")
    os.makedirs(work, exist_ok=True)
    traces = []
    for r in range(8):
        out = os.path.join(work, f"rank{r}.json")
        if not os.path.exists(out):
            subprocess.run([sys.executable, os.path.join(HERE, "make_big_trace.py"),
                            os.path.join(src, f"rank{r}.json.gz"), out,
                            "--copies", str(ARGS.copies)], check=True,
                           stdout=subprocess.DEVNULL)
        traces.append(out)
    total = sum(os.path.getsize(t) for t in traces)
    env_note = os.environ.get("DDSCRIPT_THREADS", "machine's")
    one, _ = timed([ddscript, "replay", "--trace", traces[0]])
    job, rss = timed([ddscript, "replay", "--trace", *traces])
    print(f"8 ranks, {total / 1e6:.0f} MB of JSON, threads: {env_note}, "
          f"{os.cpu_count()} cores")
    print(f"one rank replay   {one * 1000:8.0f} ms")
    print(f"job replay        {job * 1000:8.0f} ms   {job / one:5.2f}x one rank (target <= 6x)")
    print(f"job peak memory   {rss / 1e6:8.0f} MB   {rss / total:5.2f}x the files (target < 1x)")
    if not ARGS.keep:
        for t in traces:
            os.remove(t)
        os.rmdir(work)


if __name__ == "__main__":
    main()
