#!/usr/bin/env python3
"""ddscript's what-if error against runs measured with and without the
optimization (tests/data/groundtruth, recorded on an H200).

usage: check_groundtruth.py DDSCRIPT GROUNDTRUTH_DIR [--markdown]

For each baseline/variant pair of the manifest that a standard model
covers, runs `ddscript run MODEL --trace BASELINE` twice, through the same
command a user types:

- on the trace as it is: the predicted speedup applied to the baseline's
  profiler-free time;
- with `--unprofiled BASELINE_TIME`: CPU work scaled to take the profiler's
  overhead out first; the prediction is then a time directly.

Each is compared with the variant's profiler-free time. No error bound is
asserted yet (first we learn where we stand); the check fails where a run
fails, prints no prediction, or where --unprofiled's replay misses the
baseline's time by more than 2% without saying the run is bound by GPU work.
Pairs no model covers are listed as such. --markdown prints the table for
docs/validation.md.
"""
import json
import os
import subprocess
import sys

# variant -> (standard model, settings, what the settings say)
MODELS = {
    "amp": ("amp", ["grad_scaler=false"]),
    "amp_fp16": ("amp", []),
    "fused_adam": ("fused_adam", []),
    "batch2x": ("batch", ["factor=2"]),
    "workers4": ("dataloader", ["workers=4"]),
}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout), p.stderr


def main(argv):
    ddscript, gt = argv[0], argv[1]
    markdown = "--markdown" in argv[2:]
    man = json.load(open(os.path.join(gt, "manifest.json")))
    conf = {(c["model"], c["variant"]): c for c in man["configurations"]}
    rows, errors_trace, errors_unprof = [], [], []
    stdlib = os.path.join(os.path.dirname(__file__), "..", "..", "stdlib")
    for p in man["pairs"]:
        base = conf[(p["model"], p["baseline"])]
        var = conf[(p["model"], p["variant"])]
        spec = MODELS.get(p["variant"])
        if spec and not os.path.exists(os.path.join(stdlib,
                                                    spec[0] + ".dd")):
            spec = None
        row = {"pair": f"{p['model']} {p['baseline']} -> {p['variant']}",
               "base": base["measured_ms"], "var": var["measured_ms"],
               "spread": var["spread_ms"]}
        rows.append(row)
        if not spec:
            continue
        model, settings = spec
        trace = os.path.join(gt, base["trace"])
        cmd = [ddscript, "run", model, "--trace", trace, "--format", "json"]
        for s in settings:
            cmd += ["--set", s]
        plain, _ = run(cmd)
        unprof, err = run(cmd + ["--unprofiled",
                                 f"{base['measured_ms']}ms"])
        for d in (plain, unprof):
            if not d.get("predicted_ns") or not d.get("speedup"):
                sys.exit(f"FAIL: {row['pair']}: no prediction")
        target = unprof["measured_ns"]
        off = abs(unprof["baseline_ns"] - target) / target
        gpu_bound = "bound by GPU work" in err
        if off > 0.02 and not gpu_bound:
            sys.exit(f"FAIL: {row['pair']}: --unprofiled replays "
                     f"{unprof['baseline_ns']} ns against {target} ns")
        row["model"] = model + "".join(f" {s}" for s in settings)
        row["pred_trace"] = base["measured_ms"] / plain["speedup"]
        row["pred_unprof"] = unprof["predicted_ns"] / 1e6
        row["cpu_scale"] = unprof["cpu_scale"]
        row["gpu_bound"] = gpu_bound
        row["err_trace"] = row["pred_trace"] / row["var"] - 1
        row["err_unprof"] = row["pred_unprof"] / row["var"] - 1
        # Memory: the predicted peak against the variant's measured peak of
        # allocated memory (torch.cuda.max_memory_allocated).
        if plain.get("peak_bytes_predicted"):
            row["peak_pred"] = plain["peak_bytes_predicted"] / 2**30
            row["peak_var"] = var["peak_allocated_bytes"] / 2**30
            row["peak_base"] = base["peak_allocated_bytes"] / 2**30
        errors_trace.append(abs(row["err_trace"]))
        errors_unprof.append(abs(row["err_unprof"]))

    if markdown:
        print("| pair | measured before | measured after (runs) | ddscript "
              "model | from the trace | error | with --unprofiled | error | "
              "peak memory: before, after, predicted |")
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        spread = f"{r['spread'][0]:.1f}-{r['spread'][1]:.1f}"
        if "model" not in r:
            line = [r["pair"], f"{r['base']:.2f} ms",
                    f"{r['var']:.2f} ms ({spread})", "no model yet", "", "",
                    "", "", ""]
        else:
            note = " (GPU-bound: knee)" if r["gpu_bound"] else ""
            line = [r["pair"], f"{r['base']:.2f} ms",
                    f"{r['var']:.2f} ms ({spread})", r["model"],
                    f"{r['pred_trace']:.2f} ms", f"{r['err_trace']:+.1%}",
                    f"{r['pred_unprof']:.2f} ms, CPU x{r['cpu_scale']:.2f}"
                    f"{note}", f"{r['err_unprof']:+.1%}",
                    (f"{r['peak_base']:.2f}, {r['peak_var']:.2f}, "
                     f"{r['peak_pred']:.2f} GiB "
                     f"({r['peak_pred'] / r['peak_var'] - 1:+.1%})")
                    if "peak_pred" in r else ""]
        print(("| " + " | ".join(line) + " |") if markdown
              else "  ".join(line))
    if errors_trace:
        n = len(errors_trace)
        print(f"\nmean |error| over {n} predictions: from the trace "
              f"{sum(errors_trace) / n:.1%}, with --unprofiled "
              f"{sum(errors_unprof) / n:.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
