#!/usr/bin/env python3
"""std.layers (issue 37): the blocks it finds are the models' own, and its
predictions behave.

usage: check_layers_model.py DDSCRIPT DATA_DIR

- The blocks found: GPT-2 small's and BERT-base's 12 transformer layers;
  ResNet-50's third stage (6 bottlenecks, 13 operator layers each, the
  stage a ResNet-101 deepens); the parameters in GPT-2's blocks within a
  point of the architectures': 12 x 7,087,872 = 85.05 M parameters of
  GPT-2 small's 124.44 M (68.3%) and of BERT-base's 109.48 M (77.7%).
- layers = the traced count is the replay to the nanosecond.
- More blocks never make the step faster: layers = 6, 12, 18, 24 give
  predictions that never fall, on GPT-2 and BERT.
- Activation memory follows the blocks: on GPT-2 with memory records the
  predicted peak is the replay's at 12 blocks, above it at 24, below at 6.
- A trace with no repeated sequence of layers is refused, exit 2.
"""
import os
import re
import sys

from model_check import expect_refusal, fail, identity_problems, run_model


def blocks(r):
    m = re.search(r"^blocks (\d+) of (\d+) layers .*?([0-9.]+)% of the "
                  r"parameters", r["output"], re.M)
    if not m:
        fail("no blocks line in " + r["output"])
    return int(m[1]), int(m[2]), float(m[3])


def main():
    ddscript, data = sys.argv[1], sys.argv[2]
    gt = os.path.join(data, "groundtruth")
    want = {"gpt2": (12, None, 68.3), "bert": (12, None, 77.7),
            "resnet50": (6, 13, None)}
    for model, (count, period, params) in want.items():
        trace = os.path.join(gt, f"{model}_baseline.pt.trace.json.gz")
        r = run_model(ddscript, "layers", trace)
        n, p, share = blocks(r)
        if n != count or (period and p != period):
            fail(f"{model}: {n} blocks of {p} layers, want {count}"
                 f"{f' of {period}' if period else ''}")
        if params and abs(share - params) > 1.0:
            fail(f"{model}: the blocks hold {share}% of the parameters, "
                 f"want {params}% within a point")
        for problem in identity_problems(r):
            fail(f"{model}: layers as traced {problem}")
        if model == "resnet50":
            continue
        last = 0
        for layers in (6, 12, 18, 24):
            t = run_model(ddscript, "layers", trace, f"layers={layers}")["predicted_ns"]
            if t < last:
                fail(f"{model}: layers = {layers} predicts {t} ns, faster "
                     f"than {last} ns with fewer")
            last = t
    # Activation memory: N blocks keep N blocks' saved tensors (a trace with
    # memory records): the peak stays at 12, grows at 24, falls at 6.
    mem = os.path.join(gt, "memory", "gpt2_baseline.pt.trace.json.gz")
    peaks = {n: run_model(ddscript, "layers", mem, f"layers={n}")
             for n in (6, 12, 24)}
    base = peaks[12]["peak_bytes_baseline"]
    if not (peaks[12]["peak_bytes_predicted"] == base and
            peaks[24]["peak_bytes_predicted"] > base >
            peaks[6]["peak_bytes_predicted"]):
        fail("activation peaks at 6, 12, 24 blocks: " + ", ".join(
            str(peaks[n]["peak_bytes_predicted"]) for n in (6, 12, 24)) +
            f" against {base}")
    expect_refusal(ddscript, "layers",
                   os.path.join(data, "synthetic", "steps_median2.json"),
                   "layers=0", "no sequence of layers repeats")
    print("ok: GPT-2 and BERT 12 blocks, ResNet-50 stage 3's 6; parameter "
          "shares; identity; more layers never faster; activation peaks; a "
          "refusal")


if __name__ == "__main__":
    main()
