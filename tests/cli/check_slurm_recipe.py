#!/usr/bin/env python3
"""The Slurm recipe (docs/recipes/slurm_*.sh, .sbatch) reduces a job and
joins it to what its traces give (issue 38).

usage: check_slurm_recipe.py DDSCRIPT RECIPES TRACES_DIR

slurm_submit.sh runs as a user would run it. Where Slurm answers
(`scontrol ping`), it submits to it and waits; else (CI, this machine: no
slurmctld, whose daemons need munge and root) a stand-in `sbatch` on PATH
runs what Slurm would: each array task's script with the variables Slurm
sets for it (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_MIN,
_MAX, _COUNT, SLURM_JOB_ID, SLURM_JOB_NAME), then the join only once every
task it depends on (afterok) ended with status 0. The join's output must be
the traces' replay but the inputs' names, for one rank per task and for
three; a task that fails must keep the join from running.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAKE_SBATCH = r'''#!/usr/bin/env python3
# A stand-in for sbatch: runs the job at once, as Slurm would run it.
import os, subprocess, sys
state = os.environ["FAKE_SLURM_STATE"]
args = sys.argv[1:]
array = dependency = None
while args and args[0].startswith("--"):
    a = args.pop(0)
    if a.startswith("--array="):
        array = a.split("=", 1)[1]
    elif a.startswith("--dependency="):
        dependency = a.split("=", 1)[1]
script, rest = args[0], args[1:]
ids = os.path.join(state, "next")
jid = int(open(ids).read()) if os.path.exists(ids) else 1000
open(ids, "w").write(str(jid + 100))
failed = os.path.join(state, "failed")
bad = set(open(failed).read().split()) if os.path.exists(failed) else set()
if dependency:
    kind, _, deps = dependency.partition(":")
    assert kind == "afterok", dependency
    if any(d in bad for d in deps.split(":")):
        # Slurm leaves it pending, DependencyNeverSatisfied; it never runs.
        open(os.path.join(state, "never_ran"), "a").write(f"{jid}\n")
        print(jid)
        sys.exit(0)
env = dict(os.environ, SLURM_JOB_NAME=os.path.basename(script))
tasks = [None]
if array:
    lo, hi = (int(x) for x in array.split("%")[0].split("-"))
    tasks = list(range(lo, hi + 1))
ok = True
for i, t in enumerate(tasks):
    e = dict(env, SLURM_JOB_ID=str(jid + i))
    if t is not None:
        e.update(SLURM_ARRAY_JOB_ID=str(jid), SLURM_ARRAY_TASK_ID=str(t),
                 SLURM_ARRAY_TASK_MIN=str(tasks[0]),
                 SLURM_ARRAY_TASK_MAX=str(tasks[-1]),
                 SLURM_ARRAY_TASK_COUNT=str(len(tasks)))
    log = os.path.join(state, f"slurm-{jid}_{t}.out")
    with open(log, "w") as f:
        rc = subprocess.run(["bash", script, *rest], env=e, stdout=f,
                            stderr=subprocess.STDOUT).returncode
    ok &= rc == 0
if not ok:
    open(failed, "a").write(f"{jid}\n")
print(jid)
'''


def fail(msg):
    sys.exit("FAIL: " + msg)


def slurm_answers():
    if not shutil.which("sbatch") or not shutil.which("scontrol"):
        return False
    p = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    return p.returncode == 0 and "UP" in p.stdout


def without_traces(lines):
    out = []
    for line in lines:
        r = json.loads(line)
        for k in r.get("ranks", []):
            k.pop("trace", None)
        out.append(r)
    return out


def main(argv):
    ddscript, recipes, traces = (os.path.abspath(a) for a in argv[:3])
    tmp = tempfile.mkdtemp(prefix="ddslurm")
    try:
        env = dict(os.environ, DDSCRIPT=ddscript)
        real = slurm_answers()
        if not real:
            bindir = os.path.join(tmp, "bin")
            state = os.path.join(tmp, "state")
            os.makedirs(bindir)
            os.makedirs(state)
            with open(os.path.join(bindir, "sbatch"), "w") as f:
                f.write(FAKE_SBATCH)
            os.chmod(os.path.join(bindir, "sbatch"), 0o755)
            env.update(PATH=bindir + os.pathsep + env["PATH"],
                       FAKE_SLURM_STATE=state)
        p = subprocess.run([ddscript, "replay", "--trace", traces, "--format",
                            "json"], capture_output=True, text=True,
                           check=True)
        want = without_traces(p.stdout.splitlines())
        submit = os.path.join(recipes, "slurm_submit.sh")
        for per in (1, 3):
            out = os.path.join(tmp, f"out{per}")
            p = subprocess.run(["bash", submit, traces, out, str(per)],
                               env=env, capture_output=True, text=True,
                               timeout=600)
            if p.returncode != 0:
                fail(f"slurm_submit.sh (PER_TASK {per}): exit "
                     f"{p.returncode}\n{p.stderr}")
            if real:
                join = p.stdout.split("join: job ")[1].split()[0]
                subprocess.run(["srun", f"--dependency=afterany:{join}",
                                "true"], check=True, timeout=3600)
            ddgs = [n for n in os.listdir(out) if n.endswith(".ddg")]
            ranks = len([n for n in os.listdir(traces)
                         if n.endswith((".json", ".json.gz"))])
            if len(ddgs) != ranks:
                fail(f"PER_TASK {per}: {len(ddgs)} .ddg files for {ranks} "
                     f"ranks: {sorted(ddgs)}")
            with open(os.path.join(out, "join.out")) as f:
                got = without_traces(f.read().splitlines())
            if got != want:
                fail(f"PER_TASK {per}: the join printed\n{got}\nnot the "
                     f"traces' replay\n{want}")
        if not real:
            # A task that fails (a trace that is not one): no join.
            bad = os.path.join(tmp, "bad")
            os.makedirs(bad)
            for n in sorted(os.listdir(traces))[:2]:
                shutil.copy(os.path.join(traces, n), bad)
            with open(os.path.join(bad, "rank9.json"), "w") as f:
                f.write("{ not json")
            out = os.path.join(tmp, "outbad")
            p = subprocess.run(["bash", submit, bad, out], env=env,
                               capture_output=True, text=True, timeout=600)
            never = os.path.join(env["FAKE_SLURM_STATE"], "never_ran")
            if p.returncode != 0 or not os.path.exists(never) or \
                    os.path.exists(os.path.join(out, "join.out")):
                fail(f"a failed reduce task did not hold the join back: "
                     f"{p.stdout}{p.stderr}")
        print(f"ok: the Slurm recipe ({'Slurm' if real else 'a stand-in sbatch with Slurm variables'}) "
              f"reduced and joined {traces}, one and three ranks per task")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
