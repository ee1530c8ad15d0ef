#!/usr/bin/env python3
"""The TextMate grammar for .dd files (grammar/ddscript.tmLanguage.json)
against the language and the models ddscript ships.

usage: check_tmlanguage.py SOURCE_DIR

A small TextMate-style scanner (patterns tried in order at each position,
`include`, `match` with `captures`, `begin`/`end`) tokenizes every model of
stdlib/ and models/, and checks that:
- every character that is not white space gets a token: the grammar has a
  rule for everything the models contain;
- every keyword of grammar/DDScript.g4 is scoped as a keyword or a language
  constant (a keyword added to the language must be added here too);
- comments, strings, numbers with units and regular expressions get their
  scopes on lines of the stdlib that hold them.
"""
import glob
import json
import os
import re
import sys


def load(path):
    g = json.load(open(path))
    repo = g["repository"]

    def flatten(pats):
        out = []
        for p in pats:
            if "include" in p:
                out += flatten([repo[p["include"][1:]]])
            elif "patterns" in p and "match" not in p and "begin" not in p:
                out += flatten(p["patterns"])
            else:
                out.append(p)
        return out

    return flatten(g["patterns"])


def tokenize(pats, line):
    """[(start, end, scope)] for the line; None where a character has no
    token (its position)."""
    toks, i = [], 0
    while i < len(line):
        if line[i].isspace():
            i += 1
            continue
        for p in pats:
            if "match" in p:
                m = re.compile(p["match"]).match(line, i)
                if m and m.end() > i:
                    caps = p.get("captures", {})
                    if caps and "name" not in p:
                        # A token per captured group.
                        for k, c in sorted(caps.items(), key=lambda x: int(x[0])):
                            if m.group(int(k)) is not None:
                                toks.append((m.start(int(k)), m.end(int(k)),
                                             c["name"]))
                    else:
                        toks.append((i, m.end(), p.get("name", "")))
                    i = m.end()
                    break
            else:
                m = re.compile(p["begin"]).match(line, i)
                if m:
                    # Inside: the inner patterns (escapes) first, then the
                    # end, at each position.
                    end_re = re.compile(p["end"])
                    inner = [re.compile(q["match"])
                             for q in p.get("patterns", [])]
                    j = m.end()
                    while True:
                        q = next((r.match(line, j) for r in inner
                                  if r.match(line, j)), None)
                        if q and q.end() > j:
                            j = q.end()
                            continue
                        e = end_re.match(line, j)
                        if e:
                            j = e.end()
                            break
                        j += 1
                    toks.append((i, j, p["name"]))
                    i = j
                    break
        else:
            return toks, i
    return toks, None


def keywords(g4):
    text = open(g4).read()
    return sorted(set(re.findall(r"'([a-z][a-z_]*)'", text)))


def main(argv):
    src = argv[0]
    pats = load(os.path.join(src, "grammar/ddscript.tmLanguage.json"))
    files = sorted(glob.glob(os.path.join(src, "stdlib/*.dd")) +
                   glob.glob(os.path.join(src, "models/*.dd")))
    if not files:
        sys.exit("FAIL: no models to tokenize")
    seen = set()
    lines = 0
    for f in files:
        for n, line in enumerate(open(f).read().split("\n"), 1):
            toks, bad = tokenize(pats, line)
            if bad is not None:
                sys.exit(f"FAIL: {f}:{n}:{bad + 1}: no token for "
                         f"{line[bad:bad + 20]!r}")
            lines += 1
            for a, b, scope in toks:
                seen.add(scope.split(".")[0] + "." + scope.split(".")[1]
                         if "." in scope else scope)
    for want in ("comment.line", "string.quoted", "constant.numeric",
                 "string.regexp", "keyword.control", "keyword.operator",
                 "entity.name", "variable.other"):
        if want not in seen:
            sys.exit(f"FAIL: no {want} token in the stdlib: {sorted(seen)}")
    for kw in keywords(os.path.join(src, "grammar/DDScript.g4")):
        if kw == "_":
            continue
        toks, _ = tokenize(pats, kw)
        scope = toks[0][2] if toks and toks[0][1] == len(kw) else ""
        if not scope.startswith(("keyword.", "constant.language")):
            sys.exit(f"FAIL: keyword {kw!r} is scoped {scope!r}")
    # A few tokens where they must be what they are.
    cases = {
        "let x = 25MiB # c": [("let", "keyword.other"), ("25MiB",
                              "constant.numeric"), ("# c", "comment.line")],
        'print "a\\"b", x / 2': [('"a\\"b"', "string.quoted"),
                                ("/", "keyword.operator")],
        "select kernel where name ~ /gemm|conv/": [
            ("select", "keyword.operator.graph"),
            ("/gemm|conv/", "string.regexp")],
    }
    for line, want in cases.items():
        toks, bad = tokenize(pats, line)
        got = {line[a:b].strip(): s for a, b, s in toks}
        for text, scope in want:
            if not got.get(text, "").startswith(scope):
                sys.exit(f"FAIL: {line!r}: {text!r} is {got.get(text)!r}, "
                         f"not {scope}")
    print(f"ok: {len(files)} models, {lines} lines tokenized")


if __name__ == "__main__":
    main(sys.argv[1:])
