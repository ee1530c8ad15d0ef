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
