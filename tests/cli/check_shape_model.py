#!/usr/bin/env python3
"""std.shape's properties (issue 37): seq, hidden and batch at 1 are the
replay; each factor above 1 never makes the step faster, and more never
less; the attention kernels grow with the square of the sequence, the
linear layers' GEMMs with the square of the width; bad factors exit 2.

usage: check_shape_model.py DDSCRIPT DATA_DIR
"""
import os
import re
import sys

from model_check import expect_refusal, fail, identity_problems, run_model


def factor(out, row):
    m = re.search(rf"^{row} +\d+ tasks .* x([0-9.e+-]+)$", out, re.M)
    if not m:
        fail(f"no {row!r} row in:\n{out}")
    return float(m[1])


def main():
    ddscript, data = sys.argv[1], sys.argv[2]
    for model in ("gpt2", "bert"):
        trace = os.path.join(data, "groundtruth",
                             f"{model}_baseline.pt.trace.json.gz")
        r = run_model(ddscript, "shape", trace)
        for problem in identity_problems(r):
            fail(f"{model}: factors of 1: {problem}")
        for name in ("seq", "hidden", "batch"):
            last = r["predicted_ns"]
            for f in (1.25, 1.5, 2, 4):
                got = run_model(ddscript, "shape", trace, f"{name}={f}")
                if got["predicted_ns"] < last:
                    fail(f"{model}: {name} = {f} predicts "
                         f"{got['predicted_ns']} ns, under {last} ns")
                last = got["predicted_ns"]
                if name == "seq" and factor(got["output"], "attention") \
                        != f * f:
                    fail(f"{model}: seq = {f}: attention x"
                         f"{factor(got['output'], 'attention')}")
                if name == "hidden" and factor(got["output"],
                                               "linear GEMMs") != f * f:
                    fail(f"{model}: hidden = {f}: linear GEMMs x"
                         f"{factor(got['output'], 'linear GEMMs')}")
    expect_refusal(ddscript, "shape", trace, "seq=0",
                   "seq, hidden and batch are factors above 0")
    print("ok: identity, monotone in seq, hidden and batch on GPT-2 and "
          "BERT; attention by seq^2, linear GEMMs by hidden^2; a refusal")


if __name__ == "__main__":
    main()
