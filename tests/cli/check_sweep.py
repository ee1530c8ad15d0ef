#!/usr/bin/env python3
"""Checks a sweep against the runs it stands for.

usage: check_sweep.py -- DDSCRIPT run MODEL --trace T [--set ...]

Runs the command (at least one --set must list several values) with
--format json, then each combination alone as a plain run, and checks that
every point of the sweep is what its own run predicts (time, speedup,
changes, predicted peak): each point runs on a fresh copy of the graph, so
no run sees another's changes. Then checks the text table: one row per
combination, in the order of nested loops over the --set arguments as
given, each with its values and its predicted time as the plain run prints
it; and that a second sweep prints the same bytes.
"""
import itertools
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ddcheck import fail, fmt_duration, run  # noqa: E402


def main(argv):
    cmd = argv[argv.index("--") + 1:]
    base, axes = [], []
    i = 0
    while i < len(cmd):
        if cmd[i] == "--set":
            name, _, values = cmd[i + 1].partition("=")
            axes.append((name, values.split(",")))
            i += 2
        else:
            base.append(cmd[i])
            i += 1
    swept = [a for a in axes if len(a[1]) > 1]
    if not swept:
        fail("the command sweeps nothing")

    sweep = json.loads(run(cmd + ["--format", "json"]))
    points = sweep["sweep"]["points"]
    combos = list(itertools.product(*[v for _, v in axes]))
    if len(points) != len(combos):
        fail(f"{len(points)} points for {len(combos)} combinations")
    if sweep["sweep"]["params"] != [n for n, _ in swept]:
        fail(f"swept params {sweep['sweep']['params']}")

    for point, combo in zip(points, combos):
        settings = dict(zip([n for n, _ in axes], combo))
        want = {n: settings[n] for n, _ in swept}
        if point["params"] != want:
            fail(f"point {point['params']}, expected {want} in this order")
        args = []
        for n, v in settings.items():
            args += ["--set", f"{n}={v}"]
        alone = json.loads(run(base + args + ["--format", "json"]))
        for key in ("predicted_ns", "speedup", "changes"):
            if point[key] != alone[key]:
                fail(f"{want}: {key} {point[key]} in the sweep, "
                     f"{alone[key]} alone")
        if point.get("peak_bytes_predicted") != alone.get("peak_bytes_predicted"):
            fail(f"{want}: peak {point.get('peak_bytes_predicted')} in the "
                 f"sweep, {alone.get('peak_bytes_predicted')} alone")
        if sweep["baseline_ns"] != alone["baseline_ns"]:
            fail("the sweep's baseline differs from a plain run's")

    text = run(cmd)
    if run(cmd) != text:
        fail("two sweeps printed different text")
    table = text[text.index("\nsweep "):].splitlines()[3:]
    if len(table) != len(points):
        fail(f"{len(table)} table rows for {len(points)} points")
    for row, point in zip(table, points):
        cells = row.split()
        values = [point["params"][n] for n, _ in swept]
        if cells[:len(values)] != values:
            fail(f"row {row!r} does not start with {values}")
        if fmt_duration(point["predicted_ns"]) not in row:
            fail(f"row {row!r} lacks {fmt_duration(point['predicted_ns'])}")
    print(f"{len(points)} points agree with their own runs")


if __name__ == "__main__":
    main(sys.argv[1:])
