"""Facts about PyTorch that ddscript's models rest on, measured on a GPU.

``saved``: what autograd keeps for backward in one training step of each
ground-truth model (train.py's models and batches, fp32): every backward node
in the order its forward operator ran, the tensors it saved (shape, dtype,
bytes, whether a parameter), and what a ``saved_tensors_hooks`` pair sees (the
tensors ``torch.autograd.graph.save_on_cpu`` copies: count and bytes, and the
distinct storages among them). Writes ``saved_MODEL.json``.

``lists``: which tensor-list arguments the profiler records shapes for
(``record_shapes``): ``torch.cat``, ``_foreach_add_`` and fused Adam over lists
of several lengths. Writes ``lists.json``.

Usage::

    python3 probe.py --out DIR saved --models resnet50,bert,gpt2
    python3 probe.py --out DIR lists
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402


def saved(name, out):
    torch.manual_seed(0)
    model = train.build_model(name).cuda().train()
    params = {p.data_ptr(): n for n, p in model.named_parameters()}
    hx, hy = train.host_batch(name, train.BATCH[name])
    x, y = hx.cuda(), hy.cuda()
    for _ in range(2):  # warm up (cuDNN, allocator)
        train.loss_of(name, model, x, y).backward()
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()

    packed = []

    def pack(t):
        packed.append({"shape": list(t.shape), "dtype": str(t.dtype),
                       "bytes": t.numel() * t.element_size(),
                       "device": t.device.type,
                       "storage": t.untyped_storage().data_ptr(),
                       "storage_bytes": t.untyped_storage().nbytes(),
                       "param": params.get(t.data_ptr())})
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = train.loss_of(name, model, x, y)

    nodes, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        entry = {"node": type(n).__name__, "seq": n._sequence_nr(),
                 "saved": []}
        for attr in sorted(dir(n)):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(n, attr)
            except Exception:  # noqa: BLE001 (freed or not a value)
                continue
            vals = v if isinstance(v, (list, tuple)) else [v]
            for i, t in enumerate(vals):
                if isinstance(t, torch.Tensor):
                    entry["saved"].append({
                        "attr": attr[7:] + (f"[{i}]" if vals is v else ""),
                        "shape": list(t.shape), "dtype": str(t.dtype),
                        "bytes": t.numel() * t.element_size(),
                        "param": params.get(t.data_ptr())})
                elif not isinstance(v, (list, tuple)) and t is not None:
                    entry.setdefault("args", {})[attr[7:]] = repr(t)[:80]
        nodes.append(entry)
        stack.extend(f for f, _ in n.next_functions)
    nodes.sort(key=lambda e: e["seq"])
    loss.backward()
    storages = {}
    for p in packed:
        storages[p["storage"]] = p["storage_bytes"]
    doc = {
        "model": name, "batch": train.BATCH[name], "seq": train.SEQ.get(name),
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "packed_count": len(packed),
        "packed_bytes": sum(p["bytes"] for p in packed),
        "packed_cuda_bytes": sum(p["bytes"] for p in packed
                                 if p["device"] == "cuda"),
        "packed_param_bytes": sum(p["bytes"] for p in packed if p["param"]),
        "distinct_storages": len(storages),
        "distinct_storage_bytes": sum(storages.values()),
        "nodes": nodes,
        "packed": [{k: v for k, v in p.items() if k != "storage"}
                   for p in packed],
    }
    path = os.path.join(out, f"saved_{name}.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"{name}: {len(nodes)} nodes, {doc['packed_count']} packed, "
          f"{doc['packed_bytes'] / 2**20:.1f} MiB "
          f"({doc['distinct_storage_bytes'] / 2**20:.1f} MiB distinct)")


def lists(out):
    dev = torch.device("cuda")
    raw = os.path.join(out, "lists.trace.json")
    lengths = [2, 29, 30, 31, 200]
    groups = {n: [torch.nn.Parameter(torch.randn(64, 32, device=dev))
                  for _ in range(n)] for n in lengths}
    for ps in groups.values():
        for p in ps:
            p.grad = torch.randn_like(p)
    opts = {n: torch.optim.Adam(ps, fused=True) for n, ps in groups.items()}
    acts = [torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for n, ps in groups.items():
            with torch.profiler.record_function(f"list_of_{n}"):
                torch.cat([p.detach() for p in ps])
                torch._foreach_add_([p.detach() for p in ps], 1.0)
                opts[n].step()
    torch.cuda.synchronize()
    prof.export_chrome_trace(raw)
    with open(raw) as f:
        events = json.load(f)["traceEvents"]
    os.remove(raw)
    keep = ("aten::cat", "aten::_foreach_add_", "aten::_fused_adam_")
    found = [{"name": e["name"], "ts": e.get("ts"),
              "args": {k: v for k, v in e.get("args", {}).items()
                       if k.startswith(("Input", "Concrete"))}}
             for e in events
             if e.get("ph") == "X" and e.get("name") in keep]
    marks = [{"name": e["name"], "ts": e.get("ts"), "dur": e.get("dur")}
             for e in events
             if e.get("ph") == "X" and e.get("name", "").startswith("list_of_")
             and e.get("cat") == "user_annotation"]
    cfg = torch._C._profiler._ExperimentalConfig
    doc = {"torch": torch.__version__, "lengths": lengths, "marks": marks,
           "events": found,
           "experimental_config": [a for a in dir(cfg)
                                   if not a.startswith("__")],
           "experimental_config_doc": (cfg.__init__.__doc__ or "")[:4000]}
    with open(os.path.join(out, "lists.json"), "w") as f:
        json.dump(doc, f, indent=1)
    for e in found:
        dims = e["args"].get("Input Dims", [])
        print(e["name"], json.dumps(dims)[:160])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("what", choices=["saved", "lists"])
    p.add_argument("--models", default="resnet50,bert,gpt2")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("probe.py: no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    if args.what == "lists":
        lists(args.out)
        return
    for name in args.models.split(","):
        saved(name, args.out)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
