"""What the model property checks share (check_parallel.py,
check_layers_model.py, check_shape_model.py): running a model as `ddscript
run MODEL --format json` and failing with one line."""
import json
import subprocess
import sys


def fail(msg):
    sys.exit("FAIL: " + msg)


def run_model(ddscript, model, trace, *sets, rc=0):
    """`ddscript run MODEL --trace TRACE --set ...` in JSON; the parsed
    result, or where rc is not 0 the error text (the exit must be rc)."""
    args = [ddscript, "run", model, "--trace", trace, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if p.returncode != rc:
        fail(f"{' '.join(args[2:])}: exit {p.returncode}, want {rc}\n"
             f"{p.stderr[-1500:]}")
    return json.loads(p.stdout) if rc == 0 else p.stderr


def expect_refusal(ddscript, model, trace, setting, words):
    """The model refuses `--set SETTING` on TRACE with exit 2, saying WORDS."""
    err = run_model(ddscript, model, trace, setting, rc=2)
    if words not in err:
        fail(f"{model} --set {setting}: exit 2 without {words!r}: {err}")


def identity_problems(r):
    """Where a run's JSON (`run ... --format json`) does not predict its own
    replay, as a model that changes nothing must: a job's steady state and
    each rank's (the speedup compares those), or one trace's baseline. An
    empty list where it does."""
    if "job_predicted_ns" not in r:
        if r["predicted_ns"] == r["baseline_ns"]:
            return []
        return [f"predicts {r['predicted_ns']} ns against the replay's "
                f"{r['baseline_ns']} ns"]
    out = []
    if r["job_predicted_ns"] != r["job_baseline_steady_ns"]:
        out.append(f"the job predicts {r['job_predicted_ns']} ns against its "
                   f"replay's {r['job_baseline_steady_ns']} ns")
    for k in r["ranks"]:
        if k["predicted_ns"] != k["baseline_steady_ns"]:
            out.append(f"rank {k['rank']} predicts {k['predicted_ns']} ns "
                       f"against its replay's {k['baseline_steady_ns']} ns")
    return out
