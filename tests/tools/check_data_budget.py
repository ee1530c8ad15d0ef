#!/usr/bin/env python3
"""tests/data stays within its budget: a GPU session's machine copies at most
64 MiB of the working tree, and recordings to come need room in it.

usage: check_data_budget.py DATA_DIR [BUDGET_BYTES]

Sums the files under DATA_DIR (hidden ones too); above the budget, fails
naming the largest files. Large traces are kept small with
tests/tools/strip_trace.py (only the fields ddscript reads; see
tests/data/README.md).
"""
import os
import sys

BUDGET = 40_000_000  # bytes


def main():
    data = sys.argv[1]
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else BUDGET
    sizes = []
    for root, _, files in os.walk(data):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                sizes.append((os.path.getsize(p), os.path.relpath(p, data)))
    total = sum(s for s, _ in sizes)
    print(f"tests/data: {total:,} bytes in {len(sizes)} files "
          f"(budget {budget:,})")
    if total > budget:
        for s, p in sorted(sizes, reverse=True)[:10]:
            print(f"  {s:>10,}  {p}")
        print("FAIL: over the budget: strip the new traces "
              "(tests/tools/strip_trace.py), keep fewer iterations, or drop "
              "what no test reads")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
