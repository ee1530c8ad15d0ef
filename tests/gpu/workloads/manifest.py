"""Builds tests/data/groundtruth/manifest.json from runs.jsonl.

runs.jsonl holds every profiler-free timing that train.py printed, one JSON
object per line, with the pass it came from:

- ``traced``: the run that also wrote the configuration's trace (timed
  before the profiler started, in the same process);
- ``repeat``: a later run in a process that ran other configurations;
- ``fresh1``, ``fresh2``: each configuration alone in a fresh process;
- ``repeat2``, ``repeat3``: later runs like ``repeat``, in later sessions
  (on other hosts with the same GPU).

A configuration timed but not traced (``offload``: its traces are large)
takes its batch, spread and versions from its first pass.

A configuration's measured time is the median of its passes' medians, and
its spread the lowest and highest of them: CPU-bound configurations (AMP on
an H200 launches faster than the GPU runs) differ by up to 1.7x between
runs, more than within one.

Usage: python3 manifest.py DIR   (reads DIR/runs.jsonl, writes DIR/manifest.json)
"""
import json
import os
import statistics
import sys

# Each variant against the configuration it changes one thing of.
PAIRS = {"amp": "baseline", "amp_fp16": "baseline", "amp_fp8": "baseline",
         "fused_adam": "baseline", "batch2x": "baseline",
         "compile": "baseline", "cudagraph": "baseline",
         "checkpoint": "baseline", "offload": "baseline",
         "workers4": "workers0"}
VERSION_KEYS = ["gpu", "sm_count", "gpu_memory_bytes", "driver", "torch",
                "cuda", "cudnn", "python", "allow_tf32_matmul",
                "allow_tf32_cudnn", "cudnn_benchmark"]


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    runs = [json.loads(line) for line in open(os.path.join(d, "runs.jsonl"))]
    configs = {}
    for r in runs:
        if "error" in r:
            continue
        c = configs.setdefault((r["model"], r["variant"]), {"passes": {}})
        c["passes"][r["pass"]] = r["median_ms"]
        c.setdefault("first", r)
        if r["pass"] == "traced":
            c["traced"] = r
    out = {"about": __doc__.split("\n\n")[0], "configurations": [],
           "pairs": []}
    for (model, variant), c in sorted(configs.items()):
        t = c.get("traced", c["first"])
        meds = list(c["passes"].values())
        out["configurations"].append({
            "model": model, "variant": variant, "batch": t["batch"],
            "seq": t["seq"], "trace": t.get("trace"),
            "measured_ms": round(statistics.median(meds), 3),
            "runs_ms": c["passes"],
            "spread_ms": [min(meds), max(meds)],
            "traced_run_p10_p90_ms": [t["p10_ms"], t["p90_ms"]],
            "timed_iterations": t["timed_iterations"],
            "peak_allocated_bytes": t["peak_allocated_bytes"],
            **{k: t[k] for k in VERSION_KEYS}})
    have = {(c["model"], c["variant"]) for c in out["configurations"]}
    for (model, variant) in sorted(have):
        base = PAIRS.get(variant)
        if base and (model, base) in have:
            out["pairs"].append({"model": model, "baseline": base,
                                 "variant": variant})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{len(out['configurations'])} configurations, "
          f"{len(out['pairs'])} pairs")


if __name__ == "__main__":
    main()
