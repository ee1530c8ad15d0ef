#!/usr/bin/env python3
"""ddscript's what-if error against runs measured with and without the
optimization (tests/data/groundtruth, recorded on an H200).

usage: check_groundtruth.py DDSCRIPT GROUNDTRUTH_DIR [--markdown]
                           [--cross OTHER_GPU_DIR [--roofline]]

For each baseline/variant pair of the manifest that a standard model
covers, runs `ddscript run MODEL --trace BASELINE` twice, through the same
command a user types:

- on the trace as it is: the predicted speedup applied to the baseline's
  profiler-free time;
- with `--unprofiled BASELINE_TIME`: CPU work scaled to take the profiler's
  overhead out first; the prediction is then a time directly.

Each is compared with the variant's profiler-free time; and the sum of
GPU work in the iteration predicted by `ddscript compare BASELINE VARIANT
--model MODEL` with the variant's trace (kernel time, which the host's CPU
speed does not blur). `--set MODEL:NAME=VALUE` adds a setting to every run
of that model (`--set amp:physical=true`). An error bound is
asserted only with --max-per-event BOUND, on the mean |error| of the
prediction from the trace alone with the per-event model (--unprofiled
per-event; --per-event TIME tries another cost), and with --max-pair BOUND
on each pair's; the check fails where a run
fails, prints no prediction, or where --unprofiled's replay misses the
baseline's time by more than 2% without saying the run is bound by GPU work.
Pairs no model covers are listed as such. --markdown prints the table for
docs/validation.md.

--cross OTHER_GPU_DIR: the same configurations recorded on another GPU
(tests/data/groundtruth/h100). Each is predicted from one GPU's trace for the
other by `stdlib/gpu.dd` (`--set target=`), both ways, and compared with the
other GPU's measured run: the iteration through `ddscript compare` (trace
against trace), the profiler-free time through `run --unprofiled`, and the
sum of GPU work (kernel time, which the hosts do not blur), each beside the
naive guess "the same time". --roofline runs gpu.dd with roofline = true.
"""
import json
import os
import subprocess
import sys

# variant -> (model: a stdlib name or a path from the repository root,
# settings: a list, or per workload a dict with "*" for the others). The
# settings say what the variant did, never what fits its measurement.
MODELS = {
    "amp": ("amp", ["grad_scaler=false", "half_type=bf16"]),
    "amp_fp16": ("amp", []),
    # fp8 GEMMs on the linear layers, the rest in bf16 autocast.
    "amp_fp8": ("amp", ["grad_scaler=false", "half_type=bf16",
                        "physical=true", "precision=fp8"]),
    "fused_adam": ("fused_adam", []),
    "batch2x": ("batch", ["factor=2"]),
    "workers4": ("dataloader", ["workers=4"]),
    # gradient_checkpointing_enable() recomputes each of the 12 blocks:
    # 13 segments, the last (the head) kept; ResNet-50 ran
    # checkpoint_sequential with 4 segments.
    "checkpoint": ("models/checkpointing.dd",
                   {"resnet50": ["segments=4"], "*": ["segments=13"]}),
    # save_on_cpu copies every saved tensor to the host and back.
    "offload": ("models/save_on_cpu.dd", []),
    # torch.compile(model), default mode; the whole step captured as one
    # CUDA graph (train.py's cudagraph: capturable Adam inside).
    "compile": ("compile", []),
    "cudagraph": ("cuda_graphs", ["region=step"]),
}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def model_for(variant, workload):
    """The model file (or stdlib name) and settings for a variant, or None
    where the repository has no such model."""
    spec = MODELS.get(variant)
    if not spec:
        return None
    model, settings = spec
    if isinstance(settings, dict):
        settings = settings.get(workload, settings["*"])
    if "/" in model:
        model = os.path.join(ROOT, model)
        if not os.path.exists(model):
            return None
    elif not os.path.exists(os.path.join(ROOT, "stdlib", model + ".dd")):
        return None
    return model, settings


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout), p.stderr


# deviceProperties name -> the catalogue's key (src/ops/Gpus.def)
TARGETS = {"NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100"}


def configurations(gt):
    man = json.load(open(os.path.join(gt, "manifest.json")))
    return man, {(c["model"], c["variant"]): c
                 for c in man["configurations"]}


def cross(ddscript, gt, other, markdown, extra=()):
    """gpu.dd from each GPU's traces to the other's, against measurement."""
    _, here = configurations(gt)
    _, there = configurations(other)
    rows, errs = [], {"iter": [], "unprof": [], "gpu": [], "naive": []}
    for key in sorted(set(here) & set(there)):
        for (sdir, src), (ddir, dst) in (((gt, here[key]), (other,
                                                            there[key])),
                                         ((other, there[key]),
                                          (gt, here[key]))):
            target = TARGETS.get(dst["gpu"])
            if not target:
                sys.exit(f"FAIL: no catalogue key for '{dst['gpu']}'")
            a = os.path.join(sdir, src["trace"])
            b = os.path.join(ddir, dst["trace"])
            cmp_, _ = run([ddscript, "compare", a, b, "--model", "gpu",
                           "--set", f"target={target}", "--format", "json",
                           *extra])
            unprof, _ = run([ddscript, "run", "gpu", "--trace", a, "--set",
                             f"target={target}", "--format", "json",
                             "--unprofiled", f"{src['measured_ms']}ms",
                             *extra])
            work = cmp_["breakdown"][0]
            if work["what"] != "GPU work (sum)" or not unprof.get(
                    "predicted_ns") or cmp_.get("error") is None:
                sys.exit(f"FAIL: {key} -> {target}: no prediction")
            r = {"what": f"{key[0]} {key[1]}: "
                         f"{TARGETS.get(src['gpu'], src['gpu'])} -> {target}",
                 "src": src["measured_ms"], "dst": dst["measured_ms"],
                 "unprof": unprof["predicted_ns"] / 1e6,
                 "iter_err": cmp_["error"],
                 "gpu": (work["before_ns"], work["after_ns"],
                         work["predicted_ns"])}
            r["unprof_err"] = r["unprof"] / r["dst"] - 1
            r["naive_err"] = r["src"] / r["dst"] - 1
            r["gpu_err"] = r["gpu"][2] / r["gpu"][1] - 1
            r["gpu_naive"] = r["gpu"][0] / r["gpu"][1] - 1
            rows.append(r)
            errs["iter"].append(abs(r["iter_err"]))
            errs["unprof"].append(abs(r["unprof_err"]))
            errs["gpu"].append(abs(r["gpu_err"]))
            errs["naive"].append(abs(r["naive_err"]))
    if markdown:
        print("| configuration: from -> to | measured on from | on to | "
              "predicted (--unprofiled) | error | \"same time\" | "
              "traced iteration: error | GPU work: from, to, predicted "
              "| error | \"same time\" |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        line = [r["what"], f"{r['src']:.2f} ms", f"{r['dst']:.2f} ms",
                f"{r['unprof']:.2f} ms", f"{r['unprof_err']:+.1%}",
                f"{r['naive_err']:+.1%}", f"{r['iter_err']:+.1%}",
                ", ".join(f"{v / 1e6:.2f}" for v in r["gpu"]) + " ms",
                f"{r['gpu_err']:+.1%}", f"{r['gpu_naive']:+.1%}"]
        print(("| " + " | ".join(line) + " |") if markdown
              else "  ".join(line))
    if rows:
        n = len(rows)
        mean = {k: sum(v) / n for k, v in errs.items()}
        print(f"\nmean |error| over {n} cross-GPU predictions: profiler-free "
              f"{mean['unprof']:.1%} (\"same time\" {mean['naive']:.1%}), "
              f"traced iteration {mean['iter']:.1%}, GPU work "
              f"{mean['gpu']:.1%}")


def main(argv):
    ddscript, gt = argv[0], argv[1]
    markdown = "--markdown" in argv[2:]
    if "--cross" in argv[2:]:
        extra = ["--set", "roofline=true"] if "--roofline" in argv else []
        cross(ddscript, gt, argv[argv.index("--cross") + 1], markdown, extra)
        return
    # --set MODEL:NAME=VALUE adds a setting to every run of MODEL (a stdlib
    # name or a file's stem), e.g. --set amp:physical=true.
    more = {}
    for i, a in enumerate(argv):
        if a == "--set" and i + 1 < len(argv) and ":" in argv[i + 1]:
            m, kv = argv[i + 1].split(":", 1)
            more.setdefault(m, []).append(kv)
    # --variant NAME=MODEL[:SETTING,...] predicts that variant with another
    # model (std.shape's batch against std.batch's, say); --only NAME keeps
    # that variant's pairs alone.
    for i, a in enumerate(argv):
        if a == "--variant" and i + 1 < len(argv):
            name, spec = argv[i + 1].split("=", 1)
            model, _, sets = spec.partition(":")
            MODELS[name] = (model, [x for x in sets.split(",") if x])
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    man = json.load(open(os.path.join(gt, "manifest.json")))
    if only:
        man["pairs"] = [p for p in man["pairs"] if p["variant"] == only]
        if not man["pairs"]:
            sys.exit(f"FAIL: no pair of variant {only}")
    conf = {(c["model"], c["variant"]): c for c in man["configurations"]}
    rows, errors_trace, errors_unprof, errors_gpu = [], [], [], []
    errors_perev = []
    per_event = "per-event"
    if "--per-event" in argv:
        per_event += "=" + argv[argv.index("--per-event") + 1]
    for p in man["pairs"]:
        base = conf[(p["model"], p["baseline"])]
        var = conf[(p["model"], p["variant"])]
        spec = model_for(p["variant"], p["model"])
        row = {"pair": f"{p['model']} {p['baseline']} -> {p['variant']}",
               "base": base["measured_ms"], "var": var["measured_ms"],
               "spread": var["spread_ms"]}
        rows.append(row)
        if not spec:
            continue
        model, settings = spec
        # A --set for the model replaces the variant's own setting of that
        # name.
        extra = more.get(os.path.splitext(os.path.basename(model))[0], [])
        names = {e.split("=", 1)[0] for e in extra}
        settings = [s for s in settings
                    if s.split("=", 1)[0] not in names] + extra
        trace = os.path.join(gt, base["trace"])
        cmd = [ddscript, "run", model, "--trace", trace, "--format", "json"]
        for s in settings:
            cmd += ["--set", s]
        plain, _ = run(cmd + ["--profiled"])
        unprof, err = run(cmd + ["--unprofiled",
                                 f"{base['measured_ms']}ms"])
        # From the trace alone: the profiler's cost per recorded event
        # taken out (the per-event model), the prediction a time.
        perev, _ = run(cmd + ["--unprofiled", per_event])
        for d in (plain, unprof, perev):
            if not d.get("predicted_ns") or not d.get("speedup"):
                sys.exit(f"FAIL: {row['pair']}: no prediction")
        target = unprof["measured_ns"]
        off = abs(unprof["baseline_ns"] - target) / target
        gpu_bound = "bound by GPU work" in err
        if off > 0.02 and not gpu_bound:
            sys.exit(f"FAIL: {row['pair']}: --unprofiled replays "
                     f"{unprof['baseline_ns']} ns against {target} ns")
        row["model"] = (os.path.relpath(model, ROOT) if "/" in model
                        else model) + "".join(f" {s}" for s in settings)
        row["pred_trace"] = base["measured_ms"] / plain["speedup"]
        row["pred_unprof"] = unprof["predicted_ns"] / 1e6
        row["cpu_scale"] = unprof["cpu_scale"]
        row["cpu_range"] = unprof.get("cpu_scale_range", [1, 1])
        row["gpu_bound"] = gpu_bound
        row["err_trace"] = row["pred_trace"] / row["var"] - 1
        row["err_unprof"] = row["pred_unprof"] / row["var"] - 1
        row["pred_perev"] = perev["predicted_ns"] / 1e6
        row["err_perev"] = row["pred_perev"] / row["var"] - 1
        errors_perev.append(abs(row["err_perev"]))
        # Memory: the predicted peak against the variant's measured peak of
        # allocated memory (torch.cuda.max_memory_allocated).
        if plain.get("peak_bytes_predicted"):
            row["peak_pred"] = plain["peak_bytes_predicted"] / 2**30
            row["peak_var"] = var["peak_allocated_bytes"] / 2**30
            row["peak_base"] = base["peak_allocated_bytes"] / 2**30
        # GPU work (the sum of kernel time in the iteration, which the host's
        # CPU speed does not blur): predicted from the baseline's trace by
        # `compare`, against the variant's trace where it is kept (the
        # repository keeps some variants' timings only: tests/data/groundtruth/
        # README.md).
        var_trace = os.path.join(gt, var["trace"] or "")
        if var["trace"] and os.path.exists(var_trace):
            cmp_cmd = [ddscript, "compare", trace, var_trace, "--model",
                       model, "--format", "json"]
            for s in settings:
                cmp_cmd += ["--set", s]
            cmp, _ = run(cmp_cmd)
            gpu = next(b for b in cmp["breakdown"]
                       if b["what"] == "GPU work (sum)")
            row["gpu"] = [gpu["before_ns"] / 1e6, gpu["after_ns"] / 1e6,
                          gpu["predicted_ns"] / 1e6]
            row["err_gpu"] = gpu["predicted_ns"] / gpu["after_ns"] - 1
            errors_gpu.append(abs(row["err_gpu"]))
        errors_trace.append(abs(row["err_trace"]))
        errors_unprof.append(abs(row["err_unprof"]))

    if markdown:
        print("| pair | measured before | measured after (runs) | ddscript "
              "model | from the trace, profiled | error | from the trace, "
              "per-event model | error | with --unprofiled | error | "
              "GPU work: before, after, predicted | "
              "peak memory: before, after, predicted |")
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        spread = f"{r['spread'][0]:.1f}-{r['spread'][1]:.1f}"
        if "model" not in r:
            line = [r["pair"], f"{r['base']:.2f} ms",
                    f"{r['var']:.2f} ms ({spread})", "no model yet", "", "",
                    "", "", "", "", "", ""]
        else:
            note = " (GPU-bound: knee)" if r["gpu_bound"] else ""
            line = [r["pair"], f"{r['base']:.2f} ms",
                    f"{r['var']:.2f} ms ({spread})", r["model"],
                    f"{r['pred_trace']:.2f} ms", f"{r['err_trace']:+.1%}",
                    f"{r['pred_perev']:.2f} ms", f"{r['err_perev']:+.1%}",
                    f"{r['pred_unprof']:.2f} ms, CPU x{r['cpu_scale']:.2f}"
                    + (f" (fits x{r['cpu_range'][0]:.2f}-"
                       f"{r['cpu_range'][1]:.2f})"
                       if r["cpu_range"][1] > 2 * r["cpu_range"][0] else "")
                    + note, f"{r['err_unprof']:+.1%}",
                    (f"{r['gpu'][0]:.2f}, {r['gpu'][1]:.2f}, "
                     f"{r['gpu'][2]:.2f} ms ({r['err_gpu']:+.1%})")
                    if "gpu" in r else "(trace not kept)",
                    (f"{r['peak_base']:.2f}, {r['peak_var']:.2f}, "
                     f"{r['peak_pred']:.2f} GiB "
                     f"({r['peak_pred'] / r['peak_var'] - 1:+.1%})")
                    if "peak_pred" in r else ""]
        print(("| " + " | ".join(line) + " |") if markdown
              else "  ".join(line))
    if errors_trace:
        n = len(errors_trace)
        print(f"\nmean |error| over {n} predictions: from the trace "
              f"{sum(errors_trace) / n:.1%} (profiled), "
              f"{sum(errors_perev) / n:.1%} (per-event model, max "
              f"{max(errors_perev):.1%}), with --unprofiled "
              f"{sum(errors_unprof) / n:.1%}; GPU work "
              f"{sum(errors_gpu) / max(1, len(errors_gpu)):.1%}"
              + (f" over {len(errors_gpu)}" if len(errors_gpu) != n else ""))
        if "--max-pair" in argv:
            bound = float(argv[argv.index("--max-pair") + 1])
            for r in rows:
                if abs(r.get("err_perev", 0)) > bound:
                    sys.exit(f"FAIL: {r['pair']}: the per-event model misses "
                             f"by {r['err_perev']:+.1%}, more than "
                             f"{bound:.1%}")
        if "--max-per-event" in argv:
            bound = float(argv[argv.index("--max-per-event") + 1])
            mean = sum(errors_perev) / n
            if mean > bound:
                sys.exit(f"FAIL: the per-event model's mean |error| "
                         f"{mean:.1%} is above {bound:.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
