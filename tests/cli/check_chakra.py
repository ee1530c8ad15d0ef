#!/usr/bin/env python3
"""`ddscript export --format chakra`, read back with protoc.

usage: check_chakra.py DDSCRIPT PROTOC SOURCE_DIR

For a training trace, a model's changes to it, and the 8 ranks of a
Megatron-LM tensor-parallel job: each file written decodes with `protoc
--decode` and src/export/chakra_et.proto (Chakra's published field numbers);
its nodes and control and data dependencies are as many as `export` reports
and as the language finds in the same iteration (tests/cli/models/
chakra_counts.dd: tasks that run, and their direct dependencies); every
dependency names a node of the file and has its kind; together the cases
export every dependency kind of the graph (launch, sync, queue-full,
event-wait, wake, fwd-bwd, and a model's script edges and bridges); the
job's ranks have as many collectives each, with their type and size.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ALL_KINDS = {"launch", "sync", "queue-full", "event-wait", "wake", "fwd-bwd",
             "script", "bridge"}


def fail(msg):
    sys.exit("FAIL: " + msg)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def decode(protoc, src, path):
    """The file's messages as one EtFile, decoded by protoc (text)."""
    data = open(path, "rb").read()
    wrapped, i, first = bytearray(), 0, True
    while i < len(data):
        n, j = varint(data, i)
        wrapped += bytes([0x0A if first else 0x12]) + data[i:j + n]
        first, i = False, j + n
    p = subprocess.run(
        [protoc, "--decode=ChakraProtoMsg.EtFile",
         "-I", os.path.join(src, "src", "export"),
         "-I", os.path.join(src, "tests", "cli"),
         os.path.join(src, "tests", "cli", "chakra_file.proto")],
        input=bytes(wrapped), capture_output=True, timeout=600)
    if p.returncode != 0:
        fail(f"protoc cannot decode {path}: {p.stderr.decode()[-2000:]}")
    return p.stdout.decode()


def nodes_of(text):
    """Per node: id, type, ctrl and data deps, dep_kinds, attributes."""
    out = []
    for block in text.split("\nnodes {")[1:]:
        n = {"id": int(re.search(r"^  id: (\d+)$", block, re.M).group(1)),
             "type": re.search(r"^  type: (\w+)$", block, re.M).group(1),
             "dur": int((re.search(r"^  duration_micros: (\d+)$", block,
                                   re.M) or [0, 0])[1]),
             "ctrl": [int(x) for x in
                      re.findall(r"^  ctrl_deps: (\d+)$", block, re.M)],
             "data": [int(x) for x in
                      re.findall(r"^  data_deps: (\d+)$", block, re.M)],
             "attrs": {}}
        for a in re.split(r"^  attr \{$", block, flags=re.M)[1:]:
            a = a.split("\n  }")[0]
            name = re.search(r'name: "([^"]*)"', a).group(1)
            n["attrs"][name] = (re.findall(r'values: "([^"]*)"', a)
                                or re.findall(r"_val: (.*)$", a, re.M))
        out.append(n)
    return out


def check_file(protoc, src, f, language=None):
    text = decode(protoc, src, f["path"])
    if 'version: "0.0.4"' not in text.split("\nnodes {")[0]:
        fail(f"{f['path']}: no GlobalMetadata with the schema version first")
    nodes = nodes_of(text)
    ids = {n["id"] for n in nodes}
    ctrl = sum(len(n["ctrl"]) for n in nodes)
    data = sum(len(n["data"]) for n in nodes)
    if (len(nodes), ctrl, data) != (f["nodes"], f["ctrl_deps"],
                                    f["data_deps"]):
        fail(f"{f['path']}: decoded {len(nodes)} nodes, {ctrl} control and "
             f"{data} data dependencies; export reported {f['nodes']}, "
             f"{f['ctrl_deps']}, {f['data_deps']}")
    if len(ids) != len(nodes):
        fail(f"{f['path']}: node ids repeat")
    kinds = {}
    for n in nodes:
        for d in n["ctrl"] + n["data"]:
            if d not in ids:
                fail(f"{f['path']}: node {n['id']} depends on {d}, "
                     "which is not in the file")
        dk = n["attrs"].get("dep_kinds", [])
        if len(dk) != len(n["data"]):
            fail(f"{f['path']}: node {n['id']} has {len(n['data'])} data "
                 f"dependencies and {len(dk)} kinds")
        for k in dk:
            kinds[k] = kinds.get(k, 0) + 1
        if n["type"] == "COMM_COLL_NODE" and not (
                "comm_type" in n["attrs"] and "comm_size" in n["attrs"]):
            fail(f"{f['path']}: collective {n['id']} without type or size")
        # Megatron's collectives are sized by the operators that launch them.
        if n["type"] == "COMM_COLL_NODE" and not n["attrs"]["comm_size"]:
            fail(f"{f['path']}: collective {n['id']} with comm_size 0")
    want = {k: v for k, v in f["data_deps_by_kind"].items() if v}
    if kinds != want:
        fail(f"{f['path']}: dependency kinds {kinds}, export reported {want}")
    if language is not None:
        tasks, deps = language
        if (len(nodes), ctrl + data) != (tasks, deps):
            fail(f"{f['path']}: {len(nodes)} nodes and {ctrl + data} "
                 f"dependencies; the language finds {tasks} tasks and "
                 f"{deps} dependencies in the iteration")
    return nodes, kinds


def language_counts(ddscript, src, trace, model=None):
    """Tasks and dependencies of the reported iteration, by the language
    (after MODEL, run first as a library would be: the two are one file)."""
    counts = os.path.join(src, "tests", "cli", "models", "chakra_counts.dd")
    path = counts
    if model:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".dd", delete=False)
        tmp.write(open(model).read() + "\n" + open(counts).read())
        tmp.close()
        path = tmp.name
    out = run([ddscript, "run", path, "--trace", trace])
    got = dict(re.findall(r"^(tasks|dependencies) (\d+)$", out, re.M))
    return int(got["tasks"]), int(got["dependencies"])


def export(ddscript, traces, out, *extra):
    cmd = [ddscript, "export", "--format", "chakra", "-o", out,
           "--print", "json"]
    for t in traces:
        cmd += ["--trace", t]
    return json.loads(run(cmd + list(extra)))


def main(argv):
    ddscript, protoc, src = argv
    data = os.path.join(src, "tests", "data")
    seen = set()
    with tempfile.TemporaryDirectory() as tmp:
        # A training trace, as traced and with a model's changes.
        resnet = os.path.join(data, "kineto",
                              "resnet50_v100_workers0.pt.trace.json.gz")
        edges = os.path.join(src, "tests", "cli", "models",
                             "chakra_edges.dd")
        for model in (None, edges):
            extra = ["--model", model] if model else []
            rep = export(ddscript, [resnet], os.path.join(tmp, "one"), *extra)
            (f,) = rep["files"]
            _, kinds = check_file(protoc, src, f,
                                  language_counts(ddscript, src, resnet,
                                                  model))
            seen |= set(kinds)
        # Two streams waiting on each other's events (NCCL): event-wait.
        ddp = os.path.join(data, "hta", "ddp2_v100_df_index_resolver.json.gz")
        (f,) = export(ddscript, [ddp], os.path.join(tmp, "ddp"))["files"]
        if f["rank"] != 1 or not f["path"].endswith("chakra.1.et"):
            fail(f"the DDP trace of rank 1 was written as {f['path']}")
        _, kinds = check_file(protoc, src, f,
                              language_counts(ddscript, src, ddp))
        seen |= set(kinds)
        if seen != ALL_KINDS:
            fail(f"dependency kinds exported {sorted(seen)}, want "
                 f"{sorted(ALL_KINDS)}")
        # A job: one file per rank, collectives in the same number.
        job = os.path.join(data, "astra_sim", "megatron_tp8")
        rep = export(ddscript, [job], os.path.join(tmp, "job"))
        if sorted(f["rank"] for f in rep["files"]) != list(range(8)):
            fail(f"ranks written: {[f['rank'] for f in rep['files']]}")
        colls = set()
        for f in rep["files"]:
            nodes, _ = check_file(protoc, src, f, language_counts(
                ddscript, src, f["trace"]))
            colls.add(sum(n["type"] == "COMM_COLL_NODE" for n in nodes))
            if not os.path.exists(os.path.join(tmp, "job",
                                               f"chakra.{f['rank']}.et")):
                fail(f"no chakra.{f['rank']}.et")
        if len(colls) != 1 or colls == {0}:
            fail(f"collectives per rank: {sorted(colls)}")
        # The job as a model changes it (issue 37: a layout for ASTRA-sim):
        # std.parallel's tensor-parallel degree 16 on machines of 8 moves
        # the all-reduces onto the network; every collective of every rank
        # is written at least as long, and the ranks' total longer.
        changed = export(ddscript, [job], os.path.join(tmp, "tp16"),
                         "--model", "parallel", "--set", "tp=16")
        before = {f["rank"]: nodes_of(decode(protoc, src, f["path"]))
                  for f in rep["files"]}
        grew = 0
        for f in changed["files"]:
            nodes, _ = check_file(protoc, src, f)
            old = {n["id"]: n["dur"] for n in before[f["rank"]]
                   if n["type"] == "COMM_COLL_NODE"}
            new = {n["id"]: n["dur"] for n in nodes
                   if n["type"] == "COMM_COLL_NODE"}
            if old.keys() != new.keys():
                fail(f"rank {f['rank']}: tp = 16 changed which collectives "
                     "were written")
            if any(new[i] < old[i] for i in old):
                fail(f"rank {f['rank']}: a collective got shorter at tp = 16")
            grew += sum(new.values()) > sum(old.values())
        if grew != len(changed["files"]):
            fail(f"tp = 16 lengthened the collectives of {grew} of "
                 f"{len(changed['files'])} ranks")
    print("ok: every file decodes; counts, kinds and collectives as the "
          "graph's; a job changed by std.parallel exported with its "
          "longer collectives")


if __name__ == "__main__":
    main(sys.argv[1:])
