#!/usr/bin/env python3
"""Writes the hostile inputs of the cli.input.* and cli.clobber.* tests.

usage: make_hostile.py DATA_DIR OUT_DIR

Nothing big is committed: the gzip bombs are a few hundred KB of
concatenated gzip members (one member of 16 MiB of spaces, repeated), made
here in well under a second. The traces and models the clobber tests name
as outputs are copies, so that a regression overwrites nothing of the
source tree.
"""
import gzip
import json
import os
import shutil
import sys

MIB = 1 << 20


def member(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def bomb(path, head, fill, tail, mib):
    """head, mib MiB of the byte fill, tail: gzip members, concatenated."""
    chunk = member(fill * (16 * MIB))
    with open(path, "wb") as f:
        f.write(member(head))
        for _ in range(mib // 16):
            f.write(chunk)
        f.write(member(tail))


def many_streams(path, per_sync, syncs_per_step, steps=3):
    """One thread launches per_sync kernels, each on a stream of its own,
    then calls cudaDeviceSynchronize (with its Context Sync record); again
    and again. A sync needs edges only from the streams launched onto since
    the thread's previous sync: steps * syncs_per_step * per_sync of them,
    plus one from each sync to the next (Dependencies.cpp)."""
    ev, ts, corr, stream = [], 1000, 0, 0
    x = lambda cat, name, pid, tid, t, dur, args=None: (
        f'{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, '
        f'"tid": {tid}, "ts": {t}, "dur": {dur}'
        + (f', "args": {args}' if args else "") + "}")
    for step in range(steps):
        begin = ts
        ev.append(None)  # the step's marker, once its end is known
        at = len(ev) - 1
        for _ in range(syncs_per_step):
            for _ in range(per_sync):
                corr += 1
                stream += 1
                ev.append(x("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, 2,
                            f'{{"correlation": {corr}}}'))
                ev.append(x("kernel", "k", 0, stream, ts + 5, 3,
                            f'{{"correlation": {corr}, "device": 0, '
                            f'"stream": {stream}}}'))
                ts += 3
            corr += 1
            ev.append(x("cuda_runtime", "cudaDeviceSynchronize", 1, 1, ts, 6,
                        f'{{"correlation": {corr}}}'))
            ev.append(x("cuda_sync", "Context Sync", 0, -1, ts + 1, 4,
                        f'{{"correlation": {corr}, "device": 0, '
                        f'"stream": -1}}'))
            ts += 7
        ev[at] = x("user_annotation", f"ProfilerStep#{step + 1}", 1, 1, begin,
                   ts - begin)
        ts += 1
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n' + ",\n".join(ev) + "\n]}\n")


def main(data, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    j = lambda name: os.path.join(out, name)
    # Over 64 MiB, at about 1000x: past the inflate bound (InputStream.h).
    bomb(j("bomb.json.gz"), b'{"traceEvents": [', b" ", b"]}", 96)
    bomb(j("long_name.json.gz"),
         b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "', b"a",
         b'", "ts": 1, "dur": 1, "pid": 0, "tid": 7}]}', 96)
    os.mkfifo(j("pipe"))
    # A trace to replay, and two more names for it.
    shutil.copy(os.path.join(data, "hta/v100_ns_resolution_rank0.json.gz"),
                j("trace.json.gz"))
    os.symlink("trace.json.gz", j("link.json.gz"))
    os.link(j("trace.json.gz"), j("hard.json.gz"))
    with open(j("model.dd"), "w") as f:
        f.write("// does nothing\nprint 1\n")
    with open(j("lib.dd"), "w") as f:
        f.write("let x = 1\n")
    with open(j("uses_lib.dd"), "w") as f:
        f.write('import "lib.dd" as lib\nprint lib.x\n')
    # Two live memory records of 2^62 bytes each: their sum overflows int64.
    ev = lambda ts, b, tot: (
        '{"ph": "i", "s": "t", "name": "[memory]", "pid": 0, "tid": 7, '
        f'"ts": {ts}, "args": {{"Device Type": 1, "Device Id": 0, '
        f'"Addr": {ts}, "Bytes": {b}, "Total Allocated": {tot}}}}}')
    with open(j("huge_memory.json"), "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", '
                '"ts": 1, "dur": 5, "pid": 0, "tid": 7, "args": '
                '{"device": 0, "stream": 7}}, '
                + ev(2, 2**62, 2**62) + ", " + ev(3, 2**62, 2**63 - 1)
                + "]}")
    # A trace compressed twice: gzip inside gzip.
    with open(os.path.join(data, "synthetic/steps_median2.json"), "rb") as f:
        twice = member(member(f.read()))
    with open(j("twice.json.gz"), "wb") as f:
        f.write(twice)
    # A byte order mark, trailing bytes, two documents, a key twice (issue
    # 19: the mark was refused, the rest read without a word).
    with open(os.path.join(data, "synthetic/steps_median2.json"), "rb") as f:
        doc = f.read().rstrip()
    for name, text in (("bom.json", b"\xef\xbb\xbf" + doc),
                       ("trailing.json", doc + b"\n\x00\x00"),
                       ("two_documents.json", doc + b"\n" + doc),
                       ("key_twice.json", doc[:-1] + b', "traceEvents": []}')):
        with open(j(name), "wb") as f:
            f.write(text)
    # Iteration markers: 30,000 tiny ones around no work after the steps
    # (the default iteration was one of them, its graph "CPU-only"), one
    # nested in another, a number twice (issue 19: no word said).
    steps = json.loads(doc)
    events = steps["traceEvents"]
    end = max(e["ts"] + e.get("dur", 0) for e in events)
    three = next(e for e in events if e["name"] == "ProfilerStep#3")
    for name, extra in (
            ("idle_markers.json",
             [dict(three, name=f"ProfilerStep#{100 + i}", ts=end + 10 + 2 * i,
                   dur=1) for i in range(30000)]),
            ("nested_markers.json", [dict(three, ts=three["ts"] + 10, dur=20)]),
            ("repeated_markers.json", [dict(three, ts=end + 50, dur=20)])):
        with open(j(name), "w") as f:
            json.dump(dict(steps, traceEvents=events + extra), f)
    # Many streams and many device syncs: 6,000 streams, 600 syncs (issue 19:
    # each sync had an edge from every stream, 1.8 M edges here).
    many_streams(j("many_streams.json"), 10, 200)
    # Over the 16 MiB a model may be (compiler/Compiler.h).
    with open(j("big.dd"), "w") as f:
        line = "// " + "x" * 60 + "\n"
        f.write(line * (17 * MIB // len(line) + 1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
