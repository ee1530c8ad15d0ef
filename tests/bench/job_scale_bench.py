#!/usr/bin/env python3
"""A job of many ranks against one rank, as ratios (issue 34 item 5).

usage: job_scale_bench.py [--build build] [--ranks 1000] [--runs 1]
                          [--keep DIR]

Copies one DLRM rank (tests/data/param/dlrm_8rank/worker0, its
distributedInfo rewritten) as the --ranks ranks of a job, then times, best of
--runs, `replay` and `run amp` of one rank alone and of the job, and `export`
of the job, with peak memory (max RSS).

Targets (issue 34): the job's replay and run amp within 30x one rank's time
and in at most 2 GB; export linear in ranks (tests/cli/check_complexity.py
counts that). Ratios measured in one run on one machine; never a timed test.
"""
import argparse
import gzip
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from timing import best_of  # noqa: E402

RANK = "tests/data/param/dlrm_8rank/worker0_step_12.pt.trace.json.gz"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", help="make the job's ranks here (or reuse them)")
    a = ap.parse_args()
    ddscript = os.path.join(a.build, "ddscript")
    folder = a.keep or tempfile.mkdtemp(prefix="ddjobscale")
    os.makedirs(folder, exist_ok=True)
    with gzip.open(os.path.join(ROOT, RANK), "rt", encoding="utf-8") as f:
        doc = json.load(f)
    one = os.path.join(folder, "one.json")
    job = os.path.join(folder, "job")
    os.makedirs(job, exist_ok=True)
    if not os.path.exists(os.path.join(job, f"rank{a.ranks - 1:04d}.json")):
        for r in range(a.ranks):
            doc["distributedInfo"].update(rank=r, world_size=a.ranks)
            with open(os.path.join(job, f"rank{r:04d}.json"), "w") as f:
                json.dump(doc, f)
    doc["distributedInfo"].update(rank=0, world_size=1)
    with open(one, "w") as f:
        json.dump(doc, f)
    out = os.path.join(folder, "export")
    rows = []
    for name, cmd in [
            ("replay, one rank", ["replay", "--trace", one]),
            ("run amp, one rank", ["run", "amp", "--trace", one]),
            (f"replay, {a.ranks} ranks", ["replay", "--trace", job]),
            (f"run amp, {a.ranks} ranks", ["run", "amp", "--trace", job]),
            (f"export, {a.ranks} ranks", ["export", "--trace", job,
                                          "--output", out])]:
        rows.append((name, *best_of([ddscript] + cmd, a.runs)))
    base = {"replay": rows[0][1], "run amp": rows[1][1]}
    print(f"{'command':<22} {'seconds':>8} {'/ one rank':>11} {'peak MB':>8}")
    for name, t, rss in rows:
        key = name.split(",")[0]
        ratio = f"{t / base[key]:11.1f}" if key in base else f"{'':>11}"
        print(f"{name:<22} {t:8.2f} {ratio} {rss / 1e6:8.0f}")


if __name__ == "__main__":
    main()
