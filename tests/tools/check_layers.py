#!/usr/bin/env python3
"""Every #include in src/ follows the layer map of docs/architecture.md.

usage: check_layers.py SOURCE_DIR

The map is the code block at the top of docs/architecture.md: lines
`A ──► B, C ──► D (and E)`, each arrow an edge from the name before it to
the names after it, "(and E)" an edge from the line's first name. A library
in src/A may include its own headers and those of every layer the map puts
below it (the edges, followed transitively). A missing edge, or an include
the map does not allow, fails, naming the file and line.
"""
import os
import re
import sys

ARROW = "──►"


def layer_map(doc):
    text = open(doc, encoding="utf-8").read()
    block = re.search(r"```\n(.*?)```", text, re.S).group(1)
    edges = {}
    for line in block.splitlines():
        if ARROW not in line or line.startswith("runtime"):
            continue
        extra = re.search(r"\(and ([^)]*)\)", line)
        line = re.sub(r"\(.*?\)", "", line)
        parts = [p.strip() for p in line.split(ARROW)]
        names = [[n.strip().rstrip("/") for n in p.split(",") if n.strip()]
                 for p in parts]
        for left, right in zip(names, names[1:]):
            src = left[-1]
            edges.setdefault(src, set()).update(right)
        if extra:
            edges.setdefault(names[0][0], set()).update(
                n.strip() for n in extra.group(1).split(",") if n.strip())
    return edges


def below(edges, start):
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        for m in edges.get(n, ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def main():
    root = sys.argv[1]
    edges = layer_map(os.path.join(root, "docs", "architecture.md"))
    src = os.path.join(root, "src")
    layers = sorted(d for d in os.listdir(src)
                    if os.path.isdir(os.path.join(src, d)))
    missing = [d for d in layers if d not in edges and d != "support"]
    bad = []
    for d in layers:
        allowed = below(edges, d) | {d}
        for dirpath, _, files in os.walk(os.path.join(src, d)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h", ".def")):
                    continue
                path = os.path.join(dirpath, f)
                for no, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
                    if m and m.group(1) in layers and \
                            m.group(1) not in allowed:
                        bad.append(f"{os.path.relpath(path, root)}:{no}: "
                                   f"{d} includes {m.group(1)}, which the "
                                   f"map does not put below it")
    for d in missing:
        print(f"FAIL: src/{d} is not in docs/architecture.md's layer map")
    for b in bad:
        print("FAIL:", b)
    n = sum(len(v) for v in edges.values())
    print(f"{len(layers)} layers, {n} edges in the map, "
          f"{len(bad) + len(missing)} problems")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
