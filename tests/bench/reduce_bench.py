#!/usr/bin/env python3
"""Reduced ranks against their traces, as ratios (issue 38 item 4).

usage: reduce_bench.py [--build build] [--ranks 1000] [--mb 200] [--runs 1]
                       [--keep DIR]

1. Size: each shipped job rank, a multi-iteration rank (HTA's A100 rank 0,
   five iterations) and a --mb MB trace made from it (make_big_trace.py),
   reduced: the .ddg's bytes over the trace's JSON (uncompressed) bytes.
2. Throughput: `reduce` and `replay` of the --mb trace, with the default
   threads and with one (DDSCRIPT_THREADS=1): reduce reads and builds what
   replay reads and builds, and writes the graph instead of replaying it.
3. Scale: a job of --ranks copies of one DLRM rank (distributedInfo
   rewritten), reduced rank by rank into a folder, then replayed from the
   folder, against its replay from the JSON: time and peak memory (max RSS).

Targets (issue 38): a reduced rank at most 0.1x its JSON; the job of 1,000
ranks joined and replayed from reduced ranks in at most 2 GB; reduce's
throughput per core equal to replay's. Ratios on one machine, one run;
never a timed test.
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from timing import best_of, big_trace  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data")
DLRM = os.path.join(DATA, "param/dlrm_8rank/worker0_step_12.pt.trace.json.gz")
A100 = os.path.join(DATA, "hta/a100_16rank_rank0.json.gz")


def json_bytes(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))


def reduce_one(ddscript, trace, out, env=None):
    subprocess.run([ddscript, "reduce", "--trace", trace, "-o", out],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return os.path.getsize(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", help="make the inputs here (or reuse them)")
    a = ap.parse_args()
    ddscript = os.path.join(a.build, "ddscript")
    folder = a.keep or tempfile.mkdtemp(prefix="ddreducebench")
    os.makedirs(folder, exist_ok=True)

    print("size: the reduced rank over its JSON (uncompressed)")
    traces = sorted(glob.glob(os.path.join(DATA, "param/dlrm_8rank/*.gz")))[:1]
    traces += sorted(glob.glob(os.path.join(DATA, "astra_sim/megatron_tp8/*.gz")))[:1]
    big = big_trace(A100, a.mb, os.path.join(folder, "big.json"))
    traces += [A100, big]
    worst = 0
    for t in traces:
        size = reduce_one(ddscript, t, os.path.join(folder, "one.ddg"))
        js = json_bytes(t)
        worst = max(worst, size / js)
        print(f"  {os.path.relpath(t, ROOT) if t.startswith(ROOT) else t:<58}"
              f" {js / 1e6:8.1f} MB JSON -> {size / 1e6:7.3f} MB  "
              f"{size / js:.4f}x")
    print(f"  largest ratio {worst:.4f}x (target at most 0.1x)")

    one = dict(os.environ, DDSCRIPT_THREADS="1")
    mb = json_bytes(big) / 1e6
    t_red, rss_red = best_of([ddscript, "reduce", "--trace", big, "-o",
                              os.path.join(folder, "big.ddg")], a.runs)
    t_rep, rss_rep = best_of([ddscript, "replay", "--trace", big], a.runs)
    os.environ.update(one)
    t_red1, _ = best_of([ddscript, "reduce", "--trace", big, "-o",
                         os.path.join(folder, "big.ddg")], a.runs)
    t_rep1, _ = best_of([ddscript, "replay", "--trace", big], a.runs)
    del os.environ["DDSCRIPT_THREADS"]
    print(f"throughput on the {mb:.0f} MB trace: reduce {t_red:.2f} s "
          f"({mb / t_red:.0f} MB/s, {rss_red / 1e6:.0f} MB), replay "
          f"{t_rep:.2f} s ({mb / t_rep:.0f} MB/s, {rss_rep / 1e6:.0f} MB); "
          f"one thread: reduce {mb / t_red1:.0f} MB/s, replay "
          f"{mb / t_rep1:.0f} MB/s, ratio {t_rep1 / t_red1:.2f} "
          f"(target at least 1: reduce as fast as replay per core)")

    with gzip.open(DLRM, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    job = os.path.join(folder, f"job{a.ranks}")
    red = os.path.join(folder, f"reduced{a.ranks}")
    os.makedirs(job, exist_ok=True)
    os.makedirs(red, exist_ok=True)
    if not os.path.exists(os.path.join(job, f"rank{a.ranks - 1:04d}.json")):
        for r in range(a.ranks):
            doc["distributedInfo"].update(rank=r, world_size=a.ranks)
            with open(os.path.join(job, f"rank{r:04d}.json"), "w") as f:
                json.dump(doc, f)
    t_reduce, rss_reduce = best_of([ddscript, "reduce", "--trace", job, "-o",
                                    red + "/"], a.runs)
    js = sum(os.path.getsize(p) for p in glob.glob(os.path.join(job, "*")))
    dd = sum(os.path.getsize(p) for p in glob.glob(os.path.join(red, "*")))
    t_json, rss_json = best_of([ddscript, "replay", "--trace", job], a.runs)
    t_ddg, rss_ddg = best_of([ddscript, "replay", "--trace", red], a.runs)
    print(f"a job of {a.ranks} ranks: {js / 1e6:.0f} MB of JSON reduced to "
          f"{dd / 1e6:.1f} MB in {t_reduce:.1f} s ({rss_reduce / 1e6:.0f} MB "
          f"peak, one process for all: a scheduler runs them apart)")
    print(f"  replay from the JSON   {t_json:7.2f} s  {rss_json / 1e6:6.0f} MB")
    print(f"  replay from the .ddg   {t_ddg:7.2f} s  {rss_ddg / 1e6:6.0f} MB  "
          f"({t_json / t_ddg:.1f}x faster; target at most 2 GB)")


if __name__ == "__main__":
    main()
