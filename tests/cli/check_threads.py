#!/usr/bin/env python3
"""The same command gives the same bytes on any number of threads.

usage: check_threads.py DDSCRIPT DATA_DIR

For every trace under DATA_DIR (Kineto JSON, plain or gzip, and run.cupti;
the malformed/ ones and those ddscript refuses are skipped after checking
that each thread count refuses them alike) and every directory that holds a
job's ranks, runs at DDSCRIPT_THREADS=1, 2 and 4:

  ddscript replay --trace F --timeline T.json     (text and timeline)
  ddscript replay --trace F --format json
  ddscript run amp --trace F                       (single traces)

and requires byte-identical stdout, stderr, exit status and timeline
(docs/architecture.md: deterministic at any thread count; issue 19).
Commands run two at a time; the whole check takes about a minute.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

THREADS = ("1", "2", "4")
SUFFIXES = (".json", ".json.gz", ".cupti")


def inputs(data):
    traces, jobs = [], []
    for root, dirs, files in os.walk(data):
        dirs.sort()
        if "malformed" in os.path.relpath(root, data).split(os.sep):
            continue
        names = sorted(f for f in files if f.endswith(SUFFIXES)
                       and not f.startswith("manifest"))
        traces += [os.path.join(root, f) for f in names]
        # A directory of rank traces (rank0..., worker0...): a job.
        ranks = [f for f in names if f.startswith(("rank", "worker"))]
        if len(ranks) >= 2:
            jobs.append(root)
    return traces, jobs


def run(dd, args, threads, timeline=None):
    env = dict(os.environ, DDSCRIPT_THREADS=threads)
    cmd = [dd] + args + (["--timeline", timeline] if timeline else [])
    p = subprocess.run(cmd, capture_output=True, env=env, timeout=600)
    out = (p.returncode, p.stdout, p.stderr)
    if timeline:
        try:
            with open(timeline, "rb") as f:
                out += (f.read(),)
        except FileNotFoundError:
            out += (None,)
        if os.path.exists(timeline):
            os.remove(timeline)
    return out


def check(dd, args, tmp, with_timeline):
    """Runs args at every thread count; returns a failure message or None."""
    results = []
    for t in THREADS:
        tl = os.path.join(tmp, f"tl_{os.getpid()}_{abs(hash(tuple(args)))}_{t}.json") \
            if with_timeline else None
        results.append(run(dd, args, t, tl))
    ref = results[0]
    for t, got in zip(THREADS[1:], results[1:]):
        if got != ref:
            what = ["exit status", "stdout", "stderr", "timeline"]
            diff = [what[i] for i in range(len(ref)) if ref[i] != got[i]]
            return (f"{' '.join(args)}: DDSCRIPT_THREADS={t} differs from 1 in "
                    f"{', '.join(diff)}")
    return None


def main():
    dd, data = sys.argv[1], sys.argv[2]
    traces, jobs = inputs(data)
    tasks = []
    for f in traces:
        tasks.append((["replay", "--trace", f], True))
        tasks.append((["replay", "--trace", f, "--format", "json"], False))
        tasks.append((["run", "amp", "--trace", f], False))
    for d in jobs:
        tasks.append((["replay", "--trace", d], True))
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            failures = [m for m in pool.map(
                lambda t: check(dd, t[0], tmp, t[1]), tasks) if m]
    for m in failures:
        print("FAIL:", m)
    print(f"{len(tasks)} commands on {len(traces)} traces and {len(jobs)} "
          f"jobs, each at DDSCRIPT_THREADS={','.join(THREADS)}: "
          f"{len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
