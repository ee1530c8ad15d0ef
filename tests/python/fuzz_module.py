"""The Python module under hostile calls (issue 36): paths, types and output
names a user can give it by mistake or on purpose, drawn at random from a
fixed seed, with properties that hold for every call:

  - it returns a result, or raises ddscript.Error, ValueError or TypeError
    with a message (never another exception, never a crash of the
    interpreter, never a hang past the timeout);
  - no input of a call changes: its trace, its job's ranks and its model
    are the same bytes after it, whatever timeline=, report= and reduce's
    output named
    (a file that is not the call's input may be written: the user named
    it; every file is put back between chunks);
  - no temporary (".NAME.ddscript-PID-N") is left in any folder.

The calls run in child interpreters, CHUNK at a time; a child that dies of a
signal or hangs names the call it was in (print it again with --case N).

usage: fuzz_module.py --data tests/data [--cases N] [--seed S] [--case N]
       fuzz_module.py --skip REASON       (where the module is not built)
The built package must be on PYTHONPATH (build/python).
"""
import argparse
import hashlib
import json
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile

CHUNK = 40


def scratch(data):
    """The files the calls are given, in a fresh folder: inputs (copies, so
    that the shipped ones are never at risk) and hostile names."""
    d = tempfile.mkdtemp(prefix="dd_fuzz_module.")
    trace = os.path.join(d, "trace.json")
    shutil.copy(os.path.join(data, "synthetic", "steps_median2.json"), trace)
    job = os.path.join(d, "job")
    shutil.copytree(os.path.join(data, "param", "dlrm_8rank"), job)
    model = os.path.join(d, "mine.dd")
    with open(model, "w") as f:
        f.write("import std.amp\nprint(\"ok\")\n")
    os.symlink(trace, os.path.join(d, "link.json"))
    os.link(trace, os.path.join(d, "hard.json"))
    os.symlink("loop_b", os.path.join(d, "loop_a"))
    os.symlink("loop_a", os.path.join(d, "loop_b"))
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkdir(os.path.join(d, "folder"))
    with open(os.path.join(d, "garbage.json.gz"), "wb") as f:
        f.write(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    return d


def inputs(d):
    files = [os.path.join(d, "trace.json"), os.path.join(d, "mine.dd")]
    job = os.path.join(d, "job")
    files += [os.path.join(job, f) for f in sorted(os.listdir(job))]
    return files


def digest(files):
    return {f: hashlib.sha256(open(f, "rb").read()).hexdigest() for f in files}


def call_inputs(d, what, a):
    """The files a call reads: its trace (a job folder's ranks) and its
    model where that is one of the scratch files."""
    if what == "models":
        return []
    if what in ("disasm", "check"):
        m = a["model"]
        return [m] if isinstance(m, str) and os.path.isfile(m) else []
    t = a["load"]["trace"]
    out = []
    for p in (t if isinstance(t, list) else [t]):
        if not isinstance(p, str):
            continue
        if os.path.isdir(p) and os.path.basename(p) == "job":
            out += [os.path.join(p, f) for f in sorted(os.listdir(p))]
        elif os.path.isfile(p) and os.path.dirname(os.path.realpath(p)) in (
                os.path.realpath(d), os.path.realpath(os.path.join(d, "job"))):
            out.append(p)
    m = a.get("call", {}).get("model")
    if what == "run" and isinstance(m, str) and os.path.isfile(m):
        out.append(m)
    return out


def draw(rng, d):
    """One call: (what, args), as plain data a child can rebuild."""
    rank0 = os.path.join(d, "job", sorted(os.listdir(os.path.join(d, "job")))[0])
    paths = [os.path.join(d, "trace.json"), os.path.join(d, "link.json"),
             os.path.join(d, "hard.json"), os.path.join(d, "job"), rank0,
             os.path.join(d, "mine.dd"), os.path.join(d, "missing.json"),
             os.path.join(d, "folder"), os.path.join(d, "fifo"),
             os.path.join(d, "loop_a"), os.path.join(d, "garbage.json.gz"),
             "/dev/null", "/dev/zero", "", os.path.join(d, "x" * 300),
             os.path.join(d, "trace.json\x00.html"),
             os.path.join(d, "tr\udcffce.json"), os.path.join(d, "тrace ✓.json"),
             os.path.join(d, "folder", "deeper", "missing", "out.html"),
             "/proc/self/status", os.path.join(d, "out.html"),
             os.path.join(d, "out.json.gz")]
    odd = [None, 0, -1, 1.5, "nan", "inf", 10 ** 30, True, [], {}, "bytes",
           "object", "", "1e308", "-0", "all", "3", "10:20", "0:1e300",
           "per-event=4us", "35.5ms", "profiled", "x" * 5000]
    models = ["amp", "fused_adam", "missing_model", "../../etc/passwd",
              os.path.join(d, "mine.dd"), os.path.join(d, "trace.json"), "",
              "amp\x00x", "x" * 5000, os.path.join(d, "folder")]
    pick = rng.choice
    what = pick(["load", "replay", "run", "run", "opportunities", "inspect",
                 "models", "reduce", "disasm", "check"])
    if what == "models":
        return [what, {}]
    if what in ("disasm", "check"):
        return [what, {"model": pick(models + odd)}]
    load = {"trace": pick(paths[:6]) if rng.random() < 0.85 else pick(paths)}
    if rng.random() < 0.5:
        load["trace"] = [load["trace"]] if rng.random() < 0.5 else [
            load["trace"], pick(paths)]
    for k in ("iteration", "window", "calibration", "clock", "unprofiled"):
        if rng.random() < 0.15:
            load[k] = pick(odd)
    call = {}
    # Not the FIFO as an output: it is written as the shell's ">" writes it,
    # so the call waits for a reader, as it should.
    outputs = [p for p in paths if not p.endswith("fifo")]
    for k in ("timeline", "report"):
        if rng.random() < 0.4:
            call[k] = pick(outputs)
    if what == "run":
        call["model"] = pick(models) if rng.random() < 0.5 else "amp"
        if rng.random() < 0.2:
            call["max_steps"] = pick(odd)
        if rng.random() < 0.5:
            call[pick(["tensor_core_speedup", "memory_speedup", "nonsense",
                       "half_type", "x" * 300])] = pick(
                odd + [[2, 3], [[1]], [], 2.5])
    elif what == "opportunities":
        call.pop("timeline", None)
        if rng.random() < 0.4:
            call["factor"] = pick(odd)
        if rng.random() < 0.4:
            call["top"] = pick(odd)
    elif what == "inspect":
        call = {}
    elif what == "reduce":
        call = {"output": pick(outputs + [os.path.join(d, "out.ddg"),
                                          os.path.join(d, "folder") + "/"])}
    elif what == "replay":
        pass
    return [what, {"load": load, "call": call}]


def value(v):
    """The JSON-safe spellings drawn above, as the Python values meant."""
    table = {"nan": math.nan, "inf": math.inf, "object": object(),
             "bytes": b"bytes"}
    if isinstance(v, str) and v in table:
        return table[v]
    if isinstance(v, list):
        return [value(x) for x in v]
    return v


def child(cases):
    """Runs the calls; prints one line per call: the case, its outcome."""
    import warnings

    import ddscript
    warnings.simplefilter("ignore")
    for n, (what, a), reads in cases:
        print("case", n, flush=True)
        before = digest(reads)
        try:
            if what == "models":
                ddscript.models()
            elif what == "disasm":
                ddscript.disasm(value(a["model"]))
            elif what == "check":
                ddscript.check(value(a["model"]))
            elif what == "reduce":
                load = {k: value(v) for k, v in a["load"].items()}
                ddscript.reduce(load.pop("trace"), value(a["call"]["output"]),
                                **{k: v for k, v in load.items()
                                   if k in ("iteration", "calibration")})
            else:
                load = {k: value(v) for k, v in a["load"].items()}
                t = ddscript.load(load.pop("trace"), **load)
                call = {k: value(v) for k, v in a["call"].items()}
                if what == "replay":
                    t.replay(**call)
                elif what == "run":
                    t.run(call.pop("model"), **call)
                elif what == "opportunities":
                    t.opportunities(**call)
                else:
                    t.inspect()
            print("ok", n, flush=True)
        except (ddscript.Error, ValueError, TypeError) as e:
            if not str(e):
                print("bad", n, type(e).__name__, "without a message",
                      flush=True)
            else:
                print("raised", n, type(e).__name__, flush=True)
        except BaseException as e:  # noqa: BLE001 - the property under test
            print("bad", n, type(e).__name__, repr(str(e))[:300], flush=True)
        after = digest([f for f in reads if os.path.exists(f)])
        changed = [f for f in reads if before.get(f) != after.get(f)]
        if changed:
            print("bad", n, "changed its input", *changed, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--case", type=int, help="print this case and stop")
    ap.add_argument("--skip")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.skip:
        print("skipped:", a.skip)
        return 77
    if a.child:
        with open(a.child) as f:
            child(json.load(f))
        return 0
    d = scratch(a.data)
    try:
        rng = random.Random(a.seed)
        cases = [(n, draw(rng, d)) for n in range(a.cases)]
        if a.case is not None:
            print(json.dumps(cases[a.case], ensure_ascii=False))
            return 0
        files = inputs(d)
        pristine = os.path.join(tempfile.mkdtemp(prefix="dd_fuzz_pristine."))
        for f in files:
            os.makedirs(os.path.dirname(pristine + f), exist_ok=True)
            shutil.copy(f, pristine + f)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) for p in
            os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
        failures, outcomes = [], {}
        # How many calls name one of their inputs as an output (through a
        # link or not): the calls the no-clobber property is about.
        aimed = sum(1 for _, (what, a) in cases
                    for o in (a.get("call", {}).get(k)
                              for k in ("timeline", "report", "output"))
                    if isinstance(o, str) and os.path.exists(o) and any(
                        os.path.samefile(o, i)
                        for i in call_inputs(d, what, a)))
        for at in range(0, len(cases), CHUNK):
            chunk = cases[at:at + CHUNK]
            spec = os.path.join(d, "folder", "chunk.json")
            with open(spec, "w") as f:
                json.dump([(n, c, call_inputs(d, *c)) for n, c in chunk], f)
            try:
                p = subprocess.run([sys.executable, __file__, "--child", spec],
                                   capture_output=True, text=True,
                                   errors="replace", timeout=600, cwd=d,
                                   env=env)
                out, rc = p.stdout, p.returncode
            except subprocess.TimeoutExpired as e:
                out = (e.stdout or b"").decode(errors="replace")
                rc = "a hang"
            seen = [line.split() for line in out.splitlines() if line]
            last = next((int(w[1]) for w in reversed(seen) if w[0] == "case"),
                        chunk[0][0])
            for w in seen:
                if w[0] in ("ok", "raised"):
                    outcomes[w[0]] = outcomes.get(w[0], 0) + 1
                if w[0] == "bad":
                    failures.append(f"case {w[1]}: {' '.join(w[2:])}")
            if rc != 0:
                failures.append(f"case {last}: the interpreter ended with "
                                f"{rc}: {p.stderr[-500:] if rc != 'a hang' else ''}")
            # Every file back as it was, for the next chunk's calls.
            for f in files:
                if os.path.islink(f) or not os.path.isfile(f):
                    if os.path.lexists(f):
                        os.unlink(f)
                shutil.copy(pristine + f, f)
            # Reduced ranks a call wrote (into the job's folder too), so
            # that the next chunk's calls see the job as it was.
            for r, _, fs in os.walk(d):
                for f in fs:
                    if f.endswith(".ddg"):
                        os.unlink(os.path.join(r, f))
            left = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs
                    if ".ddscript-" in f]
            if left:
                failures.append(f"cases {chunk[0][0]}-{chunk[-1][0]} left "
                                f"temporaries: {left}")
                for f in left:
                    os.unlink(f)
        for f in failures:
            print("FAIL:", f)
        print(f"{a.cases} hostile calls (seed {a.seed}): "
              f"{outcomes.get('ok', 0)} returned, {outcomes.get('raised', 0)} "
              f"raised an error with a message ({aimed} named an input as "
              f"an output), {len(failures)} failures")
        # Both outcomes occur, or the draw tests less than it claims.
        if not outcomes.get("ok") or not outcomes.get("raised") or not aimed:
            print("FAIL: every call ended alike; the draw is too narrow")
            return 1
        return 1 if failures else 0
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if "pristine" in locals():
            shutil.rmtree(pristine, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
