#!/usr/bin/env python3
"""Checks `ddscript run` on a job's ranks against properties that must hold.

usage: check_job_run.py DDSCRIPT job TRACE...
       check_job_run.py DDSCRIPT alone TRACE
       check_job_run.py DDSCRIPT twin TRACE MODEL -- [SETTING...]

job: on a job of several ranks,
  - a model that changes nothing predicts the replay, rank by rank;
  - a free network (every collective's transfer 1e6x shorter) never makes
    the job slower;
  - every collective member's wait plus transfer is its measured time;
  - a stdlib model runs and reports every rank.
alone: TRACE (no collectives, no distributedInfo) given twice, as ranks 0
  and 1 that never wait for each other: `run amp` on the job predicts for
  each rank what `run amp` predicts for TRACE alone.
twin: TRACE, one rank of a two-rank job, and its copy as the other rank
  (distributedInfo.rank rewritten): two identical ranks that meet at every
  collective at once. MODEL with its settings (after --) predicts on the
  job, rank by rank and for the job, what it predicts for TRACE alone,
  steady states included: the run alone must report work piling up, so
  that the job's steady state is what is checked.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile


def run(ddscript, args):
    p = subprocess.run([ddscript, *args], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


def job_json(ddscript, model, traces, extra=()):
    p = run(ddscript, ["run", model, "--trace", *traces, "--format", "json",
                       *extra])
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    if not lines:
        sys.exit("FAIL: no iteration reported")
    return lines, p.stderr


def check_job(ddscript, traces, tmp):
    def model(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    same = model("same.dd", "shrink (select comm) by 1\n")
    for it in job_json(ddscript, same, traces)[0]:
        # Steady states both (the speedup compares them); here, with
        # nothing piling up in the replay, also the replay's span.
        if not (it["job_predicted_ns"] == it["job_baseline_steady_ns"]
                == it["job_baseline_ns"]):
            sys.exit(f"FAIL: an unchanged job predicts {it['job_predicted_ns']}"
                     f" against a replay of {it['job_baseline_steady_ns']} "
                     f"(span {it['job_baseline_ns']})")
        if len(it["ranks"]) != len(traces):
            sys.exit(f"FAIL: {len(it['ranks'])} ranks for {len(traces)} traces")
        for r in it["ranks"]:
            if r["predicted_ns"] != r["baseline_steady_ns"]:
                sys.exit(f"FAIL: rank {r['rank']} changed with no change")

    free = model("free.dd", "shrink (select comm) by 1000000\n")
    for it in job_json(ddscript, free, traces)[0]:
        if it["job_predicted_ns"] > it["job_baseline_steady_ns"]:
            sys.exit(f"FAIL: a free network made the job slower: "
                     f"{it['job_predicted_ns']} > "
                     f"{it['job_baseline_steady_ns']}")
        if it["changes"]["scaled"] == 0:
            sys.exit("FAIL: no collective was scaled")

    parts = model("parts.dd",
                  "let c = select comm\n"
                  "print c.count, (select comm where wait + transfer != "
                  "measured).count, (select comm where rank == 0).count\n")
    lines, printed = job_json(ddscript, parts, traces)
    for line in lines[0]["output"].splitlines():
        if line.startswith("rank "):
            continue
        count, wrong, on_rank0 = (int(x) for x in line.split())
        if count == 0 or wrong != 0:
            sys.exit(f"FAIL: {wrong} of {count} members' wait + transfer is "
                     "not their measured time")

    # amp's GPU side alone never slows a rank down (its CPU side may).
    for it in job_json(ddscript, "amp", traces,
                       ["--set", "insert_casts=false",
                        "--set", "grad_scaler=false"])[0]:
        if not 0 < it["job_predicted_ns"] <= \
                it["job_baseline_steady_ns"] * 1.001:
            sys.exit(f"FAIL: amp on the job: {it['job_predicted_ns']} against "
                     f"{it['job_baseline_ns']}")
    print(f"ok: {len(traces)} ranks")


def check_alone(ddscript, trace, tmp):
    # Two names for one file: ranks 0 and 1 by the order given.
    ranks = []
    for r in range(2):
        path = os.path.join(tmp, f"rank{r}.json.gz")
        os.symlink(os.path.abspath(trace), path)
        ranks.append(path)
    # The profiler's cost per event comes out of each rank as out of the
    # trace alone (both by default).
    alone = json.loads(run(ddscript, ["run", "amp", "--trace", trace,
                                      "--format", "json"]).stdout)
    it = str(alone["iteration"])
    lines, _ = job_json(ddscript, "amp", ranks, ["--iteration", it])
    job = lines[0]
    for r in job["ranks"]:
        if r["predicted_ns"] != alone["predicted_ns"]:
            sys.exit(f"FAIL: rank {r['rank']} predicts {r['predicted_ns']}, "
                     f"the trace alone {alone['predicted_ns']}")
        if r["baseline_ns"] != alone["baseline_ns"]:
            sys.exit(f"FAIL: rank {r['rank']} replays {r['baseline_ns']}, "
                     f"the trace alone {alone['baseline_ns']}")
    # Each rank reads only the iteration and its neighbours (focused), the
    # trace alone all of it: the counts differ, but both ranks count alike.
    scaled = job["changes"]["scaled"]
    if scaled == 0 or scaled % 2:
        sys.exit(f"FAIL: {scaled} tasks scaled on two like ranks")
    print(f"ok: amp alone and on a job of two: {alone['predicted_ns']} ns")


def check_twin(ddscript, trace, model, settings, tmp):
    with gzip.open(trace, "rt") as f:
        doc = json.load(f)
    info = doc.get("distributedInfo", {})
    if info.get("world_size") != 2:
        sys.exit(f"FAIL: {trace} is not one rank of two")
    info["rank"] = 1 - info.get("rank", 0)
    twin = os.path.join(tmp, "twin.json.gz")
    with gzip.open(twin, "wt") as f:
        json.dump(doc, f)
    alone = json.loads(run(ddscript, ["run", model, "--trace", trace,
                                      "--format", "json",
                                      *settings]).stdout)
    if alone["backlog"] is None:
        sys.exit("FAIL: nothing piles up alone: the check would not test the "
                 "job's steady state")
    it = str(alone["iteration"])
    lines, _ = job_json(ddscript, model, [trace, twin],
                        ["--iteration", it, *settings])
    job = lines[0]
    if job["job_predicted_ns"] != alone["predicted_ns"]:
        sys.exit(f"FAIL: the job predicts {job['job_predicted_ns']}, the "
                 f"trace alone {alone['predicted_ns']}")
    if job["job_predicted_span_ns"] != alone["predicted_span_ns"]:
        sys.exit(f"FAIL: the job's span {job['job_predicted_span_ns']}, the "
                 f"trace alone's {alone['predicted_span_ns']}")
    for r in job["ranks"]:
        if r["predicted_ns"] != alone["predicted_ns"] or r["backlog"] is None:
            sys.exit(f"FAIL: rank {r['rank']} predicts {r['predicted_ns']} "
                     f"(backlog {r['backlog']}), the trace alone "
                     f"{alone['predicted_ns']}")
    if job["job_baseline_steady_ns"] != alone["baseline_steady_ns"]:
        sys.exit(f"FAIL: the job's replay settles at "
                 f"{job['job_baseline_steady_ns']}, the trace alone's at "
                 f"{alone['baseline_steady_ns']}")
    print(f"ok: {model} alone and on its twin job: {alone['predicted_ns']} ns "
          f"(span {alone['predicted_span_ns']} ns)")


def main(argv):
    ddscript, mode, traces = argv[0], argv[1], argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "job":
            check_job(ddscript, traces, tmp)
        elif mode == "twin":
            model, settings = traces[1], traces[3:] if len(traces) > 2 else []
            check_twin(ddscript, traces[0], model, settings, tmp)
        else:
            check_alone(ddscript, traces[0], tmp)


if __name__ == "__main__":
    main(sys.argv[1:])
