#!/usr/bin/env python3
"""`export`'s folder holds one export, whole (issue 36 item 5).

usage: check_export_folder.py DDSCRIPT JOB_DIR ONE_RANK_TRACE

- A write that fails part way (here the file-size limit stands in for a
  full disk, at the job's fourth rank or so) exits 2 and leaves the folder
  as it was: the earlier export's files byte for byte, no new file among
  them, no temporary.
- An export of fewer ranks into a folder an earlier export filled removes
  the earlier ranks' files (ASTRA-sim would read them as part of the
  workload) and says so; files that are not chakra.RANK.et stay.
- Ranks whose iterations are numbered apart (1-3 and 3-5: only 3 in
  common) are refused by export as by replay without --iteration (export
  wrote each rank's own default iteration, 2 and 4: no job ran those
  together), and with --iteration 3 every rank's file is iteration 3
  (found by the job fuzz target).
"""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import json


def fail(msg):
    sys.exit("FAIL: " + msg)


def snapshot(d):
    return {f: open(os.path.join(d, f), "rb").read()
            for f in sorted(os.listdir(d))}


def rank_trace(rank, world, first):
    """A small data-parallel rank (as tests/fuzz/job.cpp makes them): three
    iterations numbered from `first`, a GEMM and two all-reduces each."""
    ev, corr = [], [1]

    def x(cat, name, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 0 if tid >= 7 else 1,
             "tid": tid, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        ev.append(e)

    def launch(ts, name, stream, start, dur, extra=None):
        c = corr[0]
        corr[0] += 1
        x("cuda_runtime", "cudaLaunchKernel", 1, ts, 4, {"correlation": c})
        x("kernel", name, stream, start, dur,
          dict({"correlation": c, "stream": stream, "device": 0},
               **(extra or {})))

    for i in range(3):
        t = 1000 + i * 500
        x("user_annotation", f"ProfilerStep#{first + i}", 1, t, 480)
        x("cpu_op", "aten::mm", 1, t + 5, 20)
        launch(t + 6, "ampere_sgemm_128x64_tn", 7, t + 20, 100)
        for c in range(2):
            b = t + 40 + c * 60
            x("cpu_op", "nccl:all_reduce", 1, b, 10)
            launch(b + 2, "ncclKernel_AllReduce_RING_LL_Sum_float", 20,
                   b + 130, 40, {"In msg nelems": 262144})
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                  "totalGlobalMem": 85000000000,
                                  "numSms": 108}],
            "distributedInfo": {"backend": "nccl", "rank": rank,
                                "world_size": world},
            "traceEvents": ev}


def numbered_apart(ddscript, tmp):
    job = os.path.join(tmp, "apart")
    os.makedirs(job)
    for rank, first in ((0, 1), (1, 3)):
        with open(os.path.join(job, f"rank{rank}.json"), "w") as f:
            json.dump(rank_trace(rank, 2, first), f)
    out = os.path.join(tmp, "apart_out")
    for cmd in ("replay", "export"):
        args = [ddscript, cmd, "--trace", job]
        if cmd == "export":
            args += ["--format", "chakra", "-o", out]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 2 or "not every rank has it" not in p.stderr:
            fail(f"{cmd} of ranks numbered apart: exit {p.returncode}, "
                 f"{p.stderr!r}")
    if os.path.exists(out):
        fail("a refused export made its folder")
    p = subprocess.run([ddscript, "export", "--format", "chakra", "--trace",
                        job, "-o", out, "--iteration", "3", "--print", "json"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"export --iteration 3: exit {p.returncode}: {p.stderr}")
    got = sorted(f["iteration"] for f in json.loads(p.stdout)["files"])
    if got != ["ProfilerStep#3", "ProfilerStep#3"]:
        fail(f"export --iteration 3 wrote iterations {got}")


def main():
    ddscript, job, one = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "chakra")
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", job, "-o", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"export of the job: exit {p.returncode}: {p.stderr}")
        before = snapshot(out)
        ranks = [f for f in before if f.startswith("chakra.")]
        if len(ranks) < 2:
            fail(f"the job exported {ranks}: too few ranks to test with")
        sizes = sorted(len(b) for b in before.values())
        # The limit lets the smaller files through and stops a larger one.
        limit = sizes[len(sizes) // 2] - 1

        def small_disk():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        # A model that changes every rank, so every file would change.
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", job, "-o", out, "--model", "amp"],
                           capture_output=True, text=True,
                           preexec_fn=small_disk)
        if p.returncode != 2 or "the folder is as it was" not in p.stderr:
            fail(f"a full disk: exit {p.returncode}, stderr {p.stderr!r}")
        if snapshot(out) != before:
            fail("a failed export changed the folder: "
                 f"{sorted(snapshot(out))} against {sorted(before)}")

        with open(os.path.join(out, "notes.txt"), "w") as f:
            f.write("mine")
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", one, "-o", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"export of one rank: exit {p.returncode}: {p.stderr}")
        left = sorted(os.listdir(out))
        written = [f for f in left if f.startswith("chakra.")]
        if len(written) != 1 or "notes.txt" not in left:
            fail(f"after exporting one rank the folder holds {left}")
        want = f"note: removed {len(ranks) - 1} file(s) an earlier export left"
        if want not in p.stdout:
            fail(f"no {want!r} in:\n{p.stdout}")
        numbered_apart(ddscript, tmp)
    print(f"ok: a failed export of {len(ranks)} ranks left the folder whole; "
          f"an export of one rank removed the other {len(ranks) - 1}; ranks numbered "
          f"apart exported at the job's iteration or refused")


if __name__ == "__main__":
    main()
