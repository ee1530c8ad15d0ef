#!/usr/bin/env python3
"""Fits the profiler's cost per recorded CPU event (`--unprofiled
per-event=COST`) on runs recorded with and without the profiler, and
cross-validates it on another host's runs.

usage: fit_profiler_cost.py DDSCRIPT FIT_DIR [CHECK_DIR] [--markdown]

Each configuration of a ground-truth directory (tests/data/groundtruth, its
h100/) has a profiled trace and its profiler-free time (manifest.json). For
each cost of a grid, `ddscript run` with a model that changes nothing
replays the trace with that cost taken out of every recorded CPU event;
the error is that replay against the profiler-free time. The fitted cost
is the one with the least mean |error| on FIT_DIR's configurations; its
error on CHECK_DIR's (another GPU and host) is the cross-validation.
DataLoader configurations are left out: their profiler-free time is the
input pipeline's, which the trace's step does not hold.
"""
import json
import os
import subprocess
import sys
import tempfile

GRID_US = [0, 1, 2, 3, 3.5, 4, 4.5, 5, 5.5, 6, 7, 8]


def replays(ddscript, gt, model):
    man = json.load(open(os.path.join(gt, "manifest.json")))
    rows = []
    for c in man["configurations"]:
        trace = c.get("trace")
        if not trace or c["variant"].startswith("workers"):
            continue
        path = os.path.join(gt, trace)
        if not os.path.exists(path):
            continue
        got = []
        for us in GRID_US:
            cmd = [ddscript, "run", model, "--trace", path, "--format",
                   "json"]
            if us:
                cmd += ["--unprofiled", f"per-event={us}us"]
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=300)
            if p.returncode != 0:
                sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n"
                         f"{p.stderr}")
            got.append(json.loads(p.stdout)["baseline_ns"] / 1e6)
        rows.append((f"{c['model']} {c['variant']}", c["measured_ms"], got))
    return rows


def mean_errors(rows):
    return [sum(abs(r[2][i] / r[1] - 1) for r in rows) / len(rows)
            for i in range(len(GRID_US))]


def main(argv):
    ddscript, fit_dir = argv[0], argv[1]
    check_dir = argv[2] if len(argv) > 2 and not argv[2].startswith("--") \
        else None
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "nothing.dd")
        with open(model, "w") as f:
            f.write("# Changes nothing: the replay is the prediction.\n"
                    "let unchanged = 0\n")
        fit = replays(ddscript, fit_dir, model)
        check = replays(ddscript, check_dir, model) if check_dir else []
    fe = mean_errors(fit)
    best = min(range(len(GRID_US)), key=lambda i: fe[i])
    print("| cost per event | mean |error| on " + fit_dir +
          (" | on " + check_dir if check else "") + " |")
    print("|---:|---:|" + ("---:|" if check else ""))
    ce = mean_errors(check) if check else []
    for i, us in enumerate(GRID_US):
        line = f"| {us} us | {fe[i]:.1%} |"
        if check:
            line += f" {ce[i]:.1%} |"
        print(line + (" fitted" if i == best else ""))
    print(f"\nfitted on {len(fit)} configurations: {GRID_US[best]} us per "
          f"event, mean |error| {fe[best]:.1%} (max "
          f"{max(abs(r[2][best] / r[1] - 1) for r in fit):.1%})")
    if check:
        print(f"cross-validated on {len(check)} configurations: mean "
              f"|error| {ce[best]:.1%} (max "
              f"{max(abs(r[2][best] / r[1] - 1) for r in check):.1%}); "
              f"with the profiler's cost left in {ce[0]:.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
