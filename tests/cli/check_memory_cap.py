#!/usr/bin/env python3
"""Every command under a memory cap ends in exit 0, or in exit 2 with a
message, never a signal (issue 36): `ulimit -v` is set for each command at
several caps, from one too small to start the read to one the command
fits in, so each meets the limit at a different place (reading, building,
the simulation, a model, the job's threads, writing).

Also checks that no temporary of an output is left behind, and that an
output the command could not finish is not there half-written.

Usage: check_memory_cap.py DDSCRIPT DATA_DIR
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

CAPS_MIB = [24, 56, 96, 160, 240]


def commands(ddscript, data, out):
    trace = os.path.join(data, "kineto/resnet50_v100_workers0.pt.trace.json.gz")
    job = os.path.join(data, "param/dlrm_8rank")
    model = os.path.join(data, "..", "..", "stdlib", "amp.dd")
    return {
        "inspect": ["inspect", "--trace", trace],
        "replay": ["replay", "--trace", trace],
        "run amp": ["run", "amp", "--trace", trace],
        "run sweep": ["run", "amp", "--trace", trace, "--set",
                      "tensor_core_speedup=1.5,2,3"],
        "opportunities": ["opportunities", "--trace", trace],
        "compare": ["compare", trace, trace],
        "memory": ["memory", "--trace", trace],
        "check": ["check", "amp"],
        "disasm": ["disasm", "amp"],
        "models": ["models"],
        "convert": ["convert", trace, "-o", os.path.join(out, "t.json")],
        "export": ["export", "--format", "chakra", "--trace", trace,
                   "-o", os.path.join(out, "chakra")],
        "job replay": ["replay", "--trace", job],
        "job run": ["run", "amp", "--trace", job],
        "job export": ["export", "--format", "chakra", "--trace", job,
                       "-o", os.path.join(out, "jobchakra")],
    }


def capped(mib):
    def limit():
        b = mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
    return limit


def main():
    ddscript, data = sys.argv[1], sys.argv[2]
    failures = []
    runs = twos = 0
    with tempfile.TemporaryDirectory() as out:
        for name, args in commands(ddscript, data, out).items():
            # Uncapped, each command succeeds: an exit 2 below is the cap's.
            p = subprocess.run([ddscript] + args, capture_output=True,
                               text=True, errors="replace", timeout=300)
            if p.returncode != 0:
                failures.append(f"{name} uncapped: exit {p.returncode}: "
                                f"{p.stderr.strip()[-300:]}")
                continue
            for mib in CAPS_MIB:
                p = subprocess.run([ddscript] + args, preexec_fn=capped(mib),
                                   capture_output=True, text=True,
                                   errors="replace", timeout=300)
                runs += 1
                err = p.stderr.strip().splitlines()
                last = err[-1] if err else ""
                if p.returncode == 2:
                    twos += 1
                    if "error:" not in p.stderr:
                        failures.append(f"{name} at {mib} MiB: exit 2 "
                                        f"without a message")
                elif p.returncode != 0:
                    failures.append(f"{name} at {mib} MiB: exit "
                                    f"{p.returncode}: {last}")
                left = [f for _, _, fs in os.walk(out) for f in fs
                        if ".ddscript-" in f]
                if left:
                    failures.append(f"{name} at {mib} MiB left temporaries: "
                                    f"{left}")
                    for root, _, fs in os.walk(out):
                        for f in fs:
                            if ".ddscript-" in f:
                                os.unlink(os.path.join(root, f))
            shutil.rmtree(os.path.join(out, "chakra"), ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{runs} capped runs, {twos} ended in exit 2 with a message, "
          f"{len(failures)} failures")
    # Each command meets the cap somewhere: the smallest cap must stop
    # every one that reads a trace, or the check tests nothing.
    if twos < len(commands(ddscript, data, "/")):
        print("FAIL: too few runs met the cap; lower CAPS_MIB")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
