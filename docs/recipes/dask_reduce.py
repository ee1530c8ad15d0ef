#!/usr/bin/env python3
"""Reduces a job's ranks on a Dask cluster, then joins them in this process.

usage: dask_reduce.py TRACES OUT [--scheduler ADDRESS] [--workers N]
                      [--iteration N] [--run MODEL]

TRACES is the folder of the job's traces (one per rank), OUT the folder for
their .ddg files, on a file system every worker sees. With --scheduler the
ranks go to that cluster (dask-scheduler's tcp://HOST:8786; its workers need
the ddscript package on their PYTHONPATH); without, to a local cluster of
--workers processes. Each rank is one task, `ddscript.reduce`; the join
loads OUT and replays the job (or runs --run MODEL on it), printing the
result as JSON lines. See docs/multirank.md, "Beyond one machine".
"""
import argparse
import json
import os
import sys


def reduce_rank(trace, folder, iteration=None):
    """One task: the rank's trace reduced into the job's folder (runs in a
    worker's process)."""
    import ddscript

    name = os.path.basename(trace)
    for ext in (".json.gz", ".json", ".cupti"):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return dict(ddscript.reduce(trace, os.path.join(folder, name + ".ddg"),
                                iteration=iteration))


def reduce_job(client, traces, folder, iteration=None):
    """Maps reduce_rank over \\p traces on the cluster of \\p client; what
    each wrote, in the traces' order."""
    os.makedirs(folder, exist_ok=True)
    n = len(traces)
    futures = client.map(reduce_rank, traces, [folder] * n, [iteration] * n,
                         pure=False)
    return client.gather(futures)


def trace_files(folder):
    names = sorted(os.listdir(folder))
    return [os.path.join(folder, n) for n in names
            if n.endswith((".json", ".json.gz", ".cupti"))
            and not n.startswith(".")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces")
    ap.add_argument("out")
    ap.add_argument("--scheduler")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--iteration")
    ap.add_argument("--run", metavar="MODEL")
    a = ap.parse_args()
    from dask.distributed import Client, LocalCluster

    import ddscript

    traces = trace_files(a.traces)
    if not traces:
        sys.exit(f"dask_reduce.py: {a.traces} holds no traces")
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        client = Client(LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                     dashboard_address=None))
    with client:
        written = reduce_job(client, traces, a.out, a.iteration)
    print(f"reduced {len(written)} ranks into {a.out}", file=sys.stderr)
    job = ddscript.load(a.out, iteration=a.iteration)
    result = job.run(a.run) if a.run else job.replay()
    for r in (result if isinstance(result, list) else [result]):
        print(json.dumps(r))


if __name__ == "__main__":
    main()
