#!/usr/bin/env python3
"""Mutation fuzzing of what users hand ddscript: traces and .dd models.

Each case takes a shipped input (a small Kineto trace from tests/data, a
run.cupti fixture, or a model from stdlib/ and models/), damages it a few
times and runs the commands that read it. --kind trace and dd edit the
text (cut it short, drop, repeat or swap a range, put in a bracket, a
quote, a stray byte, a huge or negative number, a different event kind);
--kind events keeps the trace valid JSON and changes what its events say
(times, correlation ids, threads, streams, kinds, names; events dropped
or repeated); --kind cupti edits run.cupti bytes. A command
may accept the input (exit 0) or reject it (exit 2, one line naming the
file); anything else is a finding: a signal, an internal error (exit 3),
a sanitizer report, or no answer within --timeout seconds.

Cases are numbered and seeded, so a finding is reproduced by its seed and
number; the damaged input is kept in --work/found. Build with
-fsanitize=address,undefined to catch memory errors too (docs: tests).

Usage: fuzz_inputs.py --ddscript build/ddscript --kind trace|events|cupti|dd
                      [--count 200] [--seed 1] [--jobs 2] [--cupti DIR]
                      [--work DIR] [--timeout 30]
Exits 1 when there is a finding.
"""

import argparse
import concurrent.futures as cf
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")

TRACES = ["hta/triton_example.json.gz", "hta/mi250_rocm_minitoy_train.json.gz",
          "hta/gpu_user_annotation_steps.json.gz",
          "kineto/docs_after_fix_trace.json.gz",
          "hta/critical_path/simple_add.json.gz",
          "hta/critical_path/event_sync.json.gz",
          "hta/critical_path/event_sync_multi_stream.json.gz",
          "hta/critical_path/alexnet.json.gz",
          "tracelens/h100_bert_small_inference.json.gz"]  # [memory] events
MODEL_TRACE = "hta/gpu_user_annotation_steps.json.gz"

JSON_TOKENS = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"0", b"-", b"e",
               b"1e999", b"-1", b"null", b"true", b'"X"', b"9223372036854775807",
               b"18446744073709551616", b"1.5", b"\\u0000", b"\\ud800", b"NaN",
               b"", b" ", b"\xff"]
JSON_STRINGS = [b'""', b'"X"', b'"kernel"', b'"cpu_op"', b'"cuda_runtime"', b'"ac2g"',
                b'"s"', b'"f"', b'"M"', b'"i"', b'"ProfilerStep#1"',
                b'"cudaLaunchKernel"', b'"cudaStreamSynchronize"', b'"[memory]"',
                b'"gpu_memcpy"', b'"nccl"', b'"' + b"A" * 5000 + b'"']
NUMBERS = [b"0", b"-1", b"1e300", b"99999999999999999999", b"-5000000000",
           b"0.000001", b"4294967295", b"4294967296", b"2147483648", b"1" * 30]
DD_TOKENS = [b"(", b")", b"{", b"}", b"[", b"]", b'"', b",", b":", b"=", b".", b"0",
             b"-", b"1e308", b"select", b"remove", b"insert", b"scale", b"shrink",
             b"schedule", b"for", b"if", b"fn", b"let", b"return", b"x", b"\n",
             b"/", b"*", b"0.0", b"-1", b"999999999999999999999", b"%", b"->",
             b"..", b"~", b"in", b"not", b'""', b"\\", b"\xff"]
LE_WORDS = [b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff\xff\x7f",
            b"\x00\x00\x00\x80", b"\x01\x00\x00\x00", b"\xff" * 8, b"\x00" * 8,
            b"\xff" * 7 + b"\x7f"]


def mutate_text(data, tokens, rnd):
    """A few edits of a text input: cuts, tokens, repeats, swaps."""
    d = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        if not d:
            break
        op = rnd.randrange(8)
        i = rnd.randrange(len(d))
        if op == 0:
            del d[i:]
        elif op == 1:
            d[i:i + rnd.randint(1, 8)] = rnd.choice(tokens)
        elif op == 2:
            d[i:i] = rnd.choice(tokens)
        elif op == 3:
            del d[i:i + rnd.randint(1, 64)]
        elif op == 4:
            d[i:i] = d[i:i + rnd.randint(1, 400)]
        elif op == 5 or op == 6:
            pattern = rb"-?\d+(\.\d+)?" if op == 5 else rb'"[^"\\]*"'
            found = list(re.finditer(pattern, bytes(d[i:i + 2000])))
            if found:
                m = rnd.choice(found)
                d[i + m.start():i + m.end()] = rnd.choice(
                    NUMBERS if op == 5 else JSON_STRINGS)
        else:
            a, b = sorted((i, rnd.randrange(len(d))))
            n = min(rnd.randint(1, 300), b - a)
            d[a:a + n], d[b:b + n] = d[b:b + n], d[a:a + n]
    return bytes(d)


def mutate_binary(data, rnd):
    """A few edits of a binary input: bytes, boundary words, cuts, repeats."""
    d = bytearray(data)
    for _ in range(rnd.randint(1, 6)):
        if not d:
            break
        # The header is small and worth hitting more often than its share.
        i = rnd.randrange(min(16, len(d)) if rnd.random() < 0.1 else len(d))
        op = rnd.randrange(4)
        if op == 0:
            d[i:i + 1] = bytes([rnd.randrange(256)])
        elif op == 1:
            w = rnd.choice(LE_WORDS)
            d[i:i + len(w)] = w
        elif op == 2:
            del d[i:]
        else:
            d[i:i] = d[i:i + rnd.randint(1, 64)]
    return bytes(d)


SPECIAL_NAMES = ["ProfilerStep#7", "Optimizer.step#SGD.step", "cudaStreamSynchronize",
                 "cudaDeviceSynchronize", "cudaEventRecord", "cudaStreamWaitEvent",
                 "cudaEventSynchronize", "cudaMemcpyAsync", "cudaGraphLaunch",
                 "cudaLaunchKernel", "ncclKernel_AllReduce_RING_LL_Sum_float",
                 "Memcpy HtoD (Pageable -> Device)", "aten::linear",
                 "autograd::engine::evaluate_function: AddmmBackward0", "[memory]", ""]
CATEGORIES = ["kernel", "cpu_op", "cuda_runtime", "cuda_driver", "gpu_memcpy",
              "gpu_memset", "user_annotation", "gpu_user_annotation", "ac2g",
              "fwdbwd", "cuda_sync", "python_function", "Trace", "Kernel",
              "Runtime", "Operator", "async", "unknown"]


# Ids at the edges of their types: maps keyed by ids reserve some of these.
EDGE_IDS = [-1, -2, 0, 2**31 - 1, 2**31, 2**32 - 1, 2**32 - 2, 2**63 - 1, -2**63,
            2**64 - 1, 2**64 - 2, 65535, 65536]


def mutate_events(data, rnd):
    """Edits of a trace's meaning that keep it valid JSON: times, links,
    kinds, names, threads and streams of a few events; events dropped or
    repeated."""
    doc = json.loads(data)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not events:
        return data
    for _ in range(rnd.randint(1, 6)):
        i = rnd.randrange(len(events))
        e = events[i]
        if not isinstance(e, dict):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        op = rnd.randrange(11)
        other = events[rnd.randrange(len(events))]
        other = other if isinstance(other, dict) else {}
        if op == 0:
            e["ts"] = rnd.choice([0, -1, other.get("ts", 0), e.get("ts", 0) + 1,
                                  e.get("ts", 0) - 1000, 1e12, 1.5])
        elif op == 1:
            e["dur"] = rnd.choice([0, -5, 1e9, e.get("dur", 0) * 100, 0.001])
        elif op == 2:
            args["correlation"] = rnd.choice(
                [(other.get("args") or {}).get("correlation", 1),
                 rnd.choice(EDGE_IDS)])
            e["args"] = args
        elif op == 3:
            e["tid"] = rnd.choice([other.get("tid", 0), 0, "stream 7", "x", -1])
        elif op == 4:
            e["ph"] = rnd.choice(["X", "B", "E", "i", "s", "f", "M", "C", "b", "e"])
        elif op == 5:
            e["cat"] = rnd.choice(CATEGORIES)
        elif op == 6:
            e["name"] = rnd.choice(SPECIAL_NAMES)
        elif op == 7:
            args["stream"] = rnd.choice([0, 7, 8, -1, "7", rnd.choice(EDGE_IDS)])
            args["device"] = rnd.choice([0, 1, 7, -1, rnd.choice(EDGE_IDS)])
            e["args"] = args
        elif op == 8:
            if rnd.random() < 0.5:
                events.insert(rnd.randrange(len(events) + 1), dict(e))
            else:  # ids of flows, sequence numbers, addresses
                key = rnd.choice(["id", "Sequence number", "Addr",
                                  "External id", "Fwd thread id", "Bytes"])
                if key == "id":
                    e["id"] = rnd.choice(EDGE_IDS)
                else:
                    args[key] = rnd.choice(EDGE_IDS)
                    e["args"] = args
        elif op == 9:
            del events[i]
        else:
            e.pop(rnd.choice(["ts", "dur", "ph", "cat", "name", "pid", "tid",
                              "args", "id"]), None)
        if not events:
            break
    return json.dumps(doc).encode()


def read_input(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


class Fuzzer:
    def __init__(self, a):
        self.a = a
        self.work = os.path.join(a.work, "cases")
        self.found = os.path.join(a.work, "found")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.found, exist_ok=True)
        self.models = sorted(
            os.path.join(d, f) for d in (os.path.join(ROOT, "stdlib"),
                                         os.path.join(ROOT, "models"))
            for f in os.listdir(d) if f.endswith(".dd"))

    def case(self, k):
        """Makes case k and runs it: the commands' exit codes, and None or
        (the kept input, its source, the findings)."""
        a = self.a
        rnd = random.Random(a.seed * 1000003 + k)
        tag = "%s-%d-%d" % (a.kind, a.seed, k)
        dd = a.ddscript
        if a.kind in ("trace", "events"):
            src = os.path.join(DATA, rnd.choice(TRACES))
            data = read_input(src)
            data = mutate_text(data, JSON_TOKENS, rnd) if a.kind == "trace" \
                else mutate_events(data, rnd)
            name = tag + ".json"
            if rnd.random() < 0.2:
                data, name = gzip.compress(data), name + ".gz"
            path = os.path.join(self.work, name)
            # The run writes the timeline and the page too (thrown away).
            out = os.path.join(self.work, tag)
            cmds = [[dd, "replay", "--trace", path, "--iteration", "all"],
                    [dd, "inspect", "--trace", path],
                    [dd, "memory", "--trace", path],
                    [dd, "run", "amp", "--trace", path, "--timeline",
                     out + ".timeline.json", "--report", out + ".html"]]
        elif a.kind == "cupti":
            src = os.path.join(a.cupti, rnd.choice(["run.cupti", "flags.cupti"]))
            data = mutate_binary(read_input(src), rnd)
            path = os.path.join(self.work, tag + ".cupti")
            cmds = [[dd, "replay", "--trace", path, "--iteration", "all"],
                    [dd, "inspect", "--trace", path],
                    [dd, "run", "amp", "--trace", path]]
        else:
            src = rnd.choice(self.models)
            data = mutate_text(read_input(src), DD_TOKENS, rnd)
            path = os.path.join(self.work, tag + ".dd")
            cmds = [[dd, "check", path],
                    [dd, "run", path, "--trace", os.path.join(DATA, MODEL_TRACE)]]
        with open(path, "wb") as f:
            f.write(data)
        findings, codes = [], []
        for cmd in cmds:
            code, what = self.run(cmd)
            codes.append(code)
            if what:
                findings.append((cmd, what))
        for extra in (".timeline.json", ".html"):
            if os.path.exists(os.path.join(self.work, tag + extra)):
                os.unlink(os.path.join(self.work, tag + extra))
        if not findings:
            os.unlink(path)
            return codes, None
        kept = os.path.join(self.found, os.path.basename(path))
        shutil.move(path, kept)
        return codes, (kept, src, findings)

    def run(self, cmd):
        """The exit code (None: no answer), and None when cmd accepted or
        rejected its input, else what went wrong."""
        env = dict(os.environ,
                   ASAN_OPTIONS="detect_leaks=0:exitcode=99",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=98")
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=self.a.timeout,
                               env=env, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return None, "no answer within %g s" % self.a.timeout
        err = p.stderr.decode(errors="replace")
        if p.returncode in (0, 2) and "Sanitizer" not in err and \
                "runtime error" not in err:
            return p.returncode, None
        tail = "\n".join(err.strip().splitlines()[-12:])
        return p.returncode, "exit %d\n%s" % (p.returncode, tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddscript", required=True)
    ap.add_argument("--kind", choices=["trace", "events", "cupti", "dd"], required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cupti", help="the run.cupti fixtures "
                    "(build/tests/cli/cupti, written by dd_make_cupti_fixtures)")
    ap.add_argument("--work", default=None)
    ap.add_argument("--timeout", type=float, default=30)
    a = ap.parse_args()
    if a.kind == "cupti" and not a.cupti:
        ap.error("--kind cupti needs --cupti DIR")
    a.ddscript = os.path.abspath(a.ddscript)
    own_work = a.work is None
    if own_work:
        a.work = tempfile.mkdtemp(prefix="ddscript-fuzz-")
    fz = Fuzzer(a)
    bad, accepted, rejected = 0, 0, 0
    with cf.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        for codes, r in ex.map(fz.case, range(a.count)):
            accepted += codes.count(0)
            rejected += codes.count(2)
            if not r:
                continue
            bad += 1
            kept, src, findings = r
            print("FINDING %s (from %s)" % (kept, os.path.relpath(src, ROOT)))
            for cmd, what in findings:
                print("  ddscript %s: %s" % (cmd[1], what.replace("\n", "\n    ")))
            sys.stdout.flush()
    print("%d %s cases (seed %d): %d runs accepted their input, %d rejected "
          "it; %d findings" % (a.count, a.kind, a.seed, accepted, rejected, bad))
    if own_work and not bad:
        shutil.rmtree(a.work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
