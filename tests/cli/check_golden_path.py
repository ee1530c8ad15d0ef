#!/usr/bin/env python3
"""The golden runner sees what `ddscript run` shows (issue: a golden must pin
what users see).

usage: check_golden_path.py DDSCRIPT DD_GOLDEN DATA_DIR LANG_DIR

For every trace a golden in LANG_DIR runs against, a model printing the
reported iteration, the replay and a prediction is run by `ddscript run
--profiled` (goldens keep the trace's CPU work as recorded);
its printed lines become the `// expect:` lines of a golden for the same
trace, which dd_golden must pass. Both run a model through
driver::setupRun and driver::predict, so they choose the same iteration and
print the same numbers; this check fails the day they do not.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

MODEL = """\
print trace.iteration, len(trace.iterations), baseline()
shrink (select kernel) by 2
print simulate(), (select kernel).count
"""


def main(argv):
    ddscript, golden, data, lang = argv
    traces = set()
    for f in glob.glob(os.path.join(lang, "**", "*.dd"), recursive=True):
        for m in re.finditer(r"^// trace: *(\S+)", open(f).read(), re.M):
            traces.add(m.group(1))
    if not traces:
        sys.exit("FAIL: no golden names a trace")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.dd")
        with open(model, "w") as f:
            f.write(MODEL)
        for t in sorted(traces):
            p = subprocess.run([ddscript, "run", model, "--trace",
                                os.path.join(data, t), "--format", "json",
                                "--profiled"],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                sys.exit(f"FAIL: ddscript run on {t}: {p.stderr}")
            lines = json.loads(p.stdout)["output"].rstrip("\n").split("\n")
            g = os.path.join(tmp, "g.dd")
            with open(g, "w") as f:
                f.write(f"// trace: {t}\n" + MODEL +
                        "".join(f"// expect: {l}\n" for l in lines))
            p = subprocess.run([golden, g, data], capture_output=True,
                               text=True, timeout=300)
            if p.returncode != 0:
                sys.exit(f"FAIL: {t}: the golden runner differs from "
                         f"`ddscript run`:\n{p.stderr}")
            print(f"ok  {t}: {lines[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
