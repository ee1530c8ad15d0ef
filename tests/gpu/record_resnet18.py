"""A small PyTorch training loop for the GPU check of ddscript's CUPTI
collector: torchvision's resnet18 built from its configuration (random
weights, nothing downloaded), batch 32, synthetic data copied from pinned
host memory every iteration, SGD with momentum. Iterations and layers are
marked with runtime/python/ddscript_nvtx.py. Run it under `ddscript record`
(see README.md); on its own it just trains.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "runtime", "python"))
import ddscript_nvtx  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--skip", type=int, default=10,
                   help="iterations left out of the reported median time")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("record_resnet18.py: no CUDA device")

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torchvision.models.resnet18(weights=None, num_classes=1000)
    model = model.to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    ddscript_nvtx.annotate(model)

    images = torch.randn(args.batch_size, 3, 224, 224).pin_memory()
    labels = torch.randint(0, 1000, (args.batch_size,)).pin_memory()

    def batches():
        for _ in range(args.iterations):
            yield images, labels

    times = []
    for x, y in ddscript_nvtx.steps(batches()):
        start = time.perf_counter()
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        loss.item()  # a host sync per iteration, as logging loops do
        times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    print(f"trained {args.iterations} iterations, last loss {loss.item():.3f}")
    steady = times[args.skip:] or times
    # run.sh compares this line with and without the collector.
    print(f"median iteration {statistics.median(steady) * 1e3:.3f} ms "
          f"over {len(steady)} iterations")


if __name__ == "__main__":
    main()
