#!/usr/bin/env python3
"""Checks the example outputs in the docs against what ddscript prints.

usage: check_doc_examples.py DDSCRIPT REPO_ROOT FILE.md...

A line `$ build/ddscript ARGS` in a fenced block starts an example:
the command runs in a temporary folder that links the repository's files
(build/ddscript replaced by DDSCRIPT; what it writes stays there), and
every following line of the block must be a line it printed on stdout, in order (the first anywhere, the others each right after the one
before), up to the next `$` line or the block's end, with runs
of blanks counted as one; a line `...` skips any number of lines, and a
line ending in `...` matches a line it begins. Lines of
a block before its first `$` line are not checked.
A fenced block whose first line is `// NAME.dd` is a model the doc's
text writes: it is saved as NAME.dd in each example's folder, so that
`$ build/ddscript run NAME.dd ...` runs the model as the doc shows it.
Exits 1 naming the first line that is not printed, so a doc cannot go
stale with a number ddscript no longer prints.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def norm(line):
    return re.sub(r"\s+", " ", line.strip())


def models(path):
    """The doc's models: {NAME.dd: text} of the blocks that begin
    `// NAME.dd`."""
    out, block = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("```"):
            if block is None:
                block = []
            else:
                m = re.fullmatch(r"// ([\w.-]+\.dd)", block[0].strip()) \
                    if block else None
                if m:
                    out[m.group(1)] = "\n".join(block) + "\n"
                block = None
            continue
        if block is not None:
            block.append(line)
    return out


def examples(path):
    block, out = None, []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("```"):
            if block is None:
                block = [n, []]
            else:
                # Each `$ build/ddscript` line starts an example of its own.
                start = None
                for k, l in enumerate(block[1] + ["$ end"]):
                    if l.startswith("$ "):
                        if start is not None and block[1][start].startswith(
                                "$ build/ddscript "):
                            out.append([block[0] + start,
                                        block[1][start:k]])
                        start = k
                block = None
            continue
        if block is not None:
            block[1].append(line)
    return out


def check(ddscript, root, path):
    failures = 0
    texts = models(path)
    for first, lines in examples(path):
        cmd = shlex.split(lines[0][2:], comments=True)
        cmd[0] = ddscript
        # In a folder of its own that sees the repository's inputs: what an
        # example writes (export -o out) never lands in the source tree.
        with tempfile.TemporaryDirectory() as work:
            for name in os.listdir(root):
                if name not in (".git", "build"):
                    os.symlink(os.path.join(root, name),
                               os.path.join(work, name))
            for name, text in texts.items():
                # Never through a link into the repository.
                dest = os.path.join(work, name)
                if os.path.lexists(dest):
                    os.remove(dest)
                with open(dest, "w", encoding="utf-8") as f:
                    f.write(text)
            p = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                               timeout=300)
        got = [norm(l) for l in p.stdout.splitlines() if l.strip()]
        # An example may begin anywhere in the output (a first `trace`
        # line left out); after that, lines follow one another.
        pos, skip = 0, True
        for k, want in enumerate(lines[1:], 1):
            if want.strip() == "...":
                skip = True
                continue
            w = norm(want)
            if not w:
                continue
            # A line cut short with `...` matches the line it begins.
            if w.endswith("...") and w != "...":
                cut = w[:-3].rstrip()
                same = lambda g: g.startswith(cut)
            else:
                same = lambda g: g == w
            if skip:
                while pos < len(got) and not same(got[pos]):
                    pos += 1
            if pos < len(got) and same(got[pos]):
                pos += 1
                skip = False
                continue
            print(f"{path}:{first + k + 1}: `{lines[0][2:]}` does not print "
                  f"this line where the example has it:\n  {want.strip()}")
            failures += 1
            break
    return failures


def main(argv):
    ddscript, root = argv[0], argv[1]
    bad = sum(check(ddscript, root, os.path.join(root, f)) for f in argv[2:])
    if bad:
        sys.exit(1)
    print(f"doc examples: all match ({', '.join(argv[2:])})")


if __name__ == "__main__":
    main(sys.argv[1:])
