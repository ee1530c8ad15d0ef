#!/usr/bin/env python3
"""Writes the hostile inputs of the cli.input.* tests.

usage: make_hostile.py DATA_DIR OUT_DIR

Nothing big is committed: what is large is made here, in well under a
second.
"""
import os
import shutil
import sys

MIB = 1 << 20


def main(data, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    j = lambda name: os.path.join(out, name)
    os.mkfifo(j("pipe"))
    # Over the 16 MiB a model may be (compiler/Compiler.h).
    with open(j("big.dd"), "w") as f:
        line = "// " + "x" * 60 + "\n"
        f.write(line * (17 * MIB // len(line) + 1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
