"""Timing a command for the benchmarks: best wall time of several runs and
the largest peak memory (max RSS) of those processes."""
import os
import subprocess
import sys
import tempfile
import time


def best_of(cmd, runs):
    """(best wall seconds, largest max RSS in bytes) over `runs` runs; exits
    with the command's stderr if it fails."""
    best, rss = None, 0
    for _ in range(runs):
        with tempfile.TemporaryFile() as err:
            t = time.perf_counter()
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(p.pid, 0)
            dt = time.perf_counter() - t
            if os.waitstatus_to_exitcode(status) != 0:
                err.seek(0)
                sys.exit(f"failed: {' '.join(cmd)}\n{err.read().decode()}")
        rss = max(rss, usage.ru_maxrss * 1024)
        best = dt if best is None else min(best, dt)
    return best, rss


def big_trace(source, mb, keep=None, prefix="ddbench"):
    """A Kineto trace of about `mb` MB made from `source` by
    make_big_trace.py (its iterations repeated with their own ids): at
    `keep` when given (reused if it exists), else in a new temporary
    folder."""
    here = os.path.dirname(os.path.abspath(__file__))
    trace = keep or os.path.join(tempfile.mkdtemp(prefix=prefix), "big.json")
    if not os.path.exists(trace):
        subprocess.run([sys.executable, os.path.join(here, "make_big_trace.py"),
                        source, trace, "--mb", str(mb)], check=True,
                       stdout=subprocess.DEVNULL)
    return trace
