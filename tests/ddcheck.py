"""Helpers the check scripts share (tests/cli/check_sweep.py,
tests/report/check_page.py, tests/report/check_timeline.py): failing with a
message, running ddscript, and formatting durations as ddscript prints them.
"""
import subprocess
import sys


def fail(msg):
    sys.stderr.write(f"FAIL: {msg}\n")
    sys.exit(1)


def run(cmd):
    """stdout of cmd; fails (with its stderr) unless it exits 0."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}\n{p.stderr}")
    return p.stdout


def fmt_duration(ns):
    """ddscript's formatDuration."""
    a = abs(ns)
    if a >= 1_000_000_000:
        return f"{ns / 1e9:.3f} s"
    if a >= 1_000_000:
        return f"{ns / 1e6:.3f} ms"
    if a >= 1_000:
        return f"{ns / 1e3:.3f} us"
    return f"{ns} ns"
