#!/usr/bin/env python3
"""What models/save_on_cpu.dd copies against what autograd saved.

usage: check_saved.py DDSCRIPT GROUNDTRUTH_DIR

For each model of GROUNDTRUTH_DIR/saved (saved_MODEL.json.gz: the tensors
torch 2.11 handed to saved_tensors_hooks in one fp32 training step, measured
on an H100), runs `ddscript run models/save_on_cpu.dd` on the same model's
baseline trace (GROUNDTRUTH_DIR/memory, an H200) and checks the bytes it
copies per iteration, from the recorded shapes and the saved-tensor table,
against the measured bytes (within 1%), the number of tensors (within
15%: the table leaves out tensors of no size, such as cuDNN batch norm's
empty reserve), and the predicted peak of device memory against the peak
the `offload` run allocated (GROUNDTRUTH_DIR/memory/manifest.json, within
20%: before the model freed what autograd holds, it predicted the
baseline's peak, 1.9 to 4.1 times the measured).
"""
import gzip
import json
import os
import re
import subprocess
import sys

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def main():
    dd, gt = sys.argv[1], sys.argv[2]
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "..", "models", "save_on_cpu.dd")
    names = sorted(f[6:-8] for f in os.listdir(os.path.join(gt, "saved"))
                   if f.startswith("saved_") and f.endswith(".json.gz"))
    if not names:
        sys.exit("FAIL: no saved_MODEL.json.gz in " + gt + "/saved")
    man = json.load(open(os.path.join(gt, "memory", "manifest.json")))
    peaks = {c["model"]: c["peak_allocated_bytes"]
             for c in man["configurations"] if c["variant"] == "offload"}
    failed = False
    for name in names:
        with gzip.open(os.path.join(gt, "saved", f"saved_{name}.json.gz")) as f:
            want = json.load(f)
        trace = os.path.join(gt, "memory", f"{name}_baseline.pt.trace.json.gz")
        p = subprocess.run([dd, "run", model, "--trace", trace],
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            sys.exit(f"FAIL: {name}: exit {p.returncode}\n{p.stderr}")
        m = re.search(r"save_on_cpu: (\d+) saved tensors, ([\d.]+) (\w+) over "
                      r"(\d+) iteration", p.stdout)
        if not m:
            sys.exit(f"FAIL: {name}: no 'save_on_cpu:' line in\n{p.stdout}")
        its = int(m.group(4))
        got_bytes = float(m.group(2)) * UNITS[m.group(3)] / its
        got_count = int(m.group(1)) / its
        berr = got_bytes / want["packed_bytes"] - 1
        cerr = got_count / want["packed_count"] - 1
        pk = re.search(r"peak: measured .*predicted ([\d.]+) (\w+)", p.stdout)
        if not pk or name not in peaks:
            sys.exit(f"FAIL: {name}: no predicted peak, or no measured one")
        perr = float(pk.group(1)) * UNITS[pk.group(2)] / peaks[name] - 1
        ok = abs(berr) <= 0.01 and abs(cerr) <= 0.15 and abs(perr) <= 0.2
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {got_bytes / 2**30:.3f} GiB"
              f" in {got_count:.0f} tensors per iteration; measured "
              f"{want['packed_bytes'] / 2**30:.3f} GiB in "
              f"{want['packed_count']} ({berr:+.2%}, {cerr:+.1%}); peak "
              f"{pk.group(1)} {pk.group(2)} against "
              f"{peaks[name] / 2**30:.3f} GiB measured ({perr:+.1%})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
