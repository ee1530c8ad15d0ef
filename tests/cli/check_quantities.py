#!/usr/bin/env python3
"""--set values and .dd literals accept and refuse the same numbers.

usage: check_quantities.py DDSCRIPT TRACE

Each text below is given both ways: as `--set q=TEXT` to a model whose
parameter takes any value (tests/cli/models/quantity_echo.dd), and as the
literal in `print TEXT` run on the same trace. Both must accept it or both
refuse it (exit 2 with an error), and where accepted print the same value.
The texts cover underscores, exponents, units, hexadecimal, spaces, signs,
a missing digit and overflow (one reader: support/Units.h readQuantity).
"""
import os
import subprocess
import sys
import tempfile

TEXTS = ["10_000Mbps", "16_000MB", "1e3us", "1.5e-3s", "2.5GiB", "0", "7",
         "-5ms", "0x10GB", "1__0Gbps", "10_", "-0.5e1ms", "16 GB", ".5ms", "5.ms",
         "1e400", "5xyz", "40gbps", "1E2KiB", "3e", "12abc3"]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main(argv):
    ddscript, trace = argv
    echo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models",
                        "quantity_echo.dd")
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in TEXTS:
            s = run([ddscript, "run", echo, "--trace", trace, "--set",
                     f"q={t}"])
            lit = os.path.join(tmp, "lit.dd")
            with open(lit, "w") as f:
                f.write(f"print {t}\n")
            l = run([ddscript, "run", lit, "--trace", trace])
            for p in (s, l):
                if p.returncode not in (0, 2):
                    fail = f"{t!r}: exit {p.returncode}\n{p.stderr}"
                    sys.exit("FAIL: " + fail)
            got = [p.returncode == 0 for p in (s, l)]
            if got[0] != got[1]:
                bad.append(f"{t!r}: --set {'accepts' if got[0] else 'refuses'}"
                           f", the literal {'accepts' if got[1] else 'refuses'}"
                           f"\n  --set: {s.stderr.strip()[:300]}\n  literal: "
                           f"{l.stderr.strip()[:300]}")
            elif got[0]:
                a, b = s.stdout.splitlines()[0], l.stdout.splitlines()[0]
                if a != b:
                    bad.append(f"{t!r}: --set prints {a!r}, the literal {b!r}")
            elif "error" not in s.stderr or "error" not in l.stderr:
                bad.append(f"{t!r}: refused without an error message")
    if bad:
        sys.exit("FAIL:\n" + "\n".join(bad))
    print(f"ok: {len(TEXTS)} texts read alike")


if __name__ == "__main__":
    main(sys.argv[1:])
