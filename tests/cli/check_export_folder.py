#!/usr/bin/env python3
"""`export`'s folder holds one export, whole (issue 36 item 5).

usage: check_export_folder.py DDSCRIPT JOB_DIR ONE_RANK_TRACE

- A write that fails part way (here the file-size limit stands in for a
  full disk, at the job's fourth rank or so) exits 2 and leaves the folder
  as it was: the earlier export's files byte for byte, no new file among
  them, no temporary.
- An export of fewer ranks into a folder an earlier export filled removes
  the earlier ranks' files (ASTRA-sim would read them as part of the
  workload) and says so; files that are not chakra.RANK.et stay.
"""
import os
import resource
import signal
import subprocess
import sys
import tempfile


def fail(msg):
    sys.exit("FAIL: " + msg)


def snapshot(d):
    return {f: open(os.path.join(d, f), "rb").read()
            for f in sorted(os.listdir(d))}


def main():
    ddscript, job, one = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "chakra")
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", job, "-o", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"export of the job: exit {p.returncode}: {p.stderr}")
        before = snapshot(out)
        ranks = [f for f in before if f.startswith("chakra.")]
        if len(ranks) < 2:
            fail(f"the job exported {ranks}: too few ranks to test with")
        sizes = sorted(len(b) for b in before.values())
        # The limit lets the smaller files through and stops a larger one.
        limit = sizes[len(sizes) // 2] - 1

        def small_disk():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        # A model that changes every rank, so every file would change.
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", job, "-o", out, "--model", "amp"],
                           capture_output=True, text=True,
                           preexec_fn=small_disk)
        if p.returncode != 2 or "the folder is as it was" not in p.stderr:
            fail(f"a full disk: exit {p.returncode}, stderr {p.stderr!r}")
        if snapshot(out) != before:
            fail("a failed export changed the folder: "
                 f"{sorted(snapshot(out))} against {sorted(before)}")

        with open(os.path.join(out, "notes.txt"), "w") as f:
            f.write("mine")
        p = subprocess.run([ddscript, "export", "--format", "chakra",
                            "--trace", one, "-o", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"export of one rank: exit {p.returncode}: {p.stderr}")
        left = sorted(os.listdir(out))
        written = [f for f in left if f.startswith("chakra.")]
        if len(written) != 1 or "notes.txt" not in left:
            fail(f"after exporting one rank the folder holds {left}")
        want = f"note: removed {len(ranks) - 1} file(s) an earlier export left"
        if want not in p.stdout:
            fail(f"no {want!r} in:\n{p.stdout}")
    print(f"ok: a failed export of {len(ranks)} ranks left the folder whole; "
          f"an export of one rank removed the other {len(ranks) - 1}")


if __name__ == "__main__":
    main()
