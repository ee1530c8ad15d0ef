"""Tests the Python module (python/) against the ddscript command: the same
trace, model and settings give the same JSON, number for number.

usage: test_module.py --ddscript BUILD/ddscript --data tests/data
       test_module.py --skip REASON    (where the module is not built)

The built package must be on PYTHONPATH (build/python). Exits 77 (CTest's
skip) with --skip; pandas is used where it is installed.
"""
import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

ARGS = None


def cli(*args, lines=False):
    """The command's --format json output, parsed (a list with lines)."""
    out = subprocess.run([ARGS.ddscript, *args, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    objects = [json.loads(line) for line in out.splitlines() if line.strip()]
    if lines:
        return objects
    assert len(objects) == 1, out
    return objects[0]


def cli_json_allow_fail(*args):
    """The command's --format json output, whatever its exit status."""
    out = subprocess.run([ARGS.ddscript, *args, "--format", "json"],
                         capture_output=True, text=True).stdout
    return json.loads(out)


def cli_error(*args):
    """The command's stderr, for a command that must fail with status 2."""
    p = subprocess.run([ARGS.ddscript, *args], capture_output=True, text=True)
    assert p.returncode == 2, (p.returncode, p.stderr)
    return p.stderr


class Module(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import ddscript

        cls.dd = ddscript
        cls.resnet = os.path.join(
            ARGS.data, "kineto", "resnet50_v100_workers0.pt.trace.json.gz")
        cls.trace = ddscript.load(cls.resnet)
        cls.tmp = tempfile.mkdtemp(prefix="ddscript-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_built_module(self):
        # The package the build made, not another one on the path.
        self.assertTrue(self.dd._ddscript.__file__.startswith(
            os.environ["PYTHONPATH"].split(os.pathsep)[0]))

    def test_run_equals_cli(self):
        r = self.trace.run("amp")
        self.assertIsInstance(r, dict)
        self.assertEqual(r, cli("run", "amp", "--trace", self.resnet))
        r = self.trace.run("amp", tensor_core_speedup=3, insert_casts=False)
        self.assertEqual(r, cli("run", "amp", "--trace", self.resnet,
                                "--set", "tensor_core_speedup=3",
                                "--set", "insert_casts=false"))
        self.assertEqual(r["params"]["tensor_core_speedup"], "3")

    def test_runs_do_not_change_the_trace(self):
        # Each run changes a copy of the trace's graph: a second run of the
        # same model predicts the same.
        self.assertEqual(self.trace.run("amp"), self.trace.run("amp"))

    def test_sweep_equals_cli(self):
        r = self.trace.run("amp", memory_speedup=[2, 3])
        self.assertEqual(r, cli("run", "amp", "--trace", self.resnet,
                                "--set", "memory_speedup=2,3"))
        self.assertEqual(len(r["sweep"]["points"]), 2)

    def test_replay_equals_cli(self):
        self.assertEqual(self.trace.replay(),
                         cli("replay", "--trace", self.resnet))
        every = self.dd.load(self.resnet, iteration="all").replay()
        self.assertIsInstance(every, list)
        self.assertEqual(every, cli("replay", "--trace", self.resnet,
                                    "--iteration", "all", lines=True))

    def test_inspect_equals_cli(self):
        self.assertEqual(self.trace.inspect(),
                         cli("inspect", "--trace", self.resnet))

    def test_opportunities_equal_cli(self):
        self.assertEqual(self.trace.opportunities(top=3),
                         cli("opportunities", "--trace", self.resnet,
                             "--top", "3"))

    def test_tables(self):
        # The graph's tasks as columns, as inspect counts them: each top
        # kernel's calls and total time; kernels and operators partition
        # what they select of the tasks.
        tasks, kernels, ops = (self.trace.tasks(), self.trace.kernels(),
                               self.trace.ops())
        self.assertIsInstance(kernels, self.dd.Table)
        for t in (tasks, kernels, ops):
            self.assertTrue(all(len(c) == len(t) for c in t.values()))
        gpu = {"kernel", "memcpy", "memset", "comm"}
        self.assertEqual(len(kernels), sum(k in gpu for k in tasks["kind"]))
        self.assertEqual(set(ops["kind"]), {"cpu_op"})
        self.assertEqual(len(ops), tasks["kind"].count("cpu_op"))
        for top in cli("inspect", "--trace", self.resnet)["top_kernels"][:3]:
            rows = [r for r in kernels.rows() if r["name"] == top["name"]]
            self.assertEqual(len(rows), top["count"])
            self.assertEqual(sum(r["duration_ns"] for r in rows),
                             top["total_ns"])
        # GEMMs and convolutions carry FLOPs from their operators' shapes;
        # a copy carries none.
        self.assertTrue(any(f for f, c in zip(kernels["flops"],
                                              kernels["class"])
                            if c in ("gemm", "conv")))
        self.assertTrue(all(f is None for f, c in zip(kernels["flops"],
                                                      kernels["class"])
                            if c == "copy"))
        self.assertTrue(all(c is None for c in ops["class"]))

    def test_prediction_tables(self):
        # A run's tables are the graph the model changed: every task of the
        # trace's but those it removed, and those it inserted (never
        # measured), with the prediction's times.
        r = self.trace.run("amp")
        tasks = r.tasks()
        changes = r["changes"]
        self.assertEqual(len(tasks), len(self.trace.tasks()) +
                         changes["inserted"] - changes["removed"])
        inserted = [t for t in tasks.rows() if t["start_ns"] is None]
        self.assertEqual(len(inserted), changes["inserted"])
        self.assertTrue(all(t["predicted_duration_ns"] is not None
                            for t in inserted))
        self.assertEqual(set(r.kernels()["kind"]) - {"kernel", "memcpy",
                                                     "memset", "comm"},
                         set())
        with self.assertRaises(ValueError):
            self.trace.run("amp", memory_speedup=[2, 3]).kernels()

    def test_critical_path(self):
        # The replay's critical path, segment by segment: its durations sum
        # to what replay reports, one trace and a job alike.
        path = self.trace.critical_path()
        self.assertEqual(sum(path["duration_ns"]),
                         cli("replay", "--trace", self.resnet)[
                             "critical_path_ns"])
        self.assertLessEqual(set(path["kind"]), {"run", "gap", "delay"})
        self.assertTrue(all(a <= b for a, b in zip(path["start_ns"],
                                                   path["start_ns"][1:])))
        self.assertTrue(all((d is None) == (k != "delay") for d, k in
                            zip(path["dependency"], path["kind"])))
        job_dir = os.path.join(ARGS.data, "param", "dlrm_8rank")
        jp = self.dd.load(job_dir).critical_path()
        self.assertEqual(sum(jp["duration_ns"]),
                         cli("replay", "--trace", job_dir)["critical_path_ns"])
        self.assertIn("rank", jp)

    def test_job_tables(self):
        job = self.dd.load(os.path.join(ARGS.data, "param", "dlrm_8rank"))
        kernels = job.kernels()
        self.assertEqual(sorted(set(kernels["rank"])), list(range(8)))
        comm = [r for r in kernels.rows() if r["kind"] == "comm"]
        self.assertTrue(comm)
        # Each rank's collectives, measured, are the rank's own.
        for rank in range(8):
            self.assertTrue(any(r["rank"] == rank for r in comm))

    def test_job_prediction_tables(self):
        # A run on a job gives the changed job's tables, as on one trace:
        # every rank's tasks but those the model removed and with those it
        # inserted, each with its rank and the prediction's times; AMP's
        # GEMMs run shorter than they replayed.
        job = self.dd.load(os.path.join(ARGS.data, "param", "dlrm_8rank"))
        r = job.run("amp")
        changes = r["changes"]
        tasks = r.tasks()
        self.assertEqual(len(tasks), len(job.tasks()) +
                         changes["inserted"] - changes["removed"])
        self.assertEqual(sorted(set(tasks["rank"])), list(range(8)))
        inserted = [t for t in tasks.rows() if t["start_ns"] is None]
        self.assertEqual(len(inserted), changes["inserted"])

        def gemm_ns(table, column):
            return sum(d for d, c in zip(table[column], table["class"])
                       if c == "gemm" and d is not None)
        predicted = gemm_ns(r.kernels(), "predicted_duration_ns")
        replayed = gemm_ns(job.kernels(), "replayed_duration_ns")
        self.assertGreater(replayed, 0)
        self.assertLess(predicted, replayed)

    def test_memory_compare_equal_cli(self):
        # Every command is one call: memory and compare give the command's
        # JSON, number for number.
        self.assertEqual(self.trace.memory(top=3),
                         cli("memory", "--trace", self.resnet, "--top", "3"))
        kineto = os.path.join(ARGS.data, "kineto")
        before = os.path.join(kineto, "resnet50_2021-01_workers0.pt.trace.json.gz")
        after = os.path.join(
            kineto, "resnet50_2021-01_profiler_api_workers4.pt.trace.json.gz")
        t = self.dd.load(before)
        plain = t.compare(after)
        self.assertEqual(plain, cli("compare", before, after))
        # compare writes a report, as the command's --report does.
        self.assertIn("<!DOCTYPE html>", plain.report_html()[:100])
        self.assertIsNone(self.trace.memory(top=1).report_html())
        self.assertEqual(
            t.compare(after, model="amp", tensor_core_speedup=2),
            cli("compare", before, after, "--model", "amp", "--set",
                "tensor_core_speedup=2"))
        with self.assertRaises(ValueError):
            t.compare(after, tensor_core_speedup=2)  # no model
        with self.assertRaises(self.dd.Error):
            t.compare(os.path.join(kineto, "missing.json"))
        job = self.dd.load(os.path.join(ARGS.data, "param", "dlrm_8rank"))
        with self.assertRaises(self.dd.Error) as e:
            job.memory()
        self.assertIn("`memory` takes one trace, got 8", str(e.exception))

    def test_export_equals_cli(self):
        # export writes the command's Chakra files, byte for byte, and says
        # what it wrote as the command's --print json does.
        job_dir = os.path.join(ARGS.data, "param", "dlrm_8rank")
        with tempfile.TemporaryDirectory() as tmp:
            mine, theirs = os.path.join(tmp, "py"), os.path.join(tmp, "cli")
            got = self.dd.load(job_dir).export(mine, model="amp")
            out = subprocess.run(
                [ARGS.ddscript, "export", "--format", "chakra", "-o", theirs,
                 "--trace", job_dir, "--model", "amp", "--print", "json"],
                check=True, capture_output=True, text=True).stdout
            want = [json.loads(line) for line in out.splitlines() if line]
            self.assertEqual(json.dumps(got).replace(mine, "OUT"),
                             json.dumps(want if len(want) > 1 else want[0])
                             .replace(theirs, "OUT"))
            files = sorted(os.listdir(theirs))
            self.assertEqual(sorted(os.listdir(mine)), files)
            self.assertTrue(files)
            for f in files:
                with open(os.path.join(mine, f), "rb") as a, \
                        open(os.path.join(theirs, f), "rb") as b:
                    self.assertEqual(a.read(), b.read(), f)

    def test_check(self):
        # check compiles models without a trace: a shipped one has no
        # diagnostics; a model with an error has it, with its place.
        ok = self.dd.check("amp")["models"][0]
        self.assertEqual((ok["ok"], ok["diagnostics"]), (True, []))
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.dd")
            with open(bad, "w") as f:
                f.write("let x = 1\nprint(y)\n")
            r = self.dd.check(bad)
            d = r["models"][0]["diagnostics"]
            self.assertEqual(len(d), 1)
            self.assertEqual(d[0]["line"], 2)
            self.assertEqual(r, cli_json_allow_fail("check", bad))

    def test_convert_disasm_equal_cli(self):
        # convert writes the command's file and says what the command's
        # --format json says; disasm gives the command's listing.
        mine = os.path.join(self.tmp, "py.json")
        theirs = os.path.join(self.tmp, "cli.json")
        got = self.dd.convert(self.resnet, mine)
        want = cli("convert", self.resnet, "-o", theirs)
        self.assertEqual(json.dumps(got).replace(mine, "OUT"),
                         json.dumps(want).replace(theirs, "OUT"))
        with open(mine, "rb") as a, open(theirs, "rb") as b:
            self.assertEqual(a.read(), b.read())
        listing = subprocess.run([ARGS.ddscript, "disasm", "amp"], check=True,
                                 capture_output=True, text=True).stdout
        self.assertEqual(self.dd.disasm("amp"), listing)
        with self.assertRaises(self.dd.Error) as e:
            self.dd.disasm(os.path.join(self.tmp, "none.dd"))
        self.assertIn("no model", str(e.exception))

    def test_record(self):
        # record runs the command with the collector named, and describes
        # the trace it wrote as the command's --format json does. The
        # command stands in for a CUDA program: it writes a recorded trace
        # where the collector would (no GPU needed).
        cupti = os.path.join(ARGS.data, "cupti", "h200_resnet18.cupti.gz")
        out = os.path.join(self.tmp, "rec.cupti")
        script = 'gzip -dc "{}" > "$DDSCRIPT_CUPTI_OUTPUT"'.format(cupti)
        env = dict(os.environ, DDSCRIPT_CUPTI_COLLECTOR=ARGS.ddscript)
        old = os.environ.get("DDSCRIPT_CUPTI_COLLECTOR")
        os.environ["DDSCRIPT_CUPTI_COLLECTOR"] = ARGS.ddscript
        try:
            got = self.dd.record(["sh", "-c", script], output=out)
            want = json.loads(subprocess.run(
                [ARGS.ddscript, "record", "-o", out, "--format", "json",
                 "--", "sh", "-c", script], env=env, check=True,
                capture_output=True, text=True).stdout)
            self.assertEqual(got, want)
            self.assertEqual((got["kernels"], got["iterations"]), (1880, 5))
            # A command that fails after writing its trace: the result, and
            # a warning that says how it ended.
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = self.dd.record(["sh", "-c", script + "; exit 3"],
                                   output=out)
            self.assertEqual(r["exit_status"], 3)
            self.assertTrue(any("exited with status 3" in str(x.message)
                                for x in w))
            # One that writes none is an Error.
            with self.assertRaises(self.dd.Error) as e:
                self.dd.record(["true"], output=out)
            self.assertIn("no trace was written", str(e.exception))
            with self.assertRaises(ValueError):
                self.dd.record(["true"], output=out, skip=-1)
        finally:
            if old is None:
                del os.environ["DDSCRIPT_CUPTI_COLLECTOR"]
            else:
                os.environ["DDSCRIPT_CUPTI_COLLECTOR"] = old

    def test_job_replays(self):
        job_dir = os.path.join(ARGS.data, "param", "dlrm_8rank")
        job = self.dd.load(job_dir)
        self.assertTrue(job.is_job)
        self.assertEqual(len(job.paths), 8)
        self.assertEqual(job.replay(), cli("replay", "--trace", job_dir))
        self.assertEqual(job.run("amp"), cli("run", "amp", "--trace", job_dir))
        with self.assertRaises(self.dd.Error) as e:
            job.inspect()
        self.assertIn("`inspect` takes one trace, got 8", str(e.exception))

    def test_unprofiled_and_warnings(self):
        # The fit is bound by GPU work: the command warns, Python too.
        trace = os.path.join(ARGS.data, "groundtruth",
                             "resnet50_baseline.pt.trace.json.gz")
        # The fit's warning is about predictions: told by each run, not by
        # load, which may only replay (and warns of nothing here).
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = self.dd.load(trace, unprofiled="35.522ms")
            t.replay()
        self.assertEqual(caught, [])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = t.run("fused_adam")
        self.assertEqual(len(caught), 1)
        self.assertIn(trace + ": warning: --unprofiled 35.522 ms: with no CPU "
                      "time at all", str(caught[0].message))
        self.assertEqual(r, cli("run", "fused_adam", "--trace", trace,
                                "--unprofiled", "35.522ms"))

    def test_results_pickle(self):
        # Results cross processes as their data (and a sweep's rows); the
        # report and a run's tables, which rerun on the Trace, stay behind.
        import pickle
        for r in (self.trace.replay(), self.trace.run("amp"),
                  self.trace.run("amp", memory_speedup=[2, 3])):
            back = pickle.loads(pickle.dumps(r))
            self.assertIs(type(back), type(r))
            self.assertEqual(back, r)
            self.assertEqual(back._rows, r._rows)
            self.assertIsNone(back.report_html())
        sweep = pickle.loads(pickle.dumps(
            self.trace.run("amp", memory_speedup=[2, 3])))
        self.assertEqual(len(sweep._rows), 2)

    def test_argument_types(self):
        # Arguments of the wrong type or value are told in Python's words,
        # before anything runs.
        for call, error, words in (
                (lambda: self.dd.load(42), TypeError, "not int"),
                (lambda: self.dd.load([self.resnet, 7]), TypeError,
                 "paths, not int"),
                (lambda: self.dd.load(self.resnet, unprofiled=100), TypeError,
                 "unprofiled takes a str"),
                (lambda: self.dd.load(self.resnet, iteration=1.5), TypeError,
                 "iteration"),
                (lambda: self.trace.run("amp", max_steps=10**30), ValueError,
                 "max_steps"),
                (lambda: self.trace.run("amp", memory_speedup=float("nan")),
                 ValueError, "memory_speedup is nan"),
                (lambda: self.trace.run("amp", memory_speedup=float("inf")),
                 ValueError, "finite"),
                (lambda: self.dd.record(42), TypeError, "not int"),
                (lambda: self.dd.record(["true"], iterations=0), ValueError,
                 "iterations")):
            with self.assertRaises(error) as e:
                call()
            self.assertIn(words, str(e.exception))
        # Paths as bytes are paths.
        self.assertEqual(self.dd.load(os.fsencode(self.resnet)).paths,
                         [self.resnet])

    def test_per_event_equals_cli(self):
        trace = os.path.join(ARGS.data, "groundtruth",
                             "bert_baseline.pt.trace.json.gz")
        t = self.dd.load(trace, unprofiled="per-event")
        r = t.run("fused_adam")
        self.assertEqual(r, cli("run", "fused_adam", "--trace", trace,
                                "--unprofiled", "per-event"))
        self.assertEqual(r["profiler"]["model"], "per_event")
        self.assertLess(r["baseline_ns"], r["profiled_replay_ns"])
        # The default is the per-event model; profiled=True keeps the cost.
        self.assertEqual(self.dd.load(trace).run("fused_adam"), r)
        kept = self.dd.load(trace, profiled=True).run("fused_adam")
        self.assertEqual(kept, cli("run", "fused_adam", "--trace", trace,
                                   "--profiled"))
        self.assertNotIn("profiler", kept)
        with self.assertRaises(ValueError):
            self.dd.load(trace, profiled=True, unprofiled="3ms")

    def test_bad_model(self):
        bad = os.path.join(self.tmp, "bad.dd")
        with open(bad, "w") as f:
            f.write("# A model with a syntax error.\n"
                    "let g = select kernel where name ~ /gemm/\n"
                    "scale g by )\n")
        with self.assertRaises(self.dd.Error) as e:
            self.trace.run(bad)
        err = e.exception
        self.assertEqual((err.file, err.line), (bad, 3))
        # Where the command puts it.
        where = "{}:{}:{}: error: {}".format(bad, err.line, err.column,
                                             err.message)
        self.assertIn(where, cli_error("check", bad))
        self.assertTrue(str(err).startswith(where))

    def test_unknown_model(self):
        with self.assertRaises(self.dd.Error) as e:
            self.trace.run("no_such_model")
        self.assertEqual(e.exception.file, "ddscript")
        self.assertIn("no model 'no_such_model'", e.exception.message)
        self.assertEqual(e.exception.line, 0)

    def test_bad_parameter(self):
        with self.assertRaises(self.dd.Error) as e:
            self.trace.run("amp", no_such_param=1)
        self.assertIn(str(e.exception), cli_error(
            "run", "amp", "--trace", self.resnet, "--set", "no_such_param=1"))
        with self.assertRaises(self.dd.Error):
            self.trace.run("amp", tensor_core_speedup="fast")

    def test_missing_trace(self):
        missing = os.path.join(self.tmp, "missing.json.gz")
        with self.assertRaises(self.dd.Error) as e:
            self.dd.load(missing)
        self.assertEqual(e.exception.file, missing)
        self.assertIn(str(e.exception),
                      cli_error("replay", "--trace", missing))
        with self.assertRaises(self.dd.Error) as e:
            self.dd.load([self.resnet, missing])
        self.assertEqual(e.exception.file, missing)
        with self.assertRaises(ValueError):
            self.dd.load([])

    def test_bad_trace(self):
        broken = os.path.join(self.tmp, "broken.json")
        with open(broken, "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", ')
        with self.assertRaises(self.dd.Error) as e:
            self.dd.load(broken)
        self.assertEqual(e.exception.file, broken)

    def test_report_html(self):
        r = self.trace.run("amp")
        page = r.report_html()
        self.assertTrue(page.lstrip().lower().startswith("<!doctype html"))
        self.assertIn("<iframe srcdoc=", r._repr_html_())
        self.assertIsNone(self.trace.inspect()._repr_html_())

    def test_files(self):
        timeline = os.path.join(self.tmp, "amp.json")
        report = os.path.join(self.tmp, "amp.html")
        self.trace.run("amp", timeline=timeline, report=report)
        self.assertTrue(os.path.getsize(timeline) > 0)
        self.assertTrue(os.path.getsize(report) > 0)

    def test_models(self):
        names = [m["name"] for m in self.dd.models()["models"]]
        self.assertIn("amp", names)

    def test_to_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas is not installed")
        sweep = self.trace.run("amp", memory_speedup=[2, 3])
        df = sweep.to_pandas()
        self.assertEqual(len(df), 2)
        self.assertEqual(list(df["params.memory_speedup"]), ["2", "3"])
        self.assertEqual(list(df["predicted_ns"]),
                         [p["predicted_ns"] for p in sweep["sweep"]["points"]])
        self.assertEqual(len(self.trace.run("amp").to_pandas()), 1)

    def test_torch_hook(self):
        import ddscript.torch

        resnet = self.resnet

        class StandInProfiler:
            """What the hook uses of torch.profiler.profile."""
            step_num = 7

            def __init__(self):
                self.exported = []

            def export_chrome_trace(self, path):
                self.exported.append(path)
                shutil.copyfile(resnet, path)

        out = os.path.join(self.tmp, "hook", "trace-{step}.json.gz")
        hook = ddscript.torch.on_trace_ready("amp", out, tensor_core_speedup=3)
        prof = StandInProfiler()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            r = hook(prof)
        written = os.path.join(self.tmp, "hook", "trace-7.json.gz")
        self.assertEqual(prof.exported, [written])
        expected = cli("run", "amp", "--trace", written,
                       "--set", "tensor_core_speedup=3")
        self.assertEqual(r, expected)
        self.assertEqual(printed.getvalue(),
                         ddscript.torch.summary(expected) + "\n")
        self.assertIn("speedup {:.3f}x".format(expected["speedup"]),
                      printed.getvalue())



def _digest(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class NoClobber(unittest.TestCase):
    """The module refuses, as the command does, to write a --timeline or
    --report over one of its inputs: the trace, a rank of a job, the model,
    through a symlink. Each refusal raises ddscript.Error with the
    command's message and leaves every input byte for byte as it was."""

    @classmethod
    def setUpClass(cls):
        import ddscript

        cls.dd = ddscript
        cls.tmp = tempfile.mkdtemp(prefix="ddscript-clobber-")
        src = os.path.join(ARGS.data, "kineto",
                           "resnet50_v100_workers0.pt.trace.json.gz")
        cls.trace_path = os.path.join(cls.tmp, "t.json.gz")
        shutil.copyfile(src, cls.trace_path)
        cls.link = os.path.join(cls.tmp, "link.json.gz")
        os.symlink(cls.trace_path, cls.link)
        cls.model = os.path.join(cls.tmp, "m.dd")
        with open(cls.model, "w") as f:
            f.write("scale (select kernel) by 0.5\n")
        cls.job = os.path.join(cls.tmp, "job")
        shutil.copytree(os.path.join(ARGS.data, "param", "dlrm_8rank"),
                        cls.job)
        cls.trace = ddscript.load(cls.trace_path)
        cls.inputs = [cls.trace_path, cls.model] + [
            os.path.join(cls.job, n) for n in sorted(os.listdir(cls.job))]
        cls.before = {p: _digest(p) for p in cls.inputs}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def refused(self, call, *cli_args):
        with self.assertRaises(self.dd.Error) as e:
            call()
        self.assertIn("would overwrite it", str(e.exception))
        if cli_args:
            self.assertIn(str(e.exception), cli_error(*cli_args))
        for p, d in self.before.items():
            self.assertEqual(_digest(p), d, p + " was changed")

    def test_run_report_over_trace(self):
        self.refused(lambda: self.trace.run("amp", report=self.trace_path),
                     "run", "amp", "--trace", self.trace_path,
                     "--report", self.trace_path)

    def test_replay_timeline_over_trace(self):
        self.refused(lambda: self.trace.replay(timeline=self.trace_path),
                     "replay", "--trace", self.trace_path,
                     "--timeline", self.trace_path)

    def test_opportunities_report_over_trace(self):
        self.refused(
            lambda: self.trace.opportunities(report=self.trace_path),
            "opportunities", "--trace", self.trace_path,
            "--report", self.trace_path)

    def test_run_timeline_over_model(self):
        self.refused(lambda: self.trace.run(self.model, timeline=self.model),
                     "run", self.model, "--trace", self.trace_path,
                     "--timeline", self.model)

    def test_symlink_to_trace(self):
        self.refused(lambda: self.trace.run("amp", report=self.link))
        self.refused(lambda: self.dd.load(self.link).replay(
            report=self.trace_path))

    def test_job_rank(self):
        job = self.dd.load(self.job)
        rank0 = job.paths[0]
        self.refused(lambda: job.replay(report=rank0 + ""),
                     "replay", "--trace", self.job, "--report", rank0)
        self.refused(lambda: job.run("amp", timeline=rank0))

    def test_sweep_report_over_trace(self):
        self.refused(lambda: self.trace.run("amp", memory_speedup=[2, 3],
                                            report=self.trace_path))

def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--ddscript")
    p.add_argument("--data")
    p.add_argument("--skip")
    ARGS, rest = p.parse_known_args()
    if ARGS.skip:
        print("skipped: " + ARGS.skip)
        return 77
    prog = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
