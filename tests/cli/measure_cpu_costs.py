#!/usr/bin/env python3
"""Measures the table of std.cpu_cost: what one CPU call of each kind costs,
without the profiler's cost, on the traces of ground-truth directories.

usage: measure_cpu_costs.py DDSCRIPT DIR [DIR ...]

For every trace of each DIR (its manifest.json's configurations),
`ddscript run tests/cli/models/cpu_costs.dd` prints each kind's price from
that trace's own calls (std.cpu_cost's from_trace, the profiler's cost per
event taken out as `run` does by default). Per kind, the median over the
traces that have it, per directory (a host) and over all: the figures
stdlib/cpu_cost.dd's table carries. The table's launch and elementwise
figures are the medians of the traces' own; every other kind's is each
trace's own price divided by that trace's host factor (its launch and
elementwise prices against the table's, as std.cpu_cost's host_factor
computes it), so that the table times a trace's host factor gives back
the traces' own prices.
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "models", "cpu_costs.dd")
UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def prices(ddscript, path):
    out = subprocess.run([ddscript, "run", MODEL, "--trace", path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{path}: ddscript exited {out.returncode}: {out.stderr}")
    got = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "cost" and f[2] != "none":
            got[f[1]] = (float(f[2]) * UNITS[f[3]], int(f[4]))
    return got


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    ddscript, dirs = argv[1], argv[2:]
    per_dir = {}
    for d in dirs:
        man = json.load(open(os.path.join(d, "manifest.json")))
        for c in man["configurations"]:
            path = os.path.join(d, c.get("trace") or "")
            if not c.get("trace") or not os.path.exists(path):
                continue
            for kind, (us, n) in prices(ddscript, path).items():
                per_dir.setdefault(kind, {}).setdefault(d, []).append(
                    (us, n, c["model"] + " " + c["variant"]))
    base = {}
    for kind in ("launch", "elementwise"):
        base[kind] = statistics.median_low(
            [us for rows in per_dir.get(kind, {}).values() for us, _, _ in rows])
    factor = {}
    for kind in ("launch", "elementwise"):
        for d, rows in per_dir.get(kind, {}).items():
            for us, _, name in rows:
                factor.setdefault((d, name), []).append(us / base[kind])
    factor = {k: statistics.median_low(v) for k, v in factor.items()}
    print("| kind | traces | table (us) | " +
          " | ".join(f"{d}: own, median (traces)" for d in dirs) + " |")
    print("|---|---|---|" + "---|" * len(dirs))
    for kind, by in per_dir.items():
        norm = []
        for d, rows in by.items():
            for us, _, name in rows:
                norm.append(us if kind in base else us / factor.get((d, name), 1))
        cells = []
        for d in dirs:
            rows = by.get(d, [])
            cells.append(f"{statistics.median_low([r[0] for r in rows]):.2f} "
                         f"({len(rows)})" if rows else "-")
        print(f"| {kind} | {len(norm)} | "
              f"{statistics.median_low(norm):.2f} | " + " | ".join(cells) +
              " |")

if __name__ == "__main__":
    main(sys.argv)
