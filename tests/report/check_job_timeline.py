#!/usr/bin/env python3
"""A job's --timeline: one pair of processes per rank.

usage: check_job_timeline.py DDSCRIPT [--run MODEL] TRACE...

Runs `ddscript replay --trace TRACE... --format json --timeline TMP` (with
--run, `ddscript run MODEL ...`) twice: the two files are the same bytes;
they are JSON with traceEvents; there are two processes per rank, "rank R
measured: ..." and "rank R replayed: ..." (run: "rank R predicted: ...");
each one's iteration slice lasts what the command reports for that rank
(measured_ns, replayed_ns or predicted_ns); no tid is in two processes;
slices nest on each (pid, tid).
"""
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    sys.exit("FAIL: " + msg)


def main(argv):
    ddscript, traces = argv[0], argv[1:]
    command, after = ["replay"], "replayed"
    if traces[:1] == ["--run"]:
        command, after, traces = ["run", traces[1]], "predicted", traces[2:]
    with tempfile.TemporaryDirectory() as tmp:
        outs, texts = [], []
        for k in range(2):
            path = os.path.join(tmp, f"t{k}.json")
            p = subprocess.run([ddscript, *command, "--trace", *traces,
                                "--format", "json", "--timeline", path],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                fail(f"exit {p.returncode}\n{p.stderr}")
            outs.append(json.loads(p.stdout.splitlines()[0]))
            texts.append(open(path, "rb").read())
        if texts[0] != texts[1]:
            fail("two runs wrote different timelines")
        doc = json.loads(texts[0])
    rep = outs[0]
    ev = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    ranks = rep["ranks"]
    if len(names) != 2 * len(ranks):
        fail(f"{len(names)} processes for {len(ranks)} ranks")
    tids = {}
    for e in ev:
        if "tid" in e and e.get("ph") in ("X", "M"):
            tids.setdefault(e["tid"], set()).add(e["pid"])
    if any(len(p) > 1 for p in tids.values()):
        fail("a tid is in two processes")
    for k, r in enumerate(ranks):
        for side, key in ((1, "measured_ns"), (2, after + "_ns")):
            pid = 2 * k + side
            want = f"rank {r['rank']} {'measured' if side == 1 else after}: "
            if not names.get(pid, "").startswith(want):
                fail(f"pid {pid} is {names.get(pid)!r}, want {want!r}...")
            its = [e for e in ev if e.get("pid") == pid and e.get("cat") == "iteration"
                   and e["name"] == rep["label"]]
            if len(its) != 1:
                fail(f"pid {pid}: {len(its)} slices of {rep['label']}")
            if its[0]["args"]["ns"] != r[key]:
                fail(f"pid {pid}: iteration {its[0]['args']['ns']} ns, the "
                     f"command says {r[key]}")
    # Slices nest on each thread.
    by = {}
    for e in ev:
        if e.get("ph") == "X":
            by.setdefault((e["pid"], e["tid"]), []).append(
                (float(e["ts"]), -float(e["dur"]), float(e["ts"]) + float(e["dur"])))
    for key, xs in by.items():
        xs.sort()
        stack = []
        for b, negd, end in xs:
            while stack and stack[-1] <= b + 1e-9:
                stack.pop()
            if stack and end > stack[-1] + 1e-6:
                fail(f"{key}: slices overlap without nesting at {b}")
            stack.append(end)
    print(f"ok: {len(ranks)} ranks, {len(ev)} events")


if __name__ == "__main__":
    main(sys.argv[1:])
