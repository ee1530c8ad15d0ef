#!/usr/bin/env python3
"""amp.dd's physical model, GEMM by GEMM, against GEMMs measured in each
precision (tests/data/groundtruth/gemms, an H100).

usage: check_gemms.py DDSCRIPT GEMMS_DIR [--markdown]

Runs `ddscript run amp --set physical=true` (precision half, then fp8; no
casts, no GradScaler: the trace holds bare GEMMs) on the fp32 trace with
--timeline, sums each shape's predicted kernel time (its `gemm MxNxK`
range's matrix multiplies, in order), and compares it with the same
shape's kernel time in the bf16 and fp8 traces. Checks that GEMMs of at
least 100 GFLOP are predicted within 15% in both precisions (the roofline
holds where the work fills the GPU); smaller ones are reported, not bounded
(their fixed costs do not scale with the peaks).
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

SHAPE = re.compile(r"^gemm (\d+)x(\d+)x(\d+)$")


def measured(path):
    """Per shape (in trace order): the kernel time inside its GPU range."""
    with gzip.open(path) as f:
        ev = json.load(f)["traceEvents"]
    ranges = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev
                    if e.get("cat") == "gpu_user_annotation"
                    and SHAPE.match(e.get("name", "")))
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    out = {}
    for lo, hi, name in ranges:
        out[name] = sum(k["dur"] for k in kernels if lo <= k["ts"] < hi)
    return out


def predicted(dd, trace, precision):
    """Per shape: the predicted kernel time of its matrix multiplies."""
    with tempfile.TemporaryDirectory() as tmp:
        tl = os.path.join(tmp, "timeline.json")
        cmd = [dd, "run", "amp", "--trace", trace, "--set", "physical=true",
               "--set", "grad_scaler=false", "--set", "insert_casts=false",
               "--set", f"precision={precision}", "--timeline", tl]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
        ev = json.load(open(tl))["traceEvents"]
    # The predicted run is the timeline's second process.
    pids = sorted({e["pid"] for e in ev if e.get("ph") == "X"})
    pred = [e for e in ev if e.get("pid") == pids[-1]]
    shapes = sorted((e["ts"], e["name"]) for e in pred
                    if e.get("cat") == "user_annotation"
                    and SHAPE.match(e["name"]))
    per_layer = {}
    for e in pred:
        if e.get("cat") == "kernel":
            layer = e["args"].get("layer", "")
            per_layer[layer] = per_layer.get(layer, 0) + e["dur"]
    # Each shape's matrix multiplies are the layers mm#1, mm#2, ... in
    # order, `reps` per shape.
    layers = sorted((int(k.split("#")[1]), v) for k, v in per_layer.items()
                    if re.match(r"^mm#\d+$", k))
    reps = len(layers) // len(shapes)
    if reps * len(shapes) != len(layers):
        sys.exit(f"FAIL: {len(layers)} matrix multiplies for "
                 f"{len(shapes)} shapes")
    return {name: sum(v for _, v in layers[i * reps:(i + 1) * reps])
            for i, (_, name) in enumerate(shapes)}


def main():
    dd, d = sys.argv[1], sys.argv[2]
    markdown = "--markdown" in sys.argv
    fp32 = measured(os.path.join(d, "gemm_fp32.pt.trace.json.gz"))
    meas = {p: measured(os.path.join(d, f"gemm_{p}.pt.trace.json.gz"))
            for p in ("bf16", "fp8")}
    trace = os.path.join(d, "gemm_fp32.pt.trace.json.gz")
    pred = {"bf16": predicted(dd, trace, "half"),
            "fp8": predicted(dd, trace, "fp8")}
    failed = False
    rows = []
    for name in fp32:
        m, n, k = map(int, SHAPE.match(name).groups())
        gflop = 2 * m * n * k / 1e9
        r = [name, gflop, fp32[name]]
        for p in ("bf16", "fp8"):
            err = pred[p][name] / meas[p][name] - 1
            r += [meas[p][name], pred[p][name], err]
            if gflop >= 100 and abs(err) > 0.15:
                failed = True
        rows.append(r)
    if markdown:
        print("| GEMM (M x N x K) | GFLOP | fp32 | bf16 | predicted | error "
              "| fp8 | predicted | error |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r[0][5:]} | {r[1]:.1f} | {r[2]:.1f} us | {r[3]:.1f} us"
                  f" | {r[4]:.1f} us | {r[5]:+.1%} | {r[6]:.1f} us | "
                  f"{r[7]:.1f} us | {r[8]:+.1%} |")
    else:
        for r in rows:
            print(f"{r[0]:24} {r[1]:8.1f} GFLOP  fp32 {r[2]:9.1f} us  bf16 "
                  f"{r[3]:8.1f} pred {r[4]:8.1f} ({r[5]:+.1%})  fp8 "
                  f"{r[6]:8.1f} pred {r[7]:8.1f} ({r[8]:+.1%})")
    if failed:
        print("FAIL: a GEMM of 100 GFLOP or more off by more than 15%")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
