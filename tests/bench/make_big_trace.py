#!/usr/bin/env python3
"""Builds a large Kineto trace by repeating the iterations of a real one.

The trace-loading benchmark (tests/bench/trace_load_bench.py) needs a trace of
about 100 MB uncompressed that looks like the real thing. This script takes a
real PyTorch-profiler trace, keeps what comes before its first ProfilerStep#
iteration once (metadata, set-up), and appends copies of everything from the
first step's start to the trace's end, each shifted by that span, until the output reaches the requested size. Every copy gets its
own correlation ids, flow ids, External ids and sequence numbers, and its own
ProfilerStep#N numbers, so that the result is a valid trace with more
iterations, not the same iteration many times over.

Numbers are kept as the source wrote them (decimal text, never rounded
through a double), so timestamps in microseconds with a fraction stay exact.

Usage: make_big_trace.py SOURCE.json[.gz] OUT.json [--mb 100 | --copies N]
"""

import argparse
import decimal
import gzip
import json
import re
import sys

# Arguments that identify something within one trace and must differ
# between copies.
ID_ARGS = ("correlation", "External id", "Sequence number", "Ev Idx")
MARK = "\u0000num:"
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def raw(value):
    """A decimal as a marked string that dump() turns back into a number."""
    return MARK + str(value)


def mark_numbers(obj):
    if isinstance(obj, dict):
        return {k: mark_numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mark_numbers(v) for v in obj]
    if isinstance(obj, decimal.Decimal):
        return raw(obj)
    return obj


UNMARK = re.compile('"' + re.escape(json.dumps(MARK)[1:-1]) + '([^"]*)"')


def dump(obj):
    return UNMARK.sub(r"\1", json.dumps(mark_numbers(obj), separators=(",", ":")))


def steps_window(events):
    spans = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in events
             if e.get("ph") == "X" and STEP.match(str(e.get("name", "")))]
    if not spans:
        sys.exit("make_big_trace.py: the source has no ProfilerStep# iterations")
    return min(s for s, _ in spans), max(e for _, e in spans)


def shifted(event, shift, id_offset, step_offset):
    e = dict(event)
    e["ts"] = e["ts"] + shift
    if "id" in e and isinstance(e["id"], int):
        e["id"] = e["id"] + id_offset
    m = STEP.match(str(e.get("name", "")))
    if m:
        e["name"] = "ProfilerStep#%d" % (int(m.group(1)) + step_offset)
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in ID_ARGS:
            if isinstance(args.get(key), int) and args[key] >= 0:
                args[key] += id_offset
        e["args"] = args
    return e


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=100.0,
                    help="size of the output in MB (10^6 bytes), at least")
    ap.add_argument("--copies", type=int, default=0,
                    help="exactly this many copies instead (the ranks of a "
                    "job need as many iterations each)")
    a = ap.parse_args()

    doc = load(a.source)
    events = doc["traceEvents"]
    begin, _ = steps_window(events)
    # Everything from the first step on is repeated (GPU work of the last
    # step ends after its CPU range); what comes before is kept once.
    def repeated(e):
        return "ts" in e and e["ts"] >= begin and e.get("ph") != "M"
    inside = [e for e in events if repeated(e)]
    outside = [e for e in events if not repeated(e)]
    end = max(e["ts"] + e.get("dur", 0) for e in inside)
    # Whole microseconds: copies never overlap and shifted decimals keep
    # their digits.
    span = decimal.Decimal(int(end - begin) + 1)
    steps = sorted({int(STEP.match(e["name"]).group(1)) for e in inside
                    if STEP.match(str(e.get("name", "")))})
    step_count = steps[-1] - steps[0] + 1
    max_id = 0
    for e in inside:
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
        for key in ID_ARGS:
            v = e.get("args", {}).get(key) if isinstance(e.get("args"), dict) else None
            if isinstance(v, int):
                max_id = max(max_id, v)
    id_stride = 10 ** len(str(max_id + 1))

    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    target = int(a.mb * 1e6)
    written = 0
    copies = 0
    with open(a.out, "w", encoding="utf-8") as out:
        head = dump(header)
        out.write(head[:-1] + (',' if header else '') + '"traceEvents":[\n')
        first = True

        def put(e):
            nonlocal written, first
            line = ("" if first else ",\n") + dump(e)
            first = False
            out.write(line)
            written += len(line.encode("utf-8"))

        for e in outside:
            put(e)
        while (copies < a.copies) if a.copies else (written < target):
            for e in inside:
                put(shifted(e, span * copies, id_stride * copies,
                            step_count * copies))
            copies += 1
        out.write("\n]}\n")
    print("%s: %d copies of %d iterations (%d events each), %.1f MB" %
          (a.out, copies, step_count, len(inside), written / 1e6))


if __name__ == "__main__":
    main()
