"""GEMMs of many shapes in fp32, bf16 and fp8: what precision buys per kernel.

For each precision, one PyTorch-profiler trace (``record_shapes``) of every
shape run ``--reps`` times, each shape inside a ``record_function`` range
named ``gemm MxNxK``, and the profiler-free time of each (CUDA events,
median of ``--timed`` runs). fp32 runs with TF32 off (PyTorch's default for
matmuls); bf16 through ``torch.mm``; fp8 through ``torch._scaled_mm`` (e4m3
operands, tensorwise scales, bf16 result), as Transformer Engine's and
torchao's fp8 GEMMs run. The shapes run from small to large, and include
BERT-base's and GPT-2's linear layers at 4096 tokens.

Writes ``gemm_fp32.pt.trace.json.gz``, ``gemm_bf16...``, ``gemm_fp8...``
and ``gemms.json`` (versions, and per shape and precision the median time).

Usage::

    python3 gemms.py --out DIR
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import sys

import torch

SHAPES = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
          (4096, 4096, 4096), (8192, 8192, 8192),
          (4096, 768, 768), (4096, 3072, 768), (4096, 768, 3072),
          (4096, 2304, 768), (16384, 4096, 4096), (8192, 1024, 8192)]


def operands(prec, m, n, k):
    dev = torch.device("cuda")
    if prec == "fp8":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16)
    dtype = torch.float32 if prec == "fp32" else torch.bfloat16
    a = torch.randn(m, k, device=dev, dtype=dtype)
    b = torch.randn(k, n, device=dev, dtype=dtype)
    return lambda: torch.mm(a, b)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--timed", type=int, default=20)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gemms.py: no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "reps": args.reps, "timed": args.timed,
           "shapes": []}
    times = {}
    for prec in ("fp32", "bf16", "fp8"):
        runs = [(s, operands(prec, *s)) for s in SHAPES]
        for s, f in runs:  # warm up: cuBLAS heuristics, allocator
            for _ in range(3):
                f()
        torch.cuda.synchronize()
        for s, f in runs:
            ms = []
            for _ in range(args.timed):
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                f()
                b.record()
                b.synchronize()
                ms.append(a.elapsed_time(b))
            times[(prec, s)] = statistics.median(ms)
        raw = os.path.join(args.out, f"gemm_{prec}.pt.trace.json")
        acts = [torch.profiler.ProfilerActivity.CPU,
                torch.profiler.ProfilerActivity.CUDA]
        sched = torch.profiler.schedule(wait=0, warmup=1, active=1,
                                        repeat=1)
        with torch.profiler.profile(
                activities=acts, schedule=sched, record_shapes=True,
                on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
            for _ in range(2):  # a warm-up step, then the one kept
                for s, f in runs:
                    with torch.profiler.record_function(
                            "gemm %dx%dx%d" % s):
                        for _ in range(args.reps):
                            f()
                torch.cuda.synchronize()
                prof.step()
        with open(raw, "rb") as fi, gzip.open(raw + ".gz", "wb", 9) as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(raw)
        print(prec, " ".join("%.4f" % times[(prec, s)] for s in SHAPES),
              flush=True)
    for s in SHAPES:
        doc["shapes"].append({"m": s[0], "n": s[1], "k": s[2],
                              **{f"{p}_ms": round(times[(p, s)], 5)
                                 for p in ("fp32", "bf16", "fp8")}})
    with open(os.path.join(args.out, "gemms.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
