#!/usr/bin/env python3
"""Every stdlib model on a large trace, against its replay and a bare JSON
pass over the same file, as ratios (issue 34).

usage: model_bench.py [--build build] [--mb 100] [--runs 2] [--keep FILE]
                      [--models amp,compile,...]

Makes a Kineto trace of about --mb MB from the shipped ResNet-50 training
trace (tests/bench/make_big_trace.py: its iterations repeated with their own
ids), then times, best of --runs, side by side: dd_json_pass (a bare
simdjson on-demand pass over the file), `ddscript replay` (which reads the
reported iteration and its neighbours only), `replay --iteration all` (the
whole graph, as a model's run builds it), `ddscript opportunities`, and `ddscript run MODEL` for every model of stdlib/ (the
libraries skipped). Prints each time, its ratio to the replay and to the
bare pass, and peak memory (max RSS) against the file's size.

Targets (issue 34): every model at most 2x its replay; `run amp` at most
0.25x the bare pass on 1 GB with peak memory at most 1.0x the file;
`opportunities` on 1 GB within 10 s. Ratios measured in one run on one
machine; never a timed test.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from timing import best_of, big_trace  # noqa: E402

MODELS = ["amp", "batch", "compile", "cuda_graphs", "dataloader", "ddp",
          "fused_adam", "gpu", "p3", "restructure_bn"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--keep", help="make the trace here (or reuse it)")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    ddscript = os.path.join(a.build, "ddscript")
    src = os.path.join(ROOT, "tests/data/groundtruth/resnet50_baseline.pt.trace.json.gz")
    trace = big_trace(src, a.mb, a.keep, "ddmodels")
    size = os.path.getsize(trace)
    rows = []
    bare, bare_rss = best_of([os.path.join(a.build, "tests", "dd_json_pass"),
                              trace], a.runs)
    replay, replay_rss = best_of([ddscript, "replay", "--trace", trace], a.runs)
    rows.append(("bare JSON pass", bare, bare_rss))
    rows.append(("replay", replay, replay_rss))
    rows.append(("replay, all iterations", *best_of(
        [ddscript, "replay", "--trace", trace, "--iteration", "all"], a.runs)))
    rows.append(("opportunities", *best_of(
        [ddscript, "opportunities", "--trace", trace], a.runs)))
    for m in a.models.split(","):
        rows.append((f"run {m}", *best_of(
            [ddscript, "run", m, "--trace", trace], a.runs)))
    print(f"trace: {size / 1e6:.0f} MB ({trace})")
    print(f"{'command':<24} {'seconds':>8} {'/ replay':>9} {'/ bare':>8} "
          f"{'peak MB':>8} {'/ file':>7}")
    for name, t, rss in rows:
        print(f"{name:<24} {t:8.2f} {t / replay:9.2f} {t / bare:8.2f} "
              f"{rss / 1e6:8.0f} {rss / size:7.2f}")


if __name__ == "__main__":
    main()
