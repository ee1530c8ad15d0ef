"""Ground-truth training runs for ddscript's what-if validation.

Each run trains one model in one variant on synthetic data (nothing is
downloaded; models are built from their configuration with random weights)
and writes

- ``MODEL_VARIANT.pt.trace.json.gz``: a PyTorch-profiler (Kineto) trace of a
  few steady iterations (``record_shapes``, ``profile_memory``,
  ``ProfilerStep#`` markers);
- ``MODEL_VARIANT.json``: the iteration time measured *without* the profiler
  (median, spread over ``--timed`` iterations), the peak of allocated GPU
  memory, and the versions of everything that matters.

Usage (one process runs several configurations in turn)::

    python3 train.py --out DIR --models resnet50,bert,gpt2 \
        --variants baseline,amp,fused_adam,batch2x

Variants (each changes one thing against ``baseline``):

- ``baseline``: fp32, ``torch.optim.Adam(foreach=False)``, a host-to-device
  copy of a pinned batch and a ``loss.item()`` (as logging loops do) every
  iteration;
- ``amp``: the forward pass and loss under ``torch.autocast`` (bf16; bf16
  needs no gradient scaler);
- ``amp_fp16``: autocast to fp16 with a ``torch.amp.GradScaler`` (scaled
  loss, unscale and inf check before the step, scale update after);
- ``amp_fp8``: ``amp`` with the GEMMs of the ``nn.Linear`` (and transformers'
  ``Conv1D``) layers whose dimensions are multiples of 16 in fp8, as
  Transformer Engine and torchao's float8 training run them: activations
  and weights cast to e4m3, gradients to e5m2, one scale per tensor from its
  current absolute maximum, ``torch._scaled_mm`` for the forward and both
  backward GEMMs, the casts compiled by ``torch.compile`` (``--fp8-casts
  eager`` leaves them unfused); other layers stay in bf16 (transformers
  only: ResNet-50's convolutions have no fp8 path in PyTorch);
- ``fused_adam``: ``Adam(fused=True)``;
- ``batch2x``: twice the batch;
- ``compile``: the model through ``torch.compile`` (default mode);
- ``cudagraph``: the whole step (forward, backward, optimizer) captured once
  in a CUDA graph and replayed; Adam needs ``capturable=True`` for that;
- ``checkpoint``: activation checkpointing as users switch it on: the
  transformers through ``gradient_checkpointing_enable()`` (every block
  recomputed in backward), ResNet-50 through ``checkpoint_sequential`` over
  its stem, 16 bottlenecks and head in 4 segments (the first 3 recomputed);
  both with ``use_reentrant=False``;
- ``offload``: every tensor autograd saves in forward kept in pinned host
  memory (``torch.autograd.graph.save_on_cpu(pin_memory=True)``) and copied
  back in backward;
- ``workers0`` / ``workers4`` (ResNet-50 only): batches from a DataLoader
  that decodes JPEG images and augments them (RandomResizedCrop, flip,
  normalise), with 0 or 4 worker processes.
"""
import argparse
import contextlib
import gc
import gzip
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import traceback

import torch

BATCH = {"resnet50": 64, "mobilenet_v2": 64, "bert": 32, "gpt2": 8}
SEQ = {"bert": 128, "gpt2": 512}
VARIANTS = ["baseline", "amp", "amp_fp16", "amp_fp8", "fused_adam", "batch2x", "compile",
            "cudagraph", "checkpoint", "offload", "workers0", "workers4"]
CHECKPOINT_SEGMENTS = 4  # ResNet-50's checkpoint_sequential


def build_model(name):
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None, num_classes=1000)
    if name == "mobilenet_v2":  # batch norm after every convolution
        import torchvision
        return torchvision.models.mobilenet_v2(weights=None, num_classes=1000)
    if name == "bert":
        from transformers import BertConfig, BertForMaskedLM
        return BertForMaskedLM(BertConfig())  # BERT-base: 12 x 768
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        return GPT2LMHeadModel(GPT2Config())  # GPT-2 small: 12 x 768
    raise SystemExit(f"train.py: unknown model '{name}'")


def host_batch(name, batch):
    """A pinned host batch (inputs, labels)."""
    g = torch.Generator().manual_seed(0)
    if name in ("resnet50", "mobilenet_v2"):
        x = torch.randn(batch, 3, 224, 224, generator=g)
        y = torch.randint(0, 1000, (batch,), generator=g)
    else:
        x = torch.randint(0, 30000, (batch, SEQ[name]), generator=g)
        y = x.clone()
    return x.pin_memory(), y.pin_memory()


def loss_of(name, model, x, y):
    if name in ("resnet50", "mobilenet_v2"):
        return torch.nn.functional.cross_entropy(model(x), y)
    return model(input_ids=x, labels=y).loss


def checkpointed(name, model):
    """The model with activation checkpointing switched on, as users do."""
    if name != "resnet50":
        model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": False})
        return model
    from torch.utils.checkpoint import checkpoint_sequential
    m = model
    seq = torch.nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool, *m.layer1,
                              *m.layer2, *m.layer3, *m.layer4, m.avgpool,
                              torch.nn.Flatten(1), m.fc)

    class Checkpointed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = seq

        def forward(self, x):
            return checkpoint_sequential(self.seq, CHECKPOINT_SEGMENTS, x,
                                         use_reentrant=False)
    return Checkpointed()


# --- fp8 GEMMs with tensorwise scales ---------------------------------------

FP8_FWD = torch.float8_e4m3fn  # activations and weights
FP8_BWD = torch.float8_e5m2    # gradients


def _fp8_cast(t, dtype):
    """t scaled into dtype's range by its current absolute maximum, and the
    factor that undoes the scale (what _scaled_mm multiplies back)."""
    fmax = torch.finfo(dtype).max
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = fmax / amax
    q = (t.float() * scale).clamp(-fmax, fmax).to(dtype)
    return q, scale.reciprocal()


FP8_CAST = {"fn": _fp8_cast}
FP8_WGRAD_DTYPE = {"dtype": torch.float32}


def fp8_cast(t, dtype):
    q, inv = FP8_CAST["fn"](t.detach(), dtype)
    return q.contiguous(), inv


def _scaled_mm(a, b, sa, sb, dtype):
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=dtype)


class Fp8Matmul(torch.autograd.Function):
    """y = x w^T (x: M x K, w: N x K) with both operands in e4m3 and the
    gradient in e5m2; the three GEMMs on fp8 tensor cores."""

    @staticmethod
    def forward(ctx, x, w):
        xq, xs = fp8_cast(x, FP8_FWD)
        wq, ws = fp8_cast(w, FP8_FWD)
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.dtypes = (x.dtype, w.dtype)
        # _scaled_mm takes A row-major and B column-major.
        return _scaled_mm(xq, wq.t(), xs, ws, torch.bfloat16)

    @staticmethod
    def backward(ctx, gy):
        xq, xs, wq, ws = ctx.saved_tensors
        gq, gs = fp8_cast(gy, FP8_BWD)
        gx = _scaled_mm(gq, wq.t().contiguous().t(), gs, ws, torch.bfloat16)
        gt = gq.t().contiguous()
        xcol = xq.t().contiguous().t()
        try:
            gw = _scaled_mm(gt, xcol, gs, xs, FP8_WGRAD_DTYPE["dtype"])
        except RuntimeError:  # an fp32 result not offered: bf16, then widen
            FP8_WGRAD_DTYPE["dtype"] = torch.bfloat16
            gw = _scaled_mm(gt, xcol, gs, xs, torch.bfloat16)
        return gx.to(ctx.dtypes[0]), gw.to(ctx.dtypes[1])


def fp8_layers(model, casts):
    """Route the eligible linear layers' GEMMs through Fp8Matmul; returns
    how many layers run in fp8 and how many stay in bf16."""
    if casts == "compiled":
        cfg = torch._dynamo.config
        for knob in ("cache_size_limit", "recompile_limit"):
            if hasattr(cfg, knob):
                setattr(cfg, knob, 256)
        FP8_CAST["fn"] = torch.compile(_fp8_cast, dynamic=False)
    else:
        FP8_CAST["fn"] = _fp8_cast
    fp8, kept = 0, 0
    for mod in model.modules():
        if isinstance(mod, torch.nn.Linear):
            transposed = False  # weight: out x in
        elif type(mod).__name__ == "Conv1D":
            transposed = True   # transformers' Conv1D weight: in x out
        else:
            continue
        n_in, n_out = mod.weight.shape[::-1] if not transposed \
            else mod.weight.shape
        if n_in % 16 or n_out % 16:
            kept += 1
            continue
        fp8 += 1

        def forward(x, mod=mod, transposed=transposed):
            lead = x.shape[:-1]
            w = mod.weight.t() if transposed else mod.weight
            y = Fp8Matmul.apply(x.reshape(-1, x.shape[-1]), w)
            if mod.bias is not None:
                y = y + mod.bias.to(y.dtype)
            return y.reshape(*lead, y.shape[-1])
        mod.forward = forward
    return fp8, kept


# --- a DataLoader with a real decode and augment pipeline -------------------

class JpegDataset(torch.utils.data.Dataset):
    """Synthetic photographs: smooth random images encoded as JPEG once,
    decoded and augmented on every access, as an ImageNet loader does."""

    def __init__(self, length, distinct=256, size=(375, 500)):
        import numpy as np
        from PIL import Image
        import torchvision.transforms as T
        rng = np.random.default_rng(0)
        self.jpegs = []
        for _ in range(distinct):
            small = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
            img = Image.fromarray(small).resize((size[1], size[0]),
                                                Image.BICUBIC)
            noise = rng.integers(-20, 20, (size[0], size[1], 3))
            arr = np.clip(np.asarray(img, dtype=np.int16) + noise, 0, 255)
            buf = io.BytesIO()
            Image.fromarray(arr.astype(np.uint8)).save(buf, "JPEG",
                                                       quality=90)
            self.jpegs.append(buf.getvalue())
        self.length = length
        self.transform = T.Compose([
            T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        from PIL import Image
        img = Image.open(io.BytesIO(self.jpegs[i % len(self.jpegs)]))
        return self.transform(img.convert("RGB")), i % 1000


def loader_batches(batch, workers, iterations):
    ds = JpegDataset(batch * (iterations + 8))
    dl = torch.utils.data.DataLoader(
        ds, batch_size=batch, shuffle=True, num_workers=workers,
        pin_memory=True, drop_last=True, persistent_workers=workers > 0)
    return iter(dl)


# --- one configuration -------------------------------------------------------

def versions():
    def smi(q):
        try:
            return subprocess.run(
                ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=20).stdout.strip()
        except Exception as e:  # noqa: BLE001
            return f"unknown ({e})"
    p = torch.cuda.get_device_properties(0)
    return {
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": p.total_memory,
        "sm_count": p.multi_processor_count,
        "driver": smi("driver_version"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32,
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
    }


def run_one(name, variant, args):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    batch = BATCH[name] * (2 if variant == "batch2x" else 1)
    model = build_model(name).to(dev).train()
    params = list(model.parameters())
    fp8 = None
    if variant == "amp_fp8":
        if name == "resnet50":
            raise RuntimeError("amp_fp8: no fp8 convolutions in PyTorch")
        fp8 = fp8_layers(model, args.fp8_casts)
    if variant == "fused_adam":
        opt = torch.optim.Adam(params, lr=1e-4, fused=True)
    elif variant == "cudagraph":
        opt = torch.optim.Adam(params, lr=1e-4, foreach=False,
                               capturable=True)
    else:
        opt = torch.optim.Adam(params, lr=1e-4, foreach=False)
    fwd = torch.compile(model) if variant == "compile" else model
    if variant == "checkpoint":
        fwd = checkpointed(name, model)
    if variant == "offload":
        autocast = lambda: torch.autograd.graph.save_on_cpu(  # noqa: E731
            pin_memory=True)
    elif variant in ("amp", "amp_fp16", "amp_fp8"):
        dtype = torch.float16 if variant == "amp_fp16" else torch.bfloat16
        autocast = lambda: torch.autocast("cuda", dtype=dtype)  # noqa: E731
    else:
        autocast = contextlib.nullcontext
    scaler = torch.amp.GradScaler("cuda") if variant == "amp_fp16" else None
    warmup = args.warmup + (10 if variant == "compile" else 0)
    total = warmup + args.timed + args.profiled + 3

    if variant in ("workers0", "workers4"):
        batches = loader_batches(batch, int(variant[-1]), total)
    else:
        hx, hy = host_batch(name, batch)
        batches = iter(lambda: (hx, hy), None)

    if variant == "cudagraph":
        sx = torch.empty_like(hx, device=dev)
        sy = torch.empty_like(hy, device=dev)
        sx.copy_(hx)
        sy.copy_(hy)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                loss_of(name, model, sx, sy).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = loss_of(name, model, sx, sy)
            static_loss.backward()
            opt.step()

        def step():
            x, y = next(batches)
            sx.copy_(x, non_blocking=True)
            sy.copy_(y, non_blocking=True)
            graph.replay()
            return static_loss
    else:
        def step():
            x, y = next(batches)
            x = x.to(dev, non_blocking=True)
            y = y.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = loss_of(name, fwd, x, y)
            if scaler is None:
                loss.backward()
                opt.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            return loss

    t0 = time.perf_counter()
    for _ in range(warmup):
        step().item()
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t0
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.timed):
        t = time.perf_counter()
        step().item()
        times.append((time.perf_counter() - t) * 1e3)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()

    stem = f"{name}_{variant}"
    timing = {
        "model": name, "variant": variant, "batch": batch,
        "seq": SEQ.get(name), "optimizer": type(opt).__name__,
        "median_ms": round(statistics.median(times), 4),
        "p10_ms": round(statistics.quantiles(times, n=10)[0], 4),
        "p90_ms": round(statistics.quantiles(times, n=10)[-1], 4),
        "min_ms": round(min(times), 4), "max_ms": round(max(times), 4),
        "mean_ms": round(statistics.fmean(times), 4),
        "stdev_ms": round(statistics.stdev(times), 4),
        "timed_iterations": len(times), "warmup_iterations": warmup,
        "warmup_s": round(warm_s, 2), "peak_allocated_bytes": peak,
    }
    if fp8 is not None:
        timing.update(fp8_layers=fp8[0], bf16_layers=fp8[1],
                      fp8_casts=args.fp8_casts,
                      fp8_wgrad=str(FP8_WGRAD_DTYPE["dtype"]))
    if args.profiled == 0:
        return timing
    raw = os.path.join(args.out, stem + ".pt.trace.json")
    sched = torch.profiler.schedule(wait=1, warmup=2,
                                    active=args.profiled - 3, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(
            activities=acts, schedule=sched, record_shapes=True,
            profile_memory=True,
            on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(args.profiled):
            step().item()
            prof.step()
    torch.cuda.synchronize()
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", 9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)

    timing.update(trace=stem + ".pt.trace.json.gz",
                  trace_bytes=os.path.getsize(raw + ".gz"),
                  profiled_iterations=args.profiled - 3)
    return timing


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="resnet50,bert,gpt2")
    p.add_argument("--variants", default="baseline,amp,fused_adam,batch2x")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--timed", type=int, default=50)
    p.add_argument("--profiled", type=int, default=6,
                   help="profiler steps: 1 waits, 2 warm up, the rest kept; "
                   "0: timings only, no trace")
    p.add_argument("--fp8-casts", choices=["compiled", "eager"],
                   default="compiled",
                   help="amp_fp8: fuse the casts with torch.compile, or not")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("train.py: no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    info = versions()
    results = os.path.join(args.out, "results.jsonl")
    for name in args.models.split(","):
        for variant in args.variants.split(","):
            if variant not in VARIANTS:
                sys.exit(f"train.py: unknown variant '{variant}'")
            if variant.startswith("workers") and name != "resnet50":
                continue
            t = time.perf_counter()
            try:
                rec = run_one(name, variant, args)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                rec = {"model": name, "variant": variant,
                       "error": f"{type(e).__name__}: {e}"[:500]}
            rec.update(info)
            rec["wall_s"] = round(time.perf_counter() - t, 1)
            print(json.dumps(rec), flush=True)
            with open(results, "a") as f:
                f.write(json.dumps(rec) + "\n")
            gc.collect()
            torch.cuda.empty_cache()
            if variant in ("compile", "amp_fp8"):
                torch._dynamo.reset()


if __name__ == "__main__":
    main()
