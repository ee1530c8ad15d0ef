#!/usr/bin/env python3
"""std.parallel's properties on the shipped jobs (issue 37, without a GPU):

  - the identity: dp = 1 and tp as traced predict the replay exactly, on a
    data-parallel job (DLRM, 8 ranks), a tensor-parallel one (Megatron-LM
    TP8) and one rank's trace;
  - more data-parallel ranks never make the collectives cheaper, nor the
    job faster: dp = 1, 2, 4, 8, 16 on the DLRM job, each rank's collective
    time and the job's prediction never fall;
  - a tensor-parallel split that divides the GEMMs and adds no
    communication (tp_comm = false) cannot be slower: tp = 8, 16, 32, 64 on
    Megatron-LM TP8 never raise the prediction, each no slower than the
    replay; the sharded kernels' time halves with each doubling;
  - with its communication, a split past the machine (tp = 16 on machines
    of 8 GPUs) moves the all-reduces onto the network: collectives grow;
  - bad layouts are refused with exit 2: tp on a trace without tensor
    parallelism, a traced_tp that does not divide the world, dp = 0, and
    pipeline stages on a job that holds none.

usage: check_parallel.py DDSCRIPT DATA_DIR
"""
import os
import re
import sys

from model_check import expect_refusal, fail, identity_problems, run_model


def before_after(out, label):
    """Per rank (in output order), the ns of the model's lines `LABEL X unit
    -> Y unit`."""
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    return [(float(m[1]) * unit[m[2]], float(m[3]) * unit[m[4]])
            for m in re.finditer(rf"^{label} ([0-9.]+) (ns|us|ms|s) -> "
                                 r"([0-9.]+) (ns|us|ms|s)", out, re.M)]


def collectives(out):
    """Per rank: (before, after) collective ns per iteration."""
    got = before_after(out, "collectives")
    if not got:
        fail("no 'collectives' line in:\n" + out[:2000])
    return got


def sharded(out):
    return [after for _, after in before_after(out, "sharded kernels")]


def main():
    ddscript, data = sys.argv[1], sys.argv[2]
    dlrm = os.path.join(data, "param", "dlrm_8rank")
    megatron = os.path.join(data, "astra_sim", "megatron_tp8")
    one = os.path.join(dlrm, "worker0_step_12.pt.trace.json.gz")

    # The identity.
    for job in (dlrm, megatron):
        r = run_model(ddscript, "parallel", job)
        for problem in identity_problems(r):
            fail(f"{job}: dp = 1: {problem}")
        for before, after in collectives(r["output"]):
            if before != after:
                fail(f"{job}: dp = 1 changed collectives {before} -> {after}")
    for problem in identity_problems(run_model(ddscript, "parallel", one)):
        fail(f"one rank: dp = 1: {problem}")

    # More data-parallel ranks: never cheaper collectives, never a faster job.
    last_job, last_comm = 0, None
    for dp in (1, 2, 4, 8, 16):
        r = run_model(ddscript, "parallel", dlrm, f"dp={dp}")
        comm = [a for _, a in collectives(r["output"])]
        if last_comm and any(c < p for c, p in zip(comm, last_comm)):
            fail(f"dp = {dp}: a rank's collectives got cheaper: {last_comm} "
                 f"-> {comm}")
        if r["job_predicted_ns"] < last_job:
            fail(f"dp = {dp}: the job got faster ({last_job} -> "
                 f"{r['job_predicted_ns']} ns)")
        last_job, last_comm = r["job_predicted_ns"], comm

    # Tensor parallelism without its communication cannot be slower.
    base = run_model(ddscript, "parallel", megatron)["job_predicted_ns"]
    last, last_sharded = base, None
    for tp in (8, 16, 32, 64):
        r = run_model(ddscript, "parallel", megatron, f"tp={tp}", "tp_comm=false")
        if r["job_predicted_ns"] > last:
            fail(f"tp = {tp} without communication: {r['job_predicted_ns']} "
                 f"ns, slower than {last} ns")
        s = sharded(r["output"])
        # Halved, within the microsecond the output prints.
        if tp > 8 and (not s or (last_sharded and
                                 abs(s[0] * 2 - last_sharded[0]) > 2e3)):
            fail(f"tp = {tp}: sharded kernels {s}, after {last_sharded}")
        last, last_sharded = r["job_predicted_ns"], s or last_sharded
    # With it, past the machine: the all-reduces cross the network.
    r = run_model(ddscript, "parallel", megatron, "tp=16")
    for before, after in collectives(r["output"]):
        if after <= before:
            fail(f"tp = 16 on machines of 8: collectives {before} -> {after}")

    # Bad layouts.
    expect_refusal(ddscript, "parallel", dlrm, "tp=2",
                   "ran without tensor parallelism")
    expect_refusal(ddscript, "parallel", megatron, "traced_tp=3",
                   "does not divide the trace's 8 ranks")
    expect_refusal(ddscript, "parallel", megatron, "pp=4",
                   "holds no pipeline stage boundaries")
    expect_refusal(ddscript, "parallel", one, "dp=0", "dp is a whole factor")
    print("ok: identity on 3 traces; dp 1..16 monotone; tp 8..64 without "
          "communication never slower; tp 16 crosses the network; 4 refusals")


if __name__ == "__main__":
    main()
