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
