#!/usr/bin/env python3
"""A rank whose clock is not the others' is bad input, said so (issue 36).

usage: check_job_clocks.py DDSCRIPT JOB_DIR

JOB_DIR holds one trace per rank (param/dlrm_8rank). The check writes a copy
in which rank 3's timestamps are rebased to 0 (its clock 50 years from the
others'), and checks that

- `replay --clock trace` (the clocks as they are) exits 2 with one error
  naming rank 3's file, how far its clock is, and --clock collectives (it
  exited 3 saying a model made times too large: no model was given);
- `replay` (clocks aligned by the collectives, the default) replays the job;
- a hidden file in the folder (a copy of rank 0 named .worker0.json.gz) is
  not read as a rank (it was: "both rank 0");
- with rank 3's steps renumbered (ProfilerStep#1010), "no iteration in
  common" names rank 3's file, the odd one (it named the first and the last
  rank, which share theirs);
- a rank of 2^32 + 2 (it became rank 2, a collision, in the job; export wrote
  chakra.4294967298.et) is refused by replay and export with exit 2.
"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, rc):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}, expected "
                 f"{rc}\n{p.stderr}")
    return p


def main(argv):
    ddscript, job = argv[1], argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        paths = sorted(glob.glob(os.path.join(job, "*.json.gz")))
        for i, src in enumerate(paths):
            with gzip.open(src, "rt") as f:
                doc = json.load(f)
            if i == 3:
                evs = doc["traceEvents"]
                low = min(e["ts"] for e in evs
                          if isinstance(e.get("ts"), (int, float)))
                for e in evs:
                    if isinstance(e.get("ts"), (int, float)):
                        e["ts"] -= low
                doc.pop("baseTimeNanoseconds", None)
            with gzip.open(os.path.join(tmp, os.path.basename(src)), "wt") as f:
                json.dump(doc, f)
        bad = os.path.basename(paths[3])
        for cmd in ([ddscript, "replay", "--trace", tmp, "--clock", "trace"],
                    [ddscript, "replay", "--trace", tmp, "--clock", "trace",
                     "--iteration", "all"]):
            err = run(cmd, 2).stderr
            lines = [l for l in err.splitlines() if "error" in l]
            if len(lines) != 1 or bad not in lines[0] or \
                    "rank 3's clock is" not in lines[0] or \
                    "--clock collectives" not in lines[0]:
                sys.exit(f"FAIL: {' '.join(cmd)}: expected one error naming "
                         f"{bad} and --clock collectives, got:\n{err}")
        with open(paths[0], "rb") as f, \
                open(os.path.join(tmp, ".worker0.json.gz"), "wb") as g:
            g.write(f.read())
        out = run([ddscript, "replay", "--trace", tmp], 0).stdout
        if "replayed" not in out or "job        8 ranks" not in out:
            sys.exit(f"FAIL: replay with clocks aligned by collectives:\n{out}")
        # Rank 3's steps renumbered: the odd rank is named.
        path = os.path.join(tmp, bad)
        with gzip.open(paths[3], "rt") as f:
            doc = json.load(f)
        for e in doc["traceEvents"]:
            name = e.get("name")
            if isinstance(name, str) and name.startswith("ProfilerStep#"):
                e["name"] = f"ProfilerStep#{int(name.split('#')[1]) + 1000}"
        with gzip.open(path, "wt") as f:
            json.dump(doc, f)
        err = run([ddscript, "replay", "--trace", tmp], 2).stderr
        if "no iteration in common" not in err or bad not in err or \
                "ProfilerStep#1010" not in err:
            sys.exit(f"FAIL: renumbered rank 3: expected its file named, "
                     f"got:\n{err}")
        # A rank number far beyond any job.
        with gzip.open(paths[2], "rt") as f:
            doc = json.load(f)
        doc["distributedInfo"]["rank"] = 2**32 + 2
        with gzip.open(os.path.join(tmp, os.path.basename(paths[2])),
                       "wt") as f:
            json.dump(doc, f)
        for cmd in ([ddscript, "replay", "--trace", tmp],
                    [ddscript, "export", "-o", os.path.join(tmp, "out"),
                     "--trace", tmp]):
            err = run(cmd, 2).stderr
            if "rank 4294967298" not in err or "are not taken" not in err:
                sys.exit(f"FAIL: {' '.join(cmd)}: rank 2^32 + 2: {err}")
    print("ok: a rank's foreign clock is refused with exit 2, and aligned "
          "by its collectives; the odd rank is named; huge ranks refused")


if __name__ == "__main__":
    main(sys.argv)
