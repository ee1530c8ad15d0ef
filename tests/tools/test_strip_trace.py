#!/usr/bin/env python3
"""tests/tools/strip_trace.py: what it keeps, what it refuses, and that
ddscript reads the stripped trace exactly as the original.

usage: test_strip_trace.py DDSCRIPT DATA_DIR
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STRIP = os.path.join(HERE, "strip_trace.py")


def fail(msg):
    sys.exit("FAIL: " + msg)


def strip(src, dst, rc=0, drop_memory=False):
    flags = ["--drop-memory"] if drop_memory else []
    p = subprocess.run([sys.executable, STRIP, *flags, src, dst],
                       capture_output=True, text=True)
    if p.returncode != rc:
        fail(f"strip_trace.py {src}: exit {p.returncode}, want {rc}: "
             f"{p.stderr}")
    return p.stderr


def main():
    ddscript, data = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # Kept: the fields the reader reads, their text as it was (157.400,
        # 1e-05 and a 19-digit timestamp are not re-formatted), in order.
        doc = ('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": '
               '"NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85000000000, '
               '"numSms": 108, "regsPerBlock": 65536}], "traceName": "x", '
               '"traceEvents": [\n'
               '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, '
               '"tid": 1, "ts": 1712195495519689.047, "dur": 157.400, '
               '"args": {"Input Dims": [[64, 512], [512, 512]], '
               '"Input Strides": [[512, 1], [512, 1]], "Ev Idx": 7, '
               '"External id": 3}},\n'
               '{"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, '
               '"tid": 7, "ts": 1712195495519700, "dur": 1e-05, "args": '
               '{"correlation": 9, "stream": 7, "device": 0, "grid": [1, 1, 1], '
               '"registers per thread": 64}}]}')
        src = os.path.join(tmp, "t.json")
        with open(src, "w") as f:
            f.write(doc)
        out = os.path.join(tmp, "t.json.gz")
        strip(src, out)
        text = gzip.decompress(open(out, "rb").read()).decode()
        for want in ('"ts":1712195495519689.047', '"dur":157.400',
                     '"dur":1e-05', '"Input Dims":[[64, 512], [512, 512]]',
                     '"External id":3', '"correlation":9', '"numSms":108'):
            if want not in text:
                fail(f"{want} is not in the stripped text:\n{text}")
        for gone in ("Input Strides", "Ev Idx", "grid", "registers",
                     "regsPerBlock", "traceName"):
            if gone in text:
                fail(f"{gone} was kept:\n{text}")
        # Again, and in place: the same bytes (idempotent, deterministic).
        again = os.path.join(tmp, "again.json.gz")
        strip(out, again)
        strip(again, again)
        if open(again, "rb").read() != open(out, "rb").read():
            fail("stripping a stripped trace changed it")

        # Refused, with exit 2 and a message: what is not a Kineto trace.
        bad = {"notjson.json": "hello", "cut.json": doc[: len(doc) // 2],
               "noevents.json": '{"schemaVersion": 1}',
               "chrome.json": '{"traceEvents": [{"ph": "X", "cat": "gpu", '
                              '"name": "a", "ts": 1, "dur": 1}]}',
               "twice.json": '{"traceEvents": [], "traceEvents": []}',
               "cupti.bin": "DDCU\x00\x01"}
        for name, body in bad.items():
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                f.write(body)
            err = strip(p, p + ".out", rc=2)
            if "strip_trace.py: " not in err or os.path.exists(p + ".out"):
                fail(f"{name}: {err!r}")

        # ddscript reads a stripped trace as the original: the same JSON
        # from replay, inspect and run amp, on a trace of the shipped ones
        # that is stripped here from its original form (the fixture keeps
        # every field the profiler wrote).
        orig = os.path.join(data, "tracelens", "h100_bert_small_inference.json.gz")
        mine = os.path.join(tmp, "bert.json.gz")
        strip(orig, mine)
        if os.path.getsize(mine) >= os.path.getsize(orig):
            fail("stripping the fixture saved nothing")
        for cmd in (["replay"], ["inspect"], ["run", "amp"], ["memory"]):
            outs = []
            for path in (orig, mine):
                p = subprocess.run([ddscript, *cmd, "--trace", path,
                                    "--format", "json"],
                                   capture_output=True, text=True)
                outs.append((p.returncode, p.stdout.replace(path, "T"),
                             p.stderr.replace(path, "T")))
            if outs[0] != outs[1]:
                fail(f"{' '.join(cmd)} differs on the stripped trace:\n"
                     f"{outs[0]}\n---\n{outs[1]}")

        # --drop-memory: the allocator's records go, the file says how many,
        # and ddscript times the trace as before: replay's JSON the same,
        # run amp's the same but for its memory figures and the VM's steps
        # (no blocks to visit), no warning about the recording options
        # (profile_memory was on), and memory refuses saying why.
        light = os.path.join(tmp, "light.json.gz")
        err = strip(mine, light, drop_memory=True)
        text = gzip.decompress(open(light, "rb").read()).decode()
        records = gzip.decompress(open(mine, "rb").read()).decode().count(
            '"name":"[memory]"')
        if (records == 0 or '"[memory]"' in text
                or f'"ddscriptDroppedMemoryRecords":{records}}}' not in text
                or f"{records} memory records dropped" not in err):
            fail(f"--drop-memory left records or did not count {records}: "
                 f"{err}")
        # Again: nothing more to drop, the count kept.
        strip(light, light, drop_memory=True)
        if gzip.decompress(open(light, "rb").read()).decode() != text:
            fail("--drop-memory on a trace without records changed it")
        memory_keys = {"memory_device", "peak_bytes_measured",
                       "peak_bytes_baseline", "peak_bytes_predicted",
                       "device_memory_bytes", "fits", "memory_changes",
                       "steps"}

        def run(cmd, path):
            p = subprocess.run([ddscript, *cmd, "--trace", path, "--format",
                                "json"], capture_output=True, text=True)
            return p.returncode, p.stdout.replace(path, "T"), \
                p.stderr.replace(path, "T")
        for cmd in (["replay"], ["run", "amp"]):
            a, b = run(cmd, mine), run(cmd, light)
            if a[0] != 0 or b[0] != 0 or a[2] != b[2]:
                fail(f"{' '.join(cmd)} without memory records: {a} {b}")
            ja, jb = json.loads(a[1]), json.loads(b[1])
            if "peak_bytes_predicted" not in ja and cmd[0] == "run":
                fail(f"run amp has no memory figures on {orig}")
            for k in memory_keys:
                ja.pop(k, None)
                jb.pop(k, None)
            if ja != jb:
                fail(f"{' '.join(cmd)} differs without memory records")
        rc, out, err = run(["memory"], light)
        if rc != 2 or f"the trace's {records} [memory] events were taken " \
                "out of the file" not in err:
            fail(f"memory without its records: exit {rc}: {err}")
    print("ok: kept text exact, unread fields gone, idempotent, 6 refusals, "
          "4 commands identical on a stripped fixture; --drop-memory: "
          "records counted, times unchanged, memory says why")


if __name__ == "__main__":
    main()
