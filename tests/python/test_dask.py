"""A job reduced on a Dask cluster, then joined in one process (issue 38).

usage: test_dask.py --data tests/data
       test_dask.py --skip REASON    (no Python module, or no dask.distributed)

A local dask.distributed cluster of 2 worker processes maps ddscript.reduce
over each shipped job's ranks with the shipped recipe's reduce_job
(docs/recipes/dask_reduce.py; docs/multirank.md, "Beyond one machine"),
then the recipe's command runs whole against a local cluster; the folder of reduced ranks is then loaded in this process, and
its replay and run must be what the traces give, but the inputs' names. The
built package must be on PYTHONPATH (build/python); the workers inherit it.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile


HERE = os.path.dirname(os.path.abspath(__file__))
RECIPES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs",
                       "recipes")


def without_names(results, names):
    """A job's results (a Result or Results) with the inputs' names taken
    out: `traces`, and each rank's `trace`."""
    rows = results if isinstance(results, list) else [results]
    out = []
    for r in rows:
        r = dict(r)
        r.pop("traces", None)
        for k in r.get("ranks", []):
            k.pop("trace", None)
        out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--skip")
    a = ap.parse_args()
    if a.skip:
        print("skipped:", a.skip)
        sys.exit(77)
    from dask.distributed import Client, LocalCluster

    import ddscript

    sys.path.insert(0, RECIPES)
    import dask_reduce  # noqa: E402  the recipe, as shipped

    jobs = {"dlrm": sorted(glob.glob(os.path.join(
                a.data, "param/dlrm_8rank/*.json.gz"))),
            "megatron": sorted(glob.glob(os.path.join(
                a.data, "astra_sim/megatron_tp8/*.json.gz")))}
    tmp = tempfile.mkdtemp(prefix="dddask")
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, \
                Client(cluster) as client:
            for name, traces in jobs.items():
                assert len(traces) == 8, (name, traces)
                folder = os.path.join(tmp, name)
                os.makedirs(folder)
                written = dask_reduce.reduce_job(client, traces, folder)
                pids = client.run(os.getpid)
                assert len(set(pids.values())) == 2, pids
                ranks = sorted(w["rank"] for w in written)
                assert ranks == list(range(8)), (name, ranks)
                for w in written:
                    assert w["bytes"] < w["trace_bytes"], w
                reduced = ddscript.load(folder)
                assert reduced.is_job, reduced
                whole = ddscript.load(traces)
                a_, b_ = whole.replay(), reduced.replay()
                assert without_names(a_, traces) == without_names(b_, traces), \
                    (name, a_, b_)
                a_, b_ = whole.run("amp"), reduced.run("amp")
                assert without_names(a_, traces) == without_names(b_, traces), \
                    (name, a_, b_)
                print(f"ok: {name}: 8 ranks reduced on 2 Dask workers, "
                      f"replay and run amp the same as from the traces")
        # The recipe's command, whole: its own local cluster, then the join.
        out = os.path.join(tmp, "recipe")
        p = subprocess.run(
            [sys.executable, os.path.join(RECIPES, "dask_reduce.py"),
             os.path.dirname(jobs["dlrm"][0]), out, "--workers", "2"],
            capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        want = ddscript.load(jobs["dlrm"]).replay()
        assert without_names(lines, []) == without_names(want, []), \
            (lines, want)
        print("ok: docs/recipes/dask_reduce.py reduces and joins the DLRM job")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
