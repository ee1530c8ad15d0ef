#!/usr/bin/env python3
"""Steps detected in traces without step markers.

usage: check_detected_steps.py DDSCRIPT DATA_DIR

Each trace below loses its ProfilerStep# and Optimizer.step# ranges (what an
inference loop or a micro-benchmark records); ddscript must then find the
step from the repeating GPU work and say so, and replay, run and compare must
work on it. Where the trace had markers, the detected steady-state step must
last what the marked one lasted, within 3%. The Qwen trace is a recorded
inference loop: one ProfilerStep around 17 decode steps, found as 17.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

# trace, GPU tasks per step, detected repeats, marked steps to compare with
CASES = [
    ("hta/v100_ns_resolution_rank0.json.gz", 1219, 5, True),
    ("kineto/resnet50_v100_workers0.pt.trace.json.gz", 1516, 6, True),
    ("tracelens/h100_qwen0.5b_inference.json.gz", 49, 17, False),
]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def strip(src, dst):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = [
        e for e in doc["traceEvents"]
        if not str(e.get("name", "")).startswith(("ProfilerStep#",
                                                   "Optimizer.step#"))]
    with open(dst, "w") as f:
        json.dump(doc, f)


def main(argv):
    ddscript, data = argv
    with tempfile.TemporaryDirectory() as tmp:
        for rel, period, repeats, marked in CASES:
            src = os.path.join(data, rel)
            bare = os.path.join(tmp, os.path.basename(rel).split(".")[0] +
                                ".json")
            strip(src, bare)
            facts = json.loads(run([ddscript, "inspect", "--trace", bare,
                                    "--format", "json"]))
            note = json.dumps(facts)
            want = (f"detected: a period of {period} GPU tasks repeated "
                    f"{repeats} times")
            if want not in note:
                sys.exit(f"FAIL: {rel}: inspect does not say '{want}'")
            rep = json.loads(run([ddscript, "replay", "--trace", bare,
                                  "--format", "json"]))
            if "(detected)" not in rep["label"]:
                sys.exit(f"FAIL: {rel}: the step is labelled {rep['label']}")
            if rep["replayed_ns"] != rep["measured_ns"]:
                sys.exit(f"FAIL: {rel}: a detected step replays "
                         f"{rep['replayed_ns']} against {rep['measured_ns']}")
            if marked:
                orig = json.loads(run([ddscript, "replay", "--trace", src,
                                       "--format", "json"]))
                off = rep["measured_ns"] / orig["measured_ns"] - 1
                if abs(off) > 0.03:
                    sys.exit(f"FAIL: {rel}: the detected step lasts "
                             f"{rep['measured_ns']} ns, the marked one "
                             f"{orig['measured_ns']} ns ({off:+.1%})")
            pred = json.loads(run([ddscript, "run", "amp", "--trace", bare,
                                   "--format", "json"]))
            if not pred.get("predicted_ns"):
                sys.exit(f"FAIL: {rel}: run amp predicts nothing")
            cmp_ = json.loads(run([ddscript, "compare", bare, bare,
                                   "--format", "json"]))
            if "detected" not in json.dumps(cmp_):
                sys.exit(f"FAIL: {rel}: compare does not use the detected "
                         f"step")
            print(f"ok  {rel}: {want}; step {rep['label']} "
                  f"{rep['measured_ns'] / 1e6:.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
