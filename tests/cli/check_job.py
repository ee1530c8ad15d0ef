#!/usr/bin/env python3
"""Replays a job's ranks with `ddscript replay --format json` and checks it.

usage: check_job.py DDSCRIPT TRACE... [-- EXTRA ARGS]

Every rank and the job must replay within 0.1% of what was measured; the
stragglers are ranked (the job's iteration without a rank's lateness, least
first) and the top one's job is faster than measured.
"""
import json
import subprocess
import sys


def main(argv):
    ddscript, rest = argv[0], argv[1:]
    extra = []
    if "--" in rest:
        i = rest.index("--")
        rest, extra = rest[:i], rest[i + 1:]
    cmd = [ddscript, "replay", "--trace", *rest, "--format", "json", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit {p.returncode}\n{p.stderr}")
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    if not lines:
        sys.exit("FAIL: no iteration reported")
    for it in lines:
        ranks = it["ranks"]
        if len(ranks) != len(rest):
            sys.exit(f"FAIL: {len(ranks)} ranks reported for {len(rest)} traces")
        if sorted(r["rank"] for r in ranks) != list(range(len(rest))):
            sys.exit(f"FAIL: ranks {[r['rank'] for r in ranks]}")
        err = abs(it["job_replayed_ns"] - it["job_measured_ns"]) / it["job_measured_ns"]
        if err > 0.001:
            sys.exit(f"FAIL: job error {err:.4%}")
        for r in ranks:
            e = abs(r["replayed_ns"] - r["measured_ns"]) / r["measured_ns"]
            if e > 0.001:
                sys.exit(f"FAIL: rank {r['rank']} error {e:.4%}")
        st = it["stragglers"]
        if [s["job_without_ns"] for s in st] != sorted(s["job_without_ns"] for s in st):
            sys.exit("FAIL: stragglers not ranked")
        if "--clock" not in extra and "--calibration" not in extra:
            if not st or st[0]["job_without_ns"] >= it["job_measured_ns"]:
                sys.exit(f"FAIL: the top straggler's what-if is not faster: {st[:1]}")
    print(f"ok: {len(lines)} iterations, {len(rest)} ranks")


if __name__ == "__main__":
    main(sys.argv[1:])
