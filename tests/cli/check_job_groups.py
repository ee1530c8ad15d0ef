#!/usr/bin/env python3
"""Collectives paired per process group, through `ddscript replay` and `run`.

usage: check_job_groups.py DDSCRIPT JOB_DIR

JOB_DIR holds one trace per rank (param/dlrm_8rank: 8 ranks, no process-group
arguments, so ddscript pairs their collectives by order). The check writes a
copy in which every NCCL kernel names its process group as PyTorch records it
("Process Group Name", "Process Group Ranks"): ranks 0-3 in group "1", ranks
4-7 in group "2", and checks that

- the grouped job replays every rank and the job exactly, its collectives
  paired per group (twice as many, half the members each);
- a what-if that slows rank 0 delays the ranks of its group and leaves the
  other group's replayed times exactly as they were, while on the ungrouped
  job (one collective over all ranks) every rank waits for it;
- ranks 0-2 alone (rank 3 of their group not given) replay exactly, and the
  output says which ranks were not given;
- a group whose kernels do not pair (a rank with one kernel fewer, ranks
  recorded differently) is refused with exit 2 and one line naming it.
"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p


def write(path, doc):
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)


def grouped(doc, rank, drop_last=False, ranks_text=None):
    name, members = ("1", [0, 1, 2, 3]) if rank < 4 else ("2", [4, 5, 6, 7])
    comm = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"
            and e.get("name", "").startswith("nccl")]
    for e in comm:
        e.setdefault("args", {})
        e["args"]["Process Group Name"] = name
        e["args"]["Process Group Ranks"] = ranks_text or str(members)
    if drop_last:
        doc["traceEvents"].remove(max(comm, key=lambda e: e["ts"]))
    return doc


def replay(ddscript, paths):
    out = run([ddscript, "replay", "--trace", *paths, "--format", "json"])
    return [json.loads(l) for l in out.stdout.splitlines()]


def exact(it, what):
    for r in it["ranks"] + [{"rank": "job", "measured_ns":
                             it["job_measured_ns"], "replayed_ns":
                             it["job_replayed_ns"]}]:
        err = abs(r["replayed_ns"] - r["measured_ns"]) / r["measured_ns"]
        if err > 0.001:
            sys.exit(f"FAIL: {what}: rank {r['rank']} replays {err:.3%} off")


def slowed(ddscript, paths, model):
    out = run([ddscript, "run", model, "--trace", *paths, "--format", "json"])
    it = json.loads(out.stdout.splitlines()[0])
    return {r["rank"]: (r["baseline_ns"], r["predicted_ns"])
            for r in it["ranks"]}


def main(argv):
    ddscript, job = argv
    sources = sorted(glob.glob(os.path.join(job, "*.json*")))
    docs = []
    for p in sources:
        with gzip.open(p, "rt") if p.endswith(".gz") else open(p) as f:
            docs.append(json.load(f))
    ranks = [d["distributedInfo"]["rank"] for d in docs]
    if sorted(ranks) != list(range(8)):
        sys.exit(f"FAIL: expected 8 ranks, got {ranks}")
    tmp = tempfile.mkdtemp(prefix="dd-groups-")
    paths = []
    for d, r in zip(docs, ranks):
        p = os.path.join(tmp, f"rank{r}.json.gz")
        write(p, grouped(json.loads(json.dumps(d)), r))
        paths.append(p)

    base = replay(ddscript, sources)[0]
    it = replay(ddscript, paths)[0]
    exact(it, "grouped job")
    if it["collectives"] != 2 * base["collectives"]:
        sys.exit(f"FAIL: {it['collectives']} collectives, expected "
                 f"{2 * base['collectives']}")
    if "per process group" not in it["matching"] or "2 groups" not in \
            it["matching"]:
        sys.exit(f"FAIL: matching says {it['matching']!r}")

    model = os.path.join(tmp, "slow_rank0.dd")
    with open(model, "w") as f:
        f.write("// Rank 0's own work (CPU and GPU) 3x slower.\n"
                "scale (select task where rank == 0) - (select comm) by 3\n")
    g = slowed(ddscript, paths, model)
    for r in range(4, 8):
        if g[r][1] != g[r][0]:
            sys.exit(f"FAIL: grouped: rank {r} ({g[r]}) moved with rank 0")
    if not all(g[r][1] > g[r][0] for r in range(4)):
        sys.exit(f"FAIL: grouped: rank 0's group did not wait for it: {g}")
    u = slowed(ddscript, sources, model)
    if not all(u[r][1] > u[r][0] for r in range(8)):
        sys.exit(f"FAIL: ungrouped: not every rank waited for rank 0: {u}")

    part = replay(ddscript, paths[:3])[0]
    exact(part, "ranks 0-2")
    if "ranks [3] of their groups were not given" not in part["matching"]:
        sys.exit(f"FAIL: ranks 0-2: matching says {part['matching']!r}")

    bad = os.path.join(tmp, "bad")
    os.mkdir(bad)
    for r, d in zip(ranks, docs):
        write(os.path.join(bad, f"rank{r}.json.gz"),
              grouped(json.loads(json.dumps(d)), r, drop_last=(r == 1)))
    p = run([ddscript, "replay", "--trace", bad], rc=2)
    if "process group 1: rank 1 has" not in p.stderr or \
            len(p.stderr.strip().splitlines()) != 1:
        sys.exit(f"FAIL: a rank with a kernel fewer: {p.stderr!r}")
    for r, d in zip(ranks, docs):
        write(os.path.join(bad, f"rank{r}.json.gz"),
              grouped(json.loads(json.dumps(d)), r,
                      ranks_text="[0, 1, 2]" if r == 2 else None))
    p = run([ddscript, "replay", "--trace", bad], rc=2)
    if "process group 1: rank 2 records its ranks as [0, 1, 2]" not in \
            p.stderr:
        sys.exit(f"FAIL: ranks recorded differently: {p.stderr!r}")
    print(f"ok: {it['collectives']} collectives in 2 groups; "
          f"grouped {g}; ungrouped {u}")


if __name__ == "__main__":
    main(sys.argv[1:])
