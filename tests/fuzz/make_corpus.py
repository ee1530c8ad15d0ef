#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/NAME/) from
the project's own inputs, each seed a few KB at most so that the corpora stay
small in the repository:

  kineto    the small traces of tests/data as they are (two gzip files
            among them), and the first events of larger ones, cut into
            whole documents
  cupti     the synthetic run.cupti files dd_make_cupti_fixtures writes
            (--cupti DIR: build/tests/cli/cupti after `ctest -R cupti`)
  dd        tests/lang models under 2 KB and the smaller stdlib models
  vm        the tests/lang models, the stdlib models and models/ that
            compile on their own (--ddscript D: `D check` says which), a
            few stdlib models with "// set:" lines (the target's --set
            values)
  quantity  numbers with units, by hand (first byte: sign allowed, dimension)
  job       the job target's operations, by hand: a clean job of 2 to 6
            ranks, and one of each damage on it (tests/fuzz/job.cpp)
  rank      the bodies of reduced ranks (`ddscript reduce`, its gzip member
            inflated) of the smallest traces of tests/data, whole and cut
            (--ddscript D)

Usage: make_corpus.py [--cupti DIR] [--ddscript FILE]
(run from anywhere; rewrites the seeds of the corpora it can make)
"""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
MAX_SEED = 8 * 1024


def out_dir(name):
    d = os.path.join(HERE, "corpus", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def cut_trace(path, events):
    """The first `events` events of a Kineto trace, with its other keys."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = doc["traceEvents"][:events]
    return json.dumps(doc, separators=(",", ":"))


def kineto():
    d = out_dir("kineto")
    for f in ["synthetic/steps_median2.json", "malformed/huge_timestamp.json",
              "malformed/not_json.json", "malformed/unknown_schema.json",
              "malformed/not_an_object.json", "hta/edge_cases/large_integer.json.gz",
              "kineto/docs_before_fix_trace.json.gz"]:
        shutil.copy(os.path.join(DATA, f), os.path.join(d, f.replace("/", "_")))
    for f in ["hta/critical_path/event_sync.json.gz",
              "hta/critical_path/event_sync_multi_stream.json.gz",
              "hta/edge_cases/cpu_only.json.gz", "hta/triton_example.json.gz",
              "kineto/docs_after_fix_trace.json.gz",
              "kineto/resnet50_v100_workers0.pt.trace.json.gz"]:
        n = 60
        while True:
            text = cut_trace(os.path.join(DATA, f), n)
            if len(text) <= MAX_SEED or n <= 5:
                break
            n = n * 3 // 4
        if len(text) > MAX_SEED:
            continue  # its other keys alone are too large
        name = f.replace("/", "_").replace(".json.gz", "") + ".cut.json"
        with open(os.path.join(d, name), "w") as o:
            o.write(text)


def cupti(src):
    d = out_dir("cupti")
    # The whole run and damaged ones that read differently; the other
    # damaged fixtures are a byte or two away from these.
    for f in ["run", "copy_at_zero", "never_opened", "truncated"]:
        shutil.copy(os.path.join(src, f + ".cupti"), d)


def dd():
    d = out_dir("dd")
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "lang", "**", "*.dd"),
                             recursive=True))
    files += [os.path.join(ROOT, "stdlib", m + ".dd")
              for m in ["roofline", "batch", "dataloader", "gpu"]]
    # regex_long matches a 512 KB string on purpose: 17 s under the
    # sanitizers, over the campaigns' -timeout.
    files = [f for f in files if not f.endswith("regex_long.dd")]
    for f in files:
        if os.path.getsize(f) <= 2048 or "/stdlib/" in f:
            rel = os.path.relpath(f, ROOT).replace("/", "_")
            shutil.copy(f, os.path.join(d, rel))


# Stdlib models with --set values, as the vm target reads them.
VM_SETTINGS = [
    ("amp", ["insert_casts=false", "grad_scaler=false"]),
    ("batch", ["factor=0.5", "device_memory=8GiB"]),
    ("ddp", ["gbps=10Gbps", "machines=2"]),
    ("gpu", ["target=A100", "roofline=true"]),
    ("p3", ["gbps=25Gbps", "algorithm=ps"]),
]


def compiles(ddscript, text):
    """Whether `ddscript check` accepts \p text on its own (no file beside
    it to import), as the vm target compiles its input."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "seed.dd")
        with open(path, "w") as f:
            f.write(text)
        # A sanitizer build's leak check would fail on ANTLR's (lsan.supp).
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        r = subprocess.run([ddscript, "check", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=env)
        return r.returncode == 0


def vm(ddscript):
    d = out_dir("vm")
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "lang", "**", "*.dd"),
                             recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "stdlib", "*.dd")))
    files += sorted(glob.glob(os.path.join(ROOT, "models", "*.dd")))
    seeds = []
    for f in files:
        if f.endswith("regex_long.dd") or os.path.getsize(f) > 16 * 1024:
            continue
        with open(f) as src:
            seeds.append((os.path.relpath(f, ROOT).replace("/", "_"), src.read()))
    for name, sets in VM_SETTINGS:
        with open(os.path.join(ROOT, "stdlib", name + ".dd")) as src:
            text = "".join("// set: %s\n" % s for s in sets) + src.read()
        seeds.append(("set_" + name + ".dd", text))
    for name, text in seeds:
        if compiles(ddscript, text):
            with open(os.path.join(d, name), "w") as o:
                o.write(text)


def quantity():
    d = out_dir("quantity")
    seeds = ["25Gbps", "16GiB", "35.5ms", "16_000MB", "0", "-1.5e3us", "1e308",
             "2.5", "10Gbps", "1_0.0_1e-1_0s", "+11", "011", "1e1", ".5ms",
             "true", "nccl", "3 MB", "0x10", "1__0", "5e-324ns"]
    for i, s in enumerate(seeds):
        with open(os.path.join(d, "q%02d" % i), "wb") as o:
            o.write(bytes([i % 8]) + s.encode())


def job():
    d = out_dir("job")
    for n in range(5):
        with open(os.path.join(d, "clean%d" % n), "wb") as o:
            o.write(bytes([n]))
    # One operation each (job.cpp: op, rank, parameter), on 3 ranks; the
    # parameters pick a plain value and the edge one (255) where it has one.
    for op in range(14):
        for p in (1, 255):
            with open(os.path.join(d, "op%02d_%d" % (op, p)), "wb") as o:
                o.write(bytes([1, op, 1, p]))
    # Two damages at once: rank 1 of AllGather where the others all-reduce,
    # and rank 2 a copy of rank 0's number.
    with open(os.path.join(d, "mixed"), "wb") as o:
        o.write(bytes([1, 8, 1, 0, 2, 2, 0]))


def rank(ddscript):
    d = out_dir("rank")
    for rel in ("hta/triton_example.json.gz",
                "hta/mi250_rocm_minitoy_train.json.gz"):
        with tempfile.TemporaryDirectory() as t:
            out = os.path.join(t, "r.ddg")
            subprocess.run([ddscript, "reduce", "--trace",
                            os.path.join(DATA, rel), "-o", out], check=True,
                           stdout=subprocess.DEVNULL)
            with open(out, "rb") as f:
                body = gzip.decompress(f.read()[12:])
        name = os.path.basename(rel).split(".")[0]
        # The larger one whole (12 KB), and its first half: a cut file.
        with open(os.path.join(d, name), "wb") as o:
            o.write(body)
        with open(os.path.join(d, name + "_cut"), "wb") as o:
            o.write(body[:len(body) // 2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cupti", help="the directory dd_make_cupti_fixtures wrote")
    ap.add_argument("--ddscript",
                    help="a built ddscript (for the vm and rank corpora)")
    a = ap.parse_args()
    kineto()
    dd()
    quantity()
    job()
    if a.cupti:
        cupti(a.cupti)
    if a.ddscript:
        vm(a.ddscript)
        rank(a.ddscript)


if __name__ == "__main__":
    main()
