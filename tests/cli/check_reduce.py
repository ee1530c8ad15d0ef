#!/usr/bin/env python3
"""Reduced ranks give what their traces give (issue 38).

usage: check_reduce.py DDSCRIPT (--job TRACE... | --copies TRACE N)

Each rank is reduced by a `ddscript reduce` process of its own (as a
scheduler's tasks would), then every command that takes a job runs three
times: on the traces, on the folder of reduced ranks, and on a mix (the even
ranks reduced, the odd ones traces). Their exit status, standard output and
error, and the files they write (report, timeline, Chakra export) must be
the same but for the inputs' names. Then the refusals: a .ddg for a command
of one trace, a version this ddscript does not read, a damaged file, another
calibration, another iteration, a rank given twice, a reduced rank reduced.

--copies TRACE N makes a job of N copies of one rank's trace (rank and
world size rewritten): a trace of several iterations, so that reduce reads
only the reported one and its neighbours, as the job's commands do.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

MAGIC = b"\x89DDGRANK"


def fail(msg):
    sys.exit("FAIL: " + msg)


def run(ddscript, *args, rc=None):
    p = subprocess.run([ddscript, *args], capture_output=True, text=True,
                       timeout=600)
    if rc is not None and p.returncode != rc:
        fail(f"{' '.join(args)}: exit {p.returncode}, want {rc}\n"
             f"{p.stderr[-2000:]}")
    return p


def copies(trace, n, folder):
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    out = []
    for r in range(n):
        doc.setdefault("distributedInfo", {}).update(rank=r, world_size=n)
        path = os.path.join(folder, f"rank{r}.json.gz")
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
        out.append(path)
    return out


class Job:
    """A job's traces, their reduced ranks, and the mix of both."""

    def __init__(self, ddscript, traces, tmp, reduce_args=()):
        self.traces = traces
        self.red = os.path.join(tmp, "reduced")
        os.makedirs(self.red)
        self.ddgs = []
        for i, t in enumerate(traces):
            name = os.path.basename(t).split(".json")[0] + ".ddg"
            ddg = os.path.join(self.red, name)
            run(ddscript, "reduce", "--trace", t, "-o", ddg, *reduce_args,
                rc=0)
            with open(ddg, "rb") as f:
                if f.read(8) != MAGIC:
                    fail(f"{ddg} does not start with the rank file's magic")
            self.ddgs.append(ddg)
        # Files given one by one: the traces' names as in the first run.
        self.mix = [d if i % 2 == 0 else t
                    for i, (t, d) in enumerate(zip(traces, self.ddgs))]

    def normalize(self, text):
        for i, (t, d) in enumerate(zip(self.traces, self.ddgs)):
            for p in (t, d):
                text = text.replace(p, f"<rank {i}>")
        for d in (os.path.dirname(self.traces[0]), self.red):
            text = text.replace(d, "<job>")
        # A job's name in a report: its folder, or its first rank's where
        # the ranks lie in several.
        return text.replace("<rank 0> ...", "<job>/")


def outputs(paths):
    """The files a command wrote, read back (a folder: each file in it)."""
    got = {}
    for p in paths:
        if os.path.isdir(p):
            for n in sorted(os.listdir(p)):
                with open(os.path.join(p, n), "rb") as f:
                    got[n] = f.read()
            shutil.rmtree(p)
        elif os.path.exists(p):
            with open(p, "rb") as f:
                got[os.path.basename(p)] = f.read()
            os.remove(p)
    return got


def same_outputs(ddscript, job, args, written, label):
    results = []
    for inputs in (job.traces, [job.red], job.mix):
        p = run(ddscript, *args, "--trace", *inputs)
        files = {n: job.normalize(b.decode("utf-8", "replace"))
                 if not n.endswith(".et") else b
                 for n, b in outputs(written).items()}
        results.append((p.returncode, job.normalize(p.stdout),
                        job.normalize(p.stderr), files))
    names = ("the traces", "the reduced ranks", "the mix")
    for k in (1, 2):
        for what, a, b in zip(("exit status", "output", "error output",
                               "files written"), results[0], results[k]):
            if a != b:
                detail = ""
                if isinstance(a, str):
                    al, bl = a.splitlines(), b.splitlines()
                    diff = [(x, y) for x, y in zip(al, bl) if x != y][:3]
                    detail = f"\n{diff or (len(al), len(bl))}"
                elif isinstance(a, dict):
                    detail = f"\n{sorted(a)} vs {sorted(b)}"
                    for n in a:
                        x, y = a.get(n), b.get(n)
                        if x != y and isinstance(x, str) and y:
                            at = next(i for i, (c, d) in
                                      enumerate(zip(x + "$", y + "#"))
                                      if c != d)
                            detail += (f"\n{n}: {x[max(at - 80, 0):at + 80]!r}\n"
                                       f"vs {y[max(at - 80, 0):at + 80]!r}")
                        elif x != y:
                            detail += f"\n{n} differs"
                fail(f"{label}: {what} from {names[k]} differs from "
                     f"{names[0]}'s{detail}")
    return results[0]


def expect_refusal(ddscript, args, words, label):
    p = run(ddscript, *args)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 2 or not any(words in l for l in lines):
        fail(f"{label}: exit {p.returncode}, want 2 with {words!r}:\n"
             f"{p.stderr[-1500:]}")


def main(argv):
    ddscript = argv[0]
    tmp = tempfile.mkdtemp(prefix="ddreduce")
    try:
        if argv[1] == "--copies":
            src = os.path.join(tmp, "traces")
            os.makedirs(src)
            traces = copies(argv[2], int(argv[3]), src)
        else:
            traces = sorted(argv[2:])
        job = Job(ddscript, traces, tmp)
        out = os.path.join(tmp, "out")
        html, timeline = out + ".html", out + ".timeline.json"
        cases = [
            (["replay"], []),
            (["replay", "--format", "json", "--clock", "trace"], []),
            (["replay", "--report", html, "--timeline", timeline],
             [html, timeline]),
            (["run", "amp"], []),
            (["run", "parallel", "--set", "dp=2", "--format", "json"], []),
            (["run", "cuda_graphs"], []),
            (["run", "amp", "--report", html], [html]),
            (["export", "-o", out], [out]),
            (["export", "-o", out, "--model", "amp"], [out]),
        ]
        for args, written in cases:
            rc, stdout, _, _ = same_outputs(ddscript, job, args, written,
                                            " ".join(args))
            if rc != 0:
                fail(f"{' '.join(args)}: exit {rc}")
            if not stdout:
                fail(f"{' '.join(args)}: printed nothing")

        one = job.ddgs[0]
        expect_refusal(ddscript, ["memory", "--trace", one],
                       "`memory` reads the trace itself", "memory on a .ddg")
        expect_refusal(ddscript, ["replay", "--trace", job.red, "--calibration",
                                  "typical"],
                       "reduce", "another calibration")
        expect_refusal(ddscript, ["replay", "--trace", job.traces[0],
                                  *job.ddgs],
                       "are both rank 0", "a rank given as its trace and its .ddg")
        expect_refusal(ddscript, ["reduce", "--trace", one, "-o",
                                  os.path.join(tmp, "again.ddg")],
                       "already a reduced rank", "a reduced rank reduced")
        expect_refusal(ddscript, ["reduce", "--trace", job.traces[0], "-o",
                                  os.path.join(tmp, "x.json")],
                       "ends in .ddg", "reduce -o x.json")
        expect_refusal(ddscript, ["reduce", "--trace", job.traces[0], "-o",
                                  os.path.join(tmp, "x.ddg"), "--iteration",
                                  "999999"],
                       "no iteration 999999", "reduce --iteration 999999")
        if os.path.exists(os.path.join(tmp, "x.ddg")):
            fail("a refused reduce wrote its file")
        with open(one, "rb") as f:
            data = f.read()
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        for name, content, words in [
                ("version.ddg", data[:8] + b"\x02" + data[9:], "format 2"),
                ("short.ddg", data[:len(data) // 2], "damaged"),
                ("flipped.ddg", data[:-9] + bytes([data[-9] ^ 0xff]) +
                 data[-8:], "damaged")]:
            path = os.path.join(bad, name)
            with open(path, "wb") as f:
                f.write(content)
            expect_refusal(ddscript, ["replay", "--trace", path, *job.ddgs[1:]],
                           words, name)
        refusals = 11
        if argv[1] == "--copies":
            # A rank of another job (its world size one more): refused, as
            # its trace is.
            odd = os.path.join(tmp, "odd")
            os.makedirs(odd)
            other = copies(argv[2], int(argv[3]) + 1, odd)[-1]
            ddg = os.path.join(odd, "other.ddg")
            run(ddscript, "reduce", "--trace", other, "-o", ddg, rc=0)
            expect_refusal(ddscript, ["replay", "--trace", *job.ddgs, ddg],
                           "not of one job", "another job's rank")
            refusals += 1
        # Another iteration than the one reduced for: refused, and reduced
        # for it, the same as the traces (a job of several iterations).
        p = run(ddscript, "replay", "--trace", *traces, "--iteration", "all",
                "--format", "json", rc=0)
        numbers = [json.loads(l)["iteration"] for l in p.stdout.splitlines()]
        p = run(ddscript, "replay", "--trace", *traces, "--format", "json",
                rc=0)
        steady = json.loads(p.stdout.splitlines()[0])["iteration"]
        other = [n for n in numbers if n != steady]
        if other:
            n = str(other[0])
            expect_refusal(ddscript, ["replay", "--trace", job.red,
                                      "--iteration", n],
                           f"again with --iteration {n}", "another iteration")
            again = Job(ddscript, traces, os.path.join(tmp, "again"),
                        ("--iteration", n))
            same_outputs(ddscript, again, ["replay", "--iteration", n], [],
                         f"replay --iteration {n}")
            refusals += 1
        print(f"ok: {len(traces)} ranks reduced ({len(cases)} commands the "
              f"same from traces, reduced ranks and a mix; {refusals} refusals)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
