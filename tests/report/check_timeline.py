#!/usr/bin/env python3
"""Checks a --timeline file the way Perfetto and chrome://tracing read it.

usage: check_timeline.py [options] -- DDSCRIPT COMMAND ARGS...

Runs `DDSCRIPT COMMAND ARGS... --format json --timeline TMP` twice, and
checks the file against the command's own JSON output:

  * it is JSON with a traceEvents list and no top-level key Perfetto does
    not know; pid 1 is named "measured: ...",
    pid 2 "replayed: ..." (replay) or "predicted: ..." (run);
  * every (pid, tid) with events has a thread_name; no tid is in both pids;
    threads and GPU streams are named after the trace's;
  * X events nest perfectly on each (pid, tid);
  * flows pair up: one s and one f per id, in one pid, the s inside a CPU
    call on its tid, the f (bp "e") at the start of GPU work on its tid;
  * each process's iteration slice lasts what the command reports
    (measured_ns; replayed_ns or predicted_ns), and both start at one ts;
  * the two runs wrote the same bytes.

  --memory           C events with GPU memory exist in both processes, and
                     their highest value in pid 1 is `ddscript memory`'s
                     measured peak of the iteration (replay only)
  --scaled RE:F,G    run only: every kernel of pid 2 is marked changed, with
                     original_dur_us and factor; those whose name matches RE
                     got factor 1/F, the others 1/G, and their durations
                     agree with original_dur_us / factor
  --inserted NAME    run only: pid 2 has a slice NAME marked inserted, pid 1
                     none; slices marked removed are in pid 1 only, and there
                     is at least one
  --readback         `DDSCRIPT inspect` reads the timeline back: as many
                     events of each category as were written
"""
import bisect
import json
import os
import re
import sys
import tempfile

from collections import Counter, defaultdict
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ddcheck import fail, run  # noqa: E402


def ns(v):
    """Exact ns from a JSON microsecond value."""
    d = Decimal(v) * 1000
    if d != d.to_integral_value():
        fail(f"timestamp {v} is not a whole number of ns")
    return int(d)


def check_nesting(xs):
    """xs: X events of one (pid, tid), in file order."""
    order = sorted(range(len(xs)), key=lambda i: (xs[i]["b"], -xs[i]["e"], i))
    stack = []
    for i in order:
        x = xs[i]
        while stack and stack[-1]["e"] <= x["b"]:
            stack.pop()
        if stack and x["e"] > stack[-1]["e"]:
            t = stack[-1]
            fail(f"slices overlap without nesting on pid {x['pid']} tid "
                 f"{x['tid']}: {t['name']!r} [{t['b']}, {t['e']}) and "
                 f"{x['name']!r} [{x['b']}, {x['e']})")
        stack.append(x)


def main(argv):
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    memory = readback = False
    scaled = inserted = None
    i = 0
    while i < len(opts):
        o = opts[i]
        if o == "--memory":
            memory = True; i += 1
        elif o == "--readback":
            readback = True; i += 1
        elif o == "--scaled":
            scaled = opts[i + 1]; i += 2
        elif o == "--inserted":
            inserted = opts[i + 1]; i += 2
        else:
            sys.exit(f"check_timeline.py: unknown option {o}")
    ddscript, command = cmd[0], cmd[1]
    tmp = tempfile.mkdtemp()
    paths = [os.path.join(tmp, f"t{k}.json") for k in range(2)]
    outs = [run(cmd + ["--format", "json", "--timeline", p]) for p in paths]
    raw = [open(p, "rb").read() for p in paths]
    if raw[0] != raw[1]:
        fail("two runs wrote different timelines")
    doc = json.loads(raw[0], parse_float=Decimal)
    if not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents list")
    # Perfetto stops reading at a top-level key it does not know.
    known = {"traceEvents", "displayTimeUnit", "otherData", "metadata",
             "systemTraceEvents", "stackFrames", "samples"}
    if set(doc) - known:
        fail(f"top-level keys Perfetto does not read: {sorted(set(doc) - known)}")
    ev = doc["traceEvents"]

    # What the command said.
    if command == "replay":
        rep = json.loads(outs[0].splitlines()[0])
        want = {1: rep["measured_ns"], 2: rep["replayed_ns"]}
        after = "replayed"
    else:
        rep = json.loads(outs[0])
        want = {1: rep["measured_ns"], 2: rep["predicted_ns"]}
        after = "predicted"
    label = rep["label"]

    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    if sorted(procs) != [1, 2]:
        fail(f"expected processes 1 and 2, got {sorted(procs)}")
    if not procs[1].startswith("measured: " + label):
        fail(f"pid 1 is named {procs[1]!r}")
    if not procs[2].startswith(after + ": " + label):
        fail(f"pid 2 is named {procs[2]!r}")

    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in ev if e["ph"] in "Xsf"}
    unnamed = used - set(threads)
    if unnamed:
        fail(f"threads without a name: {sorted(unnamed)[:5]}")
    tids = defaultdict(set)
    for pid, tid in used:
        tids[tid].add(pid)
    shared = [t for t, p in tids.items() if len(p) > 1]
    if shared:
        fail(f"tids in both processes: {shared[:5]}")
    names = set(threads.values())
    for pat in (r"^thread \d+", r"^GPU \d+ stream \d+$"):
        if not any(re.match(pat, n) for n in names):
            fail(f"no thread named like {pat!r} in {sorted(names)}")

    # X events: exact times, nesting per (pid, tid).
    xs = defaultdict(list)
    for e in ev:
        if e["ph"] != "X":
            continue
        b = ns(e["ts"])
        xs[(e["pid"], e["tid"])].append(
            {"pid": e["pid"], "tid": e["tid"], "name": e["name"],
             "cat": e["cat"], "b": b, "e": b + ns(e["dur"]), "args": e["args"]})
    for k, v in xs.items():
        check_nesting(v)

    # The iteration slice of each process.
    starts = set()
    for pid in (1, 2):
        its = [x for x in xs[(pid, pid * 100000)] if x["cat"] == "iteration"
               and x["name"] == label]
        if len(its) != 1:
            fail(f"pid {pid}: {len(its)} iteration slices named {label!r}")
        if its[0]["e"] - its[0]["b"] != want[pid]:
            fail(f"pid {pid}: iteration lasts {its[0]['e'] - its[0]['b']} ns, "
                 f"the command says {want[pid]}")
        starts.add(its[0]["b"])
    if len(starts) != 1:
        fail(f"the iterations start at different times: {sorted(starts)}")

    # Flows.
    flows = defaultdict(list)
    for e in ev:
        if e["ph"] in "sf":
            flows[e["id"]].append(e)
    if not flows:
        fail("no launch flows")
    gpu_cats = {"kernel", "gpu_memcpy", "gpu_memset"}
    calls = defaultdict(list)  # (pid, tid) -> sorted [(begin, end)] of calls
    gpu_starts = set()
    for k, v in xs.items():
        for x in v:
            if x["cat"] == "cuda_runtime":
                calls[k].append((x["b"], x["e"]))
            elif x["cat"] in gpu_cats:
                gpu_starts.add((k, x["b"]))
    for v in calls.values():
        v.sort()
    for fid, ends in flows.items():
        phs = sorted(e["ph"] for e in ends)
        if phs != ["f", "s"]:
            fail(f"flow {fid} has ends {phs}")
        s = next(e for e in ends if e["ph"] == "s")
        f = next(e for e in ends if e["ph"] == "f")
        if s["pid"] != f["pid"] or f.get("bp") != "e":
            fail(f"flow {fid}: pids {s['pid']}/{f['pid']}, bp {f.get('bp')}")
        st, ft = ns(s["ts"]), ns(f["ts"])
        # Calls on one thread do not overlap: the last to begin by st.
        cs = calls[(s["pid"], s["tid"])]
        k = bisect.bisect_right(cs, (st, float("inf"))) - 1
        if k < 0 or not (cs[k][0] <= st < max(cs[k][1], cs[k][0] + 1)):
            fail(f"flow {fid} starts outside a CPU call on its thread")
        if ((f["pid"], f["tid"]), ft) not in gpu_starts:
            fail(f"flow {fid} ends where no GPU work starts")

    if memory:
        cs = defaultdict(list)
        for e in ev:
            if e["ph"] == "C":
                cs[e["pid"]].append(e)
        for pid in (1, 2):
            if not cs[pid] or not all(e["name"].endswith(" memory") and
                                      isinstance(e["args"]["allocated"], int)
                                      for e in cs[pid]):
                fail(f"pid {pid} has no GPU memory counter")
        if command == "replay":
            mem = json.loads(run([ddscript, "memory"] + cmd[2:] +
                                 ["--format", "json"]))
            peak = mem["devices"][0]["peak_measured_bytes"]
            name = mem["devices"][0]["device"] + " memory"
            for pid in (1, 2):
                top = max(e["args"]["allocated"] for e in cs[pid]
                          if e["name"] == name)
                if top != peak:
                    fail(f"pid {pid}: highest {name} {top}, ddscript memory "
                         f"says {peak}")

    if scaled:
        pattern, factors = scaled.rsplit(":", 1)
        hit, rest = (int(x) for x in factors.split(","))
        kernels = [x for k, v in xs.items() if k[0] == 2 for x in v
                   if x["cat"] == "kernel"]
        if not kernels:
            fail("no kernels in pid 2")
        matched = 0
        for x in kernels:
            a = x["args"]
            if not a.get("changed") or "original_dur_us" not in a:
                fail(f"kernel {x['name']!r} is not marked changed: {a}")
            div = hit if re.search(pattern, x["name"]) else rest
            matched += div == hit
            orig = ns(a["original_dur_us"])
            # Durations are whole ns: a short kernel's factor is off by up
            # to 0.5 ns / its duration.
            slack = Decimal("0.0001") + (Decimal(1) / orig if orig else 0)
            if orig > 0 and abs(a["factor"] - Decimal(1) / div) > slack:
                fail(f"kernel {x['name']!r}: factor {a['factor']}, not 1/{div}")
            if abs((x["e"] - x["b"]) - orig / div) > 1:
                fail(f"kernel {x['name']!r}: {x['e'] - x['b']} ns, not "
                     f"{orig} / {div}")
        if not matched:
            fail(f"no kernel in pid 2 matches {pattern!r}")

    if inserted:
        ins = Counter(x["pid"] for v in xs.values() for x in v
                      if x["args"].get("inserted"))
        rem = Counter(x["pid"] for v in xs.values() for x in v
                      if x["args"].get("removed"))
        if ins[1] or not any(x["name"] == inserted and x["args"].get("inserted")
                             for x in xs_of(xs, 2)):
            fail(f"inserted slices by pid: {dict(ins)}")
        if rem[2] or not rem[1]:
            fail(f"removed slices by pid: {dict(rem)}")

    if readback:
        got = json.loads(run([ddscript, "inspect", "--trace", paths[0],
                              "--format", "json"]))["events"]
        wrote = Counter(x["cat"] for v in xs.values() for x in v
                        if x["cat"] != "iteration")
        if dict(wrote) != got:
            fail(f"wrote {dict(wrote)}, ddscript inspect read {got}")


def xs_of(xs, pid):
    return [x for k, v in xs.items() if k[0] == pid for x in v]


if __name__ == "__main__":
    main(sys.argv[1:])
