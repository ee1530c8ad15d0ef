#!/usr/bin/env python3
"""`ddscript run ddp` on traces that already communicate: the traced
all-reduces reused, each one's transfer rescaled by std.comm's ratio between
the target configuration and the traced one.

usage: check_ddp_reuse.py DDSCRIPT JOB_DIR SIZED_TRACE SINGLE_GPU_TRACE

JOB_DIR holds one trace per rank of a DDP job whose kernels record no
payloads (param/dlrm_8rank: 8 GPUs on one machine); the check also writes a
copy of it whose all-reduces record their payloads. SIZED_TRACE is one rank's
trace with payloads (hta/ddp2_a100_nccl_data: 2 GPUs); SINGLE_GPU_TRACE has
no communication. Checked, through `ddscript run ... --format json`:

- identity: the target equal to the traced configuration predicts exactly the
  replay, every rank and the job, with every traced collective kept (also
  given half the ranks: the traced configuration is the world size the
  traces record);
- a faster network (or NVLink) never makes the job slower;
- more machines at the same per-link bandwidth make the all-reduces no
  faster, and the job no faster;
- collectives other than all-reduces keep their traced transfer;
- the older remove_existing=true/false predicts what existing=remove/keep
  does, and contradicting or unknown settings are refused;
- on a single-GPU trace the default predicts, and prints, what
  existing=remove (the model as before reuse) does.
"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

from model_check import identity_problems

ALLREDUCE = "/AllReduce|allreduce|all_reduce/"


def run(ddscript, args, rc=0):
    p = subprocess.run([ddscript, *args], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(args)}: exit {p.returncode}, "
                 f"expected {rc}\n{p.stderr}")
    return p


def predict(ddscript, model, traces, sets=()):
    args = ["run", model, "--trace", *traces, "--format", "json"]
    # On one rank's trace ddp models its all-reduces unless told to reuse
    # them (existing=auto); the checks of reuse say so.
    if model == "ddp" and len(traces) == 1 and not any(
            s.startswith(("existing=", "remove_existing=")) for s in sets):
        sets = [*sets, "existing=reuse"]
    for s in sets:
        args += ["--set", s]
    p = run(ddscript, args)
    return json.loads(p.stdout.splitlines()[0])


def job_ns(it):
    return it.get("job_predicted_ns", it.get("predicted_ns"))


def check_identity(ddscript, traces, sets, what):
    it = predict(ddscript, "ddp", traces, sets)
    # Steady states both, as the speedup compares them.
    for problem in identity_problems(it):
        sys.exit(f"FAIL: {what}: the traced configuration: {problem}")
    if "job_predicted_ns" in it:
        if it["kept_collectives"] != it["collectives"] or \
                it["inserted_collectives"] != 0:
            sys.exit(f"FAIL: {what}: {it['kept_collectives']} of "
                     f"{it['collectives']} collectives kept, "
                     f"{it['inserted_collectives']} inserted")
    if "reused" not in it["output"] or " x1 (" not in it["output"]:
        sys.exit(f"FAIL: {what}: no reuse at x1 said:\n{it['output']}")
    return it


def check_faster(ddscript, traces, key, values, fixed, what):
    last = None
    for v in values:
        it = predict(ddscript, "ddp", traces, [*fixed, f"{key}={v}"])
        ns = job_ns(it)
        if last is not None and ns > last[1]:
            sys.exit(f"FAIL: {what}: {key}={v} predicts {ns}, slower than "
                     f"{last[1]} at {key}={last[0]}")
        last = (v, ns)
    return last


def probe_model(tmp):
    """std.ddp, then per rank: the reported iteration's all-reduce transfer
    in ns, and (on a job) how many other collectives' transfers moved."""
    path = os.path.join(tmp, "probe.dd")
    with open(path, "w") as f:
        f.write("import std.ddp\n"
                f"let ar = select comm where name ~ {ALLREDUCE}\n"
                "let others = (select comm) - ar\n"
                "let moved = 0\n"
                "if len(trace.ranks) > 1 {\n"
                "  moved = others.filter(t -> t.duration != t.measured - "
                "t.wait).count\n"
                "}\n"
                "print \"probe\", trace.rank, "
                "ar.in_iteration(trace.iteration).duration / 1ns, "
                "others.count, moved\n")
    return path


def probes(ddscript, probe, traces, sets):
    it = predict(ddscript, probe, traces, sets)
    rows = {}
    text = it["output"]
    for line in text.splitlines():
        if line.startswith("probe "):
            _, rank, ns, others, moved = line.split()
            rows[rank] = (float(ns), int(others), int(moved))
    if not rows:
        sys.exit(f"FAIL: the probe printed nothing:\n{text}")
    return it, rows


def check_machines(ddscript, probe, traces, fixed, what):
    last = None
    for m in (1, 2, 4, 8):
        it, rows = probes(ddscript, probe, traces,
                          [*fixed, f"machines={m}", "gpus_per_machine=8"])
        for rank, (ns, others, moved) in rows.items():
            if moved:
                sys.exit(f"FAIL: {what}: {moved} of rank {rank}'s {others} "
                         "other collectives changed their transfer")
        if last is not None:
            for rank, (ns, _, _) in rows.items():
                if ns < last[1][rank][0]:
                    sys.exit(f"FAIL: {what}: {m} machines make rank {rank}'s "
                             f"all-reduces faster: {ns} < {last[1][rank][0]}")
            if job_ns(it) < last[2]:
                sys.exit(f"FAIL: {what}: {m} machines make the job faster: "
                         f"{job_ns(it)} < {last[2]}")
        last = (m, rows, job_ns(it))
    return last


def sized_copy(job_dir, tmp):
    """The job with payloads on its all-reduces (1, 4 and 16 MiB of floats,
    the same on every rank), as recent PyTorch versions record them."""
    out = []
    for src in sorted(glob.glob(os.path.join(job_dir, "*.json*"))):
        with gzip.open(src, "rt") as f:
            doc = json.load(f)
        ar = sorted((e for e in doc["traceEvents"]
                     if e.get("cat") == "kernel"
                     and "AllReduce" in e.get("name", "")),
                    key=lambda e: e["ts"])
        for i, e in enumerate(ar):
            n = (1 << 18) << (2 * (i % 3))
            e.setdefault("args", {}).update({
                "Collective name": "allreduce", "In msg nelems": n,
                "Out msg nelems": n, "dtype": "Float"})
        path = os.path.join(tmp, os.path.basename(src))
        with gzip.open(path, "wt") as f:
            json.dump(doc, f)
        out.append(path)
    return out


def check_modes(ddscript, traces):
    for old, new in (("true", "remove"), ("false", "keep")):
        a = predict(ddscript, "ddp", traces,
                    [f"remove_existing={old}", "machines=1"])
        b = predict(ddscript, "ddp", traces, [f"existing={new}", "machines=1"])
        for key in ("job_predicted_ns", "output", "ranks", "changes"):
            if a.get(key) != b.get(key):
                sys.exit(f"FAIL: remove_existing={old} and existing={new} "
                         f"differ in {key}")
        if "reused" in a["output"]:
            sys.exit(f"FAIL: existing={new} reused the traced all-reduces")
    p = run(ddscript, ["run", "ddp", "--trace", *traces, "--set",
                       "existing=keep", "--set", "remove_existing=true"], rc=2)
    if "set existing alone" not in p.stderr:
        sys.exit(f"FAIL: contradicting settings not refused:\n{p.stderr}")
    p = run(ddscript, ["run", "ddp", "--trace", *traces, "--set",
                       "existing=drop"], rc=2)
    if "unknown existing" not in p.stderr:
        sys.exit(f"FAIL: existing=drop not refused:\n{p.stderr}")


def check_single_gpu(ddscript, trace):
    def without(it):
        return {k: v for k, v in it.items() if k not in ("params", "steps")}
    default = predict(ddscript, "ddp", [trace])
    for sets in (["existing=remove"], ["remove_existing=true"]):
        other = predict(ddscript, "ddp", [trace], sets)
        if without(default) != without(other):
            sys.exit(f"FAIL: a single-GPU trace predicts otherwise with "
                     f"{sets[0]}")
    if "reused" in default["output"] or "note:" in default["output"]:
        sys.exit(f"FAIL: a single-GPU trace says:\n{default['output']}")
    return default


def main(argv):
    ddscript, job_dir, sized, single = argv
    job = sorted(glob.glob(os.path.join(job_dir, "*.json*")))
    with tempfile.TemporaryDirectory() as tmp:
        probe = probe_model(tmp)
        sized_job = sized_copy(job_dir, tmp)

        check_identity(ddscript, job, ["machines=1", "gpus_per_machine=8"],
                       "job, 1 x 8")
        # Half the ranks given: the all-reduces still ran on the 8 GPUs the
        # traces record (trace.world_size), not on the 4 given.
        it = check_identity(ddscript, job[:4], ["machines=1",
                                                "gpus_per_machine=8"],
                            "ranks 0-3 of the job, 1 x 8")
        if "from 1 x 8 GPUs" not in it["output"]:
            sys.exit(f"FAIL: ranks 0-3 not taken as 8 GPUs:\n{it['output']}")
        check_identity(ddscript, job, ["traced_machines=2", "machines=2",
                                       "gpus_per_machine=4"], "job, 2 x 4")
        it = check_identity(ddscript, sized_job,
                            ["machines=1", "gpus_per_machine=8"],
                            "sized job, 1 x 8")
        if "sizes from the trace" not in it["output"]:
            sys.exit(f"FAIL: the sized job's sizes not said:\n{it['output']}")
        check_identity(ddscript, [sized], ["machines=1", "gpus_per_machine=2"],
                       "one rank, 1 x 2")

        gbps = ["10Gbps", "25Gbps", "100Gbps", "400Gbps", "1600Gbps"]
        for traces, what in ((job, "job"), (sized_job, "sized job"),
                             ([sized], "one rank")):
            check_faster(ddscript, traces, "gbps", gbps, ["machines=2"],
                         f"{what}, 2 x 8, faster network")
            fastest = check_faster(
                ddscript, traces, "intra_gbps",
                ["75GBps", "150GBps", "300GBps", "600GBps"],
                ["machines=1", "traced_intra_gbps=150GBps"],
                f"{what}, one machine, faster NVLink")
            base = predict(ddscript, "ddp", traces, ["machines=1",
                                                     "gpus_per_machine=1"])
            replay = base.get("job_baseline_ns", base.get("baseline_ns"))
            if fastest[1] > replay:
                sys.exit(f"FAIL: {what}: 4x NVLink predicts {fastest[1]}, "
                         f"slower than the replay {replay}")

        for traces, what in ((job, "job"), (sized_job, "sized job"),
                             ([sized], "one rank")):
            check_machines(ddscript, probe, traces, [], what)
            check_machines(ddscript, probe, traces,
                           ["algorithm=hierarchical"], f"{what}, hierarchical")

        check_modes(ddscript, job)
        check_single_gpu(ddscript, single)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1:])
